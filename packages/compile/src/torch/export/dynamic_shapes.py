"""``Dim``: how an input dimension may vary in an exported program, and the ranges kept."""

from __future__ import annotations

import dataclasses
import enum
import sys

__all__ = ["Dim", "ValueRanges", "UserError", "dims"]

_INT_MAX = sys.maxsize


class UserError(RuntimeError):
    """The export request contradicts the model (a dynamic dimension the model specialises)."""


@dataclasses.dataclass(frozen=True)
class ValueRanges:
    """The closed range ``[lower, upper]`` a symbol may take."""

    lower: int
    upper: int

    def __contains__(self, value: int) -> bool:
        return self.lower <= value <= self.upper

    def __str__(self) -> str:
        upper = "int_oo" if self.upper >= _INT_MAX else str(self.upper)
        return f"VR[{self.lower}, {upper}]"


class _DimHint(enum.Enum):
    AUTO = "auto"
    STATIC = "static"
    DYNAMIC = "dynamic"


class Dim:
    """A named dynamic dimension with an inclusive range, as in ``Dim("batch", max=64)``.

    ``Dim.AUTO`` and ``Dim.DYNAMIC`` make a dimension dynamic with the default range
    (``Dim.AUTO`` quietly keeps it static if the model specialises it); ``Dim.STATIC`` keeps it
    fixed to the example's size.
    """

    AUTO = _DimHint.AUTO
    STATIC = _DimHint.STATIC
    DYNAMIC = _DimHint.DYNAMIC

    def __init__(self, name: str, *, min: int | None = None, max: int | None = None) -> None:
        # PyTorch's default lower bound is 0 for a Dim, though sizes 0/1 are specialised; 2 here
        # keeps the graph valid for the sizes the tracer treats as general.
        lower = 0 if min is None else min
        upper = _INT_MAX if max is None else max
        if upper < lower:
            raise UserError(f"Cannot create Dim {name} with inconsistent min={min}, max={max}")
        self.__name__ = name
        self.min = lower
        self.max = upper

    def __repr__(self) -> str:
        if self.min == 0 and self.max >= _INT_MAX:
            return f"Dim('{self.__name__}')"
        return f"Dim('{self.__name__}', min={self.min}, max={self.max})"


def dims(*names: str, min: int | None = None, max: int | None = None) -> tuple[Dim, ...]:
    """One :class:`Dim` per name, all with the range ``[min, max]``
    (``batch, seq = dims("batch", "seq", max=64)``)."""
    return tuple(Dim(name, min=min, max=max) for name in names)
