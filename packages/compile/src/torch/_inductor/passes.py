"""Graph rewrites :func:`~torch._inductor.compile_fx.compile_fx` makes before scheduling.

``merge_cat_of_reshapes``: ``cat([reshape(x_i, s) ...], d)`` where each reshape only merges
the dims of ``x_i`` that land in ``d`` (and ``x_i`` is not contiguous, so each reshape is a
copy) becomes ``view(cat([unsqueeze(x_i, d) ...], d), out)``: the cat reads the strided
inputs itself, one copy of the data instead of two. An attention backward makes this
pattern: the gradients of q, k and v leave SDPA as (B, heads, T, D), are transposed to
(B, T, heads, D), reshaped to (B, T, C) and concatenated into the (B, T, 3C) gradient of the
fused qkv projection.
"""

from __future__ import annotations

import math
from typing import Any

import torch

__all__ = ["merge_cat_of_reshapes"]

_aten = torch.ops.aten


def _value(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` on meta values: under their fake mode when they are fake tensors."""
    mode = getattr(args[0], "fake_mode", None)
    if mode is None:
        return fn(*args)
    with mode:
        return fn(*args)


def _merged_dims(source: tuple[int, ...], target: tuple[int, ...], dim: int) -> int | None:
    """How many dims of ``source`` the reshape to ``target`` merges into ``target[dim]`` (the
    others kept as they are), or None when the reshape is not such a merge."""
    count = len(source) - len(target) + 1
    if count < 1 or source[:dim] != target[:dim]:
        return None
    if source[dim + count:] != target[dim + 1:]:
        return None
    if math.prod(source[dim:dim + count]) != target[dim]:
        return None
    return count


def _rewrite(graph: Any, cat: Any) -> bool:
    """Rewrite one cat node when it has the pattern; whether it did."""
    parts, dim = cat.args[0], (cat.args[1] if len(cat.args) > 1 else cat.kwargs.get("dim", 0))
    if not isinstance(parts, (list, tuple)) or len(parts) < 2:
        return False
    sources = []
    for part in parts:
        if not (hasattr(part, "op") and part.target is _aten.reshape.default
                and len(part.users) == 1 and "val" in part.meta):
            return False
        source = part.args[0]
        if not hasattr(source, "op") or "val" not in source.meta:
            return False
        sources.append(source)
    target = tuple(parts[0].meta["val"].shape)
    shape = tuple(sources[0].meta["val"].shape)
    if not all(type(size) is int for size in target + shape):
        return False  # symbolic sizes: left as they are
    dim = dim % len(target) if target else 0
    if not target or any(tuple(p.meta["val"].shape) != target for p in parts) or any(
            tuple(s.meta["val"].shape) != shape for s in sources):
        return False
    if any(s.meta["val"].is_contiguous() for s in sources):
        return False  # its reshape is a view: nothing to save
    if _merged_dims(shape, target, dim) is None:
        return False
    with graph.inserting_before(cat):
        expanded = []
        for source in sources:
            node = graph.call_function(_aten.unsqueeze.default, (source, dim))
            node.meta["val"] = _value(_aten.unsqueeze.default, source.meta["val"], dim)
            expanded.append(node)
        joined = graph.call_function(_aten.cat.default, (expanded, dim))
        joined.meta["val"] = _value(_aten.cat.default, [n.meta["val"] for n in expanded], dim)
        out_shape = list(cat.meta["val"].shape)
        view = graph.call_function(_aten.view.default, (joined, out_shape))
        view.meta["val"] = _value(_aten.view.default, joined.meta["val"], out_shape)
    cat.replace_all_uses_with(view)
    graph.erase_node(cat)
    for part in parts:
        graph.erase_node(part)
    return True


def merge_cat_of_reshapes(gm: Any) -> int:
    """Apply the rewrite (module docstring) to every matching cat of ``gm``; the count."""
    graph = gm.graph
    done = 0
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is _aten.cat.default \
                and "val" in node.meta and _rewrite(graph, node):
            done += 1
    if done:
        gm.recompile()
    return done
