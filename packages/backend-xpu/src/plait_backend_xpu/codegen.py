"""``torch.compile``'s code generator for xpu: kernel groups as OpenCL C kernels.

plait-compile's inductor asks the ``torch_backend_codegen`` hook (:mod:`.plugin`) for a
generator and hands it each kernel group on an xpu device. :meth:`XpuCodegen.compile_group`
renders the group (:mod:`.render_group`, shared with plait-backend-cuda), builds its
contiguous kernel through the program cache (:mod:`.programs`: memory, then disk, keyed by
the source's hash) and returns a :class:`CompiledGroup`; a group it cannot render, or whose
build fails, gets ``None`` and the fused interpreter runs it. A call allocates the outputs
(contiguous) and enqueues one kernel on the device's in-order queue without waiting; other
geometries (strided, broadcast, another rank) build their variant at first use.

``STATS`` counts ``groups`` compiled, ``declined`` groups and ``launches``: tests tell
generated kernels from the interpreter by it.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from torch.backends import contract

from . import device_module, kernels, render
from .render_group import (
    PARAMETER_WORDS,
    REDUCTION_GROUP,
    GroupKernel,
    GroupRenderer,
    Unsupported,
    broadcast_strides,
    pointwise_geometry,
    reduction_geometry,
)

log = logging.getLogger("plait_backend_xpu.codegen")
STATS: Counter[str] = Counter()
DIALECT = render.OPENCL


class CompiledGroup:
    """A kernel group as OpenCL kernels (one per rank of its launches), called with the
    group's input tensors; returns its output tensors."""

    def __init__(self, renderer: GroupRenderer, index: int) -> None:
        self.renderer = renderer
        self.group = renderer.group
        self.index = index
        self._kernels: dict[int, Any] = {}
        self._dtypes = [node.meta["val"].dtype for node in self.group.outputs]
        reduction = self.group.reduction
        self._keepdim = reduction is not None and len(reduction.args) > 2 and bool(
            reduction.args[2])

    def kernel(self, rank: int) -> Any:
        """The built ``_C.Kernel`` for launches of ``rank`` merged dims."""
        found = self._kernels.get(rank)
        if found is None:
            rendered: GroupKernel = (self.renderer.reduction_kernel(rank)
                                     if self.renderer.reduction else self.renderer.pointwise(rank))
            found = device_module.programs().kernel(self.index, rendered.source, rendered.name,
                                                    rendered.signature)
            self._kernels[rank] = found
        return found

    def _interpret(self, inputs: list[Any]) -> list[Any]:
        from torch._inductor.interpreter import run_group

        return run_group(self.group, inputs)

    def __call__(self, inputs: list[Any]) -> list[Any]:
        import torch

        device = None
        for t in inputs:
            if not isinstance(t, torch.Tensor) or t.device.type != "xpu":
                return self._interpret(inputs)  # not what the kernel was built for
            device = t.device if device is None else device
            if t.device != device:
                return self._interpret(inputs)
        if device is None or (device.index or 0) != self.index:
            return self._interpret(inputs)
        shape = list(torch.broadcast_shapes(*(t.shape for t in inputs)))
        numel = 1
        for size in shape:
            numel *= size
        reduction = self.renderer.reduction is not None
        if reduction and (not shape or shape[-1] == 0):
            return self._interpret(inputs)  # empty rows: the library's rules
        out_shapes = [tuple(shape)] * len(self._dtypes)
        if reduction:
            out_shapes[-1] = tuple(shape[:-1]) + ((1,) if self._keepdim else ())
        outputs = [contract.empty(s, d, device) for s, d in zip(out_shapes, self._dtypes)]
        if numel == 0:
            return outputs
        strides = [broadcast_strides(shape, t.shape, t.stride()) for t in inputs]
        if reduction:
            rank, rows, inner, geometry = reduction_geometry(shape, strides)
        else:
            rank, geometry = pointwise_geometry(shape, strides)
        if self.renderer.words(rank) > PARAMETER_WORDS:
            return self._interpret(inputs)
        buffers, offsets = kernels.buffer_args([*outputs, *inputs])
        arguments = [*buffers, *([inner] if reduction else [numel]),
                     *offsets[len(outputs):], *geometry]
        kernel = self.kernel(rank)
        if reduction:
            kernel((rows * REDUCTION_GROUP,), (REDUCTION_GROUP,), *arguments)
        else:
            kernels.launch_1d(kernel, numel, self.index, arguments)
        STATS["launches"] += 1
        return outputs


class XpuCodegen:
    """The generator object the ``torch_backend_codegen`` hook returns for xpu."""

    def compile_group(self, group: Any) -> CompiledGroup | None:
        """``group``'s compiled callable, or ``None`` to leave it to the interpreter."""
        index = getattr(group.device, "index", None) or 0
        try:
            fp64 = bool(device_module.device_info(index)["fp64"])
            if group.reduction is not None and device_module.device_info(
                    index)["max_work_group_size"] < REDUCTION_GROUP:
                raise Unsupported("work groups smaller than the reduction's")
            compiled = CompiledGroup(GroupRenderer(DIALECT, group, fp64), index)
            compiled.kernel(0)  # build now: a build error leaves the group to the interpreter
        except (Unsupported, RuntimeError) as error:
            STATS["declined"] += 1
            log.debug("xpu codegen: group %s left to the interpreter: %s", group.index, error)
            return None
        STATS["groups"] += 1
        return compiled
