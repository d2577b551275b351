"""``torch.autograd.profiler``: the older profiler entry points, served by ``torch.profiler``."""

from __future__ import annotations

from typing import Any

from ..profiler import EventList, FunctionEventAvg, profile as _profile, record_function

__all__ = ["EventList", "FunctionEventAvg", "emit_itt", "emit_nvtx", "profile", "record_function"]


class profile(_profile):
    """The legacy profiler: ``enabled=False`` records nothing; ``use_cuda``/``use_device`` and
    the other flags are accepted."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 use_device: str | None = None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None) -> None:
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules)
        self.enabled = enabled

    def start(self) -> None:
        """Begin recording, unless built with ``enabled=False``."""
        if self.enabled:
            super().start()

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs: Any) -> str:
        """The key averages' table (the legacy profiler has it on the profile itself)."""
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit, **kwargs)


class _ExternalRangeEmitter:
    """Base of :class:`emit_nvtx` and :class:`emit_itt`: annotate each op with a range for an
    external profiler. Plait emits no external ranges; the regions run unchanged."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self) -> _ExternalRangeEmitter:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class emit_nvtx(_ExternalRangeEmitter):
    """NVTX ranges for NVIDIA's profilers; needs a CUDA device, as in PyTorch."""

    def __enter__(self) -> emit_nvtx:
        import torch

        if self.enabled and not torch.cuda.is_available():
            raise AssertionError("Torch not compiled with CUDA enabled")
        return self


class emit_itt(_ExternalRangeEmitter):
    """ITT ranges for Intel's VTune: accepted, and the region runs unchanged."""
