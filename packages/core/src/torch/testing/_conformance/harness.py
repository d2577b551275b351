"""Running one primitive call on a device and on the reference kernels, and comparing.

A :class:`Case` describes one call in the primitive's own conventions (``torch._core.prims``):
preallocated outputs first, then the inputs, already of the output's dtype and already
broadcast. Every tensor of a case is laid out in device memory by hand, not through tensor
ops, so that a broken backend cannot build its own inputs wrong and still agree with itself:

- the values are placed in a flat storage with the case's layout (contiguous, transposed,
  sliced/strided, or stride-0 broadcast), through ``_storage.write_bytes`` (the backend's
  host->device copy, no kernel);
- every storage has guard elements before and after it, and the gaps of a strided layout,
  filled with a pattern; after the call, an output's storage must differ from the pattern only
  where the output's elements are, and an input's storage must not differ at all;
- results are read back with ``_storage.read_bytes`` and compared with numpy arrays in
  :func:`torch.testing.assert_close`, so the comparison never runs a kernel of the backend
  under test either.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import _refs
from ..._core import (
    dispatch as _dispatch,
    dtype as _dtype,
    registry as _registry,
    storage as _storage,
)
from ..._core.device import device as _device
from ..._core.tensor import Tensor, contiguous_strides
from .._comparison import assert_close

GUARD = 4  # pattern elements before and after every storage
PATTERN = 0xA5  # the byte guard and gap elements are filled with

LAYOUTS = ("contiguous", "transposed", "strided", "broadcast")


@dataclass(frozen=True)
class Operand:
    """A tensor input of a call.

    :param values: the values, as the storage holds them (bfloat16 as its ``uint16`` bits).
        For the ``broadcast`` layout, the values before expansion: dims of size 1 expand to
        ``shape`` with stride 0.
    :param dtype: the tensor's dtype.
    :param layout: ``contiguous``, ``transposed`` (dims in reverse memory order), ``strided``
        (every other element of the last dim, at an offset) or ``broadcast``.
    :param shape: the tensor's shape (defaults to the values' shape).
    """

    values: np.ndarray
    dtype: _dtype.dtype
    layout: str = "contiguous"
    shape: tuple[int, ...] | None = None

    @property
    def full_shape(self) -> tuple[int, ...]:
        return tuple(self.shape if self.shape is not None else self.values.shape)


@dataclass(frozen=True)
class Alias:
    """An input that is output ``index`` itself: in-place ops call ``add(x, x, y)``. The
    output's ``init`` holds the input's values."""

    index: int = 0


@dataclass(frozen=True)
class Output:
    """A preallocated output of a call.

    :param shape: its shape.
    :param dtype: its dtype.
    :param layout: ``contiguous``, ``transposed`` or ``strided`` (never overlapping).
    :param init: values it holds before the call (``scatter_`` reads them); by default the
        guard pattern, so that an element the kernel forgets to write is caught.
    """

    shape: tuple[int, ...]
    dtype: _dtype.dtype
    layout: str = "contiguous"
    init: np.ndarray | None = None


@dataclass(frozen=True)
class Case:
    """One call of a primitive: ``kernel(*outputs, *args, **kwargs)``.

    :param label: what the case exercises (shown when it fails).
    :param outputs: the preallocated outputs.
    :param args: the inputs: :class:`Operand` for tensors, :class:`Alias` for an output
        passed again as an input (in place), anything else as is.
    :param kwargs: keyword arguments.
    :param check: how results are compared: ``close`` (every output, with the dtype's
        tolerance; exact for integers and bool), ``sort_unstable`` or ``topk`` (values
        compared, indices checked for consistency rather than equality).
    :param tolerance: ``dtype name -> (rtol, atol)`` overriding the defaults for this case.
    """

    label: str
    outputs: tuple[Output, ...]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    check: str = "close"
    tolerance: dict[str, tuple[float, float]] = field(default_factory=dict)


class ConformanceError(AssertionError):
    """A backend kernel disagrees with the reference kernel (or broke a convention)."""


# -- laying values out in memory ------------------------------------------------------------


def storage_dtype(dt: _dtype.dtype) -> np.dtype:
    """The numpy dtype a storage of ``dt`` holds (bfloat16: ``uint16`` bits)."""
    return _refs.NP_DTYPES[dt]


@dataclass
class _Placed:
    """A tensor laid out in a storage: where its elements are, and the storage's bytes."""

    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int  # in elements, guard included
    host: np.ndarray  # the whole storage, elements of the storage dtype
    covered: np.ndarray  # bool per storage element: belongs to the tensor


def _plan(shape: tuple[int, ...], layout: str, base_shape: tuple[int, ...] | None
          ) -> tuple[tuple[int, ...], int, int]:
    """``(stride, offset, storage elements)`` of a tensor of ``shape`` in ``layout``."""
    ndim = len(shape)
    if layout == "broadcast":
        base = base_shape if base_shape is not None else shape
        base_stride = contiguous_strides(base)
        stride = tuple(0 if b == 1 and s != 1 else st
                       for b, s, st in zip(base, shape, base_stride))
        return stride, 0, int(np.prod(base, dtype=np.int64))
    numel = int(np.prod(shape, dtype=np.int64))
    if layout == "transposed" and ndim >= 2:
        reversed_stride = contiguous_strides(tuple(reversed(shape)))
        return tuple(reversed(reversed_stride)), 0, numel
    if layout == "strided" and ndim >= 1:
        # every other element of the last dim, starting one element in
        wide = (*shape[:-1], 2 * shape[-1])
        wide_stride = contiguous_strides(wide)
        stride = (*wide_stride[:-1], 2)
        return stride, 1, int(np.prod(wide, dtype=np.int64)) + 1
    return contiguous_strides(shape), 0, numel


def _view(host: np.ndarray, shape: tuple[int, ...], stride: tuple[int, ...],
          offset: int) -> np.ndarray:
    size = host.itemsize
    return np.lib.stride_tricks.as_strided(host[offset:], shape, tuple(s * size for s in stride))


def place(shape: tuple[int, ...], dt: _dtype.dtype, layout: str,
          values: np.ndarray | None) -> _Placed:
    """Lay ``values`` (or the pattern, when ``None``) out as a tensor of ``shape``."""
    base_shape = tuple(values.shape) if layout == "broadcast" and values is not None else None
    stride, offset, n = _plan(shape, layout, base_shape)
    npdt = storage_dtype(dt)
    total = n + 2 * GUARD
    host = np.full(total * npdt.itemsize, PATTERN, np.uint8).view(npdt)
    covered = np.zeros(total, bool)
    start = GUARD + offset
    if layout == "broadcast" and values is not None:
        host[start:start + values.size] = values.reshape(-1)
        covered[start:start + values.size] = True
    else:
        if values is not None:
            _view(host, shape, stride, start)[...] = values
        _view(covered, shape, stride, start)[...] = True
    return _Placed(tuple(shape), stride, start, host, covered)


def upload(placed: _Placed, dt: _dtype.dtype, dev: _device) -> Tensor:
    """The tensor ``placed`` describes, in a new storage on ``dev`` (bytes copied as they are,
    no kernel runs)."""
    raw = placed.host.view(np.uint8)
    storage = _storage.allocate(raw.size, dev)
    _storage.write_bytes(storage, 0, raw)
    return Tensor._make(storage, placed.shape, placed.stride, placed.offset, dt, dev)


def download(t: Tensor) -> np.ndarray:
    """The whole storage of ``t`` as host elements of its storage dtype."""
    npdt = storage_dtype(t._dtype)
    raw = np.array(_storage.read_bytes(t._storage, 0, t._storage._nbytes), np.uint8)
    return raw.view(npdt)


def values_of(t: Tensor) -> np.ndarray:
    """The values of ``t`` (any device, any layout) as a host array of its storage dtype."""
    if any(n == 0 for n in t._shape):
        return np.empty(tuple(t._shape), storage_dtype(t._dtype))
    return np.array(_view(download(t), tuple(t._shape), tuple(t._stride), t._offset))


# -- running --------------------------------------------------------------------------------


@dataclass
class _Call:
    outputs: list[Tensor]
    placed_outputs: list[_Placed]
    inputs: list[tuple[Tensor, _Placed]]
    args: list[Any]


def _materialise(case: Case, dev: _device) -> _Call:
    outputs, placed_outputs, inputs, args = [], [], [], []
    for out in case.outputs:
        p = place(out.shape, out.dtype, out.layout, out.init)
        placed_outputs.append(p)
        outputs.append(upload(p, out.dtype, dev))
    for a in case.args:
        if isinstance(a, Alias):
            args.append(outputs[a.index])
        elif isinstance(a, Operand):
            p = place(a.full_shape, a.dtype, a.layout, a.values)
            t = upload(p, a.dtype, dev)
            inputs.append((t, p))
            args.append(t)
        else:
            args.append(a)
    return _Call(outputs, placed_outputs, inputs, args)


def _run(kernel: Callable[..., Any], call: _Call, kwargs: dict[str, Any]) -> Any:
    with warnings.catch_warnings():
        # the CPU fallback's warning, the reference's complex->real cast warning: expected
        warnings.simplefilter("ignore")
        return kernel(*call.outputs, *call.args, **kwargs)


def _memory_errors(call: _Call, what: str) -> list[str]:
    """Writes outside the outputs: into guards, gaps, or inputs."""
    errors = []
    for i, (t, p) in enumerate(zip(call.outputs, call.placed_outputs)):
        after = download(t)
        touched = (after.view(np.uint8).reshape(after.size, -1)
                   != p.host.view(np.uint8).reshape(p.host.size, -1)).any(axis=1)
        stray = touched & ~p.covered
        if stray.any():
            where = np.flatnonzero(stray)
            errors.append(f"{what} wrote outside output {i} (storage elements "
                          f"{where[:8].tolist()}{' ...' if where.size > 8 else ''}; the "
                          f"output covers {int(p.covered.sum())} of {p.covered.size})")
    for i, (t, p) in enumerate(call.inputs):
        after = download(t)
        if not np.array_equal(after.view(np.uint8), p.host.view(np.uint8)):
            errors.append(f"{what} modified input {i} (or the guards around it)")
    return errors


def _as_comparable(values: np.ndarray, dt: _dtype.dtype) -> np.ndarray:
    """Host values numpy can compare (bfloat16 bits -> float32)."""
    if dt is _dtype.bfloat16:
        return _refs.bf16_to_f32(values)
    return values


TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def _tolerance(dt: _dtype.dtype, case: Case) -> tuple[float, float]:
    if dt._name in case.tolerance:
        return case.tolerance[dt._name]
    return TOLERANCES.get(dt._name, (0.0, 0.0))


def _close(actual: np.ndarray, expected: np.ndarray, dt: _dtype.dtype, case: Case,
           what: str) -> None:
    rtol, atol = _tolerance(dt, case)
    assert_close(_as_comparable(actual, dt), _as_comparable(expected, dt), rtol=rtol, atol=atol,
                 equal_nan=True, msg=lambda m: f"{what}: {m}")


def _check_indices(values: np.ndarray, indices: np.ndarray, a: np.ndarray, dim: int,
                   dt: _dtype.dtype, what: str) -> None:
    """``indices`` point at elements of ``a`` equal to ``values`` (NaN equal to NaN), without
    repeats."""
    if indices.size == 0:
        return
    if a.ndim == 0:
        if not (indices == 0).all():
            raise ConformanceError(f"{what}: the index of a 0-d input must be 0")
        return
    n = a.shape[dim]
    if indices.min() < 0 or indices.max() >= n:
        raise ConformanceError(f"{what}: indices out of range [0, {n})")
    picked = np.take_along_axis(a, indices, axis=dim)
    if not np.array_equal(_as_comparable(picked, dt), _as_comparable(values, dt),
                          equal_nan=dt.is_floating_point or dt.is_complex):
        raise ConformanceError(f"{what}: the values are not the input's elements at the indices")
    ordered = np.sort(indices, axis=dim)
    if indices.shape[dim] > 1 and (np.diff(ordered, axis=dim) == 0).any():
        raise ConformanceError(f"{what}: an index appears twice along dim {dim}")


def _compare(case: Case, got: list[np.ndarray], want: list[np.ndarray],
             dtypes: list[_dtype.dtype]) -> None:
    if case.check == "close":
        for i, (g, w, dt) in enumerate(zip(got, want, dtypes)):
            if g.shape != w.shape:
                raise ConformanceError(f"output {i}: shape {g.shape}, reference {w.shape}")
            _close(g, w, dt, case, f"output {i}")
        return
    # sort (stable=False) and topk: values as the reference; indices need only be consistent
    values_dt = dtypes[0]
    a_operand = next(a for a in case.args if isinstance(a, Operand))
    a = np.broadcast_to(a_operand.values, a_operand.full_shape)
    # sort(values, indices, a, dim, descending, stable); topk(values, indices, a, k, dim,
    # largest, sorted)
    dim = case.args[1] if case.check == "sort_unstable" else case.args[2]
    if a.ndim:
        dim = dim % a.ndim
    if case.check == "topk" and not case.args[4]:
        # any order: compare the sorted values
        order_g = np.argsort(_as_comparable(got[0], values_dt), axis=dim, kind="stable")
        order_w = np.argsort(_as_comparable(want[0], values_dt), axis=dim, kind="stable")
        _close(np.take_along_axis(got[0], order_g, dim),
               np.take_along_axis(want[0], order_w, dim), values_dt, case, "values")
        _check_indices(got[0], got[1], a, dim, values_dt, "indices")
        return
    _close(got[0], want[0], values_dt, case, "values")
    _check_indices(got[0], got[1], a, dim, values_dt, "indices")


def run_case(name: str, case: Case, dev: _device) -> None:
    """Run ``case`` through ``prims::<name>`` on ``dev`` and through the reference kernel on
    the CPU; raise :class:`ConformanceError` on any difference."""
    # Loading the device's runtime defines the primitives and registers its kernels: a plugin
    # author may call the suite before any tensor exists.
    _registry.runtime(dev.type)
    op = _dispatch.get(f"prims::{name}")
    if op is None:
        raise ConformanceError(f"prims::{name} is not defined (torch._refs registers it)")
    key = _dispatch.key_for(dev.type)
    kernel = op.resolve(key)
    reference = _refs.CPU_KERNELS[name]
    cpu = _device("cpu")

    expected_call = _materialise(case, cpu)
    try:
        expected_result = _run(reference, expected_call, case.kwargs)
    except Exception as exc:  # the sample, not the backend, is wrong
        raise ConformanceError(f"the reference kernel rejected the sample ({type(exc).__name__}: "
                               f"{exc}); fix the sample table") from exc
    call = _materialise(case, dev)
    try:
        result = _run(kernel, call, case.kwargs)
    except Exception as exc:
        raise ConformanceError(f"the {key} kernel raised {type(exc).__name__}: {exc}") from exc

    errors = _memory_errors(call, f"the {key} kernel")
    if errors:
        raise ConformanceError("; ".join(errors))
    if name == "nonzero":  # the one primitive returning its output
        if not isinstance(result, Tensor):
            raise ConformanceError(f"nonzero returned {type(result).__name__}, not a Tensor")
        if result._dtype is not _dtype.int64 or result._device != call.args[0]._device:
            raise ConformanceError(f"nonzero returned {result._dtype} on {result._device}; "
                                   "expected int64 on the input's device")
        _compare(case, [values_of(result)], [values_of(expected_result)], [_dtype.int64])
        return
    got = [values_of(t) for t in call.outputs]
    want = [values_of(t) for t in expected_call.outputs]
    _compare(case, got, want, [o.dtype for o in case.outputs])


def run_cases(name: str, cases: Sequence[Case], dev: _device) -> list[str]:
    """Run every case; the failures, one line each (empty when all pass)."""
    failures = []
    for case in cases:
        try:
            run_case(name, case, dev)
        except (ConformanceError, AssertionError) as exc:
            failures.append(f"[{case.label}] {exc}")
    return failures
