"""``torch.autograd.Function``: user-defined ops with their own backward."""

from __future__ import annotations

import functools
from typing import Any

from .._core import config as _config
from .._core.tensor import Tensor
from ._nodes import edge_of
from .graph import FREED_SAVED_TENSORS, Node, SavedTensor

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

# set by torch.autograd.forward_ad while a dual level is active: sees each apply first and
# returns NotImplemented for the calls it leaves alone
forward_ad_hook: Any = None


class FunctionCtx:
    """The ``ctx`` of ``forward``/``setup_context``/``backward``."""

    def __init__(self) -> None:
        self._saved: tuple[Any, ...] = ()
        self._node: Node | None = None
        self._dirty: tuple[Tensor, ...] = ()
        self._non_differentiable: tuple[Tensor, ...] = ()
        self.materialize_grads = True
        self.needs_input_grad: tuple[bool, ...] = ()
        self._released = False

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        if self._released:
            raise RuntimeError(FREED_SAVED_TENSORS)
        return tuple(s.unpack(self._node) if isinstance(s, SavedTensor) else s
                     for s in self._saved)

    def mark_dirty(self, *tensors: Tensor) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node a Function call records; it is also the ``ctx``."""

    def __init__(self, cls: type) -> None:
        Node.__init__(self)
        FunctionCtx.__init__(self)
        self._cls = cls
        self._outputs_meta: list[Any] = []
        self._n_outputs = 1

    def name(self) -> str:
        return f"{self._cls.__name__}Backward"

    def apply(self, grads: list[Any]) -> list[Any]:
        from .._aten import factories as _fac

        if self.materialize_grads:
            grads = [_fac.zeros(m[0], dtype=m[1], device=m[2]) if g is None and m else g
                     for g, m in zip(grads, self._outputs_meta)]
        out = self._cls.backward(self, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        n_inputs = len(self._input_is_tensor)
        if len(out) != n_inputs:
            if len(out) > n_inputs and all(g is None for g in out[n_inputs:]):
                out = out[:n_inputs]
            else:
                raise RuntimeError(f"function {self._cls.__name__}Backward returned an incorrect "
                                   f"number of gradients (expected {n_inputs}, got {len(out)})")
        result = []
        for is_tensor, g in zip(self._input_is_tensor, out):
            if is_tensor:
                result.append(g)
            elif g is not None:
                raise RuntimeError(f"function {self._cls.__name__}Backward returned a gradient "
                                   "different than None for an input that is not a Tensor")
        return result

    def release(self) -> None:
        self._released = True
        for s in self._saved:
            if isinstance(s, SavedTensor):
                s.release()


class _FunctionMeta(type):
    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> None:
        super().__init__(name, bases, attrs)


class Function(metaclass=_FunctionMeta):
    """Subclass with ``forward(ctx, *args)`` (or ``forward(*args)`` plus
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grads)``; call ``apply``."""

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        raise NotImplementedError("setup_context is not implemented.")

    vjp = backward

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        if forward_ad_hook is not None:
            result = forward_ad_hook(cls, args, kwargs)
            if result is not NotImplemented:
                return result
        uses_setup = cls.setup_context is not Function.setup_context
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        record = _config.is_grad_enabled() and any(t.requires_grad for t in tensor_args)
        node = BackwardCFunction(cls)
        node.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        node._input_is_tensor = tuple(isinstance(a, Tensor) for a in args)
        prev = _config.set_grad_state(False)
        try:
            if uses_setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(node, args, output)
            else:
                output = cls.forward(node, *args, **kwargs)
        finally:
            _config.set_grad_state(prev)
        outs = output if isinstance(output, tuple) else (output,)
        node._n_outputs = len(outs)
        node._outputs_meta = [(o._shape, o._dtype, o._device) if isinstance(o, Tensor) else None
                              for o in outs]
        if record:
            node._next = tuple(edge_of(a) if isinstance(a, Tensor) else (None, 0)
                               for a in args if isinstance(a, Tensor))
            non_diff = {id(t) for t in node._non_differentiable}
            dirty = {id(t) for t in node._dirty}
            for nr, o in enumerate(outs):
                if not isinstance(o, Tensor) or id(o) in non_diff:
                    continue
                if not (o._dtype.is_floating_point or o._dtype.is_complex):
                    continue
                if id(o) in dirty and o.grad_fn is None and o.requires_grad:
                    raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                       "in-place operation.")
                o.grad_fn = node
                o._requires_grad = True
                o.__dict__["_output_nr"] = nr
        to_save = getattr(node, "_to_save", ())
        node._saved = tuple(_save(t, node, outs) for t in to_save)
        return output


def _save(t: Any, node: BackwardCFunction, outs: tuple[Any, ...]) -> Any:
    if not isinstance(t, Tensor):
        return t
    for nr, o in enumerate(outs):
        if t is o:
            return SavedTensor(t, node, True, nr)
    return SavedTensor(t, node, False)


def once_differentiable(fn: Any) -> Any:
    """Decorate a ``backward`` that is not itself differentiable: it runs without recording,
    and a double backward through it raises."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        from .grad_mode import no_grad

        with no_grad():
            out = fn(ctx, *grads)
        if not _config.is_grad_enabled():
            return out
        requires = any(isinstance(g, Tensor) and g.requires_grad for g in grads)
        if not requires:
            return out
        outs = out if isinstance(out, tuple) else (out,)

        class _Err(Node):
            def apply(self, gs: list[Any]) -> list[Any]:
                raise RuntimeError("trying to differentiate twice a function that was marked "
                                   "with @once_differentiable")

        err = _Err()
        err._next = tuple(edge_of(g) for g in grads if isinstance(g, Tensor))
        for o in outs:
            if isinstance(o, Tensor) and (o._dtype.is_floating_point or o._dtype.is_complex):
                o.grad_fn = err
                o._requires_grad = True
        return out

    return wrapper
