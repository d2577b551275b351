"""The autograd graph: nodes (``grad_fn``), their edges, saved tensors and hooks.

A node's ``next_functions`` are ``(node, input_nr)`` pairs, one per differentiable input, with
``None`` for inputs that need no gradient. Leaves that require grad end in an
:class:`AccumulateGrad` node that writes ``.grad``. Saved tensors carry the version they had
when saved; reading one that changed since raises PyTorch's in-place modification error.
Outputs are saved without their ``grad_fn`` (re-attached when read) so that an output and the
node that made it never form a reference cycle.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from .._core.tensor import Tensor
from ._handles import RemovableHandle

__all__ = ["GradientEdge", "Node", "disable_saved_tensors_hooks", "get_gradient_edge",
           "increment_version", "register_multi_grad_hook", "saved_tensors_hooks",
           "save_on_cpu"]

_seq = itertools.count()
_local = threading.local()
# What reading a saved tensor after its graph was freed raises (PyTorch's words): a node's
# backward, a SavedTensor's unpack or hooks, a node's _saved_ attributes
FREED_SAVED_TENSORS = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


class _HookDict(dict):
    """A dict that can be weakly referenced (for RemovableHandle)."""

    __slots__ = ("__weakref__",)


class Node:
    """A function of the backward graph (what ``tensor.grad_fn`` is)."""

    # Class-level defaults, replaced per instance on first write (never mutated in place), so
    # a node built on the hot path (``_nodes.binary_node``) sets only what differs.
    _next: tuple[tuple[Node | None, int], ...] = ()
    _hooks: _HookDict | None = None
    _prehooks: _HookDict | None = None
    _tensor_prehooks: dict[int, _HookDict] | None = None  # output_nr -> hooks
    _retain: dict[int, Any] | None = None  # output_nr -> weakref of retained tensor
    _metadata: dict[str, Any] | None = None
    _n_outputs = 1  # how many gradients the node takes (one per output)
    _is_accumulator = False  # (the engine's test for AccumulateGrad: one attribute read)

    def __init__(self) -> None:
        self._seq = next(_seq)

    @property
    def metadata(self) -> dict[str, Any]:
        """A dict for whatever users attach to the node (made on first use)."""
        meta = self._metadata
        if meta is None:
            meta = self._metadata = {}
        return meta

    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return self._next

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` after this node ran; may return new grad_inputs."""
        if self._hooks is None:
            self._hooks = _HookDict()
        handle = RemovableHandle(self._hooks)
        self._hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_outputs)`` before this node runs; may return new grad_outputs."""
        if self._prehooks is None:
            self._prehooks = _HookDict()
        handle = RemovableHandle(self._prehooks)
        self._prehooks[handle.id] = fn
        return handle

    def _register_tensor_hook(self, output_nr: int, fn: Callable[..., Any]) -> RemovableHandle:
        if self._tensor_prehooks is None:
            self._tensor_prehooks = {}
        hooks = self._tensor_prehooks.setdefault(output_nr, _HookDict())
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def apply(self, grads: list[Any]) -> list[Any]:
        """Gradients of the inputs (one per edge) from those of the outputs."""
        raise NotImplementedError

    def release(self) -> None:
        """Free what backward needed (after a backward without ``retain_graph``)."""

    def __call__(self, *grads: Any) -> Any:
        out = self.apply(list(grads))
        return out[0] if len(out) == 1 else tuple(out)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


class AccumulateGrad(Node):
    """The end of a leaf's edges: accumulates the incoming gradient into ``variable.grad``.

    The leaf keeps its accumulator (``_grad_accumulator``) and the accumulator refers to the
    leaf weakly, so one accumulator serves every graph the leaf takes part in. A leaf nobody
    else holds can then die with a graph still pointing at it; its gradient is unobservable
    then, unless hooks watch it: a leaf with hooks is held strongly (``_keep``), so they still
    run, as in PyTorch where the accumulator always holds its leaf.
    """

    _post_hooks: _HookDict | None = None
    _leaf_hooks: _HookDict | None = None  # the leaf's tensor hooks (Tensor.register_hook)
    _is_accumulator = True
    _keep: Tensor | None = None
    _edge: tuple[Node, int] | None = None  # (self, 0), made once (autograd._nodes._edge)

    def __init__(self, variable: Tensor) -> None:
        self._seq = next(_seq)
        self._variable = weakref.ref(variable)

    @property
    def variable(self) -> Tensor | None:
        """The leaf this node accumulates into (``None`` once it is gone)."""
        keep = self._keep
        return keep if keep is not None else self._variable()

    def apply(self, grads: list[Any]) -> list[Any]:  # the engine accumulates; see _engine
        return []


class SavedTensor:
    """A tensor saved for backward, with the version it had then."""

    __slots__ = ("_geometry", "_is_output", "_layout", "_node", "_output_nr", "_packed",
                 "_parts", "_tensor", "_unpack", "_version")

    def __init__(self, tensor: Tensor, node: Node | None, is_output: bool,
                 output_nr: int = 0) -> None:
        if getattr(tensor, "_inference", False):  # (reading __dict__ would make one)
            raise RuntimeError("Inference tensors cannot be saved for backward. To work around "
                               "you can make a clone to get a normal tensor and use it in "
                               "autograd.")
        self._version = tensor._vc[0]
        self._is_output = is_output
        self._output_nr = output_nr
        self._packed = None
        self._unpack = None
        self._parts = None
        if is_output:
            # An output is kept without its grad_fn (no cycle through the node that made it):
            # a plain tensor as the fields of its alias, made only when backward reads it (most
            # recorded outputs are never read: a forward without backward, or a rule that needs
            # no result), a subclass detached through its own dispatch.
            self._node = weakref.ref(node) if node is not None else None
            if tensor.__class__ is Tensor:
                self._tensor = None
                self._parts = (tensor._storage, tensor._shape, tensor._stride, tensor._offset,
                               tensor._dtype, tensor._device, tensor._vc, tensor._base)
                # the plan-signature slots, which hold for the same objects: the alias keys
                # the dispatcher's plans as the output did (a backward's ops read it)
                self._layout = tensor._interned_layout
                self._geometry = tensor._geometry
            else:
                self._tensor = tensor.detach()
                self._tensor._requires_grad = False
        else:
            self._node = None
            self._tensor = tensor
        if _hooks_active:
            hooks = current_saved_tensors_hooks()
            if hooks is not None:
                pack, self._unpack = hooks
                self._packed = pack(tensor)
                self._tensor = None
                self._parts = None

    def unpack(self, owner: Node) -> Tensor:
        if self._unpack is not None:
            return self._unpack(self._packed)
        t = self._tensor
        if t is None:
            parts = self._parts
            if parts is None:
                raise RuntimeError(FREED_SAVED_TENSORS)
            storage, shape, stride, offset, dtype, dev, vc, base = parts
            if vc[0] == self._version and self._node is not None:
                node = self._node()
                if node is not None:
                    # the output re-attached to its node (so that double backward reaches
                    # it), made as one tensor
                    out = Tensor._make(storage, shape, stride, offset, dtype, dev, vc, base)
                    out._interned_layout = self._layout
                    out._geometry = self._geometry
                    out.grad_fn = node
                    out._requires_grad = True
                    if self._output_nr:
                        out.__dict__["_output_nr"] = self._output_nr
                    return out
            t = Tensor._make(*parts)
        if t._vc[0] != self._version:
            kind = "output 0 of " + owner.name() if self._is_output else "an input of " + \
                owner.name()
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{t.type()} {list(t.shape)}], which is {kind}, is at "
                f"version {t._vc[0]}; expected version {self._version} instead. Hint: enable "
                "anomaly detection to find the operation that failed to compute its gradient, "
                "with torch.autograd.set_detect_anomaly(True).")
        if self._is_output and self._node is not None:
            node = self._node()
            if node is not None:  # re-attach, so double backward reaches the node
                if t.is_sparse:  # no storage to view: an alias by its own kernel
                    out = t.detach()
                else:
                    out = t._view(t._shape, t._stride, t._offset)
                    if t.__class__ is not Tensor:  # a subclass (a fake tensor) stays one
                        out.__class__ = t.__class__
                        out.__dict__.update(t.__dict__)
                out.grad_fn = node
                out._requires_grad = True
                out.__dict__["_output_nr"] = self._output_nr
                return out
        return t

    def register_hooks(self, pack_hook: Callable[[Tensor], Any],
                       unpack_hook: Callable[[Any], Tensor]) -> None:
        """Store ``pack_hook(tensor)`` instead of the tensor (called now) and give backward
        ``unpack_hook`` of it (``grad_fn._raw_saved_self.register_hooks``, one saved tensor's
        :class:`saved_tensors_hooks`)."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("register_hooks(): pack_hook and unpack_hook must be callables")
        if self._unpack is not None:
            raise RuntimeError("SavedTensor hooks have already been set on this saved tensor: "
                               "register_hooks can be called only once per saved tensor")
        tensor = self._tensor
        if tensor is None:
            if self._parts is None:
                raise RuntimeError(FREED_SAVED_TENSORS)
            tensor = Tensor._make(*self._parts)
        self._packed = pack_hook(tensor)
        self._unpack = unpack_hook
        self._tensor = None
        self._parts = None

    def release(self) -> None:
        self._tensor = None
        self._parts = None
        self._packed = None


_new = object.__new__


def save_input(tensor: Tensor) -> SavedTensor:
    """``SavedTensor(tensor, node, False)`` for the hot paths (``autograd._nodes``): the slots
    an input's saved tensor reads, set without the constructor's call, when no saved-tensor
    hooks are open and ``tensor`` is no inference tensor (else the constructor itself)."""
    if _hooks_active or getattr(tensor, "_inference", False):
        return SavedTensor(tensor, None, False)
    saved = _new(SavedTensor)
    saved._version = tensor._vc[0]
    saved._is_output = False
    saved._node = None
    saved._unpack = None
    saved._parts = None
    saved._tensor = tensor
    return saved


def save_output(tensor: Tensor, node: Node) -> SavedTensor:
    """``SavedTensor(tensor, node, True)`` of a plain tensor for the hot paths (as
    :func:`save_input`)."""
    if _hooks_active or tensor.__class__ is not Tensor or getattr(tensor, "_inference", False):
        return SavedTensor(tensor, node, True)
    return _saved_output(tensor, weakref.ref(node), 0)


def _saved_output(tensor: Tensor, node_ref: Any, output_nr: int) -> SavedTensor:
    """The saved form of output ``output_nr`` of the node ``node_ref`` refers to: a plain,
    non-inference tensor's parts (no reference to the tensor, so no cycle through its
    ``grad_fn``), set without the constructor's call."""
    saved = _new(SavedTensor)
    saved._version = tensor._vc[0]
    saved._is_output = True
    saved._output_nr = output_nr
    saved._node = node_ref
    saved._unpack = None
    saved._tensor = None
    saved._parts = (tensor._storage, tensor._shape, tensor._stride, tensor._offset,
                    tensor._dtype, tensor._device, tensor._vc, tensor._base)
    saved._layout = tensor._interned_layout
    saved._geometry = tensor._geometry
    return saved


def save_outputs(result: tuple[Any, ...], node: Node,
                 keep: bool | tuple[int, ...] = True) -> tuple[Any, ...]:
    """The saved form of a tuple of outputs of ``node``: ``SavedTensor(r, node, True, nr)``
    for each tensor ``r`` at position ``nr`` (``keep``: True, or the output numbers to save;
    the other tensors become None), anything else as it is. Plain tensors are saved as
    :func:`save_output` saves one, sharing one weak reference to ``node``."""
    if _hooks_active:
        return tuple((SavedTensor(r, node, True, nr) if keep is True or nr in keep else None)
                     if isinstance(r, Tensor) else r for nr, r in enumerate(result))
    ref = weakref.ref(node)
    kept = []
    nr = -1
    for r in result:
        nr += 1
        if keep is not True and nr not in keep:
            r = None if isinstance(r, Tensor) else r
        elif r.__class__ is Tensor and not getattr(r, "_inference", False):
            # _saved_output(r, ref, nr), written out (one frame per output)
            saved = _new(SavedTensor)
            saved._version = r._vc[0]
            saved._is_output = True
            saved._output_nr = nr
            saved._node = ref
            saved._unpack = None
            saved._tensor = None
            saved._parts = (r._storage, r._shape, r._stride, r._offset, r._dtype, r._device,
                            r._vc, r._base)
            saved._layout = r._interned_layout
            saved._geometry = r._geometry
            r = saved
        elif isinstance(r, Tensor):
            r = SavedTensor(r, node, True, nr)
        kept.append(r)
    return tuple(kept)


# -- saved tensor hooks ------------------------------------------------------------------------


_hooks_lock = threading.Lock()
# Open saved_tensors_hooks blocks, all threads: while there are none, saving a tensor reads
# no thread-local.
_hooks_active = 0


def current_saved_tensors_hooks() -> tuple[Callable[..., Any], Callable[..., Any]] | None:
    if not _hooks_active:
        return None
    stack = getattr(_local, "saved_hooks", None)
    return stack[-1] if stack else None


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside go through ``pack_hook`` (its result
    is stored) and come back through ``unpack_hook`` when backward needs them."""

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        refusal = getattr(_local, "hooks_disabled", None)
        if refusal:
            raise RuntimeError(refusal[-1])
        stack = getattr(_local, "saved_hooks", None)
        if stack is None:
            stack = _local.saved_hooks = []
        stack.append((self.pack_hook, self.unpack_hook))
        global _hooks_active
        with _hooks_lock:
            _hooks_active += 1
        return self

    def __exit__(self, *exc: object) -> None:
        _local.saved_hooks.pop()
        global _hooks_active
        with _hooks_lock:
            _hooks_active -= 1


class disable_saved_tensors_hooks:
    """Context manager (and decorator): inside, opening a :class:`saved_tensors_hooks` block
    raises ``RuntimeError(error_message)``, for code whose saved tensors must stay as they are
    (a sharded or checkpointed region). Blocks already open keep working, as in PyTorch."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        stack = getattr(_local, "hooks_disabled", None)
        if stack is None:
            stack = _local.hooks_disabled = []
        stack.append(self.error_message)

    def __exit__(self, *exc: object) -> None:
        _local.hooks_disabled.pop()

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
        return wrapper


class GradientEdge(NamedTuple):
    """Where a gradient enters the graph: ``node``'s input ``output_nr`` (what
    :func:`get_gradient_edge` returns; ``autograd.grad`` and ``backward`` take one in place of
    a tensor, for a gradient with respect to a tensor that no longer exists)."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge a gradient for ``tensor`` flows into: its ``grad_fn`` and output number, or a
    leaf's accumulator. ``autograd.grad(loss, get_gradient_edge(x))`` equals
    ``autograd.grad(loss, x)``."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    from ._nodes import edge_of

    return GradientEdge(*edge_of(tensor))


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable), as an
    in-place write would: for code that writes a tensor's memory behind autograd's back, so
    that a backward reading its saved value raises instead of using changed data."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._vc[0] += 1


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are moved to the CPU and back to their device when used."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Tensor) -> tuple[Any, Tensor]:
            return t.device, t.cpu()

        def unpack(packed: tuple[Any, Tensor]) -> Tensor:
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class _MultiHandle:
    """The handle of :func:`register_multi_grad_hook`: removes every tensor's hook."""

    def __init__(self, handles: list[Any]) -> None:
        self.handles = handles

    def remove(self) -> None:
        """Unregister the hook from every tensor."""
        for h in self.handles:
            h.remove()

    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable[..., Any], *,
                             mode: str = "all") -> _MultiHandle:
    """A hook over several tensors' gradients, once per backward pass.

    ``mode="all"``: ``fn(grads)`` once the gradients of every tensor that this backward pass
    computes are there (``grads`` has one entry per tensor, None for a tensor the pass does not
    reach). ``mode="any"``: ``fn(grad)`` with the first of their gradients the pass computes.

    :raises ValueError: an unknown ``mode``.
    """
    from . import _engine
    from ._nodes import edge_of

    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    count = len(tensors)
    state: dict[str, Any] = {"task": None}

    if mode == "any":
        def any_hook(grad: Tensor) -> None:
            task = _engine.current_graph_task_id()
            if state["task"] != task:
                state["task"] = task
                fn(grad)

        return _MultiHandle([t.register_hook(any_hook) for t in tensors
                             if t.requires_grad])

    def fire() -> None:
        if not state["fired"]:
            state["fired"] = True
            fn(tuple(state["grads"]))

    def make_hook(index: int) -> Callable[[Tensor], None]:
        def hook(grad: Tensor) -> None:
            task = _engine.current_graph_task_id()
            if state["task"] != task:  # this pass's first gradient among them
                state.update(task=task, grads=[None] * count, got=0, fired=False)
                state["expected"] = sum(
                    1 for t in tensors if t.requires_grad and _engine.will_execute(edge_of(t)[0]))
                _engine.queue_callback(fire)  # (at the pass's end, if not all came)
            if state["grads"][index] is None:
                state["got"] += 1
            state["grads"][index] = grad
            if state["got"] >= state["expected"]:
                fire()
        return hook

    return _MultiHandle([t.register_hook(make_hook(i)) for i, t in enumerate(tensors)
                         if t.requires_grad])
