"""The backward engine: topological execution by dependency counts, no recursion.

Starting from the roots' nodes it counts, for every reachable node, how many edges lead into
it; a node runs once all its gradients have arrived (summed into one buffer per output), in
order of decreasing creation sequence among the ready ones. Leaves accumulate into ``.grad``
(or, for ``autograd.grad``, hand their gradient back instead). Without ``retain_graph`` every
node that ran releases its saved tensors.
"""

from __future__ import annotations

import heapq
import sys
from collections.abc import Sequence
from typing import Any

from .._core import config as _config
from .._core.tensor import Tensor
from ._formulas import OUTPUTS as _OUTPUTS, TAKES_NONE as _TAKES_NONE
from ._nodes import edge_of
from .graph import AccumulateGrad, GradientEdge, Node

_callbacks: list[Any] = []
_getrefcount = sys.getrefcount  # (a storage's references: the tensors sharing it, plus one)


class _Task:
    """The backward pass running (innermost last in ``_tasks``): its id and the nodes it
    will run (those it reaches: the roots ``starts`` and the keys of ``deps``; ``needed``:
    None, or the subset that autograd.grad runs)."""

    __slots__ = ("deps", "id", "needed", "starts")

    def __init__(self, task_id: int, starts: Any, deps: Any, needed: Any) -> None:
        self.id = task_id
        self.starts = starts
        self.deps = deps
        self.needed = needed


_tasks: list[_Task] = []
_task_ids = iter(range(1, sys.maxsize))


def current_graph_task_id() -> int:
    """The id of the backward pass running on this call stack, or -1 outside one."""
    return _tasks[-1].id if _tasks else -1


def will_execute(node: Node) -> bool:
    """Whether the running backward pass will run ``node`` (False outside one)."""
    if not _tasks:
        return False
    task = _tasks[-1]
    return ((node in task.deps or node in task.starts)
            and (task.needed is None or node in task.needed or node._is_accumulator))


def queue_callback(fn: Any) -> None:
    """Run ``fn()`` once the current backward pass has finished (data-parallel bucketing)."""
    _callbacks.append(fn)


def _make_grads(outputs: Sequence[Tensor], grads: Sequence[Any]) -> list[Tensor]:
    result = []
    for out, g in zip(outputs, grads):
        if out.__class__ is GradientEdge:  # (no tensor to make a gradient like)
            if not isinstance(g, Tensor):
                raise RuntimeError("a gradient must be given (grad_outputs) for each output "
                                   "given as a GradientEdge")
        elif g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not (out._dtype.is_floating_point or out._dtype.is_complex):
                raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                   f"outputs but got {out._dtype}")
            g = _factories().ones_like(out)
        elif not isinstance(g, Tensor):
            g = _factories().tensor(g, dtype=out._dtype, device=out._device)
        elif g._shape != out._shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {g.shape} and "
                               f"output[0] has a shape of {out.shape}.")
        result.append(g)
    return result


def _factories() -> Any:
    """The op library's factories module (above this layer's import time: read on first use,
    then kept, as an import statement per backward cost a call into the import system)."""
    global _factories_module
    if _factories_module is None:
        from .._aten import factories

        _factories_module = factories
    return _factories_module


_factories_module: Any = None


def run(outputs: Sequence[Tensor], grads: Sequence[Any], retain_graph: bool,
        create_graph: bool, inputs: Sequence[Tensor] | None = None,
        accumulate: bool = True) -> list[Any]:
    """Run backward from ``outputs`` with ``grads``. With ``inputs`` and not ``accumulate``,
    return the gradients reaching them (``autograd.grad``); with ``inputs`` and
    ``accumulate``, accumulate into those leaves only."""
    for out in outputs:
        if out.__class__ is not GradientEdge and not out._requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                               "grad_fn")
    grads = _make_grads(outputs, grads)
    roots = [tuple(o) if o.__class__ is GradientEdge else edge_of(o) for o in outputs]
    # What to capture for autograd.grad: node -> [(input_nr, index in inputs)]. Its keys are
    # the targets; the leaves' (the usual targets) are looked up where the accumulators run,
    # the others' (``inner``) at every node only when there are some.
    capture: dict[Node, list[tuple[int, int]]] = {}
    if inputs is not None:
        for i, t in enumerate(inputs):
            if t.__class__ is GradientEdge:
                node, nr = t
            elif not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            else:
                node, nr = edge_of(t)
            wanted = capture.get(node)
            if wanted is None:
                capture[node] = [(nr, i)]
            else:
                wanted.append((nr, i))
    inner = {n: w for n, w in capture.items() if not n._is_accumulator} if capture else None

    # Count dependencies over the reachable graph (iteratively: graphs can be very deep), and
    # the accumulators reached.
    starts = {n for n, _ in roots if n is not None}
    stack = list(starts)
    deps: dict[Node, int] = {}
    leaves = 0
    while stack:
        for nxt, _ in stack.pop()._next:
            if nxt is None:
                continue
            n = deps.get(nxt)
            if n is None:
                deps[nxt] = 1
                if nxt._is_accumulator:  # (no edges out: not walked)
                    leaves += 1
                elif nxt not in starts:  # (a root reached from another root: pushed)
                    stack.append(nxt)
            else:
                deps[nxt] = n + 1
    # autograd.grad runs only the nodes above a target. Every node leads to some leaf's
    # accumulator (a node is recorded only for inputs that require grad): when the targets
    # are every leaf reached, every node leads to a target and all run, without working out
    # which.
    needed = None
    if inputs is not None and not (leaves == len(capture) and not inner
                                   and all(n in deps for n in capture)):
        needed = _needed(_parents(starts), capture)

    buffers: dict[Node, list[Any]] = {}
    for (node, nr), g in zip(roots, grads):
        if node is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._n_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    # Ready nodes run latest-created first, each with its gradients' buffer (None: none came).
    # Sequence numbers are unique (one counter for every node), so (-seq, node, buffer)
    # entries are ordered without ever comparing nodes.
    ready = [(-n._seq, n, buffers.pop(n, None)) for n in starts if n not in deps]
    heapq.heapify(ready)
    results: list[Any] = [None] * (len(inputs) if inputs is not None else 0)
    anomaly = _config.state.anomaly
    pop, push = heapq.heappop, heapq.heappush
    prev = _config.set_grad_state(create_graph)
    _tasks.append(_Task(next(_task_ids), starts, deps, needed))
    try:
        while ready:
            _, node, buf = pop(ready)
            if buf is None:
                buf = [None] * node._n_outputs
            if node._tensor_prehooks or node._retain:
                buf = _tensor_prehooks(node, buf)
            if node._is_accumulator:
                # (the engine's own references to the last node's gradients, dropped: a leaf's
                # gradient that nothing else holds is then kept without a copy)
                out = g = None
                if capture:
                    wanted = capture.get(node)
                    if wanted is not None:
                        # the leaf's own hooks see its gradient (autograd.grad too) once
                        buf[0] = _leaf_hooked(node, buf[0])
                        _capture(wanted, buf, results)
                        if accumulate:
                            _accumulate(node, buf[0], create_graph, hooked=True)
                elif accumulate:
                    _accumulate(node, buf[0], create_graph)
                continue
            if inner:
                wanted = inner.get(node)
                if wanted is not None:
                    _capture(wanted, buf, results)
            if needed is not None and node not in needed:
                continue
            if node._prehooks:
                for hook in list(node._prehooks.values()):
                    new = hook(tuple(buf))
                    if new is not None:
                        buf = list(new)
            single = len(buf) == 1  # the usual case: no generator, no comprehension
            # (by identity: a list's count or `in` would call each tensor's __eq__)
            if (buf[0] is None) if single else all(g is None for g in buf):
                out = [None] * len(node._next)
            else:
                try:
                    out = node.apply(buf if single else _dense(node, buf))
                except Exception as exc:
                    if anomaly:
                        from . import anomaly_mode

                        anomaly_mode.on_backward_error(node, exc)
                    raise
            if node._hooks:
                for hook in list(node._hooks.values()):
                    new = hook(tuple(out), tuple(buf))
                    if new is not None:
                        out = list(new)
            if anomaly:
                from . import anomaly_mode

                anomaly_mode.on_backward_output(node, out)
            if not retain_graph:
                node.release()
            for (nxt, nr), g in zip(node._next, out):
                if nxt is None:
                    continue
                left = deps[nxt] - 1
                if left:  # more gradients to come: this one waits in the node's buffer
                    deps[nxt] = left
                    if g is not None:
                        nbuf = buffers.get(nxt)
                        if nbuf is None:
                            nbuf = buffers[nxt] = [None] * nxt._n_outputs
                            nbuf[nr] = g
                        elif nbuf[nr] is None:
                            nbuf[nr] = g
                        else:
                            nbuf[nr] = _sum(nbuf[nr], g, create_graph)
                    continue
                # the last one: the node is ready, its buffer goes with it (a node with one
                # incoming edge, the usual case, never has one in `buffers`)
                nbuf = buffers.pop(nxt, None) if buffers else None
                if g is not None:
                    if nbuf is None:
                        if nxt._n_outputs == 1:
                            nbuf = [g]
                        else:
                            nbuf = [None] * nxt._n_outputs
                            nbuf[nr] = g
                    elif nbuf[nr] is None:
                        nbuf[nr] = g
                    else:
                        nbuf[nr] = _sum(nbuf[nr], g, create_graph)
                push(ready, (-nxt._seq, nxt, nbuf))
    finally:
        _config.set_grad_state(prev)
        _tasks.pop()
    while _callbacks:
        _callbacks.pop(0)()
    return results


def _capture(wanted: list[tuple[int, int]], buf: list[Any], results: list[Any]) -> None:
    """Hand a target's gradients to ``autograd.grad``'s results (``wanted``: its
    (output_nr, index in inputs) pairs); an input given twice gets the sum."""
    for nr, slot in wanted:
        g = buf[nr]
        if g is not None:
            results[slot] = g if results[slot] is None else results[slot] + g


# Below this many elements the planned out-of-place sum is the faster one: an in-place add
# takes the dispatcher's general path (measured: ~2 us slower on 8k floats, no faster on 393k);
# above it the in-place sum saves a buffer's worth of memory per extra use.
_SUM_IN_PLACE_MIN = 1 << 17


def _sum(buffered: Tensor, grad: Tensor, create_graph: bool) -> Tensor:
    """``buffered + grad``, added in place into ``buffered`` when nothing else can see it:
    the engine's buffer holds the only reference to the tensor and to its memory (no view, no
    user tensor, no saved value, no other buffer), it has no repeated elements, and no graph
    of the backward is being recorded. As PyTorch's input buffer, this saves a new tensor per
    extra use of a value (a residual stream's gradient, a weight used twice). Small tensors
    are summed out of place (see _SUM_IN_PLACE_MIN)."""
    layout = buffered._interned_layout
    if layout is not None and layout.numel < _SUM_IN_PLACE_MIN:
        return buffered + grad
    if (not create_graph and _getrefcount(buffered) <= 3
            and _getrefcount(buffered._storage) <= 2 and buffered._base is None
            and isinstance(grad, Tensor) and buffered._shape == grad._shape
            and buffered._dtype is grad._dtype and buffered._device == grad._device
            and 0 not in buffered._stride and not buffered._requires_grad):
        return buffered.add_(grad)
    return buffered + grad


def _parents(starts: set[Node]) -> dict[Node, list[Node]]:
    """Each node reachable from ``starts`` -> the nodes with an edge into it."""
    parents: dict[Node, list[Node]] = {}
    stack = list(starts)
    while stack:
        node = stack.pop()
        for nxt, _ in node._next:
            if nxt is None:
                continue
            above = parents.get(nxt)
            if above is None:
                parents[nxt] = [node]
                if nxt not in starts:
                    stack.append(nxt)
            else:
                above.append(node)
    return parents


def _needed(parents: dict[Node, list[Node]], targets: dict[Node, Any]) -> set[Node]:
    """The nodes from which a target is reachable (only they need to run for autograd.grad).
    A target itself runs only when another target lies below it: its gradient is captured
    before it would run, as PyTorch's engine does."""
    needed: set[Node] = set()
    stack = [p for t in targets if t in parents for p in parents[t]]
    while stack:
        node = stack.pop()
        if node in needed:
            continue
        needed.add(node)
        stack.extend(parents.get(node, ()))
    return needed


def _dense(node: Node, buf: list[Any]) -> list[Any]:
    """A multi-output node's gradients for its rule: zeros for a differentiable output that
    received none (rules see dense gradients); None for an output the op does not
    differentiate (a layer norm's mean and rstd: its rule never reads them, and filling them
    cost two tensors per layer norm)."""
    qualname = getattr(node, "_qualname", None)
    if qualname in _TAKES_NONE:
        return buf
    differentiable = _OUTPUTS.get(qualname)
    return [g if g is not None
            else None if differentiable is not None and i not in differentiable
            else _zeros_for(node, i) for i, g in enumerate(buf)]


def _zeros_for(node: Node, output_nr: int) -> Any:
    """Outputs that received no gradient contribute zeros (rules see a dense gradient)."""
    from .._aten import factories as _fac

    res = getattr(node, "_result", None)
    if isinstance(res, tuple):
        res = res[output_nr]
    t = res.unpack(node) if hasattr(res, "unpack") else res
    if isinstance(t, Tensor):
        return _fac.zeros_like(t)
    return None


def _tensor_prehooks(node: Node, buf: list[Any]) -> list[Any]:
    hooks = node._tensor_prehooks
    if hooks:
        for nr, table in hooks.items():
            if nr < len(buf) and buf[nr] is not None:
                for hook in list(table.values()):
                    new = hook(buf[nr])
                    if new is not None:
                        buf[nr] = new
    if node._retain:
        for nr, ref in node._retain.items():
            t = ref()
            if t is not None and nr < len(buf) and buf[nr] is not None:
                g = buf[nr] if _config.is_grad_enabled() else buf[nr].detach()
                t._grad = g.clone() if t._grad is None else t._grad + g
    return buf


def _empty_like(t: Any, dtype: Any) -> Any:
    from .._aten.factories import empty_like

    return empty_like(t, dtype=dtype)


def _leaf_hooked(node: AccumulateGrad, grad: Any) -> Any:
    """``grad`` after the hooks registered on the leaf of ``node`` (each may replace it)."""
    hooks = node._leaf_hooks
    if grad is None or not hooks:
        return grad
    for hook in list(hooks.values()):
        new = hook(grad)
        if new is not None:
            grad = new
    return grad


def _accumulate(node: AccumulateGrad, grad: Any, create_graph: bool,
                hooked: bool = False) -> None:
    var = node._keep  # (AccumulateGrad.variable, without the property's call)
    if var is None:
        var = node._variable()
    if grad is None or var is None:  # no gradient, or a leaf nobody can see any more
        return
    hooks = None if hooked else node._leaf_hooks
    if hooks:
        for hook in list(hooks.values()):
            new = hook(grad)
            if new is not None:
                grad = new
    if var._grad is None:
        if create_graph:
            var._grad = grad
        elif (grad.__class__ is Tensor and _getrefcount(grad) <= 3 and grad._base is None
              and not grad._requires_grad and grad._stride == var._stride):
            # A gradient no one else holds (the engine's buffer had the only reference), in
            # the parameter's layout: kept as it is, as PyTorch steals it, instead of a
            # detached alias of it
            var._grad = grad
        elif (grad._base is not None and grad._stride == var._stride
              and _getrefcount(grad._storage) <= 3 and _getrefcount(grad._base) <= 2):
            # A view in the parameter's layout whose memory nothing else can reach (the
            # transposed product of a linear layer's weight gradient: only its unreachable
            # base shares it): kept as a tensor of its own over that memory, without a copy.
            var._grad = Tensor._make(grad._storage, grad._shape, grad._stride, grad._offset,
                                     grad._dtype, grad._device)
        elif grad.__class__ is not Tensor or grad.is_sparse or var.is_sparse:
            var._grad = grad.detach()  # (a sparse or a subclass's gradient is kept as it is)
        else:
            # A tensor of its own, as PyTorch's: in the parameter's strides (its layout
            # contract: a linear layer's weight gradient arrives transposed, and optimizers'
            # fused kernels expect .grad laid out as the parameter), and a copy of a gradient
            # someone else holds (a hook kept it; `a + b` hands both leaves the same one), so
            # that writing into .grad (zero_grad(set_to_none=False)) changes no other tensor.
            out = _empty_like(var, dtype=grad._dtype)
            out.copy_(grad.detach())
            var._grad = out
    elif create_graph or var._grad._requires_grad:
        var._grad = var._grad + grad
    elif _getrefcount(var._grad._storage) <= 2 and var._grad._base is None:
        # in place, as PyTorch: code holding p.grad sees the sum
        var._grad.add_(grad.detach())
    else:
        # .grad's memory is seen elsewhere (a view of it, a retained graph's saved value)
        var._grad = var._grad + grad.detach()
    post = node._post_hooks
    if post:
        for hook in list(post.values()):
            hook(var)
