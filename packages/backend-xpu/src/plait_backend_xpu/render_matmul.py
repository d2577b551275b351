"""The tiled matmul, rendered for a dialect (OpenCL C, CUDA) like :mod:`.render`.

``out[..., i, j] = sum_q a[..., i, q] * b[..., q, j]``: a work-group of ``tile`` x ``tile``
work items computes one tile of ``out``; for each step along ``k`` it stages a tile of ``a``
and one of ``b`` in local memory (zeros past the edges), so each element is read from global
memory once per tile rather than once per product. The third grid dimension walks the batch,
whose dims (already broadcast, stride 0 where repeated) are decoded from the group index.
Every operand has its own strides, so transposed and sliced operands need no copy.

Accumulators: float for float16/bfloat16/float32 (rounded once on store), double for float64,
the 64-bit wrapping type for integers and bool (bool stores ``sum != 0``), complex values in
their pair type (products and sums through :mod:`.render_complex`).
"""

from __future__ import annotations

from . import render, render_complex
from .render import Dialect, Rendered, axis
from .render_reduce import decode


def accumulator(dt: render.DType) -> str:
    """The portable type a product of ``dt`` accumulates in."""
    return dt.compute if dt.is_float or dt.compute in render.PART else "u64"


def render_matmul(d: Dialect, dtype: str, batch_rank: int, tile: int) -> Rendered:
    """The kernel for ``dtype`` with ``batch_rank`` batch dims and ``tile``-square tiles.

    Arguments: out, a, b (buffers); n, k, m; off_out, off_a, off_b; the strides of out (rows,
    cols), a (rows, inner), b (inner, cols); the batch sizes; the batch strides of out, a, b.
    Launch: global (ceil(m / tile) * tile, ceil(n / tile) * tile, batches), local
    (tile, tile, 1).
    """
    t = d.types
    i64 = t["i64"]
    dt = render.DTYPES[dtype]
    acc_p = accumulator(dt)
    acc = t[acc_p]
    operands = ["out", "a", "b"]
    params = [d.pointer.format(T=t[dt.storage]) + f" {p}" for p in operands]
    params += [f"{i64} n", f"{i64} k", f"{i64} m"]
    params += [f"{i64} off_{p}" for p in operands]
    params += [f"{i64} {s}" for s in ("so_r", "so_c", "sa_r", "sa_k", "sb_k", "sb_c")]
    params += [f"{i64} bsize{k}" for k in range(batch_rank)]
    params += [f"{i64} bst_{p}{k}" for p in operands for k in range(batch_rank)]

    def value(p: str, index: str) -> str:
        loaded = render.load(d, dt, p, index)
        return f"({acc})({loaded})"

    pair = acc_p in render.PART
    if pair:  # complex: (0, 0), and the product added through the pair functions
        zero = d.pair.format(T=acc, x=render.literal(0.0, render.PART[acc_p]),
                             y=render.literal(0.0, render.PART[acc_p]))
    else:
        zero = f"({acc})0"

    def add_product(x: str, y: str) -> str:
        if pair:
            return f"sum = plait_cadd_{acc_p}(sum, plait_cmul_{acc_p}({x}, {y}));"
        return f"sum += {x} * {y};"

    body = [
        f"  const {i64} lx = {axis(d.local_id, 0)}, ly = {axis(d.local_id, 1)};",
        f"  const {i64} col = {axis(d.group_id, 0)} * {tile} + lx;",
        f"  const {i64} row = {axis(d.group_id, 1)} * {tile} + ly;",
        f"  {d.local_array.format(T=acc, name='ta', n=tile * (tile + 1))};",
        f"  {d.local_array.format(T=acc, name='tb', n=tile * (tile + 1))};",
        f"  {i64} at_out = off_out, at_a = off_a, at_b = off_b;",
    ]
    body += decode(d, batch_rank, axis(d.group_id, 2), "b", operands)
    body += [
        f"  {acc} sum = {zero};",
        f"  for ({i64} q0 = 0; q0 < k; q0 += {tile}) {{",
        # one element of each tile per work item; the +1 column avoids bank conflicts
        f"    const {i64} qa = q0 + lx, qb = q0 + ly;",
        f"    ta[ly * {tile + 1} + lx] = (row < n && qa < k) ? "
        f"{value('a', 'at_a + row * sa_r + qa * sa_k')} : {zero};",
        f"    tb[ly * {tile + 1} + lx] = (qb < k && col < m) ? "
        f"{value('b', 'at_b + qb * sb_k + col * sb_c')} : {zero};",
        f"    {d.barrier};",
        f"    for (int q = 0; q < {tile}; ++q) "
        + add_product(f"ta[ly * {tile + 1} + q]", f"tb[q * {tile + 1} + lx]"),
        f"    {d.barrier};",
        "  }",
        "  if (row >= n || col >= m) return;",
    ]
    acc_dt = render.DType(acc_p, acc_p, acc_p, 0, is_float=acc_p in ("f32", "f64"))
    body.append("  " + render.store(d, dt, "out", "at_out + row * so_r + col * so_c",
                                    render.convert(d, acc_dt, dt, "sum")))
    name = f"plait_matmul_{dtype}_b{batch_rank}_t{tile}"
    prelude = render.prelude_for(d, (dtype,))
    if pair:
        prelude += render_complex.source(d, acc_p, ["cadd", "cmul"])
    source = (prelude + f"{d.kernel} {name}(\n    "
              + ",\n    ".join(params) + ") {\n" + "\n".join(body) + "\n}\n")
    signature = "bbb" + "l" * (3 + 3 + 6 + batch_rank * 4)
    return Rendered(source, name, signature)


def render_matmul_blocked(d: Dialect, dtype: str, batch_rank: int, rows: int,
                          cols: int) -> Rendered:
    """The register-blocked kernel, for devices that run work-groups as loops (CPUs: PoCL).

    Each work item computes a ``rows`` x ``cols`` block of ``out`` in private accumulators,
    reading ``b``'s ``cols`` neighbours along a row (unit column stride: the renderer writes
    them as consecutive loads, which the device compiler turns into one vector load) and
    ``rows`` values of ``a`` per step along ``k``; no local memory and no barriers, so nothing
    splits the work-item loop. Needs ``n >= rows`` and ``m >= cols``; only for dtypes whose
    storage is their compute type (float32, float64).

    Arguments as :func:`render_matmul` (``so_c`` and ``sb_c`` are 1 and not passed).
    Launch: global (ceil(m / cols), ceil(n / rows), batches), any local size.
    """
    t = d.types
    i64 = t["i64"]
    dt = render.DTYPES[dtype]
    acc = t[accumulator(dt)]
    operands = ["out", "a", "b"]
    params = [d.pointer.format(T=t[dt.storage]) + f" {p}" for p in operands]
    params += [f"{i64} n", f"{i64} k", f"{i64} m"]
    params += [f"{i64} off_{p}" for p in operands]
    params += [f"{i64} {s}" for s in ("so_r", "sa_r", "sa_k", "sb_k")]
    params += [f"{i64} bsize{k}" for k in range(batch_rank)]
    params += [f"{i64} bst_{p}{k}" for p in operands for k in range(batch_rank)]
    body = [
        f"  const {i64} col0 = {axis(d.group_id, 0)} * {axis(d.local_size, 0)} * {cols}"
        f" + {axis(d.local_id, 0)} * {cols};",
        f"  const {i64} row0 = ({axis(d.group_id, 1)} * {axis(d.local_size, 1)}"
        f" + {axis(d.local_id, 1)}) * {rows};",
        "  if (row0 >= n || col0 >= m) return;",
        f"  {i64} at_out = off_out, at_a = off_a, at_b = off_b;",
    ]
    # the batch from the global index: the local size is the device's choice, in z too
    batch = f"{axis(d.group_id, 2)} * {axis(d.local_size, 2)} + {axis(d.local_id, 2)}"
    body += decode(d, batch_rank, batch, "b", operands)
    # A block past the edge moves back inside (n >= rows, m >= cols: the launcher's rule);
    # its overlap with the neighbour's block is computed twice and stored by this item only
    # from its own first row/column on, so every load is in range and b's are consecutive.
    body += [
        f"  const {i64} rb = row0 + {rows} <= n ? row0 : n - {rows};",
        f"  const {i64} cb = col0 + {cols} <= m ? col0 : m - {cols};",
        f"  const {i64} pa = at_a + rb * sa_r, pb = at_b + cb;",
    ]
    body += [f"  {acc} " + ", ".join(f"s{r}_{c} = 0" for c in range(cols)) + ";"
             for r in range(rows)]
    body += [f"  for ({i64} q = 0; q < k; ++q) {{",
             f"    const {i64} qb = pb + q * sb_k, qa = pa + q * sa_k;"]
    body += [f"    const {acc} b{c} = b[qb + {c}];" for c in range(cols)]
    for r in range(rows):
        body.append(f"    {{ const {acc} x = a[qa + {r} * sa_r];"
                    + "".join(f" s{r}_{c} += x * b{c};" for c in range(cols)) + " }")
    body.append("  }")
    for r in range(rows):
        stores = "".join(f" if (cb + {c} >= col0) out[o + {c}] = s{r}_{c};"
                         for c in range(cols))
        body.append(f"  if (rb + {r} >= row0) {{ const {i64} o = at_out + (rb + {r}) * so_r"
                    f" + cb;{stores} }}")
    name = f"plait_matmul_blocked_{dtype}_b{batch_rank}_{rows}x{cols}"
    source = (render.prelude_for(d, (dtype,)) + f"{d.kernel} {name}(\n    "
              + ",\n    ".join(params) + ") {\n" + "\n".join(body) + "\n}\n")
    signature = "bbb" + "l" * (3 + 3 + 4 + batch_rank * 4)
    return Rendered(source, name, signature)


# the vector type of a row of a vector-blocked kernel, by dtype: 16 floats or 8 doubles (two
# AVX2 registers, four on SSE)
VECTOR_COLUMNS = {"float32": 16, "float64": 8}


def render_matmul_vector(d: Dialect, dtype: str, batch_rank: int, rows: int) -> Rendered:
    """The register-blocked kernel with its rows written as OpenCL vectors, for CPU devices.

    As :func:`render_matmul_blocked`, but each of the ``rows`` rows of a work item's block is
    one vector of :data:`VECTOR_COLUMNS` columns (``float16``, ``double8``), ``b``'s row is one
    ``vload``, and each step along ``k`` adds ``a``'s value times that row to every
    accumulator (``s += x * row``, which the compiler contracts into FMAs where the device has
    them). Written in scalars, PoCL kept the block in 32 scalars and reached a third of the
    CPU backend's speed on 512 x 512 float32; as vectors, 4 x 16 ran at 0.7-1.0 of it (6 x 16
    the same, 4 x 8 at 0.45, 8 x 8 at 0.6). A block past the right edge moves back inside and
    stores its own columns from a private copy. OpenCL C only (vector types and
    ``vload``/``vstore`` as OpenCL spells them): the devices it is for are CPUs under OpenCL.

    Arguments as :func:`render_matmul_blocked`. Launch: global (ceil(m / cols),
    ceil(n / rows), batches), any local size.
    """
    if d.name != "opencl":
        raise ValueError(f"the vector-blocked matmul is OpenCL C only, not {d.name}")
    t = d.types
    i64 = t["i64"]
    dt = render.DTYPES[dtype]
    cols = VECTOR_COLUMNS[dtype]
    scalar = t[dt.compute]
    vector = f"{scalar}{cols}"
    operands = ["out", "a", "b"]
    params = [d.pointer.format(T=t[dt.storage]) + f" {p}" for p in operands]
    params += [f"{i64} n", f"{i64} k", f"{i64} m"]
    params += [f"{i64} off_{p}" for p in operands]
    params += [f"{i64} {s}" for s in ("so_r", "sa_r", "sa_k", "sb_k")]
    params += [f"{i64} bsize{k}" for k in range(batch_rank)]
    params += [f"{i64} bst_{p}{k}" for p in operands for k in range(batch_rank)]
    body = [
        f"  const {i64} col0 = ({axis(d.group_id, 0)} * {axis(d.local_size, 0)}"
        f" + {axis(d.local_id, 0)}) * {cols};",
        f"  const {i64} row0 = ({axis(d.group_id, 1)} * {axis(d.local_size, 1)}"
        f" + {axis(d.local_id, 1)}) * {rows};",
        "  if (row0 >= n || col0 >= m) return;",
        f"  {i64} at_out = off_out, at_a = off_a, at_b = off_b;",
    ]
    batch = f"{axis(d.group_id, 2)} * {axis(d.local_size, 2)} + {axis(d.local_id, 2)}"
    body += decode(d, batch_rank, batch, "b", operands)
    body += [
        f"  const {i64} rb = row0 + {rows} <= n ? row0 : n - {rows};",
        f"  const {i64} cb = col0 + {cols} <= m ? col0 : m - {cols};",
        f"  const __global {scalar}* pa = a + at_a + rb * sa_r;",
        f"  const __global {scalar}* pb = b + at_b + cb;",
    ]
    body += [f"  {vector} s{r} = ({vector})(0);" for r in range(rows)]
    body += [f"  for ({i64} q = 0; q < k; ++q) {{",
             f"    const {vector} row = vload{cols}(0, pb + q * sb_k);"]
    body += [f"    s{r} += ({vector})(pa[q * sa_k + {r} * sa_r]) * row;" for r in range(rows)]
    body.append("  }")
    for r in range(rows):
        body.append(
            f"  if (rb + {r} >= row0) {{\n"
            f"    __global {scalar}* o = out + at_out + (rb + {r}) * so_r + cb;\n"
            f"    if (cb == col0) {{ vstore{cols}(s{r}, 0, o); }} else {{\n"
            f"      {scalar} part[{cols}]; vstore{cols}(s{r}, 0, part);\n"
            f"      for (int c = 0; c < {cols}; ++c) if (cb + c >= col0) o[c] = part[c];\n"
            "    }\n  }")
    name = f"plait_matmul_vector_{dtype}_b{batch_rank}_{rows}x{cols}"
    source = (render.prelude_for(d, (dtype,)) + f"{d.kernel} {name}(\n    "
              + ",\n    ".join(params) + ") {\n" + "\n".join(body) + "\n}\n")
    signature = "bbb" + "l" * (3 + 3 + 4 + batch_rank * 4)
    return Rendered(source, name, signature)
