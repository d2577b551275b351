"""Printing tensors the way PyTorch does: ``tensor([[1., 2.], [3., 4.]], dtype=...)``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from . import _config, _dtype


@dataclass
class PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


options = PrintOptions()

_PROFILES = {
    "default": PrintOptions(),
    "short": PrintOptions(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": PrintOptions(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print (PyTorch's arguments, including the three profiles)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        base = _PROFILES[profile]
        options.precision, options.threshold = base.precision, base.threshold
        options.edgeitems, options.linewidth = base.edgeitems, base.linewidth
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(options, name, value)
    options.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    return dict(vars(options))


class _Formatter:
    """Chooses one format for every element so columns line up."""

    def __init__(self, values: list[Any], dt: _dtype.dtype) -> None:
        self.floating = dt.is_floating_point
        self.complex = dt.is_complex
        self.int_mode = True
        self.sci = False
        finite = [v for v in values if isinstance(v, float) and math.isfinite(v)]
        if self.floating:
            self.int_mode = all(v == math.floor(v) for v in finite)
            if finite:
                big, small = max(abs(v) for v in finite), min(abs(v) for v in finite)
                nonzero = [abs(v) for v in finite if v != 0]
                small = min(nonzero) if nonzero else small
                self.sci = (big > 1e8 or (nonzero and big / small > 1000.0 and not self.int_mode)
                            or (nonzero and small < 1e-4 and not self.int_mode)) if \
                    options.sci_mode is None else options.sci_mode
                if self.int_mode and big > 1e8:
                    self.sci = options.sci_mode is not False
        self.width = max((len(self.raw(v)) for v in values), default=1)

    def raw(self, v: Any) -> str:
        if self.complex:
            return _complex(v)
        if isinstance(v, bool):
            return "True" if v else "False"
        if not self.floating:
            return str(v)
        if not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        p = options.precision
        if self.sci:
            return f"{v:.{p}e}"
        if self.int_mode:
            return f"{v:.0f}."
        return f"{v:.{p}f}"

    def __call__(self, v: Any) -> str:
        return self.raw(v).rjust(self.width)


def _complex(v: complex) -> str:
    p = options.precision
    sign = "+" if v.imag >= 0 or math.isnan(v.imag) else "-"
    return f"{v.real:.{p}f}{sign}{abs(v.imag):.{p}f}j"


def _summarise(values: Any, shape: tuple[int, ...], summarize: bool) -> Any:
    """Nested lists with ``...`` (Ellipsis) where rows are elided."""
    if not shape:
        return values
    e = options.edgeitems
    if summarize and shape[0] > 2 * e:
        rows = list(values[:e]) + [Ellipsis] + list(values[-e:])
    else:
        rows = list(values)
    return [r if r is Ellipsis else _summarise(r, shape[1:], summarize) for r in rows]


def _flat(nested: Any) -> Any:
    if isinstance(nested, list):
        for x in nested:
            yield from _flat(x)
    elif nested is not Ellipsis:
        yield nested


def _render(nested: Any, fmt: _Formatter, indent: int, ndim: int) -> str:
    if ndim == 0:
        return fmt(nested)
    if ndim == 1:
        items = ["..." if v is Ellipsis else fmt(v) for v in nested]
        width = max(options.linewidth - indent, 1)
        lines, cur = [], ""
        for item in items:
            piece = item if not cur else cur + ", " + item
            if cur and len(piece) + 2 > width:
                lines.append(cur + ",")
                cur = item
            else:
                cur = piece
        lines.append(cur)
        return "[" + ("\n" + " " * (indent + 1)).join(lines) + "]"
    sep = "," + "\n" * (ndim - 1) + " " * (indent + 1)
    parts = ["..." if r is Ellipsis else _render(r, fmt, indent + 1, ndim - 1) for r in nested]
    return "[" + sep.join(parts) + "]"


def tensor_repr(t: Any) -> str:
    """``repr(tensor)`` in PyTorch's format."""
    prefix = "tensor("
    suffixes = []
    numel = t.numel()
    if t._device.type == "meta":
        body = "..."
        suffixes.append(f"size={tuple(t._shape)}")
    elif numel == 0:
        body = "[]"
        if t._shape != (0,):
            suffixes.append(f"size={tuple(t._shape)}")
    else:
        summarize = numel > options.threshold
        values = _summarise(t.tolist(), tuple(t._shape), summarize)
        fmt = _Formatter(list(_flat(values)), t._dtype)
        body = _render(values, fmt, len(prefix), t.ndim)
    if t._device.type != "cpu":
        suffixes.append(f"device='{t._device}'")
    default = (_config.get_default_dtype(), _dtype.int64, _dtype.bool_,
               _config.get_default_complex_dtype())
    if t._dtype not in default or (numel == 0 and t._dtype is not _config.get_default_dtype()):
        suffixes.append(f"dtype={t._dtype!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + body + "".join(", " + s for s in suffixes) + ")"
