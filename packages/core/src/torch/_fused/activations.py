"""``torch.relu``: an aten operator of its own (PyTorch has ``torch.relu``), so that its
forward is one native ``maximum`` with a broadcast zero and its derivative one comparison,
instead of a ``where`` composite (four times the memory traffic)."""

from __future__ import annotations

from typing import Any

from .._aten.arith import inplace_method
from .._aten.elementwise import run
from .._core import dispatch as _dispatch, dtype as _dtype, plan as _plan
from .._core.tensor import Tensor

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


relu_ = inplace_method(relu, "relu_")

METHODS: dict[str, Any] = {"relu": relu, "relu_": relu_}
