"""``torch.autograd``: reverse-mode automatic differentiation (docs/architecture.md).

Ops record the graph at the dispatcher's ``Autograd`` key (:mod:`._nodes`), with derivative
formulas from :mod:`._formulas`; :mod:`._engine` runs it backwards. This module is the public
face: ``backward``, ``grad``, ``Function``, the grad modes, and (lazily) ``gradcheck``,
``functional``, ``anomaly_mode``.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from .._core import dispatch as _dispatch, upcalls
from .._core.tensor import Tensor
from . import _engine, _inplace, _nodes, _tensor_api, graph
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled

__all__ = ["Function", "FunctionCtx", "backward", "detect_anomaly", "enable_grad", "grad",
           "gradcheck", "gradgradcheck", "graph", "inference_mode", "no_grad",
           "once_differentiable", "set_detect_anomaly", "set_grad_enabled"]

_LAZY = {
    "functional": ("torch.autograd.functional", None),
}


def __getattr__(name: str) -> Any:
    spec = _LAZY.get(name)
    if spec is None:
        raise AttributeError(f"module 'torch.autograd' has no attribute '{name}'")
    mod: ModuleType = importlib.import_module(spec[0])
    value = mod if spec[1] is None else getattr(mod, spec[1])
    globals()[name] = value
    return value


def _tensors(x: Any) -> list[Tensor]:
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _grads(grads: Any, n: int) -> list[Any]:
    if grads is None:
        return [None] * n
    if isinstance(grads, Tensor):
        grads = [grads]
    grads = list(grads)
    if len(grads) != n:
        raise RuntimeError(f"grad_tensors/grad_outputs should be a sequence of length {n}, but "
                           f"got {len(grads)}")
    return grads


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables: Any = None,
             inputs: Any = None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves (or only of
    ``inputs``)."""
    outs = _tensors(tensors)
    if grad_variables is not None:
        grad_tensors = grad_variables
    grads = _grads(grad_tensors, len(outs))
    if retain_graph is None:
        retain_graph = create_graph
    ins = None if inputs is None else _tensors(inputs)
    if ins is not None and not ins:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    _engine.run(outs, grads, retain_graph, create_graph, ins, accumulate=True)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple[Any, ...]:
    """The gradients of ``outputs`` with respect to ``inputs`` (nothing is accumulated)."""
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported")
    outs = _tensors(outputs)
    ins = _tensors(inputs)
    grads = _grads(grad_outputs, len(outs))
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    res = _engine.run(outs, grads, retain_graph, create_graph, ins, accumulate=False)
    out = []
    for t, g in zip(ins, res):
        if g is None:
            if materialize_grads:
                from .._aten import factories as _fac

                g = _fac.zeros_like(t)
            elif not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
        out.append(g)
    return tuple(out)


def _install() -> None:
    _dispatch._autograd_kernel = _nodes.autograd_kernel
    upcalls.install(not_differentiable=_nodes.not_differentiable, inplace_begin=_inplace.begin,
                    inplace_end=_inplace.after_write)
    _tensor_api.install()


_install()

# Imported here (not lazily) because the functions share their modules' names, as in PyTorch.
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: E402
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402
