"""``torch.sparse``: functions on sparse COO tensors, as PyTorch's namespace has them.

The operators and their kernels are in ``torch._aten.sparse`` (derivatives in
``torch.autograd._formulas.sparse``); this module only names them. Only the COO layout is
supported: asking for CSR/CSC/BSR layouts raises ``NotImplementedError``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, _functions  # noqa: F401  (the op surface, which the sparse ops join)
from torch._aten import sparse as _sparse

__all__ = ["BFloat16Tensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
           "HalfTensor", "IntTensor", "LongTensor", "ShortTensor", "addmm",
           "check_sparse_tensor_invariants", "log_softmax", "mm", "softmax", "sum"]


def _sparse_input(fn: str, t: Any) -> Tensor:
    if not isinstance(t, Tensor) or not t.is_sparse:
        raise RuntimeError(f"torch.sparse.{fn}(): expected a sparse COO tensor, got "
                           f"{t.layout if isinstance(t, Tensor) else type(t).__name__}")
    return t


def mm(mat1: Tensor, mat2: Tensor, reduce: str = "sum") -> Tensor:
    """``mat1 @ mat2`` for a sparse ``mat1`` (2-d COO) and a dense or sparse ``mat2``; the
    gradient of ``mat1`` is sparse with ``mat1``'s pattern (``torch.mm`` gives a dense one,
    as in PyTorch)."""
    if reduce != "sum":
        raise NotImplementedError(f"torch.sparse.mm(): reduce='{reduce}' is not supported "
                                  "(only 'sum' is)")
    if isinstance(mat1, Tensor) and not mat1.is_sparse and isinstance(mat2, Tensor) \
            and mat2.is_sparse:
        return torch.mm(mat1, mat2)
    return _sparse.ATEN["_sparse_mm"](_sparse_input("mm", mat1), mat2)


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1.0,
          alpha: float = 1.0) -> Tensor:
    """``beta * mat + alpha * (mat1 @ mat2)`` for a sparse ``mat1`` and dense ``mat``,
    ``mat2`` (differentiable as :func:`mm` is)."""
    product = mm(mat1, mat2)
    if alpha != 1:
        product = product * alpha
    return product + (mat if beta == 1 else mat * beta) if beta != 0 else product


def sum(input: Tensor, dim: Any = None, dtype: Any = None) -> Tensor:
    """The sum of a sparse tensor over ``dim`` (all dims by default): a dense tensor when no
    sparse dim is left, else a coalesced sparse one. The gradient is sparse with the input's
    pattern."""
    t = _sparse_input("sum", input)
    if dtype is not None:
        t = t.to(dtype)
    if dim is not None and isinstance(dim, int):
        dim = [dim]
    return _sparse.ATEN["_sparse_sum"](t, None if dim is None else list(dim))


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Softmax along ``dim`` over the specified entries only (unspecified ones count as
    ``-inf``, so they stay unspecified): a sparse tensor with the coalesced input's
    pattern."""
    t = _sparse_input("softmax", input)
    if dtype is not None:
        t = t.to(dtype)
    return _sparse.ATEN["_sparse_softmax"](t, dim, False)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Log-softmax along ``dim`` over the specified entries only (see :func:`softmax`)."""
    t = _sparse_input("log_softmax", input)
    if dtype is not None:
        t = t.to(dtype)
    return _sparse.ATEN["_sparse_log_softmax"](t, dim, False)


class check_sparse_tensor_invariants:
    """PyTorch's switch for checking sparse tensors' indices when they are made. Plait
    always checks them (an index out of bounds would otherwise write outside a buffer), so
    this only records the setting."""

    _enabled = True

    def __init__(self, enable: bool = True) -> None:
        self._state = enable
        self._saved = True

    @staticmethod
    def is_enabled() -> bool:
        """Whether invariant checks are on (always, in Plait)."""
        return True

    @staticmethod
    def enable() -> None:
        """Turn the checks on (they always are)."""

    @staticmethod
    def disable() -> None:
        """Accepted for compatibility; the checks stay on."""

    def __enter__(self) -> check_sparse_tensor_invariants:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __call__(self, fn: Any) -> Any:
        return fn


# -- the legacy constructors (``torch.sparse.FloatTensor(indices, values, size)``, which older
# programs such as graph-convolution examples call) ------------------------------------------


class _LegacySparseType(type):
    """``isinstance(t, torch.sparse.FloatTensor)``: a sparse tensor of that dtype on the CPU."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return (isinstance(obj, Tensor) and obj.is_sparse and obj.dtype == cls._dtype
                and obj.device.type == "cpu")


def _legacy_type(name: str, dtype: Any) -> type:
    def __new__(cls: type, *args: Any, **kwargs: Any) -> Tensor:
        device = kwargs.pop("device", None)
        if kwargs:
            raise TypeError(f"torch.sparse.{name}(): unexpected keyword arguments "
                            f"{sorted(kwargs)}")
        if len(args) >= 2 and isinstance(args[0], Tensor) and isinstance(args[1], Tensor):
            size = args[2] if len(args) > 2 else None
            return torch.sparse_coo_tensor(args[0], args[1].to(dtype), size, device=device)
        if not args:
            args = (0,)
        sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) \
            else args
        return torch.zeros(*sizes, dtype=dtype, device=device, layout=torch.sparse_coo)

    doc = (f"``torch.sparse.{name}(indices, values[, size])`` or ``(*size)``: the legacy "
           f"constructor of a sparse COO tensor of dtype {dtype}.")
    cls = _LegacySparseType(name, (), {"__new__": __new__, "_dtype": dtype, "__doc__": doc,
                                       "__module__": "torch.sparse"})
    return cls


FloatTensor = _legacy_type("FloatTensor", torch.float32)
DoubleTensor = _legacy_type("DoubleTensor", torch.float64)
HalfTensor = _legacy_type("HalfTensor", torch.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", torch.bfloat16)
LongTensor = _legacy_type("LongTensor", torch.int64)
IntTensor = _legacy_type("IntTensor", torch.int32)
ShortTensor = _legacy_type("ShortTensor", torch.int16)
CharTensor = _legacy_type("CharTensor", torch.int8)
ByteTensor = _legacy_type("ByteTensor", torch.uint8)
