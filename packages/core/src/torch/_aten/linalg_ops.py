"""The ops of ``torch.linalg``: norms, decompositions, solvers and products of matrices (the
public namespace :mod:`torch.linalg` re-exports them behind the ``__torch_function__`` entry).

Norms are operators over primitives (``linalg_vector_norm``) and composites of it. The
decompositions (inv, det, slogdet, solve, cholesky, qr, svd, eigh, lstsq...) are aten operators
whose kernels compute on a host copy with numpy's LAPACK bindings, in the input's precision,
batch by batch, and return new tensors on the input's device; their Meta kernels lay out the
same results without values. The signs of singular and eigen vectors are LAPACK's, which
PyTorch leaves implementation-defined too.
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core import (
    config as _config,
    dispatch as _dispatch,
    dtype as _dtype,
    layout as _layout,
    storage as _storage,
)
from .._core.alloc import PRIMS, new_tensor
from .._core.device import device as _device
from .._core.promotion import broadcast_shapes
from .._core.tensor import Tensor, contiguous_strides, storage_extent, wrap_dim
from .._refs.common import np_view, store
from . import elementwise as _ew, factories as _fac
from .arith import sum
from .convert import fill_, scalar_type_name, to_device, to_dtype, write_out
from .factories import not_differentiable
from .linalg import _CPP_NAMES, ATEN, matmul, vdot

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "eig", "eigh", "eigvals",
    "eigvalsh", "inv", "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex", "matmul",
    "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet",
    "solve", "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm",
]


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input (a singular matrix, a matrix that is not
    positive-definite); PyTorch's ``torch.linalg.LinAlgError``."""


LinAlgError.__module__ = "torch.linalg"  # its public home


# PyTorch's torch.return_types: tuples whose fields have names.
def _result_type(name: str, fields: str) -> Any:
    cls = namedtuple(name, fields)  # type: ignore[misc]
    cls.__module__ = "torch.return_types"
    return cls


_SlogdetResult = _result_type("linalg_slogdet", "sign logabsdet")
_LegacySlogdetResult = _result_type("slogdet", "sign logabsdet")
_QRResult = _result_type("linalg_qr", "Q R")
_LegacyQRResult = _result_type("qr", "Q R")
_SVDResult = _result_type("linalg_svd", "U S Vh")
_LegacySVDResult = _result_type("svd", "U S V")
_EighResult = _result_type("linalg_eigh", "eigenvalues eigenvectors")
_LstsqResult = _result_type("linalg_lstsq", "solution residuals rank singular_values")
_InvExResult = _result_type("linalg_inv_ex", "inverse info")
_CholeskyExResult = _result_type("linalg_cholesky_ex", "L info")
_EigResult = _result_type("linalg_eig", "eigenvalues eigenvectors")
_LUFactorExResult = _result_type("linalg_lu_factor_ex", "LU pivots info")
_LUFactorResult = _result_type("linalg_lu_factor", "LU pivots")
_LUResult = _result_type("linalg_lu", "P L U")


def slogdet_result(sign: Tensor, logabsdet: Tensor) -> Any:
    """``torch.slogdet``'s result type (``torch.return_types.slogdet``)."""
    return _LegacySlogdetResult(sign, logabsdet)


def qr_result(q: Tensor, r: Tensor, name: str = "linalg_qr") -> Any:
    """The result type of ``linalg.qr`` or, with ``name="qr"``, of ``torch.qr``."""
    return (_LegacyQRResult if name == "qr" else _QRResult)(q, r)


# -- host copies -----------------------------------------------------------------------------

_CPU = _device("cpu")


def _host(t: Tensor) -> np.ndarray:
    """A numpy copy of ``t``'s values (contiguous, the input's precision)."""
    return np.array(np_view(to_device(t, _CPU)))


def _check_float(fn: str, A: Tensor, low_precision: bool = True) -> None:
    if not (A._dtype.is_floating_point or A._dtype.is_complex):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(A._dtype)}")
    if low_precision and A._dtype in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got "
                           f"{scalar_type_name(A._dtype)}")


def _check_matrix(fn: str, A: Any, square: bool = False) -> None:
    if not isinstance(A, Tensor):
        raise TypeError(f"{fn}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if square and A._shape[-1] != A._shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{A._shape[-2]} by {A._shape[-1]} matrices")


def _batch_error(fn: str, arr: np.ndarray, index: int, message: str) -> LinAlgError:
    where = ""
    if arr.ndim > 2:
        where = f"(Batch element {index}): "
    return LinAlgError(f"{fn}: {where}{message}")


def _first_zero_pivot(a: np.ndarray) -> int:
    """LAPACK getrf's ``info``: the 1-based index of the first exactly-zero pivot of LU with
    partial pivoting (0 if none)."""
    a = np.array(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64)
    n = a.shape[0]
    for j in range(n):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        if a[p, j] == 0:
            return j + 1
        a[[j, p]] = a[[p, j]]
        a[j + 1:] -= np.outer(a[j + 1:, j] / a[j, j], a[j])
    return 0


def _singular_index(arr: np.ndarray) -> tuple[int, int]:
    """(batch index, pivot) of the first singular matrix in a batch (pivot 0: none)."""
    flat = arr.reshape((-1,) + arr.shape[-2:])
    for i, m in enumerate(flat):
        pivot = _first_zero_pivot(m)
        if pivot:
            return i, pivot
    return 0, 0


# -- norms -----------------------------------------------------------------------------------


def _ord_text(ord: float) -> str:
    if math.isinf(ord):
        return "inf" if ord > 0 else "-inf"
    return str(int(ord)) if float(ord).is_integer() else repr(float(ord))


def _as_real(x: Tensor) -> Tensor:
    """A complex tensor's storage seen as real pairs: shape (..., 2) (``view_as_real``)."""
    return Tensor._make(x._storage, tuple(x._shape) + (2,), tuple(2 * s for s in x._stride) +
                        (1,), 2 * x._offset, x._dtype.to_real(), x._device, x._vc, x)


def _unary(prim: str, x: Tensor) -> Tensor:
    out = new_tensor(x._shape, x._dtype, x._device)
    getattr(PRIMS, prim)(out, x)
    return out


def _binary(prim: str, a: Tensor, b: Any) -> Tensor:
    if not isinstance(b, Tensor):
        scalar = new_tensor((), a._dtype, a._device)
        PRIMS.fill_(scalar, b)
        b = scalar.expand(a._shape)
    out = new_tensor(a._shape, a._dtype, a._device)
    getattr(PRIMS, prim)(out, a, b)
    return out


def _reduce(prim: str, x: Tensor, dims: list[int]) -> Tensor:
    """``prim`` over ``dims``, keeping them as size 1."""
    out = new_tensor(tuple(1 if d in dims else s for d, s in enumerate(x._shape)), x._dtype,
                     x._device)
    getattr(PRIMS, prim)(out, x, dims)
    return out


def _norm_dims(dim: Any, ndim: int) -> list[int]:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    wrapped = [wrap_dim(d, max(ndim, 1)) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"dim {wrapped[0]} appears multiple times in the list of dims")
    return sorted(wrapped)


def _vector_norm_kernel(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                        dtype: _dtype.dtype | None = None) -> Tensor:
    _check_float("linalg.vector_norm", x, low_precision=False)
    if dtype is not None:
        if not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, "
                               f"but got {scalar_type_name(dtype)}")
        if _dtype.promote_types(x._dtype, dtype) is not dtype:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input "
                               f"({scalar_type_name(x._dtype)}) should be convertible without "
                               f"narrowing to the specified dtype ({scalar_type_name(dtype)})")
        x = to_dtype(x, dtype)
    ord = float(ord)
    dims = _norm_dims(dim, x.ndim)
    shape = x._shape
    if ord < 0 or math.isinf(ord):
        if dim is None or not dims:
            if x.numel() == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_text(ord)} norm "
                                   "on an empty tensor because the operation does not have an "
                                   "identity")
        else:
            for d in dims:
                if shape[d] == 0:
                    raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_text(ord)} "
                                       f"norm on the dimension {d}because this dimension is "
                                       "empty and the operation does not have an identity")
    result_dt = x._dtype.to_real() if x._dtype.is_complex else x._dtype
    if x.ndim == 0:
        x, dims = x.reshape(1), [0]
    # |x| in the compute dtype: float32 for the half types
    if x._dtype.is_complex:
        pairs = _as_real(x)
        if pairs._dtype in (_dtype.float16, _dtype.bfloat16):
            pairs = to_dtype(pairs, _dtype.float32)
        squares = _binary("mul", pairs, pairs)
        a = _unary("sqrt", _reduce("sum", squares, [squares.ndim - 1]).squeeze(-1))
    else:
        a = to_dtype(x, _dtype.float32) if x._dtype in (_dtype.float16, _dtype.bfloat16) else x
        a = _unary("abs", a)
    if ord == math.inf:
        r = _reduce("amax", a, dims)
    elif ord == -math.inf:
        r = _reduce("amin", a, dims)
    elif ord == 0:
        nonzero = new_tensor(a._shape, _dtype.bool_, a._device)
        PRIMS.ne(nonzero, a, _binary("mul", a, 0))
        r = _reduce("sum", to_dtype(nonzero, a._dtype), dims)
    elif ord == 1:
        r = _reduce("sum", a, dims)
    elif ord == 2:
        r = _unary("sqrt", _reduce("sum", _binary("mul", a, a), dims))
    else:
        r = _binary("pow", _reduce("sum", _binary("pow", a, ord), dims), 1.0 / ord)
    r = to_dtype(r, result_dt)
    if not keepdim:
        r = r.reshape(tuple(s for d, s in enumerate(r._shape) if d not in dims))
    elif shape == ():
        r = r.reshape(())
    return r


_VECTOR_NORM = (_dispatch.get("aten::linalg_vector_norm") or _dispatch.define(
    "aten::linalg_vector_norm", "linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, "
    "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"))
_VECTOR_NORM.register(_dispatch.COMPOSITE_EXPLICIT, _vector_norm_kernel)


def vector_norm(x: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: _dtype.dtype | None = None, out: Tensor | None = None) -> Tensor:
    """The ``ord``-norm of ``x`` over ``dim`` (all dims by default): ``sum(|x|**ord)**(1/ord)``;
    inf/-inf are the max/min of ``|x|``, 0 counts the nonzero elements. Real results."""
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg_vector_norm(): argument 'input' must be Tensor, not "
                        f"{type(x).__name__}")
    if isinstance(ord, (str, bool)) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    return write_out(out, _VECTOR_NORM(x, ord, dim, keepdim, dtype=dtype))


def _matrix_norm_dims(A: Tensor, dim: Any) -> tuple[int, int]:
    dims = tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dims}")
    d0, d1 = wrap_dim(dims[0], A.ndim), wrap_dim(dims[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, "
                           f"{dims[1]})")
    return d0, d1


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Sequence[int] = (-2, -1),
                keepdim: bool = False, *, dtype: _dtype.dtype | None = None,
                out: Tensor | None = None) -> Tensor:
    """A matrix norm over the two dims ``dim``: "fro", "nuc" (sum of singular values), 2/-2
    (largest/smallest singular value), 1/-1 (max/min column sum of |A|), inf/-inf (rows)."""
    _check_matrix("linalg.matrix_norm", A)
    _check_float("linalg.matrix_norm", A, low_precision=False)
    d0, d1 = _matrix_norm_dims(A, dim)
    if ord == "fro":
        return write_out(out, vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype))
    if ord == "nuc" or ord in (2, -2):
        if A._dtype in (_dtype.float16, _dtype.bfloat16):
            raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got "
                               f"{scalar_type_name(A._dtype)}")
        if dtype is not None:
            A = to_dtype(A, dtype)
        rest = [d for d in range(A.ndim) if d not in (d0, d1)]
        S = svdvals(A.permute(rest + [d0, d1]))  # (..., k)
        if ord == "nuc":
            r = vector_norm(S, 1, -1)
        elif S._shape[-1] == 0 and ord == -2:
            raise IndexError("amin(): Expected reduction dim -1 to have non-zero size.")
        else:
            r = vector_norm(S, math.inf if ord == 2 else -math.inf, -1) if S._shape[-1] else (
                vector_norm(S, 1, -1))
        if keepdim:
            for d in sorted((d0, d1)):
                r = r.unsqueeze(d)
        return write_out(out, r)
    if isinstance(ord, (int, float)) and not isinstance(ord, bool) and abs(ord) in (1, math.inf):
        # max/min over one dim of the 1-norms along the other
        sum_dim, max_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
        sums = vector_norm(A, 1, sum_dim, True, dtype=dtype)
        if sums._shape[max_dim] == 0:
            if ord < 0:
                kept = max_dim - (1 if sum_dim < max_dim else 0)
                raise IndexError(f"amin(): Expected reduction dim {kept} to have non-zero size.")
            r = sum(sums, max_dim, keepdim=True)  # zeros: the max over nothing of norms
        else:
            r = vector_norm(sums, math.inf if ord > 0 else -math.inf, max_dim, True)
        if not keepdim:
            r = r.squeeze(max(d0, d1)).squeeze(min(d0, d1))
        return write_out(out, r)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: _dtype.dtype | None = None, out: Tensor | None = None) -> Tensor:
    """A vector norm or a matrix norm: a matrix norm for a string ``ord``, a 2-element
    ``dim``, or a 2-d input with ``ord`` and no ``dim``; otherwise a vector norm (the 2-norm of
    everything when neither ``ord`` nor ``dim`` is given)."""
    if dim is not None and not isinstance(dim, int):
        dim = tuple(dim)
    if dim is None and ord is not None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if isinstance(ord, str) or (isinstance(dim, tuple) and len(dim) == 2):
        return matrix_norm(A, "fro" if ord is None else ord, dim if dim is not None else (-2, -1),
                           keepdim, dtype=dtype, out=out)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)


# -- decompositions and solvers: aten operators ----------------------------------------------
#
# Each decomposition is an aten operator: a CompositeExplicitAutograd kernel that computes on a
# host copy with numpy's LAPACK bindings (in the input's precision, batch by batch), a Meta
# kernel that only lays out the results, and a derivative formula (autograd/_formulas/
# linalg.py). One layout function per operator serves both kernels, so the meta device gives
# the real results' shapes, dtypes and strides by construction. Matrices come out batched
# column-major (each matrix transposed in memory), as LAPACK writes them and PyTorch returns
# them; vectors and scalars come out contiguous.

# shape, dtype, column-major (or the strides themselves, for a result that is a view of a
# larger work array)
Layout = tuple[tuple[int, ...], _dtype.dtype, "bool | tuple[int, ...]"]


def _column_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Strides of a batch of matrices each stored column by column."""
    t = contiguous_strides(shape[:-2] + (shape[-1], shape[-2]))
    return t[:-2] + (t[-1], t[-2])


def _new(shape: tuple[int, ...], dt: _dtype.dtype, dev: _device,
         column_major: bool | tuple[int, ...]) -> Tensor:
    shape = tuple(shape)
    if isinstance(column_major, tuple):
        strides = column_major
    elif not column_major or len(shape) < 2:
        return new_tensor(shape, dt, dev)
    else:
        strides = _column_major_strides(shape)
    storage = _storage.allocate(storage_extent(shape, strides) * dt.itemsize, dev)
    return Tensor._make(storage, shape, strides, 0, dt, dev)


def _result(values: Any, layout: Layout, dev: _device) -> Tensor:
    """A new tensor of ``layout`` on ``dev`` holding the numpy ``values``."""
    shape, dt, column_major = layout
    arr = np.asarray(values)
    if not dt.is_complex and np.iscomplexobj(arr):
        arr = arr.real
    host = _new(shape, dt, _CPU, column_major)
    if host.numel():
        store(host, arr.reshape(shape))
    return host if dev.type == "cpu" else to_device(host, dev)


def _results(values: Sequence[Any], layouts: Sequence[Layout], dev: _device) -> tuple[Any, ...]:
    return tuple(_result(v, lay, dev) for v, lay in zip(values, layouts))


def _meta(layouts_of: Any) -> Any:
    """The Meta kernel of an operator whose results ``layouts_of(*args, **kwargs)`` lays
    out."""

    def kernel(*args: Any, **kwargs: Any) -> Any:
        dev = next(a._device for a in args if isinstance(a, Tensor))
        outs = tuple(_new(*lay[:2], dev, lay[2]) for lay in layouts_of(*args, **kwargs))
        return outs[0] if len(outs) == 1 else outs

    return kernel


def _real(dt: _dtype.dtype) -> _dtype.dtype:
    return dt.to_real() if dt.is_complex else dt


_EMPTY_SHAPE = (0,)


# inverse, determinants -----------------------------------------------------------------------


def _inv_layouts(A: Tensor) -> list[Layout]:
    _check_matrix("linalg.inv", A, square=True)
    _check_float("linalg.inv", A)
    return [(tuple(A._shape), A._dtype, True)]


def _inv_kernel(A: Tensor) -> Tensor:
    (layout,) = _inv_layouts(A)
    arr = _host(A)
    if arr.size == 0:
        return _result(arr, layout, A._device)
    try:
        result = np.linalg.inv(arr)
    except np.linalg.LinAlgError:
        result = None
    index, pivot = _singular_index(arr)
    if result is None or pivot:
        raise _batch_error("linalg.inv", arr, index, f"The diagonal element {pivot or 1} is "
                           "zero, the inversion could not be completed because the input matrix "
                           "is singular.")
    return _result(result, layout, A._device)


def inv(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The inverse of square matrices (batched). Raises :class:`LinAlgError` when singular."""
    _check_matrix("linalg.inv", A, square=True)
    return write_out(out, _OPS["linalg_inv"](A))


def _det_layouts(A: Tensor) -> list[Layout]:
    _check_matrix("linalg.det", A, square=True)
    _check_float("linalg.det", A)
    return [(tuple(A._shape[:-2]), A._dtype, False)]


def _det_kernel(A: Tensor) -> Tensor:
    (layout,) = _det_layouts(A)
    arr = _host(A)
    result = np.linalg.det(arr) if arr.size else np.ones(arr.shape[:-2], arr.dtype)
    return _result(result, layout, A._device)


def det(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The determinant of square matrices (batched)."""
    _check_matrix("linalg.det", A, square=True)
    return write_out(out, _OPS["linalg_det"](A))


def _slogdet_layouts(A: Tensor) -> list[Layout]:
    _check_matrix("linalg.slogdet", A, square=True)
    _check_float("linalg.slogdet", A)
    batch = tuple(A._shape[:-2])
    return [(batch, A._dtype, False), (batch, _real(A._dtype), False)]


def _slogdet_kernel(A: Tensor) -> tuple[Tensor, Tensor]:
    layouts = _slogdet_layouts(A)
    arr = _host(A)
    if arr.size:
        sign, logabs = np.linalg.slogdet(arr)
    else:
        sign, logabs = np.ones(arr.shape[:-2], arr.dtype), np.zeros(arr.shape[:-2])
    return _results((sign, logabs), layouts, A._device)  # type: ignore[return-value]


def slogdet(A: Tensor, *, out: Any = None) -> Any:
    """``(sign, logabsdet)`` with ``det = sign * exp(logabsdet)``; sign 0 and logabsdet -inf
    for a singular matrix; complex inputs get a complex sign."""
    _check_matrix("linalg.slogdet", A, square=True)
    return _SlogdetResult(*_OPS["linalg_slogdet"](A))


def logdet(A: Tensor) -> Tensor:
    """``log(det(A))``: NaN for a negative (real) determinant, -inf for zero."""
    sign, logabs = slogdet(A)
    if not A._dtype.is_complex:  # differentiable through logabsdet
        return _ew.where(sign < 0, math.nan, _ew.where(sign == 0, -math.inf, logabs))
    # log det = log|det| + log(sign), sign on the unit circle (0 for a singular matrix)
    return _ew.where(sign == 0, complex(-math.inf, 0.0),
                       logabs.to(A._dtype) + _ew.log(sign))


# solve -----------------------------------------------------------------------------------------


def _solve_shapes(fn: str, A: Tensor, B: Tensor, left: bool) -> bool:
    """Whether ``B`` is a (batch of) vector(s) for ``A X = B``."""
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B._shape == A._shape[:-1])
    n = A._shape[-1]
    rows = B._shape[-1] if vector else (B._shape[-2] if left else B._shape[-1])
    if rows != n:
        eq = "AX = B" if left else "XA = B"
        b = f"{B._shape[-2]}x{B._shape[-1]}" if B.ndim >= 2 else f"{B._shape[-1]}"
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation {eq} "
                           f"({A._shape[-2]}x{A._shape[-1]} and {b})")
    return vector


def _solve_layouts(A: Tensor, B: Tensor, *, left: bool = True) -> list[Layout]:
    _check_matrix("linalg.solve", A, square=True)
    _check_float("linalg.solve", A)
    if A._dtype is not B._dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {scalar_type_name(A._dtype)} and B of type "
                           f"{scalar_type_name(B._dtype)} instead")
    if _solve_shapes("linalg.solve", A, B, left):
        batch = tuple(broadcast_shapes(A._shape[:-2], B._shape[:-1]))
        # PyTorch solves a batch of vectors as one matrix, the last batch dim its columns:
        # (*batch, n) comes out column-major over its last two dims
        return [(batch + (A._shape[-1],), A._dtype, bool(batch))]
    batch = tuple(broadcast_shapes(A._shape[:-2], B._shape[:-2]))
    # X A = B is solved as A^T X^T = B^T: X comes out transposed from LAPACK's layout
    return [(batch + tuple(B._shape[-2:]), A._dtype, left)]


def _solve_kernel(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    (layout,) = _solve_layouts(A, B, left=left)
    vector = _solve_shapes("linalg.solve", A, B, left)
    a, b = _host(A), _host(B)
    if vector:
        b = b[..., None]
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    batch = tuple(broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    if a.size and b.size:
        try:
            x = np.linalg.solve(a, b)
        except np.linalg.LinAlgError:
            x = None
        if x is None or _singular_index(a)[1]:
            raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix "
                              "is singular.")
    else:
        x = np.zeros(b.shape, a.dtype)
    if not left:
        x = np.swapaxes(x, -1, -2)
    if vector:
        x = x[..., 0]
    return _result(x, layout, A._device)


def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Tensor | None = None) -> Tensor:
    """The solution X of ``A X = B`` (``X A = B`` with ``left=False``) for square ``A``;
    batch dims broadcast, and ``B`` may be a (batch of) vector(s)."""
    _check_matrix("linalg.solve", A, square=True)
    return write_out(out, _OPS["linalg_solve"](A, B, left=left))


# triangular solve ----------------------------------------------------------------------------


def _solve_triangular_layouts(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                              unitriangular: bool = False) -> list[Layout]:
    _check_matrix("linalg.solve_triangular", A, square=True)
    _check_float("linalg.solve_triangular", A)
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    if A._dtype is not B._dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, "
                           f"but found A of type {scalar_type_name(A._dtype)} and B of type "
                           f"{scalar_type_name(B._dtype)} instead")
    n = A._shape[-1]
    if (B._shape[-2] if left else B._shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {eq} ({n}x{n} and {B._shape[-2]}x{B._shape[-1]})")
    batch = tuple(broadcast_shapes(A._shape[:-2], B._shape[:-2]))
    return [(batch + tuple(B._shape[-2:]), A._dtype, left)]


def _substitute(a: np.ndarray, b: np.ndarray, upper: bool) -> np.ndarray:
    """X with ``a @ X = b`` for triangular ``a`` (..., n, n), by substitution row by row (a
    zero on the diagonal gives inf/NaN, as LAPACK's trtrs does, rather than an error)."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(a, b))
    rows = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in rows:
            done = slice(i + 1, n) if upper else slice(0, i)
            rest = np.einsum("...j,...jk->...k", a[..., i, done], x[..., done, :])
            x[..., i, :] = (b[..., i, :] - rest) / a[..., i, i, None]
    return x


def _solve_triangular_kernel(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                             unitriangular: bool = False) -> Tensor:
    (layout,) = _solve_triangular_layouts(A, B, upper=upper, left=left,
                                          unitriangular=unitriangular)
    a, b = _host(A), _host(B)
    a = np.triu(a) if upper else np.tril(a)  # the other triangle is never read
    if unitriangular:
        a = a.copy()
        a[..., range(a.shape[-1]), range(a.shape[-1])] = 1
    if left:
        x = _substitute(a, b, upper)
    else:  # X A = B  <=>  A^T X^T = B^T, A^T triangular the other way
        x = np.swapaxes(_substitute(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2),
                                    not upper), -1, -2)
    return _result(x, layout, A._device)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out: Tensor | None = None) -> Tensor:
    """The solution X of ``A X = B`` (``X A = B`` with ``left=False``) for triangular ``A``
    (the ``upper`` or lower triangle is read; ``unitriangular`` takes its diagonal as ones);
    batch dims broadcast."""
    _check_matrix("linalg.solve_triangular", A, square=True)
    return write_out(out, _OPS["linalg_solve_triangular"](A, B, upper=upper, left=left,
                                                          unitriangular=unitriangular))


# cholesky, qr --------------------------------------------------------------------------------


def _cholesky_layouts(A: Tensor, *, upper: bool = False) -> list[Layout]:
    _check_matrix("linalg.cholesky", A, square=True)
    _check_float("linalg.cholesky", A)
    return [(tuple(A._shape), A._dtype, True)]


def _cholesky_kernel(A: Tensor, *, upper: bool = False) -> Tensor:
    (layout,) = _cholesky_layouts(A, upper=upper)
    arr = _host(A)
    if upper:
        arr = np.conj(np.swapaxes(arr, -1, -2))
    flat = arr.reshape((-1,) + arr.shape[-2:])
    factors = np.empty_like(flat)
    for i, m in enumerate(flat):
        try:
            factors[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            order = next(k for k in range(1, m.shape[0] + 1)
                         if not _is_positive_definite(m[:k, :k]))
            raise _batch_error("linalg.cholesky", arr, i, f"The factorization could not be "
                               f"completed because the input is not positive-definite (the "
                               f"leading minor of order {order} is not positive-definite)."
                               ) from None
    result = factors.reshape(arr.shape)
    if upper:
        result = np.conj(np.swapaxes(result, -1, -2))
    return _result(result, layout, A._device)


def cholesky(A: Tensor, *, upper: bool = False, out: Tensor | None = None) -> Tensor:
    """The Cholesky factor L (lower, ``A = L L^H``) of Hermitian positive-definite matrices,
    read from the lower triangle of ``A``; ``upper=True`` reads the upper one and returns
    ``U = L^H``."""
    _check_matrix("linalg.cholesky", A, square=True)
    return write_out(out, _OPS["linalg_cholesky"](A, upper=upper))


def _is_positive_definite(m: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(m)
    except np.linalg.LinAlgError:
        return False
    return True


def _qr_layouts(A: Tensor, mode: str = "reduced") -> list[Layout]:
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _check_matrix("linalg.qr", A)
    _check_float("linalg.qr", A)
    batch, (m, n) = tuple(A._shape[:-2]), tuple(A._shape[-2:])
    k = m if mode == "complete" else min(m, n)
    q_shape = _EMPTY_SHAPE if mode == "r" else batch + (m, k)
    return [(q_shape, A._dtype, True), (batch + (k, n), A._dtype, True)]


def _qr_kernel(A: Tensor, mode: str = "reduced") -> tuple[Tensor, Tensor]:
    layouts = _qr_layouts(A, mode)
    arr = _host(A)
    m, n = arr.shape[-2:]
    k = m if mode == "complete" else min(m, n)
    if arr.size:
        q, r = np.linalg.qr(arr, mode="complete" if mode == "complete" else "reduced")
    else:
        batch = arr.shape[:-2]
        q = np.zeros(batch + (m, k), arr.dtype)
        q[..., range(min(m, k)), range(min(m, k))] = 1
        r = np.zeros(batch + (k, n), arr.dtype)
    if mode == "r":
        q = np.zeros(_EMPTY_SHAPE, arr.dtype)
    return _results((q, r), layouts, A._device)  # type: ignore[return-value]


def qr(A: Tensor, mode: str = "reduced", *, out: Any = None) -> Any:
    """The QR decomposition ``A = Q R`` (Q with orthonormal columns, R upper triangular);
    ``mode`` "reduced" (k = min(m, n) columns), "complete" (square Q) or "r" (R only; Q is
    an empty tensor)."""
    _check_matrix("linalg.qr", A)
    return _QRResult(*_OPS["linalg_qr"](A, mode))


# svd -----------------------------------------------------------------------------------------


def _svd_layouts(A: Tensor, full_matrices: bool = False, compute_uv: bool = True, *,
                 driver: str | None = None) -> list[Layout]:
    _check_matrix("linalg.svd", A)
    _check_float("linalg.svd", A)
    batch, (m, n) = tuple(A._shape[:-2]), tuple(A._shape[-2:])
    k = min(m, n)
    um, vn = (m, n) if full_matrices else (k, k)
    u_shape = batch + (m, um) if compute_uv else _EMPTY_SHAPE
    vh_shape = batch + (vn, n) if compute_uv else _EMPTY_SHAPE
    return [(u_shape, A._dtype, True), (batch + (k,), _real(A._dtype), False),
            (vh_shape, A._dtype, True)]


def _svd_kernel(A: Tensor, full_matrices: bool = False, compute_uv: bool = True, *,
                driver: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    layouts = _svd_layouts(A, full_matrices, compute_uv)
    arr = _host(A)
    m, n = arr.shape[-2:]
    k = min(m, n)
    batch = arr.shape[:-2]
    none = np.zeros(_EMPTY_SHAPE, arr.dtype)
    if not arr.size:
        s = np.zeros(batch + (k,))
        if not compute_uv:
            return _results((none, s, none), layouts, A._device)  # type: ignore[return-value]
        um, vn = (m, n) if full_matrices else (k, k)
        u = np.zeros(batch + (m, um), arr.dtype)
        u[..., range(min(m, um)), range(min(m, um))] = 1
        vh = np.zeros(batch + (vn, n), arr.dtype)
        vh[..., range(min(vn, n)), range(min(vn, n))] = 1
        return _results((u, s, vh), layouts, A._device)  # type: ignore[return-value]
    if not compute_uv:
        s = np.linalg.svd(arr, compute_uv=False)
        return _results((none, s, none), layouts, A._device)  # type: ignore[return-value]
    u, s, vh = np.linalg.svd(arr, full_matrices=full_matrices)
    return _results((u, s, vh), layouts, A._device)  # type: ignore[return-value]


def _check_driver(driver: str | None) -> None:
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")


def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None,
        out: Any = None) -> Any:
    """The singular value decomposition ``A = U diag(S) Vh`` (S real, descending);
    ``full_matrices=False`` gives the reduced U (m, k) and Vh (k, n)."""
    _check_driver(driver)
    _check_matrix("linalg.svd", A)
    return _SVDResult(*_OPS["_linalg_svd"](A, full_matrices, True))


def svd_legacy(A: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """``torch.svd``: (U, S, V) with V, not Vh; without ``compute_uv`` U and V are zeros of
    the full shapes."""
    _check_matrix("linalg.svd", A)
    if not compute_uv:
        s = svdvals(A)
        m, n = A._shape[-2:]
        batch = tuple(A._shape[:-2])
        return _LegacySVDResult(_fac.zeros(batch + (m, m), dtype=A._dtype, device=A._device),
                                s, _fac.zeros(batch + (n, n), dtype=A._dtype,
                                               device=A._device))
    u, s, vh = _OPS["_linalg_svd"](A, not some, True)
    return _LegacySVDResult(u, s, _mH(vh))


def _wants_grad(A: Tensor) -> bool:
    """Whether a backward may need what only the full decomposition has (its vectors)."""
    return A.requires_grad and _config.is_grad_enabled()


def svdvals(A: Tensor, *, driver: str | None = None, out: Tensor | None = None) -> Tensor:
    """The singular values of ``A`` (real, descending), shape (..., min(m, n))."""
    _check_matrix("linalg.svd", A)
    # the vectors only when a backward will need them, as PyTorch does
    return write_out(out, _OPS["_linalg_svd"](A, False, _wants_grad(A))[1])


# eigh ----------------------------------------------------------------------------------------


def _check_eigh(fn: str, A: Tensor, UPLO: str) -> None:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _check_matrix(fn, A, square=True)
    if not (A._dtype.is_floating_point or A._dtype.is_complex) or A._dtype in (
            _dtype.float16, _dtype.bfloat16):
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for "
                                  f"'{scalar_type_name(A._dtype)}'")


def _eigh_host(fn: str, A: Tensor, UPLO: str, vectors: bool) -> Any:
    _check_eigh(fn, A, UPLO)
    arr = _host(A)
    n = arr.shape[-1]
    real = np.zeros((), arr.dtype).real.dtype
    if not arr.size:
        w = np.zeros(arr.shape[:-1], real)
        v = np.broadcast_to(np.eye(n, dtype=arr.dtype), arr.shape)
        return (w, v) if vectors else w
    if vectors:
        return np.linalg.eigh(arr, UPLO=UPLO)
    return np.linalg.eigvalsh(arr, UPLO=UPLO)


def _eigh_layouts(A: Tensor, UPLO: str = "L", compute_v: bool = True) -> list[Layout]:
    _check_eigh("linalg.eigh", A, UPLO)
    v_shape = tuple(A._shape) if compute_v else _EMPTY_SHAPE
    return [(tuple(A._shape[:-1]), _real(A._dtype), False), (v_shape, A._dtype, True)]


def _eigh_kernel(A: Tensor, UPLO: str = "L", compute_v: bool = True) -> tuple[Tensor, Tensor]:
    layouts = _eigh_layouts(A, UPLO, compute_v)
    if compute_v:
        w, v = _eigh_host("linalg.eigh", A, UPLO, True)
    else:
        w = _eigh_host("linalg.eigh", A, UPLO, False)
        v = np.zeros(_EMPTY_SHAPE)
    return _results((w, v), layouts, A._device)  # type: ignore[return-value]


def eigh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Any:
    """Eigenvalues (real, ascending) and eigenvectors (columns) of Hermitian matrices, read from
    the ``UPLO`` ("L" or "U") triangle."""
    _check_eigh("linalg.eigh", A, UPLO)
    return _EighResult(*_OPS["_linalg_eigh"](A, UPLO, True))


def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Tensor | None = None) -> Tensor:
    """The eigenvalues (real, ascending) of Hermitian matrices."""
    _check_eigh("linalg.eigh", A, UPLO)
    return write_out(out, _OPS["_linalg_eigh"](A, UPLO, _wants_grad(A))[0])


# pinv, lstsq, matrix_rank --------------------------------------------------------------------


def _tolerances(A: Tensor, atol: Any, rtol: Any, s_max: np.ndarray) -> np.ndarray:
    """max(atol, rtol * largest singular value): PyTorch's rule, where a missing rtol is
    eps * max(m, n) unless atol is given and positive."""
    def value(x: Any) -> Any:
        return _host(x) if isinstance(x, Tensor) else x

    atol, rtol = value(atol), value(rtol)
    if rtol is None:
        positive_atol = atol is not None and np.all(np.asarray(atol) > 0)
        eps = np.finfo(np.zeros((), _NP_REAL[_real(A._dtype)]).dtype).eps
        rtol = 0.0 if positive_atol else eps * max(A._shape[-2], A._shape[-1])
    return np.maximum(0.0 if atol is None else atol, rtol * s_max)


_NP_REAL = {_dtype.float32: np.float32, _dtype.float64: np.float64,
            _dtype.float16: np.float16, _dtype.bfloat16: np.float32}


def _check_pinv(A: Tensor) -> None:
    if not (A._dtype in (_dtype.float32, _dtype.float64) or A._dtype.is_complex) or A.ndim < 2:
        raise RuntimeError(f"linalg.pinv({scalar_type_name(A._dtype)}{list(A._shape)}): "
                           "expected a tensor with 2 or more dimensions of float, double, cfloat "
                           "or cdouble types")


def _pinv_layouts(A: Tensor, *, atol: Any = None, rtol: Any = None,
                  hermitian: bool = False) -> list[Layout]:
    _check_pinv(A)
    return [(tuple(A._shape[:-2]) + (A._shape[-1], A._shape[-2]), A._dtype, False)]


def _pinv_kernel(A: Tensor, *, atol: Any = None, rtol: Any = None,
                 hermitian: bool = False) -> Tensor:
    (layout,) = _pinv_layouts(A)
    arr = _host(A)
    if hermitian:
        w, v = _eigh_host("linalg.eigh", A, "L", True)
        mags = np.abs(w)
        s_max = mags.max(axis=-1, initial=0.0)
        cut = np.asarray(_tolerances(A, atol, rtol, s_max))[..., None]
        with np.errstate(divide="ignore"):
            inv_w = np.where(mags > cut, 1 / np.where(w == 0, 1, w), 0)
        result = (v * inv_w[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2))
    elif arr.size == 0:
        result = np.zeros(layout[0], arr.dtype)
    else:
        u, s, vh = np.linalg.svd(arr, full_matrices=False)
        s_max = s.max(axis=-1, initial=0.0)
        cut = np.asarray(_tolerances(A, atol, rtol, s_max))[..., None]
        inv_s = np.where(s > cut, 1 / np.where(s == 0, 1, s), 0)
        result = np.conj(np.swapaxes(vh, -1, -2)) @ (inv_s[..., :, None] *
                                                       np.conj(np.swapaxes(u, -1, -2)))
    return _result(result, layout, A._device)


def pinv(A: Tensor, rcond: Any = None, hermitian: bool = False, *, atol: Any = None,
         rtol: Any = None, out: Tensor | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse, from the SVD (the eigendecomposition when
    ``hermitian``), dropping singular values at or below ``max(atol, rtol * max(S))``
    (``rcond`` is the older name of ``rtol``)."""
    _check_pinv(A)
    if rcond is not None:
        rtol = rcond
    tensors = isinstance(atol, Tensor) or isinstance(rtol, Tensor)
    op = _OPS["linalg_pinv.atol_rtol_tensor" if tensors else "linalg_pinv.atol_rtol_float"]
    return write_out(out, op(A, atol=atol, rtol=rtol, hermitian=hermitian))


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_checks(A: Tensor, B: Tensor, driver: str) -> bool:
    """Check the arguments; whether ``B`` is a (batch of) vector(s)."""
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    if A._dtype not in (_dtype.float32, _dtype.float64) and not A._dtype.is_complex:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A._dtype is not B._dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {scalar_type_name(A._dtype)} and "
                           f"other's dtype {scalar_type_name(B._dtype)}")
    _check_matrix("torch.linalg.lstsq", A)
    vector = B.ndim == A.ndim - 1
    rows = B._shape[-1] if vector else B._shape[-2]
    if A._shape[-2] != rows:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    return vector


def _lstsq_layouts(A: Tensor, B: Tensor, rcond: float | None = None, *,
                   driver: str | None = None, full_rank: bool = True) -> list[Layout]:
    """The results' layouts; the residuals' depend on the rank, assumed full on meta (which
    has no values), as the common case."""
    driver = driver or "gelsy"
    vector = _lstsq_checks(A, B, driver)
    m, n = A._shape[-2:]
    k = 1 if vector else B._shape[-1]
    batch = tuple(broadcast_shapes(A._shape[:-2], B._shape[:-1] if vector else B._shape[:-2]))
    real = _real(A._dtype)
    # LAPACK overwrites B, widened to max(m, n) rows, with the solution: PyTorch's solution
    # is the first n rows of that column-major array
    rows = max(m, n)
    strides = tuple(s * rows * k for s in contiguous_strides(batch)) + (1, rows)
    solution = (batch + (n,), A._dtype, strides[:-1]) if vector else \
        (batch + (n, k), A._dtype, strides)
    with_residuals = m > n and full_rank and driver != "gelsy"
    return [solution, (batch + (k,) if with_residuals else _EMPTY_SHAPE, real, False),
            (_EMPTY_SHAPE if driver == "gels" else batch, _dtype.int64, False),
            (batch + (min(m, n),) if driver in ("gelsd", "gelss") else _EMPTY_SHAPE, real,
             False)]


def _lstsq_kernel(A: Tensor, B: Tensor, rcond: float | None = None, *,
                  driver: str | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    driver = driver or "gelsy"
    vector = _lstsq_checks(A, B, driver)
    a, b = _host(A), _host(B)
    if vector:
        b = b[..., None]
    batch = tuple(broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    m, n = a.shape[-2:]
    k = b.shape[-1]
    count = int(np.prod(batch, dtype=np.int64))  # (-1 cannot be inferred for an empty matrix)
    a = np.broadcast_to(a, batch + (m, n)).reshape((count, m, n))
    b = np.broadcast_to(b, batch + (m, k)).reshape((count, m, k))
    real = np.zeros((), a.dtype).real.dtype
    if rcond is None:
        rcond = float(np.finfo(real).eps) * max(m, n)
    solutions = np.zeros((a.shape[0], n, k), a.dtype)
    ranks = np.zeros(a.shape[0], np.int64)
    svals = np.zeros((a.shape[0], min(m, n)), real)
    residuals = np.zeros((a.shape[0], k), real)
    for i in range(a.shape[0]):
        if a[i].size == 0:
            continue
        x, _, rank, s = np.linalg.lstsq(a[i], b[i], rcond=rcond)
        solutions[i], ranks[i], svals[i] = x, rank, s
        residuals[i] = (np.abs(a[i] @ x - b[i]) ** 2).sum(axis=0)
    full_rank = bool(np.all(ranks == min(m, n)))
    layouts = _lstsq_layouts(A, B, rcond, driver=driver, full_rank=full_rank)
    values = (solutions, residuals, ranks, svals)
    return tuple(_result(v if lay[0] != _EMPTY_SHAPE else np.zeros(_EMPTY_SHAPE), lay,
                         A._device)
                 for v, lay in zip(values, layouts))  # type: ignore[return-value]


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *,
          driver: str | None = None) -> Any:
    """The least-squares solution of ``A X = B`` with ``(solution, residuals, rank,
    singular_values)`` as PyTorch fills them per driver (CPU default "gelsy"): residuals when
    m > n and A has full rank (not for gelsy), rank except for gels, singular values for
    gelsd/gelss; the others are empty tensors."""
    vector = _lstsq_checks(A, B, driver or "gelsy")
    solution, res, rank, sv = _OPS["linalg_lstsq"](A, B, rcond, driver=driver)
    if res.numel() and _config.is_grad_enabled() and (A.requires_grad or B.requires_grad):
        # the residuals are differentiable too, as in PyTorch (the singular values are not):
        # recompute them from differentiable pieces (their values are those numpy gave)
        x = solution.unsqueeze(-1) if vector else solution
        b = B.unsqueeze(-1) if vector else B
        res = ((A @ x - b).abs() ** 2).sum(-2).reshape(res.shape)
    return _LstsqResult(solution, res, rank, sv)


def _matrix_rank_layouts(A: Tensor, *, atol: Any = None, rtol: Any = None,
                         hermitian: bool = False) -> list[Layout]:
    if A._dtype not in (_dtype.float32, _dtype.float64) and not A._dtype.is_complex:
        raise RuntimeError("This function doesn't handle types other than float and double")
    _check_matrix("linalg.matrix_rank", A)
    return [(tuple(A._shape[:-2]), _dtype.int64, False)]


def _matrix_rank_kernel(A: Tensor, *, atol: Any = None, rtol: Any = None,
                        hermitian: bool = False) -> Tensor:
    (layout,) = _matrix_rank_layouts(A)
    if hermitian:
        s = np.abs(_eigh_host("linalg.eigh", A, "L", False))
    else:
        arr = _host(A)
        k = min(arr.shape[-2:])
        s = np.linalg.svd(arr, compute_uv=False) if arr.size else np.zeros(
            arr.shape[:-2] + (k,))
    s_max = s.max(axis=-1, initial=0.0)
    cut = np.asarray(_tolerances(A, atol, rtol, s_max))[..., None]
    rank = (s > cut).sum(axis=-1).astype(np.int64)
    return _result(rank, layout, A._device)


def matrix_rank(A: Tensor, tol: Any = None, hermitian: bool = False, *, atol: Any = None,
                rtol: Any = None, out: Tensor | None = None) -> Tensor:
    """The number of singular values (|eigenvalues| when ``hermitian``) above
    ``max(atol, rtol * max(S))``; ``tol`` is the older spelling of ``atol`` with rtol 0."""
    _matrix_rank_layouts(A)
    if tol is not None:
        atol, rtol = tol, 0.0
    tensors = isinstance(atol, Tensor) or isinstance(rtol, Tensor)
    op = _OPS["linalg_matrix_rank.atol_rtol_tensor" if tensors
              else "linalg_matrix_rank.atol_rtol_float"]
    return write_out(out, op(A, atol=atol, rtol=rtol, hermitian=hermitian))


# the _ex forms, eig, LU ----------------------------------------------------------------------


def _info_layout(A: Tensor) -> Layout:
    return (tuple(A._shape[:-2]), _dtype.int32, False)


def _inv_ex_layouts(A: Tensor, *, check_errors: bool = False) -> list[Layout]:
    return _inv_layouts(A) + [_info_layout(A)]


def _inv_ex_kernel(A: Tensor, *, check_errors: bool = False) -> tuple[Tensor, Tensor]:
    layouts = _inv_ex_layouts(A)
    arr = _host(A)
    flat = arr.reshape((-1,) + arr.shape[-2:])
    infos = np.array([_first_zero_pivot(m) for m in flat], np.int32)
    if check_errors and infos.any():
        index = int(np.argmax(infos > 0))
        raise _batch_error("linalg.inv_ex", arr, index, f"The diagonal element "
                           f"{infos[index]} is zero, the inversion could not be completed "
                           "because the input matrix is singular.")
    inverse = np.full_like(flat, np.nan)  # LAPACK leaves a singular matrix's result undefined
    for i, m in enumerate(flat):
        if not infos[i]:
            inverse[i] = np.linalg.inv(m)
    return _results((inverse, infos), layouts, A._device)  # type: ignore[return-value]


def inv_ex(A: Tensor, *, check_errors: bool = False, out: Any = None) -> Any:
    """``(inverse, info)``: the inverse of square matrices and, per matrix, LAPACK's ``info``
    (0, or the 1-based index of the first zero pivot of a singular matrix, whose inverse is
    then undefined). ``check_errors=True`` raises for a singular matrix instead."""
    _check_matrix("linalg.inv_ex", A, square=True)
    return _InvExResult(*_OPS["linalg_inv_ex"](A, check_errors=check_errors))


def _cholesky_ex_layouts(A: Tensor, *, upper: bool = False,
                         check_errors: bool = False) -> list[Layout]:
    return _cholesky_layouts(A) + [_info_layout(A)]


def _cholesky_ex_kernel(A: Tensor, *, upper: bool = False,
                        check_errors: bool = False) -> tuple[Tensor, Tensor]:
    layouts = _cholesky_ex_layouts(A)
    arr = _host(A)
    if upper:
        arr = np.conj(np.swapaxes(arr, -1, -2))
    flat = arr.reshape((-1,) + arr.shape[-2:])
    factors = np.zeros_like(flat)
    infos = np.zeros(flat.shape[0], np.int32)
    for i, m in enumerate(flat):
        try:
            factors[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            infos[i] = next(k for k in range(1, m.shape[0] + 1)
                            if not _is_positive_definite(m[:k, :k]))
            factors[i] = np.nan  # LAPACK leaves a failed factorization undefined
    if check_errors and infos.any():
        index = int(np.argmax(infos > 0))
        raise _batch_error("linalg.cholesky_ex", arr, index, f"The factorization could not be "
                           f"completed because the input is not positive-definite (the leading "
                           f"minor of order {infos[index]} is not positive-definite).")
    result = factors.reshape(arr.shape)
    if upper:
        result = np.conj(np.swapaxes(result, -1, -2))
    return _results((result, infos), layouts, A._device)  # type: ignore[return-value]


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False,
                out: Any = None) -> Any:
    """``(L, info)``: the Cholesky factor and, per matrix, LAPACK's ``info`` (0, or the order
    of the first leading minor that is not positive-definite, L then being undefined)."""
    _check_matrix("linalg.cholesky_ex", A, square=True)
    return _CholeskyExResult(*_OPS["linalg_cholesky_ex"](A, upper=upper,
                                                         check_errors=check_errors))


_COMPLEX_OF = {_dtype.float32: _dtype.complex64, _dtype.float64: _dtype.complex128,
               _dtype.complex64: _dtype.complex64, _dtype.complex128: _dtype.complex128}


def _eig_layouts(A: Tensor) -> list[Layout]:
    _check_matrix("linalg.eig", A, square=True)
    _check_float("linalg.eig", A)
    ct = _COMPLEX_OF[A._dtype]
    return [(tuple(A._shape[:-1]), ct, False), (tuple(A._shape), ct, True)]


def _eig_kernel(A: Tensor) -> tuple[Tensor, Tensor]:
    layouts = _eig_layouts(A)
    arr = _host(A)
    if arr.size:
        w, v = np.linalg.eig(arr)
    else:
        w, v = np.zeros(arr.shape[:-1]), np.zeros(arr.shape)
    return _results((w, v), layouts, A._device)  # type: ignore[return-value]


def eig(A: Tensor, *, out: Any = None) -> Any:
    """Eigenvalues and eigenvectors (columns, unit norm) of square matrices, always complex;
    their order and the vectors' phases are LAPACK's (PyTorch leaves them unspecified)."""
    _check_matrix("linalg.eig", A, square=True)
    return _EigResult(*_OPS["linalg_eig"](A))


def _eigvals_layouts(A: Tensor) -> list[Layout]:
    return _eig_layouts(A)[:1]


def _eigvals_kernel(A: Tensor) -> Tensor:
    (layout,) = _eigvals_layouts(A)
    arr = _host(A)
    return _result(np.linalg.eigvals(arr) if arr.size else np.zeros(arr.shape[:-1]), layout,
                   A._device)


def eigvals(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The eigenvalues of square matrices (complex)."""
    _check_matrix("linalg.eigvals", A, square=True)
    return write_out(out, _OPS["linalg_eigvals"](A))


def _lu_host(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """LU with partial pivoting of one (m, n) matrix, as LAPACK's getrf: the packed factors
    (unit-diagonal L below the diagonal, U on and above it), the 1-based pivots (row i was
    swapped with row pivots[i]) and ``info`` (the 1-based index of the first zero pivot)."""
    a = np.array(a)
    m, n = a.shape
    k = min(m, n)
    pivots = np.zeros(k, np.int32)
    info = 0
    for j in range(k):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        pivots[j] = p + 1
        if p != j:
            a[[j, p]] = a[[p, j]]
        if a[j, j] == 0:
            info = info or j + 1
            continue
        a[j + 1:, j] /= a[j, j]
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, pivots, info


def _lu_factor_ex_layouts(A: Tensor, *, pivot: bool = True,
                          check_errors: bool = False) -> list[Layout]:
    _check_matrix("torch.linalg.lu_factor_ex", A)
    _check_float("torch.linalg.lu_factor_ex", A)
    batch = tuple(A._shape[:-2])
    return [(tuple(A._shape), A._dtype, True),
            (batch + (min(A._shape[-2:]),), _dtype.int32, False), (batch, _dtype.int32, False)]


def _lu_check_pivot(pivot: bool) -> None:
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _lu_factor_ex_kernel(A: Tensor, *, pivot: bool = True,
                         check_errors: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    layouts = _lu_factor_ex_layouts(A)
    _lu_check_pivot(pivot)
    arr = _host(A)
    flat = arr.reshape((-1,) + arr.shape[-2:])
    parts = [_lu_host(m) for m in flat]
    infos = np.array([info for _, _, info in parts], np.int32)
    if check_errors and infos.any():
        index = int(np.argmax(infos > 0))
        raise _batch_error("torch.linalg.lu_factor_ex", arr, index, f"U[{infos[index]},"
                           f"{infos[index]}] is zero and using it on lu_solve would result in a "
                           "division by zero. If you still want to perform the factorization, "
                           "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
                           "pivot)")
    k = min(arr.shape[-2:])
    lu = np.array([f for f, _, _ in parts]).reshape(arr.shape) if parts else arr
    pivots = np.array([p for _, p, _ in parts], np.int32).reshape(arr.shape[:-2] + (k,))
    return _results((lu, pivots, infos), layouts, A._device)  # type: ignore[return-value]


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False,
                 out: Any = None) -> Any:
    """``(LU, pivots, info)``: the packed LU factorization with partial pivoting (L unit
    lower triangular below the diagonal, U on and above it), LAPACK's 1-based int32 pivots
    and ``info`` (the first zero pivot of U, 0 if none)."""
    _check_matrix("torch.linalg.lu_factor_ex", A)
    return _LUFactorExResult(*_OPS["linalg_lu_factor_ex"](A, pivot=pivot,
                                                          check_errors=check_errors))


def lu_factor(A: Tensor, *, pivot: bool = True, out: Any = None) -> Any:
    """``(LU, pivots)`` of :func:`lu_factor_ex`, raising for a singular matrix."""
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot, check_errors=True)
    return _LUFactorResult(LU, pivots)


def _lu_layouts(A: Tensor, *, pivot: bool = True) -> list[Layout]:
    _check_matrix("linalg.lu", A)
    _check_float("linalg.lu", A)
    batch, (m, n) = tuple(A._shape[:-2]), tuple(A._shape[-2:])
    k = min(m, n)
    return [(batch + (m, m), A._dtype, True), (batch + (m, k), A._dtype, True),
            (batch + (k, n), A._dtype, True)]


def _lu_kernel(A: Tensor, *, pivot: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    layouts = _lu_layouts(A)
    _lu_check_pivot(pivot)
    arr = _host(A)
    m, n = arr.shape[-2:]
    k = min(m, n)
    flat = arr.reshape((-1, m, n))
    Ps = np.zeros((flat.shape[0], m, m), arr.dtype)
    Ls = np.zeros((flat.shape[0], m, k), arr.dtype)
    Us = np.zeros((flat.shape[0], k, n), arr.dtype)
    for i, a in enumerate(flat):
        lu, pivots, _ = _lu_host(a)
        order = np.arange(m)
        for j, p in enumerate(pivots):  # apply the swaps in turn: A[order] = L U
            order[[j, p - 1]] = order[[p - 1, j]]
        Ps[i][order, np.arange(m)] = 1  # A = P L U with P[order[r], r] = 1
        Ls[i] = np.tril(lu[:, :k], -1) + np.eye(m, k, dtype=arr.dtype)
        Us[i] = np.triu(lu[:k, :])
    batch = arr.shape[:-2]
    return _results((Ps.reshape(batch + (m, m)), Ls.reshape(batch + (m, k)),
                     Us.reshape(batch + (k, n))), layouts, A._device)  # type: ignore[return-value]


def lu(A: Tensor, *, pivot: bool = True, out: Any = None) -> Any:
    """``(P, L, U)`` with ``A = P L U``: P a permutation matrix, L unit lower triangular
    (m, k), U upper triangular (k, n), k = min(m, n)."""
    _check_matrix("linalg.lu", A)
    return _LUResult(*_OPS["linalg_lu"](A, pivot=pivot))


def _define_decompositions() -> dict[str, _dispatch.Operator]:
    rows = {
        "linalg_inv": ("linalg_inv(Tensor A) -> Tensor", _inv_kernel, _inv_layouts),
        "linalg_det": ("linalg_det(Tensor A) -> Tensor", _det_kernel, _det_layouts),
        "linalg_slogdet": ("linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)",
                           _slogdet_kernel, _slogdet_layouts),
        "linalg_solve": ("linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor",
                         _solve_kernel, _solve_layouts),
        "linalg_cholesky": ("linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor",
                            _cholesky_kernel, _cholesky_layouts),
        "linalg_qr": ("linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)",
                      _qr_kernel, _qr_layouts),
        "_linalg_eigh": ("_linalg_eigh(Tensor A, str UPLO=\"L\", bool compute_v=True) -> "
                         "(Tensor eigenvalues, Tensor eigenvectors)", _eigh_kernel,
                         _eigh_layouts),
        "_linalg_svd": ("_linalg_svd(Tensor A, bool full_matrices=False, bool compute_uv=True, "
                        "*, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)", _svd_kernel,
                        _svd_layouts),
        "linalg_pinv.atol_rtol_float": (
            "linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, "
            "bool hermitian=False) -> Tensor", _pinv_kernel, _pinv_layouts),
        "linalg_pinv.atol_rtol_tensor": (
            "linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, "
            "bool hermitian=False) -> Tensor", _pinv_kernel, _pinv_layouts),
        "linalg_lstsq": ("linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, "
                         "str? driver=None) -> (Tensor solution, Tensor residuals, Tensor rank, "
                         "Tensor singular_values)", _lstsq_kernel, _lstsq_layouts),
        "linalg_matrix_rank.atol_rtol_float": (
            "linalg_matrix_rank.atol_rtol_float(Tensor self, *, float? atol=None, "
            "float? rtol=None, bool hermitian=False) -> Tensor", _matrix_rank_kernel,
            _matrix_rank_layouts),
        "linalg_matrix_rank.atol_rtol_tensor": (
            "linalg_matrix_rank.atol_rtol_tensor(Tensor input, *, Tensor? atol=None, "
            "Tensor? rtol=None, bool hermitian=False) -> Tensor", _matrix_rank_kernel,
            _matrix_rank_layouts),
    }
    rows.update({
        "linalg_inv_ex": ("linalg_inv_ex(Tensor A, *, bool check_errors=False) -> "
                          "(Tensor inverse, Tensor info)", _inv_ex_kernel, _inv_ex_layouts),
        "linalg_cholesky_ex": ("linalg_cholesky_ex(Tensor self, *, bool upper=False, "
                               "bool check_errors=False) -> (Tensor L, Tensor info)",
                               _cholesky_ex_kernel, _cholesky_ex_layouts),
        "linalg_eig": ("linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)",
                       _eig_kernel, _eig_layouts),
        "linalg_eigvals": ("linalg_eigvals(Tensor self) -> Tensor", _eigvals_kernel,
                           _eigvals_layouts),
        "linalg_lu_factor_ex": ("linalg_lu_factor_ex(Tensor A, *, bool pivot=True, "
                                "bool check_errors=False) -> (Tensor LU, Tensor pivots, "
                                "Tensor info)", _lu_factor_ex_kernel, _lu_factor_ex_layouts),
        "linalg_lu": ("linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, "
                      "Tensor U)", _lu_kernel, _lu_layouts),
        "linalg_solve_triangular": ("linalg_solve_triangular(Tensor self, Tensor B, *, "
                                    "bool upper, bool left=True, bool unitriangular=False) -> "
                                    "Tensor", _solve_triangular_kernel,
                                    _solve_triangular_layouts),
    })
    ops = _dispatch.define_aten({name: row[:2] for name, row in rows.items()})
    for name, (_schema, _kernel, layouts_of) in rows.items():
        ops[name].register(_dispatch.META, _meta(layouts_of))
    for name in ("linalg_matrix_rank.atol_rtol_float", "linalg_matrix_rank.atol_rtol_tensor"):
        not_differentiable(ops[name])
    return ops


_OPS = _define_decompositions()


def matrix_power(A: Tensor, n: int, *, out: Tensor | None = None) -> Tensor:
    """``A`` multiplied by itself ``n`` times (the identity for 0, powers of the inverse for
    negative ``n``), by repeated squaring."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    _check_matrix("linalg.matrix_power", A, square=True)
    if n == 0:
        # made by operators (a dispatch mode sees it), detached from A's graph
        result = _fac.zeros_like(A.detach(), memory_format=_layout.contiguous_format)
        fill_(result.diagonal(0, -2, -1), 1)
        if _config.is_grad_enabled() and A.requires_grad:
            # PyTorch's identity requires grad, with a zero gradient for A
            flag = _fac.ones((), dtype=_dtype.bool_, device=A.device)
            result = _ew.where(flag, result, A)
        return write_out(out, result)
    if n < 0:
        A, n = inv(A), -n
    if n == 1:
        return write_out(out, A.clone())
    result: Tensor | None = None
    base = A
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    assert result is not None
    return write_out(out, result)


def multi_dot(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """The product of a chain of matrices in the cheapest order; the first and last may be
    vectors (treated as a row and a column, the result losing that dim)."""
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    first, last = ts[0], ts[-1]
    if first.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{first.ndim}D")
    if last.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.ndim}D")
    for i, t in enumerate(ts[1:-1], 1):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    for i, t in enumerate(ts[1:], 1):
        if t._dtype is not first._dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {_CPP_NAMES[first._dtype._name]} and tensor {i} "
                               f"{_CPP_NAMES[t._dtype._name]}")
    if len(ts) == 2 and first.ndim == 1 and last.ndim == 1:
        return write_out(out, ATEN["dot"](first, last))
    mats = [first.unsqueeze(0) if first.ndim == 1 else first] + ts[1:-1] + [
        last.unsqueeze(1) if last.ndim == 1 else last]
    for i in range(len(mats) - 1):
        if mats[i]._shape[1] != mats[i + 1]._shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(ts[i]._shape)} and {list(ts[i + 1]._shape)} cannot be "
                               "multiplied")
    result = _chain(mats, _chain_order(mats), 0, len(mats) - 1)
    if last.ndim == 1:
        result = result.squeeze(1)
    if first.ndim == 1:
        result = result.squeeze(0)
    return write_out(out, result)


def _chain_order(mats: list[Tensor]) -> list[list[int]]:
    """The classic dynamic programme: split[i][j] is where the cheapest product of
    mats[i..j] splits."""
    dims = [m._shape[0] for m in mats] + [mats[-1]._shape[1]]
    n = len(mats)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def _chain(mats: list[Tensor], split: list[list[int]], i: int, j: int) -> Tensor:
    if i == j:
        return mats[i]
    s = split[i][j]
    return ATEN["mm"](_chain(mats, split, i, s), _chain(mats, split, s + 1, j))


def cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """Cross product of 3-vectors along ``dim`` (inputs of one ndim, broadcast)."""
    return write_out(out, ATEN["linalg_cross"](input, other, dim=dim))


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """``sum(conj(x) * y, dim)`` with broadcasting."""
    if x._dtype is not y._dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {scalar_type_name(x._dtype)} and y of type "
                           f"{scalar_type_name(y._dtype)} instead")
    shape = broadcast_shapes(x._shape, y._shape)
    d = wrap_dim(dim, len(shape))
    order = [i for i in range(len(shape)) if i != d] + [d]
    xs, ys = x.expand(shape).permute(order), y.expand(shape).permute(order)
    if len(shape) == 1:
        return write_out(out, vdot(xs, ys))
    # (..., 1, k) @ (..., k, 1)
    return write_out(out, matmul(xs.unsqueeze(-2).conj() if x._dtype.is_complex else
                                 xs.unsqueeze(-2), ys.unsqueeze(-1)).squeeze(-1).squeeze(-1))


# -- derivatives of the decompositions -------------------------------------------------------
#
# The rules themselves are in autograd/_formulas/linalg.py, keyed by the operators above; these
# are the pieces they share with the functions here.


def _mH(t: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims."""
    t = t.transpose(-2, -1)
    return t.conj() if t.is_complex() else t
