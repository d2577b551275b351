"""``torch.__config__``: how this torch was built and how it runs ops in parallel, as text.

PyTorch prints its compiler, BLAS and build flags; Plait's core is pure Python, so the text
names the PyTorch API level, Plait's release, the Python it runs on and the installed backend
plugins, in PyTorch's layout (a header, then ``  - `` lines) for programs that log it.
"""

from __future__ import annotations

import os
import platform

from ._core import config as _config, registry as _registry
from .version import API_LEVEL, PLAIT

__all__ = ["parallel_info", "show"]

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _backend_lines() -> list[str]:
    plugins = _registry.installed()
    if not plugins:
        return ["  - Backends: cpu (core's numpy reference kernels only)"]
    listed = ", ".join(
        f"{device} ({plugin.distribution} {plugin.version}, {plugin.status})"
        for device, plugin in sorted(plugins.items())
    )
    return [f"  - Backend plugins: {listed}"]


def show() -> str:
    """What this torch was built with: PyTorch's ``torch.__config__.show()`` layout.

    :returns: a multi-line string, one ``  - `` line per item, ending with a newline.
    """
    uses_cuda = int("cuda" in _registry.installed())
    lines = [
        "PyTorch built with:",
        f"  - Plait {PLAIT}, implementing the PyTorch {API_LEVEL} API (pure-Python core)",
        f"  - Python {platform.python_version()} ({platform.python_implementation()})",
        *_backend_lines(),
        f"  - Build settings: TORCH_VERSION={API_LEVEL}, USE_CUDA={uses_cuda}, USE_ROCM=OFF, "
        "USE_XPU=OFF, USE_MKL=OFF, USE_MKLDNN=OFF, USE_OPENMP=OFF, USE_DISTRIBUTED=OFF",
    ]
    return "\n".join(lines) + "\n"


def parallel_info() -> str:
    """The intra-op thread count and the environment variables that set it, in PyTorch's
    ``torch.__config__.parallel_info()`` layout.

    :returns: a multi-line string ending with a newline.
    """
    lines = [
        "ATen/Parallel:",
        f"\tat::get_num_threads() : {_config.get_num_threads()}",
        f"std::thread::hardware_concurrency() : {os.cpu_count() or 1}",
        "Environment variables:",
        *(f"\t{name} : {os.environ.get(name, '[not set]')}" for name in _THREAD_VARIABLES),
        "ATen parallel backend: the backend plugins' own thread pools",
    ]
    return "\n".join(lines) + "\n"
