"""What packages with native operator libraries touch at import (torchvision is the model):
torch.ops.load_library, dispatch-key guards, fake implementations registered before their
operator exists, torch._custom_ops, torch.onnx's custom-symbolic registration, and
torch.utils.model_zoo. Each is checked for what it does here, not only that it imports."""

from __future__ import annotations

import os
import uuid

import pytest

import torch


def test_load_library_loads_a_shared_object_and_rejects_what_cannot_load(tmp_path):
    import _ctypes  # a shared object of the standard library, by its path

    torch.ops.load_library(_ctypes.__file__)
    assert os.path.realpath(_ctypes.__file__) in torch.ops.loaded_libraries
    (tmp_path / "broken.so").write_bytes(b"not an ELF file")
    with pytest.raises(OSError):
        torch.ops.load_library(tmp_path / "broken.so")
    assert str((tmp_path / "broken.so").resolve()) not in torch.ops.loaded_libraries


def test_exclude_dispatch_key_guard_turns_autocast_and_autograd_off():
    K = torch._C.DispatchKey
    keys = torch._C.DispatchKeySet(K.AutocastCPU) | torch._C.DispatchKeySet(K.AutocastCUDA)
    assert keys.has(K.AutocastCPU) and not keys.has(K.AutocastXPU)
    assert repr(keys) == "DispatchKeySet(AutocastCPU, AutocastCUDA)"
    a = torch.randn(4, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert (a @ a).dtype == torch.bfloat16
        with torch._C._ExcludeDispatchKeyGuard(keys):
            assert (a @ a).dtype == torch.float32
        assert (a @ a).dtype == torch.bfloat16
    x = torch.ones(2, requires_grad=True)
    with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(K.AutogradCPU)):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad
    with pytest.raises(RuntimeError, match="no equivalent"):
        torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(K.Functionalize))


def test_a_fake_registered_before_its_operator_applies_once_it_is_defined():
    ns = f"late_{uuid.uuid4().hex[:8]}"

    @torch.library.register_fake(f"{ns}::double")
    def _(x):
        return torch.empty_like(x)

    lib = torch.library.Library(ns, "DEF")
    lib.define("double(Tensor x) -> Tensor")
    lib.impl("double", lambda x: x * 2, "CPU")
    assert getattr(torch.ops, ns).double(torch.ones(2)).tolist() == [2.0, 2.0]
    fake = getattr(torch.ops, ns).double(torch.empty(3, device="meta"))
    assert fake.device.type == "meta" and fake.shape == (3,)


def test_get_ctx_dynamic_sizes_raise_the_fake_modes_data_dependent_error():
    import torch._custom_ops
    from torch._subclasses.fake_tensor import DynamicOutputShapeException

    assert torch._custom_ops.get_ctx is torch.library.get_ctx
    with pytest.raises(DynamicOutputShapeException):
        torch.library.get_ctx().new_dynamic_size()


def test_custom_onnx_symbolics_register_and_export_says_they_do_not_run():
    from torch.onnx import symbolic_opset11
    from torch.onnx.symbolic_helper import parse_args

    @parse_args("v", "f")
    def symbolic(g, x, scale):
        return g.op("Mul", x, scale)

    assert symbolic._arg_descriptors == ("v", "f")
    assert symbolic_opset11.__name__ == "torch.onnx.symbolic_opset11"
    with pytest.raises(AttributeError):
        torch.onnx.symbolic_opset99  # noqa: B018
    with pytest.raises(ValueError, match="domain::name"):
        torch.onnx.register_custom_op_symbolic("noname", symbolic, 11)
    from torch.onnx import _symbolics

    torch.onnx.register_custom_op_symbolic("mylib::scale", symbolic, 11)
    try:
        assert _symbolics.registered("mylib::scale.default")
        message = str(torch.onnx.UnsupportedOperatorError("mylib::scale", 17,
                                                          registered_symbolic=True))
        assert "register_custom_op_symbolic" in message
    finally:
        torch.onnx.unregister_custom_op_symbolic("mylib::scale", 11)
    assert not _symbolics.registered("mylib::scale")
    assert int(torch.onnx.TensorProtoDataType.FLOAT) == 1
    assert int(torch.onnx.TensorProtoDataType.INT64) == 7


def test_model_zoo_is_the_hubs_loader_and_script_if_tracing_runs_eagerly():
    import torch.utils.model_zoo as model_zoo

    assert model_zoo.load_url is torch.hub.load_state_dict_from_url
    assert model_zoo.tqdm is torch.hub.tqdm
    assert torch.jit._script_if_tracing is torch.jit.script_if_tracing

    @torch.jit._script_if_tracing
    def twice(x):
        return x * 2

    assert twice(torch.ones(1)).item() == 2.0
    from torch._dynamo.utils import is_compile_supported

    assert is_compile_supported("cpu") is True
    with pytest.raises(RuntimeError):
        is_compile_supported("no_such_device")
