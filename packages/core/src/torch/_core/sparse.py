"""Sparse COO tensors, the core side: what a sparse tensor is and how the dispatcher finds its
kernels.

A sparse tensor is a :class:`SparseTensor` (a ``Tensor``) that holds two dense tensors, its
``indices`` (``sparse_dim`` x ``nnz``, int64) and ``values`` (``nnz`` x the dense dims), and
no storage of its own. Its ``_device`` slot holds a :class:`SparseKey` rather than a device:
the dispatcher computes a call's backend key from its tensors' ``_device`` slots, so a sparse
argument sends the call to ``Sparse<backend key>`` (``SparseCPU``) with no test on the dense
path. Kernels register under the alias key :data:`SPARSE`, which serves every device's sparse
key (they are written over dense ops, so each backend gets sparse support from its dense
kernels); a sparse key never falls back to the dense kernels, and an op without a sparse kernel
raises the dispatcher's "Could not run ... 'SparseCPU' backend" error.
"""

from __future__ import annotations

from typing import Any

from . import layout as _layout, registry as _registry
from .device import device as _device
from .tensor import Size, Tensor, _disabled_torch_function_impl

SPARSE = "Sparse"  # the alias key sparse kernels register under (every device's sparse key)
SPARSE_KEYS: set[str] = set()  # the per-device sparse keys made so far (SparseCPU, ...)
_KEYS: dict[tuple[str, int | None], SparseKey] = {}


class SparseKey:
    """What a sparse tensor's ``_device`` slot holds: its device (``dense``) and the dispatch
    key of sparse tensors there. ``_type`` is that key, which no backend runtime has, so the
    dispatcher's device lookup misses and asks the key itself."""

    __slots__ = ("_index", "_type", "dense", "dispatch_key")

    def __init__(self, dense: _device) -> None:
        self.dense = dense
        self.dispatch_key = SPARSE + _registry.dispatch_key(dense._type)
        self._type = self.dispatch_key
        self._index = dense._index

    @property
    def type(self) -> str:
        return self.dense._type

    @property
    def index(self) -> int | None:
        return self.dense._index

    def __repr__(self) -> str:
        return f"SparseKey({self.dense!r})"

    # equal to its device, so that ``t.to(t.device)`` sees nothing to do
    def __eq__(self, other: object) -> bool:
        if isinstance(other, SparseKey):
            return self.dense == other.dense
        return self.dense == other

    def __hash__(self) -> int:
        return hash(self.dense)


def key_of(dev: _device) -> SparseKey:
    """The (interned) sparse key of device ``dev``."""
    k = (dev._type, dev._index)
    key = _KEYS.get(k)
    if key is None:
        key = _KEYS[k] = SparseKey(dev)
        SPARSE_KEYS.add(key.dispatch_key)
    return key


_STORAGE_ERROR = "Cannot access storage of SparseTensorImpl"


class SparseTensor(Tensor):
    """A sparse COO tensor (``layout == torch.sparse_coo``). Made by :func:`make`; the op
    library's sparse kernels compute on its ``indices`` and ``values``."""

    __slots__ = ("_coalesced", "_sparse_dim", "_sparse_indices", "_sparse_values")
    # No __torch_function__ of its own: the protocol's checks stay off (nn.Parameter does this).
    __torch_function__ = _disabled_torch_function_impl
    _planned_as_tensor = False  # (not a dense tensor below the facade: never planned)

    is_sparse = True

    @property
    def layout(self) -> Any:
        return _layout.sparse_coo

    @property
    def device(self) -> _device:
        return self._device.dense

    def sparse_dim(self) -> int:
        return self._sparse_dim

    def dense_dim(self) -> int:
        return len(self._shape) - self._sparse_dim

    def _nnz(self) -> int:
        return self._sparse_values._shape[0]

    def is_coalesced(self) -> bool:
        return self._coalesced

    def _coalesced_(self, coalesced: bool) -> SparseTensor:
        self._coalesced = bool(coalesced)
        return self

    def untyped_storage(self) -> Any:
        raise NotImplementedError(_STORAGE_ERROR)

    def data_ptr(self) -> int:
        raise RuntimeError(_STORAGE_ERROR)

    def storage_offset(self) -> int:
        raise RuntimeError("sparse tensors do not have storage")

    def is_contiguous(self, memory_format: Any = None) -> bool:
        raise RuntimeError("Tensors of type SparseTensorImpl do not have is_contiguous")

    def numpy(self, *, force: bool = False) -> Any:
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def tolist(self) -> Any:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage "
                           "(a sparse tensor: use to_dense() first)")

    def __deepcopy__(self, memo: dict[int, Any]) -> SparseTensor:
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        if id(self) in memo:
            return memo[id(self)]
        out = make(self._sparse_indices.__deepcopy__(memo),
                   self._sparse_values.detach().__deepcopy__(memo), self._shape,
                   self._coalesced)
        out._requires_grad = self._requires_grad
        memo[id(self)] = out
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        return out

    @property
    def nbytes(self) -> int:
        return self._sparse_indices.nbytes + self._sparse_values.nbytes


SparseTensor.__module__ = "torch"


def make(indices: Tensor, values: Tensor, shape: tuple[int, ...], coalesced: bool = False
         ) -> SparseTensor:
    """A new sparse tensor of ``shape`` over ``indices`` and ``values`` (dense tensors on one
    device, taken as they are: callers check them)."""
    t = object.__new__(SparseTensor)
    t._storage = None
    t._shape = shape if shape.__class__ is Size else Size(shape)
    t._stride = ()
    t._offset = 0
    t._dtype = values._dtype
    t._device = key_of(values._device)
    t._vc = [0]
    t._base = None
    t._grad = None
    t.grad_fn = None
    t._requires_grad = False
    t._interned_layout = None
    t._geometry = None
    t._sparse_indices = indices
    t._sparse_values = values
    t._sparse_dim = indices._shape[0]
    t._coalesced = coalesced
    return t


def is_sparse(t: Any) -> bool:
    """Whether ``t`` is a sparse tensor."""
    return t.__class__ is SparseTensor
