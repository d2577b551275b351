"""The nodes that ops record: one class per operator (``AddBackward0``...), view nodes, and the
node of an op without a formula.

Recording happens at the dispatcher's ``Autograd`` key (:func:`autograd_kernel`): the op runs
below autograd with recording off, then a node remembers the arguments (tensors as
:class:`~torch.autograd.graph.SavedTensor`) and the output, and the outputs get it as
``grad_fn``. The view operators' Autograd kernels record a :class:`ViewBackward` that sends
the view's gradient back to its source.
"""

from __future__ import annotations

import sys
import traceback
import weakref as _weakref
from collections.abc import Callable
from functools import partial as _partial
from typing import Any

from .._aten import shape as _shape
from .._aten.views import VIEW_KINDS
from .._core import (
    config as _config,
    dispatch as _dispatch,
    dtype as _dtype,
    fast as _fast,
    plan as _plan,
)
from .._core.grad_mode import no_grad
from .._core.tensor import Tensor
from . import graph as _graph
from .graph import (
    FREED_SAVED_TENSORS,
    AccumulateGrad,
    Node,
    SavedTensor,
    _seq as _graph_seq,
    save_input as _save_input,
    save_output as _save_output,
    save_outputs as _save_outputs,
)

_new = object.__new__
_tuple_new = tuple.__new__
_state = _config.state
_CAT = _shape.ATEN["cat"]  # (a split's backward: its pieces' gradients as one)


def edge_of(t: Tensor) -> tuple[Node | None, int]:
    """Where a gradient for ``t`` goes: its grad_fn, or its leaf accumulator."""
    if not t._requires_grad:
        return (None, 0)
    fn = t.grad_fn
    if fn is not None:
        return (fn, t.__dict__.get("_output_nr", 0))
    node = getattr(t, "_grad_accumulator", None)
    if node is None:
        node = t._grad_accumulator = AccumulateGrad(t)
    return (node, 0)


def _camel(name: str) -> str:
    # str.title capitalises a letter after a digit too, as PyTorch's node names do
    # (Log1PBackward0, MaxPool2DWithIndicesBackward0)
    return "".join(part.title() for part in name.split("_") if part)


_classes: dict[str, type] = {}


def node_class(op_name: str) -> type:
    """``add`` -> ``AddBackward0`` (one class per op, so ``grad_fn.name()`` reads like PyTorch)."""
    cls = _classes.get(op_name)
    if cls is None:
        cls = _classes[op_name] = type(f"{_camel(op_name)}Backward0", (OpBackward,), {})
        cls.__module__ = "torch.autograd.graph"
    return cls


class _LazyArgs(tuple):
    """The call's arguments; a saved tensor is unpacked (and version-checked) only when the rule
    reads it, so an argument a formula does not need may change afterwards, as in PyTorch."""

    _node: OpBackward  # set by OpBackward.apply, which makes these with _tuple_new

    def __getitem__(self, i: Any) -> Any:
        v = tuple.__getitem__(self, i)
        if v.__class__ is SavedTensor:  # the usual read: one saved tensor
            return v.unpack(self._node)
        if i.__class__ is slice:  # `a, b = ctx.args[:2]`: unpacked here, one pass
            node = self._node
            return tuple([x.unpack(node) if x.__class__ is SavedTensor else
                          x if x.__class__ is not tuple else node._unpack_arg(x) for x in v])
        if v.__class__ is not tuple:  # a number, None, a dtype...: as given
            return v
        return self._node._unpack_arg(v)

    def __iter__(self) -> Any:
        for v in tuple.__iter__(self):
            yield self._node._unpack_arg(v)


class Ctx:
    """What a derivative rule reads: ``args``, ``kwargs``, ``result``, ``needs_input_grad``."""

    __slots__ = ("_needs", "_node", "args", "kwargs")

    @property
    def needs_input_grad(self) -> tuple[Any, ...]:
        """Per positional argument: whether it needs a gradient (a tuple of those for a
        list argument). Worked out on first read: many rules never ask."""
        needs = self._needs
        if needs is None:
            node = self._node
            edges = node._next
            layout = node._layout
            if layout is _PAIR:  # two tensor arguments (the hot path's nodes)
                needs = self._needs = (edges[0][0] is not None, edges[1][0] is not None)
                return needs
            if layout is _ONE:
                needs = self._needs = (edges[0][0] is not None,)
                return needs
            if node._list_meta is None:  # no list argument: a bool per argument
                needs = self._needs = tuple([lay is not None and edges[lay][0] is not None
                                             for lay in layout])
                return needs
            needs = []
            for lay in layout:
                if lay.__class__ is int:
                    needs.append(edges[lay][0] is not None)
                elif lay is None:
                    needs.append(False)
                else:  # a list argument
                    needs.append(tuple([i is not None and edges[i][0] is not None
                                        for i in lay]))
            needs = self._needs = tuple(needs)
        return needs

    @property
    def result(self) -> Any:
        node = self._node
        res = node._result
        if res.__class__ is SavedTensor:  # the usual one output (unary rules read it)
            return res.unpack(node)
        if res.__class__ is tuple:  # several outputs (layer norm's, attention's)
            return tuple([r.unpack(node) if r.__class__ is SavedTensor else node._unpack(r)
                          for r in res])
        return node._unpack(res)


_NO_LISTS = None  # OpBackward._list_meta of a call without list arguments


class OpBackward(Node):
    """The node of one operator call with a derivative rule."""

    # Defaults for the hot path's nodes (binary_node); __init__ sets them all.
    _layout: Any = (0, 1)
    _list_meta: Any = None  # per argument, for calls with list arguments only
    _result: Any = None
    _keep_result = True
    _n_outputs = 1
    _released = False

    def __init__(self, rule: Callable[..., Any] | None, qualname: str, args: tuple[Any, ...],
                 kwargs: dict[str, Any], mutated: tuple[int, ...] = (),
                 saves: tuple[bool, bool] = (True, True)) -> None:
        self._seq = next(_graph_seq)  # (Node.__init__)
        self._rule = rule
        self._qualname = qualname
        keep_args, self._keep_result = saves
        n = len(args)
        if keep_args == "cross":  # keep an argument only while another one requires grad
            wanted = [isinstance(a, Tensor) and a._requires_grad for a in args]
            others = sum(wanted)
            keep = [others - w > 0 for w in wanted]
        elif keep_args.__class__ is tuple and keep_args[0] == "cross":
            # ("cross", i, j): a product's two operands, each kept only for the other's
            # gradient; the other arguments (a bias) are never read
            _, i, j = keep_args
            keep = [False] * n
            if i < n and j < n:
                keep[i] = isinstance(args[j], Tensor) and args[j]._requires_grad
                keep[j] = isinstance(args[i], Tensor) and args[i]._requires_grad
        elif keep_args.__class__ is tuple:  # the positions the rule reads (where: condition)
            keep = [i in keep_args for i in range(n)]
        else:
            keep = [bool(keep_args)] * n
        edges: list[tuple[Node | None, int]] = []
        layout: list[Any] = []  # per positional arg: None, an edge index, or a list of them
        saved: list[Any] = []
        metas: list[Any] = []
        lists = False
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                layout.append(len(edges))
                edges.append(edge_of(a))
                metas.append((a._shape, a._dtype, a._device))
                if keep[i]:
                    # an argument the op writes to is saved as it was before the write: a
                    # clone that keeps its history, so that a double backward reaches it
                    kept = a.clone() if i in mutated else a
                    saved.append(SavedTensor(kept, self, False))
                else:
                    saved.append(None)  # the rule never reads it
            elif isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
                lists = True
                idx = []
                items = []
                for x in a:
                    if isinstance(x, Tensor):
                        idx.append(len(edges))
                        edges.append(edge_of(x))
                        items.append(SavedTensor(x, self, False) if keep[i] else None)
                    else:
                        idx.append(None)
                        items.append(x)
                layout.append(idx)
                saved.append((type(a), items))
                metas.append(None)
            else:
                layout.append(None)
                saved.append(a)
                metas.append(None)
        self._next = tuple(edges)
        self._layout = layout
        self._kept_args = saved
        self._kwargs = kwargs
        self._inputs_meta = metas
        if lists:  # (apply reads it only for list arguments)
            self._list_meta = [[(x._shape, x._dtype, x._device) if isinstance(x, Tensor)
                                else None for x in a] if isinstance(lay, list) else None
                               for a, lay in zip(args, layout)]
        self._result: Any = None
        self._n_outputs = 1
        self._released = False
        if _config.state.anomaly:
            self.metadata["traceback_"] = forward_trace()

    def _save_result(self, result: Any) -> None:
        if isinstance(result, tuple):
            self._n_outputs = len(result)
        if not self._keep_result:
            return
        if isinstance(result, tuple):
            keep = self._keep_result  # True, or the output numbers the rule reads
            self._result = tuple(
                (SavedTensor(r, self, True, nr) if keep is True or nr in keep else None)
                if isinstance(r, Tensor) else r for nr, r in enumerate(result))
        else:
            self._result = SavedTensor(result, self, True) if isinstance(result, Tensor) \
                else result

    def _unpack(self, v: Any) -> Any:
        return v.unpack(self) if isinstance(v, SavedTensor) else v

    def _unpack_arg(self, v: Any) -> Any:
        if isinstance(v, SavedTensor):
            return v.unpack(self)
        if isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], list) and \
                isinstance(v[0], type):  # a saved tensor list: (list or tuple type, items)
            kind, items = v
            return kind(self._unpack(x) for x in items)
        return v

    def apply(self, grads: list[Any]) -> list[Any]:
        if self._released:
            raise RuntimeError(FREED_SAVED_TENSORS)
        rule = self._rule
        if rule is None:
            raise RuntimeError(f"the derivative for '{self._qualname}' is not implemented.")
        ctx = _new(Ctx)
        ctx._node = self
        # needs_input_grad of the usual layouts, worked out here: nearly every rule asks, and
        # the property's call cost more than this
        layout = self._layout
        edges = self._next
        if layout is _PAIR:
            ctx._needs = (edges[0][0] is not None, edges[1][0] is not None)
        elif layout is _ONE:
            ctx._needs = (edges[0][0] is not None,)
        else:
            ctx._needs = None
        args = _tuple_new(_LazyArgs, self._kept_args)
        args._node = self
        ctx.args = args
        ctx.kwargs = self._kwargs
        out = rule(ctx, *grads)
        if out.__class__ is not tuple and not isinstance(out, (tuple, list)):
            out = (out,)
        if layout is _ONE and out:  # one tensor argument: its gradient, as it is if it fits
            g = out[0]
            if g is None:
                return [None]
            meta = self._inputs_meta[0]
            return [g if g.__class__ is Tensor and g._dtype is meta[1] and g._shape == meta[0]
                    else conform(g, meta)]
        if layout is _PAIR and len(out) == 2:  # two tensor arguments: the same, unrolled
            ga, gb = out
            ma, mb = self._inputs_meta
            return [None if ga is None else ga if ga.__class__ is Tensor and ga._dtype is ma[1]
                    and ga._shape == ma[0] else conform(ga, ma),
                    None if gb is None else gb if gb.__class__ is Tensor and gb._dtype is mb[1]
                    and gb._shape == mb[0] else conform(gb, mb)]
        result: list[Any] = [None] * len(edges)
        if self._list_meta is not _NO_LISTS:
            return self._conform_lists(out, result)
        # (zip stops at the shorter: a rule may return fewer gradients than arguments)
        for lay, g, meta in zip(layout, out, self._inputs_meta):
            if lay is None or g is None:
                continue
            # conform's usual answer (the gradient as it is), without the call
            result[lay] = g if (meta is not None and g.__class__ is Tensor
                                and g._dtype is meta[1] and g._shape == meta[0]) \
                else conform(g, meta)
        return result

    def _conform_lists(self, out: Any, result: list[Any]) -> list[Any]:
        """``apply``'s placing of the gradients for a call with list arguments."""
        metas = self._inputs_meta
        n = len(out)
        for i, lay in enumerate(self._layout):
            g = out[i] if i < n else None
            if lay is None or g is None:
                continue
            if lay.__class__ is list:
                for j, (idx, gj) in enumerate(zip(lay, g)):
                    if idx is not None and gj is not None:
                        result[idx] = conform(gj, self._list_meta[i][j])
            else:
                result[lay] = conform(g, metas[i])
        return result

    def release(self) -> None:
        # The node is the only holder of its saved tensors (a rule reads them unpacked), so
        # dropping its lists frees them, without a pass over each; apply raises from now on.
        self._released = True
        self._kept_args = ()
        self._result = None

    # -- what the node saved, by name (PyTorch's ``grad_fn._saved_self``) ----------------------

    def _kept_by_name(self) -> dict[str, Any]:
        """The arguments and outputs the node keeps, by the op schema's argument names
        (``result``, or ``result0``... for several outputs), as stored: SavedTensors, saved
        tensor lists, or the values as given. A tensor argument the rule never reads is not
        kept, so it has no name here, as in PyTorch."""
        op = _dispatch.get(self._qualname) if self._qualname else None
        names = [a.name for a in op.schema.arguments] if op is not None else []
        layout = self._layout
        kept: dict[str, Any] = {}
        for i, value in enumerate(self._kept_args):
            lay = layout[i] if i < len(layout) else None
            if value is None and lay.__class__ is int:
                continue  # a tensor argument the rule never reads
            kept[names[i] if i < len(names) else f"arg{i}"] = value
        kept.update(self._kwargs)
        result = self._result
        if result.__class__ is tuple:
            for nr, r in enumerate(result):
                if r is not None:
                    kept[f"result{nr}"] = r
        elif result is not None:
            kept["result"] = result
        return kept

    def __getattr__(self, name: str) -> Any:
        # Only for names the node lacks: ``_saved_<arg>`` (the value, tensors unpacked, lists
        # as tuples) and ``_raw_saved_<arg>`` (the SavedTensor, for register_hooks)
        raw = name.startswith("_raw_saved_")
        if not (raw or name.startswith("_saved_")):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if self.__dict__.get("_released"):
            raise RuntimeError(FREED_SAVED_TENSORS)
        kept = self._kept_by_name()
        key = name[len("_raw_saved_" if raw else "_saved_"):]
        if key not in kept:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        value = kept[key]
        if raw:
            if value.__class__ is tuple and len(value) == 2 and isinstance(value[0], type):
                return [x for x in value[1] if x.__class__ is SavedTensor]  # a tensor list
            if value.__class__ is not SavedTensor:
                raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                                     f"'{name}' ('{key}' is not a saved tensor)")
            return value
        if value.__class__ is SavedTensor:
            return value.unpack(self)
        if value.__class__ is tuple and len(value) == 2 and isinstance(value[0], type):
            return tuple(self._unpack(x) for x in value[1])  # a saved tensor list
        return tuple(value) if value.__class__ is list else value

    def __dir__(self) -> list[str]:
        names = list(super().__dir__())
        if not self._released:
            for key, value in self._kept_by_name().items():
                names.append(f"_saved_{key}")
                if value.__class__ is SavedTensor:
                    names.append(f"_raw_saved_{key}")
        return sorted(names)


# Where the machinery that records a node lives: anomaly mode's forward trace leaves these
# frames out (PyTorch's trace shows the program's frames; its dispatcher is native code).
_TORCH_DIR = __file__.rsplit("/autograd/", 1)[0] + "/"
_MACHINERY = tuple(_TORCH_DIR + part for part in (
    "_core/", "_aten/", "_fused/", "_refs/", "autograd/_", "_torch_function.py",
    "_functions.py", "_tensor_methods.py"))


def forward_trace() -> str:
    """The formatted stack of the call recording a node (anomaly mode), without the frames of
    the dispatcher and autograd machinery in between, nor those of backend packages."""
    frames = [f for f in traceback.extract_stack()[:-1]
              if not f.filename.startswith(_MACHINERY) and "/plait_backend_" not in f.filename]
    return "".join(traceback.format_list(frames))


def _edge(t: Tensor) -> tuple[Node | None, int]:
    """``edge_of`` for the hot path: a leaf's edge tuple is made once and kept on its
    accumulator."""
    fn = t.grad_fn
    if fn is not None:
        # a single-output node's outputs are all output 0: no __dict__ read (or creation)
        if getattr(fn, "_n_outputs", 0) == 1:
            return (fn, 0)
        return (fn, t.__dict__.get("_output_nr", 0))
    if not t._requires_grad:
        return _NO_EDGE
    acc = getattr(t, "_grad_accumulator", None)
    if acc is None:
        acc = t._grad_accumulator = AccumulateGrad(t)
    edge = acc._edge
    if edge is None:
        edge = acc._edge = (acc, 0)
    return edge


_NO_EDGE = (None, 0)


def hot_info(kernel: Callable[..., Any], kwargs: dict[str, Any], metas: tuple[Any, ...]
             ) -> tuple[Any, ...] | None:
    """What :func:`binary_node` needs to record the node of ``kernel`` (an Autograd kernel of
    :func:`autograd_kernel`) for two inputs of one layout (``metas``: their (shape, dtype,
    device) pair) called with ``kwargs``; None when ``kernel`` is not core's own."""
    node = getattr(kernel, "_plait_node", None)
    if node is None:
        return None
    cls, rule, qualname, (keep_args, keep_result) = node
    return (cls, rule, qualname, kwargs, metas, keep_args, keep_result)


def binary_node(info: tuple[Any, ...], a: Tensor, b: Tensor, out: Tensor) -> None:
    """Record ``out = op(a, b)`` for the hot path (torch._core.fast): the node the Autograd kernel
    of ``op`` would record for this call (same class, rule, edges, saved tensors), built
    without the generic argument walk. ``info`` comes from :func:`hot_info` (the hot path
    takes inputs of one layout only).

    This runs for every ``a + b`` with grad, so it is written flat: the node's class holds
    every default (``OpBackward``, ``Node``) and only what differs per call is set; the edges
    of the two usual cases (a leaf's cached edge, output 0 of a single-output node) are
    inlined."""
    cls, rule, qualname, kwargs, metas, keep_args, keep_result = info
    node = _new(cls)
    node._seq = next(_graph_seq)
    node._rule = rule
    node._qualname = qualname
    node._kwargs = kwargs
    node._inputs_meta = metas
    fn = a.grad_fn
    if fn is not None:
        ea = (fn, 0) if fn._n_outputs == 1 else _edge(a)
    elif a._requires_grad:
        acc = getattr(a, "_grad_accumulator", None)
        ea = acc._edge if acc is not None else None
        if ea is None:
            ea = _edge(a)
    else:
        ea = _NO_EDGE
    fn = b.grad_fn
    if fn is not None:
        eb = (fn, 0) if fn._n_outputs == 1 else _edge(b)
    elif b._requires_grad:
        acc = getattr(b, "_grad_accumulator", None)
        eb = acc._edge if acc is not None else None
        if eb is None:
            eb = _edge(b)
    else:
        eb = _NO_EDGE
    node._next = (ea, eb)
    if keep_args is True:
        node._kept_args = [_save_input(a), _save_input(b)]
    elif not keep_args:
        node._kept_args = _NO_ARGS
    elif keep_args.__class__ is tuple and keep_args[0] != "cross":  # the positions it reads
        node._kept_args = [_save_input(a) if 0 in keep_args else None,
                           _save_input(b) if 1 in keep_args else None]
    else:  # "cross" (or the pair (0, 1)): each is read only for the other's gradient
        node._kept_args = [_save_input(a) if eb[0] is not None else None,
                            _save_input(b) if ea[0] is not None else None]
    if _state.anomaly:
        node.metadata["traceback_"] = forward_trace()
    out.grad_fn = node
    out._requires_grad = True
    if keep_result:  # (only the generic kernel's _save_result reads _keep_result)
        node._result = _save_output(out, node)


_NO_ARGS = (None, None)
_PAIR = OpBackward._layout  # the layout of a call of two tensors: edges 0 and 1
_ONE = (0,)  # of a call of one tensor
_LAYOUTS = {_PAIR: _PAIR, _ONE: _ONE}


def _argument_recipe(node: Node, args: tuple[Any, ...]
                     ) -> tuple[tuple[Any, ...], tuple[bool, ...], tuple[int, ...]] | None:
    """The argument part of a recipe: the node's layout (edge per argument), which arguments
    it keeps and the positions of the tensors; None for a node that is not core's own rule's
    (another class, hooks or metadata), or that has list arguments or keeps a clone."""
    if node.__class__.__bases__ != (OpBackward,) or node._metadata or \
            node._list_meta is not None:
        return None
    layout = tuple(node._layout)
    if len(layout) != len(args) or any(i.__class__ is list for i in layout):
        return None
    saved = node._kept_args
    keep = tuple(isinstance(s, SavedTensor) for s in saved)
    for i, a in enumerate(args):
        # a kept tensor is the argument itself (no clone: the op writes nothing); a number
        # is kept as given
        if (keep[i] and saved[i]._tensor is not a) or (layout[i] is None and saved[i] is not a):
            return None
    layout = _LAYOUTS.get(layout, layout)  # (the objects needs_input_grad tests for)
    return layout, keep, tuple(i for i, lay in enumerate(layout) if lay is not None)


def plan_recipe(node: Node, args: tuple[Any, ...], result: Tensor) -> tuple[Any, ...] | None:
    """What :func:`plan_node` needs to record, for another call of the same signature (same
    layouts, same tensors requiring grad, same other arguments: ``torch._core.plan``), the node
    that the Autograd kernel recorded as ``result.grad_fn`` for ``args``; None for a node of
    another shape (list arguments, several outputs)."""
    if node._n_outputs != 1 or result.__dict__.get("_output_nr", 0) != 0:
        return None
    parts = _argument_recipe(node, args)
    if parts is None:
        return None
    layout, keep, tensors = parts
    return (node.__class__, node._rule, node._qualname, node._kwargs, node._inputs_meta,
            layout, keep, isinstance(node._result, SavedTensor), tensors)


def plan_node(recipe: tuple[Any, ...], args: tuple[Any, ...], out: Tensor) -> OpBackward:
    """Record ``out = op(*args)`` from a :func:`plan_recipe`: the node the Autograd kernel
    would record (same class, rule, edges, saved tensors), without its argument walk; returns
    it."""
    cls, rule, qualname, kwargs, metas, layout, keep, keep_result, tensors = recipe
    node = _new(cls)
    node._seq = next(_graph_seq)
    node._rule = rule
    node._qualname = qualname
    node._kwargs = kwargs
    node._inputs_meta = metas
    node._layout = layout
    # the saved arguments: numbers as given, each tensor (at the positions `tensors`) saved
    # or not as the rule reads it; one edge per tensor
    saved = list(args)
    edges = []
    hooks = _graph._hooks_active  # (none open: the saves below are written out)
    for i in tensors:
        a = args[i]
        # _edge's usual answers without its call (as binary_node): output 0 of a
        # single-output node, a leaf's cached edge, a tensor that needs no gradient
        fn = a.grad_fn
        if fn is not None:
            edges.append((fn, 0) if fn._n_outputs == 1 else _edge(a))
        elif a._requires_grad:
            acc = getattr(a, "_grad_accumulator", None)
            edge = acc._edge if acc is not None else None
            edges.append(edge if edge is not None else _edge(a))
        else:
            edges.append(_NO_EDGE)
        if not keep[i]:
            saved[i] = None  # the rule never reads it
        elif hooks or getattr(a, "_inference", False):
            saved[i] = _save_input(a)
        else:  # graph.save_input, written out (one frame per kept tensor)
            kept = _new(SavedTensor)
            kept._version = a._vc[0]
            kept._is_output = False
            kept._node = None
            kept._unpack = None
            kept._parts = None
            kept._tensor = a
            saved[i] = kept
    node._next = tuple(edges)
    node._kept_args = saved
    out.grad_fn = node
    out._requires_grad = True
    if keep_result:
        if hooks or out.__class__ is not Tensor or getattr(out, "_inference", False):
            node._result = _save_output(out, node)
        else:  # graph.save_output of a plain tensor, written out (as record_one)
            kept = _new(SavedTensor)
            kept._version = out._vc[0]
            kept._is_output = True
            kept._output_nr = 0
            kept._node = _weakref.ref(node)
            kept._unpack = None
            kept._tensor = None
            kept._parts = (out._storage, out._shape, out._stride, out._offset, out._dtype,
                           out._device, out._vc, out._base)
            kept._layout = out._interned_layout
            kept._geometry = out._geometry
            node._result = kept
    return node


def plan_recorder(recipe: tuple[Any, ...]) -> Callable[[tuple[Any, ...], Tensor], OpBackward]:
    """The function ``record(args, out)`` that records a :func:`plan_recipe`'s node for one
    call, as :func:`plan_node` does: for the usual recipes (one or two tensor arguments) a
    closure with the recipe's fields bound and the edge and saved-tensor steps written out
    (a planned call with grad pays for these; no loop, no unpacking, no calls below it);
    :func:`plan_node` itself for the others."""
    cls, rule, qualname, kwargs, metas, layout, keep, keep_result, tensors = recipe
    if len(tensors) not in (1, 2):
        def record_any(args: tuple[Any, ...], out: Tensor) -> OpBackward:
            return plan_node(recipe, args, out)
        return record_any
    n = len(layout)
    i = tensors[0]
    j = tensors[-1]
    keep_i, keep_j = keep[i], keep[j]
    weakref = _weakref.ref
    graph = _graph

    if len(tensors) == 1:  # (one tensor, maybe numbers: x.sum(0), x * 2.0)
        def record_one(args: tuple[Any, ...], out: Tensor) -> OpBackward:
            a = args[i]
            node = _new(cls)
            node._seq = next(_graph_seq)
            node._rule = rule
            node._qualname = qualname
            node._kwargs = kwargs
            node._inputs_meta = metas
            node._layout = layout
            # edge_of's usual answers, written out (as binary_node)
            fn = a.grad_fn
            if fn is not None:
                node._next = ((fn, 0) if fn._n_outputs == 1 else _edge(a),)
            else:  # (a leaf: the signature's only tensor requires grad)
                acc = getattr(a, "_grad_accumulator", None)
                e = acc._edge if acc is not None else None
                node._next = (e if e is not None else _edge(a),)
            if n == 1:
                node._kept_args = [_save_input(a) if keep_i else None]
            else:
                saved = list(args)  # numbers are kept as given
                saved[i] = _save_input(a) if keep_i else None
                node._kept_args = saved
            out.grad_fn = node
            out._requires_grad = True
            if keep_result:
                if graph._hooks_active:
                    node._result = _save_output(out, node)
                else:  # graph._saved_output, written out (a plan's output: a plain tensor)
                    saved = _new(SavedTensor)
                    saved._version = out._vc[0]
                    saved._is_output = True
                    saved._output_nr = 0
                    saved._node = weakref(node)
                    saved._unpack = None
                    saved._tensor = None
                    saved._parts = (out._storage, out._shape, out._stride, out._offset,
                                    out._dtype, out._device, out._vc, out._base)
                    saved._layout = out._interned_layout
                    saved._geometry = out._geometry
                    node._result = saved
            return node
        return record_one

    pair = n == 2  # (two tensors at distinct positions: i, j = 0, 1)

    def record_two(args: tuple[Any, ...], out: Tensor) -> OpBackward:
        node = _new(cls)
        node._seq = next(_graph_seq)
        node._rule = rule
        node._qualname = qualname
        node._kwargs = kwargs
        node._inputs_meta = metas
        node._layout = layout
        a = args[i]
        b = args[j]
        fn = a.grad_fn
        if fn is not None:
            ea = (fn, 0) if fn._n_outputs == 1 else _edge(a)
        elif a._requires_grad:
            acc = getattr(a, "_grad_accumulator", None)
            ea = acc._edge if acc is not None else None
            if ea is None:
                ea = _edge(a)
        else:
            ea = _NO_EDGE
        fn = b.grad_fn
        if fn is not None:
            eb = (fn, 0) if fn._n_outputs == 1 else _edge(b)
        elif b._requires_grad:
            acc = getattr(b, "_grad_accumulator", None)
            eb = acc._edge if acc is not None else None
            if eb is None:
                eb = _edge(b)
        else:
            eb = _NO_EDGE
        node._next = (ea, eb)
        if pair:  # (the usual case: two tensors, nothing else)
            node._kept_args = [_save_input(a) if keep_i else None,
                               _save_input(b) if keep_j else None]
        else:
            saved = list(args)  # numbers are kept as given
            saved[i] = _save_input(a) if keep_i else None
            saved[j] = _save_input(b) if keep_j else None
            node._kept_args = saved
        out.grad_fn = node
        out._requires_grad = True
        if keep_result:
            node._result = _save_output(out, node)
        return node
    return record_two


def kernel_recipe(node: Node, args: tuple[Any, ...], result: Any) -> tuple[Any, ...] | None:
    """What :func:`kernel_node` needs to record, for another call of the same signature, the
    node that the Autograd kernel recorded around ``result`` (one tensor, or a tuple of
    tensors and Nones); None for a node of another shape (list arguments, a cloned
    argument, hooks or metadata)."""
    parts = _argument_recipe(node, args)
    if parts is None:
        return None
    layout, keep, tensors = parts
    outs = result if result.__class__ is tuple else (result,)
    marked = tuple(nr for nr, o in enumerate(outs) if o is not None and o.grad_fn is node)
    if any(outs[nr].__dict__.get("_output_nr", 0) != nr for nr in marked):
        return None
    kept = node._result
    if kept is not None and (result.__class__ is tuple) != (kept.__class__ is tuple):
        return None
    # the node itself as plan_node builds it (its outputs are marked and kept here)
    head = (node.__class__, node._rule, node._qualname, node._kwargs, node._inputs_meta,
            layout, keep, False, tensors)
    # what kernel_node saves of the outputs: nothing, all, or the output numbers the rule reads
    keep = False if kept is None else node._keep_result
    return head, marked, node._n_outputs, keep


def kernel_recorder(recipe: tuple[Any, ...], result: Any
                    ) -> Callable[[tuple[Any, ...], Any], Any]:
    """The function ``record(args, result)`` that records a :func:`kernel_recipe`'s node on
    the next calls of the signature whose ``result`` the recipe was made from: when the
    result is one tensor, the node's one output, :func:`plan_recorder`'s (the node as
    :func:`plan_node` builds it, its usual cases written out: one frame, no loop), which
    marks and keeps that output as :func:`kernel_node` would; else :func:`kernel_node` with
    the recipe bound."""
    head, marked, n_outputs, keep_result = recipe
    if (result.__class__ is not Tensor or marked != (0,) or n_outputs != 1
            or (keep_result is not True and keep_result is not False)):
        return _partial(kernel_node, recipe)
    return plan_recorder((*head[:7], keep_result, head[8]))


def kernel_node(recipe: tuple[Any, ...], args: tuple[Any, ...], result: Any) -> None:
    """Record the node of ``result = op(*args)`` from a :func:`kernel_recipe` (what the
    Autograd kernel records: class, rule, edges, saved arguments and outputs, the outputs'
    ``grad_fn``), without its argument walk."""
    head, marked, n_outputs, keep_result = recipe
    if not marked:
        return  # no output is differentiable: nothing would reach the node
    several = result.__class__ is tuple
    outs = result if several else (result,)
    node = plan_node(head, args, outs[marked[0]])  # (marks that output)
    if n_outputs != 1:  # (the class's default)
        node._n_outputs = n_outputs
    for nr in marked:
        out = outs[nr]
        out.grad_fn = node
        out._requires_grad = True
        # 0 is every tensor's output number unless its __dict__ says otherwise: a fresh
        # output 0 gets no __dict__ made for it
        if nr or getattr(out, "_output_nr", 0):
            out.__dict__["_output_nr"] = nr
    if keep_result:
        node._result = (_save_outputs(result, node, keep_result) if several
                        else _save_output(result, node))


def conform(grad: Tensor, meta: Any) -> Tensor:
    """``grad`` summed down to an input's shape (undoing broadcasting), in its dtype."""
    if meta is None or not isinstance(grad, Tensor):
        return grad
    shape, dtype, _device = meta
    if grad._shape != shape:
        grad = sum_to_size(grad, shape)
    if grad._dtype is not dtype and (dtype.is_floating_point or dtype.is_complex):
        grad = grad.to(dtype)
    return grad


def sum_to_size(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum ``grad`` over the dims broadcasting added to ``shape``: the leading dims, and the
    dims where ``shape`` has 1 and ``grad`` does not."""
    gshape = grad._shape
    lead = len(gshape) - len(shape)
    if lead < 0:  # fewer dims than the input: nothing was broadcast away, only added
        return grad.reshape(shape)
    dims = list(range(lead))
    inner = False
    for i, (n, m) in enumerate(zip(shape, gshape[lead:] if lead else gshape)):
        if n == 1 and m != 1:
            dims.append(lead + i)
            inner = True
    if inner:  # size-1 dims kept by the sum; the leading ones then go by a view
        grad = grad.sum(dims, keepdim=True)
        return grad.reshape(shape) if lead else grad
    # only leading dims: the sum's shape is ``shape`` already
    return grad.sum(dims) if lead else grad


_implicit: dict[_dispatch.Operator, int] = {}  # op -> the dispatcher epoch it had no kernel


def autograd_kernel(op: _dispatch.Operator) -> Callable[..., Any] | None:
    """The Autograd kernel of ``op`` (registered on first need), or None when the op
    differentiates through its ``CompositeImplicitAutograd`` decomposition."""
    kernels = op.kernels
    if op.namespace != "aten" or _implicit.get(op) == _dispatch.epoch:
        return None
    special = _special_kernel(op)
    if special is not None:
        special.__name__ = f"autograd_{op.name}"
        op.register(_dispatch.AUTOGRAD, special)
        return special
    from . import _formulas

    # an in-place form made from an out-of-place operator (torch._aten.inplace_operators)
    # differentiates by that operator's rule, as PyTorch's add_ by add's formula
    rule_of = getattr(op, "out_of_place", None) or op
    rule = _formulas.load().get(rule_of.qualname)
    explicit = any(k != _dispatch.COMPOSITE_IMPLICIT and k not in _dispatch.FUNCTIONALITY_KEYS
                   for k in kernels)
    if not explicit and rule is None:
        # differentiated through its decomposition; remembered until the next registration
        # (the dispatcher asks again on every call with grad)
        _implicit[op] = _dispatch.epoch
        return None
    # A composite with a formula uses it: dedicated formulas are faster or more stable.
    cls = node_class(rule_of.name.partition(".")[0])
    mutated = tuple(i for i in op.schema.mutated if i == 0)  # in-place ops write `self`
    # other arguments the op fills (rrelu_with_noise's noise): the rule reads what was written
    filled = tuple(i for i in op.schema.mutated if i != 0)
    saves = _formulas.SAVES.get(rule_of.qualname, (True, True))
    differentiable = _formulas.OUTPUTS.get(rule_of.qualname)  # None: every floating output

    def differentiable_output(outs: tuple[Any, ...]) -> bool:
        return any(isinstance(out, Tensor) and (out._dtype.is_floating_point
                                                or out._dtype.is_complex)
                   and (differentiable is None or nr in differentiable)
                   for nr, out in enumerate(outs))

    def kernel(*args: Any, **kwargs: Any) -> Any:
        target = args[0] if mutated and args and isinstance(args[0], Tensor) else None
        if target is not None:
            from . import _inplace

            _inplace.before_write(target, None)
        writes = mutated or filled
        # The node captures edges and saved inputs before an op that writes its arguments
        # runs; an op that writes none runs first, and records a node only when an output
        # can carry a gradient (a comparison saves nothing: saved-tensor hooks, which
        # checkpointing counts, see the same calls as on the planned path).
        node = cls(rule, op.qualname, args, kwargs, mutated, saves) if writes else None
        prev = _config.set_grad_state(False)
        try:
            result = _dispatch.redispatch_below_autograd(op, *args, **kwargs)
        finally:
            _config.set_grad_state(prev)
        outs = result if isinstance(result, tuple) else (result,)
        if node is None:
            if not differentiable_output(outs):
                return result
            node = cls(rule, op.qualname, args, kwargs, mutated, saves)
        for nr, out in enumerate(outs):
            if isinstance(out, Tensor) and (out._dtype.is_floating_point or out._dtype.is_complex):
                if out is target and target._base is not None:
                    continue  # a view written in place: its base is rebased below
                if differentiable is not None and nr not in differentiable:
                    continue
                out.grad_fn = node
                out._requires_grad = True
                out.__dict__["_output_nr"] = nr
        node._save_result(result)
        for i in filled:
            saved = node._kept_args[i] if i < len(node._kept_args) else None
            if isinstance(saved, SavedTensor) and isinstance(args[i], Tensor):
                saved._version = args[i]._vc[0]  # saved as filled, not as it was before
        if target is not None and target._base is not None:
            alias = target.detach()  # the written values, as the output of `node`
            alias.grad_fn = node
            alias._requires_grad = True
            alias.__dict__["_output_nr"] = 0
            _inplace.after_write(target, alias)
        return result

    kernel.__name__ = f"autograd_{op.name}"
    kernel._plait_node = (cls, rule, op.qualname, saves)  # what binary_node records
    op.register(_dispatch.AUTOGRAD, kernel)
    return kernel


class NotImplementedBackward(Node):
    """The node of an op PyTorch does not differentiate: its outputs require grad (the input
    did), and a backward through them raises, as PyTorch's does."""

    def __init__(self, error: BaseException, inputs: tuple[Tensor, ...]) -> None:
        super().__init__()
        self._next = tuple(edge_of(t) for t in inputs)
        self._error = error

    def name(self) -> str:
        return "NotImplemented"

    def apply(self, grads: list[Any]) -> list[Any]:
        raise type(self._error)(*self._error.args)


NotImplementedBackward.__name__ = NotImplementedBackward.__qualname__ = "NotImplemented"


def not_differentiable(result: Any, error: BaseException, *inputs: Tensor) -> Any:
    """Mark the floating outputs of a non-differentiable op computed from ``inputs`` (when one
    requires grad and grad mode is on) so that a backward through them raises ``error`` (the
    error PyTorch raises for that op)."""
    if not any(isinstance(t, Tensor) and t._requires_grad for t in inputs):
        return result
    if _config.state.no_grad_active and not _config.is_grad_enabled():
        return result
    node = NotImplementedBackward(error, tuple(t for t in inputs if isinstance(t, Tensor)))
    outputs = result if isinstance(result, tuple) else (result,)
    node._n_outputs = len(outputs)  # a gradient may reach any of them before the node raises
    for nr, out in enumerate(outputs):
        if isinstance(out, Tensor) and out._dtype.is_floating_point:
            out.grad_fn = node
            out._requires_grad = True
            out.__dict__["_output_nr"] = nr
    return result


class ViewBackward(Node):
    """The node of a metadata view: the gradient of the view goes back into a zero gradient
    of the source through the same view (``replay``), or through ``backward`` directly."""

    _n_outputs = 1  # (what the hot path's edge reads: its output is output 0)

    def __init__(self, source: Tensor, name: str,
                 backward: Callable[[Tensor], Tensor]) -> None:
        super().__init__()
        self._next = (edge_of(source),)
        self._name = name
        self._backward = backward

    def name(self) -> str:
        return self._name

    def apply(self, grads: list[Any]) -> list[Any]:
        return [self._backward(grads[0])]


_VIEW_NAMES = {"view": "ViewBackward0", "_unsafe_view": "UnsafeViewBackward0",
               "permute": "PermuteBackward0", "transpose": "TransposeBackward0",
               "t": "TBackward0", "expand": "ExpandBackward0", "select": "SelectBackward0",
               "slice": "SliceBackward0", "squeeze": "SqueezeBackward0",
               "unsqueeze": "UnsqueezeBackward0", "diagonal": "DiagonalBackward0",
               "unfold": "UnfoldBackward0", "as_strided": "AsStridedBackward0",
               "alias": "AliasBackward0", "split": "SplitBackward0",
               "split_with_sizes": "SplitWithSizesBackward0", "unbind": "UnbindBackward0"}



def _named(base: type, name: str) -> type:
    """A subclass of ``base`` called ``name`` (``ViewBackward0``...), so that
    ``type(grad_fn).__name__`` reads as PyTorch's, which tools print (graph visualisers)."""
    cls = type(name, (base,), {"_name": name})
    cls.__module__ = "torch.autograd.graph"
    return cls


# The view operators (torch._aten.views) -> how their gradient goes back (a kind of
# record_view). Their Autograd kernels record a ViewBackward node per output (one
# SplitBackward for the pieces of split and unbind).
VIEW_OPS = VIEW_KINDS  # the op library's table: view operator -> its backward's kind
# Operators whose outputs carry no gradient (PyTorch's output_differentiability: False): their
# Autograd kernel only passes the call down.
NOT_DIFFERENTIABLE = frozenset({"aten::detach", "aten::view.dtype",
                                "aten::_local_scalar_dense"})


def _view_kernel(op: _dispatch.Operator, kind: str) -> Callable[..., Any]:
    """The Autograd kernel of view operator ``op``: run it, then record its backward."""
    redispatch = _dispatch.redispatch_below_autograd

    def kernel(*args: Any, **kwargs: Any) -> Any:
        out = redispatch(op, *args, **kwargs)
        if kwargs:
            args = tuple(op.schema.bind(args, kwargs))
        source = args[0]
        if out.__class__ is list:  # split, unbind: one node, each piece one of its outputs
            record_pieces(source, out, kind, args[2 if kind != "unbind" else 1:])
        else:
            record_view(source, out, kind, args[1:])
        return out

    kernel._plait_view = kind  # what torch._core.plan replays for a call of this view
    return kernel


def _passthrough_kernel(op: _dispatch.Operator) -> Callable[..., Any]:
    redispatch = _dispatch.redispatch_below_autograd

    def kernel(*args: Any, **kwargs: Any) -> Any:
        return redispatch(op, *args, **kwargs)

    return kernel


def _copy_kernel(op: _dispatch.Operator) -> Callable[..., Any]:
    """The Autograd kernel of ``aten::copy_``: the write's history (torch.autograd._inplace)."""
    from . import _inplace

    redispatch = _dispatch.redispatch_below_autograd

    def kernel(dst: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
        if src._shape != dst._shape:
            src = src.expand(dst._shape)  # recorded: the gradient sums back to src's shape
        # Only floating and complex tensors carry gradients: a copy into an integer or bool
        # tensor is not recorded, so the result does not require grad (as in PyTorch).
        recorded = (dst._dtype.is_floating_point or dst._dtype.is_complex) and \
            _inplace.tracking(dst, src)
        if recorded:
            _inplace.before_write(dst, src)
        redispatch(op, dst, src, non_blocking)
        if recorded:
            _inplace.after_write(dst, src if src._requires_grad else None)
        return dst

    return kernel


def _special_kernel(op: _dispatch.Operator) -> Callable[..., Any] | None:
    """The Autograd kernel of an operator autograd treats itself (views, copy_, the
    non-differentiable ones), or None."""
    kind = VIEW_OPS.get(op.qualname)
    if kind is not None:
        return _view_kernel(op, kind)
    if op.qualname in NOT_DIFFERENTIABLE:
        return _passthrough_kernel(op)
    if op.qualname == "aten::copy_":
        return _copy_kernel(op)
    return None


class SplitBackward(Node):
    """The node of ``split``/``split_with_sizes``/``unbind`` (and ``chunk``, a split): one node
    whose outputs are the pieces, as in PyTorch, so that the pieces' gradients go back as one
    ``cat`` (or ``stack``) into the source instead of one zero-padded copy per piece."""

    def __init__(self, source: Tensor, pieces: list[Tensor], dim: int, stacked: bool,
                 name: str) -> None:
        self._seq = next(_graph_seq)  # (Node.__init__, without the call)
        self._next = (_edge(source),)
        self._n_outputs = len(pieces)
        self._shapes = [p._shape for p in pieces]
        self._dim = dim
        self._stacked = stacked
        self._name = name

    def name(self) -> str:
        return self._name

    def apply(self, grads: list[Any]) -> list[Any]:
        parts = grads
        for g in grads:
            if g is None:  # a piece that received no gradient contributes zeros
                parts = self._with_zeros(grads)
                break
        if self._stacked:
            return [_shape.stack(parts, self._dim)]
        return [_CAT(parts, self._dim)]

    def _with_zeros(self, grads: list[Any]) -> list[Any]:
        from .._aten.factories import zeros

        like = next(g for g in grads if g is not None)
        return [g if g is not None else zeros(shape, dtype=like._dtype, device=like._device)
                for g, shape in zip(grads, self._shapes)]


# view kind -> its node's class (one per PyTorch name; as_strided's for any other kind)
_VIEW_CLASSES = {kind: _named(SplitBackward if kind in ("split", "split_with_sizes", "unbind")
                              else ViewBackward, name) for kind, name in _VIEW_NAMES.items()}
_AS_STRIDED_VIEW = _VIEW_CLASSES["as_strided"]


def record_pieces(source: Tensor, pieces: list[Tensor], kind: str,
                  dim_args: tuple[Any, ...]) -> None:
    """Attach one :class:`SplitBackward` to the ``pieces`` of ``source`` made by the split-like
    view ``kind`` (``dim_args``: the op's arguments after its sizes, the dim when given)."""
    if not pieces:
        return
    n = len(source._shape)
    dim = dim_args[0] if dim_args else 0
    dim = dim % n if n else 0
    cls = _VIEW_CLASSES.get(kind, _VIEW_CLASSES["split"])
    node = cls(source, pieces, dim, kind == "unbind", cls._name)
    for nr, piece in enumerate(pieces):
        piece.grad_fn = node
        piece._requires_grad = True
        piece.__dict__["_output_nr"] = nr


# Views whose gradient goes back by a reshape to the source's shape.
_RESHAPE_KINDS = frozenset(("view", "_unsafe_view", "squeeze", "unsqueeze", "alias"))


# The view kinds whose backward reads only the source's shape and the view op's arguments
# (not the source tensor itself): a plan, whose signature fixes both, builds it once.
SHAPE_ONLY_VIEWS = _RESHAPE_KINDS | {"expand", "permute", "transpose", "t"}


def record_view(source: Tensor, view: Tensor, kind: str, args: tuple[Any, ...] = (),
                backward: Callable[[Tensor], Tensor] | None = None
                ) -> Callable[[Tensor], Tensor]:
    """Attach the backward of the view ``view`` of ``source`` (``kind``: which view, as in
    ``VIEW_OPS``; ``args``: the view op's arguments after ``self``) and return the backward
    function; ``backward``: one returned by an earlier call of the same kind in
    :data:`SHAPE_ONLY_VIEWS`, source shape and arguments, used as it is."""
    if backward is not None:
        pass
    elif kind in _RESHAPE_KINDS:
        shape = source._shape

        def backward(g: Tensor) -> Tensor:
            return g.reshape(shape)
    elif kind == "expand":
        shape = source._shape

        def backward(g: Tensor) -> Tensor:
            return sum_to_size(g, shape)
    elif kind == "permute":
        n = len(source._shape)
        inverse = [0] * n
        for i, d in enumerate(args[0]):
            inverse[d % n if n else 0] = i

        def backward(g: Tensor) -> Tensor:
            return g.permute(*inverse)
    elif kind == "transpose":
        dim0, dim1 = args[0], args[1]

        def backward(g: Tensor) -> Tensor:
            return g.transpose(dim0, dim1)
    elif kind == "t":
        def backward(g: Tensor) -> Tensor:
            return g.t()
    else:  # select, slicing, diagonal, unfold, as_strided, split: through element positions
        geometry = (view._shape, view._stride, view._offset - source._offset)

        def backward(g: Tensor) -> Tensor:
            return _scatter_backward(g, source, geometry)

    # ViewBackward(source, name, backward), without its constructor's calls (every view of a
    # tensor that requires grad records one)
    node = _new(_VIEW_CLASSES.get(kind, _AS_STRIDED_VIEW))
    node._seq = next(_graph_seq)
    node._next = (_edge(source),)
    node._backward = backward
    view.grad_fn = node
    view._requires_grad = True
    if getattr(view, "_output_nr", 0):  # (absent reads as 0: a fresh view makes no __dict__)
        view.__dict__["_output_nr"] = 0
    return backward


def view_recorder(kind: str, backward: Callable[[Tensor], Tensor]
                  ) -> Callable[[Tensor, Tensor], None]:
    """``record(source, view)``: what :func:`record_view` records for a view of ``kind`` in
    :data:`SHAPE_ONLY_VIEWS` whose backward function is ``backward`` (one :func:`record_view`
    returned for the same call signature), for a new view that has no ``__dict__`` (a plan's)
    of a source that requires grad; the node class and the backward bound, the edge written
    out."""
    cls = _VIEW_CLASSES.get(kind, _AS_STRIDED_VIEW)

    def record(source: Tensor, view: Tensor) -> None:
        node = _new(cls)
        node._seq = next(_graph_seq)
        fn = source.grad_fn
        if fn is not None:
            node._next = ((fn, 0) if fn._n_outputs == 1 else _edge(source),)
        else:  # (a leaf: the signature says the source requires grad)
            acc = getattr(source, "_grad_accumulator", None)
            edge = acc._edge if acc is not None else None
            node._next = (edge if edge is not None else _edge(source),)
        node._backward = backward
        view.grad_fn = node
        view._requires_grad = True
    return record


def _scatter_backward(g: Tensor, source: Tensor, geometry: tuple[Any, ...]) -> Tensor:
    """Send a view's gradient to the source elements each view element reads (adding where
    view elements alias one source element), with out-of-place differentiable ops so that
    double backward works."""
    from .._aten import creation as _creation, factories as _fac

    shape, stride, offset = geometry
    starts = _box_starts(source, shape, stride, offset)
    if starts is not None:
        return _pad_to(g, source._shape, starts)
    with no_grad():
        n = source.numel()
        idx = _fac.empty_strided(source._shape, source._stride, dtype=_dtype.int64,
                                  device=g.device)
        idx.copy_(_creation.arange(n, device=g.device).reshape(source._shape))
        positions = idx.as_strided(shape, stride, idx._offset + offset)
    flat = _fac.zeros(n, dtype=g.dtype, device=g.device)
    # scatter_reduce is an aten op with a formula, so this stays differentiable
    flat = flat.scatter_reduce(0, positions.reshape(-1), g.reshape(-1), "sum")
    return flat.reshape(source._shape)


def _box_starts(source: Tensor, shape: tuple[int, ...], stride: tuple[int, ...],
                offset: int) -> list[int] | None:
    """Where a view of ``source`` starts in each dimension when it is a box of it (the same
    strides, a smaller or equal size per dimension: ``narrow``, ``chunk``, ``split``, basic
    slices with step 1), or None."""
    src_shape, src_stride = source._shape, source._stride
    if len(shape) != len(src_shape) or tuple(stride) != tuple(src_stride) or offset < 0:
        return None
    starts = [0] * len(shape)
    rest = offset
    # peel the offset off the largest strides first (a dense source: one decomposition)
    for d in sorted(range(len(shape)), key=lambda d: -src_stride[d]):
        if src_stride[d] <= 0:
            return None
        if src_shape[d] > 1:
            starts[d], rest = divmod(rest, src_stride[d])
    if rest:
        return None
    for d, size in enumerate(shape):
        if starts[d] + size > src_shape[d]:
            return None
    if sum(st * sd for st, sd in zip(starts, src_stride)) != offset:
        return None
    return starts


def _pad_to(g: Tensor, shape: tuple[int, ...], starts: list[int]) -> Tensor:
    """``g`` placed at ``starts`` in zeros of ``shape``, with ``cat`` (differentiable), one
    dimension at a time: the gradient of a box view, without the element scatter."""
    from .._aten import factories as _fac

    for d, start in enumerate(starts):
        size = g._shape[d]
        after = shape[d] - start - size
        if start == 0 and after == 0:
            continue
        parts = []
        for n in (start, None, after):
            if n is None:
                parts.append(g)
            elif n:
                parts.append(_fac.zeros(g._shape[:d] + (n,) + g._shape[d + 1:], dtype=g.dtype,
                                         device=g.device))
        g = _shape.cat(parts, d)
    return g


__all__ = ["autograd_kernel", "edge_of", "node_class", "not_differentiable", "record_view",
           "sum_to_size"]


# The plan cache and the fast tiers (core) record nodes through this module.
_plan.autograd_nodes = _fast.autograd_nodes = sys.modules[__name__]
_fast._binary_node = binary_node
