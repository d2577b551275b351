"""Fused row kernels rendered for a dialect (OpenCL C, CUDA), as :mod:`.render`: softmax and
log_softmax, forward and backward, one kernel each where core's composites run five.

A row is ``n`` elements at stride ``inner`` of a contiguous (outer, n, inner) tensor; one work
item takes a row: its maximum, the sum of ``exp(x - max)``, then the outputs. Float16 and
bfloat16 compute in float, float64 in double. A NaN in a row makes the row NaN, as PyTorch's.
"""

from __future__ import annotations

from . import render
from .render import Dialect, Rendered


def _head(d: Dialect, names: list[str], storage: str) -> tuple[list[str], list[str]]:
    t = d.types
    i64 = t["i64"]
    params = [d.pointer.format(T=t[storage]) + f" {p}" for p in names]
    params += [f"{i64} {s}" for s in ("rows", "n", "inner")]
    body = [f"  const {i64} r = {d.global_index};", "  if (r >= rows) return;",
            f"  const {i64} base = (r / inner) * n * inner + r % inner;"]
    return params, body


def render_softmax(d: Dialect, dtype: str, log: bool) -> Rendered:
    """``out = softmax(x)`` (or ``log_softmax``) along the rows. Arguments: out, x; rows, n,
    inner."""
    dt = render.DTYPES[dtype]
    ct = d.types[dt.compute]
    params, body = _head(d, ["out", "x"], dt.storage)

    def x(k: str) -> str:
        return render.load(d, dt, "x", f"base + {k} * inner")

    body += [
        f"  {ct} m = -INFINITY;",
        f"  for ({d.types['i64']} k = 0; k < n; ++k) {{ const {ct} v = {x('k')}; "
        "if (v > m || v != v) m = v; if (m != m) break; }",
        f"  {ct} s = 0;",
        f"  for ({d.types['i64']} k = 0; k < n; ++k) s += exp({x('k')} - m);",
    ]
    if log:
        value = f"{x('k')} - m - log(s)"
    else:
        body.append(f"  const {ct} scale = ({ct})1 / s;")
        value = f"exp({x('k')} - m) * scale"
    body.append(f"  for ({d.types['i64']} k = 0; k < n; ++k) "
                + render.store(d, dt, "out", "base + k * inner", value))
    name = f"plait_{'log_' if log else ''}softmax_{dtype}"
    source = (render.prelude_for(d, (dtype,)) + f"{d.kernel} {name}(\n    "
              + ",\n    ".join(params) + ") {\n" + "\n".join(body) + "\n}\n")
    return Rendered(source, name, "bb" + "lll")


def render_softmax_backward(d: Dialect, dtype: str, log: bool) -> Rendered:
    """The input gradient from the output ``y`` and its gradient ``g``: ``y * (g - sum(g *
    y))`` (softmax) or ``g - exp(y) * sum(g)`` (log_softmax). Arguments: grad_in, g, y; rows,
    n, inner."""
    dt = render.DTYPES[dtype]
    ct = d.types[dt.compute]
    i64 = d.types["i64"]
    params, body = _head(d, ["grad_in", "g", "y"], dt.storage)

    def at(p: str) -> str:
        return render.load(d, dt, p, "base + k * inner")

    body.append(f"  {ct} s = 0;")
    if log:
        body.append(f"  for ({i64} k = 0; k < n; ++k) s += {at('g')};")
        value = f"{at('g')} - exp({at('y')}) * s"
    else:
        body.append(f"  for ({i64} k = 0; k < n; ++k) s += {at('g')} * {at('y')};")
        value = f"{at('y')} * ({at('g')} - s)"
    body.append(f"  for ({i64} k = 0; k < n; ++k) "
                + render.store(d, dt, "grad_in", "base + k * inner", value))
    name = f"plait_{'log_' if log else ''}softmax_backward_{dtype}"
    source = (render.prelude_for(d, (dtype,)) + f"{d.kernel} {name}(\n    "
              + ",\n    ".join(params) + ") {\n" + "\n".join(body) + "\n}\n")
    return Rendered(source, name, "bbb" + "lll")
