"""The dispatcher and PyTorch's registration API: torch.library, custom_op, register_fake,
torch.ops, dispatch by device, alias keys, the CPU fallback and dispatch modes."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import torch
from torch._core import dispatch as _dispatch, schema as _schema

_ids = itertools.count()


def fresh_ns() -> str:
    return f"plaittest{next(_ids)}"


def test_library_define_impl_and_torch_ops():
    ns = fresh_ns()
    lib = torch.library.Library(ns, "DEF")
    assert lib.define("scale(Tensor x, float s) -> Tensor") == "scale"
    lib.impl("scale", lambda x, s: x * s, "CPU")
    out = getattr(torch.ops, ns).scale(torch.tensor([1.0, 2.0]), 3.0)
    assert out.tolist() == [3.0, 6.0]
    packet = getattr(torch.ops, ns).scale
    assert packet.default.schema.arguments[1].type == "float"
    assert packet.overloads() == ["default"]
    lib._destroy()
    with pytest.raises(AttributeError):
        getattr(torch.ops, ns).scale  # noqa: B018


def test_overloads_and_kwargs():
    ns = fresh_ns()
    lib = torch.library.Library(ns, "DEF")
    lib.define("f(Tensor x, *, int k=2) -> Tensor")
    lib.define("f.twice(Tensor x) -> Tensor")
    lib.impl("f", lambda x, *, k=2: x * k, "CompositeExplicitAutograd")
    lib.impl("f.twice", lambda x: x + x, "CompositeExplicitAutograd")
    ops = getattr(torch.ops, ns)
    t = torch.tensor([1, 2])
    assert ops.f(t).tolist() == [2, 4]
    assert ops.f(t, k=5).tolist() == [5, 10]
    assert ops.f.twice(t).tolist() == [2, 4]
    assert sorted(ops.f.overloads()) == ["default", "twice"]


def test_registration_errors():
    ns = fresh_ns()
    lib = torch.library.Library(ns, "DEF")
    lib.define("g(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="multiple times"):
        lib.define("g(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="Only a single"):
        torch.library.Library(ns, "DEF")
    with pytest.raises(ValueError, match="Unsupported kind"):
        torch.library.Library(ns, "WRONG")
    with pytest.raises(ValueError, match="malformed schema"):
        lib.define("h(Tensor x")
    impl_lib = torch.library.Library(ns, "IMPL", "CPU")
    with pytest.raises(RuntimeError, match="not allowed"):
        impl_lib.define("k(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="does not exist"):
        impl_lib.impl("missing", lambda x: x)


def test_missing_backend_kernel_message():
    ns = fresh_ns()
    lib = torch.library.Library(ns, "DEF")
    lib.define("only_meta(Tensor x) -> Tensor")
    lib.impl("only_meta", lambda x: x, "Meta")
    with pytest.raises(NotImplementedError) as info:
        getattr(torch.ops, ns).only_meta(torch.ones(2))
    msg = str(info.value)
    assert f"'{ns}::only_meta'" in msg and "'CPU' backend" in msg and "[Meta]" in msg


def test_dispatch_by_device_and_cpu_fallback_of_mutated_args():
    ns = fresh_ns()
    lib = torch.library.Library(ns, "DEF")
    lib.define("inc_(Tensor(a!) x) -> ()")
    calls = []

    def cpu_inc(x):
        calls.append(x.device.type)
        x.add_(1)

    lib.impl("inc_", cpu_inc, "CPU")
    op = getattr(torch.ops, ns).inc_
    assert op.default.schema.mutated == (0,)
    t = torch.tensor([1.0, 2.0], device="toy")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        op(t)
    assert calls == ["cpu"]  # the CPU kernel ran on a host copy...
    assert t.device.type == "toy" and t.tolist() == [2.0, 3.0]  # ...and wrote back
    assert any("falls back to the CPU" in str(w.message) for w in caught)
    # a toy kernel, once registered, is preferred
    lib.impl("inc_", lambda x: calls.append("toy"), "toy")
    op(t)
    assert calls[-1] == "toy"


def test_mixed_devices_rejected():
    ns = fresh_ns()
    lib = torch.library.Library(ns, "DEF")
    lib.define("pair(Tensor a, Tensor b) -> Tensor")
    lib.impl("pair", lambda a, b: a, "CompositeExplicitAutograd")
    a, b = torch.ones(2), torch.ones(2, device="toy")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        getattr(torch.ops, ns).pair(a, b)
    # a 0-d CPU tensor may ride along with any device, as in PyTorch
    assert getattr(torch.ops, ns).pair(b, torch.tensor(1.0)) is b


def test_custom_op_schema_inference_and_fake():
    ns = fresh_ns()

    @torch.library.custom_op(f"{ns}::mix", mutates_args=())
    def mix(x: torch.Tensor, y: torch.Tensor, w: float, n: int = 2) -> torch.Tensor:
        return x * w + y * n

    schema = str(mix._op.schema)
    assert schema == "mix(Tensor x, Tensor y, float w, SymInt n=2) -> Tensor"

    @mix.register_fake
    def _(x, y, w, n=2):
        return torch.empty(x.shape, device="meta")

    x, y = torch.tensor([1.0, 2.0]), torch.tensor([10.0, 20.0])
    assert mix(x, y, 0.5).tolist() == [20.5, 41.0]
    assert getattr(torch.ops, ns).mix(x, y, 1.0, n=0).tolist() == [1.0, 2.0]
    fake = mix(torch.empty(3, 4, device="meta"), torch.empty(3, 4, device="meta"), 1.0)
    assert fake.device.type == "meta" and fake.shape == (3, 4)


def test_custom_op_mutation_and_errors():
    ns = fresh_ns()

    @torch.library.custom_op(f"{ns}::clamp_", mutates_args=("x",), device_types="cpu")
    def clamp_(x: torch.Tensor, hi: float) -> None:
        a = x.numpy()
        np.minimum(a, hi, out=a)

    assert "Tensor(a!) x" in str(clamp_._op.schema)
    t = torch.tensor([1.0, 5.0, 9.0], device="toy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clamp_(t, 4.0)
    assert t.tolist() == [1.0, 4.0, 4.0]

    with pytest.raises(ValueError, match="needs a type hint"):
        torch.library.custom_op(f"{ns}::bad", lambda x: x, mutates_args=())
    with pytest.raises(ValueError, match="namespace::name"):
        torch.library.custom_op("noname", lambda x: x, mutates_args=())

    def bad_ann(x: dict) -> torch.Tensor:
        return x

    with pytest.raises(ValueError, match="unsupported type annotation"):
        torch.library.custom_op(f"{ns}::bad2", bad_ann, mutates_args=())


def test_module_level_define_impl_register_kernel():
    ns = fresh_ns()
    torch.library.define(f"{ns}::neg2", "(Tensor x) -> Tensor")

    @torch.library.impl(f"{ns}::neg2", "cpu")
    def _(x):
        return x * -2

    torch.library.register_kernel(f"{ns}::neg2", "toy", lambda x: x * -20)
    op = getattr(torch.ops, ns).neg2
    assert op(torch.tensor([1.0])).tolist() == [-2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # toy has no mul kernel: CPU fallback inside
        assert op(torch.tensor([1.0], device="toy")).tolist() == [-20.0]


def test_aten_and_prims_are_operators():
    a, b = torch.tensor([1, 2]), torch.tensor([3, 4])
    assert torch.ops.aten.add.Tensor(a, b, alpha=2).tolist() == [7, 10]
    assert torch.ops.aten.add.Tensor(a, b).tolist() == [4, 6]
    out = torch.empty(2, dtype=torch.int64)
    torch.ops.prims.mul(out, a, b)
    assert out.tolist() == [3, 8]
    with pytest.raises(AttributeError):
        torch.ops.aten.no_such_op  # noqa: B018


def test_dispatch_mode_intercepts_ops():
    seen = []

    class Recorder:
        def __torch_dispatch__(self, func, types, args, kwargs):
            seen.append(func.qualname)
            return func(*args, **kwargs)

    a, b = torch.ones(2), torch.ones(2)
    _dispatch.push_mode(Recorder())
    try:
        r = a + b
    finally:
        _dispatch.pop_mode()
    assert r.tolist() == [2.0, 2.0]
    # as in PyTorch, the mode is off while it handles a call: the kernel's inner ops are unseen
    assert seen == ["aten::add.Tensor"]
    seen.clear()
    torch.ones(2) + 1
    assert seen == []


@pytest.mark.parametrize("text", [
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
    "fill_(Tensor(a!) out, Scalar value) -> ()",
    "pad(Tensor x, int[] pad, str mode=\"constant\", float? value=None) -> Tensor",
])
def test_schema_round_trip(text):
    parsed = _schema.parse(text)
    assert _schema.parse(str(parsed)) == parsed


def test_schema_bind():
    s = _schema.parse("f(Tensor x, int k=3, *, bool flag=False) -> Tensor")
    assert s.bind((1,), {"flag": True}) == [1, 3, True]
    with pytest.raises(TypeError, match="missing required argument 'x'"):
        s.bind((), {})
    with pytest.raises(TypeError, match="unexpected keyword"):
        s.bind((1,), {"nope": 1})
    with pytest.raises(TypeError, match="multiple values"):
        s.bind((1,), {"x": 2})


def test_custom_op_schema_inference_reads_pep_604_and_torch_types():
    # diffusers declares `softmax_scale: float | None` on a custom op
    def attention(q: torch.Tensor, scale: float | None, dt: torch.dtype, where: torch.device,
                  alpha: int | float | bool, items: list[int] | None = None) -> torch.Tensor:
        return q

    schema = torch.library.infer_schema(attention, mutates_args=())
    assert schema == ("(Tensor q, float? scale, ScalarType dt, Device where, Scalar alpha, "
                      "SymInt[]? items=None) -> Tensor")
    ns = fresh_ns()

    @torch.library.custom_op(f"{ns}::scaled", mutates_args=())
    def scaled(x: torch.Tensor, scale: float | None = None) -> torch.Tensor:
        return x * (2.0 if scale is None else scale)

    assert scaled(torch.ones(2)).tolist() == [2.0, 2.0]
    assert scaled(torch.ones(2), 3.0).tolist() == [3.0, 3.0]
