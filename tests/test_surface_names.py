"""Names programs import or call (issue 12): the legacy tensor types and ``Tensor.type``.

Expected values are PyTorch 2.13's answers on its CPU build.
"""

from __future__ import annotations

import pickle

import pytest

import torch
from torch._core import registry

# With plait-backend-cuda installed, torch.cuda is that backend's module.
without_cuda_backend = pytest.mark.skipif(
    "cuda" in registry.installed(),
    reason="plait-backend-cuda is installed: torch.cuda is its module, not the CPU build's answers")

LEGACY = {
    "FloatTensor": torch.float32, "DoubleTensor": torch.float64, "HalfTensor": torch.float16,
    "BFloat16Tensor": torch.bfloat16, "LongTensor": torch.int64, "IntTensor": torch.int32,
    "ShortTensor": torch.int16, "CharTensor": torch.int8, "ByteTensor": torch.uint8,
    "BoolTensor": torch.bool,
}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_type_names_its_dtype(name: str) -> None:
    cls = getattr(torch, name)
    assert cls.dtype is LEGACY[name]
    assert cls.__module__ == "torch" and cls.__name__ == name
    assert type(cls).__name__ == "tensortype"
    assert cls.is_sparse is False and cls.is_cuda is False and cls.layout is torch.strided
    assert not issubclass(cls, torch.Tensor)
    assert pickle.loads(pickle.dumps(cls)) is cls
    assert repr(cls) == f"<class 'torch.{name}'>"
    assert torch.typename(cls) == f"torch.{name}"


def test_complex_and_unsigned_types_are_not_legacy_names() -> None:
    assert not hasattr(torch, "ComplexFloatTensor")
    assert not hasattr(torch, "UInt16Tensor")


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_isinstance_is_by_dtype_on_the_cpu(name: str) -> None:
    cls = getattr(torch, name)
    t = torch.zeros(2, dtype=LEGACY[name])
    assert isinstance(t, cls)
    other = torch.float64 if LEGACY[name] is not torch.float64 else torch.float32
    assert not isinstance(torch.zeros(2, dtype=other), cls)
    assert not isinstance(torch.zeros(2, dtype=LEGACY[name], device="meta"), cls)
    assert not isinstance([0, 0], cls)


def test_a_parameter_is_a_float_tensor() -> None:
    assert isinstance(torch.nn.Parameter(torch.zeros(2)), torch.FloatTensor)


def test_constructor_from_a_size_is_uninitialised_of_that_shape() -> None:
    t = torch.FloatTensor(2, 3)
    assert type(t) is torch.Tensor
    assert t.dtype is torch.float32 and t.shape == (2, 3) and t.stride() == (3, 1)
    assert not t.requires_grad
    assert torch.DoubleTensor(torch.Size([4, 1])).shape == (4, 1)
    assert torch.ByteTensor(3).dtype is torch.uint8
    empty = torch.LongTensor()
    assert empty.shape == (0,) and empty.dtype is torch.int64


def test_constructor_from_data() -> None:
    t = torch.LongTensor([1, 2])
    assert t.dtype is torch.int64 and t.tolist() == [1, 2]
    assert torch.FloatTensor((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, not a size
    assert torch.LongTensor([1.5, 2.7]).tolist() == [1, 2]
    assert torch.BoolTensor([True, False]).tolist() == [True, False]
    assert torch.FloatTensor([[1, 2], [3, 4]]).shape == (2, 2)


def test_constructor_from_a_tensor_aliases_it() -> None:
    t = torch.ones(2)
    u = torch.FloatTensor(t)
    assert u is not t
    u[0] = 5
    assert t.tolist() == [5.0, 1.0]
    leaf = torch.ones(2, requires_grad=True)
    alias = torch.FloatTensor(leaf)
    assert alias.requires_grad and alias.grad_fn is not None


def test_constructor_errors() -> None:
    with pytest.raises(TypeError, match="expected"):
        torch.FloatTensor(torch.ones(2, dtype=torch.float64))
    with pytest.raises(TypeError):
        torch.FloatTensor([1, 2], dtype=torch.float64)
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu"):
        torch.FloatTensor(2, device="meta")
    with pytest.raises(TypeError, match="invalid data type 'str'"):
        torch.FloatTensor("abc")
    for scalar, kind in ((3.5, "float"), (True, "bool"), (None, "NoneType")):
        with pytest.raises(TypeError, match=rf"data must be a sequence \(got {kind}\)"):
            torch.FloatTensor(scalar)
    with pytest.raises(TypeError):
        torch.LongTensor(2, 3.0)
    assert torch.FloatTensor(3, device="cpu").shape == (3,)


@pytest.mark.parametrize(("dtype", "name"), [
    (torch.float32, "torch.FloatTensor"), (torch.float64, "torch.DoubleTensor"),
    (torch.int64, "torch.LongTensor"), (torch.int32, "torch.IntTensor"),
    (torch.bool, "torch.BoolTensor"), (torch.uint8, "torch.ByteTensor"),
    (torch.int8, "torch.CharTensor"), (torch.float16, "torch.HalfTensor"),
    (torch.bfloat16, "torch.BFloat16Tensor"), (torch.complex64, "torch.ComplexFloatTensor"),
    (torch.complex128, "torch.ComplexDoubleTensor"), (torch.uint16, "torch.UInt16Tensor"),
])
def test_type_names_the_legacy_type(dtype: torch.dtype, name: str) -> None:
    assert torch.zeros(2, dtype=dtype).type() == name
    assert torch.typename(torch.zeros(2, dtype=dtype)) == name


def test_type_names_the_device_off_the_cpu() -> None:
    assert torch.zeros(2, device="meta").type() == "torch.meta.FloatTensor"


def test_type_converts() -> None:
    x = torch.zeros(2)
    assert x.type("torch.LongTensor").dtype is torch.int64
    assert x.type(torch.LongTensor).dtype is torch.int64
    assert x.type("torch.IntTensor").dtype is torch.int32
    assert x.type(torch.float64).dtype is torch.float64
    assert x.type("torch.FloatTensor") is x and x.type(torch.float32) is x
    assert x.type(torch.Tensor) is x
    leaf = torch.ones(2, requires_grad=True)
    converted = leaf.type(torch.DoubleTensor)
    converted.sum().backward()
    assert leaf.grad.tolist() == [1.0, 1.0]


def test_type_rejects_unknown_names() -> None:
    x = torch.zeros(2)
    for bad in ("torch.Foo", "float64", "torch.float64"):
        with pytest.raises(ValueError, match=f"invalid type: '{bad}'"):
            x.type(bad)
    with pytest.raises(TypeError, match="dtype must be a type, str, or dtype object"):
        x.type(5)


@without_cuda_backend
def test_cuda_legacy_types_exist_without_cuda() -> None:
    cls = torch.cuda.FloatTensor
    assert cls.__module__ == "torch.cuda" and cls.dtype is torch.float32 and cls.is_cuda
    assert repr(cls) == "<class 'torch.cuda.FloatTensor'>"
    assert not isinstance(torch.zeros(2), cls)
    with pytest.raises(TypeError, match="Torch not compiled with CUDA enabled"):
        cls(2)
    with pytest.raises(RuntimeError):
        torch.zeros(2).type("torch.cuda.FloatTensor")


# -- torch.backends ------------------------------------------------------------------------


def test_backends_cpu_names_a_capability() -> None:
    import torch.backends.cpu

    assert torch.backends.cpu.get_cpu_capability() in {"DEFAULT", "AVX2", "AVX512"}


def test_backends_cpu_agrees_with_the_cpu_flags() -> None:
    import pathlib
    import platform

    from torch.backends import cpu

    info = pathlib.Path("/proc/cpuinfo")
    if platform.machine() != "x86_64" or not info.exists():
        pytest.skip("reads the x86 flags of /proc/cpuinfo")
    flags = set(next(line for line in info.read_text().splitlines()
                     if line.startswith("flags")).split(":", 1)[1].split())
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        assert cpu.get_cpu_capability() == "AVX512"
    elif {"avx2", "fma"} <= flags:
        assert cpu.get_cpu_capability() == "AVX2"
    else:
        assert cpu.get_cpu_capability() == "DEFAULT"


def test_backends_mkldnn_switches_and_flags() -> None:
    import torch.backends.mkldnn as mkldnn

    assert mkldnn.is_available() is False  # Plait is not built on oneDNN
    assert mkldnn.enabled is True and mkldnn.deterministic is False
    with mkldnn.flags(enabled=False, deterministic=True):
        assert mkldnn.enabled is False and mkldnn.deterministic is True
    assert mkldnn.enabled is True and mkldnn.deterministic is False
    with pytest.raises(KeyError), mkldnn.flags(enabled=False):
        raise KeyError("restored on error too")
    assert mkldnn.enabled is True


def test_backends_opt_einsum_follows_the_package() -> None:
    import importlib.util

    import torch.backends.opt_einsum as opt_einsum

    installed = importlib.util.find_spec("opt_einsum") is not None
    assert opt_einsum.is_available() is installed
    assert opt_einsum.enabled is installed
    assert opt_einsum.strategy == ("auto" if installed else None)
    assert (opt_einsum.get_opt_einsum() is None) is (not installed)


def test_backends_cudnn_switches_and_flags() -> None:
    cudnn = torch.backends.cudnn
    assert cudnn.enabled is True and cudnn.benchmark is False and cudnn.deterministic is False
    assert cudnn.allow_tf32 is True and cudnn.benchmark_limit == 10
    with cudnn.flags(enabled=False, benchmark=True):
        assert cudnn.enabled is False and cudnn.benchmark is True
    assert cudnn.enabled is True and cudnn.benchmark is False
    cudnn.benchmark = True  # programs set it at start-up
    try:
        assert torch.backends.cudnn.benchmark is True
    finally:
        cudnn.benchmark = False


@without_cuda_backend
def test_backends_cuda_switches() -> None:
    cuda = torch.backends.cuda
    assert cuda.is_built() is False
    assert cuda.matmul.allow_fp16_reduced_precision_reduction is True
    saved = torch.get_float32_matmul_precision()
    try:
        cuda.matmul.allow_tf32 = True
        assert torch.get_float32_matmul_precision() == "high" and cuda.matmul.allow_tf32
        cuda.matmul.allow_tf32 = False
        assert torch.get_float32_matmul_precision() == "highest"
    finally:
        torch.set_float32_matmul_precision(saved)
    with pytest.raises(AttributeError, match="Unknown attribute"):
        cuda.matmul.no_such_switch  # noqa: B018
    assert cuda.flash_sdp_enabled() and cuda.mem_efficient_sdp_enabled()
    with pytest.warns(FutureWarning, match="sdp_kernel"), \
            cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
        assert not cuda.flash_sdp_enabled() and not cuda.mem_efficient_sdp_enabled()
        assert cuda.math_sdp_enabled()
    assert cuda.flash_sdp_enabled() and cuda.mem_efficient_sdp_enabled()
    cuda.enable_flash_sdp(False)
    try:
        assert cuda.flash_sdp_enabled() is False
    finally:
        cuda.enable_flash_sdp(True)


# -- torch.accelerator, torch.random, torch.types, torch.storage --------------------------

CPU_ONLY = {**__import__("os").environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}


def run_cpu_only(code: str) -> str:
    """Run ``code`` in a fresh interpreter that loads no backend plugin; its stdout."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], env=CPU_ONLY, capture_output=True,
                          text=True, timeout=120, check=True)
    return done.stdout.strip()


def test_accelerator_without_one_answers_as_the_cpu_build() -> None:
    out = run_cpu_only("""
import torch, warnings
a = torch.accelerator
print(a.is_available(), a.current_accelerator(), a.current_accelerator(True), a.device_count())
for call in (a.current_device_index, a.synchronize, lambda: a.set_device_index(0)):
    try:
        call()
    except RuntimeError as e:
        print(e)
with a.device_index(None):
    print("none selects nothing")
""")
    lines = out.splitlines()
    assert lines[0] == "False None None 0"
    assert lines[1:4] == ["Cannot access accelerator device when none is available."] * 3
    assert lines[4] == "none selects nothing"


def test_accelerator_asks_the_registry() -> None:
    # the toy device plugin (tests/plugins) is the accelerator of the test environment
    if "toy" not in registry.installed():
        pytest.skip("the toy device plugin is not installed")
    a = torch.accelerator
    assert a.is_available() is True
    assert a.current_accelerator() == torch.device("toy")
    assert a.device_count() == 2
    before = a.current_device_index()
    with a.device_index(1):
        assert a.current_device_index() == 1
    assert a.current_device_index() == before
    a.synchronize()
    with pytest.warns(FutureWarning, match="current_device_index"):
        assert a.current_device_idx() == before
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        a.set_device_index("meta")


def test_random_module() -> None:
    import torch.random as random

    assert random.manual_seed is torch.manual_seed and random.default_generator is not None
    gen = random.manual_seed(7)
    assert isinstance(gen, torch.Generator) and random.initial_seed() == 7
    state = random.get_rng_state()
    first = torch.rand(3)
    random.set_rng_state(state)
    assert torch.equal(torch.rand(3), first)
    assert isinstance(random.seed(), int)


def test_fork_rng_restores_the_cpu_generator() -> None:
    torch.manual_seed(0)
    expected = torch.rand(4)
    torch.manual_seed(0)
    with torch.random.fork_rng(devices=[]):
        inside = torch.rand(4)
        torch.rand(10)
    assert torch.equal(inside, expected)
    assert torch.equal(torch.rand(4), expected)
    torch.manual_seed(0)
    with torch.random.fork_rng(enabled=False):
        torch.rand(4)
    assert not torch.equal(torch.rand(4), expected)


def test_types_aliases() -> None:
    import torch.types as types

    assert types._dtype is torch.dtype and types._device is torch.device
    assert types._int is int and types._float is float and types._bool is bool
    assert types._layout is torch.layout
    assert isinstance(3, types.Number) and isinstance(2.5, types.Number)
    assert set(types._size.__args__) == {torch.Size, list[int], tuple[int, ...]}
    assert isinstance("cpu", types.Device) and isinstance(None, types.Device)
    assert types.py_sym_types == (torch.SymInt, torch.SymFloat, torch.SymBool)
    assert types.Storage is torch.UntypedStorage


def test_types_import_leaves_numpy_unloaded() -> None:
    out = run_cpu_only("import sys, torch, torch.types, torch.random, torch.accelerator; "
                       "print('numpy' in sys.modules)")
    assert out == "False"


def test_storage_module() -> None:
    import torch.storage

    assert torch.storage.UntypedStorage is torch.UntypedStorage
    assert torch.storage.TypedStorage is torch.TypedStorage
    assert isinstance(torch.ones(2).untyped_storage(), torch.storage.UntypedStorage)


# -- torch.nn.modules.<file> paths --------------------------------------------------------

# PyTorch 2.13's file for each class (the module name its pickles record)
NN_PATHS = {
    "MultiheadAttention": "activation", "ReLU": "activation", "Linear": "linear",
    "Identity": "linear", "BatchNorm1d": "batchnorm", "BatchNorm2d": "batchnorm",
    "BatchNorm3d": "batchnorm", "LazyBatchNorm2d": "batchnorm", "SyncBatchNorm": "batchnorm",
    "InstanceNorm1d": "instancenorm", "InstanceNorm2d": "instancenorm",
    "LazyInstanceNorm3d": "instancenorm", "LayerNorm": "normalization",
    "GroupNorm": "normalization", "RMSNorm": "normalization", "Conv2d": "conv",
    "ConvTranspose1d": "conv", "Dropout": "dropout", "Embedding": "sparse",
    "EmbeddingBag": "sparse", "LSTM": "rnn", "GRUCell": "rnn", "Sequential": "container",
    "ModuleList": "container", "ModuleDict": "container", "ParameterList": "container",
    "Container": "container", "MaxPool2d": "pooling", "AdaptiveAvgPool2d": "pooling",
    "CrossEntropyLoss": "loss", "MSELoss": "loss", "Transformer": "transformer",
    "TransformerEncoderLayer": "transformer", "Module": "module", "Flatten": "flatten",
    "Unflatten": "flatten", "ZeroPad2d": "padding", "ReflectionPad1d": "padding",
    "CosineSimilarity": "distance", "Fold": "fold", "PixelShuffle": "pixelshuffle",
    "ChannelShuffle": "channelshuffle", "Upsample": "upsampling",
}


@pytest.mark.parametrize(("name", "file"), sorted(NN_PATHS.items()))
def test_nn_class_lives_at_pytorchs_path(name: str, file: str) -> None:
    import importlib

    cls = getattr(torch.nn, name)
    assert cls.__module__ == f"torch.nn.modules.{file}"
    assert getattr(importlib.import_module(f"torch.nn.modules.{file}"), name) is cls


def test_non_dynamically_quantizable_linear() -> None:
    from torch.nn.modules.linear import NonDynamicallyQuantizableLinear

    assert issubclass(NonDynamicallyQuantizableLinear, torch.nn.Linear)
    mha = torch.nn.MultiheadAttention(4, 2)
    assert type(mha.out_proj) is NonDynamicallyQuantizableLinear


def test_private_base_classes_at_pytorchs_paths() -> None:
    from torch.nn.modules.batchnorm import _BatchNorm, _NormBase
    from torch.nn.modules.instancenorm import _InstanceNorm

    assert isinstance(torch.nn.BatchNorm2d(2), _BatchNorm)
    assert isinstance(torch.nn.InstanceNorm2d(2), _NormBase)
    assert isinstance(torch.nn.InstanceNorm2d(2), _InstanceNorm)
    assert not isinstance(torch.nn.BatchNorm2d(2), _InstanceNorm)
    from torch.nn.modules.transformer import _get_activation_fn, _get_clones

    assert len(_get_clones(torch.nn.Linear(2, 2), 3)) == 3
    assert _get_activation_fn("relu")(torch.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]


def test_pickled_modules_name_pytorchs_paths() -> None:
    model = torch.nn.Sequential(torch.nn.BatchNorm2d(3), torch.nn.MultiheadAttention(4, 2),
                                torch.nn.InstanceNorm1d(2), torch.nn.ChannelShuffle(2))
    data = pickle.dumps(model)
    for path in (b"torch.nn.modules.batchnorm", b"torch.nn.modules.activation",
                 b"torch.nn.modules.instancenorm", b"torch.nn.modules.channelshuffle",
                 b"NonDynamicallyQuantizableLinear"):
        assert path in data
    assert b"torch.nn.modules.normalization" not in data
    assert b"torch.nn.modules.pixelshuffle" not in data
    copy = pickle.loads(data)
    assert type(copy[1].out_proj).__name__ == "NonDynamicallyQuantizableLinear"


def test_weights_only_load_of_a_module_with_safe_globals(tmp_path) -> None:
    nn = torch.nn
    model = nn.Sequential(nn.BatchNorm2d(3), nn.MultiheadAttention(4, 2))
    model[0](torch.randn(2, 3, 2, 2))  # through autograd: running stats move
    path = tmp_path / "model.pt"
    torch.save(model, path)
    with pytest.raises(pickle.UnpicklingError, match="Sequential"):
        torch.load(path)
    allowed = [nn.Sequential, nn.BatchNorm2d, nn.MultiheadAttention,
               nn.modules.linear.NonDynamicallyQuantizableLinear]
    with torch.serialization.safe_globals(allowed):
        loaded = torch.load(path)
    assert type(loaded[0]) is nn.BatchNorm2d
    assert torch.equal(loaded[0].running_mean, model[0].running_mean)
    assert torch.equal(loaded[1].in_proj_weight, model[1].in_proj_weight)


def test_sync_batch_norm_without_a_process_group() -> None:
    nn = torch.nn
    torch.manual_seed(0)
    x = torch.randn(4, 3, 5)
    sync, plain = nn.SyncBatchNorm(3), nn.BatchNorm1d(3)
    assert torch.allclose(sync(x), plain(x))
    assert torch.allclose(sync.running_mean, plain.running_mean)
    with pytest.raises(ValueError, match="expected at least 2D input"):
        sync(torch.randn(3))
    model = nn.Sequential(nn.Conv2d(1, 3, 1), nn.BatchNorm2d(3))
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert type(converted[1]) is nn.SyncBatchNorm and type(converted[0]) is nn.Conv2d
    assert converted[1].weight is model[1].weight
    assert converted[1].running_var is model[1].running_var


def test_container_is_deprecated() -> None:
    with pytest.warns(UserWarning, match="`nn.Container` is deprecated"):
        c = torch.nn.Container(a=torch.nn.Linear(1, 1))
    assert isinstance(c.a, torch.nn.Linear) and len(list(c.parameters())) == 2


def test_nn_modules_utils_helpers() -> None:
    from collections import OrderedDict

    from torch.nn.modules.utils import (
        _list_with_default,
        _ntuple,
        _pair,
        _quadruple,
        _reverse_repeat_tuple,
        _single,
        _triple,
        consume_prefix_in_state_dict_if_present,
    )

    assert _pair(3) == (3, 3) and _pair((1, 2)) == (1, 2) and _pair([4, 5]) == (4, 5)
    assert _single(2) == (2,) and _triple(1) == (1, 1, 1) and _quadruple(0) == (0, 0, 0, 0)
    assert _ntuple(5)(7) == (7,) * 5
    assert _reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)
    assert _list_with_default([None, 4], [1, 2, 8, 9]) == [8, 4]
    assert _list_with_default(5, [1, 2]) == [5]
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        _list_with_default([None, 4], [1, 2])
    state = OrderedDict([("module.a", 1), ("b", 2), ("module.c.d", 3)])
    state._metadata = OrderedDict([("", {"v": 0}), ("module", {"v": 1}),
                                   ("module.c", {"v": 2})])
    consume_prefix_in_state_dict_if_present(state, "module.")
    assert list(state.items()) == [("b", 2), ("a", 1), ("c.d", 3)]
    assert state._metadata[""] == {"v": 1} and state._metadata["c"] == {"v": 2}


# -- torch.diag, diag_embed, diagflat, cdist, dist -----------------------------------------


def test_diag_of_a_vector_is_a_matrix() -> None:
    v = torch.tensor([1.0, 2.0, 3.0])
    assert torch.diag(v).tolist() == [[1, 0, 0], [0, 2, 0], [0, 0, 3]]
    assert torch.diag(v, 1).tolist() == [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 3], [0, 0, 0, 0]]
    assert torch.diag(torch.arange(2), -1).tolist() == [[0, 0, 0], [0, 0, 0], [0, 1, 0]]
    assert torch.diag(torch.arange(2), -1).dtype is torch.int64
    assert v.diag().shape == (3, 3)


def test_diag_of_a_matrix_copies_a_diagonal() -> None:
    m = torch.arange(12.0).reshape(3, 4)
    assert torch.diag(m).tolist() == [0.0, 5.0, 10.0]
    assert torch.diag(m, 1).tolist() == [1.0, 6.0, 11.0]
    assert torch.diag(m, -2).tolist() == [8.0]
    assert torch.diag(m, 5).shape == (0,)
    d = torch.diag(m)
    d[0] = 100.0
    assert m[0, 0] == 0.0  # a copy, not a view
    with pytest.raises(RuntimeError, match=r"diag\(\): Supports 1D or 2D tensors. Got 3D"):
        torch.diag(torch.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="Got 0D"):
        torch.diag(torch.tensor(1.0))


def test_diag_gradients() -> None:
    v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    weights = torch.arange(16.0).reshape(4, 4)
    (torch.diag(v, 1) * weights).sum().backward()
    assert v.grad.tolist() == [1.0, 6.0, 11.0]  # weights[i, i + 1]
    m = torch.arange(12.0).reshape(3, 4).requires_grad_()
    torch.diag(m, 1).pow(2).sum().backward()
    expected = [[0, 2, 0, 0], [0, 0, 12, 0], [0, 0, 0, 22]]
    assert m.grad.tolist() == expected


def test_diag_embed_and_diagflat() -> None:
    x = torch.arange(6.0).reshape(2, 3)
    out = torch.diag_embed(x)
    assert out.shape == (2, 3, 3) and out[1].tolist() == [[3, 0, 0], [0, 4, 0], [0, 0, 5]]
    shifted = torch.diag_embed(x, 1)
    assert shifted.shape == (2, 4, 4) and shifted[0, 1, 2] == 1.0
    moved = torch.diag_embed(x, -1, 0, 2)
    assert moved.shape == (4, 2, 4) and moved[1, 0, 0] == 0.0 and moved[3, 1, 2] == 5.0
    assert torch.diagflat(torch.tensor([[1.0, 2.0], [3.0, 4.0]])).shape == (4, 4)
    assert torch.diagflat(torch.tensor([1.0, 2.0]), -1).tolist() == [[0, 0, 0], [1, 0, 0],
                                                                      [0, 2, 0]]


def _numpy_cdist(a, b, p):
    import numpy as np

    diff = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (diff != 0).sum(-1).astype(a.dtype)
    if p == float("inf"):
        return diff.max(-1)
    return (diff ** p).sum(-1) ** (1.0 / p)


@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("points", [(3, 4), (30, 40)])
def test_cdist_matches_numpy(p: float, points: tuple[int, int]) -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, points[0], 5))
    b = rng.standard_normal((2, points[1], 5))
    got = torch.cdist(torch.tensor(a), torch.tensor(b), p=p)
    assert got.shape == (2, *points)
    np.testing.assert_allclose(got.numpy(), _numpy_cdist(a, b, p), rtol=1e-10, atol=1e-10)


def test_cdist_broadcasts_batches_and_checks_arguments() -> None:
    assert torch.cdist(torch.ones(5, 2, 3), torch.ones(1, 4, 3)).shape == (5, 2, 4)
    assert torch.cdist(torch.ones(2, 2, 3), torch.ones(4, 3)).shape == (2, 2, 4)
    with pytest.raises(RuntimeError, match="cdist only supports at least 2D tensors, X1 got: 1D"):
        torch.cdist(torch.ones(3), torch.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"same number of columns\. X1: 3 X2: 4"):
        torch.cdist(torch.ones(2, 3), torch.ones(2, 4))
    with pytest.raises(RuntimeError, match="cdist only supports non-negative p values"):
        torch.cdist(torch.ones(2, 3), torch.ones(2, 3), p=-1)
    with pytest.raises(RuntimeError, match="floating-point dtypes, X1 got: Long"):
        torch.cdist(torch.ones(2, 3, dtype=torch.long), torch.ones(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="bad is not a valid value for compute_mode"):
        torch.cdist(torch.ones(2, 3), torch.ones(4, 3), compute_mode="bad")


def test_cdist_gradients() -> None:
    import numpy as np

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    for p in (1.0, 2.0, 3.0):
        x1 = torch.tensor(a, requires_grad=True)
        x2 = torch.tensor(b, requires_grad=True)
        assert torch.autograd.gradcheck(lambda u, v, p=p: torch.cdist(u, v, p=p), (x1, x2))
    # coinciding points: the gradient is 0 there (not NaN), as PyTorch's
    x = torch.zeros(2, 3, requires_grad=True)
    torch.cdist(x, torch.zeros(2, 3)).sum().backward()
    assert x.grad.tolist() == [[0.0] * 3] * 2
    many = torch.randn(30, 3, requires_grad=True)
    torch.cdist(many, many.detach().clone()).sum().backward()
    assert bool(torch.isfinite(many.grad).all())


def test_cdist_matrix_product_mode() -> None:
    import numpy as np

    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((40, 5)), rng.standard_normal((50, 5))
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        got = torch.cdist(torch.tensor(a), torch.tensor(b), compute_mode=mode)
        np.testing.assert_allclose(got.numpy(), _numpy_cdist(a, b, 2.0), rtol=1e-9)
    same = torch.tensor(a)
    assert torch.cdist(same, same).diagonal().abs().max() < 1e-6


def test_dist() -> None:
    assert float(torch.dist(torch.tensor([3.0, 4.0]), torch.zeros(2))) == 5.0
    assert float(torch.tensor([1.0, -2.0]).dist(torch.zeros(2), 1)) == 3.0
    assert torch.dist(torch.ones(2, 3), torch.zeros(3), 3).shape == ()


# -- torch.nn.utils.prune ------------------------------------------------------------------

PRUNE_WEIGHT = [[0.5, -2.0, 1.0, 0.1], [3.0, -0.2, 0.3, -4.0], [0.05, 1.5, -0.7, 2.2]]


def _pruning_linear() -> torch.nn.Linear:
    m = torch.nn.Linear(4, 3)
    with torch.no_grad():
        m.weight.copy_(torch.tensor(PRUNE_WEIGHT))
        m.bias.copy_(torch.tensor([0.1, -0.3, 0.2]))
    return m


def test_l1_unstructured_reparametrizes_the_weight() -> None:
    import torch.nn.utils.prune as prune

    m = _pruning_linear()
    assert prune.l1_unstructured(m, "weight", 0.5) is m
    assert m.weight_mask.tolist() == [[0, 1, 1, 0], [1, 0, 0, 1], [0, 1, 0, 1]]
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight_orig"]
    assert [n for n, _ in m.named_buffers()] == ["weight_mask"]
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert torch.equal(m.weight, m.weight_orig * m.weight_mask)
    hooks = list(m._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.L1Unstructured)
    assert prune.is_pruned(torch.nn.Sequential(m))


def test_pruning_again_acts_on_what_is_left_and_gradients_follow_the_mask() -> None:
    import torch.nn.utils.prune as prune

    m = _pruning_linear()
    prune.l1_unstructured(m, "weight", 0.5)
    prune.l1_unstructured(m, "weight", 2)  # 2 more of the 6 kept
    assert m.weight_mask.tolist() == [[0, 1, 0, 0], [1, 0, 0, 1], [0, 0, 0, 1]]
    hooks = list(m._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer) and len(hooks[0]) == 2
    out = m(torch.ones(2, 4))
    assert out.tolist()[0] == pytest.approx([-1.9, -1.3, 2.4])
    out.sum().backward()
    assert m.weight_orig.grad.tolist() == [[0, 2, 0, 0], [2, 0, 0, 2], [0, 0, 0, 2]]
    prune.remove(m, "weight")
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"]
    assert isinstance(m.weight, torch.nn.Parameter) and not prune.is_pruned(m)
    assert m.weight.tolist() == [[0, -2, 0, 0], [3, 0, 0, -4], [0, 0, 0, pytest.approx(2.2)]]


def test_ln_structured_prunes_whole_slices() -> None:
    import torch.nn.utils.prune as prune

    m = _pruning_linear()
    prune.ln_structured(m, "weight", 1, 2, 0)  # the row of least L2 norm
    assert m.weight_mask.tolist() == [[0] * 4, [1] * 4, [1] * 4]
    prune.ln_structured(m, "weight", 0.5, 1, 1)  # then half of the columns, by L1 norm
    assert m.weight_mask.tolist() == [[0, 0, 0, 0], [1, 0, 0, 1], [1, 0, 0, 1]]
    m = _pruning_linear()
    prune.ln_structured(m, "weight", 2, float("inf"), -1)
    assert m.weight_mask.tolist() == [[1, 0, 0, 1]] * 3
    with pytest.raises(ValueError, match="Structured pruning can only be applied to "
                                         "multidimensional tensors"):
        prune.ln_structured(_pruning_linear(), "bias", 1, 2, 0)


def test_global_unstructured_chooses_over_all_parameters() -> None:
    import torch.nn.utils.prune as prune

    a, b = _pruning_linear(), torch.nn.Linear(2, 2)
    with torch.no_grad():
        b.weight.copy_(torch.tensor([[0.01, 5.0], [-0.02, 0.6]]))
    prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured, amount=5)
    assert a.weight_mask.tolist() == [[1, 1, 1, 0], [1, 0, 1, 1], [0, 1, 1, 1]]
    assert b.weight_mask.tolist() == [[0, 1], [0, 1]]
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported'):
        prune.global_unstructured([(_pruning_linear(), "weight")], prune.LnStructured,
                                  amount=1, n=2, dim=0)


def test_other_pruning_methods() -> None:
    import torch.nn.utils.prune as prune

    m = _pruning_linear()
    prune.custom_from_mask(m, "bias", torch.tensor([1, 0, 1]))
    assert m.bias.tolist() == pytest.approx([0.1, 0.0, 0.2]) and m.bias_mask.dtype is torch.float32
    m = _pruning_linear()
    prune.random_unstructured(m, "weight", 0.25)
    assert int(m.weight_mask.sum()) == 9
    m = _pruning_linear()
    prune.random_structured(m, "weight", 2, 1)
    column_sums = m.weight_mask.sum(0).tolist()
    assert column_sums.count(0.0) == 2 and column_sums.count(3.0) == 2
    m = _pruning_linear()
    prune.identity(m, "weight")
    assert m.weight_mask.tolist() == [[1.0] * 4] * 3
    m = _pruning_linear()
    prune.l1_unstructured(m, "weight", 1, importance_scores=-torch.tensor(PRUNE_WEIGHT))
    assert m.weight_mask.tolist() == [[1, 1, 1, 1], [1, 1, 1, 1], [0, 1, 1, 1]]
    assert prune.L1Unstructured(0.5).prune(torch.tensor([1.0, -3.0, 0.5, 2.0])).tolist() == [
        0.0, -3.0, 0.0, 2.0]


def test_pruning_argument_errors() -> None:
    import torch.nn.utils.prune as prune

    for amount in (1.5, -1):
        with pytest.raises(ValueError, match=f"amount={amount} should either be a float"):
            prune.l1_unstructured(_pruning_linear(), "weight", amount)
    with pytest.raises(TypeError, match=r"Invalid type for amount: x\. Must be int or float\."):
        prune.l1_unstructured(_pruning_linear(), "weight", "x")
    m = _pruning_linear()
    with pytest.raises(ValueError, match="amount=13 should be smaller than the number of "
                                         "parameters to prune=12"):
        prune.l1_unstructured(m, "weight", 13)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"]  # left as it was
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(_pruning_linear(), "weight")


# -- torch.utils.dlpack, torch.hub ---------------------------------------------------------


def test_dlpack_round_trips_share_memory() -> None:
    import numpy as np

    import torch.utils.dlpack as dlpack

    assert dlpack.from_dlpack is torch.from_dlpack
    assert dlpack.DLDeviceType.kDLCPU == 1 and dlpack.DLDeviceType.kDLCUDA == 2
    x = torch.arange(3.0)
    capsule = dlpack.to_dlpack(x)
    assert type(capsule).__name__ == "PyCapsule"
    y = dlpack.from_dlpack(capsule)
    y[0] = 9.0
    assert x.tolist() == [9.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="can be consumed only once"):
        dlpack.from_dlpack(capsule)
    array = np.arange(6.0).reshape(2, 3)
    t = dlpack.from_dlpack(array)
    t[1, 2] = -1.0
    assert array[1, 2] == -1.0 and t.dtype is torch.float64
    back = np.from_dlpack(torch.ones(2, dtype=torch.int32))
    assert back.dtype == np.int32 and back.tolist() == [1, 1]


HUBCONF = '''
dependencies = ["torch"]
import torch
import helper  # the repository's own module: importable while hubconf runs


def tiny(n=2, pretrained=False):
    """A tiny model."""
    return torch.nn.Linear(n, helper.OUT)


def _private():
    pass

CONST = 3
'''


def _hub_repo(directory) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "hubconf.py").write_text(HUBCONF)
    (directory / "helper.py").write_text("OUT = 1\n")
    return str(directory)


def test_hub_load_from_a_local_directory(tmp_path) -> None:
    import sys

    repo = _hub_repo(tmp_path / "repo")
    model = torch.hub.load(repo, "tiny", 3, source="local")
    assert isinstance(model, torch.nn.Linear) and model.in_features == 3
    assert torch.hub.load(repo, "tiny", source="local", n=5).in_features == 5
    assert repo not in sys.path
    with pytest.raises(RuntimeError, match="Cannot find callable nope in hubconf"):
        torch.hub.load(repo, "nope", source="local")
    with pytest.raises(ValueError, match='Unknown source: "bad"'):
        torch.hub.load(repo, "tiny", source="bad")
    with pytest.raises(ValueError, match="model should be a string of function name"):
        torch.hub.load(repo, 5, source="local")
    with pytest.raises(FileNotFoundError):
        torch.hub.load(str(tmp_path / "absent"), "tiny", source="local")
    (tmp_path / "repo" / "hubconf.py").write_text(
        'dependencies = ["no_such_package_here", "os"]\ndef a():\n    pass\n')
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_package_here"):
        torch.hub.load(repo, "a", source="local")


def test_hub_directory_settings(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    assert torch.hub.get_dir() == str(tmp_path / "home" / "hub")
    torch.hub.set_dir(tmp_path / "elsewhere")
    assert torch.hub.get_dir() == str(tmp_path / "elsewhere")


def test_hub_github_repositories_come_from_the_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    torch.hub.set_dir(tmp_path)
    _hub_repo(tmp_path / "someone_models_main")
    assert torch.hub.list("someone/models", trust_repo=True) == ["tiny"]
    assert torch.hub.help("someone/models", "tiny") == "A tiny model."
    assert (tmp_path / "trusted_list").read_text().split() == ["someone_models"]
    model = torch.hub.load("someone/models", "tiny", 4, verbose=False)
    assert model.in_features == 4
    with pytest.raises(ValueError, match="repo_owner/repo_name"):
        torch.hub.load("no-slash", "tiny")


# -- torch.distributed, torch.nn.parallel, DistributedSampler -------------------------------


def test_distributed_answers_as_a_build_without_it() -> None:
    import torch.distributed as dist

    assert torch.distributed is dist
    assert dist.is_available() is False and dist.is_initialized() is False
    assert not dist.is_nccl_available() and not dist.is_gloo_available()
    assert dist.ReduceOp.SUM is not dist.ReduceOp.MAX and dist.group.WORLD is None
    assert dist.Backend("GLOO") == dist.Backend.GLOO == "gloo"
    for call in (dist.get_rank, dist.get_world_size, dist.barrier, dist.destroy_process_group):
        with pytest.raises(RuntimeError, match=r"torch\.distributed is not available"):
            call()
    with pytest.raises(RuntimeError, match=r"init_process_group\(\) needs a process group"):
        dist.init_process_group("gloo")
    with pytest.raises(RuntimeError, match="all_reduce"):
        dist.all_reduce(torch.ones(2), op=dist.ReduceOp.SUM)


def test_distributed_data_parallel_needs_distributed() -> None:
    from torch.nn.parallel import DistributedDataParallel

    with pytest.raises(RuntimeError, match=r"needs torch\.distributed"):
        DistributedDataParallel(torch.nn.Linear(1, 1))


def test_data_parallel_without_an_accelerator_runs_the_module() -> None:
    out = run_cpu_only("""
import torch
torch.manual_seed(0)
inner = torch.nn.Linear(2, 1)
m = torch.nn.DataParallel(inner)
x = torch.randn(3, 2)
print(m.device_ids, list(m.state_dict()), m.module is inner)
print(torch.equal(m(x), inner(x)), torch.nn.parallel.DataParallel is torch.nn.DataParallel)
print(torch.equal(torch.nn.parallel.data_parallel(inner, x), inner(x)))
""")
    assert out.splitlines() == ["[] ['module.weight', 'module.bias'] True", "True True", "True"]


def test_data_parallel_runs_on_the_accelerators_first_device() -> None:
    if "toy" not in registry.installed():
        pytest.skip("the toy device plugin is not installed")
    torch.manual_seed(0)
    inner = torch.nn.Linear(2, 1)
    expected = inner(torch.ones(3, 2))
    m = torch.nn.DataParallel(inner)
    assert m.device_ids == [0, 1] and inner.weight.device == torch.device("toy", 0)
    with pytest.warns(UserWarning, match="falls back to the CPU"):
        out = m(torch.ones(3, 2))
    assert out.device == torch.device("toy", 0)
    assert torch.allclose(out.cpu(), expected)


def test_distributed_sampler_shares_a_dataset() -> None:
    from torch.utils.data import DistributedSampler
    from torch.utils.data.distributed import DistributedSampler as same

    assert same is DistributedSampler
    shares = [list(DistributedSampler(range(10), num_replicas=3, rank=r, shuffle=False))
              for r in range(3)]
    assert shares == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]  # padded by repeating
    trimmed = DistributedSampler(range(10), num_replicas=3, rank=2, shuffle=False,
                                 drop_last=True)
    assert list(trimmed) == [2, 5, 8] and len(trimmed) == 3
    shuffled = [DistributedSampler(range(11), num_replicas=2, rank=r, seed=3) for r in range(2)]
    first = [list(s) for s in shuffled]
    assert set(first[0] + first[1]) == set(range(11)) and len(first[0]) == len(first[1]) == 6
    assert [list(s) for s in shuffled] == first  # the same epoch gives the same order
    for s in shuffled:
        s.set_epoch(1)
    assert [list(s) for s in shuffled] != first
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval "
                                         r"\[0, 2\]"):
        DistributedSampler(range(10), num_replicas=3, rank=3)
    with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
        DistributedSampler(range(10))
    loader = torch.utils.data.DataLoader(list(range(10)), batch_size=2,
                                         sampler=DistributedSampler(range(10), 2, 0, False))
    assert [b.tolist() for b in loader] == [[0, 2], [4, 6], [8]]


def test_backends_mkl_and_openmp_are_not_built_in() -> None:
    import torch.backends.mkl as mkl
    import torch.backends.openmp as openmp

    assert mkl.is_available() is False and openmp.is_available() is False
    assert torch.backends.mkl is mkl and torch.backends.openmp is openmp
    with mkl.verbose(mkl.VERBOSE_ON):
        assert torch.ones(2).sum().item() == 2.0
    assert (mkl.VERBOSE_OFF, mkl.VERBOSE_ON) == (0, 1)
