"""The xpu launch of elementwise expressions, under the shared primitives of
:mod:`.render_launch_elementwise` (every row of :mod:`.pointwise`, ``where``, ``copy_``,
``fill_`` and ``arange_``).

Each kernel takes the primitive's schema (``torch.backends.contract.schema``), renders its
OpenCL C through :mod:`.render` for the operands' dtypes and geometry, builds it once (the
program cache) and enqueues it on the device's in-order queue without waiting. What it does not
take it declines before writing anything (``contract.Decline``), so the CPU fallback serves
it: more dimensions that do not merge than a launch's arguments can describe
(:func:`max_rank`). float64 on a device without double precision is an error
(:func:`require_fp64`). Complex values run every row with a complex
expression (:mod:`.render_complex`). The other families have modules of their own;
:func:`kernels` gathers them all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from torch.backends import contract

from . import device_module, pointwise, render, render_launch_elementwise
from .render_geometry import merge  # noqa: F401 (linalg and the fast path take it here)

MAX_RANK = 12  # strided kernels have one size and one stride per operand per dimension
# OpenCL 1.2 guarantees 1024 bytes of kernel arguments: 128 8-byte words (buffers, integers)
PARAMETER_WORDS = 128
DIALECT = render.OPENCL
CALLS: Counter[str] = Counter()  # kernels run, by primitive: tests tell native from fallback
# (device, op, dtypes, rank, raw, constants) -> its _C.Kernel: rendering and hashing a source
# costs more than a launch, so a repeated call looks its kernel up here first.
_KERNELS: dict[tuple[Any, ...], Any] = {}
WORK_GROUP = 256  # work items per group of 1-d launches
_WORK_GROUPS: dict[int, int] = {}  # device index -> its 1-d work-group size


def dtype_name(t: Any) -> str:
    """``t``'s dtype without the ``torch.`` prefix."""
    return str(t.dtype).removeprefix("torch.")


def max_rank(operands: int, scalars: int = 0) -> int:
    """The most dims an elementwise launch over ``operands`` (and ``scalars`` constants)
    describes within :data:`PARAMETER_WORDS`
    (:func:`.render_launch_elementwise.max_rank`)."""
    return render_launch_elementwise.max_rank(PARAMETER_WORDS, operands, scalars)


def device_fp64(index: int) -> bool:
    """Whether ``xpu:<index>`` computes in double precision."""
    return bool(device_module.device_info(index)["fp64"])


def has_fp64(t: Any) -> bool:
    """Whether ``t``'s device computes in double precision."""
    return device_fp64(t.device.index or 0)


def require_fp64(t: Any, names: Sequence[str]) -> None:
    """Raise PyTorch's error for a float64 (or complex128) operand on a device without double
    precision (as PyTorch's XPU backend does on such Intel GPUs), rather than computing it on
    the CPU behind the user's back."""
    if render.NEEDS_FP64 & set(names) and not has_fp64(t):
        index = t.device.index or 0
        name = device_module.device_info(index)["name"]
        raise RuntimeError(
            f"Required aspect fp64 is not supported on the device xpu:{index} ({name}): it has "
            "no double precision (OpenCL's cl_khr_fp64), so float64 and complex128 tensors "
            "cannot be computed there; use float32/complex64 on it, or the CPU.")


def buffer_args(tensors: Sequence[Any]) -> tuple[list[Any], list[int]]:
    """Each tensor's buffer and element offset, as kernels take them."""
    buffers, offsets = [], []
    for t in tensors:
        handle, byte_offset = contract.memory(t)
        buffers.append(handle)
        offsets.append(byte_offset // t.element_size())
    return buffers, offsets


def cached_kernel(key: tuple[Any, ...], index: int,
                  render_it: Callable[[], render.Rendered], options: str = "") -> Any:
    """The ``_C.Kernel`` under ``key``, rendered and built (with build ``options``) on its
    first use."""
    kernel = _KERNELS.get(key)
    if kernel is None:
        rendered = render_it()
        kernel = device_module.programs().kernel(index, rendered.source, rendered.name,
                                                 rendered.signature, options)
        _KERNELS[key] = kernel
    return kernel


def elementwise_kernel(op: str, expression: str, names: Sequence[str], index: int, rank: int,
                       raw: bool = False, constants: int = 0, helpers: str = "",
                       float_constants: int = 0, result: str | None = None,
                       vector: bool = False) -> tuple[Any, int]:
    """The kernel :func:`.render_launch_elementwise.launch` runs on xpu for operands of
    dtypes ``names`` (the output first) at ``rank`` (0: all contiguous) on ``xpu:<index>``,
    and the elements each of its work items takes: the vector kernel where it applies, else
    the one-element kernel. Its arguments: the buffers, n, the offsets, then (rank > 0) the
    sizes and each operand's strides, the constants and the float constants."""
    if (vector and rank == 0 and not raw and result is None and not constants
            and not float_constants and names.count(names[0]) == len(names)
            and names[0] in render.VECTOR_WIDTHS and DIALECT.name == "opencl"
            and device_module.device_info(index)["type"] == "cpu"):
        key = (index, op, names[0], "vector")
        kernel = cached_kernel(key, index, lambda: render.render_elementwise_vector(
            DIALECT, op.replace(".", "_"), expression, names[0], len(names) - 1))
        return kernel, render.VECTOR_WIDTHS[names[0]]
    float_type = "f64" if device_fp64(index) else "f32"
    key = (index, op, tuple(names), rank, raw, constants, float_constants)
    kernel = cached_kernel(key, index, lambda: render.render_elementwise(
        DIALECT, op.replace(".", "_"), expression, names[0], tuple(names[1:]), rank, raw=raw,
        constants=constants, helpers=helpers, float_constants=float_constants,
        float_type=float_type, result=result))
    return kernel, 1


def row_kernel(op: str, row: pointwise.Op, in_dtype: str, out_dtype: str, arity: int,
               index: int, rank: int) -> tuple[Any, int] | None:
    """The kernel (and elements per work item) :func:`_run_row` launches for ``row`` on
    ``arity`` inputs of ``in_dtype`` into ``out_dtype`` at ``rank``, or None where that
    call declines, raises, or computes another way (complex values)."""
    if (out_dtype != "bool") if row.writes_bool else (out_dtype != in_dtype):
        return None
    if in_dtype in render.COMPLEX:
        return None
    expression, raw = row.expression(in_dtype)
    if expression is None:
        return None
    names = (out_dtype, *(in_dtype,) * arity)
    if not raw and render.NEEDS_FP64 & set(names) and not device_fp64(index):
        return None
    return elementwise_kernel(op, expression, names, index, rank, raw=raw,
                              helpers=pointwise.helpers_source(DIALECT, row, in_dtype),
                              result="bool" if row.writes_bool else None,
                              vector=op in pointwise.VECTOR_SAFE)


def work_group(index: int) -> int:
    """The work-group size of 1-d launches on ``xpu:<index>``: :data:`WORK_GROUP`, or the
    device's limit where it is smaller."""
    size = _WORK_GROUPS.get(index)
    if size is None:
        limit = int(device_module.device_info(index)["max_work_group_size"])
        size = _WORK_GROUPS[index] = max(1, min(WORK_GROUP, limit))
    return size


def launch_1d(kernel: Any, n: int, index: int, args: Sequence[Any]) -> None:
    """Enqueue ``kernel`` over ``n`` work items (it ignores those past ``n``) in work-groups
    of a fixed size: leaving the size to the driver lets it pick one per global size, and
    PoCL compiles a kernel anew for each work-group size it meets (0.1 s a time)."""
    group = work_group(index)
    kernel((-(-n // group) * group,), (group,), *args)


# (op, dtypes, device index) -> (kernel, work-group size, elements per work item) for operands
# that are all contiguous with one shape: the kernel takes buffers, n and offsets, so a
# repeated call skips the checks, the geometry and the key of the general path (the host time
# of a small op)
_CONTIGUOUS: dict[tuple[Any, ...], tuple[Any, int, int]] = {}


def _run_row(op: str, row: pointwise.Op, out: Any, inputs: Sequence[Any]) -> None:
    """Check the operands' dtypes against ``row`` (declining what it does not render) and run
    it."""
    operands = (out, *inputs)
    n = out.numel()
    plain = n and all(t.is_contiguous() and t.numel() == n for t in inputs) \
        and out.is_contiguous()
    if plain:
        key = (op, *(t.dtype for t in operands), out.device.index)
        known = _CONTIGUOUS.get(key)
        if known is not None:
            kernel, group, per_item = known
            buffers, offsets = buffer_args(operands)
            CALLS[op.partition(".")[0]] += 1
            items = -(-n // per_item)
            kernel((-(-items // group) * group,), (group,), *buffers, n, *offsets)
            return
    from .launch_backend import BACKEND  # it is built from this module: load it late

    kernel, per_item = render_launch_elementwise.run_row(BACKEND, op, row, out, inputs)
    if plain and kernel is not None:
        _CONTIGUOUS[key] = (kernel, work_group(out.device.index or 0), per_item)


_TABLE: dict[str, Callable[..., None]] = {}


def kernels() -> dict[str, Callable[..., None]]:
    """Primitive name -> kernel, for ``torch_backend_register_kernels``: the same functions
    on every call (the fast path names the kernels it stands in for, and core compares them
    with the registered ones)."""
    if not _TABLE:
        _TABLE.update(_make_kernels())
    return _TABLE


def _make_kernels() -> dict[str, Callable[..., None]]:
    from . import conv, fft, indexing, linalg, reductions, sorting
    from .launch_backend import BACKEND

    table = render_launch_elementwise.kernels(BACKEND, _run_row)
    table.update(reductions.kernels())
    table.update(linalg.kernels())
    table.update(indexing.kernels())
    table.update(sorting.kernels())
    table.update(conv.kernels())
    table.update(fft.kernels())
    return table
