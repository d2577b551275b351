"""``torch._foreach_*``: each function equals its per-tensor op on every tensor (checked with
numpy), in-place forms update the given tensors and return the given list, out-of-place forms
return a tuple, and mismatched operands raise PyTorch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import torch
from torch import _foreach as foreach

SHAPES = ((3,), (2, 4), (1,))


def _tensors(seed: int, positive: bool = False) -> list[torch.Tensor]:
    rs = np.random.RandomState(seed)
    arrays = [rs.uniform(0.1 if positive else -2.0, 2.0, s).astype(np.float32) for s in SHAPES]
    return [torch.from_numpy(a) for a in arrays]


UNARY_NUMPY = {
    "abs": np.abs, "ceil": np.ceil, "cos": np.cos, "exp": np.exp, "expm1": np.expm1,
    "floor": np.floor, "log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10,
    "neg": np.negative, "reciprocal": np.reciprocal, "sign": np.sign, "sin": np.sin,
    "sqrt": np.sqrt, "tanh": np.tanh, "trunc": np.trunc, "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
    "rsqrt": lambda a: 1 / np.sqrt(a), "frac": lambda a: a - np.trunc(a),
}


@pytest.mark.parametrize("name", sorted(UNARY_NUMPY))
def test_unary_is_the_op_on_each_tensor(name: str) -> None:
    xs = _tensors(0, positive=True)
    expected = [UNARY_NUMPY[name](x.numpy().astype(np.float64)) for x in xs]
    out = getattr(torch, f"_foreach_{name}")(xs)
    assert isinstance(out, tuple) and len(out) == len(xs)
    for o, e in zip(out, expected, strict=True):
        np.testing.assert_allclose(o.numpy(), e, rtol=1e-5, atol=1e-6)
    addresses = [x.data_ptr() for x in xs]
    result = getattr(torch, f"_foreach_{name}_")(xs)
    assert result is xs  # the given list, its tensors updated in their own memory
    assert [x.data_ptr() for x in xs] == addresses
    for x, e in zip(xs, expected, strict=True):
        np.testing.assert_allclose(x.numpy(), e, rtol=1e-5, atol=1e-6)


def test_every_unary_row_has_both_forms() -> None:
    for name in foreach._UNARY:
        assert callable(getattr(torch, f"_foreach_{name}"))
        assert callable(getattr(torch, f"_foreach_{name}_"))
    assert "_foreach_add_" in dir(torch)


BINARY_NUMPY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "clamp_min": np.maximum,
    "clamp_max": np.minimum,
}


@pytest.mark.parametrize("name", sorted(BINARY_NUMPY))
@pytest.mark.parametrize("operand", ["number", "numbers", "tensors", "0-d tensor"])
def test_binary_pairs_each_tensor_with_its_operand(name: str, operand: str) -> None:
    xs = _tensors(1)
    ys = _tensors(2, positive=True)
    if operand == "number":
        other, values = 0.75, [0.75] * len(xs)
    elif operand == "numbers":
        other = values = [0.5, -1.5, 2.0]
    elif operand == "tensors":
        other, values = ys, [y.numpy() for y in ys]
    else:
        other, values = torch.tensor(1.25), [1.25] * len(xs)
    expected = [BINARY_NUMPY[name](x.numpy(), v) for x, v in zip(xs, values, strict=True)]
    out = getattr(torch, f"_foreach_{name}")(xs, other)
    for o, e in zip(out, expected, strict=True):
        np.testing.assert_allclose(o.numpy(), e, rtol=1e-6)
    targets = [x.clone() for x in xs]
    assert getattr(torch, f"_foreach_{name}_")(targets, other) is targets
    for t, e in zip(targets, expected, strict=True):
        np.testing.assert_allclose(t.numpy(), e, rtol=1e-6)


def test_alpha_scales_the_operand_of_add_and_sub() -> None:
    xs, ys = _tensors(3), _tensors(4)
    for o, x, y in zip(torch._foreach_add(xs, ys, alpha=2.5), xs, ys, strict=True):
        np.testing.assert_allclose(o.numpy(), x.numpy() + 2.5 * y.numpy(), rtol=1e-6)
    for o, x, y in zip(torch._foreach_sub(xs, ys, alpha=-1), xs, ys, strict=True):
        np.testing.assert_allclose(o.numpy(), x.numpy() + y.numpy(), rtol=1e-6)


def test_pointwise_lerp_pow_and_reductions() -> None:
    xs, a, b = _tensors(5), _tensors(6), _tensors(7, positive=True)
    for o, x, p, q in zip(torch._foreach_addcdiv(xs, a, b, 0.5), xs, a, b, strict=True):
        np.testing.assert_allclose(o.numpy(), x.numpy() + 0.5 * p.numpy() / q.numpy(),
                                   rtol=1e-5)
    scales = [1.0, -2.0, 0.25]
    for o, x, p, q, s in zip(torch._foreach_addcmul(xs, a, b, torch.tensor(scales)), xs, a, b,
                             scales, strict=True):
        np.testing.assert_allclose(o.numpy(), x.numpy() + s * p.numpy() * q.numpy(),
                                   rtol=1e-5)
    for o, x, e in zip(torch._foreach_lerp(xs, a, 0.25), xs, a, strict=True):
        np.testing.assert_allclose(o.numpy(), x.numpy() + 0.25 * (e.numpy() - x.numpy()),
                                   rtol=1e-5, atol=1e-7)
    for o, x in zip(torch._foreach_pow(b, 2), b, strict=True):
        np.testing.assert_allclose(o.numpy(), x.numpy() ** 2, rtol=1e-6)
    for o, x in zip(torch._foreach_pow(2.0, xs), xs, strict=True):
        np.testing.assert_allclose(o.numpy(), 2.0 ** x.numpy(), rtol=1e-6)
    for n, x in zip(torch._foreach_norm(xs), xs, strict=True):
        assert math.isclose(n.item(), float(np.linalg.norm(x.numpy())), rel_tol=1e-6)
    for n, x in zip(torch._foreach_norm(xs, 1), xs, strict=True):
        assert math.isclose(n.item(), float(np.abs(x.numpy()).sum()), rel_tol=1e-6)
    for n, x in zip(torch._foreach_powsum(xs, 3), xs, strict=True):
        assert math.isclose(n.item(), float((np.abs(x.numpy()) ** 3).sum()), rel_tol=1e-5)
    for m, x in zip(torch._foreach_max(xs), xs, strict=True):
        assert m.item() == x.numpy().max()


def test_copy_zero_and_clone() -> None:
    xs, ys = _tensors(8), _tensors(9)
    clones = torch._foreach_clone(xs)
    assert all(c.data_ptr() != x.data_ptr() and torch.equal(c, x)
               for c, x in zip(clones, xs, strict=True))
    assert torch._foreach_copy_(xs, ys) is xs
    assert all(torch.equal(x, y) for x, y in zip(xs, ys, strict=True))
    torch._foreach_zero_(xs)
    assert all(not x.any() for x in xs)


def test_gradients_flow_through_out_of_place_forms() -> None:
    ws = [torch.ones(2, requires_grad=True), torch.full((3,), 2.0, requires_grad=True)]
    out = torch._foreach_mul(ws, [3.0, 4.0])
    sum(o.sum() for o in out).backward()
    assert ws[0].grad.tolist() == [3.0, 3.0] and ws[1].grad.tolist() == [4.0, 4.0, 4.0]


def test_an_ema_update_in_place() -> None:
    # the update EMA helpers write: ema = ema * decay + (1 - decay) * param
    ema, params = _tensors(10), _tensors(11)
    expected = [e.numpy() * 0.9 + 0.1 * p.numpy() for e, p in zip(ema, params, strict=True)]
    torch._foreach_lerp_(ema, params, 0.1)
    for e, want in zip(ema, expected, strict=True):
        np.testing.assert_allclose(e.numpy(), want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("call, error, message", [
    (lambda xs: torch._foreach_add([], 1), RuntimeError, "at least one tensor"),
    (lambda xs: torch._foreach_add(xs, xs[:1]), RuntimeError,
     "same number of tensors, got 3 and 1"),
    (lambda xs: torch._foreach_mul(xs, [1.0]), RuntimeError, "same number of elements as scalar"),
    (lambda xs: torch._foreach_add(xs, torch.ones(2)), RuntimeError, "0 dim"),
    (lambda xs: torch._foreach_exp(xs[0]), TypeError, "list or tuple of Tensors"),
    (lambda xs: torch._foreach_add(xs, 1, beta=2), TypeError, "unexpected keyword"),
    (lambda xs: torch._foreach_add_([torch.ones(2, dtype=torch.int64)], 1.5), RuntimeError,
     "can't be cast"),
])
def test_mismatched_operands_raise(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call(_tensors(12))
