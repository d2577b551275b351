"""Operators that sample: ``aten::rrelu_with_noise`` (the randomized leaky ReLU, its slopes
written into a ``noise`` tensor in place) with ``aten::rrelu_with_noise_backward``.

``F.rrelu`` reaches ``aten::rrelu_with_noise`` in PyTorch, in training and in evaluation (what a
dispatch mode, a flop counter or an exporter keys on). The kernels are composites over
elementwise and random ops, so every backend serves them; the derivatives are formulas
(``torch.autograd._formulas.losses``).
"""

from __future__ import annotations

from typing import Any

from .._core import dispatch as _dispatch
from .._core.tensor import Tensor
from . import elementwise as _ew, factories as _factories

__all__: list[str] = []  # F.rrelu is plait-nn's

# below this spread of [lower, upper] PyTorch's backward treats the slope as the constant mean
_SLOPE_SPREAD_FLOOR = 1e-6


def _check_bounds(lower: Any, upper: Any) -> None:
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def _rrelu_with_noise(self: Tensor, noise: Tensor, lower: Any = 0.125,
                      upper: Any = 1.0 / 3, training: bool = False,
                      generator: Any = None) -> Tensor:
    _check_bounds(lower, upper)
    if not training:  # the leaky ReLU with the mean slope; noise is left alone
        return _ew.where(self > 0, self, self * ((lower + upper) / 2))
    # one draw per element (the random stream plain F.rrelu always used), kept where x <= 0
    draws = _factories.empty_like(self).uniform_(lower, upper, generator=generator)
    slopes = _ew.where(self > 0, 1, draws).to(self.dtype)
    noise.copy_(slopes)  # PyTorch's kernel writes each element's slope into noise
    return self * slopes


def _rrelu_with_noise_backward(grad_output: Tensor, self: Tensor, noise: Tensor, lower: Any,
                               upper: Any, training: bool, self_is_result: bool) -> Tensor:
    if training and upper - lower > _SLOPE_SPREAD_FLOOR:
        return grad_output * noise
    # the leaky ReLU's backward with the mean slope
    return _ew.where(self > 0, grad_output, grad_output * ((lower + upper) / 2))


ATEN: dict[str, _dispatch.Operator] = _dispatch.define_aten({
    "rrelu_with_noise": ("rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125, "
                         "Scalar upper=0.33333333333333331, bool training=False, "
                         "Generator? generator=None) -> Tensor", _rrelu_with_noise),
    "rrelu_with_noise_backward": ("rrelu_with_noise_backward(Tensor grad_output, Tensor self, "
                                  "Tensor noise, Scalar lower, Scalar upper, bool training, "
                                  "bool self_is_result) -> Tensor", _rrelu_with_noise_backward),
})
