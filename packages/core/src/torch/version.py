"""``torch.version``: what this build of torch is and was made with.

``__version__`` is the PyTorch API level Plait implements with Plait's own release as the
local label, ``"2.13.0+plait0.1.0"`` (PyTorch's CPU build says ``"2.13.0+cpu"``): libraries
that gate features on ``torch.__version__`` see the API they will get, and the label says
which Plait this is. The ``torch`` distribution (``packages/core/dist-torch``) carries the same
version, so ``importlib.metadata.version("torch")`` agrees.

Core is pure Python, built against no GPU toolkit: ``hip`` and ``xpu`` are None, as in
PyTorch's CPU build. ``cuda`` is None too unless a CUDA backend plugin is installed, in which
case it is the CUDA version that backend was built with (asked on first read, not at
``import torch``).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]

# The PyTorch release whose API Plait implements, and Plait's own release.
API_LEVEL = "2.13.0"
PLAIT = "0.1.0"
__version__ = f"{API_LEVEL}+plait{PLAIT}"

cuda: str | None  # answered by __getattr__ below on first read
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
debug = False
# Plait is not built from PyTorch's repository, so there is no PyTorch commit to name.
git_version = "Unknown"


def _cuda_toolkit() -> str | None:
    """The CUDA version of the installed CUDA backend plugin, or None without one.

    A plugin's device module may answer ``toolkit_version()`` (``"13.0"``; None when it was
    built without the toolkit); a plugin that failed to load reports None, as a build without
    CUDA does.
    """
    registry = importlib.import_module("torch._core.registry")
    if "cuda" not in registry.installed():
        return None
    import torch

    try:
        toolkit_version = getattr(torch.get_device_module("cuda"), "toolkit_version", None)
        return toolkit_version() if toolkit_version is not None else None
    except (ImportError, RuntimeError):  # the plugin failed or was skipped: no CUDA here
        return None


# attribute -> what answers it on first read (then it is a plain module attribute)
_ON_FIRST_READ = {"cuda": _cuda_toolkit}


def __getattr__(name: str) -> Any:
    answer = _ON_FIRST_READ.get(name)
    if answer is None:
        raise AttributeError(f"module 'torch.version' has no attribute '{name}'")
    value = globals()[name] = answer()
    return value
