"""Loops that take functions: ``torch.while_loop``, and ``map``, ``scan`` and
``associative_scan`` of ``torch._higher_order_ops``.

Each runs its body in Python, one iteration after the other, so it is exact in eager and
under graph capture alike, and gradients flow through the ops the iterations ran. Under
``torch.compile`` a body's ops are recorded into the graph; ``while_loop`` needs its
condition's value at each iteration, which flushes the graph there (PyTorch holds the loop in
one graph, so ``fullgraph=True`` allows it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch._core import registry
from torch._dynamo.exc import UncapturedHigherOrderOpError
from torch.utils import _pytree as pytree

__all__ = ["associative_scan", "map", "scan", "while_loop"]


def _meta(value: Any) -> tuple[Any, ...]:
    """What an iteration must keep of a carried value: a tensor's shape, dtype and device,
    else the value's type."""
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), value.dtype, value.device)
    return ("value", type(value))


def _as_truth(pred: Any) -> bool:
    """The value of ``cond_fn``'s result: a bool or a one-element tensor (as PyTorch)."""
    if isinstance(pred, torch.Tensor):
        if pred.numel() != 1 or pred.dim() != 0:
            raise UncapturedHigherOrderOpError(
                "torch.while_loop: unsupported cond_fn return type\n  Explanation: Expected "
                f"cond_fn to return a scalar tensor or a bool but got {pred.shape}")
        from torch._dynamo import _capture

        capture = _capture.current()
        if capture is not None and capture.touches((pred,)):
            # the loop needs the value: the graph so far runs (PyTorch captures the loop)
            capture.flush("torch.while_loop reads its condition", captured_in_pytorch=True)
        return bool(pred)
    if isinstance(pred, bool):
        return pred
    raise UncapturedHigherOrderOpError(
        "torch.while_loop: unsupported cond_fn return type\n  Explanation: Expected cond_fn "
        f"to return a scalar tensor or a bool but got {type(pred).__name__}")


def while_loop(cond_fn: Callable[..., Any], body_fn: Callable[..., Any],
               carried_inputs: tuple[Any, ...] | list[Any]) -> Any:
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` holds.

    :param cond_fn: returns a bool or a one-element boolean tensor.
    :param body_fn: returns values of the carried inputs' structure, shapes and dtypes.
    :param carried_inputs: a tuple or list of tensors and ints.
    :returns: the last carried values (a tuple; the body's own result when it returns a
        single value).
    :raises UncapturedHigherOrderOpError: an iteration changed a carried value's metadata.
    """
    if not isinstance(carried_inputs, (tuple, list)):
        raise UncapturedHigherOrderOpError(
            "torch.while_loop: carried_inputs must be a tuple or list, got "
            f"{type(carried_inputs).__name__}")
    carried: tuple[Any, ...] = tuple(carried_inputs)
    result: Any = carried
    expected = [_meta(v) for v in carried]
    while _as_truth(cond_fn(*carried)):
        result = body_fn(*carried)
        carried = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        found = [_meta(v) for v in carried]
        if found != expected:
            raise UncapturedHigherOrderOpError(
                "Expected body_fn_output and carried_inputs to have same metadata but found: "
                f"{found} vs {expected}")
    return result if not isinstance(result, (tuple, list)) else tuple(result)


def _slices(xs: Any, dim: int) -> tuple[list[Any], Any, int]:
    """The leaves of ``xs``, their structure, and their common size along ``dim``."""
    leaves, spec = pytree.tree_flatten(xs)
    if not leaves or not all(isinstance(t, torch.Tensor) for t in leaves):
        raise RuntimeError("the scanned inputs must be tensors (or a pytree of tensors)")
    sizes = {t.shape[dim] for t in leaves}
    if len(sizes) != 1:
        raise RuntimeError(f"the scanned inputs must have one size along dim {dim}, got "
                           f"{sorted(sizes)}")
    return leaves, spec, sizes.pop()


def _stack(results: list[Any], dim: int = 0) -> Any:
    """Stack per-iteration pytrees leaf by leaf along ``dim`` (0-dim leaves along 0)."""
    flat = [pytree.tree_flatten(r) for r in results]
    spec = flat[0][1]
    stacked = []
    for i in range(len(flat[0][0])):
        parts = [leaves[i] for leaves, _ in flat]
        stacked.append(torch.stack(parts, dim if parts[0].dim() >= dim else 0))
    return pytree.tree_unflatten(stacked, spec)


def map(f: Callable[..., Any], xs: Any, *args: Any) -> Any:  # PyTorch's name, over the builtin
    """``f(x, *args)`` for each slice ``x`` of ``xs`` along its first dim, stacked.

    :param xs: a tensor or a pytree of tensors of one leading size.
    :returns: the results (a pytree of tensors) stacked along a new first dim.
    """
    leaves, spec, n = _slices(xs, 0)
    results = [f(pytree.tree_unflatten([t[i] for t in leaves], spec), *args) for i in range(n)]
    return _stack(results)


def scan(combine_fn: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any, *,
         dim: int = 0, reverse: bool = False) -> tuple[Any, Any]:
    """``carry, y = combine_fn(carry, x)`` for each slice ``x`` of ``xs`` along ``dim``.

    :param init: the first carry (a tensor or a pytree of tensors).
    :param reverse: scan from the last slice; each ``y`` keeps its slice's position.
    :returns: ``(last carry, ys)``, the ``y`` s stacked along ``dim``.
    """
    leaves, spec, n = _slices(xs, dim)
    order = range(n - 1, -1, -1) if reverse else range(n)
    carry = init
    ys: list[Any] = [None] * n
    for i in order:
        carry, ys[i] = combine_fn(carry, pytree.tree_unflatten(
            [t.select(dim, i) for t in leaves], spec))
    return carry, _stack(ys, dim)


def associative_scan(combine_fn: Callable[[Any, Any], Any], xs: Any, dim: int,
                     reverse: bool = False, combine_mode: str = "pointwise") -> Any:
    """The inclusive scan of ``xs`` along ``dim`` with the associative ``combine_fn``:
    ``out[i] = combine_fn(out[i - 1], xs[i])`` (from the end with ``reverse``).

    :param combine_mode: ``"pointwise"`` (a pointwise ``combine_fn``, on CUDA or XPU
        tensors, as PyTorch requires) or ``"generic"``.
    """
    if combine_mode not in ("pointwise", "generic"):
        raise ValueError(f"combine_mode must be 'pointwise' or 'generic', got {combine_mode!r}")
    leaves, spec, n = _slices(xs, dim)
    dim = dim % leaves[0].dim()
    # PyTorch generates a device kernel for "pointwise" and refuses host tensors; the
    # registry says which devices' memory is the host's (no device-type names here)
    if combine_mode == "pointwise" and any(
            "host_accessible" in registry.capabilities(t.device.type) for t in leaves):
        raise ValueError("For combine_mode='pointwise', all input tensors need to be on CUDA "
                         "or XPU")
    order = range(n - 1, -1, -1) if reverse else range(n)
    outs: list[Any] = [None] * n
    acc: Any = None
    for i in order:
        x = pytree.tree_unflatten([t.narrow(dim, i, 1) for t in leaves], spec)
        acc = x if acc is None else combine_fn(acc, x)
        outs[i] = acc
    flat = [pytree.tree_leaves(o) for o in outs]
    return pytree.tree_unflatten([torch.cat([leaves_i[k] for leaves_i in flat], dim)
                                  for k in range(len(flat[0]))], spec)
