"""The hook-based ``torch.nn.utils.spectral_norm`` / ``remove_spectral_norm``, as in PyTorch
(which recommends :func:`torch.nn.utils.parametrizations.spectral_norm` for new code).

``weight`` becomes the parameter ``weight_orig`` plus the buffers ``weight_u`` and
``weight_v`` (the power-iteration vectors); a forward pre-hook sets the plain attribute
``weight = weight_orig / sigma`` before every call, running one or more power-iteration steps
first in training mode. State dicts record ``spectral_norm: {"weight.version": 1}`` in their
metadata, and checkpoints of the version-0 format (``weight_orig``, ``weight``, ``weight_u``
without ``weight_v``) are converted on load.
"""

from __future__ import annotations

from typing import Any, TypeVar

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.modules.module import Module
from torch.nn.parameter import Parameter, UninitializedParameter

from .parametrizations import _check_dim, _default_dim, _register_load_state_dict_pre_hook

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]

T_module = TypeVar("T_module", bound=Module)


class SpectralNorm:
    """The forward pre-hook of :func:`spectral_norm` for one parameter ``name``."""

    # Version 1: ``weight_v`` is a buffer and ``weight`` is no longer in the state dict.
    _version: int = 1

    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """``weight`` as a matrix: dimension ``dim`` first, the others flattened."""
        if self.dim != 0:
            _check_dim(self.dim, weight.dim())
            weight = weight.movedim(self.dim, 0)
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with torch.no_grad():
                # In place: the buffers are what the state dict holds.
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(torch.mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(torch.mv(weight_mat, v), dim=0, eps=self.eps))
                # Copies, so that backward sees this step's vectors even if a later forward
                # updates the buffers in place.
                u = u.clone()
                v = v.clone()
        sigma = torch.dot(u, torch.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with torch.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat: Tensor, u: Tensor, target_sigma: Tensor) -> Tensor:
        """A ``v`` with ``u^T W v = target_sigma`` (the least-norm solution of ``W v = u``,
        rescaled): what the version-0 format did not store."""
        v = torch.pinverse(weight_mat.t() @ weight_mat) @ weight_mat.t() @ u
        return v * (target_sigma / torch.dot(u, torch.mv(weight_mat, v)))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        with torch.no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            # Random starting vectors; no power iteration yet (the first training forward
            # runs one), so ``weight`` starts as the unnormalised weight.
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)

        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # A plain attribute (not a parameter) that the hook overwrites at every forward.
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)

        module.register_forward_pre_hook(fn)
        module.register_state_dict_post_hook(SpectralNormStateDictHook(fn))
        _register_load_state_dict_pre_hook(module, SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts a version-0 state dict (``weight_orig``, ``weight``, ``weight_u``) to the
    current format (``weight_orig``, ``weight_u``, ``weight_v``) before loading."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict: dict[str, Any], prefix: str, local_metadata: dict[str, Any],
                 strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                 error_msgs: list[str]) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version")
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if (version is None and weight_key not in state_dict
                and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v"))):
            return  # the current format, only without metadata (a hand-made state dict)
        missing = [weight_key + s for s in ("_orig", "", "_u") if weight_key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with torch.no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records ``spectral_norm: {"<name>.version": 1}`` in the module's state-dict
    metadata."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module: Module, state_dict: dict[str, Any], prefix: str,
                 local_metadata: dict[str, Any]) -> None:
        # The module's own metadata entry (``state_dict._metadata[prefix[:-1]]``) is the one
        # that is saved; write there whatever dict the caller passed.
        metadata = getattr(state_dict, "_metadata", None)
        if metadata is not None and prefix[:-1] in metadata:
            local_metadata = metadata[prefix[:-1]]
        entry = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in entry:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        entry[key] = self.fn._version


def spectral_norm(module: T_module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> T_module:
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration in a
    forward pre-hook (``n_power_iterations`` steps per training forward, none in eval mode).

    The parameter becomes ``<name>_orig``, with the buffers ``<name>_u`` and ``<name>_v``.
    ``dim``: the output-channel dimension (default: 1 for ``ConvTranspose*d``, else 0).
    Returns ``module``.
    """
    if dim is None:
        dim = _default_dim(module)
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`spectral_norm`: ``module.<name>`` becomes a parameter again, holding the
    current normalised weight. Returns ``module``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for key, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[key]
            break
    for key, hook in module._load_state_dict_pre_hooks.items():
        if isinstance(hook, SpectralNormLoadStateDictPreHook) and hook.fn.name == name:
            del module._load_state_dict_pre_hooks[key]
            break
    return module
