"""Reductions and scans rendered from their rows (OpenCL C and CUDA, as :mod:`.render`).

A reduction row (:data:`REDUCTIONS`) says how values accumulate: the accumulator's type, its
identity, and how an element or a second accumulator joins it. The kernel gives each output
element either one work-group (a strided loop per work item, then a tree in local memory) or
one work item (a serial loop, for many outputs of short rows). argmax/argmin carry an index
beside the value: the first index among equals wins, and NaN beats every number (the first
NaN, as PyTorch). Scans (:data:`SCANS`) give each line along the scanned dim one work item.

Accumulators: float16/bfloat16/float32 in float, float64 in double, integers in 64 bits
(wrapping, so an int8 sum wraps as PyTorch's does), any/all in int, complex values in their
own pair type (sum, prod and their scans only: :data:`COMPLEX_JOINS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import render, render_complex
from .render import Dialect, Rendered, axis


@dataclass(frozen=True)
class Reduction:
    """How a reduction accumulates: ``identity`` (an expression), ``join`` (``acc`` with the
    value ``x``, in the accumulator type), ``accumulator`` (``"compute"``: the input's compute
    type; ``"wide"``: double for float64, float for other floats, the wrapping 64-bit type for
    integers; ``"int"``)."""

    identity: str
    join: str
    accumulator: str = "wide"


# NaN propagates through amax/amin: a NaN x is taken, and a NaN acc loses no comparison so
# it stays (two compares and a select, which a CPU compiler vectorises)
_MAX = "(x > acc || x != x) ? x : acc"
_MIN = "(x < acc || x != x) ? x : acc"

REDUCTIONS: dict[str, Reduction] = {
    "sum": Reduction("0", "acc + x"),
    "prod": Reduction("1", "acc * x"),
    "amax": Reduction("{lowest}", _MAX, "compute"),
    "amin": Reduction("{highest}", _MIN, "compute"),
    # any/all read each element as its truth (0 or 1) first
    "any": Reduction("0", "acc | x", "int"),
    "all": Reduction("1", "acc & x", "int"),
}

# (value, index) pairs: whether (x, ix) wins over (acc, iacc)
ARG_BETTER = {
    "argmax": "x > acc",
    "argmin": "x < acc",
}

SCANS: dict[str, Reduction] = {
    "cumsum": Reduction("0", "acc + x"),
    "cumprod": Reduction("1", "acc * x"),
}
# the reductions and scans that run on complex values: the pair function their join calls
COMPLEX_JOINS = {"sum": "cadd", "prod": "cmul", "cumsum": "cadd", "cumprod": "cmul"}

# cummax/cummin: a later equal element, or any NaN, takes the index (NaN stays once seen)
CUM_EXTREME = {"cummax": ">=", "cummin": "<="}

_LIMITS = {  # (lowest, highest) of an integer compute type
    "u8": ("0", "255"), "i8": ("-128", "127"), "i16": ("-32768", "32767"),
    "i32": ("(-2147483647 - 1)", "2147483647"),
    "i64": ("(-9223372036854775807L - 1)", "9223372036854775807L"),
}


def accumulator_type(kind: str, dt: render.DType) -> str:
    """The portable type a reduction of ``kind`` accumulates ``dt`` in."""
    if kind == "compute":
        return dt.compute
    if kind == "int":
        return "i32"
    if dt.is_float or dt.compute in render.PART:
        return dt.compute
    return "u64"


def _identity(row: Reduction, dt: render.DType, acc: str, d: Dialect) -> str:
    if acc in render.PART:  # a complex sum or product: (0, 0) or (1, 0)
        zero = render.literal(0.0, render.PART[acc])
        return d.pair.format(T=d.types[acc], x=f"({d.types[render.PART[acc]]})({row.identity})",
                             y=zero)
    if dt.is_float:
        lowest, highest = "-INFINITY", "INFINITY"
    else:
        lowest, highest = _LIMITS[dt.compute]
        if d.name == "cuda":
            lowest, highest = lowest.replace("L", "LL"), highest.replace("L", "LL")
    value = row.identity.format(lowest=lowest, highest=highest)
    return f"({d.types[acc]})({value})"


def decode(d: Dialect, rank: int, index: str, prefix: str, operands: list[str],
           positions: list[str] | None = None) -> list[str]:
    """Statements adding ``index``'s position in the ``rank`` dims ``{prefix}size{k}`` to each
    operand's position (``at_<operand>``, or the matching name of ``positions``), through its
    strides ``{prefix}st_<operand>{k}``."""
    i64 = d.types["i64"]
    at = positions or [f"at_{p}" for p in operands]
    lines = [f"  {{ {i64} rest = {index};"]
    for k in reversed(range(rank)):
        lines.append(f"    {{ {i64} j = rest % {prefix}size{k}; rest /= {prefix}size{k};"
                     + "".join(f" {v} += j * {prefix}st_{p}{k};" for p, v in zip(operands, at))
                     + " }")
    lines.append("  }")
    return lines


def complex_join(op: str, dt: render.DType, row: Reduction) -> tuple[Reduction, str]:
    """``row`` with its join on pairs where ``dt`` is complex, and the functions it calls."""
    if dt.compute not in render.PART:
        return row, ""
    function = COMPLEX_JOINS[op]
    joined = Reduction(row.identity, f"plait_{function}_{dt.compute}(acc, x)", row.accumulator)
    return joined, function


def _renamed(join: str, acc: str, x: str) -> str:
    """A row's ``join`` over the variables ``acc`` and ``x`` (named so in the row)."""
    return re.sub(r"\bx\b", x, re.sub(r"\bacc\b", acc, join))


def render_reduction(d: Dialect, op: str, out_dtype: str, in_dtype: str, outer: int,
                     inner: int, group: int, split: bool = False, lanes: int = 1) -> Rendered:
    """``out[o] = reduce(a[o, r] for r)`` (or the index of the extreme, for argmax/argmin).

    ``outer`` kept dims (out and input strides) and ``inner`` reduced dims (input strides);
    ``group`` work items per output (a power of two, the local size), or 0 for one work item
    per output looping alone. ``split``: the first pass of a two-pass reduction, for few
    long rows: each row is cut into ``parts`` chunks of ``chunk`` elements, one work-group
    each, and group ``g`` writes its accumulator to ``out[g]`` (a contiguous scratch in the
    accumulator's dtype; the out strides are ignored) for a second pass to reduce.

    Arguments: out, a (buffers); n_out, r (elements reduced per output), off_out, off_a; the
    outer sizes, out strides, a strides; the inner sizes, a strides; with ``split``, parts
    and chunk.

    ``lanes`` > 1 (one reduced dim of unit stride, no index, a work item alone: ``group`` 0
    or 1): the
    item keeps ``lanes`` accumulators, element ``e + l`` joining accumulator ``l``, so a CPU
    device's compiler turns the loop into vector loads and vector joins (a work-group's tree
    does not vectorise there); they are joined at the end, then the leftover elements.
    """
    assert lanes == 1 or (inner == 1 and group <= 1 and op not in ARG_BETTER), "lanes"
    t = d.types
    i64 = t["i64"]
    out_t, in_t = render.DTYPES[out_dtype], render.DTYPES[in_dtype]
    is_arg = op in ARG_BETTER
    row = REDUCTIONS.get(op, Reduction("0", "", "compute"))
    row, pair_function = complex_join(op, in_t, row)
    acc_p = accumulator_type(row.accumulator, in_t)
    acc_t = t[acc_p]
    params = [d.pointer.format(T=t[out_t.storage]) + " out",
              d.pointer.format(T=t[in_t.storage]) + " a",
              f"{i64} n_out", f"{i64} r", f"{i64} off_out", f"{i64} off_a"]
    params += [f"{i64} osize{k}" for k in range(outer)]
    params += [f"{i64} ost_out{k}" for k in range(outer)]
    params += [f"{i64} ost_a{k}" for k in range(outer)]
    params += [f"{i64} isize{k}" for k in range(inner)]
    params += [f"{i64} ist_a{k}" for k in range(inner)]
    if split:
        params += [f"{i64} parts", f"{i64} chunk"]

    end = "r"
    tree = group > 1
    if group:
        body = [f"  const {i64} grp = {axis(d.group_id, 0)};",
                f"  const {i64} o = {'grp / parts' if split else 'grp'};",
                f"  const {i64} lid = {axis(d.local_id, 0)};",
                f"  {d.local_array.format(T=acc_t, name='sh', n=group)};" if tree else ""]
        if is_arg and tree:
            body.append(f"  {d.local_array.format(T=i64, name='shi', n=group)};")
        start, step = "lid", str(group)
        if split:
            body += [f"  const {i64} first = (grp % parts) * chunk;",
                     f"  const {i64} last = first + chunk < r ? first + chunk : r;"]
            start, end = "first + lid", "last"
    else:
        body = [f"  const {i64} o = {d.global_index};", "  if (o >= n_out) return;"]
        start, step = "0", "1"
    body += [f"  {i64} at_out = off_out, at_a = off_a;"]
    body += decode(d, outer, "o", "o", ["a"] if split else ["out", "a"])
    if split:
        body.append("  at_out = grp;")
    identity = "0" if is_arg else _identity(row, in_t, acc_p, d)
    body.append(f"  {acc_t} acc = {identity};")
    if is_arg:
        body.append(f"  {i64} iacc = -1;")
    if lanes > 1:
        accs = [f"acc{l}" for l in range(lanes)]
        body.append(f"  {acc_t} " + ", ".join(f"{v} = {identity}" for v in accs) + ";")
        body.append(f"  {i64} e = {start};")
        body.append(f"  for (; e + {lanes} <= {end}; e += {lanes}) {{")
        for l, v in enumerate(accs):
            value = render.load(d, in_t, "a", f"at_a + e + {l}")
            if row.accumulator == "int":
                value = f"({value}) != 0"
            body.append(f"    {{ const {acc_t} x = ({acc_t})({value}); "
                        f"{v} = {_renamed(row.join, v, 'x')}; }}")
        body.append("  }")
        body += [f"  acc = {_renamed(row.join, 'acc', v)};" for v in accs]
        start = "e"
    body.append(f"  for ({'' if lanes > 1 else f'{i64} e = {start}'}; e < {end}; e += {step}) {{")
    body.append(f"    {i64} at_e = at_a;")
    if inner == 1:  # e < isize0: no division to find the position (it dominated the loop)
        body.append("    at_e += e * ist_a0;")
    else:
        body += ["  " + line for line in decode(d, inner, "e", "i", ["a"], ["at_e"])]
    value = render.load(d, in_t, "a", "at_e")
    if row.accumulator == "int":
        value = f"({value}) != 0"
    body.append(f"    const {acc_t} x = ({acc_t})({value});")
    if is_arg:
        body.append(f"    if (iacc < 0 || {_arg_wins(op, 'x', 'e', 'acc', 'iacc')}) "
                    "{ acc = x; iacc = e; }")
    else:
        body.append(f"    acc = {row.join};")
    body.append("  }")
    if tree:
        body.append("  sh[lid] = acc;")
        if is_arg:
            body.append("  shi[lid] = iacc;")
        body.append(f"  {d.barrier};")
        body.append(f"  for ({i64} span = {group // 2}; span > 0; span >>= 1) {{")
        body.append("    if (lid < span) {")
        if is_arg:
            body.append(f"      const {acc_t} x = sh[lid + span]; "
                        f"const {i64} ix = shi[lid + span];")
            body.append(f"      const {acc_t} acc = sh[lid]; const {i64} iacc = shi[lid];")
            wins = _arg_wins(op, "x", "ix", "acc", "iacc")
            body.append(f"      if (ix >= 0 && (iacc < 0 || {wins})) "
                        "{ sh[lid] = x; shi[lid] = ix; }")
        else:
            body.append(f"      const {acc_t} x = sh[lid + span]; const {acc_t} acc = sh[lid];")
            body.append(f"      sh[lid] = {row.join};")
        body.append("    }")
        body.append(f"    {d.barrier};")
        body.append("  }")
        body.append("  if (lid != 0) return;")
        body.append("  acc = sh[0];")
        if is_arg:
            body.append("  iacc = shi[0];")
    if is_arg:
        body.append("  out[at_out] = iacc < 0 ? 0 : iacc;")
    else:
        acc_dt = render.DType(acc_p, acc_p, acc_p, 0, is_float=acc_p in ("f32", "f64"))
        body.append("  " + render.store(d, out_t, "out", "at_out",
                                        render.convert(d, acc_dt, out_t, "acc")))
    name = (f"plait_{op}_{out_dtype}_{in_dtype}_o{outer}_i{inner}_g{group}"
            f"{'_s' if split else ''}{f'_l{lanes}' if lanes > 1 else ''}")
    prelude = render.prelude_for(d, (out_dtype, in_dtype))
    if pair_function:
        prelude += render_complex.source(d, acc_p, [pair_function])
    source = (prelude + f"{d.kernel} {name}(\n    "
              + ",\n    ".join(params) + ") {\n" + "\n".join(body) + "\n}\n")
    signature = "bb" + "l" * (4 + 3 * outer + 2 * inner + (2 if split else 0))
    return Rendered(source, name, signature)


def _arg_wins(op: str, x: str, ix: str, acc: str, iacc: str) -> str:
    """Whether ``(x, ix)`` beats ``(acc, iacc)``: NaN first, then the extreme, then the lower
    index."""
    better = ARG_BETTER[op].replace("x", x).replace("acc", acc)
    return (f"(({x} != {x}) ? (({acc} == {acc}) || {ix} < {iacc}) : "
            f"(({acc} == {acc}) && ({better} || ({x} == {acc} && {ix} < {iacc}))))")


def render_scan(d: Dialect, op: str, dtype: str, outer: int) -> Rendered:
    """``out[o, j] = scan(a[o, 0..j])`` along one dim of length ``length``, one work item per
    line ``o``; cummax/cummin also write int64 indices.

    Arguments: out (, indices), a (buffers); n_lines, length, offsets of each; each operand's
    stride along the dim; the outer sizes and each operand's outer strides.
    """
    t = d.types
    i64 = t["i64"]
    dt = render.DTYPES[dtype]
    extreme = op in CUM_EXTREME
    operands = ["out", "idx", "a"] if extreme else ["out", "a"]
    params = [d.pointer.format(T=t[dt.storage]) + " out"]
    if extreme:
        params.append(d.pointer.format(T=i64) + " idx")
    params.append(d.pointer.format(T=t[dt.storage]) + " a")
    params += [f"{i64} n_lines", f"{i64} length"]
    params += [f"{i64} off_{p}" for p in operands]
    params += [f"{i64} dst_{p}" for p in operands]
    params += [f"{i64} osize{k}" for k in range(outer)]
    params += [f"{i64} ost_{p}{k}" for p in operands for k in range(outer)]
    body = [f"  const {i64} o = {d.global_index};", "  if (o >= n_lines) return;"]
    body += [f"  {i64} at_{p} = off_{p};" for p in operands]
    body += decode(d, outer, "o", "o", operands)
    if extreme:
        acc_p = dt.compute
        cmp = CUM_EXTREME[op]
        body.append(f"  {t[acc_p]} acc = 0; {i64} iacc = 0;")
        body.append(f"  for ({i64} j = 0; j < length; ++j) {{")
        body.append(f"    const {t[acc_p]} x = {render.load(d, dt, 'a', 'at_a + j * dst_a')};")
        body.append(f"    if (j == 0 || x != x || (acc == acc && x {cmp} acc)) "
                    "{ acc = x; iacc = j; }")
        body.append("    " + render.store(d, dt, "out", "at_out + j * dst_out", "acc"))
        body.append("    idx[at_idx + j * dst_idx] = iacc;")
        body.append("  }")
    else:
        row, pair_function = complex_join(op, dt, SCANS[op])
        acc_p = accumulator_type(row.accumulator, dt)
        acc_dt = render.DType(acc_p, acc_p, acc_p, 0, is_float=acc_p in ("f32", "f64"))
        body.append(f"  {t[acc_p]} acc = {_identity(row, dt, acc_p, d)};")
        body.append(f"  for ({i64} j = 0; j < length; ++j) {{")
        body.append(f"    const {t[acc_p]} x = ({t[acc_p]})"
                    f"({render.load(d, dt, 'a', 'at_a + j * dst_a')});")
        body.append(f"    acc = {row.join};")
        body.append("    " + render.store(d, dt, "out", "at_out + j * dst_out",
                                          render.convert(d, acc_dt, dt, "acc")))
        body.append("  }")
    name = f"plait_{op}_{dtype}_o{outer}"
    prelude = render.prelude_for(d, (dtype,))
    if not extreme and pair_function:
        prelude += render_complex.source(d, dt.compute, [pair_function])
    source = (prelude + f"{d.kernel} {name}(\n    "
              + ",\n    ".join(params) + ") {\n" + "\n".join(body) + "\n}\n")
    n = len(operands)
    signature = "b" * n + "l" * (2 + 2 * n + outer * (1 + n))
    return Rendered(source, name, signature)
