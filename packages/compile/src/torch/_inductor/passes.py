"""Graph rewrites :func:`~torch._inductor.compile_fx.compile_fx` makes before scheduling.

``merge_cat_of_reshapes``: ``cat([reshape(x_i, s) ...], d)`` where each reshape only merges
the dims of ``x_i`` that land in ``d`` (and ``x_i`` is not contiguous, so each reshape is a
copy) becomes ``view(cat([unsqueeze(x_i, d) ...], d), out)``: the cat reads the strided
inputs itself, one copy of the data instead of two. An attention backward makes this
pattern: the gradients of q, k and v leave SDPA as (B, heads, T, D), are transposed to
(B, T, heads, D), reshaped to (B, T, C) and concatenated into the (B, T, 3C) gradient of the
fused qkv projection.

``fuse_layer_norm_backward_add``: a layer norm backward (every gradient) whose input gradient
is read only by an ``add`` to another gradient of its shape (a residual stream's) becomes one
:func:`~torch._inductor.templates.layer_norm_backward_add` node, which also takes over a sum
of that add over all dimensions but the last (the bias gradient of the linear layer that fed
the residual). The template computes the three in one pass; the add and the sum are no longer
separate calls reading the data again. Only on the CPU, float32/float64, with
``config.cpu_templates``. The sum may also read a reshape of the add that merges its leading
dims (AOT autograd's (B * T, C) view of the gradient for the weight's matmul).

``fuse_gelu_backward_sum``: an exact-form ``gelu_backward`` whose gradient is also summed
over every dimension but the last (directly, or through AOT autograd's (B * T, C) view: the
bias gradient of the linear layer that fed the GELU) becomes one
:func:`~torch._inductor.templates.gelu_backward_sum` node: the template sums the gradient as
it writes it, so the sum no longer reads it again. Only on the CPU, float32/float64, with
``config.cpu_templates``.

``fold_double_transposes``: ``t(t(x))`` is ``x`` (same sizes and strides); AOT autograd
writes one for each linear layer's input gradient (the saved ``t(w)`` transposed back) and
weight gradient (``t(mm(t(g), x))`` transposed again): 34 view calls in a nanoGPT backward.
Not when ``x`` is a graph input that the graph would then return as itself.

``addmm_to_linear``: ``addmm(bias, x, t(w))`` (a linear layer as AOT autograd traces it)
becomes ``linear(x, w, bias)``: a backend with a fused linear kernel writes the bias into the
output and adds the product onto it in one GEMM, where addmm is a matmul and a second pass
adding the bias (nanoGPT's 16 linear layers). ``config.linear_epilogue``.
"""

from __future__ import annotations

import math
from typing import Any

import torch

__all__ = ["addmm_to_linear", "fold_double_transposes", "fuse_gelu_backward_sum",
           "fuse_layer_norm_backward_add", "merge_cat_of_reshapes"]

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


def _sums_all_but_last(user: Any, source: Any) -> bool:
    """Whether ``user`` is ``sum(source, dims)`` over every dimension of ``source`` but the
    last, without keepdim or a dtype."""
    if user.op != "call_function" or user.target is not _aten.sum.dim_IntList \
            or user.args[0] is not source or len(user.args) < 2 or "val" not in source.meta:
        return False
    ndim = source.meta["val"].dim()
    return sorted(d % ndim for d in user.args[1]) == list(range(ndim - 1)) \
        and not (len(user.args) > 2 and user.args[2]) \
        and user.kwargs.get("dtype") is None and set(user.kwargs) <= {"dtype"}


#: Views a linear layer's gradient goes through before its bias gradient is summed: AOT
#: autograd flattens (B, T, C) to (B * T, C) for the weight gradient's matmul and sums that.
_RESHAPES = (_aten.reshape.default, _aten.view.default, _aten._unsafe_view.default)


def _column_sum(add: Any) -> Any:
    """The user of ``add`` that sums it over every dimension but the last, or None; also a sum
    over dim 0 of a reshape of ``add`` that merges all its leading dimensions into one (the
    same numbers: the last dimension is untouched)."""
    for user in add.users:
        if _sums_all_but_last(user, add):
            return user
    shape = tuple(add.meta["val"].shape)
    if len(shape) < 2 or not all(type(size) is int for size in shape):
        return None  # symbolic sizes: left as they are
    for view in add.users:
        if view.op != "call_function" or view.target not in _RESHAPES \
                or view.args[0] is not add or "val" not in view.meta or view.kwargs:
            continue
        if tuple(view.meta["val"].shape) != (math.prod(shape[:-1]), shape[-1]):
            continue
        for user in view.users:
            if _sums_all_but_last(user, view):
                return user
    return None


def _fuse_norm_backward(graph: Any, node: Any, position: dict[Any, int]) -> bool:
    """Rewrite one layer norm backward with the pattern; whether it did."""
    import operator

    from .templates import layer_norm_backward_add

    if len(node.args) != 8 or node.kwargs or list(node.args[7]) != [True, True, True]:
        return False
    values = node.meta.get("val")
    if not isinstance(values, (tuple, list)) or not isinstance(values[0], torch.Tensor):
        return False
    if values[0].device.type != "cpu" or values[0].dtype not in (torch.float32, torch.float64):
        return False
    outputs: dict[int, Any] = {}
    for user in node.users:
        if user.op != "call_function" or user.target is not operator.getitem \
                or user.args[1] in outputs:
            return False
        outputs[user.args[1]] = user
    grad_input = outputs.get(0)
    if grad_input is None or len(grad_input.users) != 1:
        return False
    add = next(iter(grad_input.users))
    if add.op != "call_function" or add.target is not _aten.add.Tensor or add.kwargs \
            or len(add.args) != 2 or "val" not in add.meta:
        return False
    residual = add.args[1] if add.args[0] is grad_input else add.args[0]
    if residual is grad_input or not hasattr(residual, "op") or "val" not in residual.meta:
        return False
    if position.get(residual, len(position)) >= position[node]:
        return False  # the residual is made after the norm's backward: left as it is
    if residual.meta["val"].shape != add.meta["val"].shape \
            or residual.meta["val"].dtype != add.meta["val"].dtype \
            or add.meta["val"].shape != values[0].shape:
        return False
    summed = _column_sum(add)
    with graph.inserting_before(node):
        fused = graph.call_function(layer_norm_backward_add,
                                    (*node.args[:7], residual, summed is not None))
        fused.meta["val"] = (add.meta["val"], values[1], values[2],
                             None if summed is None else summed.meta["val"])
        parts = []
        for index, old in enumerate((add, outputs.get(1), outputs.get(2), summed)):
            if old is None:
                parts.append(None)
                continue
            part = graph.call_function(operator.getitem, (fused, index))
            part.meta["val"] = old.meta["val"]
            parts.append((old, part))
    for pair in parts:
        if pair is not None:
            pair[0].replace_all_uses_with(pair[1])
    for old in (summed, add, grad_input, outputs.get(1), outputs.get(2), node):
        if old is not None:
            graph.erase_node(old)
    return True


def fuse_layer_norm_backward_add(gm: Any) -> int:
    """Apply the layer norm backward rewrite (module docstring) to ``gm``; the count."""
    from . import config

    if not config.cpu_templates:
        return 0
    graph = gm.graph
    done = 0
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is _aten.native_layer_norm_backward.default:
            # positions after the rewrites so far (a residual may be an earlier rewrite's)
            position = {n: index for index, n in enumerate(graph.nodes)}
            done += _fuse_norm_backward(graph, node, position)
    if done:
        gm.recompile()
    return done


def _fuse_gelu_backward(graph: Any, node: Any) -> bool:
    """Rewrite one gelu_backward node with the pattern; whether it did."""
    import operator

    from .templates import gelu_backward_sum

    approximate = node.args[2] if len(node.args) > 2 else node.kwargs.get("approximate", "none")
    value = node.meta.get("val")
    if approximate != "none" or len(node.args) < 2 or set(node.kwargs) - {"approximate"} \
            or not isinstance(value, torch.Tensor) or value.device.type != "cpu" \
            or value.dtype not in (torch.float32, torch.float64) or value.dim() < 2:
        return False
    summed = _column_sum(node)
    if summed is None:
        return False
    with graph.inserting_before(node):
        fused = graph.call_function(gelu_backward_sum, (node.args[0], node.args[1], True))
        fused.meta["val"] = (value, summed.meta["val"])
        grad = graph.call_function(operator.getitem, (fused, 0))
        grad.meta["val"] = value
        total = graph.call_function(operator.getitem, (fused, 1))
        total.meta["val"] = summed.meta["val"]
    node.replace_all_uses_with(grad)
    summed.replace_all_uses_with(total)
    view = summed.args[0]
    graph.erase_node(summed)
    if view is not grad and not view.users:  # the (B * T, C) view only the sum read
        graph.erase_node(view)
    graph.erase_node(node)
    return True


def fuse_gelu_backward_sum(gm: Any) -> int:
    """Apply the gelu backward rewrite (module docstring) to ``gm``; the count."""
    from . import config

    if not config.cpu_templates:
        return 0
    graph = gm.graph
    done = 0
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is _aten.gelu_backward.default:
            done += _fuse_gelu_backward(graph, node)
    if done:
        gm.recompile()
    return done


def fold_double_transposes(gm: Any) -> int:
    """Apply the transpose rewrite (module docstring) to ``gm``; the count."""
    graph = gm.graph
    done = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not _aten.t.default or node.kwargs \
                or len(node.args) != 1:
            continue
        inner = node.args[0]
        if not hasattr(inner, "op") or inner.op != "call_function" \
                or inner.target is not _aten.t.default or inner.kwargs:
            continue
        source = inner.args[0]
        if not hasattr(source, "op"):
            continue
        if any(user.op == "output" for user in node.users) and source.op == "placeholder":
            continue  # an input returned as itself, not a view of it: left as it is
        node.replace_all_uses_with(source)
        graph.erase_node(node)
        if not inner.users:
            graph.erase_node(inner)
        done += 1
    if done:
        gm.recompile()
    return done


def _linear_operands(node: Any) -> tuple[Any, Any, Any] | None:
    """``(x, w, bias)`` when ``node`` is ``addmm(bias, x, t(w))`` with a 1-d bias of the
    output's columns, default beta and alpha, and a 2-d ``w``; else None."""
    if node.op != "call_function" or node.target is not _aten.addmm.default or node.kwargs \
            or len(node.args) != 3 or not all(hasattr(a, "op") for a in node.args):
        return None
    bias, x, transposed = node.args
    if transposed.op != "call_function" or transposed.target is not _aten.t.default \
            or not hasattr(transposed.args[0], "op"):
        return None
    weight = transposed.args[0]
    values = [n.meta.get("val") for n in (node, bias, x, weight)]
    if not all(isinstance(v, torch.Tensor) for v in values):
        return None
    out, bias_val, x_val, weight_val = values
    if x_val.dim() != 2 or weight_val.dim() != 2 or bias_val.dim() != 1 \
            or bias_val.shape[0] != out.shape[1] or len({v.dtype for v in values}) != 1 \
            or len({v.device for v in values}) != 1:
        return None
    return x, weight, bias


def addmm_to_linear(gm: Any) -> int:
    """Apply the addmm rewrite (module docstring) to ``gm``; the count."""
    from . import config

    if not config.linear_epilogue:
        return 0
    graph = gm.graph
    done = 0
    for node in list(graph.nodes):
        operands = _linear_operands(node)
        if operands is None:
            continue
        transposed = node.args[2]
        with graph.inserting_before(node):
            linear = graph.call_function(_aten.linear.default, operands)
        linear.meta["val"] = node.meta["val"]
        node.replace_all_uses_with(linear)
        graph.erase_node(node)
        if not transposed.users:
            graph.erase_node(transposed)
        done += 1
    if done:
        gm.recompile()
    return done
