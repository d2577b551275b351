"""``torch.compile``'s code generator for xpu: kernel groups as OpenCL C kernels.

plait-compile's inductor asks the ``torch_backend_codegen`` hook (:mod:`.plugin`) for a
generator and hands it each kernel group on an xpu device. :meth:`XpuCodegen.compile_group`
renders the group (:mod:`.render_group`, shared with plait-backend-cuda), builds its
contiguous kernel through the program cache (:mod:`.programs`: memory, then disk, keyed by
the source's hash) and returns a :class:`~.render_group_launch.CompiledGroup`; a group it
cannot render gets ``None`` and the fused interpreter runs it. A program not on disk builds on a
background thread while the first calls run in the interpreter, as plait-compile's CPU
kernels do (``torch._inductor.config.compile_in_background = False``: before returning, and
a build error then declines the group; in the background it leaves the group interpreted).
A call allocates the outputs and enqueues one kernel on the device's in-order queue without
waiting; other geometries (strided, broadcast: another rank) build their variant at first use.

``STATS`` counts ``groups`` compiled, ``declined`` groups and ``launches``: tests tell
generated kernels from the interpreter by it.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from . import device_module, kernels, programs, render
from .render_group import REDUCTION_GROUP, GroupKernel, GroupRenderer, Unsupported
from .render_group_launch import CompiledGroup

log = logging.getLogger("plait_backend_xpu.codegen")
STATS: Counter[str] = Counter()
DIALECT = render.OPENCL


def _in_background(group: Any, index: int, rendered: GroupKernel) -> bool:
    """Whether to build on the background thread: as plait-compile's CPU kernels, when
    ``torch._inductor.config.compile_in_background`` says so and the program is not on disk
    (loading a binary takes no time worth hiding)."""
    if not group.compile_in_background:
        return False
    path = device_module.programs().binary_path(index, programs.source_hash(rendered.source))
    return path is None or not path.exists()


def _build(index: int, rendered: GroupKernel) -> Any:
    return device_module.programs().kernel(index, rendered.source, rendered.name,
                                           rendered.signature)


class XpuCodegen:
    """The generator object the ``torch_backend_codegen`` hook returns for xpu."""

    def compile_group(self, group: Any) -> CompiledGroup | None:
        """``group``'s compiled callable, or ``None`` to leave it to the interpreter."""
        index = getattr(group.device, "index", None) or 0
        try:
            info = device_module.device_info(index)
            if group.reduction is not None and info["max_work_group_size"] < REDUCTION_GROUP:
                raise Unsupported("work groups smaller than the reduction's")
            compiled = CompiledGroup(GroupRenderer(DIALECT, group, bool(info["fp64"])), index,
                                     "xpu", _build, kernels.buffer_args, kernels.launch_1d,
                                     STATS, kernels.PARAMETER_WORDS,
                                     cpu=info["type"] == "cpu")
            compiled.start(_in_background(group, index, compiled.rendered(*compiled.first())))
        except (Unsupported, RuntimeError) as error:
            STATS["declined"] += 1
            log.debug("xpu codegen: group %s left to the interpreter: %s", group.index, error)
            return None
        STATS["groups"] += 1
        return compiled
