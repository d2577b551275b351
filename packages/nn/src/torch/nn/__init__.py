"""``torch.nn``: modules, layers, losses and ``nn.functional`` (plait-nn, docs/architecture.md).

This distribution adds ``torch.nn`` to plait-core's ``torch`` package: ``Module`` with
PyTorch's semantics, parameters, containers, layers, ``nn.init``, ``nn.utils`` and
``nn.functional``.
"""

from . import (
    functional,  # `torch.nn.functional` after `import torch.nn`, as in PyTorch
    init,
    parallel,
    utils,
)
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__: list[str] = [
    "Buffer", "DataParallel", "Parameter", "UninitializedBuffer", "UninitializedParameter",
    "functional", "init", "parallel", "utils", *_modules_all,
]


def __getattr__(name: str) -> object:
    # torch.nn.quantized (torch.ao.nn.quantized's older name) and torch.nn.grad, loaded on
    # first use
    if name in ("quantized", "grad"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
