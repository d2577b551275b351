"""``torch.backends``: the plugin system (the hooks in :mod:`torch.backends.hookspecs`, what
kernels may use in :mod:`torch.backends.contract`, device-module parts in
:mod:`torch.backends.devicekit`) and the per-backend switches (``torch.backends.cuda``,
``torch.backends.cudnn``, ``torch.backends.mps``, ``torch.backends.mkldnn``,
``torch.backends.opt_einsum``) and what the CPU build has (``torch.backends.cpu``,
``torch.backends.mkl``, ``torch.backends.openmp``, ``torch.backends.quantized``)."""

from __future__ import annotations

import importlib
from types import ModuleType

_SUBMODULES = ("cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum",
               "quantized", "hookspecs", "contract", "devicekit")


def __getattr__(name: str) -> ModuleType | type:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "BackendInfo":  # what plugins build while `import torch` runs: a light module
        from ._backend_info import BackendInfo

        return BackendInfo
    raise AttributeError(f"module 'torch.backends' has no attribute '{name}'")
