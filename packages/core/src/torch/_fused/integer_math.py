"""``gcd`` and ``lcm`` of integer tensors, elementwise with broadcasting: Euclid's algorithm
run on whole tensors until every remainder is zero (results are non-negative; gcd(0, 0) = 0
and lcm with a zero is 0, as in PyTorch). Floating inputs raise as PyTorch's CPU kernels do."""

from __future__ import annotations

from .._aten.convert import scalar_type_name
from .._aten.elementwise import where
from .._core import dtype as _dtype
from .._core.tensor import Tensor

__all__ = ["gcd", "lcm"]


def _check_integral(name: str, *tensors: Tensor) -> None:
    for t in tensors:
        if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == _dtype.bool_:
            raise NotImplementedError(
                f'"{name}_cpu" not implemented for \'{scalar_type_name(t.dtype)}\'')


def gcd(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The greatest common divisor of each pair of elements (non-negative)."""
    _check_integral("gcd", input, other)
    a, b = (input + other * 0).abs(), (other + input * 0).abs()  # broadcast, promoted
    # Euclid: (a, b) -> (b, a mod b) where b is not yet zero; a finishes as the gcd
    while bool((b != 0).any()):
        nonzero = b != 0
        safe = where(nonzero, b, 1)
        a, b = where(nonzero, b, a), where(nonzero, a % safe, 0)
    return a if out is None else out.copy_(a)


def lcm(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The least common multiple of each pair of elements (non-negative; 0 when either is)."""
    _check_integral("lcm", input, other)
    divisor = gcd(input, other)
    result = where(divisor == 0, 0, (input // where(divisor == 0, 1, divisor) * other).abs())
    return result if out is None else out.copy_(result)


METHODS = {"gcd": gcd, "lcm": lcm}
