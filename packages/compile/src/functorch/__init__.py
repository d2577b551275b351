"""``functorch``: the package ``torch.func`` grew out of, as code written for it imports it.

The transforms are ``torch.func``'s own (``vmap``, ``grad``, ``vjp``, ``jacrev``...);
``make_functional`` and ``make_functional_with_buffers`` (functorch's older way to call a
module with parameters passed in) return a :class:`FunctionalModule` that runs a copy of the
module through ``torch.func.functional_call``. ``functorch.compile`` holds the compile entry
points.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from torch import Tensor
from torch.func import (
    functional_call,
    functionalize,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    vjp,
    vmap,
)
from torch.nn import Module

__all__ = ["FunctionalModule", "FunctionalModuleWithBuffers", "combine_state_for_ensemble",
           "functionalize", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "make_functional", "make_functional_with_buffers", "vjp", "vmap"]


def _detached_copy(model: Module) -> Module:
    # the functional module owns a copy: calls with other parameters never touch the model
    return copy.deepcopy(model)


class FunctionalModule(Module):
    """``model`` as a function of its parameters: ``fmodel(params, *args, **kwargs)`` runs the
    model with ``params`` (a sequence in ``named_parameters`` order) in place of its own."""

    def __init__(self, stateless_model: Module, param_names: tuple[str, ...],
                 names_map: dict[str, list[str]] | None = None) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.names_map = names_map or {name: [name] for name in param_names}

    @staticmethod
    def _create_from(model: Module, disable_autograd_tracking: bool = False
                     ) -> tuple[FunctionalModule, tuple[Tensor, ...]]:
        """(the functional module of ``model``, ``model``'s parameters)."""
        model_copy = _detached_copy(model)
        names = tuple(name for name, _ in model_copy.named_parameters())
        params = tuple(p for _, p in model.named_parameters())
        if disable_autograd_tracking:
            params = tuple(p.detach() for p in params)
        return FunctionalModule(model_copy, names), params

    def forward(self, params: Sequence[Tensor], *args: Any, **kwargs: Any) -> Any:
        if len(params) != len(self.param_names):
            raise RuntimeError(f"Expected {len(self.param_names)} parameters, got "
                               f"{len(params)}")
        return functional_call(self.stateless_model, dict(zip(self.param_names, params)),
                               args, kwargs)


class FunctionalModuleWithBuffers(Module):
    """``model`` as a function of its parameters and buffers:
    ``fmodel(params, buffers, *args, **kwargs)``."""

    def __init__(self, stateless_model: Module, param_names: tuple[str, ...],
                 buffer_names: tuple[str, ...], param_names_map: dict[str, list[str]] | None = None,
                 buffer_names_map: dict[str, list[str]] | None = None) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names
        self.all_names_map = {**(param_names_map or {n: [n] for n in param_names}),
                              **(buffer_names_map or {n: [n] for n in buffer_names})}

    @staticmethod
    def _create_from(model: Module, disable_autograd_tracking: bool = False
                     ) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...],
                                tuple[Tensor, ...]]:
        """(the functional module of ``model``, its parameters, its buffers)."""
        model_copy = _detached_copy(model)
        param_names = tuple(name for name, _ in model_copy.named_parameters())
        buffer_names = tuple(name for name, _ in model_copy.named_buffers())
        params = tuple(p for _, p in model.named_parameters())
        buffers = tuple(b for _, b in model.named_buffers())
        if disable_autograd_tracking:
            params = tuple(p.detach() for p in params)
        return (FunctionalModuleWithBuffers(model_copy, param_names, buffer_names), params,
                buffers)

    def forward(self, params: Sequence[Tensor], buffers: Sequence[Tensor], *args: Any,
                **kwargs: Any) -> Any:
        if len(params) != len(self.param_names) or len(buffers) != len(self.buffer_names):
            raise RuntimeError(f"Expected {len(self.param_names)} parameters and "
                               f"{len(self.buffer_names)} buffers, got {len(params)} and "
                               f"{len(buffers)}")
        state = dict(zip(self.param_names, params))
        state.update(zip(self.buffer_names, buffers))
        return functional_call(self.stateless_model, state, args, kwargs)


def make_functional(model: Module, disable_autograd_tracking: bool = False
                    ) -> tuple[FunctionalModule, tuple[Tensor, ...]]:
    """``(fmodel, params)``: ``fmodel(params, *args)`` computes ``model(*args)`` with
    ``params`` in place of the model's parameters.

    :raises RuntimeError: the model has buffers (use :func:`make_functional_with_buffers`)."""
    if not isinstance(model, Module):
        raise TypeError(f"make_functional(model): expected model to be a torch.nn.Module but "
                        f"got {type(model).__name__}")
    if any(True for _ in model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    return FunctionalModule._create_from(model, disable_autograd_tracking)


def make_functional_with_buffers(model: Module, disable_autograd_tracking: bool = False
                                 ) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...],
                                            tuple[Tensor, ...]]:
    """``(fmodel, params, buffers)``: ``fmodel(params, buffers, *args)`` computes
    ``model(*args)`` with the given parameters and buffers."""
    if not isinstance(model, Module):
        raise TypeError(f"make_functional_with_buffers(model): expected model to be a "
                        f"torch.nn.Module but got {type(model).__name__}")
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking)


def combine_state_for_ensemble(models: Sequence[Module]
                               ) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...],
                                          tuple[Tensor, ...]]:
    """``(fmodel, params, buffers)`` of identically built ``models``, each parameter and buffer
    stacked along a new first dim, for ``vmap(fmodel)(params, buffers, x)``."""
    import torch

    if not models:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    first = type(models[0])
    if any(type(m) is not first for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same "
                           "class.")
    fmodel = make_functional_with_buffers(models[0])[0]  # (one copy: the others' state only)
    params = tuple(torch.stack([p.detach() for p in ps])
                   for ps in zip(*(tuple(m.parameters()) for m in models)))
    buffers = tuple(torch.stack(bs) for bs in zip(*(tuple(m.buffers()) for m in models)))
    return fmodel, params, buffers
