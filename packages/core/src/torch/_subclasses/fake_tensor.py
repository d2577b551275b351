"""Fake tensors: tensors with metadata (sizes, strides, dtype, device) and no data.

A :class:`FakeTensor` stands for a tensor on its ``device`` while its storage is a meta
allocation, so nothing is computed and no memory is used. Inside a :class:`FakeTensorMode`
every aten operator call runs its meta kernel on the fake tensors' metadata and returns fake
tensors on the device the real call would have produced; factories called inside the mode make
fake tensors too. With a shape environment (``static_shapes=False``), ``from_tensor`` gives the
fake tensor symbolic sizes (``torch.SymInt``), and the meta kernels compute symbolic output
sizes, recording the guards they take in the environment. The compiler traces with these.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import Any

import torch
from torch import _functions, _refs
from torch._aten import convert as _convert
from torch._core import dispatch as _dispatch, sparse as _sparse, symbolic as _symbolic
from torch._core.tensor import Tensor, _disabled_torch_function_impl, contiguous_strides
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["DataDependentOutputException", "DynamicOutputShapeException", "FakeTensor",
           "FakeTensorMode", "UnsupportedFakeTensorException", "unset_fake_temporarily"]


class UnsupportedFakeTensorException(RuntimeError):
    """A real tensor reached an op inside a FakeTensorMode that does not accept them."""


class DataDependentOutputException(RuntimeError):
    """A fake tensor was asked for a value it does not have (``item``, ``tolist``...)."""


class DynamicOutputShapeException(RuntimeError):
    """An op's output size depends on values a fake tensor does not hold (``nonzero``...)."""


def _meta_storage(nbytes: int) -> Any:
    return torch.empty(nbytes, dtype=torch.uint8, device="meta").untyped_storage()


class FakeTensor(Tensor):
    """A tensor of ``fake_mode`` standing for one on ``device``; its data is a meta
    allocation. Ops on it run through ``fake_mode`` (its ``__torch_dispatch__``)."""

    # Results stay fake through the dispatch key, not through __torch_function__ (which
    # would put entry checks in front of every plain call).
    __torch_function__ = _disabled_torch_function_impl

    fake_mode: FakeTensorMode

    @property
    def fake_device(self) -> torch.device:
        """The device this tensor stands for (its ``device``)."""
        return self._device

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        mode = None
        for t in _dispatch._tensors(args, kwargs or {}):
            if isinstance(t, FakeTensor):
                mode = t.fake_mode
                break
        if mode is None:
            return NotImplemented
        return mode.dispatch(func, args, kwargs or {})

    def __repr__(self) -> str:
        # as PyTorch prints it: the device unless it is the CPU
        device = "" if self._device.type == "cpu" else f"device='{self._device}', "
        return (f"FakeTensor(..., {device}size={tuple(self._shape)}"
                + (f", dtype={self._dtype}" if self._dtype is not torch.float32 else "")
                + (", requires_grad=True" if self.requires_grad else "") + ")")

    def _no_data(self, *args: Any, **kwargs: Any) -> Any:
        raise DataDependentOutputException(
            "a FakeTensor has no data: item(), tolist(), numpy() and conversions to Python "
            "numbers depend on values it does not hold")

    item = tolist = numpy = __bool__ = __float__ = __int__ = __index__ = _no_data

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise RuntimeError("a FakeTensor cannot be pickled (it has no data)")


def _wrap(mode: FakeTensorMode, meta: Tensor, device: torch.device) -> FakeTensor:
    """A fake tensor of ``mode`` on ``device`` with ``meta``'s metadata and storage."""
    out = FakeTensor._make(meta._storage, meta._shape, meta._stride, meta._offset, meta._dtype,
                           device, meta._vc)
    out.fake_mode = mode
    return out


def _unwrap(fake: FakeTensor) -> Tensor:
    """``fake``'s metadata as a plain meta tensor (what the meta kernels compute on)."""
    meta = Tensor._make(fake._storage, fake._shape, fake._stride, fake._offset, fake._dtype,
                        _META, fake._vc)
    return meta


_META = torch.device("meta")
# aten::lift_fresh and lift_fresh_copy: a constant made outside the mode enters it
assert _functions.__all__  # loaded: the aten operators below are defined
_LIFTS = frozenset(op for op in (_dispatch.get("aten::lift_fresh"),
                                 _dispatch.get("aten::lift_fresh_copy")) if op is not None)
_LOCAL_SCALAR_DENSE = _dispatch.get("aten::_local_scalar_dense")  # item()
_DEVICE_ARGS: dict[Any, tuple[int, str] | None] = {}  # op -> (position, name) of its device


def _device_arg(op: Any) -> tuple[int, str] | None:
    """Where ``op``'s schema takes a device (a factory, ``_to_copy``), or None."""
    if op not in _DEVICE_ARGS:
        found = None
        schema = getattr(op, "schema", None)
        for i, arg in enumerate(getattr(schema, "arguments", ())):
            if arg.type.rstrip("?") == "Device":
                found = (-1 if arg.kwarg_only else i, arg.name)
                break
        _DEVICE_ARGS[op] = found
    return _DEVICE_ARGS[op]


class FakeTensorMode(TorchDispatchMode):
    """Inside it, ops make fake tensors: ``with FakeTensorMode() as mode: x =
    mode.from_tensor(real); y = x @ x.T`` computes ``y``'s metadata only.

    :param allow_non_fake_inputs: accept real tensors as op inputs (they are faked on the
        fly); otherwise they raise, as in PyTorch, so that no real data leaks into a trace.
    :param shape_env: the :class:`torch._core.symbolic.ShapeEnv` that symbolic sizes come from.
    :param static_shapes: keep sizes concrete (the default without a ``shape_env``); with
        ``False`` and no ``shape_env`` a new environment is made.
    """

    def __init__(self, *, allow_non_fake_inputs: bool = False,
                 shape_env: _symbolic.ShapeEnv | None = None,
                 static_shapes: bool | None = None) -> None:
        if static_shapes is None:
            static_shapes = shape_env is None
        if not static_shapes and shape_env is None:
            shape_env = _symbolic.ShapeEnv()
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.shape_env = shape_env
        self.static_shapes = static_shapes
        # id(real tensor) -> (a weak reference to it, its fake): keyed by identity, since a
        # tensor's == is elementwise
        self._memo: dict[int, tuple[weakref.ref[Tensor], FakeTensor]] = {}

    # -- real tensors in ------------------------------------------------------------------

    def from_tensor(self, tensor: Tensor, *, static_shapes: bool | None = None,
                    **_: Any) -> FakeTensor:
        """The fake tensor standing for ``tensor`` (the same one for the same tensor):
        its sizes, strides, dtype, device and ``requires_grad``, with symbolic sizes when the
        mode (or ``static_shapes=False``) asks for them."""
        if isinstance(tensor, FakeTensor):
            if tensor.fake_mode is not self:
                raise ValueError("from_tensor: the tensor is fake in another FakeTensorMode")
            return tensor
        if not isinstance(tensor, Tensor):
            raise TypeError(f"from_tensor expects a Tensor, got {type(tensor).__name__}")
        memo = self._memo.get(id(tensor))
        if memo is not None and memo[0]() is tensor:
            return memo[1]
        if _sparse.is_sparse(tensor):
            # A sparse tensor has no storage: its fake holds fake indices and values with no
            # entries (as PyTorch's does), so that the sparse kernels' data-dependent steps
            # (coalescing) have nothing to depend on and the results' metadata are exact.
            indices = torch.empty((tensor._sparse_dim, 0), dtype=torch.int64, device="meta")
            values = torch.empty((0,) + tuple(tensor._sparse_values._shape[1:]),
                                 dtype=tensor._dtype, device="meta")
            fake_sparse = _sparse.make(_wrap(self, indices, tensor.device),
                                       _wrap(self, values, tensor.device), tensor._shape, True)
            fake_sparse._requires_grad = tensor.requires_grad
            self._memo[id(tensor)] = (weakref.ref(tensor), fake_sparse)  # type: ignore[assignment]
            return fake_sparse  # type: ignore[return-value]
        static = self.static_shapes if static_shapes is None else static_shapes
        shape, stride = tensor._shape, tensor._stride
        if not static and tensor.is_contiguous():
            shape, stride = self._symbolic_layout(shape)
        storage = _meta_storage(tensor.untyped_storage().nbytes()
                                if tensor._device.type != "meta" else
                                tensor._storage._nbytes)
        fake = FakeTensor._make(storage, shape, stride, tensor._offset, tensor._dtype,
                                tensor._device)
        fake.fake_mode = self
        if tensor.requires_grad:
            fake._requires_grad = True
        self._memo[id(tensor)] = (weakref.ref(tensor), fake)
        return fake

    def _symbolic_layout(self, shape: tuple[int, ...]) -> tuple[tuple[Any, ...],
                                                                tuple[Any, ...]]:
        """A new symbol per size of at least 2 (0 and 1 stay constants, as PyTorch
        specialises them) and the contiguous strides of those sizes."""
        env = self.shape_env
        assert env is not None
        sizes = tuple(env.create_symbol(s) if s >= 2 else s for s in shape)
        strides: list[Any] = []
        acc: Any = 1
        for size, hint in zip(reversed(sizes), reversed(shape)):
            strides.append(acc)
            if hint > 1:
                acc = acc * size
        strides.reverse()
        if all(isinstance(s, int) for s in sizes):
            return shape, contiguous_strides(shape)
        return sizes, tuple(strides)

    # -- dispatch -------------------------------------------------------------------------

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        return self.dispatch(func, args, kwargs or {})

    def dispatch(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run ``func``'s meta kernel on the metadata of ``args`` and return fake results on
        the device the real call would use."""
        if func is _LOCAL_SCALAR_DENSE:
            raise DataDependentOutputException(f"{func}: item() of a FakeTensor depends on data "
                                               "it does not hold")
        if func in _LIFTS and args and isinstance(args[0], Tensor):
            # torch.tensor(data) made its constant before the op: that constant becomes fake
            return self.from_tensor(args[0])
        originals: dict[int, FakeTensor] = {}  # id(meta stand-in) -> the fake it stands for
        devices: list[tuple[torch.device, bool]] = []  # (device, is a 0-d tensor)

        def unwrap(x: Any) -> Any:
            if _sparse.is_sparse(x):
                # the sparse kernels run on a sparse meta tensor over its parts' metadata
                if not isinstance(x._sparse_values, FakeTensor):
                    x = unwrap_real(x)
                devices.append((x.device, x._shape == ()))
                return _sparse.make(_unwrap(x._sparse_indices), _unwrap(x._sparse_values),
                                    x._shape, x._coalesced)
            if isinstance(x, FakeTensor):
                if x.fake_mode is not self:
                    raise RuntimeError(f"{func}: a FakeTensor of another FakeTensorMode")
            elif isinstance(x, Tensor):
                if x._device.type == "meta":
                    return x
                x = unwrap_real(x)
            else:
                return x
            devices.append((x._device, x._shape == ()))
            meta = _unwrap(x)
            originals[id(meta)] = x
            return meta

        def unwrap_real(x: Tensor) -> Any:
            if not self.allow_non_fake_inputs:
                raise UnsupportedFakeTensorException(
                    f"{func}: a real tensor reached FakeTensorMode. Convert every tensor "
                    "with mode.from_tensor(...) first, or make the mode with "
                    "allow_non_fake_inputs=True.")
            return self.from_tensor(x)

        meta_args = [
            [unwrap(v) for v in a] if isinstance(a, (list, tuple)) else unwrap(a) for a in args]
        meta_args = [type(a)(v) if isinstance(a, tuple) else v for a, v in zip(args, meta_args)]
        meta_kwargs = {k: unwrap(v) for k, v in kwargs.items()}
        out_device = self._output_device(func, devices, meta_args, meta_kwargs)
        try:
            result = func(*meta_args, **meta_kwargs)
        except _convert.MetaValueError as exc:  # a composite asked a value (is_nonzero...)
            raise DataDependentOutputException(
                f"{func}: depends on a value a FakeTensor does not hold") from exc
        except _refs.DataDependentSizeError as exc:  # nonzero, masked_select...
            raise DynamicOutputShapeException(
                f"{func}: its output size depends on values a FakeTensor does not hold"
            ) from exc
        return self._wrap_result(result, originals, out_device)

    def _output_device(self, func: Any, devices: list[tuple[torch.device, bool]],
                       args: list[Any], kwargs: dict[str, Any]) -> torch.device:
        """The device of the real call's results: its ``device`` argument (then replaced by
        meta), else its tensors' device (0-d CPU tensors mix with any), else the default."""
        where = _device_arg(func)
        if where is not None:
            pos, name = where
            given = kwargs.get(name) if pos < 0 or pos >= len(args) else args[pos]
            if pos >= 0 and pos < len(args):
                args[pos] = _META
            else:
                kwargs[name] = _META
            if given is not None:
                return torch.device(given)
            if not devices:
                return torch.get_default_device()
        if not devices:
            return torch.get_default_device()
        full = [d for d, scalar in devices if not (scalar and d.type == "cpu")]
        return full[0] if full else devices[0][0]

    def _wrap_result(self, result: Any, originals: dict[int, FakeTensor],
                     device: torch.device) -> Any:
        if _sparse.is_sparse(result):
            return _sparse.make(_wrap(self, result._sparse_indices, device),
                                _wrap(self, result._sparse_values, device), result._shape,
                                result._coalesced)
        if isinstance(result, Tensor):
            fake = originals.get(id(result))
            if fake is not None and fake._device == device:
                # an in-place op (or a no-op conversion) returned its input: the same fake,
                # updated
                fake._shape, fake._stride, fake._offset = (result._shape, result._stride,
                                                           result._offset)
                fake._storage, fake._dtype = result._storage, result._dtype
                return fake
            out = _wrap(self, result, device)
            base = result._base
            if base is not None:
                out._base = originals.get(id(base), None)
            return out
        if isinstance(result, (tuple, list)):
            items = [self._wrap_result(r, originals, device) for r in result]
            if hasattr(result, "_make"):
                return result._make(items)
            return type(result)(items)
        return result

    def __enter__(self) -> FakeTensorMode:
        super().__enter__()
        return self


def is_fake(x: Any) -> bool:
    """Whether ``x`` is a FakeTensor."""
    return isinstance(x, FakeTensor)


@contextlib.contextmanager
def unset_fake_temporarily() -> Iterator[FakeTensorMode | None]:
    """This thread's FakeTensorModes off for the block (real tensors are made inside it);
    yields the innermost one, or None."""
    stack = list(_dispatch.mode_stack())  # (a copy: the pops below change the stack)
    fakes = [mode for mode in stack if isinstance(mode, FakeTensorMode)]
    if not fakes:
        yield None
        return
    for _ in stack:
        _dispatch.pop_mode()
    for mode in stack:
        if not isinstance(mode, FakeTensorMode):
            _dispatch.push_mode(mode)
    try:
        yield fakes[-1]
    finally:
        for _ in range(len(stack) - len(fakes)):
            _dispatch.pop_mode()
        for mode in stack:
            _dispatch.push_mode(mode)
