"""``torch.autocast``: mixed precision through the dispatcher's ``Autocast`` key.

Inside ``with torch.autocast(device_type, dtype):`` the aten operators that the device's list
in :mod:`torch.amp._policy` names ``lower`` run with their floating inputs cast to ``dtype``,
those named ``fp32`` with half-precision inputs cast to float32, and those named ``promote`` in
the widest floating dtype among their inputs, for calls whose tensors are on ``device_type``.
The CPU has its own lists, as in PyTorch; other devices share the accelerator lists. Composite
functions that PyTorch lists as operators (the nn losses) opt in with
:func:`torch.amp._composite.composite`.
The casts are ordinary ``_to_copy`` calls, so autograd records
them and gradients come back in the inputs' dtypes. float64 tensors are never cast.

What a device supports comes from the backend registry (its ``"amp"`` capability and
``amp_dtypes``, whose first entry is the default dtype): no device type is special here.

Cost: none while no autocast region is enabled. Entering one raises the dispatcher's
process-wide counters, so that calls take the full path through the Autocast key (whose kernels
read this thread's state) and the fast tiers step aside, until it is left.
"""

from __future__ import annotations

import functools
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from torch import _functions
from torch._core import (
    dispatch as _dispatch,
    dtype as _dtype,
    promotion as _promotion,
    registry as _registry,
)
from torch._core.tensor import Tensor

from . import _policy

__all__ = [
    "autocast",
    "clear_autocast_cache",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
]

_CASTABLE = frozenset((_dtype.float16, _dtype.bfloat16, _dtype.float32))
_HALVES = frozenset((_dtype.float16, _dtype.bfloat16))


class _Local(threading.local):
    """This thread's autocast state."""

    def __init__(self) -> None:
        self.enabled: dict[str, _dtype.dtype] = {}  # device type -> dtype, while enabled
        self.dtypes: dict[str, _dtype.dtype] = {}  # device type -> dtype set (enabled or not)
        self.cache_enabled = True
        self.cache: dict[tuple[int, _dtype.dtype], tuple[Any, int, Tensor]] = {}
        self.depth = 0  # nested autocast blocks (the cache lives as long as the outermost)
        self.excluded = 0  # inside an autocast kernel: the ops it runs are not cast again


_local = _Local()


# -- the registry's answers --------------------------------------------------------------


def is_autocast_available(device_type: str) -> bool:
    """Whether the backend of ``device_type`` declares autocast support."""
    return bool(_registry.amp_dtypes(device_type))


def _supported(device_type: str) -> tuple[_dtype.dtype, ...]:
    return tuple(getattr(_dtype, name) for name in _registry.amp_dtypes(device_type))


def _check_device(device_type: str) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if not is_autocast_available(device_type):
        raise RuntimeError(
            f"User specified an unsupported autocast device_type '{device_type}': its backend "
            "does not declare autocast support (the 'amp' capability and amp_dtypes).")


# -- state ----------------------------------------------------------------------------------


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` on this thread (PyTorch's no-argument form
    asks about ``cuda``)."""
    return (device_type or "cuda") in _local.enabled


def get_autocast_dtype(device_type: str) -> _dtype.dtype:
    """The dtype autocast uses on ``device_type`` (the backend's default until set)."""
    dt = _local.dtypes.get(device_type)
    if dt is None:
        supported = _supported(device_type)
        if not supported:
            _check_device(device_type)
        dt = supported[0]
    return dt


def set_autocast_dtype(device_type: str, dtype: _dtype.dtype) -> None:
    """Set the dtype autocast uses on ``device_type`` on this thread."""
    _local.dtypes[device_type] = dtype
    if device_type in _local.enabled:
        _local.enabled[device_type] = dtype


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for ``device_type`` on this thread."""
    loc = _local
    if enabled and device_type not in loc.enabled:
        loc.enabled[device_type] = get_autocast_dtype(device_type)
        _count(+1)
    elif not enabled and device_type in loc.enabled:
        del loc.enabled[device_type]
        _count(-1)


def _count(step: int) -> None:
    # One count per (thread, device type) with autocast on: the dispatcher's full path and no
    # fast tiers while any is on.
    _dispatch.count_region(step)


def is_autocast_cache_enabled() -> bool:
    return _local.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _local.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop the casts of weights kept for this thread's autocast region."""
    _local.cache.clear()


# -- the context manager ------------------------------------------------------------------


class autocast:
    """``with torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None):``
    runs the listed ops of that device in ``dtype`` (the device's default when None). Also a
    decorator. A dtype the device does not support warns and disables autocast, as PyTorch
    does."""

    def __init__(self, device_type: str, dtype: _dtype.dtype | None = None,
                 enabled: bool = True, cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self._enabled = bool(enabled)
        # `autocast("cuda", enabled=torch.cuda.is_available())` on a machine without it: a
        # region that changes nothing
        self._noop = not self._enabled and not is_autocast_available(device_type)
        if self._noop:
            self.fast_dtype = dtype
            self._cache_enabled = bool(cache_enabled)
            return
        _check_device(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None \
            else bool(cache_enabled)
        if self._enabled and self.fast_dtype not in _supported(device_type):
            names = ", ".join(str(d) for d in _supported(device_type))
            warnings.warn(
                f"In {device_type} autocast, but the target dtype {self.fast_dtype} is not "
                f"supported (supported: {names}). Disabling autocast.", UserWarning,
                stacklevel=2)
            self._enabled = False

    def __enter__(self) -> autocast:
        loc = _local
        if self._noop:
            return self
        self._prev = (self.device in loc.enabled, loc.dtypes.get(self.device),
                      loc.cache_enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        set_autocast_enabled(self.device, self._enabled)
        loc.cache_enabled = self._cache_enabled
        loc.depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        if self._noop:
            return
        loc = _local
        loc.depth -= 1
        if loc.depth == 0:
            loc.cache.clear()
        was_enabled, prev_dtype, loc.cache_enabled = self._prev
        set_autocast_enabled(self.device, was_enabled)
        if prev_dtype is None:
            loc.dtypes.pop(self.device, None)
        else:
            set_autocast_dtype(self.device, prev_dtype)

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)

        return decorated


# -- the Autocast key's kernels -------------------------------------------------------------


def _call_device_type(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    for t in _dispatch._tensors(args, kwargs):
        return t._device.type
    return None


def _cast(x: Any, device_type: str, target: _dtype.dtype, from_: frozenset[Any]) -> Any:
    """``x`` in ``target`` when it is a tensor of a dtype in ``from_`` on ``device_type``
    (through lists and tuples); anything else as it is."""
    if isinstance(x, Tensor):
        if x._dtype is target or x._dtype not in from_ or x._device.type != device_type:
            return x
        loc = _local
        weight = loc.cache_enabled and x.requires_grad and x.grad_fn is None
        if weight:  # a leaf weight: cast once per region, as PyTorch caches it
            hit = loc.cache.get((id(x), target))
            if hit is not None and hit[0]() is x and hit[1] == x._version:
                return hit[2]
        out = x.to(target)
        if weight:
            loc.cache[(id(x), target)] = (weakref.ref(x), x._version, out)
        return out
    if isinstance(x, (list, tuple)):
        return type(x)(_cast(v, device_type, target, from_) for v in x)
    return x


def _widest(args: tuple[Any, ...], kwargs: dict[str, Any], device_type: str) -> _dtype.dtype:
    """The widest castable floating dtype among the call's tensors on ``device_type``."""
    widest = None
    for t in _dispatch._tensors(args, kwargs):
        if t._dtype in _CASTABLE and t._device.type == device_type:
            widest = t._dtype if widest is None else _promotion.promote_types(widest, t._dtype)
    return widest or _dtype.float32


def _targets(policy: str, args: tuple[Any, ...], kwargs: dict[str, Any], device_type: str,
             lower: _dtype.dtype) -> tuple[_dtype.dtype, frozenset[Any]]:
    """The dtype a policy casts to, and the dtypes it casts from."""
    if policy == "lower":
        return lower, _CASTABLE
    if policy == "fp32":
        return _dtype.float32, _HALVES
    return _widest(args, kwargs, device_type), _CASTABLE  # promote


def _run_under_policy(name: str, run: Callable[..., Any], args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> Any:
    """Call ``run`` with the arguments cast as the device's list says for ``name``; the ops
    ``run`` is written in are not cast again."""
    loc = _local
    device_type = _call_device_type(args, kwargs)
    lower = loc.enabled.get(device_type) if device_type is not None else None
    policy = _policy.policy_of(device_type, name) if lower is not None else None
    if policy is None:
        return run(*args, **kwargs)
    if policy != "keep":
        target, from_ = _targets(policy, args, kwargs, device_type, lower)
        args = tuple(_cast(a, device_type, target, from_) for a in args)
        kwargs = {k: _cast(v, device_type, target, from_) for k, v in kwargs.items()}
    loc.excluded += 1
    try:
        return run(*args, **kwargs)
    finally:
        loc.excluded -= 1


def _kernel(op: _dispatch.Operator, name: str) -> Callable[..., Any]:
    def below(*args: Any, **kwargs: Any) -> Any:
        return _dispatch.redispatch_below_autocast(op, args, kwargs)

    def kernel(*args: Any, **kwargs: Any) -> Any:
        loc = _local
        if loc.enabled and not loc.excluded:
            return _run_under_policy(name, below, args, kwargs)
        return _dispatch.redispatch_below_autocast(op, args, kwargs)

    kernel.__name__ = f"autocast_{op.name}"
    return kernel


def _register() -> None:
    """Register the Autocast kernel of every overload of every listed op that exists."""
    assert _functions.__all__  # the op surface is loaded: core's aten operators exist
    for op in _dispatch.operators("aten"):
        base, _, overload = op.name.partition(".")
        if base not in _policy.LISTED or base.endswith("_") or overload.startswith("out") or \
                op.has_kernel(_dispatch.AUTOCAST):
            continue
        op.register(_dispatch.AUTOCAST, _kernel(op, base))


_register()
