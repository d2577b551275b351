"""The dispatcher: one table per operator, keyed by dispatch key, consulted in priority order.

Keys, highest priority first: ``Autocast`` (kernels registered by :mod:`torch.amp` cast the
inputs of listed ops inside ``torch.autocast``), ``Autograd``, ``Python`` (dispatch modes:
tracing, fake tensors, ``TorchDispatchMode``; and tensor subclasses defining
``__torch_dispatch__``; below autograd, as in PyTorch), then one backend key per device type
(``CPU``, ``CUDA``, ``NPU``...) and ``Meta``. The Autocast and Python keys cost nothing until
used: a call reads ``_config.state.keys_active``, non-zero only while an autocast region or
dispatch mode is active or a ``__torch_dispatch__`` class exists. Alias keys fill gaps in a
backend's column:
``CompositeExplicitAutograd`` (one backend-agnostic kernel) and ``CompositeImplicitAutograd``
(written in other ops; autograd comes through the decomposition).

A backend key with no kernel of its own falls back to the CPU kernel: tensors are copied to the
CPU, the kernel runs there, mutated arguments and results are copied back, and a warning is
shown once per op. ``TORCH_DEVICE_CPU_FALLBACK=0`` makes that an error.

Resolution of (operator, key) to a callable is cached on the operator and invalidated by any
registration, so a call costs a dict lookup after the first.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

from . import (
    config as _config,
    dtype as _dtype_module,
    registry as _registry,
    schema as _schema,
    sparse as _sparse,
    tags as _tags,
    tensor as _tensor_module,
    upcalls,
)
from .tensor import Tensor

PYTHON = "Python"
AUTOCAST = "Autocast"
AUTOGRAD = "Autograd"
META = "Meta"
COMPOSITE_EXPLICIT = "CompositeExplicitAutograd"
COMPOSITE_IMPLICIT = "CompositeImplicitAutograd"
FUNCTIONALITY_KEYS = (PYTHON, AUTOCAST, AUTOGRAD)
ALIAS_KEYS = (COMPOSITE_EXPLICIT, COMPOSITE_IMPLICIT)

# Device-type names users pass to torch.library (``"cpu"``, ``"cuda"``) -> dispatch keys.
_DEVICE_ALIASES = {"cpu": "CPU", "meta": META, "default": COMPOSITE_EXPLICIT}

_lock = threading.RLock()
_state = _config.state
_ops: dict[str, Operator] = {}
# Arguments that never decide a call's key or whether it needs grad (Operator.__call__'s
# primitive case; a dtype is a cast's target).
_PLAIN_VALUES = frozenset((int, float, bool, complex, str, type(None), _dtype_module.dtype))


class _Local(threading.local):
    """This thread's dispatch modes, and how many regions that need the full path (dispatch
    modes, autocast regions) it has open."""

    def __init__(self) -> None:
        self.modes: list[Any] = []
        self.keys = 0


_local = _Local()


def key_for(name: str) -> str:
    """Normalise a dispatch key or device type name (``"cuda"`` -> ``"CUDA"``)."""
    if name in _DEVICE_ALIASES:
        return _DEVICE_ALIASES[name]
    if name in FUNCTIONALITY_KEYS or name in ALIAS_KEYS or name == META:
        return name
    if name.islower():
        return _registry.dispatch_key(name)
    return name


class OperatorName(str):
    """An operator's name within its namespace (``"add.Tensor"``, ``"relu"``), as a string.

    Calling it gives PyTorch's ``OpOverload.name()``, the qualified name (``"aten::add.Tensor"``):
    dispatch modes written for PyTorch call ``func.name()``, while the dispatcher reads the plain
    string."""

    __slots__ = ("qualname",)

    def __new__(cls, name: str, qualname: str) -> OperatorName:
        self = super().__new__(cls, name)
        self.qualname = qualname
        return self

    def __call__(self) -> str:
        return self.qualname


class Operator:
    """One overload of an operator: ``torch.ops.<ns>.<name>.<overload>``."""

    def __init__(self, qualname: str, schema: _schema.Schema) -> None:
        self.qualname = qualname  # "ns::name" or "ns::name.overload"
        self.namespace, _, name = qualname.partition("::")
        self.name = OperatorName(name, qualname)
        self.schema = schema
        self.kernels: dict[str, Callable[..., Any]] = {}
        # Earlier registrations a later one overrode, so that removing the later one (a
        # Library's _destroy) restores them, as in PyTorch.
        self._shadowed: dict[str, list[Callable[..., Any]]] = {}
        self._resolved: dict[str, Callable[..., Any]] = {}
        self._fallback_warned = False
        # Plans of repeated calls by signature (torch._core.plan): every aten operator that
        # writes no argument keeps plans that run its kernel (``_kernel_plan``); the operators
        # that opted in (``plan.enable``: kernels that are functions of the signature alone)
        # also keep plans that replay their result.
        self._plans: dict[Any, Any] | None = \
            {} if self.namespace == "aten" and not schema.mutated else None
        self._replays = False
        # The decomposition itself, once known to serve every plain call (the operator has
        # only a CompositeImplicitAutograd kernel and differentiates through it): such a call
        # skips the key computation (reset on every (un)registration).
        self._decomposes: Callable[..., Any] | None = None
        # PyTorch's decomposition of an operator that PyTorch writes in others but Plait runs
        # as one (aten::linear): a dispatch mode or __torch_dispatch__ subclass sees the ops
        # PyTorch's would (t + addmm), while plain calls keep the single operator.
        self.python_key_composite: Callable[..., Any] | None = None
        # PyTorch's OpOverload.__name__ names the overload too: "mm.default", "add.Tensor"
        self.__name__ = f"{self._opname}.{self._overloadname}"
        self.__qualname__ = qualname

    @property
    def overloadpacket(self) -> Any:
        """``torch.ops.<namespace>.<name>``: the packet of this operator's overloads (one object
        per name, so code that compares or keys by it works as with PyTorch's)."""
        return upcalls.op_packet(self.namespace, self.name.partition(".")[0])

    @property
    def _opname(self) -> str:
        """The name without its overload (``"add"``), as PyTorch's ``OpOverload._opname``."""
        return self.name.partition(".")[0]

    @property
    def _overloadname(self) -> str:
        """The overload's name, ``"default"`` for the unnamed one (PyTorch's spelling)."""
        return self.name.partition(".")[2] or "default"

    @property
    def _schema(self) -> _schema.FunctionSchema:
        """The operator's schema as PyTorch's ``OpOverload._schema`` shows it (namespaced
        name, typed arguments with alias info); ``schema`` is Plait's own."""
        return _schema.FunctionSchema(self.namespace, self.schema)

    @property
    def tags(self) -> tuple[Any, ...]:
        """The operator's ``torch.Tag``s (``torch.Tag.pointwise in func.tags``)."""
        return _tags.tags_of(self.namespace, self._opname, self.schema)

    def __repr__(self) -> str:
        return (f"<OpOverload(op='{self.namespace}.{self._opname}', "
                f"overload='{self._overloadname}')>")

    def __str__(self) -> str:
        # PyTorch prints an overload as its attribute path: aten.add.Tensor, aten.relu.default
        return f"{self.namespace}.{self._opname}.{self._overloadname}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # The body of `call`, repeated here: every primitive a kernel runs comes through this,
        # and one Python frame less is a measurable share of a small op's cost.
        state = _state
        if state.keys_active and _full_path(args, kwargs):  # the Python or Autocast key
            return call(self, args, kwargs)
        if self._plans is not None:
            result = plan_call(self, args, kwargs)
            if result is not None:
                return result
        fn = self._decomposes
        if fn is not None:
            return fn(*args, **kwargs)
        if not kwargs:
            # The usual primitive call (a kernel's ``PRIMS.fill_(t, 0)``): plain tensors of one
            # device object that require no grad and plain values. _requires_grad and
            # backend_key would say "no grad" and this device's key; one pass here says so
            # without their two calls. Anything else takes them below.
            dev = None
            for a in args:
                cls = a.__class__
                if cls is Tensor:
                    if a._requires_grad:
                        break
                    if dev is None:
                        dev = a._device
                    elif a._device is not dev:
                        break
                elif cls not in _PLAIN_VALUES:
                    break
            else:
                if dev is not None:
                    rt = _registry._runtimes.get(dev._type)
                    if rt is not None:
                        key = rt.dispatch_key
                        fn = self._resolved.get(key)
                        if fn is None:
                            fn = self.resolve(key)
                        return fn(*args)
        if (not state.no_grad_active or _config._local.grad) and \
                _requires_grad(args, kwargs):
            kernel = self.kernels.get(AUTOGRAD) or _autograd_kernel(self)
            if kernel is not None:
                return kernel(*args, **kwargs)
        key = backend_key(args, kwargs)
        fn = self._resolved.get(key)
        if fn is None:
            fn = self.resolve(key)
        return fn(*args, **kwargs)

    def _note_decomposition(self, fn: Callable[..., Any]) -> None:
        """Let plain calls go straight to the decomposition ``fn`` when nothing else could
        serve one: no kernel but the composite (for any backend key), and no Autograd kernel
        now or on a call with grad (asked once: a derivative rule registers it here)."""
        if AUTOGRAD not in self.kernels and _only_implicit(self) \
                and _autograd_kernel(self) is None and self.kernels.get(COMPOSITE_IMPLICIT) is fn:
            self._decomposes = fn
            if not self._replays:
                # a plan would only run the decomposition again, after keying the call
                self._plans = None

    def register(self, key: str, fn: Callable[..., Any]) -> None:
        with _lock:
            k = key_for(key)
            if k in self.kernels:
                self._shadowed.setdefault(k, []).append(self.kernels[k])
            self.kernels[k] = fn
            _invalidate()

    def unregister(self, key: str, fn: Callable[..., Any] | None = None) -> None:
        """Remove ``fn`` (default: the current kernel) from ``key``; the kernel it overrode, if
        any, comes back."""
        with _lock:
            k = key_for(key)
            shadowed = self._shadowed.get(k, [])
            if fn is not None and self.kernels.get(k) is not fn:
                if fn in shadowed:
                    shadowed.remove(fn)
            elif shadowed:
                self.kernels[k] = shadowed.pop()
            else:
                self.kernels.pop(k, None)
            _invalidate()

    def has_kernel(self, key: str) -> bool:
        return key_for(key) in self.kernels

    def resolve(self, key: str) -> Callable[..., Any]:
        """The callable that runs this op for backend ``key`` (cached)."""
        fn = self._resolved.get(key)
        if fn is None:
            fn = self._resolved[key] = self._lookup(key)
            if fn is self.kernels.get(COMPOSITE_IMPLICIT):
                self._note_decomposition(fn)
        return fn

    def _lookup(self, key: str) -> Callable[..., Any]:
        k = self.kernels
        if key in k:
            fn = k[key]
            # A kernel that may raise Decline gets a wrapper that serves the declined call;
            # the others are returned as they are (no cost on their calls).
            return _declinable(self, fn, key) if getattr(fn, "may_decline", False) else fn
        return self._lookup_below(key)

    def _lookup_below(self, key: str, own: Callable[..., Any] | None = None) -> Callable[..., Any]:
        """What serves ``key`` without its own kernel ``own``: the kernel ``own`` overrode
        under the same key (the reference kernel, for the CPU), else a composite, else the
        CPU fallback."""
        k = self.kernels
        shadowed = self._shadowed.get(key) if own is not None else None
        if shadowed:
            return shadowed[-1]
        if key in _sparse.SPARSE_KEYS:
            # a sparse argument: the sparse kernels, or a decomposition into ops that have
            # them; never a dense kernel (nor the CPU fallback), which would read no values
            fn = k.get(_sparse.SPARSE) or k.get(COMPOSITE_IMPLICIT)
            if fn is not None:
                return fn
            available = sorted(k)
            raise NotImplementedError(
                f"Could not run '{self.qualname}' with arguments from the '{key}' backend. "
                f"'{self.qualname}' has no kernel for sparse tensors; it is only available "
                f"for these backends: [{', '.join(available)}].")
        for alias in ALIAS_KEYS:
            if alias in k:
                return k[alias]
        if key not in ("CPU", META):
            if "CPU" not in k:
                _registry.runtime("cpu")  # the CPU's kernels register with its runtime
            if "CPU" in k:
                return _cpu_fallback(self, k["CPU"], key)
        available = sorted(k)
        raise NotImplementedError(
            f"Could not run '{self.qualname}' with arguments from the '{key}' backend. This "
            f"could be because the operator doesn't exist for this backend. '{self.qualname}' is "
            f"only available for these backends: [{', '.join(available)}].")


class Decline(Exception):
    """Raised by a backend kernel marked ``may_decline`` to leave a call to what would serve it
    without that kernel (see ``torch.backends.contract.Decline``). Raise it before writing any
    output."""


def _declinable(op: Operator, fn: Callable[..., Any], key: str) -> Callable[..., Any]:
    try:
        below = op._lookup_below(key, fn)
    except NotImplementedError as exc:
        error = exc

        def below(*args: Any, **kwargs: Any) -> Any:  # nothing else serves it: say so
            raise NotImplementedError(str(error)) from None

    def declinable(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Decline:
            return below(*args, **kwargs)

    declinable.__name__ = getattr(fn, "__name__", op.name)
    declinable.__wrapped__ = fn  # type: ignore[attr-defined]
    return declinable


def registered(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The kernel a backend registered behind ``fn``, what :meth:`Operator.resolve` returned
    (the kernel itself, or the wrapper of one marked ``may_decline``): the fast paths compare
    it with the kernels their backend names (``hookspecs.FastPath.kernels``)."""
    return getattr(fn, "__wrapped__", fn) if fn.__class__ is _FUNCTION else fn


_FUNCTION = type(registered)


# Bumped by every (un)registration: caches of resolved kernels outside an Operator (the fast
# paths' per-layout kernel tables) compare it to know they are stale.
epoch = 0
# Called by every (un)registration too: caches that must not outlive a kernel change.
on_invalidate: list[Callable[[], None]] = []


def _invalidate() -> None:
    global epoch
    epoch += 1
    for op in _ops.values():
        op._resolved.clear()
        op._decomposes = None
    for forget in on_invalidate:
        forget()


# Bumped by every definition and removal of an operator: name lookups cached outside
# (``torch.ops.<ns>.<name>.<overload>``) compare it to know they are stale.
definitions = 0


def get(qualname: str) -> Operator | None:
    return _ops.get(qualname)


def undefine(qualname: str) -> None:
    """Remove operator ``qualname`` (a library's own definition going away)."""
    global definitions
    with _lock:
        if _ops.pop(qualname, None) is not None:
            definitions += 1


def define(qualname: str, schema: str | _schema.Schema) -> Operator:
    """Create operator ``qualname`` ("ns::name[.overload]"); error if it exists."""
    parsed = _schema.parse(schema) if isinstance(schema, str) else schema
    with _lock:
        if qualname in _ops:
            raise RuntimeError(f"Tried to register an operator ({qualname}) with the same name "
                               "and overload name multiple times.")
        op = _ops[qualname] = Operator(qualname, parsed)
        global definitions
        definitions += 1
        return op


def define_primitives() -> None:
    """Define the ``prims::`` operator of every primitive in the table (:mod:`torch._core.prims`),
    once. The registry calls it before the first backend registers kernels for them."""
    from . import prims

    with _lock:
        for name, (_group, schema) in prims.PRIMITIVES.items():
            if f"prims::{name}" not in _ops:
                define(f"prims::{name}", schema)


def define_aten(table: dict[str, tuple[Any, ...]],
                key: str = COMPOSITE_EXPLICIT) -> dict[str, Operator]:
    """Define ``aten::<name>`` for each row ``name: (schema, kernel[, key])`` unless it exists,
    and register the kernel (under ``key`` unless the row names its own). Returns the
    operators by full name (``"add.Tensor"``) and by base name (``"add"``).

    Core defines each operator's kernel for a key once: a second one is a mistake (two
    modules claiming one op), so it raises instead of silently replacing the first."""
    ops: dict[str, Operator] = {}
    for name, row in table.items():
        schema, kernel = row[0], row[1]
        op = _ops.get(f"aten::{name}") or define(f"aten::{name}", schema)
        k = key_for(row[2] if len(row) > 2 else key)
        if k in op.kernels:
            raise RuntimeError(f"aten::{name} already has a core kernel for {k} "
                               f"({getattr(op.kernels[k], '__qualname__', op.kernels[k])}); "
                               "core registers one kernel per operator and key")
        op.register(k, kernel)
        ops[name] = op
        ops.setdefault(name.partition(".")[0], op)
    return ops


def operators(namespace: str | None = None) -> list[Operator]:
    return [op for op in _ops.values() if namespace is None or op.namespace == namespace]


# -- dispatch ------------------------------------------------------------------------------


def _modes() -> list[Any]:
    stack = getattr(_local, "modes", None)
    if stack is None:
        stack = _local.modes = []
    return stack


def push_mode(mode: Any) -> None:
    """Activate a ``__torch_dispatch__`` mode on this thread (the ``Python`` key)."""
    _modes().append(mode)
    count_region(+1)


def pop_mode() -> Any:
    """Deactivate the innermost dispatch mode of this thread and return it."""
    stack = _modes()
    if not stack:
        raise RuntimeError("no dispatch mode is active on this thread")
    mode = stack.pop()
    count_region(-1)
    return mode


def count_region(step: int) -> None:
    """Count a region of this thread that needs every call on the full path (a dispatch mode,
    an autocast region): +1 on entering it, -1 on leaving. The fast tiers step aside too."""
    _local.keys += step
    with _lock:
        _state.keys_active += step
        _state.modes_active += step


def _full_path(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """While ``keys_active``: whether this call needs the Autocast or Python key (a region is
    open on this thread, or an argument is a ``__torch_dispatch__`` tensor); a plain call on a
    thread without regions keeps the plain path (and its plans)."""
    if _local.keys:
        return True
    classes = _tensor_module.python_dispatch_classes
    if classes:
        for a in args:
            cls = a.__class__
            if cls in classes:
                return True
            if cls is list or cls is tuple:
                for x in a:
                    if x.__class__ in classes:
                        return True
        if kwargs:
            for v in kwargs.values():
                if v.__class__ in classes:
                    return True
    return False


def python_key_active(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether this call would reach the Python key: a dispatch mode is active on this
    thread, or an argument is a ``__torch_dispatch__`` tensor (an autocast region alone does
    not count). Kernels that run a fused form of what PyTorch writes in several operators ask
    it, to show a mode PyTorch's operators instead."""
    if not _state.keys_active:
        return False
    modes = getattr(_local, "modes", None)
    if modes:
        # Plait's own modes that take the fused operators themselves (vmap's levels and the
        # jit/ONNX tracer, which PyTorch runs at keys of their own) keep them
        return not getattr(modes[-1], "takes_fused_operators", False)
    return bool(_tensor_module.python_dispatch_classes) and bool(_python_types(args, kwargs))


def mode_stack() -> list[Any]:
    """This thread's dispatch modes, outermost first (the list itself)."""
    return _modes()


def backend_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The backend key of a call: the device of its tensor arguments. 0-d CPU tensors mix with
    any device, as in PyTorch; any other mix is an error."""
    # Common case first: positional tensors that share one (interned) device object.
    dev = None
    for a in args:
        if isinstance(a, Tensor):
            if dev is None:
                dev = a._device
            elif a._device is not dev:
                return _general_key(args, kwargs)
        elif a.__class__ is list or a.__class__ is tuple:
            # A size (factories) holds no tensor and does not decide the key; a tensor list
            # (cat, stack) does, as positional tensors do: one shared device object is the
            # common case, anything else the general rule.
            for x in a:
                if x.__class__ is Tensor or isinstance(x, Tensor):
                    if dev is None:
                        dev = x._device
                    elif x._device is not dev:
                        return _general_key(args, kwargs)
    if kwargs:
        for v in kwargs.values():
            if isinstance(v, Tensor):
                return _general_key(args, kwargs)
    if dev is None:
        return _factory_key(kwargs)
    rt = _registry._runtimes.get(dev._type)  # initialised: skip runtime()'s call
    return rt.dispatch_key if rt is not None else _first_key(dev)


def _first_key(dev: Any) -> str:
    """The key of a device whose runtime is not initialised yet, or of a sparse tensor's
    :class:`~torch._core.sparse.SparseKey` (which has no runtime: it is the key)."""
    if dev.__class__ is _sparse.SparseKey:
        return dev.dispatch_key
    return _registry.runtime(dev._type).dispatch_key


def _general_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    dev = None
    weak = True  # dev so far comes from 0-d CPU tensors only
    sparse = None  # a sparse argument's key: the call runs its sparse kernel
    for a in _tensors(args, kwargs):
        d = a._device
        if d.__class__ is _sparse.SparseKey:
            sparse = d
            d = d.dense
        scalar = d.type == "cpu" and a._shape == ()
        if dev is None or (weak and not scalar):
            dev, weak = d, scalar
        elif d != dev and not scalar:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {dev} and {d}!")
    if dev is None:
        return _factory_key(kwargs)
    if sparse is not None:
        return _sparse.key_of(dev).dispatch_key
    return _registry.runtime(dev.type).dispatch_key


def _factory_key(kwargs: dict[str, Any]) -> str:
    """The backend key of a call without tensor arguments (a factory): the one of its
    ``device`` argument (a ``torch.device`` or its string), the CPU's when there is none, as
    PyTorch's BackendSelect picks it."""
    dev = kwargs.get("device") if kwargs else None
    if dev is None:
        return "CPU"
    device_type = getattr(dev, "_type", None) or str(dev).partition(":")[0]
    rt = _registry._runtimes.get(device_type)
    return (rt if rt is not None else _registry.runtime(device_type)).dispatch_key


def _tensors(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (x for x in a if isinstance(x, Tensor))
    for a in kwargs.values():
        if isinstance(a, Tensor):
            yield a


def call(op: Operator, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``op`` through the key stack: autocast, autograd, the Python key (dispatch modes
    and ``__torch_dispatch__`` subclasses, below autograd as in PyTorch), then the backend."""
    if _state.keys_active:
        autocast = op.kernels.get(AUTOCAST)
        if autocast is not None:
            return autocast(*args, **kwargs)
    return redispatch_below_autocast(op, args, kwargs)


def redispatch_below_autocast(op: Operator, args: tuple[Any, ...],
                              kwargs: dict[str, Any]) -> Any:
    """Run ``op`` from the Autograd key down (for autocast kernels, after their casts)."""
    if _state.keys_active:
        composite = op.python_key_composite
        if composite is not None and python_key_active(args, kwargs):
            # at the Autograd key, as PyTorch's CompositeImplicitAutograd (with or without
            # grad): autograd records the ops of the decomposition, and the mode sees them
            return composite(*args, **kwargs)
    if _needs_grad(args, kwargs):
        kernel = op.kernels.get(AUTOGRAD) or _autograd_kernel(op)
        if kernel is not None:
            return kernel(*args, **kwargs)
        implicit = op.kernels.get(COMPOSITE_IMPLICIT)
        if implicit is not None and _state.keys_active and _only_implicit(op):
            # Differentiated through its decomposition: decompose here, above the Python key
            # (PyTorch's CompositeImplicitAutograd sits at the Autograd key), so that autograd
            # records the ops it is written in even when a mode or subclass handles them.
            return implicit(*args, **kwargs)
    return redispatch_below_autograd(op, *args, **kwargs)


def _no_autograd(op: Operator) -> Callable[..., Any] | None:
    return None


def _no_plan(op: Operator, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return None


# Set by torch._core.plan when it loads: runs a call of an operator that keeps plans by the plan of
# its signature, or returns None for the generic path.
plan_call: Callable[[Operator, tuple[Any, ...], dict[str, Any]], Any] = _no_plan


# Set by torch.autograd when it loads: builds (and registers) the Autograd kernel of an op that
# has none yet, or returns None when the op differentiates through its decomposition.
_autograd_kernel: Callable[[Operator], Callable[..., Any] | None] = _no_autograd


def redispatch_below_autograd(op: Operator, *args: Any, **kwargs: Any) -> Any:
    """Run ``op`` from the Python key down (for autograd kernels)."""
    if _state.keys_active:
        result = _python_key(op, args, kwargs)
        if result is not _UNHANDLED:
            return result
    key = backend_key(args, kwargs)
    fn = op._resolved.get(key)
    if fn is None:
        fn = op.resolve(key)
    return fn(*args, **kwargs)


# -- the Python key: dispatch modes and __torch_dispatch__ subclasses ------------------------

_UNHANDLED: Any = object()  # the Python key had nothing to do: go on to the backend


def _as_given(op: Operator, args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return args, kwargs


# Set by torch._aten.python_key when it loads: a call's arguments as PyTorch's dispatcher hands
# them to a mode or subclass (lists for int[], no trailing defaults...).
python_key_arguments: Callable[[Operator, tuple[Any, ...], dict[str, Any]],
                               tuple[tuple[Any, ...], dict[str, Any]]] = _as_given


def _python_key(op: Operator, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Hand the call to this thread's innermost dispatch mode (off while it runs), else to
    the ``__torch_dispatch__`` of its subclass tensor arguments, else return ``_UNHANDLED``."""
    stack = getattr(_local, "modes", None)
    if stack:
        if not getattr(stack[-1], "takes_fused_operators", False):  # (vmap's take Plait's)
            args, kwargs = python_key_arguments(op, args, kwargs)
        mode = pop_mode()
        try:
            result = mode.__torch_dispatch__(op, _python_types(args, kwargs), args, kwargs)
        finally:
            push_mode(mode)
        if result is not NotImplemented:
            return result
        # the mode declined: the subclass arguments' __torch_dispatch__ come next, as in PyTorch
        if not _python_types(args, kwargs):
            raise TypeError(f"Multiple dispatch failed for '{op.qualname}': the dispatch mode "
                            f"{type(mode).__name__} returned NotImplemented")
    if not _tensor_module.python_dispatch_classes:
        return _UNHANDLED
    types = _python_types(args, kwargs)
    if not types:
        return _UNHANDLED
    args, kwargs = python_key_arguments(op, args, kwargs)
    for cls in types:
        result = cls.__torch_dispatch__(op, types, args, kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError(f"Multiple dispatch failed for '{op.qualname}'; all __torch_dispatch__ "
                    f"handlers returned NotImplemented: {[t.__name__ for t in types]}")


def _only_implicit(op: Operator) -> bool:
    """Whether no backend or explicit kernel would serve ``op`` before its decomposition."""
    return all(k in FUNCTIONALITY_KEYS or k == COMPOSITE_IMPLICIT for k in op.kernels)


def _python_types(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[type, ...]:
    """The classes defining ``__torch_dispatch__`` among the call's tensors, subclasses
    before their bases, otherwise in argument order."""
    classes = _tensor_module.python_dispatch_classes
    found: list[type] = []
    for t in _tensors(args, kwargs):
        cls = t.__class__
        if cls in classes and cls not in found:
            at = next((i for i, c in enumerate(found) if issubclass(cls, c)), len(found))
            found.insert(at, cls)
    return tuple(found)


def _needs_grad(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    if _config.state.no_grad_active and not _config._local.grad:
        return False
    return _requires_grad(args, kwargs)


def _requires_grad(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a tensor argument (or one in a list argument) requires grad."""
    for a in args:
        if a.__class__ is Tensor or isinstance(a, Tensor):
            if a._requires_grad:
                return True
        elif a.__class__ is list or a.__class__ is tuple:
            for x in a:
                if isinstance(x, Tensor) and x._requires_grad:
                    return True
    if kwargs:
        for v in kwargs.values():
            if isinstance(v, Tensor) and v._requires_grad:
                return True
    return False


# -- CPU fallback --------------------------------------------------------------------------


def _cpu_fallback(op: Operator, cpu_kernel: Callable[..., Any], key: str) -> Callable[..., Any]:
    """Wrap ``cpu_kernel`` so it serves backend ``key`` by copying through the host."""
    mutated = set(op.schema.mutated)

    def fallback(*args: Any, **kwargs: Any) -> Any:
        if not _registry.cpu_fallback_enabled():
            raise NotImplementedError(
                f"The operator '{op.qualname}' is not implemented for the '{key}' backend, and "
                f"the CPU fallback is disabled ({_registry.CPU_FALLBACK_ENV_VAR}=0).")
        if not op._fallback_warned or _config.state.warn_always:
            op._fallback_warned = True
            warnings.warn(
                f"The operator '{op.qualname}' is not implemented for the '{key}' backend; it "
                "falls back to the CPU (inputs are copied to the host and results back). Set "
                f"{_registry.CPU_FALLBACK_ENV_VAR}=0 to make this an error.",
                UserWarning,
                stacklevel=_config.external_stacklevel(),
            )
        to_device = upcalls.to_device

        def on_host(t: Tensor) -> Tensor:
            # Host-accessible device memory is viewed, not copied: the CPU kernel works in
            # place, and a written argument needs no copy back (nor a device copy_ kernel).
            return upcalls.host_copy(t) if t._storage._host is not None else to_device(t, "cpu")

        device = None
        cpu_args = []
        for a in args:
            if isinstance(a, Tensor) and a._device.type != "cpu":
                device = a._device
                a = on_host(a)
            cpu_args.append(a)
        cpu_kwargs = {n: on_host(v) if isinstance(v, Tensor) and v._device.type != "cpu" else v
                      for n, v in kwargs.items()}
        result = cpu_kernel(*cpu_args, **cpu_kwargs)
        for i in mutated:
            if (i < len(args) and isinstance(args[i], Tensor) and args[i] is not cpu_args[i]
                    and args[i]._storage._host is None):
                upcalls.copy_(args[i], cpu_args[i])  # the op library's copy_ (a slot)
        if device is None:
            return result
        if isinstance(result, Tensor):
            return to_device(result, device)
        if isinstance(result, tuple):
            return tuple(to_device(r, device) if isinstance(r, Tensor) else r for r in result)
        return result

    fallback.__name__ = f"cpu_fallback_{op.name}"
    return fallback
