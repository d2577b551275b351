"""``torch.vmap``: map a function over a dim of its inputs, with batching rules.

The inputs' batch dims move first and become :class:`BatchedTensor` wrappers of a new level;
the function runs once, inside that level's :class:`VmapMode`, on tensors shaped like one
sample; the outputs' physical tensors come back with their batch dim moved to ``out_dims``.
``chunk_size`` runs the batch in pieces and concatenates them (same results, less memory).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from torch._core.tensor import Tensor
from torch.utils import _pytree
from torch.utils._pytree import (  # noqa: F401 (PyTorch's names in this module)
    _broadcast_to_and_flatten,
    tree_flatten,
    tree_unflatten,
)

from .batched import BatchedTensor, VmapMode
from .c_api import _add_batch_dim, _remove_batch_dim

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


class _Levels(threading.local):
    def __init__(self) -> None:
        self.depth = 0


_levels = _Levels()


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: int | None = None) -> Callable[..., Any]:
    """Vectorise ``func`` over a dim of its inputs.

    :param func: a function of tensors (and pytrees of them) returning tensors (or pytrees).
    :param in_dims: the mapped dim of each positional input: an int for all of them,
        or a tuple matching the inputs, whose entries may themselves be nested tuples, lists
        or dicts matching that input's structure (None: not mapped). Keyword arguments are
        never mapped.
    :param out_dims: where each output's batch dim goes: an int, or a structure matching the
        outputs (None: an output that does not depend on the batch is returned as it is).
    :param randomness: ``"error"`` (random ops raise), ``"different"`` (each sample draws its
        own values) or ``"same"`` (every sample sees the same draw).
    :param chunk_size: run at most this many samples at a time (None: all at once).
    :returns: the vectorised function.
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. "
                         f"(got {chunk_size})")

    @functools.wraps(func)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        return _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    return vmapped


def _get_name(func: Callable[..., Any]) -> str:
    """How error messages name ``func``."""
    return getattr(func, "__name__", None) or repr(func)


# The stages of a vmap call below keep the names (and arguments) of PyTorch's
# torch._functorch.vmap: libraries that map over their own containers (tensordict) replace
# _process_batched_inputs, _create_batched_inputs and _unwrap_batched in this module, and the
# calls here read them from the module's globals at each call, so their versions are the ones
# that run.


def _vmap_call(func: Callable[..., Any], in_dims: Any, out_dims: Any, randomness: str,
               chunk_size: int | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    batch_size, flat_in_dims, flat_args, args_spec = _process_batched_inputs(in_dims, args, func)
    if chunk_size is None or chunk_size >= batch_size:
        return _flat_vmap(func, batch_size, flat_in_dims, flat_args, args_spec, out_dims,
                          randomness, kwargs)
    pieces = []
    for start in range(0, batch_size, chunk_size):
        size = min(chunk_size, batch_size - start)
        chunk = [x.narrow(d, start, size) if d is not None else x
                 for x, d in zip(flat_args, flat_in_dims)]
        pieces.append(_flat_vmap(func, size, flat_in_dims, chunk, args_spec, out_dims,
                                 randomness, kwargs))
    return _join_chunks(pieces, func, out_dims)


def _process_batched_inputs(in_dims: Any, args: tuple[Any, ...], func: Callable[..., Any]
                            ) -> tuple[int, list[Any], list[Any], _pytree.TreeSpec]:
    """Check ``in_dims`` against the inputs: ``(batch size, one in-dim per input leaf (None
    or a dim >= 0), the input leaves, the inputs' tree spec)``.

    :raises ValueError: PyTorch's messages, for each way ``in_dims`` and the inputs disagree."""
    name = _get_name(func)
    head = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)):  # (None too, as PyTorch: (None,) maps nothing)
        raise ValueError(f"{head}: expected `in_dims` to be int or a (potentially nested) "
                         f"tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")
    flat_args, args_spec = _pytree.tree_flatten(args)
    if isinstance(in_dims, tuple) and len(in_dims) != len(args):
        flat_in_dims = None
    else:
        flat_in_dims = _pytree._broadcast_to_and_flatten(in_dims, args_spec)
    if flat_in_dims is None:
        raise ValueError(f"{head}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {_pytree.tree_structure(in_dims)} but inputs "
                         f"has structure {args_spec}.")
    sizes = []
    for i, (leaf, d) in enumerate(zip(flat_args, flat_in_dims)):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"{head}: Got in_dim={d} for an input but in_dim must be either "
                             "an integer dimension or None.")
        if not isinstance(leaf, Tensor):
            raise ValueError(f"{head}: Got in_dim={d} for an input but the input is of type "
                             f"{type(leaf)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        if not -leaf.dim() <= d < leaf.dim():
            raise ValueError(f"{head}: Got in_dim={d} for some input, but that input is a "
                             f"Tensor of dimensionality {leaf.dim()} so expected in_dim to "
                             f"satisfy -{leaf.dim()} <= in_dim < {leaf.dim()}.")
        flat_in_dims[i] = d % leaf.dim()
        sizes.append(leaf.shape[d])
    if not sizes:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Expected at least "
                         "one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0], flat_in_dims, flat_args, args_spec


def _create_batched_inputs(flat_in_dims: list[Any], flat_args: list[Any], vmap_level: int,
                           args_spec: _pytree.TreeSpec) -> Any:
    """The function's inputs at ``vmap_level``: each mapped leaf batched along its in-dim,
    the others as they are, in the inputs' structure."""
    batched = [_add_batch_dim(arg, d, vmap_level) if d is not None else arg
               for d, arg in zip(flat_in_dims, flat_args)]
    return _pytree.tree_unflatten(batched, args_spec)


def _flat_vmap(func: Callable[..., Any], batch_size: int, flat_in_dims: list[Any],
               flat_args: list[Any], args_spec: _pytree.TreeSpec, out_dims: Any,
               randomness: str, kwargs: dict[str, Any]) -> Any:
    level = _levels.depth + 1
    _levels.depth = level
    try:
        with VmapMode(level, batch_size, randomness):
            batched_inputs = _create_batched_inputs(flat_in_dims, flat_args, level, args_spec)
            batched_outputs = func(*batched_inputs, **kwargs)
    finally:
        _levels.depth = level - 1
    return _unwrap_batched(batched_outputs, out_dims, level, batch_size, func)


def _unwrap_batched(batched_outputs: Any, out_dims: Any, vmap_level: int, batch_size: int,
                    func: Callable[..., Any]) -> Any:
    """The outputs with the batch of ``vmap_level`` moved to their ``out_dims`` (outputs
    that do not depend on the batch are expanded to it)."""
    flat_outputs, output_spec = _pytree.tree_flatten(batched_outputs)
    flat_out_dims = _pytree._broadcast_to_and_flatten(out_dims, output_spec)
    if flat_out_dims is None:
        raise ValueError(f"vmap({_get_name(func)}, ...): out_dims is not compatible with the "
                         f"structure of `outputs`. out_dims has structure "
                         f"{_pytree.tree_structure(out_dims)} but outputs has structure "
                         f"{output_spec}.")
    name = _get_name(func)
    results = [_maybe_remove_batch_dim(name, out, vmap_level, batch_size, d)
               for out, d in zip(flat_outputs, flat_out_dims)]
    return _pytree.tree_unflatten(results, output_spec)


def _maybe_remove_batch_dim(name: str, batched_output: Any, vmap_level: int, batch_size: int,
                            out_dim: Any) -> Any:
    """One output of the function: its batch of ``vmap_level`` moved to ``out_dim``; an
    output with ``out_dim`` None as it is (it must not depend on the batch)."""
    if out_dim is None:
        if isinstance(batched_output, BatchedTensor) and batched_output._bt_level == vmap_level:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                             "when out_dim is None")
        return batched_output
    if not isinstance(batched_output, Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(batched_output)}. Did you mean to set out_dims= to None for "
                         "output?")
    return _remove_batch_dim(batched_output, vmap_level, batch_size, out_dim)


def _join_chunks(pieces: list[Any], func: Callable[..., Any], out_dims: Any) -> Any:
    """The outputs of a chunked call: each output's chunks concatenated along its out-dim."""
    from torch._aten import shape as _shape

    flat_pieces = [_pytree.tree_flatten(p) for p in pieces]
    output_spec = flat_pieces[0][1]
    flat_out_dims = _pytree._broadcast_to_and_flatten(out_dims, output_spec)
    if flat_out_dims is None:  # (the first chunk's call raised PyTorch's error already)
        raise ValueError(f"vmap({_get_name(func)}, ...): out_dims is not compatible with the "
                         "structure of `outputs`.")
    results = []
    for i, d in enumerate(flat_out_dims):
        parts = [leaves[i] for leaves, _ in flat_pieces]
        results.append(parts[0] if d is None else _shape.cat(parts, d))
    return _pytree.tree_unflatten(results, output_spec)
