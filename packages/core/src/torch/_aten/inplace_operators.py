"""In-place operators as a dispatch mode sees them: ``x.add_(1)`` is ``aten::add_.Tensor``.

Plait's in-place methods compute out of place and copy into ``self``
(:func:`.arith.inplace_method`): one route for every op, with PyTorch's checks. A
``TorchDispatchMode`` or a ``__torch_dispatch__`` subclass would see that as two operators
(``add.Tensor`` then ``copy_``), where PyTorch shows one, the in-place operator of
native_functions. So every
out-of-place aten operator whose in-place form PyTorch has (``<name>_`` with the same overload,
per ``_core/aten_catalogue.txt``) gets that form here as an operator of its own: the
out-of-place schema with ``self`` written (``Tensor(a!) self ... -> Tensor(a!)``), and a
``CompositeImplicitAutograd`` kernel that computes out of place, checks that ``self`` can hold
the result (shape, dtype) and copies into it. Operators another module defined already (``relu_``,
``lerp_``, ``fill_``...) are left as they are.

When a call would reach the Python key, the in-place method finds which operator its
out-of-place form calls first (:func:`first_operator_call`: a mode that stops the call there,
before anything runs) and calls that operator's in-place form instead, with the same arguments,
so the mode sees one ``add_.Tensor(self, 1)``. With grad to record, the form is differentiated
by its out-of-place operator's rule (autograd reads ``form.out_of_place``); where that operator
has none (it differentiates through its decomposition), the form decomposes above the Python
key and the mode sees the out-of-place operator and ``copy_``. Plain calls never come here.
"""

from __future__ import annotations

import dataclasses
import functools
from importlib import resources
from typing import Any

from .._core import config as _config, dispatch as _dispatch
from .._core.schema import Argument, Schema
from .._core.tensor import Tensor
from .convert import check_castable, check_no_partial_overlap, copy_

__all__: list[str] = []

# Out-of-place overload -> the in-place overload PyTorch names for it where the two differ
# (``pow.Tensor_Scalar`` is written in place by ``pow_.Scalar``).
_OVERLOAD_RENAMES = {"Tensor_Scalar": "Scalar", "Tensor_Tensor": "Tensor"}


@functools.cache
def _catalogue() -> dict[str, frozenset[str]]:
    """PyTorch's aten operator names -> their overload names."""
    text = resources.files("torch._core").joinpath("aten_catalogue.txt").read_text()
    rows = (line.split() for line in text.splitlines() if line and not line.startswith("#"))
    return {row[0]: frozenset(row[1:]) for row in rows}


def _inplace_name(op: _dispatch.Operator) -> str | None:
    """The qualname of PyTorch's in-place form of the out-of-place aten operator ``op``
    (``aten::add_.Tensor``; the default overload has no suffix), or None when PyTorch has
    none."""
    base, _, overload = op.name.partition(".")
    overloads = _catalogue().get(base + "_")
    if not overloads or base.endswith("_"):
        return None
    overload = overload or "default"
    candidates = [overload, _OVERLOAD_RENAMES.get(overload)]
    if overload not in _catalogue().get(base, ()) and len(overloads) == 1:
        # an overload PyTorch's out-of-place operator does not have (Plait's atan2.Tensor is
        # PyTorch's atan2): its in-place operator's only overload
        candidates.append(next(iter(overloads)))
    for candidate in candidates:
        if candidate in overloads:
            return f"aten::{base}_" + ("" if candidate == "default" else f".{candidate}")
    return None


def _writes_self(op: _dispatch.Operator) -> bool:
    """Whether ``op`` is an out-of-place operator whose in-place form can be made from it: a
    ``Tensor self`` first, one tensor result, nothing written."""
    schema = op.schema
    return (op.namespace == "aten" and not schema.mutated and bool(schema.arguments)
            and schema.arguments[0].type == "Tensor" and not schema.arguments[0].kwarg_only
            and len(schema.returns) == 1 and schema.returns[0].type == "Tensor")


def _inplace_kernel(out_of_place: _dispatch.Operator, name: str) -> Any:
    def kernel(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        check_operands(self, args)
        return write_into(self, out_of_place(self, *args, **kwargs))

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"``{out_of_place.name}`` written into ``self``."
    return kernel


def check_operands(self: Tensor, args: tuple[Any, ...]) -> None:
    """PyTorch's check before an in-place op: no operand partly overlaps ``self``."""
    for a in args:
        if a.__class__ is Tensor or isinstance(a, Tensor):
            check_no_partial_overlap(self, a)


def write_into(self: Tensor, result: Tensor) -> Tensor:
    """Write ``result`` (``self``'s op computed out of place) into ``self`` after PyTorch's
    checks of an in-place op: a result of ``self``'s shape, of a dtype ``self`` can hold."""
    if result._shape != self._shape:
        raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the "
                           f"broadcast shape {list(result._shape)}")
    check_castable(result._dtype, self._dtype)
    return copy_(self, result)


# out-of-place operator -> its in-place operator (None: PyTorch has none)
_forms: dict[_dispatch.Operator, _dispatch.Operator | None] = {}


def inplace_form(op: _dispatch.Operator) -> _dispatch.Operator | None:
    """The in-place operator of the out-of-place aten operator ``op`` (``add.Tensor`` ->
    ``add_.Tensor``), defined on first need when no module has; None when PyTorch has no
    in-place form of it."""
    if op in _forms:
        return _forms[op]
    form = None
    name = _inplace_name(op) if _writes_self(op) else None
    if name is not None:
        form = _dispatch.get(name)
        if form is None:
            schema: Schema = op.schema
            first = dataclasses.replace(schema.arguments[0], mutable=True, alias="a!")
            form = _dispatch.define(name, Schema(
                name.partition("::")[2].partition(".")[0], name.partition(".")[2],
                (first, *schema.arguments[1:]), (Argument("", "Tensor", mutable=True,
                                                          alias="a!"),)))
            form.register(_dispatch.COMPOSITE_IMPLICIT,
                          _inplace_kernel(op, name.partition("::")[2]))
            # (autograd differentiates the form by this operator's rule, when it has one)
            form.out_of_place = op
    _forms[op] = form
    return form


def define_all() -> None:
    """Define the in-place form of every out-of-place aten operator defined so far, so that
    ``torch.ops.aten.add_.Tensor`` names the operator a mode will be handed (libraries key
    their handlers by it at import)."""
    for op in _dispatch.operators("aten"):
        inplace_form(op)


class _FirstCall(BaseException):
    """The first operator a call reached (a BaseException: no ``except Exception`` on the way
    swallows it)."""

    def __init__(self, op: _dispatch.Operator, args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> None:
        super().__init__(op.qualname)
        self.op, self.args, self.kwargs = op, args, kwargs


class _StopAtFirstCall:
    """A dispatch mode that stops a call at the first operator it reaches."""

    takes_fused_operators = False  # fused operators show PyTorch's, as the user's mode sees

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        raise _FirstCall(func, args, kwargs or {})


_STOP = _StopAtFirstCall()


def first_operator_call(fn: Any, self: Tensor, args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> tuple[Any, tuple[Any, ...],
                                                         dict[str, Any]] | None:
    """The first operator ``fn(self, *args, **kwargs)`` calls and its arguments, found by
    stopping the call there (nothing has run yet), or None when it calls none or raises first
    (its own argument errors: the caller runs it again to raise them). Grad is off meanwhile:
    an operator differentiated through its decomposition would show its first step instead."""
    _dispatch.push_mode(_STOP)
    grad = _config.set_grad_state(False)
    try:
        fn(self, *args, **kwargs)
    except _FirstCall as first:
        return first.op, first.args, first.kwargs
    except Exception:
        return None
    finally:
        _config.set_grad_state(grad)
        _dispatch.pop_mode()
    return None


def call_inplace_form(fn: Any, self: Tensor, args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> Tensor | None:
    """``self`` written with ``fn(self, *args, **kwargs)`` through the in-place operator of
    the operator ``fn`` calls on ``self``, as PyTorch's in-place method calls it; None when
    that is not how ``fn`` starts (another operator first, one without an in-place form):
    the caller then computes out of place and copies."""
    if _dispatch.mode_stack() and getattr(_dispatch.mode_stack()[-1],
                                          "takes_fused_operators", False):
        return None  # Plait's own modes (vmap) take the out-of-place operators
    first = first_operator_call(fn, self, args, kwargs)
    if first is None or not first[1] or first[1][0] is not self:
        return None
    form = inplace_form(first[0])
    if form is None:
        return None
    return form(*first[1], **first[2])


def seen_as_inplace_form(out_of_place: Any, impl: Any) -> Any:
    """The in-place method ``impl`` (which writes ``self`` directly) as a dispatch mode or
    ``__torch_dispatch__`` subclass is to see it: a call that would reach the Python key runs
    the in-place form of the operator ``out_of_place`` calls (``masked_fill_.Scalar``), a
    plain call runs ``impl``."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if _config.state.keys_active and _dispatch.python_key_active((self, *args), kwargs):
            done = call_inplace_form(out_of_place, self, args, kwargs)
            if done is not None:
                return done
        return impl(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = impl.__name__.strip("_") + "_"
    method.__doc__ = impl.__doc__ or f"In-place version of ``{out_of_place.__name__}``."
    return method
