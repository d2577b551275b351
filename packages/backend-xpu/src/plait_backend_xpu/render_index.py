"""Indexing, search and random kernels rendered for a dialect (OpenCL C, CUDA), as
:mod:`.render`: ``gather``, ``scatter_``, ``searchsorted`` and ``random_bits_``.

- gather moves raw words (every dtype, complex included): one work item per output element.
- scatter_ works line by line along ``dim`` (the other coordinates fixed): the targets a
  line writes belong to that line alone, so no atomics are needed. Without a reduction one
  work item runs a line in index order (a repeated target keeps the last value); with one,
  each line's indices are sorted stably first and one work item per run of equal indices
  accumulates its elements in index order and stores once (rounded once, as the reference).
- searchsorted bisects per value with PyTorch's comparisons.
- random_bits_ is Philox4x32-10, one counter (four words) per work item: the same words as
  the CPU's for the same (seed, offset).
"""

from __future__ import annotations

from . import render, render_complex
from .render import Dialect, Rendered
from .render_reduce import decode


def _params(d: Dialect, buffers: list[tuple[str, str]], scalars: list[str]) -> list[str]:
    i64 = d.types["i64"]
    return ([d.pointer.format(T=d.types[t]) + f" {name}" for name, t in buffers]
            + [f"{i64} {s}" for s in scalars])


def _source(d: Dialect, name: str, params: list[str], body: list[str], dtypes: tuple[str, ...],
            raw: bool = False, helpers: str = "") -> str:
    return (render.prelude_for(d, dtypes, raw) + helpers + f"{d.kernel} {name}(\n    "
            + ",\n    ".join(params) + ") {\n" + "\n".join(body) + "\n}\n")


def render_gather(d: Dialect, dtype: str, rank: int) -> Rendered:
    """``out[p] = a[p with p[dim] = index[p]]`` over the index's ``rank`` dims.

    Arguments: out, a, index; n, off_out, off_a, off_index, a's stride along dim; the sizes;
    the strides of out, index and a (a's along dim 0: the index value replaces it).
    """
    i64 = d.types["i64"]
    raw = render.DTYPES[dtype].raw
    operands = ["out", "index", "a"]
    params = _params(d, [("out", raw), ("a", raw), ("index", "i64")],
                     ["n", "off_out", "off_a", "off_index", "a_dim_stride"]
                     + [f"osize{k}" for k in range(rank)]
                     + [f"ost_{p}{k}" for p in operands for k in range(rank)])
    body = [f"  const {i64} i = {d.global_index};", "  if (i >= n) return;",
            f"  {i64} at_out = off_out, at_index = off_index, at_a = off_a;"]
    body += decode(d, rank, "i", "o", operands)
    body.append("  out[at_out] = a[at_a + index[at_index] * a_dim_stride];")
    name = f"plait_gather_{dtype}_r{rank}"
    return Rendered(_source(d, name, params, body, (dtype,), raw=True), name,
                    "bbb" + "l" * (5 + rank * 4))


# reduce -> how the accumulator takes element x (the first element aimed at a target starts
# it, so no identity is needed); NaN propagates through amax/amin
SCATTER_REDUCE = {
    "sum": "acc + x",
    "mean": "acc + x",
    "prod": "acc * x",
    "amax": "(acc != acc) ? acc : ((x != x) ? x : (x > acc ? x : acc))",
    "amin": "(acc != acc) ? acc : ((x != x) ? x : (x < acc ? x : acc))",
}
# bool sums are logical or, products logical and
_BOOL_REDUCE = {"sum": "acc | x", "mean": "acc | x", "prod": "acc & x"}
# complex values: the pair function of each reduction they have (amax/amin have no order)
COMPLEX_SCATTER_REDUCE = {"sum": "cadd", "mean": "cadd", "prod": "cmul"}


def render_scatter(d: Dialect, dtype: str, rank: int) -> Rendered:
    """``scatter_`` with ``reduce="none"`` along one dim: one work item per line of the index
    (its other dims), in index order, so a repeated target keeps the last value.

    Arguments: out, index, src; lines, length (the index's size along dim), off_out,
    off_index, off_src; the dim strides of out, index, src; the line sizes; each operand's
    line strides.
    """
    t = d.types
    i64 = t["i64"]
    dt = render.DTYPES[dtype]
    operands = ["out", "index", "src"]
    params = _params(d, [("out", dt.raw), ("index", "i64"), ("src", dt.raw)],
                     ["lines", "length", "off_out", "off_index", "off_src", "dst_out",
                      "dst_index", "dst_src"]
                     + [f"osize{k}" for k in range(rank)]
                     + [f"ost_{p}{k}" for p in operands for k in range(rank)])
    body = [f"  const {i64} o = {d.global_index};", "  if (o >= lines) return;",
            f"  {i64} at_out = off_out, at_index = off_index, at_src = off_src;"]
    body += decode(d, rank, "o", "o", operands)
    body += [f"  for ({i64} j = 0; j < length; ++j)",
             "    out[at_out + index[at_index + j * dst_index] * dst_out] = "
             "src[at_src + j * dst_src];"]
    name = f"plait_scatter_none_{dtype}_r{rank}"
    return Rendered(_source(d, name, params, body, (dtype,), raw=True), name,
                    "bbb" + "l" * (8 + rank * 4))


def render_scatter_reduce(d: Dialect, dtype: str, rank: int, reduce: str, include_self: bool
                          ) -> Rendered:
    """``scatter_`` with a reduction, from each line's indices sorted stably (``keys``, with
    their positions ``pos``): one work item per run of equal keys accumulates its source
    elements in position order (so in the index order PyTorch's CPU loop takes) and stores
    once. No atomics; the sort makes it O(L log L) per line of length L.

    Arguments: out, keys, pos, src; lines, length, off_out, off_src; the dim strides of out,
    keys (and pos) and src; the line sizes; the line strides of out, keys, src.
    """
    t = d.types
    i64 = t["i64"]
    dt = render.DTYPES[dtype]
    ct = t[dt.compute]
    operands = ["out", "keys", "src"]
    params = _params(d, [("out", dt.storage), ("keys", "i64"), ("pos", "i64"),
                         ("src", dt.storage)],
                     ["lines", "length", "off_out", "off_src", "dst_out", "dst_keys",
                      "dst_src"]
                     + [f"osize{k}" for k in range(rank)]
                     + [f"ost_{p}{k}" for p in operands for k in range(rank)])
    body = [f"  const {i64} g = {d.global_index};", "  if (g >= lines * length) return;",
            f"  const {i64} o = g / length, j = g % length;",
            f"  {i64} at_out = off_out, at_keys = 0, at_src = off_src;"]
    body += decode(d, rank, "o", "o", operands)
    join = SCATTER_REDUCE[reduce]
    if dt.is_bool:
        join = _BOOL_REDUCE.get(reduce, join)
    pair = dt.compute in render.PART
    helpers = ""
    if pair:
        function = COMPLEX_SCATTER_REDUCE[reduce]
        join = f"plait_{function}_{dt.compute}(acc, x)"
        helpers = render_complex.source(d, dt.compute, [function])

    def source(q: str) -> str:
        return render.load(d, dt, "src", f"at_src + pos[at_keys + {q} * dst_keys] * dst_src")

    body += [
        f"  const {i64} to = keys[at_keys + j * dst_keys];",
        "  if (j > 0 && keys[at_keys + (j - 1) * dst_keys] == to) return;  // not a run's start",
        f"  const {i64} at = at_out + to * dst_out;",
    ]
    if include_self:
        body.append(f"  {ct} acc = {render.load(d, dt, 'out', 'at')}; {i64} count = 1;")
        start = "j"
    else:
        body.append(f"  {ct} acc = {source('j')}; {i64} count = 1;")
        start = "j + 1"
    body += [
        f"  for ({i64} q = {start}; q < length && keys[at_keys + q * dst_keys] == to; ++q) {{",
        f"    const {ct} x = {source('q')};",
        f"    acc = {join}; ++count;",
        "  }",
    ]
    if reduce == "mean":
        if pair:
            part = t[render.PART[dt.compute]]
            mean = d.pair.format(T=ct, x=f"acc.x / ({part})count", y=f"acc.y / ({part})count")
            body.append(f"  acc = {mean};")
        elif dt.is_float:
            body.append(f"  acc = acc / ({ct})count;")
        elif dt.is_bool:
            body.append("  if (count > 1) acc = 0;")  # True // count, as integers
        else:
            # floor division, as PyTorch's integer mean does
            body.append(f"  {{ {ct} q = ({ct})(acc / count); if (q * count != acc && "
                        f"(acc < 0)) q -= 1; acc = q; }}")
    body.append("  " + render.store(d, dt, "out", "at", render.convert(d, dt, dt, "acc")))
    name = f"plait_scatter_{reduce}_{int(include_self)}_{dtype}_r{rank}"
    return Rendered(_source(d, name, params, body, (dtype,), helpers=helpers), name,
                    "bbbb" + "l" * (7 + rank * 4))


def render_searchsorted(d: Dialect, dtype: str, right: bool) -> Rendered:
    """One work item per value: the insertion point in its row of the sorted sequence.

    Arguments: out, seq, values; rows, n, m, off_out, off_seq, off_values, seq row stride
    (0: one row for every value row), seq stride, values row stride, values stride, out row
    stride, out stride.
    """
    i64 = d.types["i64"]
    dt = render.DTYPES[dtype]
    ct = d.types[dt.compute]
    params = _params(d, [("out", "i64"), ("seq", dt.storage), ("values", dt.storage)],
                     ["rows", "n", "m", "off_out", "off_seq", "off_values", "srow", "sst",
                      "vrow", "vst", "orow", "ost"])
    stop = ">" if right else ">="
    body = [
        f"  const {i64} i = {d.global_index};", "  if (i >= rows * m) return;",
        f"  const {i64} r = i / m, c = i % m;",
        f"  const {ct} v = {render.load(d, dt, 'values', 'off_values + r * vrow + c * vst')};",
        f"  {i64} start = 0, end = n;",
        "  while (start < end) {",
        f"    const {i64} mid = start + (end - start) / 2;",
        f"    const {ct} probe = {render.load(d, dt, 'seq', 'off_seq + r * srow + mid * sst')};",
        f"    if (probe {stop} v) end = mid; else start = mid + 1;",
        "  }",
        "  out[off_out + r * orow + c * ost] = start;",
    ]
    name = f"plait_searchsorted_{dtype}_{int(right)}"
    return Rendered(_source(d, name, params, body, (dtype,)), name, "bbb" + "l" * 12)


# Philox4x32's round multipliers and Weyl key increments (Random123's constants)
PHILOX = {"M0": "0xD2511F53u", "M1": "0xCD9E8D57u", "W0": "0x9E3779B9u", "W1": "0xBB67AE85u"}


def render_random_bits(d: Dialect, rank: int) -> Rendered:
    """``out[i]`` (int64, element ``i`` in row-major order) = lane ``i % 4`` of Philox4x32-10
    at counter ``offset + i // 4`` with key ``seed`` (low word first).

    Arguments: out; n, off_out, seed (64 bits), offset (64 bits); out's ``rank`` sizes and
    strides (``rank`` 0: contiguous).
    """
    t = d.types
    u32, u64, i64 = t["u32"], t["u64"], t["i64"]
    params = ([d.pointer.format(T=i64) + " out", f"{i64} n", f"{i64} off_out", f"{u64} seed",
               f"{u64} offset"] + [f"{i64} osize{k}" for k in range(rank)]
              + [f"{i64} ost_out{k}" for k in range(rank)])
    body = [
        f"  const {i64} g = {d.global_index};",
        "  if (g * 4 >= n) return;",
        f"  const {u64} low = offset + ({u64})g;",
        f"  {u32} c0 = ({u32})low, c1 = ({u32})(low >> 32), c2 = low < offset ? 1u : 0u, c3 = 0;",
        f"  {u32} k0 = ({u32})seed, k1 = ({u32})(seed >> 32);",
        "  for (int r = 0; r < 10; ++r) {",
        f"    const {u64} p0 = ({u64}){PHILOX['M0']} * c0, p1 = ({u64}){PHILOX['M1']} * c2;",
        f"    const {u32} n0 = ({u32})(p1 >> 32) ^ c1 ^ k0, n2 = ({u32})(p0 >> 32) ^ c3 ^ k1;",
        f"    c1 = ({u32})p1; c3 = ({u32})p0; c0 = n0; c2 = n2;",
        f"    k0 += {PHILOX['W0']}; k1 += {PHILOX['W1']};",
        "  }",
        f"  const {u32} words[4] = {{c0, c1, c2, c3}};",
        "  for (int lane = 0; lane < 4 && g * 4 + lane < n; ++lane) {",
        f"    {i64} at_out = off_out;",
    ]
    if rank:
        body += ["  " + line for line in decode(d, rank, "g * 4 + lane", "o", ["out"])]
    else:
        body.append("    at_out += g * 4 + lane;")
    body += [f"    out[at_out] = ({i64})words[lane];", "  }"]
    name = f"plait_random_bits_r{rank}"
    return Rendered(_source(d, name, params, body, ()), name, "bllLL" + "l" * (2 * rank))


def render_nonzero(d: Dialect, dtype: str, rank: int, write: bool) -> Rendered:
    """The two passes of ``nonzero`` over blocks of ``block`` elements in row-major order,
    one work item per block: counting (``counts[b]``), then writing each nonzero element's
    coordinates (``out[k * total + position]``, from ``starts[b]``).

    Arguments: out (or counts), a, starts (write pass only); n, block, total, off_a; the
    sizes; a's strides.
    """
    i64 = d.types["i64"]
    dt = render.DTYPES[dtype]
    buffers = [("out", "i64"), ("a", dt.storage)] + ([("starts", "i64")] if write else [])
    params = _params(d, buffers, ["n", "block", "total", "off_a"]
                     + [f"osize{k}" for k in range(rank)] + [f"ost_a{k}" for k in range(rank)])
    body = [
        f"  const {i64} b = {d.global_index};",
        "  if (b * block >= n) return;",
        f"  {i64} found = {'starts[b]' if write else '0'};",
        f"  const {i64} end = (b + 1) * block < n ? (b + 1) * block : n;",
        f"  for ({i64} e = b * block; e < end; ++e) {{",
        f"    {i64} at_a = off_a;",
    ]
    body += ["  " + line for line in decode(d, rank, "e", "o", ["a"])]
    body.append(f"    if (!({render.load(d, dt, 'a', 'at_a')} != 0)) continue;")
    if write:
        body.append(f"    {i64} rest = e;")
        for k in reversed(range(rank)):
            body.append(f"    out[{k} * total + found] = rest % osize{k}; rest /= osize{k};")
    body += ["    ++found;", "  }"]
    if not write:
        body.append("  out[b] = found;")
    name = f"plait_nonzero_{'write' if write else 'count'}_{dtype}_r{rank}"
    return Rendered(_source(d, name, params, body, (dtype,)), name,
                    "b" * len(buffers) + "l" * (4 + 2 * rank))
