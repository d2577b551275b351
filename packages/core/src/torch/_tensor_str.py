"""Printing tensors the way PyTorch does: ``tensor([[1., 2.], [3., 4.]], dtype=...)``."""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Iterator

from ._core import config as _config, dtype as _dtype, upcalls

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from typing import Any


class PrintOptions:
    """How tensors print (``torch.set_printoptions``); a plain class, since ``dataclasses``
    brings ``inspect`` into ``import torch``."""

    def __init__(self, precision: int = 4, threshold: float = 1000, edgeitems: int = 3,
                 linewidth: int = 80, sci_mode: bool | None = None) -> None:
        self.precision = precision
        self.threshold = threshold
        self.edgeitems = edgeitems
        self.linewidth = linewidth
        self.sci_mode = sci_mode

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in vars(self).items())
        return f"PrintOptions({fields})"


options = PrintOptions()
PRINT_OPTS = options  # PyTorch's name for the live options (libraries read it)

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
    """The current print options as a dict (``precision``, ``threshold``, ...)."""
    return dict(vars(options))


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """``with printoptions(precision=2):`` set print options for the block, then restore."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


class _Formatter:
    """One format for every element of a tensor (or of the real or imaginary parts of a complex
    one) so that columns line up: PyTorch's rules for integer mode, scientific notation and
    width. Only nonzero finite values decide (``nan``/``inf`` print as they are, unpadded)."""

    def __init__(self, values: list[Any], floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            self.max_width = max((len(str(v)) for v in values), default=1)
            return
        nonzero = [v for v in values if math.isfinite(v) and v != 0]
        if not nonzero:
            return  # all zero or non-finite: PyTorch ignores sci_mode here too
        magnitudes = [abs(v) for v in nonzero]
        lo, hi = min(magnitudes), max(magnitudes)
        self.int_mode = all(v == math.ceil(v) for v in nonzero)
        # integers only switch to scientific notation for a wide range or huge values
        self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or (not self.int_mode and lo < 1.0e-4)
        p = options.precision
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in nonzero)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in nonzero)  # + 1 for the "."
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in nonzero)
        if options.sci_mode is not None:
            self.sci_mode = options.sci_mode

    def format(self, v: Any) -> str:
        if not self.floating:
            text = str(v)
        elif self.sci_mode:
            text = f"{v:.{options.precision}e}"
        elif self.int_mode:
            text = f"{v:.0f}" + ("." if math.isfinite(v) else "")
        else:
            text = f"{v:.{options.precision}f}"
        return text.rjust(self.max_width)


class _ComplexFormatter:
    """Real and imaginary parts formatted separately, as PyTorch does: ``1.+2.j``."""

    def __init__(self, values: list[complex]) -> None:
        self.real = _Formatter([v.real for v in values], True)
        self.imag = _Formatter([v.imag for v in values], True)
        self.max_width = self.real.max_width + 1 + self.imag.max_width

    def format(self, v: complex) -> str:
        real = self.real.format(v.real)
        imag = (self.imag.format(v.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _summarise(values: Any, shape: tuple[int, ...], summarize: bool) -> Any:
    """Nested lists with ``...`` (Ellipsis) where rows are elided."""
    if not shape:
        return values
    e = options.edgeitems
    if summarize and shape[0] > 2 * e:
        rows = list(values[:e]) + [Ellipsis] + list(values[len(values) - e :])
    else:
        rows = list(values)
    return [r if r is Ellipsis else _summarise(r, shape[1:], summarize) for r in rows]


def _flat(nested: Any) -> Any:
    if isinstance(nested, list):
        for x in nested:
            yield from _flat(x)
    elif nested is not Ellipsis:
        yield nested


def _render(nested: Any, fmt: Any, indent: int, ndim: int) -> str:
    if ndim == 0:
        return fmt.format(nested)
    if ndim == 1:
        # a fixed number of elements per line, the elision marker counting as one
        per_line = max(1, (options.linewidth - indent) // (fmt.max_width + 2))
        marker = " ..." if options.edgeitems else "..."
        items = [marker if v is Ellipsis else fmt.format(v) for v in nested]
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    sep = "," + "\n" * (ndim - 1) + " " * (indent + 1)
    parts = ["..." if r is Ellipsis else _render(r, fmt, indent + 1, ndim - 1) for r in nested]
    return "[" + sep.join(parts) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ``, suffix`` items, starting a new line when one would pass the line width."""
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > options.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _tensor_str(t: Any, indent: int) -> str:
    summarize = t.numel() > options.threshold
    values = _summarise(t.tolist(), tuple(t._shape), summarize)
    flat = list(_flat(values))
    if t._dtype.is_complex:
        fmt: Any = _ComplexFormatter(flat)
    else:
        fmt = _Formatter(flat, t._dtype.is_floating_point)
    return _render(values, fmt, indent, t.ndim)


def _class_shown(cls: type) -> str:
    nn = sys.modules.get("torch.nn")  # a Parameter can only exist once torch.nn is imported
    plain = cls.__name__ == "Tensor" and cls.__module__ == "torch"
    if plain or (nn is not None and cls is nn.Parameter):
        return "tensor"
    return cls.__name__


def _part_repr(t: Any, indent: int) -> str:
    """A sparse tensor's indices or values as its repr shows them: ``tensor(...)`` without
    a dtype (the sparse tensor names it), continuation lines indented by ``indent``."""
    if t.numel() == 0:
        return f"tensor([], size={tuple(t._shape)})"
    return "tensor(" + _tensor_str(t, indent + len("tensor(")) + ")"


def _sparse_repr(t: Any) -> str:
    """``repr`` of a sparse COO tensor, PyTorch's ``tensor(indices=..., values=..., size=...,
    nnz=..., layout=torch.sparse_coo)``."""
    indent = len("tensor(")
    first = "indices="
    body = (f"tensor({first}{_part_repr(t._sparse_indices, indent + len(first))},\n"
            f"{' ' * indent}values={_part_repr(t._sparse_values, indent + len('values='))}")
    suffixes = [f"size={tuple(t._shape)}", f"nnz={t._nnz()}"]
    if t.device.type != "cpu":
        suffixes.insert(0, f"device='{t.device}'")
    if t._dtype is not _config.get_default_dtype():
        suffixes.append(f"dtype={t._dtype!r}")
    suffixes.append("layout=torch.sparse_coo")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(body + ",\n" + " " * indent + suffixes[0], suffixes[1:], indent)


def tensor_repr(t: Any) -> str:
    """``repr(tensor)`` in PyTorch's format (a subclass other than ``nn.Parameter`` shows its
    class name in place of ``tensor``)."""
    if t.is_sparse:
        return _sparse_repr(t)
    prefix = f"{_class_shown(type(t))}("
    indent = len(prefix)
    suffixes = []
    if t._device.type != "cpu":
        suffixes.append(f"device='{t._device}'")
    default_dtype = _config.get_default_dtype()
    if t._device.type == "meta":
        body = "..."
        suffixes.append(f"size={tuple(t._shape)}")
        if t._dtype is not default_dtype:
            suffixes.append(f"dtype={t._dtype!r}")
    elif t.numel() == 0:
        body = "[]"
        if t.ndim != 1:
            suffixes.append(f"size={tuple(t._shape)}")
        if t._dtype is not default_dtype:  # no values to tell the dtype by
            suffixes.append(f"dtype={t._dtype!r}")
    else:
        if not options.edgeitems:
            suffixes.append(f"size={tuple(t._shape)}")
        shown_by_values = (default_dtype, _dtype.int64, _dtype.bool_,
                           _config.get_default_complex_dtype())
        if t._dtype not in shown_by_values:
            suffixes.append(f"dtype={t._dtype!r}")
        body = _tensor_str(t, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)


upcalls.install(tensor_repr=tensor_repr)
