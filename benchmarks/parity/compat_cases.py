"""The compatibility table (``compat_table.txt``): public names real programs use, each with one
small call form.

One line per call form, grouped by area (``## area`` lines): ``[name | ]expression[ | random]``.
The name is the public name the row measures (``torch.cumsum``, ``Tensor.masked_fill``, ``nn.GRU``,
``F.relu``; ``nn`` and ``F`` stand for ``torch.nn`` and ``torch.nn.functional``); when it is
left out it is the dotted path the expression starts with, a leading input variable standing for
``Tensor`` (``x.cumsum(1)`` measures ``Tensor.cumsum``). ``random`` compares only the type,
dtype and shape of the result. The expression sees the fixed inputs and helpers of
``compat_collect.inputs``: float32 ``x``, ``y`` (3, 4), ``w`` (4, 5), ``v`` (4,), positive
``p``, ``u`` in (0, 1), int64 ``i`` and non-negative ``n`` (3, 4), bool ``m``, ``idx``,
``labels``, 0-d ``s``, complex ``z``, float64 ``sig`` (16,), ``a`` (3, 3) and its SPD ``spd``,
``img`` (2, 3, 6, 6), ``seq`` (5, 2, 4), a float64 ``leaf`` that requires grad, and
``init(module)`` (fixed parameters), ``within(context, fn)``, ``roundtrip(obj)`` (torch.save
then torch.load), ``opt_step(make)``, ``lrs(make)``, ``square_function()``, ``tmp`` (a folder).
Every row must run under PyTorch 2.13 (CPU build); a row where PyTorch itself raises is listed as
a broken row of the table, unless Plait raises alike (both raising one kind of error agrees:
``torch.cuda`` queries on a machine without CUDA).
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass

TABLE = pathlib.Path(__file__).resolve().parent / "compat_table.txt"
FLAGS = ("random",)
TENSOR_VARIABLES = {"x", "y", "w", "v", "p", "u", "i", "n", "m", "idx", "labels", "s", "z",
                    "sig", "a", "spd", "img", "seq", "leaf"}
ROOTS = ("torch", "nn", "F", "Tensor")
NAME = re.compile(r"[A-Za-z_][\w.]*")


@dataclass(frozen=True)
class Row:
    group: str
    name: str
    expr: str
    random: bool = False

    @property
    def id(self) -> str:
        return self.expr


def _derived_name(expr: str) -> str:
    """The public name an expression measures when its row does not say: its leading dotted
    path, a tensor variable standing for ``Tensor``."""
    match = NAME.match(expr)
    path = match.group(0) if match else ""
    head, _, rest = path.partition(".")
    if head in TENSOR_VARIABLES and rest:  # x.T.stride() measures Tensor.T
        return f"Tensor.{rest.split('.')[0]}"
    if head not in ROOTS or not rest:
        raise ValueError(f"compat row {expr!r} needs an explicit name ('name | expression')")
    return path


def _parse(group: str, line: str) -> Row:
    fields = line.split(" | ")
    random = fields[-1].strip() in FLAGS
    if random:
        fields = fields[:-1]
    first = fields[0].strip()
    if len(fields) > 1 and NAME.fullmatch(first) and first.split(".")[0] in ROOTS:
        return Row(group, first, " | ".join(fields[1:]).strip(), random)
    expr = " | ".join(fields).strip()
    return Row(group, _derived_name(expr), expr, random)


def rows(path: pathlib.Path = TABLE) -> list[Row]:
    """Every row of the table, in order; ids (the expressions) are unique."""
    out: list[Row] = []
    seen: set[str] = set()
    group = "?"
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("## "):
            group = line[3:]
            continue
        if not line or line.startswith("#"):
            continue
        row = _parse(group, line)
        if row.id in seen:
            raise ValueError(f"compat row {row.id!r} appears twice")
        seen.add(row.id)
        out.append(row)
    return out
