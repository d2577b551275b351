"""The pointwise activations that are ``aten::`` operators of their own in PyTorch, each with
its ``*_backward`` operator: ``leaky_relu``, ``elu`` (which ``selu`` and ``celu`` reach),
``celu``, ``hardtanh`` (``relu6``), ``softplus``, ``hardsigmoid``, ``hardswish``, ``mish``,
``log_sigmoid_forward``, ``softshrink``, ``hardshrink``, ``threshold`` and ``glu``.

Libraries written for PyTorch (flop counters, memory trackers, dispatch modes, exporters) key
on these names, so ``F.leaky_relu`` must reach ``aten::leaky_relu`` and its backward
``aten::leaky_relu_backward``, not a chain of ``where``/``mul``. Each operator's kernel here is
a composite over elementwise ops (no native fused kernel yet), so every backend serves it and
the meta device gets its shape and dtype from the ops it is made of; a backend may register a
fused kernel for any of them. The derivatives are formulas
(``torch.autograd._formulas.activations``): the forward's calls its ``*_backward`` operator, and
the backward operator's gives the second derivative.

The kernels follow PyTorch's CPU kernels at the kinks (which side a point ``x == threshold``
belongs to) and let NaN through, as they do. Integer inputs are refused with PyTorch's message.
Where a forward can be written in arithmetic primitives alone (``maximum``/``minimum`` with a
number, ``mul``, ``add``, ``expm1``: no comparison, whose bool output ends a plan's chain) it
is, so a repeated call replays the chain of native primitives with no Python in between
(``torch._core.plan``), as fast as the ``where`` composites were or faster.
"""

from __future__ import annotations

from typing import Any

from .._core import dispatch as _dispatch, dtype as _dtype, plan as _plan
from .._core.tensor import Tensor, wrap_dim
from . import elementwise as _ew
from .convert import scalar_type_name
from .elementwise import run
from .shape import cat as _cat

__all__: list[str] = []  # torch.celu & co. come from plait-nn's torch namespace

# SELU's fixed-point constants (Klambauer et al., 2017): selu is elu with these
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _floating(name: str, kernel_name: str, **tensors: Any) -> None:
    """Refuse non-tensors and non-floating tensors as PyTorch's kernels do."""
    for position, (arg, t) in enumerate(tensors.items(), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                            f"not {type(t).__name__}")
        if not t._dtype.is_floating_point:
            raise NotImplementedError(f'"{kernel_name}" not implemented for '
                                      f"'{scalar_type_name(t._dtype)}'")


def _zero_where(mask: Tensor, values: Tensor) -> Tensor:
    """``values`` with zeros where ``mask`` holds (a zero of ``values``' dtype)."""
    return _ew.where(mask, 0.0, values)


# -- forwards ------------------------------------------------------------------------------


def _positive_part(self: Tensor) -> Tensor:
    # maximum gives its second operand on ties: -0.0 stays -0.0, NaN stays NaN
    return run("maximum", [0, self], self._dtype, self._dtype)


def _negative_part(self: Tensor) -> Tensor:
    return run("minimum", [0, self], self._dtype, self._dtype)


def _leaky_relu(self: Tensor, negative_slope: Any = 0.01) -> Tensor:
    _floating("leaky_relu", "leaky_relu_cpu", self=self)
    dt = self._dtype
    if not negative_slope > 0:  # 0, negative or NaN: PyTorch's signed zeros and inf * 0
        return _ew.where(self > 0, self, self * negative_slope)
    # max(x, slope x) for a slope up to 1, min(x, slope x) above: two passes over memory;
    # ties (x == 0) give the second operand, x itself
    pick = "maximum" if negative_slope <= 1 else "minimum"
    return run(pick, [run("mul", [self, negative_slope], dt, dt), self], dt, dt)


def _elu(self: Tensor, alpha: Any = 1, scale: Any = 1, input_scale: Any = 1) -> Tensor:
    _floating("elu", "elu_cpu", self=self)
    dt = self._dtype
    # scale max(x, 0) + alpha scale expm1(input_scale min(x, 0)): one term is always 0, and
    # the exponent is never positive (no overflow into inf on the unused side)
    negative = run("expm1", [run("mul", [_negative_part(self), input_scale], dt, dt)], dt, dt)
    negative = run("mul", [negative, alpha * scale], dt, dt)
    positive = run("mul", [_positive_part(self), scale], dt, dt)
    return run("add", [positive, negative], dt, dt)


def _celu(self: Tensor, alpha: Any = 1.0) -> Tensor:
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _elu(self, alpha, 1, 1.0 / alpha)


def _as_elements(self: Tensor, *scalars: Any) -> tuple[Any, ...]:
    """``scalars`` as an integer tensor's kernel reads them (converted to its element type,
    truncating), so the result keeps the tensor's dtype; unchanged for a floating tensor."""
    if self._dtype.is_floating_point:
        return scalars
    return tuple(int(v) for v in scalars)


def _hardtanh(self: Tensor, min_val: Any = -1, max_val: Any = 1) -> Tensor:
    if not isinstance(self, Tensor):
        raise TypeError(f"hardtanh(): argument 'self' (position 1) must be Tensor, not "
                        f"{type(self).__name__}")
    dt = self._dtype
    if dt.is_complex or dt is _dtype.bool_:
        raise RuntimeError(f"{'Bool' if dt is _dtype.bool_ else 'Complex'} inputs not "
                           "supported for hardtanh")
    if not dt.is_signed and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    low, high = _as_elements(self, min_val, max_val)
    # maximum/minimum give their second operand on ties and propagate NaN
    return run("minimum", [high, run("maximum", [low, self], dt, dt)], dt, dt)


def _softplus(self: Tensor, beta: Any = 1, threshold: Any = 20) -> Tensor:
    _floating("softplus", "softplus_cpu", self=self)
    z = self * beta
    # log(1 + exp(z)) = max(z, 0) + log1p(exp(-|z|)): no exp() overflows
    soft = (_ew.clamp(z, min=0.0) + _ew.log1p(_ew.exp(-_ew.abs(z)))) / beta
    return _ew.where(z > threshold, self, soft)


def _relu6_of_x_plus_3(self: Tensor) -> Tensor:
    dt = self._dtype
    shifted = run("add", [self, 3], dt, dt)
    return run("minimum", [6, run("maximum", [0, shifted], dt, dt)], dt, dt)


def _hardsigmoid(self: Tensor) -> Tensor:
    _floating("hardsigmoid", "hardsigmoid_cpu", self=self)
    return run("div", [_relu6_of_x_plus_3(self), 6], self._dtype, self._dtype)


def _hardswish(self: Tensor) -> Tensor:
    _floating("hardswish", "hardswish_cpu", self=self)
    dt = self._dtype
    return run("div", [run("mul", [self, _relu6_of_x_plus_3(self)], dt, dt), 6], dt, dt)


def _mish(self: Tensor) -> Tensor:
    _floating("mish", "mish_cpu", self=self)
    return self * _ew.tanh(_softplus(self))


def _log_sigmoid_forward(self: Tensor) -> tuple[Tensor, Tensor]:
    _floating("log_sigmoid_forward", "log_sigmoid_cpu", self=self)
    # PyTorch's CPU buffer: exp(-|x|); output min(x, 0) - log1p(buffer)
    buffer = _ew.exp(-_ew.abs(self))
    return _ew.clamp(self, max=0.0) - _ew.log1p(buffer), buffer


def _softshrink(self: Tensor, lambd: Any = 0.5) -> Tensor:
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    _floating("softshrink", "softshrink_cpu", self=self)
    dt = self._dtype
    # x - clamp(x, -lambd, lambd): NaN stays NaN
    clamped = run("minimum", [lambd, run("maximum", [-lambd, self], dt, dt)], dt, dt)
    return run("sub", [self, clamped], dt, dt)


def _hardshrink(self: Tensor, lambd: Any = 0.5) -> Tensor:
    _floating("hardshrink", "hardshrink_cpu", self=self)
    return _zero_where((self >= -lambd) & (self <= lambd), self)


def _threshold(self: Tensor, threshold: Any, value: Any) -> Tensor:
    if not isinstance(self, Tensor):
        raise TypeError(f"threshold(): argument 'self' (position 1) must be Tensor, not "
                        f"{type(self).__name__}")
    threshold, value = _as_elements(self, threshold, value)
    # `<=` (not `>`) keeps NaN, as PyTorch does
    return _ew.where(self <= threshold, value, self)


def glu_halves(self: Tensor, dim: int) -> tuple[Tensor, Tensor, int]:
    """The two halves ``a, b`` of ``self`` along ``dim`` (wrapped), checked as PyTorch does."""
    if self.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, self.ndim)
    size = self._shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    return self.narrow(d, 0, size // 2), self.narrow(d, size // 2, size // 2), d


def _glu(self: Tensor, dim: int = -1) -> Tensor:
    _floating("glu", "glu_cpu", self=self)
    a, b, _d = glu_halves(self, dim)
    return a * _ew.sigmoid(b)


# -- backwards -----------------------------------------------------------------------------


def _leaky_relu_backward(grad_output: Tensor, self: Tensor, negative_slope: Any,
                         self_is_result: bool) -> Tensor:
    _floating("leaky_relu_backward", "leaky_relu_backward_cpu", grad_output=grad_output,
              self=self)
    return _ew.where(self > 0, grad_output, grad_output * negative_slope)


def _elu_backward(grad_output: Tensor, alpha: Any, scale: Any, input_scale: Any,
                  is_result: bool, self_or_result: Tensor) -> Tensor:
    _floating("elu_backward", "elu_backward_cpu", grad_output=grad_output,
              self_or_result=self_or_result)
    x = self_or_result
    if is_result:  # from y = alpha scale (exp(x input_scale) - 1): dy/dx = input_scale (y + a s)
        negative = grad_output * (input_scale * (x + alpha * scale))
    else:
        negative = grad_output * (_ew.exp(_ew.clamp(x, max=0.0) * input_scale)
                                  * (input_scale * alpha * scale))
    return _ew.where(x <= 0, negative, grad_output * scale)


def _hardtanh_backward(grad_output: Tensor, self: Tensor, min_val: Any, max_val: Any) -> Tensor:
    _floating("hardtanh_backward", "hardtanh_backward_cpu", grad_output=grad_output, self=self)
    return _zero_where((self <= min_val) | (self >= max_val), grad_output)


def _softplus_backward(grad_output: Tensor, self: Tensor, beta: Any, threshold: Any) -> Tensor:
    _floating("softplus_backward", "softplus_backward_cpu", grad_output=grad_output, self=self)
    z = self * beta
    return _ew.where(z > threshold, grad_output, grad_output * _ew.sigmoid(z))


def _hardsigmoid_backward(grad_output: Tensor, self: Tensor) -> Tensor:
    _floating("hardsigmoid_backward", "hardsigmoid_backward_cpu", grad_output=grad_output,
              self=self)
    return _ew.where((self > -3.0) & (self < 3.0), grad_output / 6.0, 0.0)


def _hardswish_backward(grad_output: Tensor, self: Tensor) -> Tensor:
    _floating("hardswish_backward", "hardswish_backward_cpu", grad_output=grad_output,
              self=self)
    # PyTorch's sides: 0 at x = -3, 1 at x = 3
    inner = _ew.where(self < 3.0, grad_output * (self / 3.0 + 0.5), grad_output)
    return _zero_where(self <= -3.0, inner)


def _mish_backward(grad_output: Tensor, self: Tensor) -> Tensor:
    _floating("mish_backward", "mish_backward_cpu", grad_output=grad_output, self=self)
    t = _ew.tanh(_softplus(self))
    return grad_output * (t + self * _ew.sigmoid(self) * (1 - t * t))


def _log_sigmoid_backward(grad_output: Tensor, self: Tensor, buffer: Tensor) -> Tensor:
    _floating("log_sigmoid_backward", "log_sigmoid_backward_cpu", grad_output=grad_output,
              self=self)
    # d/dx log(sigmoid(x)) = sigmoid(-x); the buffer is accepted (its values are only a cache)
    return grad_output * _ew.sigmoid(-self)


def _shrink_backward(name: str) -> Any:
    def kernel(grad_output: Tensor, self: Tensor, lambd: Any) -> Tensor:
        _floating(name, f"{name}_cpu", grad_output=grad_output, self=self)
        return _zero_where((self >= -lambd) & (self <= lambd), grad_output)

    kernel.__name__ = f"_{name}"
    return kernel


def _glu_backward(grad_output: Tensor, self: Tensor, dim: int) -> Tensor:
    _floating("glu_backward", "glu_backward_cpu", grad_output=grad_output, self=self)
    a, b, d = glu_halves(self, dim)
    s = _ew.sigmoid(b)
    # d/da a s(b) = s(b); d/db = a s(b) (1 - s(b))
    return _cat([grad_output * s, grad_output * a * s * (1 - s)], d)


def _threshold_backward(grad_output: Tensor, self: Tensor, threshold: Any) -> Tensor:
    return _zero_where(self <= threshold, grad_output)


# -- the operators -------------------------------------------------------------------------

_TABLE: dict[str, tuple[str, Any]] = {
    "leaky_relu": ("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", _leaky_relu),
    "leaky_relu_backward": ("leaky_relu_backward(Tensor grad_output, Tensor self, "
                            "Scalar negative_slope, bool self_is_result) -> Tensor",
                            _leaky_relu_backward),
    "elu": ("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
            _elu),
    "elu_backward": ("elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, "
                     "Scalar input_scale, bool is_result, Tensor self_or_result) -> Tensor",
                     _elu_backward),
    "celu": ("celu(Tensor self, Scalar alpha=1.) -> Tensor", _celu),
    "hardtanh": ("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
                 _hardtanh),
    "hardtanh_backward": ("hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, "
                          "Scalar max_val) -> Tensor", _hardtanh_backward),
    "softplus": ("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
                 _softplus),
    "softplus_backward": ("softplus_backward(Tensor grad_output, Tensor self, Scalar beta, "
                          "Scalar threshold) -> Tensor", _softplus_backward),
    "hardsigmoid": ("hardsigmoid(Tensor self) -> Tensor", _hardsigmoid),
    "hardsigmoid_backward": ("hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor",
                             _hardsigmoid_backward),
    "hardswish": ("hardswish(Tensor self) -> Tensor", _hardswish),
    "hardswish_backward": ("hardswish_backward(Tensor grad_output, Tensor self) -> Tensor",
                           _hardswish_backward),
    "mish": ("mish(Tensor self) -> Tensor", _mish),
    "mish_backward": ("mish_backward(Tensor grad_output, Tensor self) -> Tensor",
                      _mish_backward),
    "log_sigmoid_forward": ("log_sigmoid_forward(Tensor self) -> (Tensor output, "
                            "Tensor buffer)", _log_sigmoid_forward),
    "log_sigmoid_backward": ("log_sigmoid_backward(Tensor grad_output, Tensor self, "
                             "Tensor buffer) -> Tensor", _log_sigmoid_backward),
    "softshrink": ("softshrink(Tensor self, Scalar lambd=0.5) -> Tensor", _softshrink),
    "softshrink_backward": ("softshrink_backward(Tensor grad_output, Tensor self, "
                            "Scalar lambd) -> Tensor", _shrink_backward("softshrink_backward")),
    "hardshrink": ("hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor", _hardshrink),
    "hardshrink_backward": ("hardshrink_backward(Tensor grad_out, Tensor self, "
                            "Scalar lambd) -> Tensor", _shrink_backward("hardshrink_backward")),
    "glu": ("glu(Tensor self, int dim=-1) -> Tensor", _glu),
    "glu_backward": ("glu_backward(Tensor grad_output, Tensor self, int dim) -> Tensor",
                     _glu_backward),
    "threshold": ("threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
                  _threshold),
    "threshold_backward": ("threshold_backward(Tensor grad_output, Tensor self, "
                           "Scalar threshold) -> Tensor", _threshold_backward),
}

ATEN: dict[str, _dispatch.Operator] = _dispatch.define_aten(_TABLE)
# every kernel is a function of the call signature (it reads no tensor values): plans may
# replay them, as they do the elementwise ops they are made of
_plan.enable(*(ATEN[name] for name in _TABLE if name != "log_sigmoid_forward"))
