"""The eager hot path: tiers in front of the generic dispatcher path (docs/architecture.md,
"The op path").

A tier is taken only when it gives exactly what the generic path gives, and every test of the
op surface runs through both (``tests/test_fast_path.py`` compares them case by case). What a
tier needs is decided once per interned :class:`~torch._core.alloc.Layout` and cached on it, so the
per-call work is a few slot reads, identity tests and one native call that allocates the
output and runs the kernel (the backend's ``hookspecs.FastPath``):

1. same layout: two contiguous tensors of one interned layout (``a + b``);
2. a Python number operand on a floating tensor (``a + 1.0``, ``2.0 * a``);
3. a cached broadcast plan for two different interned layouts of one dtype
   (``(2, 4) + (4,)``);
4. unary ops whose result keeps the dtype (``a.exp()``, ``-a``), ``a.sum()`` of a
   floating tensor, and ``sum``/``amax``/``amin`` over the last dimension of a float32/float64
   tensor;
5. tier 1 with inputs that require grad: the same native call, then the node the op's
   Autograd kernel would record (``autograd._nodes.binary_node``).

Every tier requires: plain ``Tensor`` operands, no dispatch mode and no inference mode active
(read from the process-wide counters, not thread-locals), kernels nobody has overridden, and a
backend with a fast path serving the dtype; tiers 1-4 also need operands that require no grad,
tier 5 no thread with grad disabled. Anything else — and any ``None`` from the backend — goes
to the generic path.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from . import config as _config, dispatch as _dispatch, dtype as _dtype
from .alloc import PRIMS, Layout, _interned
from .storage import _UNSET, UntypedStorage
from .tensor import Tensor, plain_tensor_classes as _PLAIN

_state = _config.state
_new = object.__new__
# torch.autograd._nodes and its binary_node: installed by autograd when it loads (core does
# not import autograd; no tier records a node before it has).
autograd_nodes: Any = None
_binary_node: Any = None

# Tier 2 only for these: a Python number converts to them exactly as the generic path's 0-d
# operand does (float16/bfloat16 would round twice through float32; integer dtypes have their
# own overflow rules for numbers).
_SCALAR_DTYPES = frozenset((_dtype.float32, _dtype.float64))
# Binary primitives on floating layouts only (true division promotes integers to float).
_FLOATING_ONLY = frozenset(("div",))
_EXACT = 2**53  # ints up to this convert to float64 exactly, as the generic path's do
_FLOATING = frozenset((_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64))


def wrap(handle: Any, lay: Layout) -> Tensor:
    """A new contiguous tensor of layout ``lay`` over the memory ``handle`` a fast entry point
    returned (what ``_alloc.from_layout`` builds, without the allocator round trip)."""
    st = _new(UntypedStorage)
    st._handle = handle
    st._nbytes = lay.nbytes
    st._device = lay.device
    st._runtime = lay.runtime
    st._ptr = handle.ptr
    st._hostbuf = _UNSET
    t = _new(Tensor)
    t._storage = st
    t._shape = lay.shape
    t._stride = lay.stride
    t._offset = 0
    t._dtype = lay.dtype
    t._device = lay.device
    t._vc = [0]
    t._base = None
    t._grad = None
    t.grad_fn = None
    t._requires_grad = False
    t._interned_layout = lay
    t._geometry = None
    return t


def _unchanged(lay: Layout, aten: _dispatch.Operator, prim: str) -> bool:
    """Whether the generic path would run ``aten``'s core composite and the backend's own
    kernel of ``prim`` on ``lay``'s device: no library has overridden either since. (The
    cached answers are dropped on every registration: see ``Layout.forget_fast``.)"""
    key = lay.runtime.dispatch_key
    mine = lay.fast.kernels.get(prim)
    return (mine is not None and _dispatch.registered(getattr(PRIMS, prim).resolve(key)) is mine
            and aten.resolve(key) is aten.kernels.get(_dispatch.COMPOSITE_EXPLICIT))


def _binary_code(lay: Layout, aten: _dispatch.Operator, prim: str) -> int:
    """The backend's op code of binary ``prim`` for tensors of ``lay``, or -1 (no tier)."""
    codes = lay.fast_codes
    code = codes.get(prim)
    if code is None:
        code = -1
        if lay.dtype is not _dtype.bool_ and (
                prim not in _FLOATING_ONLY or lay.dtype in _FLOATING) and \
                _unchanged(lay, aten, prim):
            code = lay.fast.binary_ops.get(prim, -1)
        codes[prim] = code
    return code


def _plan(lay: Layout, other: Layout, prim: str, code: int) -> Any:
    """The cached broadcast plan of ``prim`` between ``lay`` and ``other`` (and the output's
    layout), or False when the pair takes the generic path."""
    key = (prim, other)
    entry = lay.fast_plans.get(key)
    if entry is None:
        entry = False
        if other.dtype is lay.dtype and other.device == lay.device:
            shape = _broadcast(lay.shape, other.shape)
            if shape is not None:
                out = _interned(shape, lay.dtype, lay.device)
                if out is not None:
                    plan = lay.fast.broadcast_plan(code, lay.dcode, out.nbytes, shape,
                                                   _expanded(lay, shape), _expanded(other, shape))
                    entry = (plan, out)
        if len(lay.fast_plans) > 64:
            lay.fast_plans.clear()
        lay.fast_plans[key] = entry
    return entry


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            return None  # the generic path raises the error
        out.append(y if x == 1 else x)
    return tuple(out)


def _expanded(lay: Layout, shape: tuple[int, ...]) -> list[int]:
    """``lay``'s contiguous strides expanded (stride 0) to ``shape``."""
    lead = len(shape) - len(lay.shape)
    strides = [0] * lead
    for size, full, st in zip(lay.shape, shape[lead:], lay.stride):
        strides.append(st if size == full else 0)
    return strides


# The keyword arguments the generic path passes the aten op for `a <op> b` (what a node keeps):
# none, as the facades (add, sub, div) leave the schema's defaults out.
_AUTOGRAD_KWARGS: dict[str, dict[str, Any]] = {}


def _node_info(lay: Layout, aten: _dispatch.Operator, kwargs: dict[str, Any]) -> Any:
    """What ``aten``'s Autograd kernel records (``_nodes.hot_info``) for two inputs of
    layout ``lay``, or False when that kernel is not core's own (a library registered
    another)."""
    kernel = aten.kernels.get(_dispatch.AUTOGRAD) or _dispatch._autograd_kernel(aten)
    info = None if kernel is None else autograd_nodes.hot_info(kernel, kwargs, lay.meta2)
    return info if info is not None else False


def binary(prim: str, aten: _dispatch.Operator, generic: Callable[[Tensor, Any], Any],
           reflected: bool = False) -> Callable[[Tensor, Any], Any]:
    """``Tensor.__add__`` and friends with tiers 1-3 and 5 in front of ``generic``, which calls
    ``aten`` (whose composite runs primitive ``prim``). ``reflected``: the method computes
    ``other <prim> self`` (``__rsub__``), which only tier 2 serves."""

    kwargs = _AUTOGRAD_KWARGS.get(prim, {})

    # `generic` with a plain tensor operand calls `aten(self, other)` and nothing else (the
    # facades pass no schema defaults): such a call goes to the operator directly, two frames
    # less on the way to its plan (a strided `t + t`).
    direct = not reflected

    def method(self: Tensor, other: Any) -> Any:
        layout = self._interned_layout
        if layout is None or layout.fast is None or self.__class__ is not Tensor or \
                _state.modes_active or _state.inference_active:
            if direct and other.__class__ in _PLAIN and self.__class__ in _PLAIN:
                return aten(self, other)  # (nn.Parameter operands: to their plan as well)
            return generic(self, other)
        if self._requires_grad or (other.__class__ is Tensor and other._requires_grad):
            # tier 5: same layout with grad: the tier-1 result and the node autograd records
            if (other.__class__ is Tensor and other._interned_layout is layout and not reflected
                    and not _state.no_grad_active):
                plan = layout.fast_plans.get(aten)
                if plan is None:
                    info = _node_info(layout, aten, kwargs)
                    code = _binary_code(layout, aten, prim)
                    # the native call with this layout's arguments bound (fewer loads a call)
                    plan = layout.fast_plans[aten] = (
                        info, partial(layout.fast.binary, code, layout.dcode, layout.nbytes,
                                      layout.numel)
                    ) if info and code >= 0 else False
                if plan:
                    h = plan[1](self._storage._ptr, other._storage._ptr)
                    if h is not None:
                        # wrap(h, layout), inlined: this tier's cost is mostly object creation
                        st = _new(UntypedStorage)
                        st._handle = h
                        st._nbytes = layout.nbytes
                        st._device = layout.device
                        st._runtime = layout.runtime
                        st._ptr = h.ptr
                        st._hostbuf = _UNSET
                        out = _new(Tensor)
                        out._storage = st
                        out._shape = layout.shape
                        out._stride = layout.stride
                        out._offset = 0
                        out._dtype = layout.dtype
                        out._device = layout.device
                        out._vc = [0]
                        out._base = None
                        out._grad = None
                        out._interned_layout = layout
                        out._geometry = None
                        _binary_node(plan[0], self, other, out)
                        return out
            if not _state.no_grad_active or _config._local.grad:
                return generic(self, other)
            # grad mode is off (a backward pass, an optimizer step): nothing is recorded, so
            # the tiers below serve the call as if no input required grad
        cls = other.__class__
        if cls is Tensor:
            other_layout = other._interned_layout
            if other_layout is not None and not reflected:
                code = layout.fast_codes.get(prim)  # (_binary_code's cached answer)
                if code is None:
                    code = _binary_code(layout, aten, prim)
                if code >= 0:
                    if other_layout is layout:
                        h = layout.fast.binary(code, layout.dcode, layout.nbytes, layout.numel,
                                               self._storage._ptr, other._storage._ptr)
                        if h is not None:
                            # wrap(h, layout), inlined (tier 1 is most small calls)
                            st = _new(UntypedStorage)
                            st._handle = h
                            st._nbytes = layout.nbytes
                            st._device = layout.device
                            st._runtime = layout.runtime
                            st._ptr = h.ptr
                            st._hostbuf = _UNSET
                            out = _new(Tensor)
                            out._storage = st
                            out._shape = layout.shape
                            out._stride = layout.stride
                            out._offset = 0
                            out._dtype = layout.dtype
                            out._device = layout.device
                            out._vc = [0]
                            out._base = None
                            out._grad = None
                            out.grad_fn = None
                            out._requires_grad = False
                            out._interned_layout = layout
                            out._geometry = None
                            return out
                    else:
                        entry = _plan(layout, other_layout, prim, code)
                        if entry:
                            h = layout.fast.binary_plan(entry[0], self._storage._ptr,
                                                    other._storage._ptr)
                            if h is not None:
                                return wrap(h, entry[1])
        elif (cls is float or (cls is int and -_EXACT <= other <= _EXACT)) and \
                layout.dtype in _SCALAR_DTYPES:
            code = _binary_code(layout, aten, prim)
            if code >= 0:
                h = layout.fast.binary_scalar(code, layout.dcode, layout.nbytes, layout.numel,
                                          self._storage._ptr, other, reflected)
                if h is not None:
                    return wrap(h, layout)
        return generic(self, other)

    method.__name__ = getattr(generic, "__name__", prim)
    return method


def _grad_off() -> bool:
    """Whether grad mode is off in this thread (a call then records nothing, whatever its
    inputs: the tiers serve it as a call without grad)."""
    return _state.no_grad_active and not _config._local.grad


def unary(prim: str, aten: _dispatch.Operator, generic: Callable[..., Any],
          rule: Callable[[_dtype.dtype, str], tuple[_dtype.dtype, _dtype.dtype]]
          ) -> Callable[..., Any]:
    """``torch.exp``/``Tensor.exp`` and friends with tier 4 in front of ``generic`` (which
    calls ``aten``); taken when ``rule`` (the op's dtype rule) keeps the dtype."""
    key = "unary:" + prim

    def code_of(lay: Layout) -> int:
        code = lay.fast_codes.get(key)
        if code is None:
            code = -1
            try:
                same = rule(lay.dtype, prim) == (lay.dtype, lay.dtype)
            except Exception:  # the dtype is refused: the generic path raises the error
                same = False
            if same and _unchanged(lay, aten, prim):
                code = lay.fast.unary_ops.get(prim, -1)
            lay.fast_codes[key] = code
        return code

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        layout = input._interned_layout if input.__class__ is Tensor else None
        if (layout is not None and out is None and layout.fast is not None
                and (not input._requires_grad or _grad_off())
                and not _state.modes_active and not _state.inference_active):
            code = code_of(layout)
            if code >= 0:
                h = layout.fast.unary(code, layout.dcode, layout.nbytes, layout.numel,
                                      input._storage._ptr)
                if h is not None:
                    return wrap(h, layout)
        return generic(input, out=out) if out is not None else generic(input)

    fn.__name__ = fn.__qualname__ = getattr(generic, "__name__", prim)
    fn.__doc__ = generic.__doc__
    return fn


def _last_dim(dim: Any, ndim: int) -> bool:
    """Whether ``dim`` names exactly the last dimension (an int or a one-int list/tuple)."""
    if dim.__class__ in (list, tuple) and len(dim) == 1:
        dim = dim[0]
    return dim.__class__ is int and (dim == -1 or dim == ndim - 1)


def _rows(prim: str, aten: _dispatch.Operator, input: Tensor, keepdim: bool) -> Any:
    """Tier 4 for ``prim`` (sum, amax, amin) over the last dimension of a contiguous float32/
    float64 tensor that requires no grad: the result, or None for the generic path."""
    layout = input._interned_layout if input.__class__ is Tensor else None
    if (layout is None or layout.fast is None or layout.dtype not in _SCALAR_DTYPES
            or input._requires_grad or _state.modes_active or _state.inference_active):
        return None
    key = (prim, keepdim)
    plan = layout.fast_plans.get(key)
    if plan is None:
        plan = False
        shape = layout.shape
        code = getattr(layout.fast, "reduce_ops", {}).get(prim)
        if code is not None and shape and layout.numel and _unchanged(layout, aten, prim):
            lay = _interned(shape[:-1] + ((1,) if keepdim else ()), layout.dtype, layout.device)
            plan = (code, layout.numel // shape[-1], shape[-1], lay)
        layout.fast_plans[key] = plan
    if not plan:
        return None
    code, rows, cols, lay = plan
    h = layout.fast.reduce_rows(code, layout.dcode, layout.dtype.itemsize, rows, cols,
                                input._storage._ptr)
    return None if h is None else wrap(h, lay)


def _numpy_names(name: str, dim: Any, keepdim: bool, axis: Any, keepdims: bool | None
                 ) -> tuple[Any, bool]:
    """``dim``/``keepdim`` given under numpy's names ``axis``/``keepdims`` (not both spellings)."""
    if axis is not None:
        if dim is not None and dim != ():
            raise TypeError(f"{name}() received an invalid combination of arguments: both "
                            "'dim' and its alias 'axis'")
        dim = axis
    if keepdims is not None:
        keepdim = bool(keepdims)
    return dim, keepdim


def sum_method(aten: _dispatch.Operator, generic: Callable[..., Any]) -> Callable[..., Any]:
    """``Tensor.sum`` with tier 4: the full sum of a floating tensor, in its dtype, and the sum
    over the last dimension (see :func:`_rows`)."""

    def fn(input: Tensor, dim: Any = None, keepdim: bool = False, *,
           dtype: _dtype.dtype | None = None, out: Tensor | None = None, axis: Any = None,
           keepdims: bool | None = None) -> Tensor:
        if axis is not None or keepdims is not None:  # numpy's names, as PyTorch takes them
            dim, keepdim = _numpy_names("sum", dim, keepdim, axis, keepdims)
        layout = input._interned_layout if input.__class__ is Tensor else None
        if (layout is not None and dim is None and dtype is None and out is None and not keepdim
                and layout.fast is not None and layout.dtype in _FLOATING
                and not input._requires_grad and not _state.modes_active
                and not _state.inference_active):
            scalar = layout.fast_plans.get("sum")
            if scalar is None:
                scalar = layout.fast_plans["sum"] = (
                    _unchanged(layout, aten, "sum") and _interned((), layout.dtype, layout.device))
            if scalar:
                h = layout.fast.sum_all(layout.dcode, layout.dtype.itemsize, layout.numel,
                                        input._storage._ptr)
                if h is not None:
                    return wrap(h, scalar)
        elif dim is not None and dtype is None and out is None and layout is not None:
            if _last_dim(dim, len(layout.shape)):
                result = _rows("sum", aten, input, keepdim)
                if result is not None:
                    return result
            if not _state.modes_active:
                # what `generic` calls for a plain tensor, without its frames and with the
                # schema's default dtype left out (no mode sees the call; its plan key is
                # shorter): `x.sum(0)` is a plan lookup and one native call
                return aten(input, dim, keepdim)
        return generic(input, dim, keepdim, dtype=dtype, out=out)

    fn.__name__ = fn.__qualname__ = "sum"
    fn.__doc__ = generic.__doc__
    return fn


def extreme_method(prim: str, aten: _dispatch.Operator,
                   generic: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.amax``/``amin`` (and the methods) with tier 4 over the last dimension."""

    def fn(input: Tensor, dim: Any = (), keepdim: bool = False, *,
           out: Tensor | None = None, axis: Any = None, keepdims: bool | None = None) -> Tensor:
        if axis is not None or keepdims is not None:  # numpy's names, as PyTorch takes them
            dim, keepdim = _numpy_names(prim, dim, keepdim, axis, keepdims)
        if out is None and input.__class__ is Tensor and input._interned_layout is not None and \
                _last_dim(dim, len(input._shape)):
            result = _rows(prim, aten, input, keepdim)
            if result is not None:
                return result
        return generic(input, dim, keepdim, out=out)

    fn.__name__ = fn.__qualname__ = prim
    fn.__doc__ = generic.__doc__
    return fn
