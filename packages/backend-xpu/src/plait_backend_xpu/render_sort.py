"""Sorting rendered for a dialect (OpenCL C, CUDA), as :mod:`.render`: ``sort`` and
``topk`` (its first ``k``).

One work item sorts one line along the dim: a bottom-up merge sort between two scratch
buffers (values in the compute type, int64 positions), then the first ``k`` written out.
Merging takes the right run's element only when it strictly precedes the left one's, so the
sort is stable in both directions, as PyTorch's is; NaN sorts as the largest value.
"""

from __future__ import annotations

from . import render
from .render import Dialect, Rendered
from .render_reduce import decode

# whether y strictly precedes x (NaN largest)
BEFORE = {
    False: "(y < x || (x != x && y == y))",
    True: "(y > x || (y != y && x == x))",
}


def render_sort(d: Dialect, dtype: str, outer: int, descending: bool) -> Rendered:
    """The kernel sorting ``lines`` lines of ``length`` and writing each one's first ``k``.

    Arguments: values, indices, a, sv, si, dv, di (buffers: outputs, input, two scratch
    pairs of ``lines * length`` elements); lines, length, k; the offsets of values, indices
    and a; their strides along the dim; the outer sizes; each one's outer strides.
    """
    t = d.types
    i64 = t["i64"]
    dt = render.DTYPES[dtype]
    ct = t[dt.compute]
    vp, ip = d.pointer.format(T=ct), d.pointer.format(T=i64)
    operands = ["values", "indices", "a"]
    params = [d.pointer.format(T=t[dt.storage]) + " values", ip + " indices",
              d.pointer.format(T=t[dt.storage]) + " a", vp + " sv0", ip + " si0",
              vp + " sv1", ip + " si1"]
    params += [f"{i64} {s}" for s in ("lines", "length", "k")]
    params += [f"{i64} off_{p}" for p in operands]
    params += [f"{i64} dst_{p}" for p in operands]
    params += [f"{i64} osize{j}" for j in range(outer)]
    params += [f"{i64} ost_{p}{j}" for p in operands for j in range(outer)]
    body = [f"  const {i64} o = {d.global_index};", "  if (o >= lines) return;"]
    body += [f"  {i64} at_{p} = off_{p};" for p in operands]
    body += decode(d, outer, "o", "o", operands)
    body += [
        f"  const {i64} base = o * length;",
        f"  {vp} sv = sv0; {ip} si = si0; {vp} dv = sv1; {ip} di = si1;",
        f"  for ({i64} j = 0; j < length; ++j) {{",
        f"    sv[base + j] = {render.load(d, dt, 'a', 'at_a + j * dst_a')}; si[base + j] = j;",
        "  }",
        f"  for ({i64} width = 1; width < length; width *= 2) {{",
        f"    for ({i64} lo = 0; lo < length; lo += 2 * width) {{",
        f"      const {i64} mid = lo + width < length ? lo + width : length;",
        f"      const {i64} hi = lo + 2 * width < length ? lo + 2 * width : length;",
        f"      {i64} l = lo, r = mid;",
        f"      for ({i64} q = lo; q < hi; ++q) {{",
        "        int right = l >= mid;",
        "        if (!right && r < hi) {",
        f"          const {ct} x = sv[base + l], y = sv[base + r];",
        f"          right = {BEFORE[descending]};",
        "        }",
        "        if (right) { dv[base + q] = sv[base + r]; di[base + q] = si[base + r]; ++r; }",
        "        else { dv[base + q] = sv[base + l]; di[base + q] = si[base + l]; ++l; }",
        "      }",
        "    }",
        f"    {{ {vp} tv = sv; sv = dv; dv = tv; {ip} ti = si; si = di; di = ti; }}",
        "  }",
        f"  for ({i64} j = 0; j < k; ++j) {{",
        "    " + render.store(d, dt, "values", "at_values + j * dst_values", "sv[base + j]"),
        "    indices[at_indices + j * dst_indices] = si[base + j];",
        "  }",
    ]
    name = f"plait_sort_{dtype}_{int(descending)}_o{outer}"
    source = (render.prelude_for(d, (dtype,)) + f"{d.kernel} {name}(\n    "
              + ",\n    ".join(params) + ") {\n" + "\n".join(body) + "\n}\n")
    return Rendered(source, name, "b" * 7 + "l" * (3 + 6 + outer * 4))
