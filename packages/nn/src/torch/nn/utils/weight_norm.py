"""The hook-based ``torch.nn.utils.weight_norm`` / ``remove_weight_norm`` (deprecated in
PyTorch in favour of :func:`torch.nn.utils.parametrizations.weight_norm`, and kept for the
scripts and checkpoints that use it).

``weight`` is replaced by the parameters ``weight_g`` (magnitude) and ``weight_v``
(direction); a forward pre-hook recomputes the plain attribute ``weight = g * v / ||v||``
before every call.
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from torch import Tensor
from torch.nn.modules.module import Module
from torch.nn.parameter import Parameter, UninitializedParameter

from .parametrizations import _norm_except_dim, _weight_norm

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]

T_module = TypeVar("T_module", bound=Module)


class WeightNorm:
    """The forward pre-hook of :func:`weight_norm` for one parameter ``name``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=2)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: T_module, name: str = "weight", dim: int = 0) -> T_module:
    """Replace ``module.<name>`` by ``<name>_g * <name>_v / ||<name>_v||``, recomputed by a
    forward pre-hook, with the parameters ``<name>_g`` and ``<name>_v``.

    ``dim``: the dimension that keeps one norm per slice (0: one per output channel);
    ``None`` (or -1) normalises over the whole tensor. Deprecated (a ``FutureWarning``) in
    favour of :func:`torch.nn.utils.parametrizations.weight_norm`. Returns ``module``.
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`weight_norm`: ``module.<name>`` becomes a parameter again, with its
    current value. Returns ``module``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
