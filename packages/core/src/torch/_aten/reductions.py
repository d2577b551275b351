"""Reductions, scans, sorting and statistics: sum/mean/std/var, max/min with indices, cumsum,
sort/topk, unique, searchsorted, histc, bincount.

Two kinds of op live here. The ones a primitive computes (sum prod amax amin argmax argmin any
all, cumsum cumprod cummax cummin, sort topk searchsorted) are aten operators registered as
CompositeExplicitAutograd: core does the shared work once (dims, dtypes, allocation of a
"keepdim" output) and makes one primitive call. Everything else (mean, var, median, quantile,
unique, ...) is composite: written in other ops, so autograd and compile see through it. Ops of
other areas (elementwise math, gather, cat) come from their op modules, called below the
``__torch_function__`` layer as every composite's inner ops are.
"""

from __future__ import annotations

import builtins
import math
import operator
import sys
import types
import warnings
from typing import Any

from .._core import (
    config as _config,
    dispatch as _dispatch,
    dtype as _dtype,
    fast as _fast,
    plan as _plan,
    upcalls,
)
from .._core.alloc import PRIMS, check_dtype, new_tensor
from .._core.grad_mode import no_grad
from .._core.promotion import result_type
from .._core.tensor import Tensor, has_data, wrap_dim
from . import elementwise as _ew, factories as _fac, indexing as _idx, shape as _shape
from .arith import through_inplace_operator
from .convert import scalar_type_name, to_dtype, write_out

__all__ = [
    "aminmax", "all", "amax", "amin", "any", "argmax", "argmin", "argsort", "bincount",
    "bucketize", "count_nonzero", "cummax", "cummin", "cumprod", "cumsum", "diff", "histc",
    "kthvalue", "logcumsumexp", "logsumexp", "max", "mean", "median", "min", "mode", "msort",
    "nanmean", "nanmedian", "nanquantile", "nansum", "prod", "quantile", "return_types",
    "searchsorted", "sort", "std", "std_mean", "sum", "topk", "unique", "unique_consecutive",
    "var", "var_mean",
]


# -- torch.return_types -------------------------------------------------------------------


class _StructSeq(tuple):
    """A tuple with named fields, like PyTorch's ``torch.return_types.*`` structseqs:
    ``values, indices = torch.max(x, 0)`` and ``torch.max(x, 0).values`` both work."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __new__(cls, sequence: Any = ()) -> _StructSeq:
        values = tuple(sequence)
        if len(values) != len(cls._fields):
            raise TypeError(f"torch.return_types.{cls.__name__}() takes a "
                            f"{len(cls._fields)}-sequence ({len(values)}-sequence given)")
        return super().__new__(cls, values)

    def __repr__(self) -> str:
        body = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (tuple(self),))


def _structseq(name: str, fields: tuple[str, ...]) -> type[_StructSeq]:
    namespace: dict[str, Any] = {
        "__slots__": (), "__module__": "torch.return_types", "__qualname__": name,
        "_fields": fields, "n_fields": len(fields), "n_sequence_fields": len(fields),
        "n_unnamed_fields": 0,
    }
    for i, field in enumerate(fields):
        namespace[field] = property(operator.itemgetter(i), doc=f"Alias for field number {i}")
    return type(name, (_StructSeq,), namespace)


_VALUES_INDICES = ("values", "indices")
return_types = types.ModuleType(
    "torch.return_types", "The named tuples that ops with several results return.")
for _name in ("max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax",
              "cummin"):
    setattr(return_types, _name, _structseq(_name, _VALUES_INDICES))
return_types.aminmax = _structseq("aminmax", ("min", "max"))
sys.modules.setdefault("torch.return_types", return_types)


# -- shared helpers -----------------------------------------------------------------------


def _check_tensor(name: str, input: Any) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


# How PyTorch refuses complex inputs to the ops that order values (complex numbers have no
# order): the error type and message of each public function.
_UNORDERED: dict[str, tuple[type[Exception], str]] = {
    **{name: (RuntimeError, f"{name}(): does not support complex input")
       for name in ("max", "min", "argmax", "argmin")},
    **{name: (NotImplementedError, f'"{kernel}" not implemented for \'{{}}\'')
       for name, kernel in (("amax", "max_values_cpu"), ("amin", "min_values_cpu"),
                            ("aminmax", "aminmax_cpu"), ("median", "median_cpu"),
                            ("nanmedian", "median_cpu"), ("kthvalue", "kthvalue_cpu"),
                            ("mode", "mode_cpu"), ("cummax", "cummax_cpu"),
                            ("max_all", "max_all"), ("min_all", "min_all"),
                            ("cummin", "cummin_cpu"), ("searchsorted", "searchsorted_out_cpu"),
                            ("unique", "unique"), ("unique_consecutive", "unique_consecutive"))},
    "sort": (RuntimeError, "Sort does not support complex dtypes on CPU"),
    "topk": (RuntimeError, "topk does not support complex dtypes on CPU"),
}


def _check_ordered(name: str, *inputs: Any) -> None:
    """``_check_tensor`` for an op that orders values: complex inputs are refused."""
    _check_tensor(name, inputs[0])
    for t in inputs:
        if isinstance(t, Tensor) and t._dtype.is_complex:
            exc, message = _UNORDERED[name]
            raise exc(message.format(scalar_type_name(t._dtype)))


def _dims(dim: Any, ndim: int) -> list[int]:
    """The dims a reduction runs over, wrapped and sorted; ``None`` or ``()`` means all."""
    if dim is None:
        return list(range(ndim))
    given = list(dim) if isinstance(dim, (tuple, list)) else [dim]
    wrapped = [wrap_dim(d, ndim) for d in given]
    seen: set[int] = set()
    for d in wrapped:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    if ndim == 0:
        return []
    return sorted(wrapped) if given else list(range(ndim))


def _count(shape: tuple[int, ...], dims: list[int]) -> int:
    """How many elements each output element of a reduction over ``dims`` combines."""
    return math.prod(shape[d] for d in dims)


def _kept(shape: tuple[int, ...], dims: list[int]) -> tuple[int, ...]:
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _drop(t: Tensor, dims: list[int], keepdim: bool) -> Tensor:
    """A keepdim-shaped result, with the reduced dims removed unless ``keepdim``."""
    if keepdim or not dims:
        return t
    return t.reshape(tuple(s for i, s in enumerate(t._shape) if i not in dims))


def _reduce(prim: str, x: Tensor, dims: list[int], dt: _dtype.dtype, keepdim: bool) -> Tensor:
    """One reduction primitive over ``dims`` into a fresh ``dt`` tensor."""
    out = new_tensor(_kept(x._shape, dims), dt, x._device)
    getattr(PRIMS, prim)(out, x, dims)
    result = _drop(out, dims, keepdim)
    if _plan.recording is not None:  # the dispatcher is planning this call
        _plan.note(prim, [x], x._dtype, dt, {"dims": dims}, out)
    return result


def _require_nonempty(name: str, x: Tensor, dims: list[int], dim_given: bool,
                      hint: bool = True) -> None:
    """max/min/amax/amin/argmax/argmin have no identity: empty reductions are errors."""
    if x.numel() != 0:
        return
    if not dim_given:
        if hint:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                         "input.numel() == 0.")
    for d in dims:
        if x._shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _integral(dt: _dtype.dtype) -> bool:
    return dt._category <= _dtype.INT


def _sum_dtype(x: Tensor, dtype: Any) -> _dtype.dtype:
    """sum/prod/cumsum/cumprod: bool and integers accumulate in int64 unless told."""
    dt = check_dtype(dtype)
    if dt is not None:
        return dt
    return _dtype.int64 if _integral(x._dtype) else x._dtype


def _positions(n: int, dim: int, ndim: int, device: Any) -> Tensor:
    """0..n-1 as int64, shaped to broadcast along ``dim`` of an ``ndim``-d tensor."""
    pos = new_tensor((n,), _dtype.int64, device)
    PRIMS.arange_(pos, 0, 1)
    return pos.view(tuple(n if i == dim else 1 for i in range(ndim)))


def _write_outs(out: Any, results: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
    """``out=(a, b)`` for ops returning several tensors."""
    if out is None:
        return results
    if not isinstance(out, (tuple, list)) or len(out) != len(results):
        raise TypeError(f"out must be a tuple of {len(results)} tensors")
    return tuple(write_out(o, r) for o, r in zip(out, results))


def _float_input(name: str, x: Tensor) -> None:
    if not (x._dtype.is_floating_point or x._dtype.is_complex):
        raise RuntimeError(f"{name}(): expected input to have floating point or complex dtype "
                           f"but got {scalar_type_name(x._dtype)}")


# -- kernels of the primitive-backed aten operators ---------------------------------------


def _sum_kernel(self: Tensor, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    dt = _sum_dtype(self, dtype)
    return _reduce("sum", to_dtype(self, dt), _dims(dim, self.ndim), dt, keepdim)


def _prod_kernel(self: Tensor, dim: Any = None, keepdim: bool = False, *,
                 dtype: Any = None) -> Tensor:
    dt = _sum_dtype(self, dtype)
    dims = _dims(dim, self.ndim)
    return _reduce("prod", to_dtype(self, dt), dims, dt, keepdim if dim is not None else False)


def _extreme_kernel(prim: str) -> Any:
    def kernel(self: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
        given = dim is not None and (not isinstance(dim, (tuple, list)) or len(dim) > 0)
        dims = _dims(dim, self.ndim)
        _require_nonempty(prim, self, dims, given)
        return _reduce(prim, self, dims, self._dtype, keepdim)

    return kernel


def _truth_kernel(prim: str) -> Any:
    def kernel(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        # uint8 inputs give uint8 results: PyTorch keeps this legacy rule
        dt = _dtype.uint8 if self._dtype is _dtype.uint8 else _dtype.bool_
        return _reduce(prim, self, _dims(dim, self.ndim), dt, keepdim)

    return kernel


def _arg_kernel(prim: str) -> Any:
    def kernel(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
        if dim is None:
            _require_nonempty(prim, self, [], False, hint=False)
            flat = self.reshape(-1)
            out = new_tensor((1,), _dtype.int64, self._device)
            getattr(PRIMS, prim)(out, flat, 0)
            return out.view((1,) * self.ndim if keepdim else ())
        d = wrap_dim(dim, self.ndim)
        dims = [d] if self.ndim else []
        _require_nonempty(prim, self, dims, True)
        out = new_tensor(_kept(self._shape, dims), _dtype.int64, self._device)
        if self.ndim:
            getattr(PRIMS, prim)(out, self, d)
        else:
            PRIMS.fill_(out, 0)
        return _drop(out, dims, keepdim)

    return kernel


def _extreme_dim_kernel(name: str) -> Any:
    prim, arg = ("amax", "argmax") if name == "max" else ("amin", "argmin")

    def kernel(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        d = wrap_dim(dim, self.ndim)
        dims = [d] if self.ndim else []
        _require_nonempty(name, self, dims, True)
        # amax propagates NaN and argmax points at the first NaN: the two agree
        values = _reduce(prim, self, dims, self._dtype, keepdim)
        return values, _arg_kernel(arg)(self, d, keepdim)

    return kernel


def _scan_kernel(prim: str) -> Any:
    def kernel(self: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        d = wrap_dim(dim, self.ndim)
        dt = _sum_dtype(self, dtype)
        out = new_tensor(self._shape, dt, self._device)
        getattr(PRIMS, prim)(out, to_dtype(self, dt), d)
        return out

    return kernel


def _cum_extreme_kernel(prim: str) -> Any:
    def kernel(self: Tensor, dim: int) -> tuple[Tensor, Tensor]:
        d = wrap_dim(dim, self.ndim)
        values = new_tensor(self._shape, self._dtype, self._device)
        indices = new_tensor(self._shape, _dtype.int64, self._device)
        getattr(PRIMS, prim)(values, indices, self, d)
        return values, indices

    return kernel


def _sort_kernel(self: Tensor, *, stable: bool | None = False, dim: int = -1,
                 descending: bool = False) -> tuple[Tensor, Tensor]:
    d = wrap_dim(dim, self.ndim)
    values = new_tensor(self._shape, self._dtype, self._device)
    indices = new_tensor(self._shape, _dtype.int64, self._device)
    # the reference sort is always stable; a stable result is a valid unstable one too
    PRIMS.sort(values, indices, self, d, bool(descending), True)
    return values, indices


def _topk_kernel(self: Tensor, k: int, dim: int = -1, largest: bool = True,
                 sorted: bool = True) -> tuple[Tensor, Tensor]:
    d = wrap_dim(dim, self.ndim)
    size = self._shape[d] if self.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    shape = tuple(k if i == d else s for i, s in enumerate(self._shape))
    values = new_tensor(shape, self._dtype, self._device)
    indices = new_tensor(shape, _dtype.int64, self._device)
    PRIMS.topk(values, indices, self, k, d, bool(largest), bool(sorted))
    return values, indices


def _searchsorted_kernel(sorted_sequence: Tensor, self: Tensor, *, out_int32: bool = False,
                         right: bool = False, side: str | None = None,
                         sorter: Tensor | None = None) -> Tensor:
    seq = sorted_sequence
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        right = side == "right"
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if seq.ndim > 1 and seq._shape[:-1] != self._shape[:-1]:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq._shape)} and input value tensor {list(self._shape)}")
    if sorter is not None:
        if sorter._shape != seq._shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(seq._shape)}and got sorter "
                               f"tensor {list(sorter._shape)}")
        seq = _idx.gather(seq, -1, sorter)
    dt = result_type(seq, self)
    seq, values = to_dtype(seq, dt), to_dtype(self, dt)
    if seq.ndim == 1:  # one sequence for every value: search a flat row
        values = values.reshape(1, -1)
        seq = seq.view(1, -1)
    out = new_tensor(values._shape, _dtype.int64, self._device)
    PRIMS.searchsorted(out, seq, values, bool(right))
    out = out.view(self._shape)
    return to_dtype(out, _dtype.int32) if out_int32 else out


_ATEN_TABLE: dict[str, tuple[str, Any]] = {
    "sum.dim_IntList": ("sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, "
                        "ScalarType? dtype=None) -> Tensor", _sum_kernel),
    "prod.dim_int": ("prod.dim_int(Tensor self, int? dim=None, bool keepdim=False, *, "
                     "ScalarType? dtype=None) -> Tensor", _prod_kernel),
    "amax": ("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
             _extreme_kernel("amax")),
    "amin": ("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
             _extreme_kernel("amin")),
    "any.dims": ("any.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",
                 _truth_kernel("any")),
    "all.dims": ("all.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",
                 _truth_kernel("all")),
    "argmax": ("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
               _arg_kernel("argmax")),
    "argmin": ("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
               _arg_kernel("argmin")),
    "max.dim": ("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
                "indices)", _extreme_dim_kernel("max")),
    "min.dim": ("min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
                "indices)", _extreme_dim_kernel("min")),
    "cumsum": ("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
               _scan_kernel("cumsum")),
    "cumprod": ("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
                _scan_kernel("cumprod")),
    "cummax": ("cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)",
               _cum_extreme_kernel("cummax")),
    "cummin": ("cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)",
               _cum_extreme_kernel("cummin")),
    "sort.stable": ("sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False)"
                    " -> (Tensor values, Tensor indices)", _sort_kernel),
    "topk": ("topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> "
             "(Tensor values, Tensor indices)", _topk_kernel),
    "searchsorted.Tensor": ("searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, "
                            "bool out_int32=False, bool right=False, str? side=None, "
                            "Tensor? sorter=None) -> Tensor", _searchsorted_kernel),
}


def _full_sum_kernel(self: Tensor, *, dtype: Any = None) -> Tensor:
    return _sum_kernel(self, None, False, dtype=dtype)


def _full_prod_kernel(self: Tensor, *, dtype: Any = None) -> Tensor:
    return _prod_kernel(self, None, False, dtype=dtype)


def _full_kernel(prim: str, kernel: Any) -> Any:
    def full(self: Tensor) -> Tensor:
        return kernel(self)

    full.__name__ = prim
    return full


# The reductions of every element have overloads of their own in PyTorch (``x.sum()`` is
# ``aten::sum``, ``x.max()`` ``aten::max``): a dispatch mode sees those names.
_ATEN_TABLE.update({
    "sum": ("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", _full_sum_kernel),
    "prod": ("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", _full_prod_kernel),
    "max": ("max(Tensor self) -> Tensor", _full_kernel("max", _extreme_kernel("amax"))),
    "min": ("min(Tensor self) -> Tensor", _full_kernel("min", _extreme_kernel("amin"))),
    "all": ("all(Tensor self) -> Tensor", _full_kernel("all", _truth_kernel("all"))),
    "any": ("any(Tensor self) -> Tensor", _full_kernel("any", _truth_kernel("any"))),
    # (and over one dim given as an int: ``x.all(0)``)
    "all.dim": ("all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
                _truth_kernel("all")),
    "any.dim": ("any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
                _truth_kernel("any")),
})


def _sort_default_kernel(self: Tensor, dim: int = -1,
                         descending: bool = False) -> tuple[Tensor, Tensor]:
    return _sort_kernel(self, stable=False, dim=dim, descending=descending)


# ``x.sort()`` without ``stable`` is PyTorch's ``aten::sort`` (``sort.stable`` when it is given)
_ATEN_TABLE["sort"] = ("sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, "
                       "Tensor indices)", _sort_default_kernel)


def _define_aten() -> dict[str, _dispatch.Operator]:
    return _dispatch.define_aten(_ATEN_TABLE)


ATEN = _define_aten()
# Kernels decided by the call signature alone (they read no tensor values): the dispatcher
# may replay their plans (torch._core.plan).
_plan.enable(*(ATEN[n] for n in ("sum.dim_IntList", "prod.dim_int", "amax", "amin", "any.dims",
                                 "all.dims", "sum", "prod", "max", "min", "all", "any", "all.dim",
                                 "any.dim")))


# -- sums, products, means -----------------------------------------------------------------


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
        out: Tensor | None = None) -> Tensor:
    """Sum over ``dim`` (an int, a tuple, or all dims by default).

    Bool and integer inputs sum to int64 unless ``dtype`` says otherwise; float16 and
    bfloat16 accumulate in float32. The sum of no elements is 0.
    """
    _check_tensor("sum", input)
    if dim is None and not keepdim:
        result = ATEN["sum"](input) if dtype is None else ATEN["sum"](input, dtype=dtype)
        return result if out is None else write_out(out, result)
    return write_out(out, ATEN["sum.dim_IntList"](input, dim, keepdim, dtype=dtype))


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
           out: Tensor | None = None) -> Tensor:
    """:func:`sum` treating NaN as zero."""
    _check_tensor("nansum", input)
    x = input
    if input._dtype.is_floating_point or input._dtype.is_complex:
        x = _ew.where(_ew.isnan(input), 0, input)
    return write_out(out, sum(x, dim, keepdim, dtype=dtype))


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None,
         out: Tensor | None = None) -> Tensor:
    """Product over one ``dim`` (all elements by default); integers multiply in int64. The
    product of no elements is 1."""
    _check_tensor("prod", input)
    if isinstance(dim, (tuple, list)):
        raise TypeError("prod(): argument 'dim' must be int, not "
                        f"{type(dim).__name__}")
    if dim is None:
        result = ATEN["prod"](input) if dtype is None else ATEN["prod"](input, dtype=dtype)
        return result if out is None else write_out(out, result)
    return write_out(out, ATEN["prod.dim_int"](input, dim, keepdim, dtype=dtype))


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
         out: Tensor | None = None) -> Tensor:
    """Arithmetic mean over ``dim``. Integer inputs need a floating ``dtype``, as in PyTorch;
    the mean of no elements is NaN."""
    _check_tensor("mean", input)
    if dim is None and not keepdim:  # x.mean(): PyTorch's mean.default
        return write_out(out, _STATISTICS["mean"](input, dtype=dtype))
    return write_out(out, _STATISTICS["mean.dim"](input, dim, keepdim, dtype=dtype))


def _mean_kernel(self: Tensor, dim: Any = None, keepdim: bool = False, *,
                 dtype: Any = None) -> Tensor:
    _check_tensor("mean", self)
    dt = check_dtype(dtype) or self._dtype
    if not (dt.is_floating_point or dt.is_complex):
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(f"mean(): could not infer output dtype. {which} dtype must be either "
                           f"a floating point or complex dtype. Got: {scalar_type_name(dt)}")
    dims = _dims(dim, self.ndim)
    # (no autograd inside a kernel: the operator's formula differentiates it, so a plain
    # quotient serves the empty mean's NaN too)
    return ATEN["sum.dim_IntList"](self, dims, keepdim, dtype=dt) / _count(self._shape, dims)


def _mean_all_kernel(self: Tensor, *, dtype: Any = None) -> Tensor:
    return _mean_kernel(self, None, False, dtype=dtype)


def _divide_count(total: Tensor, count: Any) -> Tensor:
    """``total / count`` for a mean. Over no elements the mean is NaN, but its gradient is an
    empty one: adding the NaN as a constant keeps 0/0 out of the double backward."""
    if isinstance(count, int) and count == 0:
        return total + (total / 0).detach()
    return total / count


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
            out: Tensor | None = None) -> Tensor:
    """:func:`mean` over the non-NaN elements."""
    _check_tensor("nanmean", input)
    _float_input("nanmean", input)
    dims = _dims(dim, input.ndim)
    total = nansum(input, dims, keepdim, dtype=dtype)
    if _count(input._shape, dims) == 0:
        return write_out(out, _divide_count(total, 0))
    present = _ew.logical_not(_ew.isnan(input)).sum(dims, keepdim)
    return write_out(out, total / present)


# -- variance and standard deviation ------------------------------------------------------


def _correction(name: str, dim: Any, unbiased: Any, correction: Any) -> tuple[Any, float]:
    if isinstance(dim, bool):  # the legacy form var(input, unbiased)
        if unbiased is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: pass either "
                        "'unbiased' or 'correction', not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction


def _variance(input: Tensor, dim: Any, correction: float, keepdim: bool,
              root: bool = False) -> Tensor:
    """The variance, computed in double precision (as PyTorch's CPU kernels accumulate) with
    two passes, then rounded to the input's dtype."""
    if not (input._dtype.is_floating_point or input._dtype.is_complex):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _dims(dim, input.ndim)
    n = _count(input._shape, dims)
    wide = _ew.wide_float(input._device)  # float32 on a device without double precision
    acc = (_dtype.complex128 if wide is _dtype.float64 else _dtype.complex64) \
        if input._dtype.is_complex else wide
    x = to_dtype(input, acc)
    centred = x - sum(x, dims, True) / n
    squares = _ew.abs(centred) ** 2 if input._dtype.is_complex else centred * centred
    dof = builtins.max(n - correction, 0)
    if dof <= 0:
        _plan.refuse()  # (every call warns: no replay)
        warnings.warn("var(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=_config.external_stacklevel())
    var = sum(squares, dims, keepdim) / dof
    if root:  # the standard deviation, rounded once (a 16-bit variance's root rounded twice)
        var = _ew.sqrt(var)
    return to_dtype(var, input._dtype.to_real() if input._dtype.is_complex else input._dtype)


def _var_kernel(self: Tensor, dim: Any = None, *, correction: Any = None,
                keepdim: bool = False) -> Tensor:
    _check_tensor("var", self)
    return _variance(self, dim, 1 if correction is None else correction, keepdim)


def _std_kernel(self: Tensor, dim: Any = None, *, correction: Any = None,
                keepdim: bool = False) -> Tensor:
    _check_tensor("std", self)
    # (its gradient at var == 0 is the operator's formula's, not 1/0)
    return _variance(self, dim, 1 if correction is None else correction, keepdim, root=True)


# PyTorch's operators for x.mean(), x.mean(dim), x.var(...), x.std(...), whose derivatives are
# formulas (autograd/_formulas/reductions.py) rather than the decompositions' chains
_STATISTICS = _dispatch.define_aten({
    "mean": ("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", _mean_all_kernel),
    "mean.dim": ("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, "
                 "ScalarType? dtype=None) -> Tensor", _mean_kernel),
    "var.correction": ("var.correction(Tensor self, int[1]? dim=None, *, "
                       "Scalar? correction=None, bool keepdim=False) -> Tensor", _var_kernel),
    "std.correction": ("std.correction(Tensor self, int[1]? dim=None, *, "
                       "Scalar? correction=None, bool keepdim=False) -> Tensor", _std_kernel),
})
# mean is a sum over dims and a division by the count, both decided by the signature: its plan
# replays the two (torch._core.plan's chain with a reduction step)
_plan.enable(_STATISTICS["mean"], _STATISTICS["mean.dim"])
# var and std too: casts to the accumulating dtype and back, two sums, the centring (each
# decided by the signature; a call that warns about its degrees of freedom is not replayed)
_plan.enable(_STATISTICS["var.correction"], _STATISTICS["std.correction"])


def var(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None, out: Tensor | None = None) -> Tensor:
    """Variance over ``dim`` with Bessel's ``correction`` (1 by default; ``unbiased=False``
    means 0)."""
    _check_tensor("var", input)
    dim, correction = _correction("var", dim, unbiased, correction)
    return write_out(out, _STATISTICS["var.correction"](input, dim, correction=correction,
                                                        keepdim=keepdim))


def std(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: float | None = None, out: Tensor | None = None) -> Tensor:
    """Standard deviation: the square root of :func:`var`."""
    _check_tensor("std", input)
    dim, correction = _correction("std", dim, unbiased, correction)
    return write_out(out, _STATISTICS["std.correction"](input, dim, correction=correction,
                                                        keepdim=keepdim))


def var_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: float | None = None) -> tuple[Tensor, Tensor]:
    """``(var, mean)`` over ``dim`` in one call."""
    _check_tensor("var_mean", input)
    dim, correction = _correction("var_mean", dim, unbiased, correction)
    if _dispatch.python_key_active((input,), {}):
        # the operator, as PyTorch's (a dispatch mode sees aten.var_mean.correction)
        return _aten_var_mean(input, dim, correction=correction, keepdim=keepdim)
    return _variance(input, dim, correction, keepdim), mean(input, dim, keepdim)


def _var_mean_kernel(self: Tensor, dim: Any = None, *, correction: Any = None,
                     keepdim: bool = False) -> tuple[Tensor, Tensor]:
    _check_tensor("var_mean", self)
    return (_variance(self, dim, 1 if correction is None else correction, keepdim),
            mean(self, dim, keepdim))


_aten_var_mean = _dispatch.define_aten({
    "var_mean.correction": ("var_mean.correction(Tensor self, int[1]? dim=None, *, "
                            "Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)",
                            _var_mean_kernel)})["var_mean.correction"]


def std_mean(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: float | None = None) -> tuple[Tensor, Tensor]:
    """``(std, mean)`` over ``dim`` in one call."""
    _check_tensor("std_mean", input)
    dim, correction = _correction("std_mean", dim, unbiased, correction)
    # std's operator: the root taken before the rounding to a 16-bit dtype (once, as PyTorch's),
    # and its derivative's formula (0 where the variance is 0)
    return (_STATISTICS["std.correction"](input, dim, correction=correction, keepdim=keepdim),
            mean(input, dim, keepdim))


# -- extremes -------------------------------------------------------------------------------


def _extreme(name: str, input: Tensor, dim: Any, keepdim: bool, other: Any, out: Any) -> Any:
    _check_tensor(name, input)
    if isinstance(dim, Tensor) or other is not None:  # the binary form: maximum / minimum
        other = dim if other is None else other
        return getattr(_ew, "maximum" if name == "max" else "minimum")(input, other, out=out)
    _check_ordered(name if dim is not None else f"{name}_all", input)
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}() received an invalid combination of arguments: keepdim "
                            "needs a dim")
        _require_nonempty(name, input, [], False)
        # through the aten op (ties share the gradient, as in PyTorch)
        return write_out(out, ATEN[name](input))
    values, indices = ATEN[f"{name}.dim"](input, dim, keepdim)
    return getattr(return_types, name)(_write_outs(out, (values, indices)))


def max(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Tensor | None = None,
        out: Any = None) -> Any:
    """The largest element; with ``dim``, ``(values, indices)`` along it (first index on ties,
    NaN wins); with a tensor, the elementwise :func:`torch.maximum`."""
    return _extreme("max", input, dim, keepdim, other, out)


def min(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Tensor | None = None,
        out: Any = None) -> Any:
    """The smallest element; with ``dim``, ``(values, indices)`` along it (first index on ties,
    NaN wins); with a tensor, the elementwise :func:`torch.minimum`."""
    return _extreme("min", input, dim, keepdim, other, out)


def amax(input: Tensor, dim: Any = (), keepdim: bool = False, *,
         out: Tensor | None = None) -> Tensor:
    """The largest values over ``dim`` (all dims by default); NaN propagates."""
    _check_ordered("amax", input)
    return write_out(out, ATEN["amax"](input, dim, keepdim))


def amin(input: Tensor, dim: Any = (), keepdim: bool = False, *,
         out: Tensor | None = None) -> Tensor:
    """The smallest values over ``dim`` (all dims by default); NaN propagates."""
    _check_ordered("amin", input)
    return write_out(out, ATEN["amin"](input, dim, keepdim))


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False,
            out: Any = None) -> Any:
    """``(min, max)`` over ``dim`` (all elements by default)."""
    _check_ordered("aminmax", input)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        dims = _dims(None, input.ndim)
    else:
        dims = _dims(dim, input.ndim)
        for d in dims:
            if input._shape[d] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    # through the aten ops, which are differentiable (ties share the gradient)
    results = (ATEN["amin"](input, dims, keepdim), ATEN["amax"](input, dims, keepdim))
    return return_types.aminmax(_write_outs(out, results))


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
           out: Tensor | None = None) -> Tensor:
    """The index of the largest value along ``dim`` (of the flattened input by default); the
    first one on ties, the first NaN if there is one."""
    _check_ordered("argmax", input)
    return write_out(out, ATEN["argmax"](input, dim, keepdim))


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
           out: Tensor | None = None) -> Tensor:
    """The index of the smallest value along ``dim`` (of the flattened input by default); the
    first one on ties, the first NaN if there is one."""
    _check_ordered("argmin", input)
    return write_out(out, ATEN["argmin"](input, dim, keepdim))


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False, *,
              out: Tensor | None = None) -> Tensor:
    """``log(sum(exp(input), dim))``, computed without overflow by shifting by the maximum.
    Integer inputs give the default float dtype."""
    _check_tensor("logsumexp", input)
    # the operator, as PyTorch's: a dispatch mode sees aten.logsumexp, the result records one
    # LogsumexpBackward0 node, and a backend may plan the call (plait-backend-cpu does)
    dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    return write_out(out, _aten_logsumexp(input, dims, keepdim))


def _logsumexp_kernel(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    x = input
    if _integral(x._dtype):
        x = to_dtype(x, _config.get_default_dtype())
    dims = _dims(dim, x.ndim)
    if x.numel() == 0:  # the log of an empty sum is -inf (and there is no maximum to shift by)
        # -inf as a constant: log(0) would put 1/0 into the (empty) gradient's double backward
        return sum(x, dims, keepdim) + (-math.inf)
    shift = amax(x, dims, keepdim=True)
    # an infinite maximum would turn inf - inf into NaN: shift by 0 there instead
    shift = _ew.where(_ew.isinf(shift), 0, shift)
    result = _ew.log(sum(_ew.exp(x - shift), dims, keepdim=True)) + shift
    return _drop(result, dims, keepdim)


_aten_logsumexp = _dispatch.define_aten({
    "logsumexp": ("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
                  _logsumexp_kernel)})["logsumexp"]


# -- all / any / count_nonzero --------------------------------------------------------------


def all(input: Tensor, dim: Any = None, keepdim: bool = False, *,
        out: Tensor | None = None) -> Tensor:
    """Whether every element over ``dim`` is nonzero (bool; uint8 for uint8 input)."""
    _check_tensor("all", input)
    if dim is None and not keepdim:
        return write_out(out, ATEN["all"](input))
    if dim.__class__ is int:
        return write_out(out, ATEN["all.dim"](input, dim, keepdim))
    return write_out(out, ATEN["all.dims"](input, dim, keepdim))


def any(input: Tensor, dim: Any = None, keepdim: bool = False, *,
        out: Tensor | None = None) -> Tensor:
    """Whether any element over ``dim`` is nonzero (bool; uint8 for uint8 input)."""
    _check_tensor("any", input)
    if dim is None and not keepdim:
        return write_out(out, ATEN["any"](input))
    if dim.__class__ is int:
        return write_out(out, ATEN["any.dim"](input, dim, keepdim))
    return write_out(out, ATEN["any.dims"](input, dim, keepdim))


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """The number of nonzero elements over ``dim`` (int64)."""
    _check_tensor("count_nonzero", input)
    return sum(_ew.ne(input, 0), _dims(dim, input.ndim))


# -- order statistics -----------------------------------------------------------------------


def _select_sorted(values: Tensor, indices: Tensor, dim: int, position: Tensor,
                   keepdim: bool) -> tuple[Tensor, Tensor]:
    """The entries of sorted ``values``/``indices`` at ``position`` (keepdim-shaped, int64)
    along ``dim``."""
    picked = (_idx.gather(values, dim, position), _idx.gather(indices, dim, position))
    if keepdim:
        return picked
    return picked[0].squeeze(dim), picked[1].squeeze(dim)


def _median(name: str, input: Tensor, dim: Any, keepdim: bool, ignore_nan: bool) -> Any:
    _check_ordered(name, input)
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            fill = math.nan if input._dtype.is_floating_point else _np_min(input._dtype)
            return _fac.full((), fill, dtype=input._dtype, device=input._device)
        picked = _median(name, flat, 0, False, ignore_nan)[0]
        if not input.requires_grad or not input._dtype.is_floating_point:
            return picked
        return _share_among_ties(flat, picked)
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        zero = _fac.zeros((), dtype=_dtype.int64, device=input._device)
        return getattr(return_types, name)((input.clone(), zero))
    n = input._shape[d]
    if n == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    values, indices = sort(input, d)
    if input._dtype.is_floating_point:
        nans = sum(_ew.isnan(input), d, keepdim=True)
        if ignore_nan:
            # the lower median of the non-NaN values; an all-NaN slice gives its first NaN
            position = _ew.clamp((n - nans - 1) // 2, min=0)
        else:
            # NaN sorts last, stably: a slice with NaN reports its first NaN
            position = _ew.where(nans > 0, n - nans, (n - 1) // 2)
    else:
        position = _fac.full(_kept(input._shape, [d]), (n - 1) // 2, dtype=_dtype.int64,
                              device=input._device)
    return getattr(return_types, name)(_select_sorted(values, indices, d, position, keepdim))


def _share_among_ties(flat: Tensor, picked: Tensor) -> Tensor:
    """The 0-d ``picked`` element of ``flat`` again, with a gradient that every element equal to
    it shares evenly (the amax of the ties), as PyTorch's median() and nanmedian() do; a NaN
    result is shared by all the NaNs."""
    ties = _ew.eq(flat, picked.detach())
    shared = amax(_ew.where(ties, flat, -math.inf))
    nans = _ew.isnan(flat)
    # NaN + ... is NaN: the value is right, and each NaN gets an even share of the gradient
    nan_count = _ew.clamp(sum(nans), min=1)  # 1 where there is none: that branch is unused
    nan_shared = sum(_ew.where(nans, flat, 0)) / nan_count
    return _ew.where(_ew.isnan(picked.detach()), nan_shared, shared)


def _np_min(dt: _dtype.dtype) -> int:
    """The lowest value of an integer dtype (what PyTorch leaves in an empty median)."""
    return 0 if dt in (_dtype.bool_, _dtype.uint8) else -(1 << (dt.itemsize * 8 - 1))


def median(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
           out: Any = None) -> Any:
    """The lower median of all elements, or ``(values, indices)`` along ``dim``. NaN
    propagates."""
    result = _median("median", input, dim, keepdim, ignore_nan=False)
    if dim is None:
        return write_out(out, result)
    return return_types.median(_write_outs(out, tuple(result)))


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
              out: Any = None) -> Any:
    """:func:`median` of the non-NaN elements."""
    result = _median("nanmedian", input, dim, keepdim, ignore_nan=True)
    if dim is None:
        return write_out(out, result)
    return return_types.nanmedian(_write_outs(out, tuple(result)))


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *,
             out: Any = None) -> Any:
    """The ``k``-th smallest element (1-based) along ``dim`` and its index."""
    _check_ordered("kthvalue", input)
    d = wrap_dim(dim, input.ndim)
    size = input._shape[d] if input.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.ndim == 0:
        zero = _fac.zeros((), dtype=_dtype.int64, device=input._device)
        return return_types.kthvalue(_write_outs(out, (input.clone(), zero)))
    values, indices = sort(input, d)
    picked = (values.narrow(d, k - 1, 1), indices.narrow(d, k - 1, 1))
    if not keepdim:
        picked = (picked[0].squeeze(d), picked[1].squeeze(d))
    results = tuple(t.contiguous() for t in picked)
    return return_types.kthvalue(_write_outs(out, results))


def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out: Any = None) -> Any:
    """The most frequent value along ``dim`` (the smallest one on ties) and the index of its
    last occurrence."""
    _check_ordered("mode", input)
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        zero = _fac.zeros((), dtype=_dtype.int64, device=input._device)
        return return_types.mode(_write_outs(out, (input.clone(), zero)))
    n = input._shape[d]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    if input.numel() == 0:  # nothing to count; zero-size views trip numpy's bounds checks
        shape = tuple(s for i, s in enumerate(_kept(input._shape, [d])) if keepdim or i != d)
        # values as an (empty) slice of the input, so they stay differentiable like PyTorch's
        picked = input.narrow(d, 0, 1)
        results = ((picked if keepdim else picked.squeeze(d)).clone(),
                   _fac.empty(shape, dtype=_dtype.int64, device=input._device))
        return return_types.mode(_write_outs(out, results))
    values, indices = sort(input, d)
    # run lengths in the sorted slice: position minus the start of the run it belongs to
    starts = _fac.ones(values._shape, dtype=_dtype.bool_, device=input._device)
    if n > 1:
        starts.narrow(d, 1, n - 1).copy_(
            _ew.ne(values.narrow(d, 1, n - 1), values.narrow(d, 0, n - 1)))
    pos = _positions(n, d, input.ndim, input._device)
    run_start = cummax(starts * pos, d).values
    # the first place a run reaches the longest length is the end of the smallest mode's run,
    # which (the sort being stable) holds its last occurrence
    best = argmax(pos - run_start, d, keepdim=True)
    return return_types.mode(_write_outs(out, _select_sorted(values, indices, d, best, keepdim)))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name: str, input: Tensor, q: Any, dim: int | None, keepdim: bool,
              interpolation: str, ignore_nan: bool) -> Tensor:
    _check_tensor(name, input)
    if input._dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        q = _fac.tensor([float(q)], dtype=input._dtype, device=input._device)
    else:
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q._dtype is not input._dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        # the range check reads values: meta and fake q have none (PyTorch checks on the
        # host only too)
        if q.numel() and has_data(q) and not bool(all(_ew.logical_and(q >= 0, q <= 1))):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    q_dims = 0 if scalar_q else q.ndim  # whether the result has a leading q dim
    q = q.reshape(-1)
    if dim is None:
        x, d = input.reshape(-1), 0
    else:
        x, d = input, wrap_dim(dim, input.ndim)
        if x.ndim == 0:
            x = x.reshape(1)
    s = sort(x, d).values.movedim(d, -1).unsqueeze(-1)  # (..., n, 1)
    n = s._shape[-2]
    nans = sum(_ew.isnan(s), -2)  # (..., 1)
    if ignore_nan:
        last = n - 1 - nans  # the last non-NaN position; -1 for an all-NaN slice
    else:
        # a slice with NaN has NaN as its answer: rank it at the end, where NaN sorted
        last = _fac.full(nans._shape, n - 1, dtype=_dtype.int64, device=x._device)
    ranks = q * _ew.clamp(last, min=0)  # (..., Q)
    if not ignore_nan:
        ranks = _ew.where(nans > 0, n - 1, ranks)
    if interpolation == "nearest":
        ranks = _ew.round(ranks)
    below, above = _ew.floor(ranks).long(), _ew.ceil(ranks).long()
    flat = s.squeeze(-1)  # (..., n)
    lower, upper = _idx.gather(flat, -1, below), _idx.gather(flat, -1, above)
    if interpolation in ("lower", "nearest"):
        result = lower
    elif interpolation == "higher":
        result = upper
    else:
        weight = ranks - below if interpolation == "linear" else _fac.full_like(ranks, 0.5)
        if ignore_nan:  # an all-NaN slice does not depend on q (PyTorch: zero gradient)
            weight = _ew.where(last < 0, weight.detach(), weight)
        result = _ew.lerp(lower, upper, weight)
    # an all-NaN slice needs no masking: its rank is 0, so the result is its first (NaN)
    # element, and like PyTorch the gradient flows there
    result = result.movedim(-1, 0)  # (Q, ...)
    if keepdim:
        kept = (1,) * input.ndim if dim is None else _kept(input._shape, [d])
        result = result.reshape((result._shape[0],) + kept)
    return result.squeeze(0) if q_dims == 0 else result


def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear", out: Tensor | None = None) -> Tensor:
    """The ``q``-th quantiles (a float or a 1-d tensor, in [0, 1]) along ``dim`` (of all
    elements by default). NaN in a slice makes its quantiles NaN. ``interpolation`` chooses
    between the two nearest ranks: linear, lower, higher, midpoint or nearest."""
    return write_out(out, _quantile("quantile", input, q, dim, keepdim, interpolation, False))


def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear", out: Tensor | None = None) -> Tensor:
    """:func:`quantile` of the non-NaN elements (NaN for an all-NaN slice)."""
    return write_out(out, _quantile("nanquantile", input, q, dim, keepdim, interpolation, True))


# -- scans ----------------------------------------------------------------------------------


def cumsum(input: Tensor, dim: int, *, dtype: Any = None, out: Tensor | None = None) -> Tensor:
    """Running sums along ``dim``; integers accumulate in int64 unless ``dtype`` is given."""
    _check_tensor("cumsum", input)
    return write_out(out, ATEN["cumsum"](input, dim, dtype=dtype))


def cumprod(input: Tensor, dim: int, *, dtype: Any = None, out: Tensor | None = None) -> Tensor:
    """Running products along ``dim``; integers accumulate in int64 unless ``dtype`` is
    given."""
    _check_tensor("cumprod", input)
    return write_out(out, ATEN["cumprod"](input, dim, dtype=dtype))


def cummax(input: Tensor, dim: int, *, out: Any = None) -> Any:
    """Running maxima along ``dim`` and where they sit (the later index on ties)."""
    _check_ordered("cummax", input)
    return return_types.cummax(_write_outs(out, ATEN["cummax"](input, dim)))


def cummin(input: Tensor, dim: int, *, out: Any = None) -> Any:
    """Running minima along ``dim`` and where they sit (the later index on ties)."""
    _check_ordered("cummin", input)
    return return_types.cummin(_write_outs(out, ATEN["cummin"](input, dim)))


def logcumsumexp(input: Tensor, dim: int, *, out: Tensor | None = None) -> Tensor:
    """``log(cumsum(exp(input), dim))`` without overflow or underflow: a log-step scan of
    :func:`torch.logaddexp` (each step combines elements ``2**k`` apart)."""
    _check_tensor("logcumsumexp", input)
    if not (input._dtype.is_floating_point or input._dtype.is_complex):
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                  f"'{scalar_type_name(input._dtype)}'")
    return write_out(out, _aten_logcumsumexp(input, wrap_dim(dim, input.ndim)))


def _logcumsumexp_kernel(input: Tensor, dim: int) -> Tensor:
    y = input.clone()
    n = input._shape[dim] if input.ndim else 1
    step = 1
    while step < n:
        head = y.narrow(dim, 0, step)
        tail = _ew.logaddexp(y.narrow(dim, step, n - step), y.narrow(dim, 0, n - step))
        y = _shape.cat([head, tail], dim)
        step *= 2
    return y


# An explicit op with its own derivative (autograd/_formulas/reductions.py): differentiating
# the log-step scan would pass through logaddexp's NaN second derivative at -inf.
_aten_logcumsumexp = _dispatch.define_aten({
    "logcumsumexp": ("logcumsumexp(Tensor self, int dim) -> Tensor", _logcumsumexp_kernel),
})["logcumsumexp"]


# -- sorting --------------------------------------------------------------------------------


def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool | None = False,
         out: Any = None) -> Any:
    """``(values, indices)`` sorted along ``dim``; NaN counts as the largest value. The sort is
    stable: equal values keep their order."""
    _check_ordered("sort", input)
    if stable:
        values, indices = ATEN["sort.stable"](input, stable=stable, dim=dim,
                                              descending=descending)
    else:
        values, indices = ATEN["sort"](input, dim, descending)
    return return_types.sort(_write_outs(out, (values, indices)))


def argsort(input: Tensor, dim: int = -1, descending: bool = False, *,
            stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim``."""
    return sort(input, dim, descending, stable=stable).indices


def msort(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``input`` sorted along its first dim."""
    return write_out(out, sort(input, 0).values)


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *,
         out: Any = None) -> Any:
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices, in order."""
    _check_ordered("topk", input)
    if isinstance(k, Tensor):  # a 0-d integer tensor, as PyTorch's parser reads an int
        k = k.__index__()
    return return_types.topk(_write_outs(out, ATEN["topk"](input, k, dim, largest, sorted)))


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Tensor | None = None,
                 out: Tensor | None = None) -> Tensor:
    """Where each value of ``input`` would go in ``sorted_sequence`` (its last dim) to keep it
    sorted: the first such place, or the last with ``right=True`` / ``side="right"``."""
    _check_ordered("searchsorted", sorted_sequence, input)
    if not isinstance(input, Tensor):
        input = _fac.tensor(input, device=sorted_sequence._device)
    return write_out(out, ATEN["searchsorted.Tensor"](
        sorted_sequence, input, out_int32=out_int32, right=right, side=side, sorter=sorter))


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False,
              out: Tensor | None = None) -> Tensor:
    """The bucket of each element of ``input`` among the 1-d ``boundaries``."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


# -- unique ---------------------------------------------------------------------------------


def _runs(sorted_rows: Tensor) -> Tensor:
    """For sorted (n, ...) rows: True where a row differs from the one before (and at 0)."""
    n = sorted_rows._shape[0]
    starts = _fac.ones(n, dtype=_dtype.bool_, device=sorted_rows._device)
    if n > 1:
        differ = _ew.ne(sorted_rows.narrow(0, 1, n - 1), sorted_rows.narrow(0, 0, n - 1))
        if differ.ndim > 1:
            differ = any(differ.reshape(n - 1, -1), 1)
        starts.narrow(0, 1, n - 1).copy_(differ)
    return starts


def _collapse(rows: Tensor, order: Tensor | None, return_inverse: bool,
              return_counts: bool) -> tuple[Tensor, Tensor, Tensor]:
    """Unique runs of the (n, ...) ``rows`` (equal rows adjacent), as (values, inverse,
    counts); ``order`` maps a sorted position back to the original one."""
    n = rows._shape[0]
    starts = _runs(rows)
    group = cumsum(starts, 0) - 1  # (n,) the run each row belongs to
    first = _idx.nonzero(starts).reshape(-1)  # where each run starts
    values = _idx.index_select(rows, 0, first)
    inverse = group
    if order is not None and return_inverse:
        inverse = _fac.zeros(n, dtype=_dtype.int64, device=rows._device).scatter_(
            0, order, group)
    bounds = _shape.cat([first, _fac.full((1,), n, dtype=_dtype.int64, device=rows._device)])
    counts = bounds.narrow(0, 1, first._shape[0]) - bounds.narrow(0, 0, first._shape[0])
    return values, inverse, counts


def _lexsort_rows(rows: Tensor) -> Tensor:
    """A stable order of the (n, m) ``rows``, lexicographic: m stable sorts from the last
    column to the first."""
    n, m = rows._shape[0], rows._shape[1]
    order = _positions(n, 0, 1, rows._device)
    for col in range(m - 1, -1, -1):
        keys = _idx.index_select(rows.select(1, col), 0, order)
        order = _idx.index_select(order, 0, sort(keys, 0).indices)
    return order


def _unique(input: Tensor, consecutive: bool, return_inverse: bool, return_counts: bool,
            dim: int | None) -> Any:
    if dim is None:
        flat = input.reshape(-1)
        order = None
        if not consecutive:
            flat, order = sort(flat, 0)
        values, inverse, counts = _collapse(flat, order, return_inverse, return_counts)
        inverse = inverse.reshape(input._shape)
    else:
        d = wrap_dim(dim, input.ndim)
        if _any_zero_other_dim(input, d):
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
        moved = input.movedim(d, 0)
        n = moved._shape[0]
        if n == 0:  # no slices: nothing to compare
            nothing = _fac.zeros(0, dtype=_dtype.int64, device=input._device)
            result = (input.clone(),) + (nothing,) * (return_inverse + return_counts)
            return result[0] if len(result) == 1 else result
        rows = moved.reshape(n, -1)
        order = None
        if not consecutive and rows._shape[1] and n:
            order = _lexsort_rows(rows)
            rows = _idx.index_select(rows, 0, order)
        values, inverse, counts = _collapse(rows, order, return_inverse, return_counts)
        values = values.reshape((values._shape[0],) + moved._shape[1:]).movedim(0, d)
    result: tuple[Tensor, ...] = (values,)
    if return_inverse:
        result += (inverse,)
    if return_counts:
        result += (counts,)
    return result[0] if len(result) == 1 else result


def _any_zero_other_dim(input: Tensor, dim: int) -> bool:
    return builtins.any(size == 0 for i, size in enumerate(input._shape) if i != dim)


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct elements (sorted), or distinct slices along ``dim``; with
    ``return_inverse`` where each input element went, with ``return_counts`` how often each
    value occurs. NaN values never compare equal, so each is its own entry."""
    _check_ordered("unique", input)
    with no_grad():
        result = _unique(input, False, return_inverse, return_counts, dim)
    # PyTorch does not differentiate unique: its outputs require grad, backward raises
    name = "_unique2" if dim is None else "unique_dim"
    error = NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return upcalls.not_differentiable(result, error, input)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """Collapse each run of equal consecutive elements (or slices along ``dim``) into one."""
    _check_ordered("unique_consecutive", input)
    with no_grad():
        result = _unique(input, True, return_inverse, return_counts, dim)
    error = NotImplementedError("the derivative for 'unique_consecutive' is not implemented.")
    return upcalls.not_differentiable(result, error, input)


# -- histograms and differences -------------------------------------------------------------


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *,
          out: Tensor | None = None) -> Tensor:
    """A histogram of ``bins`` equal-width bins over [min, max] (the data's range when both
    are 0). Elements outside the range are ignored; ``max`` itself lands in the last bin."""
    _check_tensor("histc", input)
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f'"histogram_cpu" not implemented for '
                                  f"'{scalar_type_name(input._dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and input.numel():
        # the data's range; meta and fake tensors have none, and the layout does not
        # depend on it (any finite range serves)
        lo, hi = (float(amin(input)), float(amax(input))) if has_data(input) else (0.0, 1.0)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    x = input.reshape(-1)
    inside = _ew.logical_and(x >= lo, x <= hi)  # NaN is never inside
    bin_of = _ew.floor((x - lo) / (hi - lo) * bins).long()
    bin_of = _ew.clamp(bin_of, 0, bins - 1)  # x == max belongs to the last bin
    weights = to_dtype(inside, input._dtype)
    counts = _fac.zeros(bins, dtype=input._dtype, device=input._device)
    return write_out(out, counts.scatter_add_(0, bin_of, weights))


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0, 1, 2, ... occurs in the 1-d non-negative integer ``input`` (the
    sum of ``weights`` at its positions, if given)."""
    _check_tensor("bincount", input)
    if input._dtype.is_floating_point or input._dtype is _dtype.bool_:
        raise NotImplementedError(f'"bincount_cpu" not implemented for '
                                  f"'{scalar_type_name(input._dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.ndim != 1 or (input.numel() and int(amin(input)) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and weights._shape != input._shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    length = builtins.max(int(amax(input)) + 1 if input.numel() else 0, minlength)
    index = to_dtype(input, _dtype.int64)
    if weights is None:
        dt, src = _dtype.int64, _fac.ones(input._shape, dtype=_dtype.int64,
                                           device=input._device)
    else:
        # float weights keep their dtype only for float32; everything else counts in double
        dt = weights._dtype if weights._dtype is _dtype.float32 else _dtype.float64
        src = to_dtype(weights, dt)
    counts = _fac.zeros(length, dtype=dt, device=input._device)
    return counts.scatter_add_(0, index, src)


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None, *, out: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``!=`` for bool), after joining
    ``prepend`` and ``append`` to the input along it."""
    _check_tensor("diff", input)
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.ndim)
    x = input
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, input, append) if t is not None]
        if builtins.any(t.ndim != input.ndim for t in parts):
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        x = _shape.cat(parts, d)
    for _ in range(n):
        length = x._shape[d]
        if length == 0:
            break
        later, earlier = x.narrow(d, 1, length - 1), x.narrow(d, 0, length - 1)
        x = _ew.ne(later, earlier) if x._dtype is _dtype.bool_ else later - earlier
    return write_out(out, x if x is not input else input.clone())


# -- Tensor methods -------------------------------------------------------------------------


def _inplace_scan(fn: Any, name: str) -> Any:
    def method(self: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        if dtype is not None and check_dtype(dtype) is not self._dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype "
                               f"{_CPP_NAMES[self._dtype._name]} and output tensor dtype "
                               f"{_CPP_NAMES[check_dtype(dtype)._name]} should match")
        if self._dtype is _dtype.bool_:  # a running sum does not fit in bool
            raise NotImplementedError(f'"{name[:-1]}_out_cpu" not implemented for \'Bool\'')
        if _config.state.keys_active:  # a mode or subclass sees aten::cumsum_, as PyTorch's
            done = through_inplace_operator(fn, self, (dim,), {})
            if done is not None:
                return done
        result = fn(self, dim, dtype=self._dtype)
        return self.copy_(result)

    method.__name__ = name
    return method


_CPP_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


# torch.sum/amax/amin and the methods with the hot path's reduction tiers in front
# (torch._core.fast).
sum = _fast.sum_method(ATEN["sum.dim_IntList"], sum)
amax = _fast.extreme_method("amax", ATEN["amax"], amax)
amin = _fast.extreme_method("amin", ATEN["amin"], amin)

METHODS: dict[str, Any] = {
    name: globals()[name]
    for name in ("sum", "nansum", "prod", "mean", "nanmean", "var", "std", "max", "min", "amax",
                 "amin", "aminmax", "argmax", "argmin", "logsumexp", "all", "any",
                 "count_nonzero", "median", "nanmedian", "kthvalue", "mode", "quantile",
                 "nanquantile", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "sort",
                 "argsort", "msort", "topk", "unique", "unique_consecutive", "histc",
                 "bincount", "diff")
}
METHODS["cumsum_"] = _inplace_scan(cumsum, "cumsum_")
METHODS["cumprod_"] = _inplace_scan(cumprod, "cumprod_")
