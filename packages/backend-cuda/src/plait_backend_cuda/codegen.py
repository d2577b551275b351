"""``torch.compile``'s code generator for cuda: kernel groups as CUDA C++, compiled by NVRTC.

plait-compile's inductor asks the ``torch_backend_codegen`` hook (:mod:`.plugin`) for a
generator and hands it each kernel group on a cuda device. :meth:`CudaCodegen.compile_group`
renders the group in the CUDA dialect with the renderer plait-backend-xpu uses for OpenCL C
(``_render.render_group``: one source for both), compiles its contiguous kernel through the
program cache (:mod:`.programs`: memory, then disk, keyed by the source's hash; a cubin for
the device's architecture) and returns the shared callable
(``_render.render_group_launch.CompiledGroup``), which allocates the outputs and launches
one kernel on the device's default stream per call. The compile runs
on a background thread while the first calls run in the interpreter (as plait-compile's
CPU kernels; ``torch._inductor.config.compile_in_background``). A group it cannot render
gets ``None`` and the fused interpreter runs it, as does one NVRTC rejects.

``STATS`` counts ``groups`` compiled, ``declined`` groups and ``launches``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

from . import device_module, kernels
from ._render import render
from ._render.render_group import GroupKernel, GroupRenderer, Unsupported
from ._render.render_group_launch import CompiledGroup

log = logging.getLogger("plait_backend_cuda.codegen")
STATS: Counter[str] = Counter()
DIALECT = render.CUDA


def _build(index: int, rendered: GroupKernel) -> Any:
    return device_module.programs().kernel(index, rendered.source, rendered.name,
                                           rendered.signature)


def _launch_1d(kernel: Any, n: int, index: int, arguments: Sequence[Any]) -> None:
    kernels.launch_1d(kernel, n, arguments)  # the current device's default stream


def renderer(group: Any) -> GroupRenderer:
    """``group``'s CUDA renderer (double precision: every CUDA device has it).

    :raises Unsupported: a member or dtype the renderer does not spell."""
    return GroupRenderer(DIALECT, group, fp64=True)


class CudaCodegen:
    """The generator object the ``torch_backend_codegen`` hook returns for cuda."""

    def compile_group(self, group: Any) -> CompiledGroup | None:
        """``group``'s compiled callable, or ``None`` to leave it to the interpreter."""
        index = getattr(group.device, "index", None) or 0
        try:
            compiled = CompiledGroup(renderer(group), index, "cuda", _build, kernels.buffer_args,
                                     _launch_1d, STATS, kernels.PARAMETER_WORDS)
            # in the background as plait-compile's CPU kernels (its config says whether);
            # compiled before returning, an NVRTC error declines the group
            compiled.start(group.compile_in_background)
        except (Unsupported, RuntimeError) as error:
            STATS["declined"] += 1
            log.debug("cuda codegen: group %s left to the interpreter: %s", group.index, error)
            return None
        STATS["groups"] += 1
        return compiled
