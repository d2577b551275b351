"""``torch.library``: define operators and register kernels, with PyTorch's API.

::

    lib = torch.library.Library("mylib", "DEF")
    lib.define("scale(Tensor x, float s) -> Tensor")
    lib.impl("scale", lambda x, s: x * s, "CPU")
    torch.ops.mylib.scale(t, 2.0)

    @torch.library.custom_op("mylib::twice", mutates_args=())
    def twice(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @twice.register_fake
    def _(x):
        return torch.empty_like(x)
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

from . import _library_rules
from ._core import dispatch as _dispatch, schema as _schema, upcalls
from ._library_rules import NAMELESS_SCHEMA, EffectType, fallthrough_kernel, wrap_triton

__all__ = ["CustomOpDef", "EffectType", "FakeImplCtx", "Library", "NAMELESS_SCHEMA",
           "OpOverload", "custom_op", "define", "fallthrough_kernel", "get_ctx", "get_kernel",
           "impl", "impl_abstract", "opcheck", "register_autocast", "register_autograd",
           "register_fake", "register_kernel", "register_torch_dispatch", "register_vmap",
           "triton_op", "wrap_triton"]

OpOverload = _dispatch.Operator  # what torch.ops.<ns>.<op>.<overload> is

_KINDS = ("DEF", "IMPL", "FRAGMENT")


class Library:
    """A handle for defining operators in namespace ``ns`` and registering kernels.

    :param ns: the operator namespace (``torch.ops.<ns>``).
    :param kind: ``"DEF"`` (a new namespace, only one per ns), ``"FRAGMENT"`` (more definitions
        for an existing namespace) or ``"IMPL"`` (kernels only).
    :param dispatch_key: the default key ``impl`` registers under.
    """

    _def_namespaces: set[str] = set()

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind!r}; expected one of {', '.join(_KINDS)}")
        if not ns.isidentifier():
            raise ValueError(f"Library namespace must be an identifier, got {ns!r}")
        if kind == "DEF":
            if ns in Library._def_namespaces:
                raise RuntimeError(f"Only a single TORCH_LIBRARY can be used to register the "
                                   f"namespace {ns}; please put all of your definitions in a "
                                   "single Library(..., 'DEF') or use kind='FRAGMENT'.")
            Library._def_namespaces.add(ns)
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defined: list[str] = []
        self._registered: list[tuple[_dispatch.Operator, str, Callable[..., Any]]] = []
        self._undo: list[Callable[[], None]] = []  # registrations outside the dispatcher

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"

    def define(self, schema: str, alias_analysis: str = "", *, tags: Sequence[Any] = ()) -> str:
        """Define an operator from its schema; returns its name."""
        if self.kind == "IMPL":
            raise RuntimeError(f"define() is not allowed on a Library of kind IMPL (ns {self.ns})")
        parsed = _schema.parse(schema)
        full = f"{parsed.name}.{parsed.overload}" if parsed.overload else parsed.name
        _dispatch.define(f"{self.ns}::{full}", parsed)
        self._defined.append(f"{self.ns}::{full}")
        for fn, lib in _pending_fakes.pop(f"{self.ns}::{full}", ()):
            register_fake(f"{self.ns}::{full}", fn, lib=lib)
        return full

    def impl(self, op_name: Any, fn: Callable[..., Any], dispatch_key: str = "",
             *, with_keyset: bool = False) -> None:
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key`` (or the library's
        default key; a device type such as ``"cuda"`` is accepted too)."""
        op = _lookup(op_name, self.ns)
        key = dispatch_key or self.dispatch_key
        if not key:
            raise RuntimeError(f"impl({op.qualname}): no dispatch key given and the Library has "
                               "no default one")
        key = _dispatch.key_for(key)
        if fn is fallthrough_kernel:  # no kernel at this key: calls go on to the keys below
            if op.has_kernel(key):
                op.unregister(key)
            return
        if with_keyset:
            inner = fn

            def fn(*args: Any, **kwargs: Any) -> Any:
                return inner(key, *args, **kwargs)

        op.register(key, fn)
        self._registered.append((op, key, fn))

    def fallthrough(self, op_name: str) -> None:
        """Remove this library's kernel so lookups fall through to lower keys."""
        op = _lookup(op_name, self.ns)
        op.unregister(self.dispatch_key)

    def _destroy(self) -> None:
        """Undo every registration and definition made through this handle."""
        for op, key, fn in self._registered:
            op.unregister(key, fn)
        self._registered.clear()
        while self._undo:
            self._undo.pop()()
        for qualname in self._defined:
            _dispatch.undefine(qualname)
        self._defined.clear()
        if self.kind == "DEF":
            Library._def_namespaces.discard(self.ns)


def _lookup(op: Any, ns: str | None = None) -> _dispatch.Operator:
    if isinstance(op, _dispatch.Operator):
        return op
    if isinstance(op, CustomOpDef):
        return op._op
    if hasattr(op, "default") and isinstance(op.default, _dispatch.Operator):
        return op.default  # an OpOverloadPacket
    if not isinstance(op, str):
        raise TypeError(f"expected an operator name or object, got {type(op).__name__}")
    qualname = op if "::" in op else f"{ns}::{op}"
    found = _dispatch.get(qualname)
    if found is None:
        raise RuntimeError(f"operator {qualname} does not exist; define it first")
    return found


_libs: dict[str, Library] = {}


def _fragment(ns: str) -> Library:
    lib = _libs.get(ns)
    if lib is None:
        lib = _libs[ns] = Library(ns, "FRAGMENT")
    return lib


def define(qualname: str, schema: str, *, lib: Library | None = None,
           tags: Sequence[Any] = ()) -> None:
    """``torch.library.define("mylib::foo", "(Tensor x) -> Tensor")``."""
    ns, _, name = qualname.partition("::")
    if not name:
        raise ValueError(f"expected a qualified name 'namespace::name', got {qualname!r}")
    (lib or _fragment(ns)).define(name + schema, tags=tags)


def _keys(types: Any) -> list[str]:
    if types is None:
        return [_dispatch.COMPOSITE_EXPLICIT]
    if isinstance(types, str):
        types = [types]
    return [_dispatch.key_for(t) for t in types]


def impl(qualname: Any, types: Any, func: Callable[..., Any] | None = None, *,
         lib: Library | None = None) -> Any:
    """Register a kernel for device types/keys ``types``; usable as a decorator. The older
    form ``impl(lib, "name", "CPU")`` (a :class:`Library` first, then the operator's name in
    its namespace and one dispatch key) registers into that library."""
    if isinstance(qualname, Library):
        lib, key = qualname, func if isinstance(func, str) else ""
        op = _lookup(types, lib.ns)

        def register_in_library(fn: Callable[..., Any]) -> Callable[..., Any]:
            lib.impl(op, fn, key)
            return fn

        return register_in_library
    op = _lookup(qualname)

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        target = lib or _fragment(op.namespace)
        for key in _keys(types):
            target.impl(op, fn, key)
        return fn

    return register(func) if func is not None else register


def register_kernel(op: Any, device_types: Any, func: Callable[..., Any] | None = None, *,
                    lib: Library | None = None) -> Any:
    """Register a device kernel for a custom op (``None`` device types: all devices)."""
    return impl(op, device_types, func, lib=lib)


# Fake implementations registered by name before their operator is defined (a package that
# registers them for operators its native library may fail to define, as torchvision does):
# qualified name -> (function, library), applied when the operator is defined.
_pending_fakes: dict[str, list[tuple[Callable[..., Any], Library | None]]] = {}


def register_fake(op: Any, func: Callable[..., Any] | None = None, *,
                  lib: Library | None = None) -> Any:
    """Register the fake (meta) implementation: computes output shapes/dtypes from meta
    tensors without touching data. Used on the ``meta`` device and by compile's tracing. An
    operator named by a string that is not defined yet gets it when it is defined."""
    if isinstance(op, str) and "::" in op and _dispatch.get(op) is None:
        def remember(fn: Callable[..., Any]) -> Callable[..., Any]:
            _pending_fakes.setdefault(op, []).append((fn, lib))
            return fn

        return remember(func) if func is not None else remember
    target_op = _lookup(op)

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        (lib or _fragment(target_op.namespace)).impl(target_op, fn, _dispatch.META)
        return fn

    return register(func) if func is not None else register


def impl_abstract(qualname: Any, func: Callable[..., Any] | None = None, *,
                  lib: Library | None = None, _stacklevel: int = 1) -> Any:
    """The name :func:`register_fake` had before PyTorch 2.4 (warns, then registers)."""
    import warnings

    warnings.warn("`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. "
                  "Please use that instead; we will remove `torch.library.impl_abstract` in a "
                  "future version of PyTorch.", FutureWarning, stacklevel=_stacklevel + 1)
    return register_fake(qualname, func, lib=lib)


def register_vmap(op: Any, func: Callable[..., Any] | None = None, /, *,
                  lib: Library | None = None) -> Any:
    """Say how ``torch.vmap`` runs ``op``: ``func(info, in_dims, *args, **kwargs)`` gets the
    batched arguments (``in_dims``: the batch dim of each argument, or None) and returns
    ``(output, out_dims)``. ``info.batch_size`` and ``info.randomness`` describe the call.
    Usable as a decorator."""
    target = _lookup(op)

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        remove = _library_rules.register_vmap(target, fn)
        if lib is not None:
            lib._undo.append(remove)
        return fn

    return register(func) if func is not None else register


def register_autocast(op: Any, device_type: str, cast_inputs: Any, /, *,
                      lib: Library | None = None) -> None:
    """Inside ``torch.autocast(device_type)``, cast ``op``'s floating tensors on that device to
    ``cast_inputs`` and run it with autocast off."""
    from ._core.dtype import dtype

    if not isinstance(device_type, str):
        raise ValueError(f"register_autocast: device_type must be a str, got "
                         f"{type(device_type).__name__}")
    if not isinstance(cast_inputs, dtype):
        raise ValueError(f"register_autocast: cast_inputs must be a torch.dtype, got "
                         f"{cast_inputs!r}")
    target = _lookup(op)
    kernel = _library_rules.autocast_kernel(target, device_type, cast_inputs)
    (lib or _fragment(target.namespace)).impl(target, kernel, _dispatch.AUTOCAST)


def get_kernel(op: Any, dispatch_key: Any) -> _library_rules.SafeKernelFunction:
    """The kernel that runs ``op`` (a name such as ``"aten::add.Tensor"``, an operator or a
    custom op) for ``dispatch_key``; ``.call_boxed(keyset, *args)`` calls it, so a kernel
    registered over it can hand cases back to it."""
    return _library_rules.get_kernel(_lookup(op), dispatch_key)


# (operator, class) -> the rule register_torch_dispatch gave for them
_torch_dispatch_rules: dict[tuple[_dispatch.Operator, type], Callable[..., Any]] = {}


def register_torch_dispatch(op: Any, torch_dispatch_class: type,
                            func: Callable[..., Any] | None = None, /, *,
                            lib: Library | None = None) -> Any:
    """Say how ``torch_dispatch_class`` (a Tensor subclass with ``__torch_dispatch__``, or a
    ``TorchDispatchMode``) handles ``op`` without editing either: the rule is called as
    ``func(cls_or_mode, op, types, args, kwargs)`` in place of the class's own handler for
    that operator. Usable as a decorator."""
    target = _lookup(op)

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        _hook_torch_dispatch(torch_dispatch_class)
        _torch_dispatch_rules[(target, torch_dispatch_class)] = fn
        return fn

    return register(func) if func is not None else register


def _rule_for(func: Any, klass: type) -> Callable[..., Any] | None:
    for base in klass.__mro__:
        rule = _torch_dispatch_rules.get((func, base))
        if rule is not None:
            return rule
    return None


def _hook_torch_dispatch(klass: type) -> None:
    """Put the rule lookup in front of ``klass.__torch_dispatch__`` (once per class)."""
    if "_torch_dispatch_rules_hooked" in vars(klass):
        return
    from torch.utils._python_dispatch import TorchDispatchMode

    own = vars(klass).get("__torch_dispatch__")
    if issubclass(klass, TorchDispatchMode):
        inherited = own if own is not None else klass.__torch_dispatch__

        def mode_hooked(self: Any, func: Any, types: Any, args: Any = (),
                        kwargs: Any = None) -> Any:
            rule = _rule_for(func, type(self))
            if rule is not None:
                return rule(self, func, types, args, kwargs or {})
            return inherited(self, func, types, args, kwargs)

        klass.__torch_dispatch__ = mode_hooked  # type: ignore[attr-defined]
    else:
        def subclass_hooked(cls: type, func: Any, types: Any, args: Any = (),
                            kwargs: Any = None) -> Any:
            rule = _rule_for(func, cls)
            if rule is not None:
                return rule(cls, func, types, args, kwargs or {})
            if own is not None:
                return own.__get__(None, cls)(func, types, args, kwargs)
            return super(klass, cls).__torch_dispatch__(func, types, args, kwargs)  # type: ignore[misc]

        klass.__torch_dispatch__ = classmethod(subclass_hooked)  # type: ignore[attr-defined]
    klass._torch_dispatch_rules_hooked = True  # type: ignore[attr-defined]


class FakeImplCtx:
    """What :func:`get_ctx` gives a fake implementation: the way to ask for an output size
    that depends on data (``nonzero``'s count)."""

    def new_dynamic_size(self, *, min: int = 0, max: int | None = None) -> Any:
        """A size known only from data. Plait's fake tensors have no unbacked sizes: the
        call raises ``DynamicOutputShapeException``, which compile's capture answers by
        running the operator eagerly (as for ``nonzero``)."""
        from ._subclasses.fake_tensor import DynamicOutputShapeException

        raise DynamicOutputShapeException(
            "new_dynamic_size(): the output size depends on data a FakeTensor does not hold")

    create_unbacked_symint = new_dynamic_size


def get_ctx() -> FakeImplCtx:
    """The context of the fake implementation being run (``ctx.new_dynamic_size()``)."""
    return FakeImplCtx()


def register_autograd(op: Any, backward: Callable[..., Any], /, *,
                      setup_context: Callable[..., Any] | None = None,
                      lib: Library | None = None) -> None:
    """Make ``op`` differentiable with ``backward(ctx, *grad_outputs)``, as PyTorch's does.

    ``setup_context(ctx, inputs, output)`` runs after the forward (``inputs``: every argument
    in schema order) and saves what ``backward`` needs on ``ctx``; ``backward`` returns one
    gradient (or None) per input.
    """
    import torch.autograd

    target = _lookup(op)
    schema = target.schema
    keyword = [a.kwarg_only for a in schema.arguments]

    class _Differentiable(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *inputs: Any) -> Any:
            args = [x for x, kw in zip(inputs, keyword) if not kw]
            kwargs = {a.name: x for a, x in zip(schema.arguments, inputs) if a.kwarg_only}
            output = _dispatch.redispatch_below_autograd(target, *args, **kwargs)
            if setup_context is not None:
                setup_context(ctx, inputs, output)
            return output

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            result = backward(ctx, *grads)
            return result if isinstance(result, tuple) else (result,)

    # the backward node's name, as PyTorch's: GeneratedBackwardFor_mylib_foo_defaultBackward
    _Differentiable.__name__ = _Differentiable.__qualname__ = (
        f"GeneratedBackwardFor_{target.namespace}_{target._opname}_{target._overloadname}")

    def autograd_kernel(*args: Any, **kwargs: Any) -> Any:
        return _Differentiable.apply(*schema.bind(args, kwargs))

    (lib or _fragment(target.namespace)).impl(target, autograd_kernel, _dispatch.AUTOGRAD)


# -- custom_op -----------------------------------------------------------------------------

_TYPE_NAMES = {int: "SymInt", float: "float", bool: "bool", str: "str"}
# Optional[X] written either way: typing.Optional/Union, or PEP 604's ``X | None``
_UNION_ORIGINS = (typing.Union, types.UnionType)


def _annotation_to_type(ann: Any, where: str) -> str:
    from ._core.device import device
    from ._core.dtype import dtype
    from ._core.tensor import Tensor

    if ann is Tensor:
        return "Tensor"
    if ann in _TYPE_NAMES:
        return _TYPE_NAMES[ann]
    if ann is dtype:
        return "ScalarType"
    if ann is device:
        return "Device"
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin in (list, Sequence, typing.Sequence) and args:
        return _annotation_to_type(args[0], where) + "[]"
    if origin in _UNION_ORIGINS and set(args) in ({int, float}, {int, float, bool}):  # Number
        return "Scalar"
    if origin in _UNION_ORIGINS and len(args) == 2 and type(None) in args:
        inner = args[0] if args[1] is type(None) else args[1]
        return _annotation_to_type(inner, where) + "?"
    if ann is type(None) or ann is None:
        return "()"
    raise ValueError(f"custom_op: unsupported type annotation {ann!r} for {where}; use Tensor, "
                     "int, float, bool, str, list[...] or Optional[...]")


def infer_schema(fn: Callable[..., Any], mutates_args: Any) -> str:
    """Build a schema string from ``fn``'s type hints."""
    try:
        hints = typing.get_type_hints(fn)
    except NameError as exc:
        raise ValueError(f"custom_op: cannot resolve the type hints of {fn.__name__}: {exc}") \
            from exc
    sig = inspect.signature(fn)
    mutated = set() if mutates_args in ((), None, "unknown") else set(mutates_args)
    parts = []
    star = False
    for p in sig.parameters.values():
        if p.name not in hints:
            raise ValueError(f"custom_op: parameter '{p.name}' of {fn.__name__} needs a type hint")
        t = _annotation_to_type(hints[p.name], f"parameter '{p.name}'")
        if p.name in mutated:
            t = t.replace("Tensor", "Tensor(a!)", 1)
        if p.kind is inspect.Parameter.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        default = "" if p.default is inspect.Parameter.empty else f"={p.default!r}"
        parts.append(f"{t} {p.name}{default}")
    unknown = mutated - set(sig.parameters)
    if unknown:
        raise ValueError(f"custom_op: mutates_args names unknown parameters {sorted(unknown)}")
    ret = hints.get("return", type(None))
    origin = typing.get_origin(ret)
    if origin is tuple:
        rets = "(" + ", ".join(_annotation_to_type(a, "return") for a in typing.get_args(ret)) + ")"
    else:
        rets = _annotation_to_type(ret, "the return value")
    return f"({', '.join(parts)}) -> {rets}"


class CustomOpDef:
    """What ``@torch.library.custom_op`` returns: callable like the op, with registration
    methods for more devices and for the fake implementation."""

    def __init__(self, qualname: str, fn: Callable[..., Any], schema: str,
                 device_types: Any) -> None:
        ns, _, name = qualname.partition("::")
        self._qualname = qualname
        self._init_fn = fn
        _fragment(ns).define(name + schema)
        self._op = _dispatch.get(qualname)
        register_kernel(self._op, device_types, fn)
        self.__name__ = name
        self.__doc__ = fn.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._op(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def register_fake(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        return register_fake(self._op, fn)

    def register_kernel(self, device_types: Any, fn: Callable[..., Any] | None = None) -> Any:
        return register_kernel(self._op, device_types, fn)

    def register_autograd(self, backward: Callable[..., Any], /, *,
                          setup_context: Callable[..., Any] | None = None) -> None:
        register_autograd(self._op, backward, setup_context=setup_context)

    def register_vmap(self, func: Callable[..., Any] | None = None) -> Any:
        return register_vmap(self._op, func)

    def register_autocast(self, device_type: str, cast_inputs: Any) -> None:
        register_autocast(self._op, device_type, cast_inputs)

    def register_torch_dispatch(self, torch_dispatch_class: type,
                                fn: Callable[..., Any] | None = None) -> Any:
        return register_torch_dispatch(self._op, torch_dispatch_class, fn)

    @property
    def _opoverload(self) -> _dispatch.Operator:
        return self._op

    def set_kernel_enabled(self, device_type: str, enabled: bool = True) -> Any:
        """A context manager: inside it, the kernel registered for ``device_type`` with
        ``register_kernel`` is turned off (``enabled=False``: the op's own function serves
        that device) or back on."""
        import contextlib

        key = _dispatch.key_for(device_type)
        op, default = self._op, self._init_fn

        @contextlib.contextmanager
        def switched() -> Any:
            own = op.kernels.get(key)
            disable = not enabled and own is not None and own is not default
            if disable:
                op.register(key, default)
            try:
                yield
            finally:
                if disable:
                    op.unregister(key, default)

        return switched()


def custom_op(name: str, fn: Callable[..., Any] | None = None, /, *, mutates_args: Any,
              device_types: Any = None, schema: str | None = None) -> Any:
    """Turn a Python function into an operator ``torch.ops.<ns>.<name>``.

    :param name: ``"namespace::name"``.
    :param mutates_args: names of the arguments the function writes to (``()`` for none);
        required, as in PyTorch.
    :param device_types: device types the function serves (default: all).
    :param schema: an explicit schema; inferred from type hints otherwise.
    """
    if "::" not in name:
        raise ValueError(f"custom_op name must be 'namespace::name', got {name!r}")

    def wrap(f: Callable[..., Any]) -> CustomOpDef:
        s = schema if schema is not None else infer_schema(f, mutates_args)
        return CustomOpDef(name, f, s, device_types)

    return wrap(fn) if fn is not None else wrap


def triton_op(name: str, fn: Callable[..., Any] | None = None, /, *, mutates_args: Any,
              schema: str | None = None) -> Any:
    """A custom operator whose implementation launches triton kernels through
    :func:`wrap_triton`. The operator is defined and traceable as any custom op; launching a
    triton kernel raises a RuntimeError on Plait, whose devices do not run triton code."""
    return custom_op(name, fn, mutates_args=mutates_args, schema=schema)


# The handle core gives a backend to register its kernels with (torch._core.registry).
upcalls.install(kernel_library=Library)


# -- opcheck -------------------------------------------------------------------------------

_OPCHECK_TESTS = ("test_schema", "test_autograd_registration", "test_faketensor",
                  "test_aot_dispatch_dynamic")


def _tensors(value: Any) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _clone_inputs(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, (list, tuple)):
        return type(value)(_clone_inputs(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone_inputs(v) for k, v in value.items()}
    return value


def _check_schema(op: _dispatch.Operator, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The arguments the schema does not mark written are unchanged, and the outputs are new
    tensors (no input and no view of one) unless the schema says they alias."""
    import torch

    args, kwargs = _clone_inputs(args), _clone_inputs(kwargs)
    bound = op.schema.bind(args, kwargs)
    before = [[t.detach().clone() for t in _tensors(v)] for v in bound]
    with torch.no_grad():
        out = op(*args, **kwargs)
    for arg, value, saved in zip(op.schema.arguments, bound, before):
        if arg.mutable:
            continue
        for now, then in zip(_tensors(value), saved):
            if not torch.equal(now.detach(), then):
                raise RuntimeError(f"opcheck: {op.qualname} mutated its argument '{arg.name}', "
                                   "which its schema does not mark as written (Tensor(a!))")
    inputs = _tensors(bound)
    aliased = any(r.alias for r in op.schema.returns)
    for t in _tensors(out):
        if not aliased and any(t is x or torch._C._is_alias_of(t, x) for x in inputs):
            raise RuntimeError(f"opcheck: {op.qualname} returned an input or a view of one, "
                               "which its schema does not declare")


def _check_autograd_registration(op: _dispatch.Operator, args: tuple[Any, ...],
                                 kwargs: dict[str, Any]) -> None:
    """An operator called with inputs that require grad has an autograd formula (or
    differentiates through its decomposition)."""
    needs_grad = any(t.requires_grad for t in _tensors((args, kwargs)))
    if not needs_grad:
        return
    if _dispatch.AUTOGRAD in op.kernels or _dispatch.COMPOSITE_IMPLICIT in op.kernels:
        return
    raise RuntimeError(f"opcheck: {op.qualname} was called with inputs that require grad but "
                       "has no autograd formula: register one with "
                       "torch.library.register_autograd")


def _same_metadata(real: Any, fake: Any, what: str) -> None:
    reals, fakes = _tensors(real), _tensors(fake)
    if len(reals) != len(fakes):
        raise RuntimeError(f"opcheck: {what} gave {len(fakes)} tensors, the kernel {len(reals)}")
    for r, f in zip(reals, fakes):
        if (tuple(r.shape), r.dtype) != (tuple(f.shape), f.dtype):
            raise RuntimeError(f"opcheck: {what} gave a {f.dtype} tensor of shape "
                               f"{tuple(f.shape)}; the kernel a {r.dtype} one of {tuple(r.shape)}")


def _check_faketensor(op: _dispatch.Operator, args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> None:
    """The fake (meta) implementation gives the kernel's shapes and dtypes."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    with torch.no_grad():
        real = op(*_clone_inputs(args), **_clone_inputs(kwargs))
    mode = FakeTensorMode()

    def fake(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return mode.from_tensor(value.detach())
        if isinstance(value, (list, tuple)):
            return type(value)(fake(v) for v in value)
        return value

    fake_args = fake(args)
    fake_kwargs = {k: fake(v) for k, v in kwargs.items()}
    with mode, torch.no_grad():
        out = op(*fake_args, **fake_kwargs)
    _same_metadata(real, out, "the fake implementation")


def _check_aot_dispatch_dynamic(op: _dispatch.Operator, args: tuple[Any, ...],
                                kwargs: dict[str, Any]) -> None:
    """The operator traces into a graph (make_fx) whose run matches the eager call."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    flat = [a for a in args]

    def call(*inputs: Any) -> Any:
        return op(*inputs, **kwargs)

    with torch.no_grad():
        eager = op(*_clone_inputs(args), **_clone_inputs(kwargs))
        graph = make_fx(call)(*_clone_inputs(flat))
        traced = graph(*_clone_inputs(flat))
    _same_metadata(eager, traced, "the traced graph")
    for e, t in zip(_tensors(eager), _tensors(traced)):
        if not torch.allclose(e, t, equal_nan=True):
            raise RuntimeError("opcheck: the traced graph's result differs from the eager call")


_OPCHECK_RUNNERS: dict[str, Callable[..., None]] = {
    "test_schema": _check_schema,
    "test_autograd_registration": _check_autograd_registration,
    "test_faketensor": _check_faketensor,
    "test_aot_dispatch_dynamic": _check_aot_dispatch_dynamic,
}


def opcheck(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None, *,
            test_utils: str | Sequence[str] = _OPCHECK_TESTS, raise_exception: bool = True,
            atol: Any = None, rtol: Any = None) -> dict[str, Any]:
    """Check that a custom operator is registered correctly, on sample arguments: its schema
    matches what the kernel does (``test_schema``), inputs that require grad meet an autograd
    formula (``test_autograd_registration``), its fake implementation gives the kernel's
    shapes and dtypes (``test_faketensor``) and it traces (``test_aot_dispatch_dynamic``).
    Returns ``{test: "SUCCESS" or the exception}``; with ``raise_exception`` the first
    failure is raised."""
    target = _lookup(op)
    kwargs = dict(kwargs or {})
    names = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    results: dict[str, Any] = {}
    for name in names:
        runner = _OPCHECK_RUNNERS.get(name)
        if runner is None:
            raise ValueError(f"opcheck: unknown test {name!r}; expected some of "
                             f"{', '.join(_OPCHECK_TESTS)}")
        try:
            runner(target, tuple(args), kwargs)
        except Exception as error:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {error}") from error
            results[name] = error
        else:
            results[name] = "SUCCESS"
    return results


class OpCheckError(Exception):
    """Raised by :func:`opcheck` when one of its tests fails."""
