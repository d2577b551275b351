"""``torch.autograd.backward`` and ``torch.autograd.grad``: run the engine from given outputs
(``Tensor.backward`` calls :func:`backward` too). Re-exported by :mod:`torch.autograd`, whose
names they keep."""

from __future__ import annotations

from typing import Any

from .._core.tensor import Tensor
from . import _engine
from .graph import GradientEdge


def _tensors(x: Any) -> list[Any]:
    """Tensors (or GradientEdges) as a list: one, or a sequence of them."""
    if isinstance(x, (Tensor, GradientEdge)):
        return [x]
    return list(x)


def _grads(grads: Any, n: int) -> list[Any]:
    if grads is None:
        return [None] * n
    if isinstance(grads, Tensor):
        grads = [grads]
    grads = list(grads)
    if len(grads) != n:
        raise RuntimeError(f"grad_tensors/grad_outputs should be a sequence of length {n}, but "
                           f"got {len(grads)}")
    return grads


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables: Any = None,
             inputs: Any = None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves (or only of
    ``inputs``)."""
    outs = _tensors(tensors)
    if grad_variables is not None:
        grad_tensors = grad_variables
    grads = _grads(grad_tensors, len(outs))
    if retain_graph is None:
        retain_graph = create_graph
    ins = None if inputs is None else _tensors(inputs)
    if ins is not None and not ins:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    _engine.run(outs, grads, retain_graph, create_graph, ins, accumulate=True)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple[Any, ...]:
    """The gradients of ``outputs`` with respect to ``inputs`` (nothing is accumulated)."""
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported")
    outs = _tensors(outputs)
    ins = _tensors(inputs)
    grads = _grads(grad_outputs, len(outs))
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    res = _engine.run(outs, grads, retain_graph, create_graph, ins, accumulate=False)
    out = []
    for t, g in zip(ins, res):
        if g is None:
            if materialize_grads and isinstance(t, Tensor):
                from .._aten import factories as _fac

                g = _fac.zeros_like(t)
            elif not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
        out.append(g)
    return tuple(out)


backward.__module__ = grad.__module__ = "torch.autograd"  # their public home, as in PyTorch


def composite_vjp(fn: Any, leaves: tuple[Any, ...], grad_output: Any) -> tuple[Any, ...]:
    """``fn(*leaves)``'s vector-Jacobian product with ``grad_output``, recorded with grad mode
    on whatever the caller's: the gradient of each leaf (leaves that require grad), None for a
    leaf the result does not depend on. For a backward operator whose kernel differentiates its
    own forward composite (``torch._core.upcalls.composite_vjp``)."""
    from .grad_mode import enable_grad

    with enable_grad():
        return grad(fn(*leaves), leaves, grad_output, allow_unused=True)
