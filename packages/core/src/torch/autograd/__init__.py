"""``torch.autograd``: reverse-mode automatic differentiation (docs/architecture.md).

Ops record the graph at the dispatcher's ``Autograd`` key (:mod:`._nodes`), with derivative
formulas from :mod:`._formulas`; :mod:`._engine` runs it backwards. This module is the public
face: ``backward``, ``grad``, ``Function``, the grad modes, ``gradcheck`` and (lazily)
``functional``. Like ``torch`` itself it sits above the user tools it re-exports
(``gradcheck`` is written on the public API), so the machinery lives in the submodules and
nothing below imports this module's own names.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from .._core import dispatch as _dispatch, upcalls
from . import _inplace, _nodes, _tensor_api, graph
from ._backward import backward, composite_vjp, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .variable import Variable

__all__ = ["Function", "FunctionCtx", "Variable", "backward", "detect_anomaly", "enable_grad",
           "grad", "gradcheck", "gradgradcheck", "graph", "inference_mode", "no_grad",
           "once_differentiable", "set_detect_anomaly", "set_grad_enabled"]

_LAZY = {
    "forward_ad": ("torch.autograd.forward_ad", None),
    "functional": ("torch.autograd.functional", None),
    "profiler": ("torch.autograd.profiler", None),
}


def __getattr__(name: str) -> Any:
    spec = _LAZY.get(name)
    if spec is None:
        raise AttributeError(f"module 'torch.autograd' has no attribute '{name}'")
    mod: ModuleType = importlib.import_module(spec[0])
    value = mod if spec[1] is None else getattr(mod, spec[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    # the lazily imported submodules are attributes too (dir(torch.autograd) lists them)
    return sorted(set(globals()) | set(_LAZY))


def _install() -> None:
    _dispatch._autograd_kernel = _nodes.autograd_kernel
    upcalls.install(not_differentiable=_nodes.not_differentiable, inplace_begin=_inplace.begin,
                    inplace_end=_inplace.after_write, composite_vjp=composite_vjp)
    _tensor_api.install()


_install()

# Imported here (not lazily) because the functions share their modules' names, as in PyTorch.
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: E402
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402
