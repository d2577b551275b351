"""The ``__torch_function__`` protocol's machinery (the public face is :mod:`torch.overrides`).

A call of a public ``torch`` function or ``Tensor`` method on an argument whose type defines
``__torch_function__`` (a Tensor subclass that keeps the default, or overrides it; any
tensor-like object), or inside a :class:`~torch.overrides.TorchFunctionMode`, is handed to that
override instead of running.

Function identity never changes: each public module-level function (``torch.*``,
``torch.linalg``, ``torch.nn.functional``) is wrapped once, when its namespace is gathered or
loaded (:func:`wrap_namespace`), by an entry whose cost while no override can exist is one
process-wide flag read. :func:`install` raises that flag the first time the protocol can
matter (a Tensor subclass keeping ``__torch_function__`` is defined, a mode is entered, or
``torch.overrides`` is imported) and only then puts entries in front of the ``Tensor`` methods
(class attributes, so no captured reference changes). After it, a call with plain tensors pays
one process-wide counter read and a scan of its arguments' classes.
"""

from __future__ import annotations

import functools
import sys
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ._core import tensor as _tensor, upcalls
from ._core.tensor import Tensor, _disabled_torch_function_impl


class _Local(threading.local):
    """This thread's TorchFunctionMode stack and disable depths."""

    def __init__(self) -> None:
        self.modes: list[Any] = []
        self.subclass_disabled = 0
        self.all_disabled = 0


class _Counts:
    """Process-wide: how many modes are entered and how many disable blocks are open on all
    threads. While both are zero an entry reads no thread-local state."""

    __slots__ = ("disabled", "modes")

    def __init__(self) -> None:
        self.modes = 0
        self.disabled = 0


_local = _Local()
_counts = _Counts()
_lock = threading.RLock()
_installed = False


class _Possible:
    """Process-wide: whether an override can exist yet (set once by :func:`install`)."""

    __slots__ = ("on",)

    def __init__(self) -> None:
        self.on = False


_possible = _Possible()

# class -> 0 (no override), 1 (overrides: a relevant argument), 2 (a list or tuple to look into)
_KIND: dict[type, int] = {Tensor: 0, int: 0, float: 0, bool: 0, type(None): 0, str: 0,
                          list: 2, tuple: 2}

# Tensor dunders that are ops (and take part in the protocol); other dunders are plumbing.
_OP_DUNDERS = frozenset(
    f"__{name}__" for name in (
        "abs", "neg", "pos", "invert", "add", "radd", "iadd", "sub", "rsub", "isub", "mul",
        "rmul", "imul", "matmul", "rmatmul", "imatmul", "truediv", "rtruediv", "itruediv",
        "floordiv", "rfloordiv", "ifloordiv", "mod", "rmod", "imod", "pow", "rpow", "ipow",
        "and", "rand", "iand", "or", "ror", "ior", "xor", "rxor", "ixor", "lshift", "rlshift",
        "ilshift", "rshift", "rrshift", "irshift", "eq", "ne", "lt", "le", "gt", "ge",
        "getitem", "setitem", "len", "iter", "reversed", "contains", "bool", "float", "int",
        "index", "complex", "array", "format",
    )
)

originals: dict[Callable[..., Any], Callable[..., Any]] = {}  # entry -> the function it guards
wrapped_modules: list[str] = []  # the namespaces besides torch whose functions take part


def _kind(cls: type) -> int:
    kind = _KIND.get(cls)
    if kind is None:
        tf = getattr(cls, "__torch_function__", None)
        kind = 0 if tf is None or getattr(tf, "__func__", tf) is _disabled_torch_function_impl \
            else 1
        _KIND[cls] = kind
    return kind


def overloaded_args(relevant: Any) -> list[Any]:
    """The arguments among ``relevant`` (and inside list/tuple arguments) whose type
    overrides ``__torch_function__``: one per type, subclasses before their bases, otherwise
    left to right, as PyTorch orders them."""
    found: list[Any] = []
    seen: list[type] = []
    for a in relevant:
        kind = _kind(a.__class__)
        if kind == 2:
            for x in a:
                if _kind(x.__class__) == 1:
                    _insert(found, seen, x)
        elif kind == 1:
            _insert(found, seen, a)
    return found


def _insert(found: list[Any], seen: list[type], arg: Any) -> None:
    cls = arg.__class__
    if cls in seen:
        return
    at = len(found)
    for i, other in enumerate(found):
        if issubclass(cls, other.__class__):
            at = i
            break
    found.insert(at, arg)
    seen.insert(at, cls)


def _scan(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any] | None:
    """``overloaded_args`` of a call, or None when there are none (the common case, so the
    loop is written for classes that are known plain)."""
    for a in args:
        if _KIND.get(a.__class__) != 0:
            break
    else:
        if not kwargs:
            return None
    found = overloaded_args((*args, *kwargs.values()))
    return found or None


def handle_torch_function(public_api: Callable[..., Any], relevant_args: Any, *args: Any,
                          **kwargs: Any) -> Any:
    """Call the override of ``public_api`` for ``relevant_args``: the innermost
    TorchFunctionMode's, then each overloaded argument type's, until one does not return
    ``NotImplemented``."""
    overloaded = overloaded_args(relevant_args)
    return _dispatch(public_api, overloaded, args, kwargs)


def _dispatch(public_api: Callable[..., Any], overloaded: list[Any], args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> Any:
    types_ = tuple(a.__class__ for a in overloaded)
    loc = _local
    if loc.all_disabled:
        return originals.get(public_api, public_api)(*args, **kwargs)
    if loc.modes:
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types_, args, kwargs)
        if result is not NotImplemented:
            return result
    if loc.subclass_disabled or not overloaded:
        return originals.get(public_api, public_api)(*args, **kwargs)
    for arg in overloaded:
        result = arg.__torch_function__(public_api, types_, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__qualname__", repr(public_api))
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {list(types_)}")


# The numpy keyword names PyTorch's argument parser accepts for its own, in every ATen-backed
# function: torch.sum(x, axis=0, keepdims=True), torch.add(x=a, other=b), torch.mul(x1=a, x2=b).
_NUMPY_NAMES: dict[str, tuple[str, ...]] = {
    "dim": ("axis",),
    "keepdim": ("keepdims",),
    "input": ("x", "a", "x1"),
    "other": ("x2",),
}
_numpy_aliases: dict[Callable[..., Any], dict[str, str]] = {}  # fn -> {numpy name: its own}


def _aliases_of(fn: Callable[..., Any]) -> dict[str, str]:
    """The numpy names ``fn`` can be called with: those of its parameters' that it does not
    itself have as parameters (so a call that uses one could not bind)."""
    aliases = _numpy_aliases.get(fn)
    if aliases is None:
        import inspect

        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = {}
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):
            params = {}  # takes any keyword: nothing fails to bind, nothing to rename
        aliases = {alias: own for own, names in _NUMPY_NAMES.items() if own in params
                   for alias in names if alias not in params}
        _numpy_aliases[fn] = aliases
    return aliases


def _with_own_names(fn: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """``kwargs`` with numpy names renamed to ``fn``'s, or None when none needs renaming."""
    aliases = _aliases_of(fn)
    if not aliases or not any(name in aliases for name in kwargs):
        return None
    renamed = {aliases.get(name, name): value for name, value in kwargs.items()}
    return renamed if len(renamed) == len(kwargs) else None  # both spellings: let it fail


def _entry(fn: Callable[..., Any], numpy_names: bool = True) -> Callable[..., Any]:
    """``fn`` behind the protocol's check (and, with ``numpy_names``, taking the numpy
    keyword names PyTorch's argument parser accepts: a call spelt so fails to bind, and only
    then is retried renamed, so a call spelt with ``fn``'s own names pays nothing)."""

    possible = _possible

    @functools.wraps(fn)
    def entry(*args: Any, **kwargs: Any) -> Any:
        # an override, when there is one, sees the call as written (numpy names included), as
        # in PyTorch; only the calls of fn itself are retried renamed
        try:
            if not possible.on:
                # (without keywords, no empty dict is built for the call)
                return fn(*args, **kwargs) if kwargs else fn(*args)
            if _counts.modes or _counts.disabled:
                loc = _local
                if loc.all_disabled or (not loc.modes and loc.subclass_disabled):
                    return fn(*args, **kwargs)
                if loc.modes:
                    overloaded = overloaded_args((*args, *kwargs.values()))
                else:
                    overloaded = _scan(args, kwargs)
            else:
                overloaded = _scan(args, kwargs)
            if overloaded is None:
                return fn(*args, **kwargs) if kwargs else fn(*args)
        except TypeError:
            renamed = _with_own_names(fn, kwargs) if numpy_names and kwargs else None
            if renamed is None:
                raise
            return fn(*args, **renamed)
        return _dispatch(entry, overloaded, args, kwargs)

    originals[entry] = fn
    return entry


# The Tensor methods that take numpy's names too (x.mean(axis=0, keepdims=True)): the
# reductions numpy code calls with axis=. Each pays one Python call more (~0.15 us here, on
# methods that cost microseconds); the hot methods of models (split, chunk, gather, softmax...)
# are left out, and so are the tier-4 fast paths (sum, amax, amin in torch._core.fast), whose
# numpy names belong in their own signatures, where they cost nothing.
NUMPY_NAME_METHODS = frozenset((
    "all", "aminmax", "any", "argmax", "argmin", "argsort", "count_nonzero", "cummax",
    "cummin", "cumprod", "cumsum", "diff", "kthvalue", "logcumsumexp", "logsumexp", "max",
    "mean", "median", "min", "mode", "nanmean", "nanmedian", "nanquantile", "nansum", "norm",
    "prod", "quantile", "sort", "std", "unique", "unique_consecutive", "var",
))


def numpy_names_method(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The Tensor method ``fn`` taking the numpy keyword names too. A call spelt with ``fn``'s
    own names runs as it is (one call more); only one that fails to bind is retried renamed."""

    @functools.wraps(fn)
    def method(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TypeError:
            renamed = _with_own_names(fn, kwargs) if kwargs else None
            if renamed is None:
                raise
        return fn(*args, **renamed)

    return method


def _public_functions(namespace: dict[str, Any], names: Any) -> Iterator[tuple[str, Any]]:
    for name in names:
        value = namespace.get(name)
        if isinstance(value, types.FunctionType) and value not in originals:
            yield name, value


def wrap_namespace(namespace: dict[str, Any], names: Any, module: str | None = None) -> None:
    """Put the protocol's entry, once and for good, in front of the public functions ``names``
    of ``namespace`` (a module's globals). With ``module``, only functions defined in torch
    (not helpers the module imported from elsewhere) are wrapped."""
    # torch.nn.* functions are Python in PyTorch too, outside its argument parser: they take
    # their own keyword names only
    numpy_names = module is None or not module.startswith("torch.nn")
    for name, fn in list(_public_functions(namespace, names)):
        if module is None or fn.__module__ == module or fn.__module__.startswith("torch."):
            namespace[name] = _entry(fn, numpy_names)


def wrap_module(module: str) -> None:
    """:func:`wrap_namespace` for a loaded module's public functions (its ``__all__``, or
    every name without a leading underscore)."""
    ns = vars(sys.modules[module])
    names = ns.get("__all__", [n for n in ns if not n.startswith("_")])
    wrap_namespace(ns, names, module)
    wrapped_modules.append(module)


# Tensor methods that never consult __torch_function__, as in PyTorch (as_subclass is how an
# override changes a result's class, so it must not be subject to one).
_NOT_OVERRIDABLE_METHODS = frozenset(("as_subclass",))


def _is_torch_function(fn: Callable[..., Any]) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return module == "torch" or module.startswith("torch.")


def install(defining: type | None = None) -> None:
    """Turn the protocol on: raise the process-wide flag the module-level entries read and put
    the entry in front of every public ``Tensor`` method (idempotent, thread-safe).
    ``defining`` is the subclass whose definition turned it on: the methods its class body
    named (``{torch.Tensor.clone: ...}``, as torchvision's tv_tensors list the functions whose
    results they keep wrapped) are swapped for their entries, the functions its override will
    be handed."""
    global _installed
    if _installed:
        return
    with _lock:
        if _installed:
            return
        replaced: dict[Callable[..., Any], Callable[..., Any]] = {}
        from . import _functions  # noqa: F401  (binds the Tensor methods)

        tensor_names = [n for n, v in vars(Tensor).items()
                        if (not n.startswith("_") or n in _OP_DUNDERS)
                        and n not in _NOT_OVERRIDABLE_METHODS]
        for name, fn in list(_public_functions(dict(vars(Tensor)), tensor_names)):
            # torch's own methods only: one a library patched onto Tensor (fastai's set_meta)
            # is plain Python to PyTorch's protocol, called without consulting overrides
            if _is_torch_function(fn):
                replaced[fn] = _entry(fn)
                setattr(Tensor, name, replaced[fn])
        # the view properties, which PyTorch's protocol sees too (modes such as forward AD's
        # must see x.T)
        for name in ("T", "mT", "data"):
            prop = vars(Tensor)[name]
            getter = _entry(prop.fget, numpy_names=False)
            # PyTorch hands an override the property's __get__: overrides log that name
            getter.__name__, getter.__qualname__ = "__get__", f"Tensor.{name}.__get__"
            setattr(Tensor, name, property(getter, prop.fset, prop.fdel, prop.__doc__))
        Tensor.__repr__ = _repr_entry(vars(Tensor)["__repr__"])  # type: ignore[method-assign]
        _possible.on = True
        _installed = True
        if defining is not None:
            for attr, value in list(vars(defining).items()):
                swapped = _with_entries(value, replaced)
                if swapped is not value:
                    setattr(defining, attr, swapped)


def _with_entries(value: Any, replaced: dict[Any, Any]) -> Any:
    """``value`` (a dict, set, list or tuple of functions, as a class body lists them) with
    the Tensor methods in it replaced by their entries; ``value`` itself when none is."""

    def swap(item: Any) -> Any:
        return replaced.get(item, item) if isinstance(item, types.FunctionType) else item

    if isinstance(value, dict):
        if any(swap(k) is not k for k in value):
            return type(value)({swap(k): v for k, v in value.items()})
    elif isinstance(value, (set, frozenset, list)) or type(value) is tuple:
        if any(swap(item) is not item for item in value):
            return type(value)(swap(item) for item in value)
    return value


def _repr_entry(original: Callable[..., str]) -> Callable[..., str]:
    """``Tensor.__repr__`` taking part in the protocol as PyTorch's does: an override or mode
    sees one ``__repr__`` call (with ``tensor_contents``) and not the ops printing makes."""

    def __repr__(self: Tensor, *, tensor_contents: Any = None) -> str:
        loc = _local
        if _possible.on and not loc.all_disabled:
            overloaded = None if loc.subclass_disabled else _scan((self,), {})
            if overloaded or loc.modes:
                return _dispatch(__repr__, overloaded or [self], (self,),
                                 {"tensor_contents": tensor_contents})
        return original(self)

    originals[__repr__] = lambda self, tensor_contents=None: original(self)
    return __repr__


def default_torch_function(cls: type, func: Callable[..., Any], types_: Any, args: Any,
                           kwargs: Any) -> Any:
    """``Tensor.__torch_function__``: run ``func`` with subclass dispatch off, then give
    tensor results the class ``cls`` (unless ``func`` is one PyTorch never wraps)."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types_):
        return NotImplemented
    with disable_subclass():
        result = func(*args, **kwargs)
    if func in nowrap_functions():
        return result
    return convert(result, cls)


@functools.cache
def nowrap_functions() -> frozenset[Any]:
    """Functions whose results the default ``__torch_function__`` returns as they are."""
    return frozenset((Tensor._base.__get__, Tensor.grad.__get__, Tensor._grad.__get__))


def convert(result: Any, cls: type) -> Any:
    """``result`` with each tensor in it (through tuples and lists) an instance of ``cls``."""
    if cls is Tensor:
        return result
    if isinstance(result, Tensor):
        return result if isinstance(result, cls) else result.as_subclass(cls)
    if isinstance(result, (tuple, list)):
        items = [convert(r, cls) for r in result]
        if hasattr(result, "_make"):  # a named tuple
            return result._make(items)
        return type(result)(items)
    return result


@contextmanager
def disable_subclass() -> Iterator[None]:
    """Subclass overrides off on this thread (modes still apply)."""
    _local.subclass_disabled += 1
    with _lock:
        _counts.disabled += 1
    try:
        yield
    finally:
        _local.subclass_disabled -= 1
        with _lock:
            _counts.disabled -= 1


@contextmanager
def disable_all() -> Iterator[None]:
    """Every override off on this thread, modes included."""
    _local.all_disabled += 1
    with _lock:
        _counts.disabled += 1
    try:
        yield
    finally:
        _local.all_disabled -= 1
        with _lock:
            _counts.disabled -= 1


def push_mode(mode: Any) -> None:
    """Enter a TorchFunctionMode on this thread."""
    install()
    _local.modes.append(mode)
    with _lock:
        _counts.modes += 1


def pop_mode() -> Any:
    """Leave the innermost TorchFunctionMode of this thread and return it."""
    if not _local.modes:
        raise RuntimeError("no TorchFunctionMode is active on this thread")
    mode = _local.modes.pop()
    with _lock:
        _counts.modes -= 1
    return mode


def mode_stack() -> list[Any]:
    """This thread's TorchFunctionMode stack, outermost first (a copy)."""
    return list(_local.modes)


@contextmanager
def _pop_mode_temporarily() -> Iterator[Any]:
    mode = pop_mode()
    try:
        yield mode
    finally:
        push_mode(mode)


def wrapper_shell(cls: type, shape: tuple[Any, ...], strides: Any, storage_offset: Any,
                  dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    """``Tensor._make_wrapper_subclass``: metadata on ``device`` over a storage that holds no
    memory (a meta allocation), so nothing can read data through the shell itself."""
    from ._core import alloc as _alloc, config as _config, storage as _storage

    dt = dtype if dtype is not None else _config.get_default_dtype()
    dev = _alloc.device_of(device)
    stride = (_tensor.contiguous_strides(shape) if strides is None
              else _tensor._shape_arg((strides,)))
    offset = 0 if storage_offset is None else storage_offset
    extent = _tensor.storage_extent(shape, stride) if all(
        isinstance(s, int) for s in shape) else 0
    storage = _storage.allocate((offset + extent) * dt.itemsize, _alloc.device_of("meta"))
    out = cls._make(storage, shape, stride, offset, dt, dev)
    if requires_grad:
        out.requires_grad_(True)
    return out


_tensor.default_torch_function = default_torch_function
upcalls.install(install_torch_function=install, wrapper_shell=wrapper_shell)
