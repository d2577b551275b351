"""``torch.version``: what this build of torch was made with.

Core is pure Python: it is built against no CUDA, ROCm or XPU toolkit, so ``cuda``, ``hip`` and
``xpu`` are None (as in PyTorch's CPU build; programs test ``torch.version.cuda is not None``).
A backend plugin reports its own toolkit through its device module.
"""

from __future__ import annotations

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]

__version__ = "0.1.0"
cuda: str | None = None
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
debug = False
git_version = "Unknown"
