"""The direct convolution rendered for a dialect (OpenCL C, CUDA), as :mod:`.render`.

One work item per output element sums over the input channels of its group and the kernel's
positions: ``out[n, g*Co+o, y] = sum input[n, g*Ci+c, y*stride - padding + k*dilation] *
weight[g*Co+o, c, k]``; transposed, the same sum read backwards (the input position ``x``
with ``x*stride - padding + k*dilation == y``), so no two work items write one element and no
atomics are needed. Every operand has its own strides (views and stride-0 batches run as
they are). Accumulators: double for floats where the device has it (float otherwise), the
64-bit wrapping type for integers.
"""

from __future__ import annotations

from . import render
from .render import Dialect, Rendered

GEOMETRY = ("size", "osize", "ksize", "stride", "pad", "dil")


def render_convolution(d: Dialect, dtype: str, spatial: int, transposed: bool,
                       accumulator: str) -> Rendered:
    """The kernel for ``spatial`` spatial dims.

    Arguments: out, input, weight (buffers); total, batch, groups, ci, co, off_out, off_in,
    off_w; per spatial dim its input size, output size, kernel size, stride, padding and
    dilation; the strides of out, input and weight (2 + spatial each).
    """
    t = d.types
    i64 = t["i64"]
    dt = render.DTYPES[dtype]
    acc = t[accumulator]
    operands = ["out", "in", "w"]
    params = [d.pointer.format(T=t[dt.storage]) + f" {p}" for p in operands]
    params += [f"{i64} {s}" for s in ("total", "batch", "groups", "ci", "co", "off_out",
                                      "off_in", "off_w")]
    params += [f"{i64} {g}{k}" for k in range(spatial) for g in GEOMETRY]
    params += [f"{i64} st_{p}{k}" for p in operands for k in range(2 + spatial)]
    body = [f"  const {i64} i = {d.global_index};", "  if (i >= total) return;",
            f"  {i64} rest = i;"]
    for k in reversed(range(spatial)):
        body.append(f"  const {i64} y{k} = rest % osize{k}; rest /= osize{k};")
    body += [f"  const {i64} channel = rest % (groups * co), n = rest / (groups * co);",
             f"  const {i64} g = channel / co, o = channel % co;",
             f"  {acc} sum = 0;",
             f"  for ({i64} c = 0; c < ci; ++c) {{"]
    weight_channels = ("g * ci + c", "o") if transposed else ("g * co + o", "c")
    body.append(f"    const {i64} at_in_c = off_in + n * st_in0 + (g * ci + c) * st_in1;")
    body.append(f"    const {i64} at_w_c = off_w + ({weight_channels[0]}) * st_w0 + "
                f"({weight_channels[1]}) * st_w1;")
    indent = "    "
    for k in range(spatial):
        body.append(f"{indent}for ({i64} k{k} = 0; k{k} < ksize{k}; ++k{k}) {{")
        indent += "  "
        if transposed:
            body.append(f"{indent}const {i64} t{k} = y{k} + pad{k} - k{k} * dil{k};")
            body.append(f"{indent}if (t{k} < 0 || t{k} % stride{k} != 0) continue;")
            body.append(f"{indent}const {i64} x{k} = t{k} / stride{k};")
            body.append(f"{indent}if (x{k} >= size{k}) continue;")
        else:
            body.append(f"{indent}const {i64} x{k} = y{k} * stride{k} - pad{k} + k{k} * dil{k};")
            body.append(f"{indent}if (x{k} < 0 || x{k} >= size{k}) continue;")
    at_in = "at_in_c" + "".join(f" + x{k} * st_in{k + 2}" for k in range(spatial))
    at_w = "at_w_c" + "".join(f" + k{k} * st_w{k + 2}" for k in range(spatial))
    body.append(f"{indent}sum += ({acc})({render.load(d, dt, 'in', at_in)}) * "
                f"({acc})({render.load(d, dt, 'w', at_w)});")
    for _ in range(spatial):
        indent = indent[:-2]
        body.append(f"{indent}}}")
    body.append("  }")
    at_out = ("off_out + n * st_out0 + channel * st_out1"
              + "".join(f" + y{k} * st_out{k + 2}" for k in range(spatial)))
    acc_dt = render.DType(accumulator, accumulator, accumulator, 0,
                          is_float=accumulator in ("f32", "f64"))
    body.append("  " + render.store(d, dt, "out", at_out, render.convert(d, acc_dt, dt, "sum")))
    name = f"plait_convolution_{dtype}_s{spatial}_t{int(transposed)}_{accumulator}"
    dtypes = (dtype, "float64") if accumulator == "f64" else (dtype,)
    source = (render.prelude_for(d, dtypes) + f"{d.kernel} {name}(\n    "
              + ",\n    ".join(params) + ") {\n" + "\n".join(body) + "\n}\n")
    return Rendered(source, name, "bbb" + "l" * (8 + 6 * spatial + 3 * (2 + spatial)))
