"""How a MaskedTensor prints: its values with ``--`` in the masked-out places, nested as
PyTorch nests them (floats to four decimals in eight characters, integers and bools as Python
writes them)."""

from __future__ import annotations

from typing import Any

from torch import Tensor

_HIDDEN = "--"
_WIDTH = 8


def _cell(value: Any, present: bool, floating: bool, scalar: bool) -> str:
    if not present:
        return _HIDDEN if scalar else _HIDDEN.rjust(_WIDTH)
    return f"{value:{_WIDTH}.4f}" if floating else str(value)


def _nested(values: Any, present: Any, floating: bool, indent: int) -> str:
    pad = " " * indent
    if not values or not isinstance(values[0], list):  # the innermost dimension
        cells = ", ".join(_cell(v, p, floating, False) for v, p in zip(values, present))
        return f"{pad}[{cells}]"
    rows = ",\n".join(_nested(v, p, floating, indent + 2) for v, p in zip(values, present))
    return f"{pad}[\n{rows}\n{pad}]"


def masked_repr(data: Tensor, mask: Tensor) -> str:
    """``MaskedTensor(...)`` of ``data`` shown where ``mask`` is True."""
    floating = data.dtype.is_floating_point
    values, present = data.detach().cpu().tolist(), mask.cpu().tolist()
    if data.dim() == 0:
        return f"MaskedTensor({_cell(values, present, floating, True)}, {present})"
    if data.dim() > 1 and data.shape[0] == 0:
        return "MaskedTensor(\n  [\n  \n  ]\n)"
    return f"MaskedTensor(\n{_nested(values, present, floating, 2)}\n)"
