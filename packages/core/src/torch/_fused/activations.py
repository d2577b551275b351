"""Activations that are aten operators of their own, so that each forward and each backward
is one kernel instead of a chain of elementwise ops (each a dispatch, an allocation and a pass
over memory):

- ``relu`` (``torch.relu``): one native ``maximum`` with a broadcast zero, and a derivative of
  one comparison, instead of a ``where`` composite (four times the memory traffic);
- ``gelu`` and ``gelu_backward`` (PyTorch's ``aten::gelu``/``aten::gelu_backward``, with
  ``approximate="none"`` or ``"tanh"``): composites here, written in elementwise ops, which a
  backend may override with one fused kernel each (plait-backend-cpu does); the composites stay
  the reference and every other device's kernel;
- ``sigmoid_backward`` and ``tanh_backward`` (``aten::``, from the gradient and the forward's
  result): one primitive each (rows of the pointwise op table), which the derivatives of
  ``sigmoid`` and ``tanh`` call.
"""

from __future__ import annotations

import math
from typing import Any

from .._aten import elementwise as _ew
from .._aten.arith import inplace_method
from .._aten.convert import scalar_type_name, to_dtype
from .._aten.elementwise import RULES, run
from .._core import dispatch as _dispatch, dtype as _dtype, plan as _plan
from .._core.promotion import result_type
from .._core.tensor import Tensor

# torch.* names (PyTorch has no torch.gelu or torch.sigmoid_backward: those are reached as
# torch.ops.aten.*, and F.gelu calls its operator)
__all__ = ["relu", "relu_"]


def _relu_kernel(self: Tensor) -> Tensor:
    if not isinstance(self, Tensor):
        raise TypeError(f"relu(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(self).__name__}")
    dt = self._dtype
    if dt is _dtype.bool_ or dt.is_complex:
        raise RuntimeError(f'"clamp_min_scalar_cpu" not implemented for '
                           f"'{'Bool' if dt is _dtype.bool_ else dt}'")
    # maximum propagates NaN, and gives its second operand on ties: relu(-0.0) is -0.0, as
    # in PyTorch
    return run("maximum", [0, self], dt, dt)


_aten_relu = _dispatch.define_aten(
    {"relu": ("relu(Tensor self) -> Tensor", _relu_kernel)})["relu"]
_plan.enable(_aten_relu)  # its kernel is decided by the call signature alone


def relu(input: Tensor) -> Tensor:
    """``max(input, 0)`` elementwise; NaN stays NaN and the gradient at 0 is 0."""
    return _aten_relu(input)


# an operator of its own, as PyTorch's (a dispatch mode sees aten.relu_): the composite
# computes out of place and copies into ``self``
_aten_relu_ = _dispatch.define_aten({
    "relu_": ("relu_(Tensor(a!) self) -> Tensor(a!)", inplace_method(relu, "relu_"),
              _dispatch.COMPOSITE_IMPLICIT)})["relu_"]


def relu_(input: Tensor) -> Tensor:
    """In-place version of ``relu``."""
    return _aten_relu_(input)


# -- silu ----------------------------------------------------------------------------------
# PyTorch's aten::silu is an operator of its own (F.silu calls it, a dispatch mode and a graph
# show it); here its kernel is the composite ``x * sigmoid(x)`` (no native fused kernel yet),
# and its derivative is a formula (autograd/_formulas/elementwise.py), not the decomposition.


def _silu_kernel(self: Tensor) -> Tensor:
    if not isinstance(self, Tensor):
        raise TypeError(f"silu(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(self).__name__}")
    if not (self._dtype.is_floating_point or self._dtype.is_complex):
        name = scalar_type_name(self._dtype)
        raise NotImplementedError(f'"silu_cpu" not implemented for \'{name}\'')
    return self * _ew.sigmoid(self)


_aten_silu = _dispatch.define_aten(
    {"silu": ("silu(Tensor self) -> Tensor", _silu_kernel)})["silu"]


def silu(input: Tensor) -> Tensor:
    """``x * sigmoid(x)`` (swish), as PyTorch's ``aten::silu``."""
    return _aten_silu(input)


# -- gelu ----------------------------------------------------------------------------------

_APPROXIMATIONS = ("none", "tanh")
_SQRT1_2 = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)  # the tanh form's scale
_CUBIC = 0.044715  # the tanh form's cubic coefficient
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)  # the normal density at 0
_HALF = (_dtype.float16, _dtype.bfloat16)


def _check_approximate(approximate: Any) -> None:
    if approximate not in _APPROXIMATIONS:
        raise RuntimeError("approximate argument must be either none or tanh.")


def _floating_operand(x: Tensor, kernel: str) -> Tensor:
    """``x`` in the dtype gelu computes in: its own, float32 for the 16-bit floats (one
    rounding at the end, as the other unary ops)."""
    dt = x._dtype
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(dt)}\'')
    return to_dtype(x, _dtype.float32) if dt in _HALF else x


def _gelu_kernel(self: Tensor, approximate: str = "none") -> Tensor:
    if not isinstance(self, Tensor):
        raise TypeError(f"gelu(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(self).__name__}")
    _check_approximate(approximate)
    x = _floating_operand(self, "GeluKernelImpl")
    if approximate == "none":  # x Phi(x), Phi the standard normal CDF
        y = x * 0.5 * (1 + _ew.erf(x * _SQRT1_2))
    else:
        y = 0.5 * x * (1 + _ew.tanh(_SQRT_2_OVER_PI * (x + _CUBIC * (x * x * x))))
    return to_dtype(y, self._dtype)


def _gelu_derivative(x: Tensor, approximate: str) -> Tensor:
    """d gelu / dx at ``x`` (written in differentiable ops: the double backward builds on it)."""
    if approximate == "none":  # Phi(x) + x phi(x)
        cdf = 0.5 * (1 + _ew.erf(x * _SQRT1_2))
        return cdf + x * (_INV_SQRT_2PI * _ew.exp(-0.5 * (x * x)))
    # 0.5 (1 + t) + 0.5 x (1 - t^2) u', t = tanh(u), u = k (x + c x^3), u' = k (1 + 3 c x^2)
    x2 = x * x
    t = _ew.tanh(_SQRT_2_OVER_PI * (x + _CUBIC * (x2 * x)))
    du = _SQRT_2_OVER_PI * (1 + 3 * _CUBIC * x2)
    return 0.5 * (1 + t) + 0.5 * x * ((1 - t * t) * du)


def _gelu_backward_kernel(grad_output: Tensor, self: Tensor,
                          approximate: str = "none") -> Tensor:
    _check_approximate(approximate)
    dt = result_type(grad_output, self)
    x = _floating_operand(to_dtype(self, dt), "GeluBackwardKernelImpl")
    g = to_dtype(grad_output, x._dtype)
    return to_dtype(g * _gelu_derivative(x, approximate), dt)


_GELU = _dispatch.define_aten({
    "gelu": ("gelu(Tensor self, *, str approximate='none') -> Tensor", _gelu_kernel),
    "gelu_backward": ("gelu_backward(Tensor grad_output, Tensor self, *, "
                      "str approximate='none') -> Tensor", _gelu_backward_kernel),
})
_aten_gelu = _GELU["gelu"]
_aten_gelu_backward = _GELU["gelu_backward"]


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit, ``x * Phi(x)`` (``Phi`` the standard normal CDF), or its
    tanh approximation ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    return _aten_gelu(input, approximate=approximate)


def gelu_backward(grad_output: Tensor, input: Tensor, approximate: str = "none") -> Tensor:
    """The gradient of :func:`gelu` at ``input`` for ``grad_output``."""
    return _aten_gelu_backward(grad_output, input, approximate=approximate)


# -- sigmoid_backward and tanh_backward -------------------------------------------------------

def _backward_kernel(name: str) -> Any:
    """The kernel of ``aten::<name>``: primitive ``name`` on the promoted, broadcast gradient
    and result (integers refused, as PyTorch's kernel does)."""
    rule = RULES["floating_only"]

    def kernel(grad_output: Tensor, output: Tensor) -> Tensor:
        for position, (arg, t) in enumerate((("grad_output", grad_output),
                                             ("output", output)), 1):
            if not isinstance(t, Tensor):
                raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be "
                                f"Tensor, not {type(t).__name__}")
        compute, out_dtype = rule(result_type(grad_output, output), name)
        return run(name, [grad_output, output], compute, out_dtype)

    kernel.__name__ = f"_{name}_kernel"
    return kernel


_BACKWARDS = _dispatch.define_aten({
    name: (f"{name}(Tensor grad_output, Tensor output) -> Tensor", _backward_kernel(name))
    for name in ("sigmoid_backward", "tanh_backward")
})
_plan.enable(*_BACKWARDS.values())  # one primitive, decided by the call signature
_aten_sigmoid_backward = _BACKWARDS["sigmoid_backward"]
_aten_tanh_backward = _BACKWARDS["tanh_backward"]


def sigmoid_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    """The gradient of ``sigmoid`` from its result ``output``: ``grad_output * output * (1 -
    output)`` (conjugated for complex)."""
    return _aten_sigmoid_backward(grad_output, output)


def tanh_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    """The gradient of ``tanh`` from its result ``output``: ``grad_output * (1 - output**2)``
    (conjugated for complex)."""
    return _aten_tanh_backward(grad_output, output)


METHODS: dict[str, Any] = {"relu": relu, "relu_": relu_}
