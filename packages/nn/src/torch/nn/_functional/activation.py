"""Activation functions of ``torch.nn.functional`` beyond the first few in ``functional.py``.

Those that are ``aten::`` operators of their own in PyTorch (``leaky_relu``, ``elu`` (and
``selu``, which PyTorch writes as ``elu``), ``celu``, ``hardtanh`` (and ``relu6``), ``softplus``,
``hardsigmoid``, ``hardswish``, ``mish``, ``logsigmoid`` (``log_sigmoid_forward``),
``softshrink``, ``hardshrink``, ``threshold``, ``glu``) call that operator, so a dispatch
mode, a flop counter or an exporter sees PyTorch's names, and the backward runs its
``*_backward`` operator.
The rest are composites over differentiable core ops, so autograd needs no new formulas. Two
habits recur in those:
- ``torch.where`` picks the branch, and the gradient at a kink is PyTorch's (its backward
  kernels decide ``x == threshold`` one way or the other; the comparisons here are chosen to
  agree);
- the argument of an ``exp`` on the branch that is *not* taken is replaced by a harmless value
  first, because ``where`` sends a zero gradient to that branch and ``0 * exp(big) = 0 * inf``
  would otherwise be NaN.
In-place variants compute the result from a clone of the input and ``copy_`` it back, so the
values saved for the backward pass are not the ones being overwritten.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch
from torch import Tensor

__all__ = [
    "celu", "celu_", "elu", "elu_", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh",
    "hardtanh_", "leaky_relu_", "logsigmoid", "mish", "prelu", "relu6", "rrelu", "rrelu_",
    "selu", "selu_", "softmin", "softplus", "softshrink", "softsign", "tanhshrink", "threshold",
    "threshold_",
]

# The fixed point constants of SELU (Klambauer et al., 2017).
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946

# the operators, looked up once (each call would otherwise walk torch.ops.aten.<name>.default)
_CELU = torch.ops.aten.celu.default
_ELU = torch.ops.aten.elu.default
_GLU = torch.ops.aten.glu.default
_HARDSHRINK = torch.ops.aten.hardshrink.default
_HARDSIGMOID = torch.ops.aten.hardsigmoid.default
_HARDSWISH = torch.ops.aten.hardswish.default
_HARDTANH = torch.ops.aten.hardtanh.default
_LEAKY_RELU = torch.ops.aten.leaky_relu.default
_LOG_SIGMOID_FORWARD = torch.ops.aten.log_sigmoid_forward.default
_MISH = torch.ops.aten.mish.default
_SOFTPLUS = torch.ops.aten.softplus.default
_SOFTSHRINK = torch.ops.aten.softshrink.default
_THRESHOLD = torch.ops.aten.threshold.default


def _write_back(input: Tensor, out: Tensor) -> Tensor:
    input.copy_(out)
    return input


def _inplace(fn: Callable[..., Tensor], input: Tensor, *args: object) -> Tensor:
    """``fn(input, *args)`` written into ``input``; computed from a clone so that autograd's
    saved values stay those of the original input."""
    return _write_back(input, fn(input.clone(), *args))


# --------------------------------------------------------------------------- piecewise linear


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``input`` where ``input > threshold``, ``value`` elsewhere (NaN stays NaN)."""
    if inplace:
        return threshold_(input, threshold, value)
    return _THRESHOLD(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return input.masked_fill_(input <= threshold, value)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]``; the gradient is zero at both ends, as in
    PyTorch (``clamp`` would pass it through)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return _inplace(hardtanh, input, min_val, max_val)
    return _HARDTANH(input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(input, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place ``leaky_relu``: ``x`` where positive, ``negative_slope * x`` elsewhere."""
    return _inplace(lambda x: _LEAKY_RELU(x, negative_slope), input)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """Leaky ReLU with a learned slope: one for all channels, or one per channel (dim 1)."""
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = "
                           f"{channels}.")
    w = weight.reshape(-1)
    if w.numel() != 1 and input.ndim > 2:
        w = w.reshape([channels] + [1] * (input.ndim - 2))  # (C, 1, ..., 1) against (N, C, ...)
    elif w.numel() == 1:
        w = w.reshape(())
    # At x == 0 PyTorch's first derivatives are the negative side's (slope w) but its second
    # derivatives the positive side's (zero): ``n`` is x below 0 and a constant 0 at and above
    # it, and ``(input - n) * w.detach()`` (zero in value there) supplies the slope at 0.
    n = torch.where(input >= 0, 0, input)
    return torch.where(input > 0, input, n * w + (input - n) * w.detach())


_RRELU_WITH_NOISE = torch.ops.aten.rrelu_with_noise.default


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: in training each non-positive element gets its own slope drawn
    from ``U(lower, upper)``; in evaluation the slope is ``(lower + upper) / 2``."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if inplace:
        return _inplace(rrelu, input, lower, upper, training)
    # PyTorch's aten::rrelu_with_noise (what a mode sees), which writes the slopes into noise
    return _RRELU_WITH_NOISE(input, torch.empty_like(input), lower, upper, training)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """Zero on ``[-lambd, lambd]``, the identity elsewhere."""
    return _HARDSHRINK(input, lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``input`` shrunk towards zero by ``lambd`` (zero on ``[-lambd, lambd]``)."""
    return _SOFTSHRINK(input, lambd)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``."""
    if inplace:
        return _inplace(hardsigmoid, input)
    return _HARDSIGMOID(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``."""
    if inplace:
        return _inplace(hardswish, input)
    return _HARDSWISH(input)


# --------------------------------------------------------------------------- exponential family


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    if inplace:
        return _inplace(elu, input, alpha)
    return _ELU(input, alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`elu`."""
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    if inplace:
        return _inplace(selu, input)
    return _ELU(input, _SELU_ALPHA, _SELU_SCALE)  # PyTorch's selu is this call


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`."""
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    if inplace:
        return _inplace(celu, input, alpha)
    return _CELU(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`."""
    return celu(input, alpha, inplace=True)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, the identity where ``beta * x > threshold``."""
    return _SOFTPLUS(input, beta, threshold)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))`` without overflow: ``x - log(1 + exp(x))`` for negative ``x``,
    ``-log(1 + exp(-x))`` otherwise (both exponents are non-positive)."""
    return _LOG_SIGMOID_FORWARD(input)[0]


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    if inplace:
        return _inplace(mish, input)
    return _MISH(input)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    return input / (1 + input.abs())


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    return input - torch.tanh(input)


# --------------------------------------------------------------------------- over a dimension


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: torch.dtype | None = None) -> Tensor:
    """``softmax(-input, dim)``; ``dtype`` casts the input first."""
    if dim is None:
        warnings.warn("Implicit dimension choice for softmin has been deprecated. Change the "
                      "call to include dim=X as an argument.", UserWarning,
                      stacklevel=_stacklevel)
        dim = 0 if input.ndim in (0, 1, 3) else 1
    if dtype is not None:
        input = input.to(dtype)
    return torch.softmax(-input, dim)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``input`` along
    ``dim``."""
    return _GLU(input, dim)
