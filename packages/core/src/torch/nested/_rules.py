"""How an aten operator runs on nested tensors: once per component.

Component ``k`` of the result is the operator applied to component ``k`` of every nested
operand (they must have as many components), with plain tensors and numbers passed as they are
(so ``nt * 2``, ``nt + bias`` and ``F.linear(nt, weight)`` broadcast into each component).
Arguments that name dimensions of the nested tensor (``dim``, ``dim0``...) are shifted past the
batch dim for the components; a size list (``view``/``reshape``) keeps its dims after the
batch's. Dim 0 itself is refused (a component has no batch), and so is a reduction over every
dim (PyTorch has none for nested tensors). ``cat`` along dim 0 joins the component lists.
"""

from __future__ import annotations

from typing import Any

import torch

from ._tensor import NestedTensor

# Schema argument names that hold dims (an int or a list of ints)
_DIM_ARGUMENTS = frozenset(("dim", "dim0", "dim1", "dims", "source", "destination",
                            "start_dim", "end_dim"))
# Schema argument names that hold a full size (the batch's first): view, reshape, expand
_SIZE_ARGUMENTS = frozenset(("size", "shape"))


def _shift(value: Any, rank: int, op: str) -> Any:
    """A dim of the nested tensor (``rank`` dims, the batch's included) as a component's."""
    if isinstance(value, (list, tuple)):
        return type(value)(_shift(v, rank, op) for v in value)
    if not isinstance(value, int):
        return value
    if not -rank <= value < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, "
                         f"{rank - 1}], but got {value})")
    if value % rank == 0:
        raise RuntimeError(f"{op}(): a nested tensor's dim 0 is its batch of components; "
                           f"this operator cannot run along it")
    return value % rank - 1


def _size(value: Any, count: int, op: str) -> Any:
    if not isinstance(value, (list, tuple)) or not value:
        return value
    if value[0] not in (count, -1):
        raise RuntimeError(f"{op}: For now nested view cannot change or infer the implicit "
                           f"batch dimension")
    return list(value[1:])


def _cat(args: tuple[Any, ...], kwargs: dict[str, Any]) -> NestedTensor:
    tensors = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    if dim != 0 or not all(isinstance(t, NestedTensor) for t in tensors):
        raise RuntimeError("cat(): nested tensors are concatenated along dim 0 only, with "
                           "nested tensors")
    return NestedTensor([c for t in tensors for c in t._components])


def _pick(value: Any, k: int) -> Any:
    return value._components[k] if isinstance(value, NestedTensor) else value


def _count(values: Any, name: str) -> int:
    nested = [a for a in values if isinstance(a, NestedTensor)]
    count = len(nested[0]._components)
    if any(len(n._components) != count for n in nested):
        raise RuntimeError(f"{name}(): nested tensors with different numbers of components")
    return count


class _EachComponent(torch.autograd.Function):
    """``func`` per component, differentiable: the backward runs each component's product
    again with grad and takes its vector-Jacobian product; a plain tensor argument (a weight)
    gets the sum of its components' gradients."""

    @staticmethod
    def forward(ctx: Any, func: Any, count: int, *args: Any) -> NestedTensor:
        ctx.func, ctx.count = func, count
        ctx.save_for_backward(*(a for a in args if isinstance(a, torch.Tensor)))
        ctx.args = args
        return NestedTensor([func(*(_pick(a, k) for a in args)) for k in range(count)])

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        args = ctx.args
        wanted = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)
                  and ctx.needs_input_grad[i + 2]]
        per_arg: dict[int, list[Any]] = {i: [] for i in wanted}
        for k in range(ctx.count):
            inputs = [_pick(a, k) for a in args]
            for i in wanted:
                inputs[i] = inputs[i].detach().requires_grad_()
            with torch.enable_grad():
                out = ctx.func(*inputs)
            grads = torch.autograd.grad(out, [inputs[i] for i in wanted], _pick(grad, k),
                                        allow_unused=True)
            for i, g in zip(wanted, grads):
                per_arg[i].append(torch.zeros_like(inputs[i]) if g is None else g)
        result: list[Any] = [None] * len(args)
        for i, parts in per_arg.items():
            if isinstance(args[i], NestedTensor):
                result[i] = NestedTensor(parts)
            else:
                total = parts[0]
                for part in parts[1:]:
                    total = total + part
                result[i] = total
        return (None, None, *result)


def each_component(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> NestedTensor:
    """``func`` applied to component ``k`` of every nested argument, for each ``k`` (recorded
    for autograd as one node)."""
    if kwargs:
        args = (*args, *kwargs.values())  # (the products take their arguments in order)
    return _EachComponent.apply(func, _count(args, func.__name__), *args)


# Functions (by name) that run per component from __torch_function__, and what each runs:
# the products, whose composites would fold the shell's padded batch into a matrix.
FUNCTIONS: dict[str, Any] = {
    "linear": lambda input, weight, bias=None: torch.ops.aten.linear(input, weight, bias),
    "matmul": torch.matmul,
    "__matmul__": torch.matmul,
    "bmm": torch.mm,  # a component of a batch of matrices is one matrix
}


def run(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``func(*args, **kwargs)`` run on every component of the nested operands."""
    op = func._opname
    if op == "cat":
        return _cat(args, kwargs)
    nested = [a for a in (*args, *kwargs.values()) if isinstance(a, NestedTensor)]
    count = len(nested[0]._components)
    if any(len(n._components) != count for n in nested):
        raise RuntimeError(f"{op}(): nested tensors with {count} and "
                           f"{[len(n._components) for n in nested]} components")
    rank = nested[0].dim()
    names = [a.name for a in func._schema.arguments]
    bound = dict(zip(names, args))
    bound.update(kwargs)
    if torch.Tag.reduction in func.tags and bound.get("dim") in (None, [], ()):
        raise RuntimeError(f"{op}(): a reduction over every dim of a nested tensor is not "
                           f"supported; reduce along a dim (keepdim=True) or unbind it")
    for name in _DIM_ARGUMENTS.intersection(bound):
        bound[name] = _shift(bound[name], rank, op)
    for name in _SIZE_ARGUMENTS.intersection(bound):
        bound[name] = _size(bound[name], count, op)

    def component(k: int) -> dict[str, Any]:
        return {n: (v._components[k] if isinstance(v, NestedTensor) else v)
                for n, v in bound.items()}

    positional = names[:len(args)]
    results = []
    with torch._C.DisableTorchFunctionSubclass():
        for k in range(count):
            values = component(k)
            positional_values = [values.pop(n) for n in positional]
            results.append(func(*positional_values, **values))
    if op.endswith("_") and isinstance(args[0], NestedTensor):
        return args[0]  # an in-place op wrote the first operand's components
    if results and isinstance(results[0], (tuple, list)):
        return tuple(NestedTensor(list(parts)) for parts in zip(*results))
    if results and not isinstance(results[0], torch.Tensor):
        return results
    return NestedTensor(results)
