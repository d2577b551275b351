"""The primitive set: the kernels a backend implements (docs/ops.md, "The primitive table").

Everything else in the API is composite over these. The table is versioned: a backend
declares kernels against ``VERSION`` and the conformance suite checks every row.

Conventions shared by every primitive (docs/ops.md, "The primitive table"):

- the first argument(s) are outputs, preallocated by core on the right device with the result's
  dtype and shape; kernels write into them and return nothing (``nonzero``, whose size depends
  on the data, is the one primitive that returns its output);
- inputs have the output's dtype unless the row says otherwise (``copy_`` casts; comparisons
  and logical ops write bool; index outputs are int64; ``where``'s condition is bool), and are
  already broadcast to the output's shape with stride-0 expansion, so an elementwise kernel sees
  equal shapes and arbitrary strides (a contiguous fast path is expected);
- Python scalars arrive as 0-d tensors expanded with stride 0, never as a second kernel family;
- float16 and bfloat16 compute in float32 and round to nearest even on store;
- reductions write a "keepdim" output: the input's shape with every reduced dim set to 1;
- a ``dim`` argument is already wrapped to ``[0, ndim)``.
"""

from __future__ import annotations

from typing import Any

from . import op_tables as _op_tables

# 4: sigmoid became a primitive (it was four: neg, exp, add, reciprocal).
# 5: sigmoid_backward and tanh_backward (binary; each was three: sub, mul, mul).
# 6: the spectral group (fft_c2c, fft_r2c, fft_c2r): discrete Fourier transforms.
VERSION = 6

# The elementwise primitives come from the pointwise op table (one row per op).
_UNARY = _op_tables.primitives("unary")
_BINARY = [name for name in _op_tables.primitives("binary") if name != "div"]
_COMPARE = _op_tables.primitives("compare")  # write bool
# any/all write bool
_REDUCE = [r.prim for r in _op_tables.REDUCTIONS if r.over == _op_tables.OVER_DIMS]


def _table() -> dict[str, tuple[str, str]]:
    rows: dict[str, tuple[str, str]] = {
        # memory
        "copy_": ("memory", "copy_(Tensor(a!) out, Tensor src) -> ()"),
        "fill_": ("memory", "fill_(Tensor(a!) out, Scalar value) -> ()"),
        # out[i] = start + i * step, for a 1-d out (arange, linspace build on it)
        "arange_": ("memory", "arange_(Tensor(a!) out, Scalar start, Scalar step) -> ()"),
    }
    for name in _UNARY:
        rows[name] = ("unary", f"{name}(Tensor(a!) out, Tensor a) -> ()")
    for name in _BINARY:
        rows[name] = ("binary", f"{name}(Tensor(a!) out, Tensor a, Tensor b) -> ()")
    # rounding_mode: None (true division), "trunc" or "floor"
    rows["div"] = ("binary",
                   "div(Tensor(a!) out, Tensor a, Tensor b, str? rounding_mode=None) -> ()")
    for name in _COMPARE:
        rows[name] = ("compare", f"{name}(Tensor(a!) out, Tensor a, Tensor b) -> ()")
    rows["where"] = ("ternary", "where(Tensor(a!) out, Tensor condition, Tensor a, Tensor b) -> ()")
    for name in _REDUCE:
        rows[name] = ("reduction", f"{name}(Tensor(a!) out, Tensor a, int[] dims) -> ()")
    rows.update({
        # index outputs are int64, keepdim shape along `dim`; ties pick the first index
        "argmax": ("reduction", "argmax(Tensor(a!) out, Tensor a, int dim) -> ()"),
        "argmin": ("reduction", "argmin(Tensor(a!) out, Tensor a, int dim) -> ()"),
        # scans along `dim`; cummax/cummin also write int64 indices (last index on ties)
        "cumsum": ("scan", "cumsum(Tensor(a!) out, Tensor a, int dim) -> ()"),
        "cumprod": ("scan", "cumprod(Tensor(a!) out, Tensor a, int dim) -> ()"),
        "cummax": ("scan", "cummax(Tensor(a!) values, Tensor(b!) indices, Tensor a, int dim) "
                           "-> ()"),
        "cummin": ("scan", "cummin(Tensor(a!) values, Tensor(b!) indices, Tensor a, int dim) "
                           "-> ()"),
        # a: (..., n, k), b: (..., k, m), out: (..., n, m); batch dims already broadcast
        "matmul": ("linalg", "matmul(Tensor(a!) out, Tensor a, Tensor b) -> ()"),
        # out[i][j][k] = a[index[i][j][k]][j][k] for dim 0 (and so on); index is int64
        "gather": ("indexing", "gather(Tensor(a!) out, Tensor a, int dim, Tensor index) -> ()"),
        # out (already holding self) receives src along dim at index; reduce is one of
        # "none", "sum", "prod", "mean", "amax", "amin"
        "scatter_": ("indexing", "scatter_(Tensor(a!) out, int dim, Tensor index, Tensor src, "
                                 "str reduce=\"none\", bool include_self=True) -> ()"),
        # the int64 coordinates (n, ndim) of the nonzero elements, in row-major order
        "nonzero": ("indexing", "nonzero(Tensor a) -> Tensor"),
        "sort": ("sort", "sort(Tensor(a!) values, Tensor(b!) indices, Tensor a, int dim, "
                         "bool descending=False, bool stable=True) -> ()"),
        "topk": ("sort", "topk(Tensor(a!) values, Tensor(b!) indices, Tensor a, int k, int dim, "
                         "bool largest=True, bool sorted=True) -> ()"),
        # sorted_sequence (..., n) and values (..., m) share leading dims; out int64 (..., m)
        "searchsorted": ("sort", "searchsorted(Tensor(a!) out, Tensor sorted_sequence, "
                                 "Tensor values, bool right=False) -> ()"),
        # Philox4x32-10 random 32-bit words from (seed, offset): out is int64 holding values
        # in [0, 2**32), element i from counter (offset + i // 4), lane i % 4
        "random_bits_": ("random", "random_bits_(Tensor(a!) out, int seed, int offset) -> ()"),
        # N-d convolution without bias. input (N, G*Ci, *S), out (N, G*Co, *O), one stride,
        # padding and dilation per spatial dim (padding >= 0, the others >= 1); out, input and
        # weight share one dtype (float64 accumulation for floats, wrapping int64 for ints).
        # transposed=False: weight (G*Co, Ci, *K) and
        #   out[n, g*Co+o, y] = sum_{c,k} input[n, g*Ci+c, y*stride - padding + k*dilation]
        #                                 * weight[g*Co+o, c, k]   (zero outside the input);
        # transposed=True (the adjoint in input: transposed conv, and the input gradient):
        #   weight (G*Ci, Co, *K) and out[n, g*Co+o, x*stride - padding + k*dilation] +=
        #   input[n, g*Ci+c, x] * weight[g*Ci+c, o, k] over every (c, x, k) landing in out.
        # out's shape fixes the output size (a transposed conv's output_padding is implied by
        # it). The weight gradient is this primitive on rearranged operands (stride and
        # dilation swapped; see torch/_conv.py).
        "convolution": ("convolution", "convolution(Tensor(a!) out, Tensor input, Tensor weight, "
                                       "int[] stride, int[] padding, int[] dilation, "
                                       "bool transposed, int groups) -> ()"),
        # Discrete Fourier transforms over `dims` (distinct, wrapped, in any order), unscaled
        # for normalization 0, scaled by 1/sqrt(n) for 1 and by 1/n for 2, n the product of
        # the transformed sizes (the signal's, for c2r). c2c: out and a complex of one dtype
        # and shape; forward=True is sum_k a[k] exp(-2 pi i jk/n), False the same with +i.
        # r2c: a real (out's dtype's real counterpart), the forward transform; with onesided,
        # out's size along dims[-1] is n // 2 + 1 (the rest follows by Hermitian symmetry).
        # c2r: the inverse of a onesided spectrum: a complex holding n // 2 + 1 entries along
        # dims[-1], out real with the signal's sizes; the imaginary parts a Hermitian
        # spectrum cannot have (zero frequency, and n / 2 for even n) are ignored.
        "fft_c2c": ("spectral", "fft_c2c(Tensor(a!) out, Tensor a, int[] dims, "
                                "int normalization, bool forward) -> ()"),
        "fft_r2c": ("spectral", "fft_r2c(Tensor(a!) out, Tensor a, int[] dims, "
                                "int normalization, bool onesided) -> ()"),
        "fft_c2r": ("spectral", "fft_c2r(Tensor(a!) out, Tensor a, int[] dims, "
                                "int normalization) -> ()"),
    })
    return rows


# name -> (group, schema). The schema is torch.library's syntax without the namespace.
PRIMITIVES: dict[str, tuple[str, str]] = _table()
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(group for group, _ in PRIMITIVES.values()))


def schema(name: str) -> str:
    """The schema string of primitive ``name`` (``KeyError`` if it is not a primitive)."""
    return PRIMITIVES[name][1]


def by_group() -> dict[str, list[str]]:
    """Primitive names by group, in table order."""
    out: dict[str, list[Any]] = {g: [] for g in GROUPS}
    for name, (group, _) in PRIMITIVES.items():
        out[group].append(name)
    return out
