"""``torch.library`` registrations a custom op gets for other subsystems, as PyTorch's custom-op
tutorials use them: a vmap rule, an autocast cast, a kernel looked up and handed cases back,
fallthrough, the renamed ``impl_abstract``, turning a device kernel off for a while, triton ops
(defined; their triton launches refused with the reason)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import torch
from torch import Tensor

_names = itertools.count()


def _ns() -> str:
    """A fresh namespace per test (operators outlive a test)."""
    return f"regtest{next(_names)}"


def test_register_vmap_rule_runs_once_for_the_whole_batch() -> None:
    ns = _ns()

    @torch.library.custom_op(f"{ns}::scale", mutates_args=())
    def scale(a: Tensor, s: float) -> Tensor:
        return a * s

    seen: list[tuple[object, int, str]] = []

    @scale.register_vmap
    def _(info, in_dims, a, s):
        seen.append((in_dims, info.batch_size, info.randomness))
        return a.movedim(in_dims[0], -1) * s, a.dim() - 1  # batch dim last, said so

    x = torch.arange(6.0).reshape(3, 2)
    out = torch.vmap(scale, in_dims=(1, None))(x, 2.0)
    np.testing.assert_array_equal(out.numpy(), (x.numpy() * 2.0).T)
    assert len(seen) == 1  # one call for the batch, not one per sample
    in_dims, batch_size, randomness = seen[0]
    assert in_dims[1] is None and isinstance(in_dims[0], int)
    assert (batch_size, randomness) == (2, "error")


def test_register_vmap_out_dims_none_broadcasts_and_a_bad_return_raises() -> None:
    ns = _ns()

    @torch.library.custom_op(f"{ns}::total", mutates_args=())
    def total(a: Tensor) -> Tensor:
        return a.sum().reshape(1)

    torch.library.register_vmap(total, lambda info, in_dims, a: (torch.ones(1), None))
    out = torch.vmap(total)(torch.zeros(4, 3))
    assert out.shape == (4, 1) and out.tolist() == [[1.0]] * 4

    torch.library.register_vmap(f"{ns}::total", lambda info, in_dims, a: a)
    with pytest.raises(RuntimeError, match="must return"):
        torch.vmap(total)(torch.zeros(4, 3))


def test_register_vmap_with_a_library_is_undone_with_it() -> None:
    ns = _ns()
    lib = torch.library.Library(ns, "DEF")
    lib.define("neg(Tensor x) -> Tensor")
    lib.impl("neg", lambda x: -x, "CompositeExplicitAutograd")
    calls = []

    def rule(info, in_dims, x):
        calls.append(in_dims)
        return -x, 0

    torch.library.register_vmap(f"{ns}::neg", rule, lib=lib)
    op = torch.ops.__getattr__(ns).neg
    assert torch.vmap(op)(torch.ones(3, 2)).tolist() == [[-1.0, -1.0]] * 3
    assert len(calls) == 1
    lib._destroy()
    from torch._functorch import rules

    assert f"{ns}::neg" not in rules.RULES


def test_register_autocast_casts_floating_inputs_inside_the_region_only() -> None:
    ns = _ns()
    seen: list[torch.dtype] = []

    @torch.library.custom_op(f"{ns}::double", mutates_args=())
    def double(x: Tensor, n: Tensor) -> Tensor:
        seen.append(x.dtype)
        assert not torch.is_autocast_enabled("cpu")  # runs with autocast off
        return x * 2

    torch.library.register_autocast(f"{ns}::double", "cpu", torch.bfloat16)
    x, n = torch.ones(3), torch.arange(3)
    assert double(x, n).dtype == torch.float32
    with torch.autocast("cpu", dtype=torch.float16):
        y = double(x, n)
    assert y.dtype == torch.bfloat16 and y.tolist() == [2.0, 2.0, 2.0]
    assert seen == [torch.float32, torch.bfloat16]
    with pytest.raises(ValueError, match="cast_inputs"):
        torch.library.register_autocast(f"{ns}::double", "cpu", "bfloat16")


def test_get_kernel_lets_a_new_kernel_hand_cases_back() -> None:
    ns = _ns()

    @torch.library.custom_op(f"{ns}::clip", mutates_args=(), device_types="cpu")
    def clip(x: Tensor) -> Tensor:
        return x.clamp(0, 1)

    original = torch.library.get_kernel(f"{ns}::clip", "CPU")
    assert original.call_boxed(None, torch.tensor([-1.0, 2.0])).tolist() == [0.0, 1.0]

    def wrapper(x: Tensor) -> Tensor:  # negative inputs: the original kernel; else zeros
        if bool((x < 0).any()):
            return original.call_boxed(None, x)
        return torch.zeros_like(x)

    torch.library.register_kernel(f"{ns}::clip", "cpu", wrapper)
    assert clip(torch.tensor([-1.0, 0.5])).tolist() == [0.0, 0.5]
    assert clip(torch.tensor([2.0, 0.5])).tolist() == [0.0, 0.0]
    sin = torch.library.get_kernel(torch.ops.aten.sin.default, "CPU")
    np.testing.assert_allclose(sin.call_boxed(None, torch.tensor([1.0])).numpy(), np.sin([1.0]),
                               rtol=1e-6)
    with pytest.raises(RuntimeError, match="does not exist"):
        torch.library.get_kernel(f"{ns}::nothing", "CPU")


def test_set_kernel_enabled_turns_a_device_kernel_off_for_a_while() -> None:
    ns = _ns()

    @torch.library.custom_op(f"{ns}::plus", mutates_args=())
    def plus(x: Tensor) -> Tensor:
        return x + 1

    @plus.register_kernel("cpu")
    def _(x):
        return x + 100

    x = torch.zeros(1)
    assert plus(x).item() == 100.0
    with plus.set_kernel_enabled("cpu", enabled=False):
        assert plus(x).item() == 1.0
    assert plus(x).item() == 100.0


def test_fallthrough_removes_the_kernel_at_that_key() -> None:
    ns = _ns()
    lib = torch.library.Library(ns, "DEF")
    lib.define("ident(Tensor x) -> Tensor")
    lib.impl("ident", lambda x: x.clone(), "CompositeExplicitAutograd")
    lib.impl("ident", lambda x: x * 0, "Autograd")
    op = getattr(torch.ops, ns).ident
    x = torch.ones(2, requires_grad=True)
    assert op(x).tolist() == [0.0, 0.0]
    lib.impl("ident", torch.library.fallthrough_kernel, "Autograd")
    assert op(x).tolist() == [1.0, 1.0]
    with pytest.raises(NotImplementedError):
        torch.library.fallthrough_kernel()


def test_impl_abstract_is_register_fake_with_a_warning() -> None:
    ns = _ns()
    lib = torch.library.Library(ns, "DEF")
    lib.define("pairs(Tensor x) -> Tensor")
    lib.impl("pairs", lambda x: x.reshape(-1, 2), "CompositeExplicitAutograd")
    with pytest.warns(FutureWarning, match="renamed to `torch.library.register_fake`"):
        torch.library.impl_abstract(f"{ns}::pairs", lambda x: x.new_empty(x.numel() // 2, 2))
    out = getattr(torch.ops, ns).pairs(torch.empty(8, device="meta"))
    assert out.shape == (4, 2) and out.device.type == "meta"


def test_triton_op_is_defined_and_its_launch_says_why_it_cannot_run() -> None:
    ns = _ns()

    def fake_kernel(*args: object) -> None:  # stands in for a @triton.jit function
        raise AssertionError("never launched")

    @torch.library.triton_op(f"{ns}::add", mutates_args={})
    def add(x: Tensor, y: Tensor) -> Tensor:
        out = torch.empty_like(x)
        torch.library.wrap_triton(fake_kernel)[(1,)](x, y, out, x.numel())
        return out

    assert getattr(torch.ops, ns).add.default.schema is not None
    with pytest.raises(RuntimeError, match="cannot launch triton kernels"):
        add(torch.ones(2), torch.ones(2))
    with pytest.raises(TypeError, match="triton kernel"):
        torch.library.wrap_triton(3)


def test_names_libraries_import() -> None:
    from torch._library.custom_ops import CustomOpDef
    from torch._library.infer_schema import infer_schema

    ns = _ns()

    @torch.library.custom_op(f"{ns}::f", mutates_args=())
    def f(x: Tensor, k: int = 2) -> Tensor:
        return x * k

    assert isinstance(f, CustomOpDef) and f._opoverload is getattr(torch.ops, ns).f.default
    assert isinstance(f._opoverload, torch.library.OpOverload)
    assert infer_schema is torch.library.infer_schema
    assert infer_schema(f._init_fn, mutates_args=()) == \
        "(Tensor x, SymInt k=2) -> Tensor"
    assert torch.library.NAMELESS_SCHEMA.fullmatch("(Tensor x) -> Tensor")
    assert torch.library.EffectType.ORDERED.value == "Ordered"
