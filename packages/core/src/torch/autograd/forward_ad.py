"""``torch.autograd.forward_ad``: forward-mode automatic differentiation with dual tensors.

Inside ``with dual_level():``, :func:`make_dual` attaches a tangent to a tensor; every public
``torch`` call (functions, ``Tensor`` methods and operators, ``torch.nn.functional``) that takes
a dual tensor returns outputs whose tangents are the Jacobian-vector products, and
:func:`unpack_dual` reads them back.

Plait has no forward-mode derivative formulas, so each call is differentiated as
``torch.func.jvp`` does it: the call runs once with autograd recording, the vector-Jacobian
product with a zero cotangent ``u`` is built with ``create_graph``, and since that product is
linear in ``u``, its derivative with respect to ``u`` in the direction of the tangents is the
Jacobian-vector product. A :class:`~torch.overrides.TorchFunctionMode` entered with the level
sees the calls. Tangents live in a table keyed by the tensor's identity (dropped with the tensor
or at the level's exit).

Calls that cannot be differentiated this way raise rather than give a wrong tangent: in-place
and ``out=`` calls that involve a dual tensor, calls whose derivative autograd does not know,
and calls whose backward cannot itself be differentiated.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from torch.autograd import function as _function
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the primal (a view of the dual tensor without its
    tangent) and the tangent (None when the tensor has none at the level)."""

    primal: torch.Tensor
    tangent: torch.Tensor | None


class _Level:
    """One active dual level: its tangent table and the mode that propagates tangents."""

    def __init__(self, index: int) -> None:
        self.index = index
        # id(tensor) -> (weak reference to the tensor, its tangent)
        self.tangents: dict[int, tuple[weakref.ref, torch.Tensor]] = {}
        self.mode = _DualMode(self)
        self.in_function_apply = False

    def set_tangent(self, tensor: torch.Tensor, tangent: torch.Tensor) -> None:
        key = id(tensor)
        table = self.tangents
        # the entry goes with the tensor, so a reused id never finds a stale tangent
        ref = weakref.ref(tensor, lambda _r, key=key: table.pop(key, None))
        table[key] = (ref, tangent)

    def tangent_of(self, tensor: Any) -> torch.Tensor | None:
        entry = self.tangents.get(id(tensor))
        if entry is None or entry[0]() is not tensor:
            return None
        return entry[1]

    def function_apply(self, cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``cls.apply(*args, **kwargs)`` of a custom autograd Function with dual arguments:
        one call, differentiated through the Function's ``backward`` (its forward may leave
        torch, so tracing the ops inside it could drop a tangent silently)."""
        if self.in_function_apply:
            return NotImplemented
        leaves, spec = _pytree.tree_flatten((args, kwargs))
        dual_at = [i for i, leaf in enumerate(leaves)
                   if isinstance(leaf, torch.Tensor) and self.tangent_of(leaf) is not None]
        if not dual_at:
            return NotImplemented
        self.in_function_apply = True
        try:
            # no mode below this call: the Function's forward and backward are one operation
            with torch._C.DisableTorchFunction():
                return _propagate(lambda *a, **k: cls.apply(*a, **k), leaves, spec, dual_at,
                                  self, name=f"{cls.__qualname__}.apply")
        finally:
            self.in_function_apply = False


_levels: list[_Level] = []


def _current() -> _Level | None:
    return _levels[-1] if _levels else None


def _level_for(level: int | None) -> _Level | None:
    current = _current()
    if level is None or current is None:
        return current
    if level != current.index:
        raise RuntimeError(f"forward AD level {level} is not the current level "
                           f"({current.index}); only one level is supported")
    return current


def enter_dual_level() -> int:
    """Start a forward-AD level and return its index; only one may be active at a time, as
    in PyTorch."""
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level = _Level(0)
    _levels.append(level)
    level.mode.__enter__()
    _function.forward_ad_hook = level.function_apply
    return level.index


def exit_dual_level(*, level: int | None = None) -> None:
    """End the current forward-AD level: its tensors lose their tangents."""
    current = _level_for(level)
    if current is None:
        raise RuntimeError("Trying to exit a forward AD level that was not entered")
    current.mode.__exit__(None, None, None)
    _function.forward_ad_hook = None
    _levels.pop()
    current.tangents.clear()


class dual_level:
    """``with dual_level():`` runs its block at a new forward-AD level (also a decorator
    through :meth:`__call__`)."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        import functools

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with dual_level():
                return fn(*args, **kwargs)

        return wrapped


def _alias(tensor: torch.Tensor) -> torch.Tensor:
    """A view of ``tensor`` made without the dual mode seeing it."""
    with torch._C.DisableTorchFunction():
        return tensor.view_as(tensor)


def make_dual(tensor: torch.Tensor, tangent: torch.Tensor, *,
              level: int | None = None) -> torch.Tensor:
    """A view of ``tensor`` whose tangent at the current level is ``tangent`` (same shape;
    floating point: complex dual tensors are not supported yet)."""
    current = _level_for(level)
    if current is None:
        raise RuntimeError("To create a dual Tensor, you need to be inside a forward AD level: "
                           "use `with torch.autograd.forward_ad.dual_level():`")
    if not isinstance(tensor, torch.Tensor) or not isinstance(tangent, torch.Tensor):
        raise TypeError("make_dual expects two tensors")
    for what, value in (("primal", tensor), ("tangent", tangent)):
        if value.is_complex():
            # the vjp-of-vjp construction would need the conjugate convention sorted out
            raise NotImplementedError(f"forward AD in Plait does not support a complex "
                                      f"{what} yet")
        if not value.is_floating_point():
            raise ValueError(f"Expected {what} to be floating point or complex, but got: "
                             f"{value.dtype}")
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {tuple(tensor.shape)} while the given forward gradient is of "
                           f"size {tuple(tangent.shape)}.")
    dual = _alias(tensor)
    current.set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor: torch.Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor`` at the current level: the primal a view without
    the tangent, the tangent None when there is none (or no level is active)."""
    current = _level_for(level)
    tangent = None if current is None else current.tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor), tangent)


# -- propagation ---------------------------------------------------------------------------


def _name(func: Callable[..., Any]) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))


# calls that read or mark a tensor without computing values from it: run as they are
_PASS_THROUGH = frozenset((
    "requires_grad_", "retain_grad", "register_hook", "share_memory_", "size", "dim",
    "numel", "stride", "is_contiguous", "data_ptr", "element_size", "__len__", "__repr__",
    "__format__", "__bool__", "item", "tolist", "__index__", "__int__", "__float__",
))
# methods that write into their first argument without a trailing "_" in their name
# (Tensor.__setitem__'s function is named "setitem")
_INPLACE_DUNDERS = frozenset(("__setitem__", "setitem"))


def _is_inplace(func: Callable[..., Any], kwargs: dict[str, Any]) -> bool:
    name = getattr(func, "__name__", "")
    if kwargs.get("out") is not None or name in _INPLACE_DUNDERS \
            or func is torch.Tensor.__setitem__:
        return True
    if name.startswith("__i") and name.endswith("__") and name not in ("__index__", "__int__",
                                                                      "__iter__"):
        return True  # __iadd__, __imul__...
    return name.endswith("_") and not name.endswith("__")


def _differentiable(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and (value.is_floating_point() or value.is_complex())


class _DualMode(TorchFunctionMode):
    """Propagates the level's tangents through every public ``torch`` call."""

    def __init__(self, level: _Level) -> None:
        self._level = level

    def __torch_function__(self, func: Callable[..., Any], types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        level = self._level
        leaves, spec = _pytree.tree_flatten((args, kwargs))
        dual_at = [i for i, leaf in enumerate(leaves)
                   if isinstance(leaf, torch.Tensor) and level.tangent_of(leaf) is not None]
        if not dual_at or getattr(func, "__name__", "") in _PASS_THROUGH:
            return func(*args, **kwargs)
        if _is_inplace(func, kwargs):
            raise NotImplementedError(
                f"forward AD: in-place or out= call '{_name(func)}' on a dual tensor is not "
                f"supported in Plait; use the out-of-place form")
        return _propagate(func, leaves, spec, dual_at, level)


def _propagate(func: Callable[..., Any], leaves: list[Any], spec: Any, dual_at: list[int],
               level: _Level, name: str | None = None) -> Any:
    """Run ``func`` on the flattened arguments and give its outputs their tangents."""
    name = name or _name(func)
    originals = [leaves[i] for i in dual_at]
    tangents = [level.tangent_of(t) for t in originals]
    # a tensor autograd can differentiate with respect to: the dual tensor itself when it
    # already takes part in autograd, so the output stays on the caller's graph
    with torch.enable_grad():
        wrt = [t if t.requires_grad else t.detach().requires_grad_(True) for t in originals]
        call_leaves = list(leaves)
        for i, w in zip(dual_at, wrt):
            call_leaves[i] = w
        call_args, call_kwargs = _pytree.tree_unflatten(call_leaves, spec)
        out = func(*call_args, **call_kwargs)
    # whether the caller's own tensors (dual or not: a module's weights) take part in autograd
    caller_tracks = torch.is_grad_enabled() and any(
        isinstance(leaf, torch.Tensor) and leaf.requires_grad for leaf in leaves)
    out_leaves, out_spec = _pytree.tree_flatten(out)
    diff_idx = [i for i, o in enumerate(out_leaves) if _differentiable(o) and o.requires_grad]
    out_tangents: dict[int, torch.Tensor] = {}
    if diff_idx:
        out_tangents = _jvp(name, [out_leaves[i] for i in diff_idx], wrt, tangents, diff_idx,
                            create_graph=caller_tracks or any(t.requires_grad for t in tangents))
    if not caller_tracks:
        # the grad-requiring stand-ins were ours: the outputs take no part in autograd
        out_leaves = [o.detach() if isinstance(o, torch.Tensor) and o.requires_grad else o
                      for o in out_leaves]
    for i, tangent in out_tangents.items():
        level.set_tangent(out_leaves[i], tangent)
    return _pytree.tree_unflatten(out_leaves, out_spec)


def _jvp(name: str, outs: list[torch.Tensor], wrt: list[torch.Tensor],
         tangents: list[torch.Tensor], positions: list[int],
         create_graph: bool) -> dict[int, torch.Tensor]:
    """Tangents of ``outs`` (keyed by ``positions``): the derivative, with respect to a zero
    cotangent ``u``, of ``<vjp(u), tangents>``."""
    from torch.autograd import grad as _grad

    with torch.enable_grad():
        us = [torch.zeros_like(o).requires_grad_(True) for o in outs]
        try:
            vjps = _grad(outs, wrt, grad_outputs=us, create_graph=True, allow_unused=True)
        except RuntimeError as err:
            raise RuntimeError(f"forward AD: no derivative of '{name}' is available: "
                               f"{err}") from err
        pairs = [(v, t) for v, t in zip(vjps, tangents) if v is not None]
        if not pairs:
            return {p: torch.zeros_like(o) for p, o in zip(positions, outs)}
        if any(not v.requires_grad for v, _ in pairs):
            raise NotImplementedError(f"forward AD: the derivative of '{name}' cannot be "
                                      f"propagated (its backward is not differentiable)")
        try:
            jvps = _grad([v for v, _ in pairs], us, grad_outputs=[t for _, t in pairs],
                         create_graph=create_graph, allow_unused=True)
        except RuntimeError as err:
            raise NotImplementedError(f"forward AD: the derivative of '{name}' cannot be "
                                      f"propagated: {err}") from err
    result: dict[int, torch.Tensor] = {}
    for p, o, j in zip(positions, outs, jvps):
        result[p] = torch.zeros_like(o) if j is None else (j if create_graph else j.detach())
    return result
