"""Discrete Fourier transforms rendered for a dialect (OpenCL C, CUDA), as :mod:`.render`.

A transform over several dims is a sequence of one-dim passes; each pass gives one work item
per output element, which sums its line directly (``n`` terms, the twiddle's angle reduced
as the integer ``j * k mod n`` first, so it stays exact for long lines). Complex values are
pairs of the real type (real part first), so offsets and strides count real scalars. Kinds:
``c2c`` (complex to complex), ``r2c`` (real to complex), ``c2r`` (a onesided Hermitian
spectrum to the real signal, the imaginary parts it cannot have ignored). Accumulators:
double where the device has it, float otherwise.
"""

from __future__ import annotations

import math

from .render import Dialect, Rendered, literal
from .render_reduce import decode


def render_dft(d: Dialect, kind: str, real: str, outer: int, accumulator: str) -> Rendered:
    """One pass along one dim. ``real``: ``f32`` or ``f64``, the scalar type of both sides.

    Arguments: out, in (buffers); lines, n_out, n_in, n (the signal's length), off_out,
    off_in, dst_out, dst_in (along the dim, in scalars), sign (-1 forward, 1 inverse), the
    outer sizes and each side's outer strides (scalars); scale (a double, or a float
    without double precision).
    """
    t = d.types
    i64, r, a = t["i64"], t[real], t[accumulator]
    params = [d.pointer.format(T=r) + " out", d.pointer.format(T=r) + " in"]
    params += [f"{i64} {s}" for s in ("lines", "n_out", "n_in", "n", "off_out", "off_in",
                                      "dst_out", "dst_in", "sign")]
    params += [f"{i64} osize{k}" for k in range(outer)]
    params += [f"{i64} ost_{p}{k}" for p in ("out", "in") for k in range(outer)]
    params.append(f"{a} scale")
    two_pi = literal(2 * math.pi, accumulator)
    body = [f"  const {i64} g = {d.global_index};", "  if (g >= lines * n_out) return;",
            f"  const {i64} o = g / n_out, j = g % n_out;",
            f"  {i64} at_out = off_out, at_in = off_in;"]
    body += decode(d, outer, "o", "o", ["out", "in"])
    body += [f"  {a} re = 0, im = 0;",
             f"  const {a} step = {two_pi} / ({a})n;"]
    if kind == "c2r":
        # X[0] + sum_{0<k<n/2} 2 Re(X[k] w^jk) + X[n/2] (-1)^j, real parts at the ends only
        body += [
            f"  for ({i64} k = 0; k < n_in && 2 * k <= n; ++k) {{",
            f"    const {a} xr = ({a})in[at_in + k * dst_in];",
            f"    const {a} xi = ({a})in[at_in + k * dst_in + 1];",
            f"    const {a} angle = step * ({a})((j * k) % n);",
            f"    const {a} c = cos(angle), s = sin(angle) * ({a})sign;",
            "    if (k == 0 || 2 * k == n) re += xr * c;",
            "    else re += 2 * (xr * c - xi * s);",
            "  }",
            "  out[at_out + j * dst_out] = re * scale;",
        ]
    else:
        imag = "0" if kind == "r2c" else f"({a})in[at_in + k * dst_in + 1]"
        body += [
            f"  for ({i64} k = 0; k < n_in; ++k) {{",
            f"    const {a} xr = ({a})in[at_in + k * dst_in], xi = {imag};",
            f"    const {a} angle = step * ({a})((j * k) % n);",
            f"    const {a} c = cos(angle), s = sin(angle) * ({a})sign;",
            "    re += xr * c - xi * s; im += xr * s + xi * c;",
            "  }",
            "  out[at_out + j * dst_out] = re * scale;",
            "  out[at_out + j * dst_out + 1] = im * scale;",
        ]
    name = f"plait_dft_{kind}_{real}_o{outer}_{accumulator}"
    prelude = d.prelude
    if "f64" in (real, accumulator):
        prelude += d.fp64_prelude
    source = (prelude + f"{d.kernel} {name}(\n    " + ",\n    ".join(params) + ") {\n"
              + "\n".join(body) + "\n}\n")
    return Rendered(source, name, "bb" + "l" * (9 + 3 * outer)
                    + ("d" if accumulator == "f64" else "f"))


