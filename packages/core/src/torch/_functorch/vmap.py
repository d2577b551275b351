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

from .batched import BatchedTensor, VmapMode, make_batched

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
    :param in_dims: the mapped dim of each positional input: an int or None for all of them,
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


def _name(func: Callable[..., Any]) -> str:
    return getattr(func, "__name__", None) or repr(func)


def _broadcast_dims(dims: Any, spec: _pytree.TreeSpec) -> list[Any] | None:
    """``in_dims`` (or ``out_dims``) matched to a pytree's spec, one entry per leaf; None when
    the structures differ. An int or None stands for every leaf below it."""
    node = _pytree._node_def(dims)
    if dims is None or isinstance(dims, int) or node is None:
        return [dims] * spec.num_leaves  # (a leaf that is no dim fails the caller's check)
    if spec.is_leaf():
        return None
    children, context = node.flatten_fn(dims)
    if node.type is not spec.type or context != spec.context or \
            len(children) != spec.num_children:
        return None
    out: list[Any] = []
    for child, child_spec in zip(children, spec.children_specs):
        sub = _broadcast_dims(child, child_spec)
        if sub is None:
            return None
        out.extend(sub)
    return out


def _vmap_call(func: Callable[..., Any], in_dims: Any, out_dims: Any, randomness: str,
               chunk_size: int | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    name = _name(func)
    head = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
        raise ValueError(f"{head}: expected `in_dims` to be int or a (potentially nested) "
                         f"tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")
    leaves, spec = _pytree.tree_flatten(args)
    if isinstance(in_dims, tuple) and len(in_dims) != len(args):
        flat_dims = None
    else:
        flat_dims = _broadcast_dims(in_dims, spec)
    if flat_dims is None:
        raise ValueError(f"{head}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {_pytree.tree_structure(in_dims)} but inputs "
                         f"has structure {spec}.")
    sizes = []
    for leaf, d in zip(leaves, flat_dims):
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
        sizes.append(leaf.shape[d])
    if not sizes:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Expected at least "
                         "one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    batch = sizes[0]
    moved = [leaf.movedim(d, 0) if d is not None else leaf for leaf, d in zip(leaves, flat_dims)]
    if chunk_size is None or chunk_size >= batch:
        return _run(func, name, moved, flat_dims, spec, kwargs, batch, out_dims, randomness)
    pieces = []
    for start in range(0, batch, chunk_size):
        size = min(chunk_size, batch - start)
        chunk = [x.narrow(0, start, size) if d is not None else x
                 for x, d in zip(moved, flat_dims)]
        pieces.append(_run(func, name, chunk, flat_dims, spec, kwargs, size, out_dims,
                           randomness, keep_physical=True))
    return _join_chunks(pieces, name, out_dims)


def _run(func: Callable[..., Any], name: str, moved: list[Any], flat_dims: list[Any],
         spec: _pytree.TreeSpec, kwargs: dict[str, Any], batch: int, out_dims: Any,
         randomness: str, keep_physical: bool = False) -> Any:
    level = _levels.depth + 1
    mode = VmapMode(level, batch, randomness)
    wrapped = [make_batched(x, level) if d is not None else x for x, d in zip(moved, flat_dims)]
    _levels.depth = level
    try:
        with mode:
            outputs = func(*_pytree.tree_unflatten(wrapped, spec), **kwargs)
    finally:
        _levels.depth = level - 1
    out_leaves, out_spec = _pytree.tree_flatten(outputs)
    flat_out = _broadcast_dims(out_dims, out_spec)
    if flat_out is None:
        raise ValueError(f"vmap({name}, ...): out_dims is not compatible with the structure of "
                         f"`outputs`. out_dims has structure {_pytree.tree_structure(out_dims)} "
                         f"but outputs has structure {out_spec}.")
    results = []
    for out, d in zip(out_leaves, flat_out):
        if not isinstance(out, Tensor):
            if d is None:
                results.append(out)
                continue
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(out)}. Did you mean to set out_dims= to None for output?")
        batched = isinstance(out, BatchedTensor) and out._bt_level == level
        if d is None:
            if batched:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
            results.append(out)
            continue
        physical = out._bt_value if batched else \
            out.unsqueeze(0).expand((batch,) + tuple(out.shape))
        if keep_physical:
            results.append(physical)
            continue
        rank = physical.dim()
        if not -rank <= d < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, "
                             f"{rank - 1}], but got {d})")
        results.append(physical.movedim(0, d))
    if keep_physical:
        return results, flat_out, out_spec
    return _pytree.tree_unflatten(results, out_spec)


def _join_chunks(pieces: list[Any], name: str, out_dims: Any) -> Any:
    from torch._aten import shape as _shape

    flat_out, out_spec = pieces[0][1], pieces[0][2]
    results = []
    for i, d in enumerate(flat_out):
        parts = [p[0][i] for p in pieces]
        if d is None:
            results.append(parts[0])
            continue
        joined = _shape.cat(parts, 0)
        results.append(joined.movedim(0, d))
    return _pytree.tree_unflatten(results, out_spec)
