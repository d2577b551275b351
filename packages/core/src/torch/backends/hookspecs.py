"""The backend contract: pluggy hook specifications for device backends.

A backend is a plugin published under the entry-point group ``torch.backends``.
The entry point's *name* is the device type it serves (``cpu``, ``cuda``, ``npu``...); its
*value* names a light module that imports no native code and does not import ``torch`` at
module level. Core registers that module once ``import torch`` has finished (phase 1) and asks
it for :class:`BackendInfo`. Everything else is asked for on the first use of the device
(phase 2), which is when a backend imports its native extension.

Every hook takes ``device_type`` so one plugin module may serve several device types; a hook
implementation returns ``None`` for device types it does not serve. A plugin module defines
its hooks as functions named after them::

    def torch_backend_info(device_type):
        if device_type != "npu":
            return None
        from torch.backends import BackendInfo
        return BackendInfo(device_type="npu", distribution="acme-npu", version="1.0")

Core calls a plugin's hooks by name (the plugin that owns a device type answers for it), so a
plugin module need not import pluggy, which keeps ``import torch`` fast: pluggy, ``inspect``
and ``typing`` cost more than the rest of the import together. Marking the functions with
``pluggy.HookimplMarker("torch")`` still works; options of the marker other than the name
are not read. :func:`check_plugin` validates a plugin module against these specifications
with pluggy (argument names, unknown ``torch_backend_*`` hooks).

Hooks are listed in the order core calls them. None is ``historic``. Kernel signatures (what
``torch_backend_register_kernels`` registers) are the primitive schemas
(``torch.backends.contract.schema``); what a kernel may call in core is
:mod:`torch.backends.contract`. ``docs/backend-guide.md`` walks through a whole plugin.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

from ._backend_info import BackendInfo

if TYPE_CHECKING:
    import numpy as np

    from torch.library import Library

PROJECT = "torch"
ENTRY_POINT_GROUP = "torch.backends"

HOOK_PREFIX = "torch_backend_"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class PluginManager(pluggy.PluginManager):
    """pluggy's plugin manager for these specifications, which also takes unmarked
    ``torch_backend_*`` functions as hook implementations (what core calls)."""

    def __init__(self) -> None:
        super().__init__(PROJECT)
        self.add_hookspecs(sys.modules[__name__])

    def parse_hookimpl_opts(self, plugin: object, name: str) -> Any:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith(HOOK_PREFIX) and callable(getattr(plugin, name)):
            opts = {}  # pluggy fills in the defaults of a marker without options
        return opts


def check_plugin(module: ModuleType) -> None:
    """Raise :class:`pluggy.PluginValidationError` if a plugin module's hooks do not match
    these specifications: an argument a hook does not take, or a ``torch_backend_*``
    function that names no hook."""
    manager = PluginManager()
    manager.register(module)
    manager.check_pending()


class Allocator(Protocol):
    """Device memory. Returned by :func:`torch_backend_allocator`.

    A handle is any Python object that owns a block of device memory and frees it when it is
    garbage collected (a size-class free-list behind it is encouraged). Core keeps the handle
    alive for as long as any storage uses it.
    """

    def allocate(self, nbytes: int, device_index: int) -> Any:
        """Allocate ``nbytes`` (may be 0) on device ``device_index``; raise on failure."""

    def data_ptr(self, handle: Any) -> int:
        """The address of the block's first byte (64-byte aligned for host memory)."""

    def host_buffer(self, handle: Any) -> Any | None:
        """An object exposing the buffer protocol over the block, for host-accessible memory;
        ``None`` for memory the host cannot read directly."""


class FastPath(Protocol):
    """Allocate-and-run entry points for the eager hot path (docs/architecture.md, "The op
    path").
    Returned by :func:`torch_backend_fast_path`.

    Core calls them only for contiguous operands (offset 0) of the output's dtype, with no
    grad and no dispatch mode involved, where they must give exactly what the primitive
    kernels give. Each returns a new memory handle of the backend's allocator holding the
    result, with the block's address in its ``ptr`` attribute, or ``None`` when it leaves the
    case to the generic path (an unsupported dtype, say). Op codes come from the two tables.
    """

    binary_ops: Mapping[str, int]  # binary primitive name -> op code
    unary_ops: Mapping[str, int]  # unary primitive name -> op code
    dtype_codes: Mapping[Any, int]  # torch dtype -> dtype code (absent: not served)
    # The primitive kernels the backend registered, by name: core takes a tier only while the
    # dispatcher still resolves the primitive to that kernel (no library overrode it).
    kernels: Mapping[str, Callable[..., Any]]

    def binary(self, op: int, dtype: int, nbytes: int, numel: int, a: int, b: int) -> Any:
        """``a op b`` for two contiguous operands of ``numel`` elements at addresses a, b."""

    def binary_scalar(self, op: int, dtype: int, nbytes: int, numel: int, a: int,
                      scalar: float, reversed: bool) -> Any:
        """``a op scalar`` (``scalar op a`` when ``reversed``), the Python number converted
        to the dtype first."""

    def broadcast_plan(self, op: int, dtype: int, nbytes: int, shape: Sequence[int],
                       a_strides: Sequence[int], b_strides: Sequence[int]) -> Any:
        """A prepared broadcast ``a op b`` into a contiguous output of ``shape``; element
        strides, 0 on broadcast dimensions. Core caches it per pair of layouts."""

    def binary_plan(self, plan: Any, a: int, b: int) -> Any:
        """Run a prepared broadcast op."""

    def unary(self, op: int, dtype: int, nbytes: int, numel: int, a: int) -> Any:
        """``op(a)`` for a contiguous operand."""

    def sum_all(self, dtype: int, itemsize: int, numel: int, a: int) -> Any:
        """The sum of every element into a 0-d result of the same dtype."""

    # Optional (core checks with getattr): reductions over the last dimension.
    reduce_ops: Mapping[str, int]  # "sum"/"amax"/"amin" -> op code

    def reduce_rows(self, op: int, dtype: int, itemsize: int, rows: int, cols: int,
                    a: int) -> Any:
        """``op`` over the last dimension of a contiguous (rows, cols) operand into ``rows``
        results of the same dtype."""

    # Optional (core checks with getattr): what the plan cache (torch._core.plan) replays.
    def prepare(self, prim: str, out_dtype: int, in_dtype: int, shape: Sequence[int],
                nbytes: int, strides: Sequence[Sequence[int]], dims: Sequence[int] | None = None,
                inner: int | None = None, out_strides: Sequence[int] | None = None
                ) -> Callable[..., Any] | None:
        """A function of the operands' addresses that allocates an output of ``nbytes`` and
        runs primitive ``prim`` on it, returning the new handle (or ``None`` when the kernel
        declines that call); ``None`` when the backend has no native kernel for ``prim`` at this
        geometry. Core caches the function in the plan of a call signature and calls it on
        every repeat of that signature.

        :param prim: a unary or binary primitive, a comparison, a reduction, ``copy`` (a cast),
            ``matmul`` or ``where`` (three inputs: the bool condition, then the two values).
        :param out_dtype: the output's dtype code; ``in_dtype``: the inputs'.
        :param shape: the iteration shape (the inputs' broadcast shape; for a reduction the
            input's shape; for ``matmul`` the output's).
        :param strides: each input's element strides over ``shape`` (0 where broadcast).
        :param dims: the reduced dimensions (reductions only).
        :param inner: the contracted size (``matmul`` only).
        :param out_strides: the output's element strides when it is not contiguous (a dense
            permutation: an elementwise result following a transposed input).
        """

    # Optional (core checks with getattr): the plans of in-place arithmetic (``a.add_(b)``)
    # and of copies between two contiguous tensors of one layout (an ``out=`` result).
    def prepare_into(self, prim: str, dtype: int, shape: Sequence[int],
                     other_strides: Sequence[int]) -> Callable[[int, int], bool] | None:
        """A function of two addresses ``(out, other)`` running binary primitive ``prim`` as
        ``out = out <prim> other`` (or, for ``prim`` ``"copy"``, ``out = other``) into the
        existing contiguous block at ``out``, ``other`` read with ``other_strides`` over
        ``shape`` (0 where broadcast); it returns False, having written nothing, when the
        kernel declines. None: no native kernel for ``prim``.
        """


    # Optional (core checks with getattr): an elementwise ``out=`` result written by one launch.
    def prepare_out(self, prim: str, out_dtype: int, in_dtype: int, shape: Sequence[int],
                    strides: Sequence[Sequence[int]]) -> Callable[..., bool] | None:
        """A function of addresses ``(out, *inputs)`` running elementwise primitive ``prim``
        (as :meth:`prepare` names them) on the inputs, read with ``strides`` over ``shape``,
        into the existing contiguous block at ``out`` of ``shape``; it returns False, having
        written nothing, when the kernel declines. Core calls it only for an ``out`` that shares
        no memory with an input. None: no native kernel for ``prim`` at this geometry.
        """


class Copier(Protocol):
    """Byte copies between host and device. Returned by :func:`torch_backend_copy`.

    Core only ever asks for dense byte ranges; strided, casting copies on one device are the
    ``prims.copy_`` primitive.
    """

    def to_device(self, dst: Any, dst_offset: int, src: np.ndarray) -> None:
        """Copy the contiguous ``uint8`` host array ``src`` to ``dst`` at byte ``dst_offset``."""

    def to_host(self, dst: np.ndarray, src: Any, src_offset: int) -> None:
        """Fill the contiguous, writable ``uint8`` host array ``dst`` from ``src`` at byte
        ``src_offset``."""

    def device_to_device(
        self, dst: Any, dst_offset: int, src: Any, src_offset: int, nbytes: int
    ) -> None:
        """Copy ``nbytes`` between two blocks of this backend (possibly different indices)."""


@hookspec(firstresult=True)
def torch_backend_info(device_type: str) -> BackendInfo | None:
    """Describe the backend serving ``device_type`` (phase 1).

    Called once, right after registration, at the end of ``import torch``. It must not import
    native code: the answer is used to parse ``torch.device`` strings and to print
    ``python -m torch.backends``.

    :param device_type: the entry point's name.
    :returns: the backend's :class:`BackendInfo`, or ``None`` if this plugin does not serve it.

    ``firstresult``. versionadded: 0.1
    """


@hookspec(firstresult=True)
def torch_backend_allocator(device_type: str) -> Allocator | None:
    """Return the device's allocator (phase 2: the native extension may be imported here).

    Called on the first allocation on the device. Raising here (no driver, no device) marks
    the device unusable; core re-raises as a ``RuntimeError`` that names the plugin.

    :param device_type: the device type being initialised.
    :returns: an :class:`Allocator`, or ``None`` if this plugin does not serve the device.

    ``firstresult``. versionadded: 0.1
    """


@hookspec(firstresult=True)
def torch_backend_copy(device_type: str) -> Copier | None:
    """Return the host<->device byte copier (phase 2).

    Host-accessible backends may return ``None``: core then copies through
    :meth:`Allocator.host_buffer` with numpy.

    :param device_type: the device type being initialised.
    :returns: a :class:`Copier`, or ``None``.

    ``firstresult``. versionadded: 0.1
    """


@hookspec(firstresult=True)
def torch_backend_synchronize(device_type: str, device_index: int) -> bool | None:
    """Wait for all queued work on one device.

    ``torch.<device>.synchronize(device)`` calls it after checking the index against the
    device module's ``device_count()``, and so do ``Stream.synchronize`` and
    ``Event.record`` of :mod:`torch.backends.devicekit` through the device module.

    :param device_type: the device type.
    :param device_index: the device's index.
    :returns: ``True`` once synchronized, ``None`` if this plugin does not serve the device.

    ``firstresult``. versionadded: 0.1
    """


@hookspec
def torch_backend_register_kernels(device_type: str, lib: Library) -> None:
    """Register native kernels for primitives (and optionally fused composite ops).

    Called once in phase 2 with a ``torch.library.Library("prims", "IMPL", <dispatch_key>)``.
    Register with ``lib.impl("add", kernel)``. A kernel receives preallocated outputs and inputs
    of one dtype, already broadcast (stride-0 expansion), in the argument order of the
    primitive's schema (``torch.backends.contract.schema(name)``). A kernel decorated with
    ``torch.backends.contract.may_decline`` may raise ``contract.Decline`` for a case it does
    not take (before writing anything). Primitives left out, and declined calls, run through
    the CPU fallback: inputs are copied to the CPU, the reference kernel runs, results are
    copied back. Composite ops can be overridden with ``torch.library.Library("aten", "IMPL",
    key)``; ``contract.composite(qualname)`` is the kernel such an override leaves cases to.

    :param device_type: the device type being initialised.
    :param lib: the registration handle for the device's dispatch key.

    versionadded: 0.1
    """


@hookspec(firstresult=True)
def torch_backend_device_module(device_type: str) -> ModuleType | None:
    """Return the ``torch.<device_type>`` module (``is_available``, ``device_count``, ...).

    Called in phase 1 when the module is first touched, so it must stay light: it is how
    ``torch.cuda.is_available()`` answers without initialising the device. ``torch.<device_type>``
    forwards to it, except for what core serves for every device: ``synchronize`` (index
    checked, then :func:`torch_backend_synchronize`) and the random functions
    (``manual_seed``, ``manual_seed_all``, ``seed``, ``initial_seed``, ``get_rng_state``,
    ``set_rng_state`` and their ``_all`` forms: core's generators). The module should provide
    ``is_available`` and ``device_count`` (core checks indices against it), and may provide
    ``current_device``, ``set_device``, ``device`` (context manager), ``Stream``, ``Event``,
    ``memory_allocated``, ``max_memory_allocated`` and ``get_amp_supported_dtype``;
    :class:`torch.backends.devicekit.DeviceKit` makes most of them.

    :param device_type: the device type.
    :returns: a module, or ``None``.

    ``firstresult``. versionadded: 0.1
    """


@hookspec
def torch_backend_set_num_threads(device_type: str, num_threads: int) -> None:
    """Optional: use ``num_threads`` threads for intra-op parallelism from now on.

    Called once when the device type's runtime initialises (with the current
    ``torch.get_num_threads()``) and again on every ``torch.set_num_threads(n)``. Backends
    whose kernels run on one thread, or on a device, ignore it.

    :param device_type: the device type.
    :param num_threads: a positive thread count.

    versionadded: 0.2
    """


@hookspec(firstresult=True)
def torch_backend_fast_path(device_type: str) -> FastPath | None:
    """Optional: the "allocate and run in one native call" entry points of the eager hot path.

    Asked once when the device type's runtime initialises. Core's fast tiers use them for
    small same-dtype contiguous operands and fall back to the generic dispatcher path whenever
    they return ``None`` (docs/architecture.md, "The op path").

    :param device_type: the device type.
    :returns: a :class:`FastPath`, or ``None`` when the backend has none.

    ``firstresult``. versionadded: 0.1 (the :class:`FastPath` protocol: 0.2)
    """


@hookspec(firstresult=True)
def torch_backend_codegen(device_type: str, target: str) -> Any | None:
    """Optional: a code generator for ``torch.compile`` (plait-compile's ``inductor``).

    Asked once per compiled kernel group on ``device_type`` (for the CPU, which plait-compile
    generates C++ for, only ``target="thread_pool"``: the address of a C function
    ``void (*)(int64_t n, int64_t grain, void (*fn)(int64_t begin, int64_t end, void* ctx),
    void* ctx)`` that runs ``fn`` over chunks of ``[0, n)`` on the backend's threads, or
    ``None``; generated kernels then run serially). For ``target="pointwise"`` the object
    returned has
    ``compile_group(group) -> callable | None``: ``group`` is a
    ``torch._inductor.scheduler.KernelGroup`` (aten nodes in order, their inputs and outputs);
    the callable takes the group's input tensors and returns its output tensors. ``None``
    (here or from ``compile_group``) leaves the group to plait-compile's fused interpreter,
    which runs it through this backend's kernels (docs/compile.md, "Inductor").

    :param device_type: the device type graphs will run on.
    :param target: the generator's kind (``"pointwise"``, ``"reduction"``...).
    :returns: a generator object defined by plait-compile, or ``None``.

    ``firstresult``. versionadded: 0.1
    """
