"""``torch.func``: the function transforms (``vmap``, ``grad``, ``grad_and_value``, ``vjp``,
``jvp``, ``jacrev``, ``jacfwd``, ``hessian``, from core's ``torch._functorch``) and the module
helpers ``functional_call`` and ``stack_module_state`` (here, in plait-nn, since they need
``torch.nn``).

``functionalize`` returns its function unchanged: Plait runs in-place ops eagerly on their
tensors (views included), so a functionalized program computes the same values as the
original, which is what the transform guarantees; nothing here rewrites mutations away.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch import Tensor
from torch._functorch.autodiff import (
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
)
from torch._functorch.vmap import vmap
from torch.func._rearrange import rearrange
from torch.nn.modules.module import Module
from torch.nn.utils.stateless import _functional_call

__all__ = ["debug_unwrap", "functional_call", "functionalize", "grad", "grad_and_value",
           "hessian", "jacfwd", "jacrev", "jvp", "linearize", "rearrange",
           "replace_all_batch_norm_modules_",
           "stack_module_state", "vjp", "vmap"]


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """``func`` itself (see the module docstring: Plait's eager in-place ops already give the
    values a functionalized program computes).

    :raises RuntimeError: ``remove`` is neither ``"mutations"`` nor
        ``"mutations_and_views"``.
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument "
                           f"for remove={remove}. Valid options are:\n     remove='mutations': "
                           "all inplace and out= operators will be removed from the program, "
                           "and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all "
                           "aliasing operators {view} will be replaced with their non-aliasing "
                           "counterparts, {view}_copy.\n")
    return func


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The physical tensor under a batched ``tensor`` (all levels with ``recurse``), for
    debugging inside ``vmap``; any other tensor is returned as it is."""
    from torch._functorch.batched import BatchedTensor

    while isinstance(tensor, BatchedTensor):
        tensor = tensor._bt_value
        if not recurse:
            break
    return tensor


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """Make every batch-norm module under ``root`` (in place) use batch statistics only: no
    running statistics to update, which ``vmap`` over a model cannot do per sample.

    :returns: ``root``."""
    from torch.nn.modules.batchnorm import _BatchNorm

    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and buffers of ``models`` (same class, same mode), each stacked along a
    new leading dim: ``(params, buffers)`` for ``vmap`` over ``functional_call``. Stacked
    parameters are new leaves that require grad when the originals do.

    :raises RuntimeError: no models, or models of different classes or train/eval modes.
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError(f"stack_module_state: Expected all models to be of the same class, "
                           f"got: {[type(m) for m in models]}")
    import torch

    def stacked_leaf(tensors: list[Tensor]) -> Tensor:
        out = torch.stack([t.detach() for t in tensors])
        return out.requires_grad_(True) if tensors[0].requires_grad else out

    names = [n for n, _ in models[0].named_parameters()]
    params = {n: stacked_leaf([dict(m.named_parameters())[n] for m in models]) for n in names}
    buffers = {n: torch.stack([dict(m.named_buffers())[n] for m in models])
               for n, _ in models[0].named_buffers()}
    return params, buffers


def functional_call(module: Module,
                    parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """Call ``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameter_and_buffer_dicts`` (a dict, or a list/tuple of dicts with distinct keys)
    replaced by the given tensors; the module's own are put back afterwards.

    ``args``: a tuple of positional arguments, or a single one. ``tie_weights``: a tensor
    given for one name of tied parameters replaces all of them. ``strict``: the names must be
    exactly the module's parameters and buffers.

    :raises ValueError: a key appears in several dicts, or the argument is not a dict or a
        sequence of dicts.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        seen: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for key in d:
                seen[key] = seen.get(key, 0) + 1
        repeated = [key for key, count in seen.items() if count > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
