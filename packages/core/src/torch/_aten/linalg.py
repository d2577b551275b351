"""Matrix products and friends: mm, bmm, matmul, mv, dot, vdot, inner, outer, addmm, addmv,
addbmm, baddbmm, einsum, tensordot, kron, trace, cross; and the ``torch.*`` spellings of the
decompositions and norms that live in :mod:`torch.linalg`.

The products that PyTorch implements natively (mm, bmm, mv, dot, vdot, cross) are aten
operators registered as CompositeExplicitAutograd: argument checks, allocation, then the
``matmul`` primitive. Everything else is CompositeImplicitAutograd, written in those and in
views (``reshape``, ``permute``, ``expand``), so autograd comes through the decomposition.
"""

from __future__ import annotations

import importlib
import string
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from .._core import config as _config, dispatch as _dispatch, dtype as _dtype, plan as _plan
from .._core.alloc import PRIMS, new_tensor
from .._core.promotion import broadcast_shapes, common_device
from .._core.tensor import Tensor, wrap_dim
from .arith import add, inplace_method, mul, sum
from .convert import copy_, scalar_type_name, write_out
from .elementwise import where

# Public functions of torch defined here (the facade serves them lazily).
__all__: list[str] = [
    "addbmm", "addmm", "addmv", "baddbmm", "bmm", "chain_matmul", "cholesky", "cross", "det",
    "dot", "einsum", "ger", "inner", "inverse", "kron", "logdet", "matmul", "matrix_power", "mm",
    "mv", "norm", "outer", "pinverse", "qr", "slogdet", "spmm", "svd", "tensordot", "trace", "vdot",
]

# c10's names of scalar types in the messages of mm ("float != double").
_CPP_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def _linalg() -> Any:
    """The ops of :mod:`torch.linalg`, :mod:`torch._aten.linalg_ops` (imported late: it builds
    on this module; once imported, read from ``sys.modules``, which costs ``x.norm()`` no
    import machinery)."""
    module = sys.modules.get("torch._aten.linalg_ops")
    return module if module is not None else importlib.import_module("torch._aten.linalg_ops")


def _check_tensor(fn: str, name: str, x: Any) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(x).__name__}")


def _no_bool(kernel: str, *tensors: Tensor) -> None:
    """PyTorch's CPU BLAS paths have no bool kernel."""
    if tensors[0]._dtype is _dtype.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _scalar_for(value: Any, dt: _dtype.dtype) -> Any:
    """``alpha``/``beta`` converted to the operands' dtype, as PyTorch does (2.5 -> 2 for
    integer tensors)."""
    if isinstance(value, Tensor):
        value = value.item()
    if dt is _dtype.bool_:
        return bool(value)
    if dt._category == _dtype.INT:
        return int(value)
    return value


def _product(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` for ``a`` (..., n, k) and ``b`` (..., k, m) of one dtype with equal batch dims:
    one call of the matmul primitive."""
    dev = common_device([a, b])
    out = new_tensor(a._shape[:-1] + b._shape[-1:], a._dtype, dev)
    PRIMS.matmul(out, a, b)
    if _plan.recording is not None:  # the dispatcher is planning this call
        _plan.note("matmul", [a, b], a._dtype, a._dtype, {}, out)
    return out


# -- the products that are operators with their own derivatives ------------------------------


def _mm_kernel(self: Tensor, mat2: Tensor) -> Tensor:
    if self.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self._dtype is not mat2._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_CPP_NAMES[self._dtype._name]} != {_CPP_NAMES[mat2._dtype._name]}")
    if self._shape[1] != mat2._shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({self._shape[0]}x"
                           f"{self._shape[1]} and {mat2._shape[0]}x{mat2._shape[1]})")
    _no_bool("addmm_impl_cpu_", self)
    return _product(self, mat2)


def _bmm_kernel(self: Tensor, mat2: Tensor) -> Tensor:
    if self.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    bs, _, k = self._shape
    if mat2._shape[0] != bs or mat2._shape[1] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{bs}, {k}] but got: [{mat2._shape[0]}, {mat2._shape[1]}].")
    if self._dtype is not mat2._dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(self._dtype)} but found "
                           f"{scalar_type_name(mat2._dtype)}")
    _no_bool("bmm", self)
    return _product(self, mat2)


def _mv_kernel(self: Tensor, vec: Tensor) -> Tensor:
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self.ndim}, {vec.ndim}")
    if self._dtype is not vec._dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{scalar_type_name(vec._dtype)}, {scalar_type_name(self._dtype)}, "
                           f"and {scalar_type_name(vec._dtype)}")
    if self._shape[1] != vec._shape[0]:
        raise RuntimeError(f"size mismatch, got input ({self._shape[0]}), mat ({self._shape[0]}x"
                           f"{self._shape[1]}), vec ({vec._shape[0]})")
    _no_bool("addmv_impl_cpu", self)
    return _product(self, vec.unsqueeze(1)).squeeze(1)


def _check_dot(self: Tensor, other: Tensor) -> None:
    if self.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors")
    if self._dtype is not other._dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{scalar_type_name(self._dtype)} and {scalar_type_name(other._dtype)}")
    if self._shape[0] != other._shape[0]:
        n, m = self._shape[0], other._shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           "respectively")
    _no_bool("dot", self)


def _dot_kernel(self: Tensor, other: Tensor) -> Tensor:
    _check_dot(self, other)
    return _product(self.unsqueeze(0), other.unsqueeze(1)).view(())  # (1, k) @ (k, 1)


def _vdot_kernel(self: Tensor, other: Tensor) -> Tensor:
    _check_dot(self, other)
    if self._dtype.is_complex:
        self = self.conj()
    return _product(self.unsqueeze(0), other.unsqueeze(1)).view(())


def _cross_kernel(self: Tensor, other: Tensor, dim: int = -1) -> Tensor:
    if self.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if self._dtype is not other._dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(self._dtype)} but found "
                           f"{scalar_type_name(other._dtype)}")
    shape = broadcast_shapes(self._shape, other._shape)
    d = wrap_dim(dim, len(shape))
    if self._shape[d] != 3 or other._shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{self._shape[d]} and {other._shape[d]}")
    _no_bool("cross", self)
    dev = common_device([self, other])
    a, b = self.expand(shape), other.expand(shape)
    out = new_tensor(shape, self._dtype, dev)
    if out.numel() == 0:
        return out
    part = shape[:d] + (1,) + shape[d + 1:]
    left, right = new_tensor(part, self._dtype, dev), new_tensor(part, self._dtype, dev)
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        # out_i = a_j * b_k - a_k * b_j
        PRIMS.mul(left, a.narrow(d, j, 1), b.narrow(d, k, 1))
        PRIMS.mul(right, a.narrow(d, k, 1), b.narrow(d, j, 1))
        PRIMS.sub(out.narrow(d, i, 1), left, right)
    return out


def _define_aten() -> dict[str, _dispatch.Operator]:
    explicit = _dispatch.COMPOSITE_EXPLICIT
    implicit = _dispatch.COMPOSITE_IMPLICIT
    table = {
        "mm": ("mm(Tensor self, Tensor mat2) -> Tensor", _mm_kernel, explicit),
        "bmm": ("bmm(Tensor self, Tensor mat2) -> Tensor", _bmm_kernel, explicit),
        "mv": ("mv(Tensor self, Tensor vec) -> Tensor", _mv_kernel, explicit),
        "dot": ("dot(Tensor self, Tensor tensor) -> Tensor", _dot_kernel, explicit),
        "vdot": ("vdot(Tensor self, Tensor other) -> Tensor", _vdot_kernel, explicit),
        "linalg_cross": ("linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor",
                         _cross_kernel, explicit),
        "matmul": ("matmul(Tensor self, Tensor other) -> Tensor", _matmul_impl, implicit),
        "addmm": ("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, "
                  "Scalar alpha=1) -> Tensor", _addmm_impl, implicit),
        "addmv": ("addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, "
                  "Scalar alpha=1) -> Tensor", _addmv_impl, implicit),
        "baddbmm": ("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
                    "Scalar alpha=1) -> Tensor", _baddbmm_impl, implicit),
        "addbmm": ("addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
                   "Scalar alpha=1) -> Tensor", _addbmm_impl, implicit),
        "outer": ("outer(Tensor self, Tensor vec2) -> Tensor", _outer_impl, implicit),
        "inner": ("inner(Tensor self, Tensor other) -> Tensor", _inner_impl, implicit),
        "kron": ("kron(Tensor self, Tensor other) -> Tensor", _kron_impl, implicit),
        "trace": ("trace(Tensor self) -> Tensor", _trace_impl, implicit),
        "tensordot": ("tensordot(Tensor self, Tensor other, int[] dims_self, "
                      "int[] dims_other) -> Tensor", _tensordot_impl, implicit),
        "einsum": ("einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
                   _einsum_impl, implicit),
    }
    return _dispatch.define_aten(table)


# -- composites ------------------------------------------------------------------------------


def _matmul_impl(self: Tensor, other: Tensor) -> Tensor:
    da, db = self.ndim, other.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        return ATEN["dot"](self, other)
    if da == 2 and db == 1:
        return ATEN["mv"](self, other)
    if da == 1 and db == 2:
        return ATEN["mm"](self.unsqueeze(0), other).squeeze(0)
    if da == 2 and db == 2:
        return ATEN["mm"](self, other)
    if da >= 3 and db <= 2:
        # Fold the batch into the rows: (..., n, k) -> (B*n, k), one mm (or mv).
        batch_rows = self._shape[:-1]
        folded = self.reshape(-1, self._shape[-1])
        if db == 1:
            return ATEN["mv"](folded, other).view(batch_rows)
        return ATEN["mm"](folded, other).view(batch_rows + other._shape[-1:])
    # Both batched (or a vector against a batch): broadcast the batch dims, run one bmm.
    a = self.unsqueeze(0) if da == 1 else self  # (1, k)
    b = other.unsqueeze(-1) if db == 1 else other  # (k, 1)
    n, k = a._shape[-2:]
    k2, m = b._shape[-2:]
    batch = tuple(broadcast_shapes(a._shape[:-2], b._shape[:-2]))
    size = 1
    for s in batch:
        size *= s
    a3 = a.expand(batch + (n, k)).reshape(size, n, k)
    b3 = b.expand(batch + (k2, m)).reshape(size, k2, m)
    out = ATEN["bmm"](a3, b3).view(batch + (n, m))
    if da == 1:
        out = out.squeeze(-2)
    if db == 1:
        out = out.squeeze(-1)
    return out


def _true_like(t: Tensor) -> Tensor:
    """A 0-dim ``True`` on ``t``'s device (a ``where`` condition that always takes the first)."""
    flag = new_tensor((), _dtype.bool_, t._device)
    PRIMS.fill_(flag, True)
    return flag


def _broadcasts_to(shape: tuple[int, ...], full: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``full`` without growing it (what ``expand`` allows)."""
    if len(shape) > len(full):
        return False
    lead = len(full) - len(shape)
    for i, size in enumerate(shape):
        if size != 1 and size != full[lead + i]:
            return False
    return True


def _scaled_sum(input: Tensor, product: Tensor, beta: Any, alpha: Any) -> Tensor:
    """``beta * input + alpha * product`` with ``input`` broadcast to ``product``'s shape; when
    ``beta`` is 0 ``input`` is ignored (its NaN and inf do not propagate), as in PyTorch."""
    dt = product._dtype
    if (beta.__class__ is int and beta == 1 and alpha.__class__ is int and alpha == 1
            and _broadcasts_to(input._shape, product._shape)):
        # ``F.linear``'s bias: the add broadcasts ``input`` itself (the values and the
        # gradient, summed over the broadcast dims, are the expanded operand's), one op less
        return add(input, product)
    expanded = input.expand(product._shape)
    beta, alpha = _scalar_for(beta, dt), _scalar_for(alpha, dt)
    if alpha != 1:
        product = mul(product, alpha)
    if beta == 0:
        if input.requires_grad and _config.is_grad_enabled():
            # PyTorch gives ``input`` a zero gradient (not None): keep it in the graph
            # without letting its values (NaN, inf) into the result.
            return where(_true_like(product), product, expanded)
        return product
    if beta != 1:
        expanded = mul(expanded, beta)
    return add(expanded, product)


def _check_same_dtype(first: str, a: Tensor, second: str, b: Tensor) -> None:
    if a._dtype is not b._dtype:
        raise RuntimeError(f"{first} and {second} must have the same dtype, but got "
                           f"{scalar_type_name(a._dtype)} and {scalar_type_name(b._dtype)}")


def _addmm_impl(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1,
                alpha: Any = 1) -> Tensor:
    _check_same_dtype("self", self, "mat2", mat2)
    _check_same_dtype("self", self, "mat1", mat1)
    return _scaled_sum(self, ATEN["mm"](mat1, mat2), beta, alpha)


def _addmv_impl(self: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1,
                alpha: Any = 1) -> Tensor:
    if not (self._dtype is mat._dtype is vec._dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{scalar_type_name(self._dtype)}, {scalar_type_name(mat._dtype)}, "
                           f"and {scalar_type_name(vec._dtype)}")
    return _scaled_sum(self, ATEN["mv"](mat, vec), beta, alpha)


def _baddbmm_impl(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
                  alpha: Any = 1) -> Tensor:
    if not (self._dtype is batch1._dtype is batch2._dtype):
        raise RuntimeError(f"Input dtypes must be the same, got: input "
                           f"{_CPP_NAMES[self._dtype._name]}, batch1: "
                           f"{_CPP_NAMES[batch1._dtype._name]}, batch2: "
                           f"{_CPP_NAMES[batch2._dtype._name]}")
    return _scaled_sum(self, ATEN["bmm"](batch1, batch2), beta, alpha)


def _addbmm_impl(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
                 alpha: Any = 1) -> Tensor:
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch1._shape[0] != batch2._shape[0] or batch1._shape[2] != batch2._shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch1._shape[0]}, {batch1._shape[2]}] but got: "
                           f"[{batch2._shape[0]}, {batch2._shape[1]}].")
    _check_same_dtype("self", self, "mat2", batch2)
    _check_same_dtype("self", self, "mat1", batch1)
    bs, n, k = batch1._shape
    m = batch2._shape[2]
    # sum_b batch1[b] @ batch2[b] is one (n, bs*k) @ (bs*k, m) product
    rows = batch1.permute(1, 0, 2).reshape(n, bs * k)
    cols = batch2.reshape(bs * k, m)
    return _scaled_sum(self, ATEN["mm"](rows, cols), beta, alpha)


def _outer_impl(self: Tensor, vec2: Tensor) -> Tensor:
    for name, v in (("self", self), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return mul(self.unsqueeze(1), vec2)


def _inner_impl(self: Tensor, other: Tensor) -> Tensor:
    if self.ndim == 0 or other.ndim == 0:
        return mul(self, other)
    if self._shape[-1] != other._shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(self._shape)} and {list(other._shape)}")
    return _tensordot_impl(self, other, [self.ndim - 1], [other.ndim - 1])


def _kron_impl(self: Tensor, other: Tensor) -> Tensor:
    nd = max(self.ndim, other.ndim)
    sa = (1,) * (nd - self.ndim) + tuple(self._shape)
    sb = (1,) * (nd - other.ndim) + tuple(other._shape)
    # a as (a0, 1, a1, 1, ...) times b as (1, b0, 1, b1, ...) -> (a0, b0, a1, b1, ...)
    a = self.reshape(tuple(x for s in sa for x in (s, 1)))
    b = other.reshape(tuple(x for s in sb for x in (1, s)))
    return mul(a, b).reshape(tuple(x * y for x, y in zip(sa, sb)))


def _trace_impl(self: Tensor) -> Tensor:
    if self.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
    _no_bool("trace", self)
    return sum(self.diagonal())


def _tensordot_impl(self: Tensor, other: Tensor, dims_self: Sequence[int],
                    dims_other: Sequence[int]) -> Tensor:
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    if self._dtype is not other._dtype:
        raise RuntimeError("both inputs should have same dtype")
    ca = [wrap_dim(d, self.ndim) for d in dims_self]
    cb = [wrap_dim(d, other.ndim) for d in dims_other]
    a, b = self, other
    for i, j in zip(ca, cb):
        sa, sb = a._shape[i], b._shape[j]
        if sa == sb:
            continue
        # a size-1 contracted dim broadcasts against the other side
        if sa == 1:
            a = a.expand(a._shape[:i] + (sb,) + a._shape[i + 1:])
        elif sb == 1:
            b = b.expand(b._shape[:j] + (sa,) + b._shape[j + 1:])
        else:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} "
                               f"in dim {dims_self[ca.index(i)]} and second has size {sb} in "
                               f"dim {dims_other[cb.index(j)]}")
    free_a = [d for d in range(a.ndim) if d not in ca]
    free_b = [d for d in range(b.ndim) if d not in cb]
    k = 1
    for d in ca:
        k *= a._shape[d]
    sa = tuple(a._shape[d] for d in free_a)
    sb = tuple(b._shape[d] for d in free_b)
    left = a.permute(free_a + ca).reshape(_numel(sa), k)  # (free_a..., K)
    right = b.permute(cb + free_b).reshape(k, _numel(sb))  # (K, free_b...)
    shape = sa + sb
    return ATEN["mm"](left, right).view(shape)


# -- einsum ----------------------------------------------------------------------------------

_LETTERS = string.ascii_letters


def _parse_subscripts(term: str, pos: int) -> list[str]:
    """The labels of one operand's term; ``"."`` stands for the ellipsis."""
    labels: list[str] = []
    i = 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "..." or "." in labels:
                raise RuntimeError("einsum(): found '.' for operand that is not part of any "
                                   "ellipsis")
            labels.append(".")
            i += 3
            continue
        if c not in _LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript given at index {pos + i} in the "
                               "equation string, subscripts must be in [a-zA-Z]")
        labels.append(c)
        i += 1
    return labels


def _einsum_impl(equation: str, tensors: Sequence[Tensor], *, path: Any = None) -> Tensor:
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(tensors):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(terms) < len(tensors):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    if not tensors:
        raise RuntimeError("einsum(): must provide at least one operand")
    dt = tensors[0]._dtype
    for t in tensors[1:]:
        if t._dtype is not dt:
            raise RuntimeError(f"expected scalar type {scalar_type_name(dt)} but found "
                               f"{scalar_type_name(t._dtype)}")
    # Expand each term into one label per dim; ellipsis dims get the labels "0", "1", ...
    # counted from the right, so they align the way broadcasting does.
    ell_ndim = 0
    operands: list[tuple[Tensor, list[str]]] = []
    pos = 0
    for n, (term, t) in enumerate(zip(terms, tensors)):
        labels = _parse_subscripts(term, pos)
        pos += len(term) + 1
        named = len(labels) - (1 if "." in labels else 0)
        if "." in labels:
            if t.ndim < named:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named})"
                                   f" is more than the number of dimensions ({t.ndim}) for "
                                   f"operand {n}")
            e = t.ndim - named
            ell_ndim = max(ell_ndim, e)
            at = labels.index(".")
            labels = labels[:at] + [str(e - 1 - i) for i in range(e)] + labels[at + 1:]
        elif named != t.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) "
                               f"does not match the number of dimensions ({t.ndim}) for operand "
                               f"{n} and no ellipsis was given")
        operands.append((t, labels))
    ellipsis = [str(ell_ndim - 1 - i) for i in range(ell_ndim)]
    counts: dict[str, int] = {}
    for _, labels in operands:
        for c in labels:
            counts[c] = counts.get(c, 0) + 1
    if arrow:
        out_labels = _parse_subscripts(rhs, len(lhs) + 2)
        if "." in out_labels:
            at = out_labels.index(".")
            out_labels = out_labels[:at] + ellipsis + out_labels[at + 1:]
        for c in out_labels:
            if c in _LETTERS and c not in counts:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   "equation for any input operand")
            if out_labels.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                                   "the output")
    else:
        # implicit output: the ellipsis dims, then the labels seen once, in alphabetical order
        # (upper case before lower case, as PyTorch's ordering does)
        once = sorted((c for c, n in counts.items() if n == 1 and c in _LETTERS),
                      key=lambda c: (c.islower(), c))
        out_labels = ellipsis + once
    # Each label's size: equal sizes, or 1 which broadcasts.
    sizes: dict[str, int] = {}
    for n, (t, labels) in enumerate(operands):
        for c, s in zip(labels, t._shape):
            seen = sizes.get(c)
            if seen is None or seen == 1:
                sizes[c] = s
            elif s != 1 and s != seen:
                what = f"subscript {c}" if c in _LETTERS else "ellipsis dims"
                raise RuntimeError(f"einsum(): {what} has size {s} for operand {n} which does "
                                   f"not broadcast with previously seen size {seen}")
    # Take diagonals of repeated labels within an operand, sum out labels nobody else needs.
    prepared: list[tuple[Tensor, list[str]]] = []
    for i, (t, labels) in enumerate(operands):
        t, labels = _einsum_diagonals(t, labels)
        others = set(out_labels)
        for j, (_, lab) in enumerate(operands):
            if j != i:
                others.update(lab)
        drop = [d for d, c in enumerate(labels) if c not in others]
        if drop:
            t = sum(t, drop)
            labels = [c for d, c in enumerate(labels) if d not in drop]
        prepared.append((t, labels))
    # Contract left to right.
    t, labels = prepared[0]
    for i in range(1, len(prepared)):
        u, ulabels = prepared[i]
        needed = set(out_labels)
        for _, lab in prepared[i + 1:]:
            needed.update(lab)
        t, labels = _einsum_pair(t, labels, u, ulabels, needed, sizes)
    # Sum whatever is left that the output does not keep, then order like the output.
    drop = [d for d, c in enumerate(labels) if c not in out_labels]
    if drop:
        t = sum(t, drop)
        labels = [c for d, c in enumerate(labels) if d not in drop]
    t = t.permute([labels.index(c) for c in out_labels]) if out_labels else t
    shape = tuple(sizes[c] for c in out_labels)
    return t if t._shape == shape else t.expand(shape)


def _einsum_diagonals(t: Tensor, labels: list[str]) -> tuple[Tensor, list[str]]:
    """``t`` with every label repeated within it reduced to its diagonal (a view)."""
    while True:
        for d1, c in enumerate(labels):
            if c in labels[d1 + 1:]:
                d2 = labels.index(c, d1 + 1)
                if t._shape[d1] != t._shape[d2]:
                    raise RuntimeError(f"einsum(): subscript {c} is repeated for operand but the "
                                       f"sizes don't match, {t._shape[d1]} != {t._shape[d2]}")
                t = t.diagonal(0, d1, d2)  # the diagonal becomes the last dim
                labels = [x for d, x in enumerate(labels) if d not in (d1, d2)] + [c]
                break
        else:
            return t, labels


def _einsum_pair(a: Tensor, la: list[str], b: Tensor, lb: list[str], needed: set[str],
                 sizes: dict[str, int]) -> tuple[Tensor, list[str]]:
    """Contract two operands: labels in both and still needed are the batch, in both and not
    needed are summed, the rest are each side's free dims. One bmm, or a broadcast product
    when nothing is summed."""
    summed = [c for c in la if c in lb and c not in needed]
    # A summed label of size 1 on one side: sum it out of each side first (what PyTorch does,
    # so integer operands promote as its sums do).
    ones = [c for c in summed if a._shape[la.index(c)] == 1 or b._shape[lb.index(c)] == 1]
    if ones:
        a = sum(a, [la.index(c) for c in ones])
        b = sum(b, [lb.index(c) for c in ones])
        la = [c for c in la if c not in ones]
        lb = [c for c in lb if c not in ones]
        summed = [c for c in summed if c not in ones]
    # A kept label of size 1 on one side only is the other side's free dim (as in PyTorch,
    # whose result's layout follows from it): squeezed out of the side where it is 1.
    lone_a = [c for c in la if c in lb and c in needed and a._shape[la.index(c)] == 1
              and b._shape[lb.index(c)] != 1]
    lone_b = [c for c in lb if c in la and c in needed and b._shape[lb.index(c)] == 1
              and a._shape[la.index(c)] != 1]
    if lone_a or lone_b:
        a = a.squeeze([la.index(c) for c in lone_a]) if lone_a else a
        b = b.squeeze([lb.index(c) for c in lone_b]) if lone_b else b
        la = [c for c in la if c not in lone_a]
        lb = [c for c in lb if c not in lone_b]
    batch = [c for c in la if c in lb and c in needed]
    free_a = [c for c in la if c not in lb]
    free_b = [c for c in lb if c not in la]
    shared = set(batch + summed)

    def arrange(t: Tensor, labels: list[str], order: list[str]) -> tuple[Tensor, list[int]]:
        t = t.permute([labels.index(c) for c in order]) if order else t
        # size-1 dims of shared labels broadcast to the label's size
        shape = tuple(sizes[c] if c in shared else t._shape[i] for i, c in enumerate(order))
        return (t.expand(shape) if shape != t._shape else t), list(shape)

    ta, sa = arrange(a, la, batch + free_a + summed)  # (batch, free_a, summed)
    tb, sb = arrange(b, lb, batch + free_b + summed)  # (batch, free_b, summed)
    nbat, nfa, nfb = len(batch), len(free_a), len(free_b)
    bshape, fa, fb = sa[:nbat], sa[nbat:nbat + nfa], sb[nbat:nbat + nfb]
    if not summed or a._dtype is not b._dtype:
        # (batch, free_a, 1..., summed) * (batch, 1..., free_b, summed), then sum
        ns = len(summed)
        sums = sa[nbat + nfa:]
        out = mul(ta.reshape(bshape + fa + [1] * nfb + sums),
                  tb.reshape(bshape + [1] * nfa + fb + sums))
        if ns:
            out = sum(out, list(range(out.ndim - ns, out.ndim)))
        return out, batch + free_a + free_b
    _no_bool("bmm", a)
    nb, n, m, k = (_numel(x) for x in (bshape, fa, fb, sa[nbat + nfa:]))
    out = ATEN["bmm"](ta.reshape(nb, n, k), tb.reshape(nb, m, k).transpose(1, 2))
    return out.view(tuple(bshape + fa + fb)), batch + free_a + free_b


def _numel(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


ATEN = _define_aten()
# A dispatch mode sees matmul's mm/bmm and views, with or without grad, as PyTorch's (whose
# matmul is CompositeImplicitAutograd): FlopCounterMode and make_fx graphs name mm and bmm
ATEN["matmul"].python_key_composite = _matmul_impl
ATEN["einsum"].python_key_composite = _einsum_impl  # (likewise: permutes, views, bmm)
# kernels decided by the call signature alone (addmm, baddbmm: a chain of the product and the
# scaled sum)
_plan.enable(ATEN["mm"], ATEN["bmm"], ATEN["addmm"], ATEN["baddbmm"])


# -- public functions ------------------------------------------------------------------------


def mm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Matrix product of two 2-d tensors of one dtype: (n, k) @ (k, m) -> (n, m)."""
    _check_tensor("mm", "input", input)
    _check_tensor("mm", "mat2", mat2)
    return write_out(out, ATEN["mm"](input, mat2))


def bmm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Batched matrix product: (b, n, k) @ (b, k, m) -> (b, n, m)."""
    _check_tensor("bmm", "input", input)
    _check_tensor("bmm", "mat2", mat2)
    return write_out(out, ATEN["bmm"](input, mat2))


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The matrix product with NumPy's rules: 1-d operands are vectors, batch dims broadcast."""
    if (out is None and input.__class__ is Tensor and other.__class__ is Tensor
            and len(input._shape) == 2 and len(other._shape) == 2
            and not _state.keys_active):
        # two matrices: aten::mm at once, the op aten::matmul's kernel runs for them (one
        # dispatch less), unless aten::matmul has a kernel of another library or a mode or
        # autocast region is open somewhere (they see aten::matmul's own path)
        direct = _matmul_direct
        if direct is None:
            direct = _matmul_only_core()
        if direct:
            return ATEN["mm"](input, other)
    _check_tensor("matmul", "input", input)
    _check_tensor("matmul", "other", other)
    return write_out(out, ATEN["matmul"](input, other))


# Whether aten::matmul has core's kernel alone (None: not known since the last registration).
_matmul_direct: bool | None = None


def _matmul_only_core() -> bool:
    global _matmul_direct
    op = ATEN["matmul"]
    _matmul_direct = list(op.kernels) == [_dispatch.COMPOSITE_IMPLICIT]
    return _matmul_direct


def _forget_matmul_direct() -> None:
    global _matmul_direct
    _matmul_direct = None


_dispatch.on_invalidate.append(_forget_matmul_direct)
_state = _config.state


def mv(input: Tensor, vec: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Matrix-vector product: (n, k) @ (k,) -> (n,)."""
    _check_tensor("mv", "input", input)
    _check_tensor("mv", "vec", vec)
    return write_out(out, ATEN["mv"](input, vec))


def dot(input: Tensor, tensor: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The dot product of two 1-d tensors of one dtype (no conjugation)."""
    _check_tensor("dot", "input", input)
    _check_tensor("dot", "tensor", tensor)
    return write_out(out, ATEN["dot"](input, tensor))


def vdot(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The dot product of two 1-d tensors, conjugating ``input`` when it is complex."""
    _check_tensor("vdot", "input", input)
    _check_tensor("vdot", "other", other)
    return write_out(out, ATEN["vdot"](input, other))


def inner(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Sum of products over the last dim of both (a product when either is 0-d)."""
    _check_tensor("inner", "input", input)
    _check_tensor("inner", "other", other)
    return write_out(out, ATEN["inner"](input, other))


def outer(input: Tensor, vec2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The outer product of two 1-d tensors (with type promotion)."""
    _check_tensor("outer", "input", input)
    _check_tensor("outer", "vec2", vec2)
    return write_out(out, ATEN["outer"](input, vec2))


def ger(input: Tensor, vec2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Alias of :func:`outer`."""
    return outer(input, vec2, out=out)


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Alias of :func:`mm` (either side may be a sparse COO matrix; PyTorch keeps this name
    from before ``mm`` took sparse inputs, and its gradients are ``mm``'s)."""
    return mm(input, mat2)


def _defaults(beta: Any, alpha: Any) -> bool:
    """Whether ``beta`` and ``alpha`` are the schema's defaults (the int 1)."""
    return beta.__class__ is int and beta == 1 and alpha.__class__ is int and alpha == 1


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1,
          out: Tensor | None = None) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product's shape."""
    for name, t in (("input", input), ("mat1", mat1), ("mat2", mat2)):
        _check_tensor("addmm", name, t)
    if _defaults(beta, alpha):  # (not passed: a mode sees what PyTorch's sees, the key is short)
        return write_out(out, ATEN["addmm"](input, mat1, mat2))
    return write_out(out, ATEN["addmm"](input, mat1, mat2, beta=beta, alpha=alpha))


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1,
          out: Tensor | None = None) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    for name, t in (("input", input), ("mat", mat), ("vec", vec)):
        _check_tensor("addmv", name, t)
    return write_out(out, ATEN["addmv"](input, mat, vec, beta=beta, alpha=alpha))


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1,
            out: Tensor | None = None) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    for name, t in (("input", input), ("batch1", batch1), ("batch2", batch2)):
        _check_tensor("baddbmm", name, t)
    if _defaults(beta, alpha):
        return write_out(out, ATEN["baddbmm"](input, batch1, batch2))
    return write_out(out, ATEN["baddbmm"](input, batch1, batch2, beta=beta, alpha=alpha))


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1,
           out: Tensor | None = None) -> Tensor:
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``."""
    for name, t in (("input", input), ("batch1", batch1), ("batch2", batch2)):
        _check_tensor("addbmm", name, t)
    return write_out(out, ATEN["addbmm"](input, batch1, batch2, beta=beta, alpha=alpha))


def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    """Product of 2-d matrices (deprecated in PyTorch in favour of ``linalg.multi_dot``)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                  "more tensors rather than multiple parameters.", UserWarning,
                  stacklevel=_config.external_stacklevel())
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        if matrices[0].ndim != 2:
            raise RuntimeError(f"Tensor dimension is {matrices[0].ndim}, expected 2 instead.")
        return write_out(out, matrices[0].clone())
    for t in matrices:
        if t.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t.ndim}, expected 2 instead.")
    return write_out(out, _linalg().multi_dot(list(matrices)))


def _tensordot_dims(a: Tensor, b: Tensor, dims: Any) -> tuple[list[int], list[int]]:
    if isinstance(dims, Tensor):
        dims = dims.item() if dims.ndim == 0 else dims.tolist()
    if isinstance(dims, int) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(a.ndim - dims, a.ndim)), list(range(dims))
    if isinstance(dims, (list, tuple)) and len(dims) == 2:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        if isinstance(dims, tuple) and (isinstance(dims[0], int) or isinstance(dims[1], int)):
            raise TypeError("tensordot(): argument 'dims_self' (position 3) must be tuple of "
                            "ints, not int")
        return da, db
    raise RuntimeError("tensordot expects dims to be an int or a pair of lists of dims, got "
                       f"{dims!r}")


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """Contract ``dims`` (an int: the last of ``a`` with the first of ``b``; or a pair of
    lists of dims) and keep the remaining dims of ``a`` then ``b``."""
    _check_tensor("tensordot", "a", a)
    _check_tensor("tensordot", "b", b)
    da, db = _tensordot_dims(a, b, dims)
    return write_out(out, ATEN["tensordot"](a, b, da, db))


def kron(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The Kronecker product (with type promotion)."""
    _check_tensor("kron", "input", input)
    _check_tensor("kron", "other", other)
    return write_out(out, ATEN["kron"](input, other))


def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a 2-d tensor (integers sum to int64)."""
    _check_tensor("trace", "input", input)
    return ATEN["trace"](input)


def _sublist_term(sub: Any) -> str:
    """One sublist of einsum's second form as equation letters (0 -> "a", 26 -> "A")."""
    chars = []
    for s in sub:
        if s is Ellipsis:
            chars.append("...")
        elif isinstance(s, int) and 0 <= s < 52:
            chars.append(_LETTERS[s])
        else:
            raise RuntimeError(f"einsum(): expected subscript to be within [0, 52) but got {s}")
    return "".join(chars)


def einsum_arguments(args: tuple[Any, ...]) -> tuple[str, list[Any]]:
    """``einsum``'s arguments as ``(equation, operands)``: the equation form, with the
    operands given one by one or as one list, and the sublist form
    ``(a, [0, 1], b, [1, 2], [0, 2])``."""
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand, "
                        "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
        return equation, operands
    pairs, output = (args[:-1], args[-1]) if len(args) % 2 else (args, None)
    equation = ",".join(_sublist_term(s) for s in pairs[1::2])
    if output is not None:
        equation += "->" + _sublist_term(output)
    return equation, list(pairs[0::2])


def einsum(*args: Any) -> Tensor:
    """Sums of products over the labelled dims of the operands: ``einsum("ij,jk->ik", a, b)``;
    ellipsis and the implicit output (labels seen once, alphabetically) included. The sublist
    form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` works too."""
    equation, operands = einsum_arguments(args)
    for t in operands:
        _check_tensor("einsum", "operands", t)
    return ATEN["einsum"](equation, operands)


def cross(input: Tensor, other: Tensor, dim: int | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """Cross product of 3-vectors along ``dim`` (by default, the first dim of size 3, which
    PyTorch deprecates: prefer ``torch.linalg.cross``). Inputs broadcast."""
    _check_tensor("cross", "input", input)
    _check_tensor("cross", "other", other)
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                      "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                      "default value of dim will change to agree with that of linalg.cross in a "
                      "future release.", UserWarning, stacklevel=_config.external_stacklevel())
        if input.ndim != other.ndim:
            raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
        shape = broadcast_shapes(input._shape, other._shape)
        dim = next((d for d, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return write_out(out, ATEN["linalg_cross"](input, other, dim=dim))


# -- torch.* spellings of torch.linalg -------------------------------------------------------


def det(input: Tensor) -> Tensor:
    """Alias of :func:`torch.linalg.det`."""
    return _linalg().det(input)


def logdet(input: Tensor) -> Tensor:
    """Log of the determinant: NaN for a negative determinant, -inf for zero."""
    return _linalg().logdet(input)


def slogdet(input: Tensor) -> Any:
    """(sign, logabsdet) of square matrices, as ``torch.return_types.slogdet``."""
    sign, logabsdet = _linalg().slogdet(input)
    return _linalg().slogdet_result(sign, logabsdet)


def inverse(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Alias of :func:`torch.linalg.inv`."""
    return _linalg().inv(input, out=out)


def cholesky(input: Tensor, upper: bool = False, *, out: Tensor | None = None) -> Tensor:
    """Deprecated spelling of :func:`torch.linalg.cholesky` (``upper`` gives U = L^H)."""
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
                  "removed in a future PyTorch release.", UserWarning,
                  stacklevel=_config.external_stacklevel())
    return _linalg().cholesky(input, upper=upper, out=out)


def qr(input: Tensor, some: bool = True, *, out: Any = None) -> Any:
    """Deprecated spelling of :func:`torch.linalg.qr`: ``some=False`` is mode "complete"."""
    q, r = _linalg().qr(input, mode="reduced" if some else "complete")
    return _linalg().qr_result(q, r, name="qr")


def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out: Any = None) -> Any:
    """Deprecated spelling of the SVD: returns (U, S, V) with V (not V^H); ``some=False``
    gives full U and V."""
    return _linalg().svd_legacy(input, some, compute_uv)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """Pseudo-inverse with singular values below ``rcond * max(S)`` treated as zero."""
    return _linalg().pinv(input, rtol=rcond)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """Alias of :func:`torch.linalg.matrix_power`."""
    return _linalg().matrix_power(input, n)


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         out: Tensor | None = None, dtype: _dtype.dtype | None = None) -> Tensor:
    """The legacy norm: ``p`` a number (vector norm over ``dim``, all dims by default), "fro"
    (2-norm over the given dims) or "nuc" (nuclear norm of a matrix)."""
    la = _linalg()
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            if dim is None or isinstance(dim, int) or len(dim) == 1:
                result = la.vector_norm(input, 2, dim, keepdim, dtype=dtype)
            else:
                result = la.matrix_norm(input, "fro", dim, keepdim, dtype=dtype)
        elif p == "nuc":
            dims = (-2, -1) if dim is None else dim
            result = la.matrix_norm(input, "nuc", dims, keepdim, dtype=dtype)
        else:
            raise RuntimeError(f"norm(): unsupported p={p!r} with dim={dim!r}")
    else:
        result = la.vector_norm(input, 2 if p is None else p, dim, keepdim, dtype=dtype)
    return write_out(out, result)


def _matmul_method(self: Tensor, other: Any) -> Any:
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(self, other)


def _rmatmul_method(self: Tensor, other: Any) -> Any:
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


def _imatmul_method(self: Tensor, other: Tensor) -> Tensor:
    result = matmul(self, other)
    if result._shape != self._shape:
        raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the broadcast "
                           f"shape {list(result._shape)}")
    return copy_(self, result)


def _method_norm(self: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
                 dtype: _dtype.dtype | None = None) -> Tensor:
    return norm(self, p, dim, keepdim, dtype=dtype)


# Tensor method name -> function, bound onto Tensor when the op surface loads.
METHODS: dict[str, Any] = {
    "mm": mm, "bmm": bmm, "matmul": matmul, "mv": mv, "dot": dot, "vdot": vdot,
    "inner": inner, "outer": outer, "ger": ger, "addmm": addmm, "addmv": addmv,
    "baddbmm": baddbmm, "addbmm": addbmm, "kron": kron, "trace": trace,
    "cross": cross, "det": det, "logdet": logdet, "slogdet": slogdet, "inverse": inverse,
    "cholesky": cholesky, "qr": qr, "svd": svd, "pinverse": pinverse,
    "matrix_power": matrix_power, "norm": _method_norm,
    # (compute, then write into self: a dispatch mode sees aten::addmm_ and the rest)
    **{f"{fn.__name__}_": inplace_method(fn, f"{fn.__name__}_")
       for fn in (addmm, addmv, baddbmm, addbmm)},
    "__matmul__": _matmul_method, "__rmatmul__": _rmatmul_method,
    "__imatmul__": _imatmul_method,
}
