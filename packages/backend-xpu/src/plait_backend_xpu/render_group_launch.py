"""The callable of a generated kernel group: per call, the launch geometry, the outputs and
one launch of a kernel rendered by :mod:`.render_group`, through the functions the backend
hands it (its program cache, its launcher), so plait-backend-xpu (OpenCL) and
plait-backend-cuda (CUDA, which carries a copy of this module) share it.

A call's layout (the inputs' sizes, strides and device) picks a plan prepared at its first
call: the kernel (the contiguous one, or the strided one of the merged rank), the geometry
arguments and the launch size; buffers and offsets are read from the tensors per call.
Anything a kernel does not take (other devices, no elements in a reduction's rows, more
dimensions than the arguments hold) runs in plait-compile's fused interpreter.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from .render_geometry import merge
from .render_group import REDUCTION_GROUP, GroupKernel, GroupRenderer

#: Rows from which a CPU device reduces one row per work item (fewer: a work group per row).
ROWS_PER_ITEM_FROM = 64
#: Words of kernel arguments a launch may use (OpenCL 1.2 guarantees 1024 bytes).
PARAMETER_WORDS = 128


# -- launch geometry (plain integers) -------------------------------------------------------


def broadcast_strides(shape: Sequence[int], sizes: Sequence[int], strides: Sequence[int]
                      ) -> list[int]:
    """The strides of a tensor of ``sizes``/``strides`` broadcast to ``shape`` (0 where it
    repeats)."""
    lead = len(shape) - len(sizes)
    out = [0] * lead
    for size, stride, target in zip(sizes, strides, shape[lead:]):
        out.append(stride if size == target else 0)
    return out


def pointwise_geometry(shape: Sequence[int], strides: Sequence[Sequence[int]]
                       ) -> tuple[int, list[int]]:
    """``(rank, geometry arguments)`` of a pointwise launch over ``shape`` whose inputs have
    ``strides`` (already broadcast): rank 0 with no arguments when all are contiguous."""
    sizes, merged = merge(shape, strides)
    if not sizes or all(st == [1] for st in merged):
        return 0, []
    arguments = list(sizes)
    for st in merged:
        arguments += st
    return len(sizes), arguments


def reduction_geometry(shape: Sequence[int], strides: Sequence[Sequence[int]]
                       ) -> tuple[int, int, int, list[int]]:
    """``(rank, rows, inner, geometry arguments)`` of a reduction launch over the last dim of
    ``shape`` (at least one dim): the leading dims merged, then each input's row stride."""
    sizes, merged = merge(shape[:-1], [st[:-1] for st in strides])
    rows = 1
    for size in sizes:
        rows *= size
    arguments = list(sizes)
    for st in merged:
        arguments += st
    arguments += [st[-1] for st in strides]
    return len(sizes), rows, shape[-1], arguments


# -- the compiled group ---------------------------------------------------------------------

_log = logging.getLogger(__name__)
_builder_lock = threading.Lock()
_builder_pool: ThreadPoolExecutor | None = None


#: The pending build of a group whose build failed: never done, so its calls stay with the
#: interpreter.
_FAILED: Future[Any] = Future()


def _builder() -> ThreadPoolExecutor:
    """The one background thread generated kernels build on (builds release the GIL)."""
    global _builder_pool
    with _builder_lock:
        if _builder_pool is None:
            _builder_pool = ThreadPoolExecutor(1, thread_name_prefix="plait-codegen")
        return _builder_pool



class CompiledGroup:
    """A kernel group as kernels of one device (one per rank of its launches), called with the
    group's input tensors; returns its output tensors (fresh, contiguous).

    :param renderer: the group's :class:`GroupRenderer`.
    :param index: the device index the group was compiled for.
    :param device_type: ``"xpu"``, ``"cuda"``: inputs elsewhere go to the interpreter.
    :param build: ``(index, GroupKernel) -> kernel`` through the backend's program cache.
    :param buffer_args: the backend's ``tensors -> (buffers, element offsets)``, called on the
        first call of each layout for the checks it makes (calls then read the buffers and
        offsets from the tensors themselves).
    :param launch_1d: the backend's ``(kernel, n, index, arguments)`` over ``n`` work items.
    :param stats: counts ``launches`` here.
    :param parameter_words: the argument words a launch may take (more: the interpreter).
    :param cpu: the device is a CPU (OpenCL on PoCL): contiguous calls run the group's
        vector kernel where it has one (:meth:`GroupRenderer.pointwise_vector`), and
        reductions of many rows a row per work item
        (:meth:`GroupRenderer.reduction_rows_kernel`).
    """

    def __init__(self, renderer: GroupRenderer, index: int, device_type: str,
                 build: Callable[[int, GroupKernel], Any],
                 buffer_args: Callable[[Sequence[Any]], tuple[list[Any], list[int]]],
                 launch_1d: Callable[[Any, int, int, Sequence[Any]], None],
                 stats: Counter[str], parameter_words: int = PARAMETER_WORDS,
                 cpu: bool = False) -> None:
        self.renderer = renderer
        self.group = renderer.group
        self.index = index
        self.device_type = device_type
        self._build, self._buffer_args, self._launch_1d = build, buffer_args, launch_1d
        self._stats = stats
        self._words = parameter_words
        self._kernels: dict[tuple[int, bool], Any] = {}
        self._pending: Future[Any] | None = None  # the background build of the first kernel
        self._cpu = cpu
        self._plans: dict[tuple[Any, ...], tuple[Any, ...] | bool] = {}
        #: elements per work item of contiguous calls (1: the one-element kernel)
        self.width = (renderer.vector_width() or 1) if cpu else 1
        self._dtypes = [node.meta["val"].dtype for node in self.group.outputs]
        from torch.backends import contract

        self._empty = contract.empty  # an output: one allocation, no argument parsing
        reduction = self.group.reduction
        self._keepdim = reduction is not None and len(reduction.args) > 2 and bool(
            reduction.args[2])

    def rendered(self, rank: int, row_items: bool = False) -> GroupKernel:
        """The source of the kernel :meth:`kernel` builds for these arguments."""
        if row_items:
            return self.renderer.reduction_rows_kernel(rank)
        if self.renderer.reduction:
            return self.renderer.reduction_kernel(rank)
        if rank == 0 and self.width > 1:
            return self.renderer.pointwise_vector()
        return self.renderer.pointwise(rank)

    def kernel(self, rank: int, row_items: bool = False) -> Any:
        """The built kernel for launches of ``rank`` merged dims (0: contiguous, on vectors
        where :attr:`width` says so); ``row_items``: a reduction's row-per-item kernel."""
        found = self._kernels.get((rank, row_items))
        if found is None:
            found = self._build(self.index, self.rendered(rank, row_items))
            self._kernels[rank, row_items] = found
        return found

    def first(self) -> tuple[int, bool]:
        """The kernel contiguous calls take: :meth:`kernel`'s arguments."""
        return 0, bool(self._cpu and self.renderer.reduction)

    def start(self, background: bool) -> None:
        """Build the :meth:`first` kernel now (a build error raises), or on the background
        builder thread: calls run the interpreter until it is ready, and for good when its
        build fails (the error is logged)."""
        if background:
            self._pending = _builder().submit(self.kernel, *self.first())
        else:
            self.kernel(*self.first())

    def _building(self) -> bool:
        """Whether calls wait for the background build (run the interpreter)."""
        pending = self._pending
        if pending is None or not pending.done():
            return pending is not None
        try:
            pending.result()
        except Exception as error:  # a failed build: the interpreter serves every call
            _log.warning("a generated kernel did not build; its group runs in the "
                         "interpreter: %s", error)
            self._pending = _FAILED
            return True
        self._pending = None
        return False

    def _interpret(self, inputs: list[Any]) -> list[Any]:
        return self.group.interpret(inputs)

    def __call__(self, inputs: list[Any]) -> list[Any]:
        if self._pending is not None and self._building():
            return self._interpret(inputs)
        try:
            # a call's layout (sizes, strides, device of every input) picks a prepared plan:
            # read from the tensors' slots, not their public methods (this runs per call)
            key = tuple([(t._shape, t._stride, t._device) for t in inputs])
        except AttributeError:  # not a tensor: the interpreter's rules
            return self._interpret(inputs)
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) > 64:
                self._plans.clear()  # many sizes (dynamic shapes): keep the table small
            plan = self._plans[key] = self._plan(inputs)
        if plan is False:
            return self._interpret(inputs)
        out_shapes, device, count, geometry, kernel, items, rows = plan
        empty = self._empty
        outputs = [empty(s, d, device) for s, d in zip(out_shapes, self._dtypes)]
        if kernel is None:
            return outputs  # no elements
        arguments = [o._storage._handle for o in outputs]
        arguments += [t._storage._handle for t in inputs]
        arguments.append(count)
        arguments += [t._offset for t in inputs]
        arguments += geometry
        if rows:  # a work group per row
            kernel((rows * REDUCTION_GROUP,), (REDUCTION_GROUP,), *arguments)
        else:
            self._launch_1d(kernel, items, self.index, arguments)
        self._stats["launches"] += 1
        return outputs

    def _plan(self, inputs: list[Any]) -> tuple[Any, ...] | bool:
        """What calls with ``inputs``' layout launch: output shapes, device, the count
        argument, the geometry arguments, the kernel, work items, rows of a work group each
        (0 for a 1-d launch); ``False`` when the interpreter must run them."""
        import torch

        device = inputs[0].device if inputs else None
        if device is None or device.type != self.device_type or (device.index or 0) != self.index:
            return False  # not what the kernels were built for
        if any(t.device != device for t in inputs):
            return False
        shape = list(torch.broadcast_shapes(*(t.shape for t in inputs)))
        numel = 1
        for size in shape:
            numel *= size
        reduction = self.renderer.reduction is not None
        if reduction and (not shape or shape[-1] == 0):
            return False  # empty rows: the library's rules
        out_shapes = [tuple(shape)] * len(self._dtypes)
        if reduction:
            out_shapes[-1] = tuple(shape[:-1]) + ((1,) if self._keepdim else ())
        if numel == 0:
            return out_shapes, device, 0, [], None, 0, 0
        strides = [broadcast_strides(shape, t.shape, t.stride()) for t in inputs]
        if reduction:
            rank, rows, inner, geometry = reduction_geometry(shape, strides)
            count, items = inner, rows * REDUCTION_GROUP
            if self._cpu and rows >= ROWS_PER_ITEM_FROM:
                if self.renderer.words(rank) + 1 > self._words:
                    return False
                self._buffer_args(inputs)
                return (out_shapes, device, count, [*geometry, rows], self.kernel(rank, True),
                        rows, 0)
        else:
            rank, geometry = pointwise_geometry(shape, strides)
            rows, count = 0, numel
            items = -(-numel // self.width) if rank == 0 else numel
        if self.renderer.words(rank) > self._words:
            return False
        self._buffer_args(inputs)  # the backend's checks of the operands, once per layout
        return out_shapes, device, count, geometry, self.kernel(rank), items, rows
