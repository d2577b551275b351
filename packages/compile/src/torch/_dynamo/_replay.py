"""Replay: later calls of a compiled function run its graph without running its Python, where
a captured call proved that safe (docs/compile.md, "Replay").

A call is *probed* while it is captured: ``sys.setprofile`` sees every Python function and C
function it runs, and the state it can reach (its arguments, the callable itself with its
closure and defaults, an ``nn.Module``'s attributes, the globals its own code reads) is
fingerprinted before and after. The capture is accepted for replay when

- it made exactly one graph, flushed at the return, with no graph break, no exception and no
  data read from a tensor (``item``, ``bool``... of an input);
- every function of the program's own code that ran (code outside torch, the Plait
  distributions and the standard library they call) writes no global and no attribute, is not
  a generator, and reads closure cells only of functions the fingerprint covers or that the
  call itself made; every C function it called is a pure builtin (``len``, ``isinstance``,
  ``math.*``, methods of immutable values, read-only methods of lists and dicts);
- the reachable state is the same after the call as before (so nothing was mutated), it is
  made only of tensors, immutable scalars, containers, ``nn.Module`` s and plain objects (whose
  ``__dict__`` is walked), functions and library modules, and every tensor the graph reads is
  part of it;
- grad mode, default dtype and autocast state are the same at the end as at the start, and
  the return value holds only the graph's outputs, state tensors and immutable constants.

A later call whose fingerprint (and grad mode, default dtype and autocast state) equals the
accepted one runs the compiled graph on the tensors found at the same places and builds the
return value again. Anything else runs the Python under capture, as before. A refused probe
is not repeated for that compiled function (``FrameState.replay_refused`` says why).
"""

from __future__ import annotations

import dis
import gc
import importlib
import sys
import sysconfig
import types
from collections.abc import Callable
from typing import Any

from torch import _torch_function as _tf
from torch._core import config as _core_config
from torch._core.device import device as _device
from torch._core.dtype import dtype as _dtype
from torch._core.tensor import Size, Tensor
from torch._subclasses.fake_tensor import FakeTensor
from torch.amp import autocast_mode as _amp

__all__ = ["Probe", "ReplayEntry", "Refused", "global_state", "lookup"]

MAX_NODES = 20_000  # a bigger reachable state is not fingerprinted (the call is not replayed)
MAX_ENTRIES = 64  # replay entries kept per compiled function
MAX_PROBES = 3  # calls probed before a function whose state refused replay stops being probed

_LIBRARY_PREFIXES = ("torch", "plait_", "functorch")
_STDLIB = sysconfig.get_paths()["stdlib"]
# the distributions Plait's own code calls (its declared dependencies): trusted as the
# standard library is, when library code calls them
_DEPENDENCIES = frozenset(("numpy", "pluggy"))
_SAFE_MODULES = frozenset(("math", "cmath", "operator", "_operator", "functools", "itertools",
                           "builtins", "typing", "collections", "numbers", "enum", "abc"))
_IMMUTABLE = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis), _dtype, _device,
              range, slice)

# opcodes of the program's own code that replay refuses: writes outside the frame's locals
# (subscript stores are checked by the fingerprint instead), generators, name-level code
_REFUSED_OPCODES = {
    "STORE_GLOBAL": "writes a global", "DELETE_GLOBAL": "deletes a global",
    "STORE_ATTR": "writes an attribute", "DELETE_ATTR": "deletes an attribute",
    "STORE_NAME": "runs name-level code", "DELETE_NAME": "runs name-level code",
    "IMPORT_STAR": "imports *", "YIELD_VALUE": "is a generator",
    "RETURN_GENERATOR": "is a generator", "SEND": "is a generator",
    "GET_AWAITABLE": "awaits",
}
_LOAD_GLOBALS = ("LOAD_GLOBAL", "LOAD_NAME")
_LOAD_ATTRS = ("LOAD_ATTR", "LOAD_METHOD")
_GENERATOR_FLAGS = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async

# (not id or hash: a value made from an object's identity differs between calls whose
# state is otherwise the same)
_PURE_BUILTINS = frozenset((len, isinstance, issubclass, hasattr, getattr, min, max, abs, round,
                            divmod, sum, all, any, sorted, iter, next, callable, pow, repr,
                            format, ord, chr))
_READ_ONLY_METHODS = {
    list: frozenset(("index", "count", "copy", "__getitem__", "__len__", "__contains__")),
    tuple: frozenset(("index", "count", "__getitem__", "__len__", "__contains__")),
    dict: frozenset(("get", "keys", "values", "items", "copy", "__getitem__", "__len__",
                     "__contains__")),
}
_MUTATING_OPERATORS = frozenset(("setitem", "delitem", "__setitem__", "__delitem__"))


class Refused(Exception):
    """Why a captured call cannot be replayed; ``final`` when later calls cannot do better
    (the code itself refuses), not when this call's state did (a first call that makes
    caches, a graph break taken on some inputs only)."""

    def __init__(self, reason: str, final: bool = True) -> None:
        super().__init__(reason)
        self.final = final


def global_state() -> tuple[Any, ...]:
    """(grad mode, default dtype, autocast devices and dtypes while enabled, deterministic
    algorithms, whether something intercepts calls): the global state a replayed call is
    guarded on. Calls are intercepted by a TorchFunctionMode or dispatch mode (on any thread)
    or by global module hooks (``register_module_forward_hook``): no call replays then."""
    enabled = _amp._local.enabled
    state = _core_config.state
    return (_core_config._local.grad, _core_config._default_dtype,
            tuple(enabled.items()) if enabled else (), state.deterministic,
            bool(_tf._counts.modes or state.modes_active or _global_module_hooks()))


def _global_module_hooks() -> bool:
    module = _NN_MODULE[0]
    if module is None:
        module = _NN_MODULE[0] = sys.modules.get("torch.nn.modules.module")
        if module is None:
            return False
    return bool(module._global_forward_pre_hooks or module._global_forward_hooks)


_NN_MODULE: list[Any] = [None]


# -- fingerprints -------------------------------------------------------------------------


def _library_module(name: str) -> bool:
    return name.startswith(_LIBRARY_PREFIXES) or name.split(".", 1)[0] in _SAFE_MODULES


class Walk:
    """A fingerprint of reachable state: nested tuples equal for equal state, the tensors in
    the order they were met (``tensors``), and the code objects of the functions walked."""

    __slots__ = ("codes", "seen", "tensors")

    def __init__(self) -> None:
        self.tensors: list[Tensor] = []
        self.seen: dict[int, int] = {}  # id of a mutable object -> order it was first met
        self.codes: set[int] = set()  # ids of the code objects of the functions walked

    def value(self, v: Any) -> Any:
        """The fingerprint of ``v`` (raises :class:`Refused` for state replay cannot guard)."""
        t = type(v)
        if t in _SCALAR_TYPES:
            return (t, v)
        seen = self.seen
        key = id(v)
        first = seen.get(key)
        if first is not None:
            return ("@", first)  # the same object again: aliasing is part of the state
        seen[key] = len(seen)
        if t in _PLAIN_TENSORS:  # inline: the most common value by far
            self.tensors.append(v)
            extra = v.__dict__
            dev = v._device
            return (t, v._dtype, dev._type, dev._index, v._shape, v._stride, v._offset,
                    v._requires_grad, self.extra(extra) if extra else None)
        if len(seen) > MAX_NODES:
            raise Refused(f"its reachable state has more than {MAX_NODES} objects")
        walker = _WALKERS.get(t)
        if walker is None:
            walker = _walker_for(t)
        return walker(self, v)

    def tensor(self, v: Any) -> Any:
        if isinstance(v, FakeTensor):
            raise Refused("a deferred or fake tensor is part of its state")
        self.tensors.append(v)
        extra = v.__dict__
        dev = v._device
        return (type(v), v._dtype, dev._type, dev._index, v._shape, v._stride, v._offset,
                v._requires_grad, self.extra(extra) if extra else None)

    def extra(self, attributes: dict[str, Any]) -> Any:
        """A tensor's own attributes, less autograd's cache (its gradient accumulator, made
        at the first backward through it: not state the program reads)."""
        if "_grad_accumulator" in attributes:
            if len(attributes) == 1:  # a parameter after its first backward: the usual case
                return None
            attributes = {k: v for k, v in attributes.items() if k != "_grad_accumulator"}
        return self.value(attributes)

    def top(self, args: tuple[Any, ...], kwargs: dict[str, Any], root: Any) -> list[Any]:
        """The fingerprints of a call's arguments and callable (globals are added after);
        tensor arguments inline (what :meth:`value` gives them), as every call walks them."""
        value = self.value
        seen = self.seen
        tensors = self.tensors
        parts = []
        for a in args:
            t = type(a)
            if t in _PLAIN_TENSORS and id(a) not in seen:
                seen[id(a)] = len(seen)
                tensors.append(a)
                extra = a.__dict__
                dev = a._device
                parts.append((t, a._dtype, dev._type, dev._index, a._shape, a._stride,
                              a._offset, a._requires_grad,
                              self.extra(extra) if extra else None))
            else:
                parts.append(value(a))
        if (type(root) is types.FunctionType and root.__closure__ is None
                and root.__defaults__ is None and root.__kwdefaults__ is None
                and id(root) not in seen):
            # a plain function (the usual compiled callable): only its identity is state
            seen[id(root)] = len(seen)
            self.codes.add(id(root.__code__))
            root_part: Any = (root,)
        else:
            root_part = value(root)
        return [tuple(parts), value(kwargs) if kwargs else None, root_part]

    def sequence(self, v: Any) -> Any:
        value = self.value
        return (type(v), *[value(x) for x in v])

    def mapping(self, v: Any) -> Any:
        # scalars and empty containers inline (a module's __dict__ is mostly these: its
        # flags, sizes and a dozen empty hook tables); an empty container's identity is not
        # recorded: filling it changes the fingerprint anyway
        value = self.value
        items = []
        for k, x in v.items():
            if type(k) not in _SCALAR_TYPES:
                raise Refused(f"a dict key of type {type(k).__name__} is part of its state")
            t = type(x)
            if t in _SCALAR_TYPES:
                items.append((k, t, x))
                continue
            container = _CONTAINERS.get(t)
            if container is None:
                container = _CONTAINERS[t] = issubclass(t, (dict, list, tuple, set)) and (
                    t in (dict, list, tuple, set) or _library_module(t.__module__))
            if container and not x:
                items.append((k, t))
            else:
                items.append((k, value(x)))
        return (type(v), *items)

    def set_(self, v: Any) -> Any:
        if not all(type(x) in _SCALAR_TYPES for x in v):
            raise Refused("a set of objects is part of its state")
        return (type(v), frozenset(v))

    def module(self, v: Any) -> Any:
        return (self.value(type(v)), self.value(v.__dict__))

    def klass(self, v: type) -> Any:
        """A library class by identity; the program's own class with its attributes (a class
        attribute rebound between calls is other state) and its own base classes."""
        library = _LIBRARY_CLASSES.get(v)
        if library is None:
            library = _LIBRARY_CLASSES[v] = _library_module(v.__module__)
        if library:
            return (v,)
        value = self.value
        items: list[Any] = [v]
        for k, x in vars(v).items():
            if k.startswith("__") and k.endswith("__"):
                continue
            t = type(x)
            if t in _SCALAR_TYPES:
                items.append((k, t, x))
            elif t in _BY_IDENTITY:
                items.append((k, x))  # a method, property...: its code is checked when run
            else:
                items.append((k, value(x)))
        items.extend(value(base) for base in v.__bases__ if base is not object)
        return tuple(items)

    def function(self, v: Any) -> Any:
        # the function object itself (hashed by identity; a code object's hash walks its
        # bytecode), its defaults and the contents of its closure cells
        code = v.__code__
        library = _LIBRARY_CODES.get(id(code))
        if library is None:
            library = _library_module(getattr(v, "__module__", None) or "")
            _LIBRARY_CODES[id(code)] = library
            _KEEP_CODES.append(code)  # the id stays this code's
        if library:
            return (v,)
        self.codes.add(id(code))
        cells = v.__closure__
        defaults = v.__defaults__
        kwdefaults = v.__kwdefaults__
        return (v, self.value(defaults) if defaults else None,
                self.value(kwdefaults) if kwdefaults else None,
                tuple([self.cell(c) for c in cells]) if cells else None)

    def cell(self, c: Any) -> Any:
        try:
            contents = c.cell_contents
        except ValueError:  # an empty cell (a name assigned later)
            return ("empty",)
        return self.value(contents)

    def method(self, v: Any) -> Any:
        return (type(v), self.value(v.__self__), self.value(v.__func__))

    def identity(self, v: Any) -> Any:
        return (v,)

    def python_module(self, v: Any) -> Any:
        if not _library_module(v.__name__):
            raise Refused(f"module {v.__name__} is part of its state (its attributes are not "
                          "guarded)")
        return (v,)

    def refuse(self, v: Any) -> Any:
        raise Refused(f"an object of type {type(v).__qualname__} is part of its state")


_SCALAR_TYPES = frozenset((*_IMMUTABLE, Size))
# type -> whether it is a plain or library container (nn.Module's hook tables), whose empty
# values a dict's walk takes inline
_CONTAINERS: dict[type, bool] = {}
_PLAIN_TENSORS: set[type] = {Tensor}  # nn.Parameter joins when torch.nn is loaded


def _walker_for(t: type) -> Callable[[Walk, Any], Any]:
    """How a type's values are fingerprinted (cached in ``_WALKERS``)."""
    from torch import nn

    if issubclass(t, Tensor):
        walker = Walk.tensor
        if t is nn.Parameter:
            _PLAIN_TENSORS.add(t)
    elif issubclass(t, nn.Module):
        walker = Walk.module
    elif issubclass(t, (list, tuple)):
        walker = Walk.sequence
    elif issubclass(t, dict):
        walker = Walk.mapping
    elif issubclass(t, (set, frozenset)):
        walker = Walk.set_
    elif issubclass(t, types.FunctionType):
        walker = Walk.function
    elif issubclass(t, types.MethodType):
        walker = Walk.method
    elif issubclass(t, types.ModuleType):
        walker = Walk.python_module
    elif issubclass(t, type):
        walker = Walk.klass
    elif t in (types.BuiltinFunctionType, types.BuiltinMethodType):
        walker = Walk.identity  # C functions
    elif _library_module(t.__module__):
        walker = Walk.identity  # library objects (an op overload, a dtype...)
    elif getattr(t, "__dictoffset__", 0) and not hasattr(t, "__slots__"):
        walker = Walk.module  # a plain object of the program's own class: its __dict__
    elif not t.__flags__ & _HEAP_TYPE and hasattr(t, "__get__"):
        # a descriptor of a C type (a namedtuple's field getter): immutable, by identity
        walker = Walk.identity
    else:
        walker = Walk.refuse
    _WALKERS[t] = walker
    return walker


_WALKERS: dict[type, Callable[[Walk, Any], Any]] = {}
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement, not in C
# class attributes kept by identity in a class's fingerprint
_BY_IDENTITY = frozenset((types.FunctionType, staticmethod, classmethod, property))
_LIBRARY_CODES: dict[int, bool] = {}  # id(code) -> whether its function is library code
_LIBRARY_CLASSES: dict[type, bool] = {}  # class -> whether it is torch's (or Plait's)
_KEEP_CODES: list[Any] = []


# -- the probe ----------------------------------------------------------------------------


def _code_facts(code: Any) -> tuple[str | None, tuple[tuple[str, ...], ...], tuple[Any, ...]]:
    """(why replay refuses this code or None, the globals it reads with the attribute chains
    read off them (``("torch", "nn", "functional", "gelu")``), the code objects nested in
    it), cached per code object."""
    facts = _CODE_FACTS.get(code)
    if facts is not None:
        return facts
    reason: str | None = None
    if code.co_flags & _GENERATOR_FLAGS:
        reason = "is a generator or coroutine"
    chains: list[tuple[str, ...]] = []
    chain: list[str] | None = None
    for ins in dis.get_instructions(code):
        why = _REFUSED_OPCODES.get(ins.opname)
        if why is not None and reason is None:
            reason = why
        if chain is not None:
            if ins.opname in _LOAD_ATTRS and isinstance(ins.argval, str):
                chain.append(ins.argval)
                chains.append(tuple(chain))
                continue
            chain = None
        if ins.opname in _LOAD_GLOBALS and isinstance(ins.argval, str):
            chain = [ins.argval]
            chains.append((ins.argval,))
        elif ins.opname == "IMPORT_NAME" and reason is None and \
                not _library_module(str(ins.argval)):
            # the module's attributes would be read through a local name: not guarded
            reason = f"imports {ins.argval}"
    nested = tuple(c for c in code.co_consts if isinstance(c, types.CodeType))
    facts = (reason, tuple(dict.fromkeys(chains)), nested)
    _CODE_FACTS[code] = facts
    return facts


_CODE_FACTS: dict[Any, tuple[str | None, tuple[tuple[str, ...], ...], tuple[Any, ...]]] = {}
_KIND_CACHE: dict[Any, int] = {}  # code -> 0 program, 1 library, 2 standard library or a
# dependency of Plait's (trusted only when library code calls it)
_PROGRAM, _LIBRARY, _STANDARD, _IMPORT = 0, 1, 2, 3
# the probe's mark of a frame inside an import (import system, finders, module bodies): a
# first import runs once, as it would eagerly; later calls find the module imported
_IMPORTING = 2
_IMPORT_MODULE = importlib.import_module.__code__  # (an import, as the statement's)


def _kind(frame: Any) -> int:
    code = frame.f_code
    kind = _KIND_CACHE.get(code)
    if kind is None:
        module = frame.f_globals.get("__name__") or ""
        filename = code.co_filename
        if filename.startswith("<frozen importlib._bootstrap") or code is _IMPORT_MODULE:
            kind = _IMPORT
        elif module.startswith(_LIBRARY_PREFIXES) or filename.startswith("<eval_with_key>"):
            kind = _LIBRARY
        elif (filename.startswith(_STDLIB) and "site-packages" not in filename) or \
                filename.startswith("<frozen") or module.split(".", 1)[0] in _DEPENDENCIES:
            kind = _STANDARD
        else:
            kind = _PROGRAM
        _KIND_CACHE[code] = kind
    return kind


def _c_call_refusal(func: Any) -> str | None:
    """Why a C function the program's code called may have an effect replay would skip."""
    if func in _PURE_BUILTINS:
        return None
    owner = getattr(func, "__self__", None)
    name = getattr(func, "__name__", "?")
    if isinstance(owner, types.ModuleType):
        module = owner.__name__
        if module in ("math", "cmath"):
            return None
        if module in ("operator", "_operator") and not name.startswith("i") and \
                name not in _MUTATING_OPERATORS:
            return None
        return f"calls {module}.{name}"
    if type(owner) in _SCALAR_TYPES or type(owner) is frozenset:
        return None
    allowed = _READ_ONLY_METHODS.get(type(owner))
    if allowed is not None and name in allowed:
        return None
    where = type(owner).__qualname__ if owner is not None else "builtins"
    return f"calls {where}.{name}"


class Probe:
    """The profile function of a captured call that may become replayable, and the facts it
    gathers (see the module docstring)."""

    def __init__(self, root: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.root = root
        self.args = args
        self.kwargs = kwargs
        self.refused: str | None = None
        self.final = True  # whether a refusal is the code's (not this call's state)
        # per active frame: library code, or standard library under it (or _IMPORTING)
        self.trusted: list[Any] = [True]
        # (globals, builtins, chain): the globals and module attributes the code read
        self.global_slots: list[tuple[dict[str, Any], dict[str, Any], tuple[str, ...]]] = []
        self._slot_keys: set[tuple[int, tuple[str, ...]]] = set()
        self.allowed_codes: set[int] = set()  # ids of codes whose cells the state covers
        # the garbage collector's callbacks (a test framework's, a profiler's) may run during
        # any call: their frames are the collector's, not the program's
        self.collector_codes = {code for cb in gc.callbacks
                                if (code := getattr(getattr(cb, "__func__", cb), "__code__",
                                                    None)) is not None}
        self.state_before = self.global_state = global_state()
        if self.state_before[-1]:
            self.refused = "a mode or global module hook intercepts calls"
            self.final = False
        self.walk = Walk()
        try:
            self.before: list[Any] = self.walk.top(args, kwargs, root)
        except Refused as exc:
            self.refused = str(exc)
            self.before = []
        self.allowed_codes |= self.walk.codes

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            kind = _kind(frame)
            if kind == _IMPORT or self.trusted[-1] is _IMPORTING or \
                    frame.f_code in self.collector_codes:
                # a lazy import the call makes, or a collector callback: not state
                self.trusted.append(_IMPORTING)
                return
            trusted = kind == _LIBRARY or (kind == _STANDARD and bool(self.trusted[-1]))
            self.trusted.append(trusted)
            if not trusted and self.refused is None:
                self._check_frame(frame)
                if self.refused is not None:
                    sys.setprofile(None)  # refused: the rest of the call runs unobserved
        elif event == "return":
            if len(self.trusted) > 1:
                self.trusted.pop()
        elif event == "c_call" and not self.trusted[-1] and self.refused is None:
            why = _c_call_refusal(arg)
            if why is not None:
                self.refused = f"{_where(frame)} {why}"
                sys.setprofile(None)

    def _check_frame(self, frame: Any) -> None:
        code = frame.f_code
        why, chains, nested = _code_facts(code)
        if why is not None:
            self.refused = f"{_where(frame)} {why}"
            return
        if code.co_freevars and id(code) not in self.allowed_codes:
            self.refused = (f"{_where(frame)} reads closure cells of a function made outside "
                            "the call")
            return
        self.allowed_codes.update(map(id, nested))
        f_globals = frame.f_globals
        builtins = frame.f_builtins
        for chain in chains:
            key = (id(f_globals), chain)
            if key in self._slot_keys:
                continue
            self._slot_keys.add(key)
            name = chain[0]
            if name not in f_globals and name not in builtins:
                continue
            if len(chain) > 1 and not isinstance(_read_slot(f_globals, builtins, chain[:1]),
                                                 types.ModuleType):
                continue  # attributes of a value the walk covers (not of a module's)
            slot = (f_globals, builtins, chain)
            self.global_slots.append(slot)
            try:
                self.before.append(self.walk.value(_read_slot(*slot)))
            except Refused as exc:
                self.refused = f"global {'.'.join(chain)}: {exc}"
                return
            self.allowed_codes |= self.walk.codes

    def state(self) -> tuple[Any, Walk]:
        """The fingerprint of the state as it is now, and its walk."""
        walk = Walk()
        parts = walk.top(self.args, self.kwargs, self.root)
        for slot in self.global_slots:
            parts.append(walk.value(_read_slot(*slot)))
        return tuple(parts), walk

    def accept(self, capture: Any, result: Any) -> ReplayEntry:
        """The replay entry of this call, or :class:`Refused`."""
        if self.refused is not None:
            raise Refused(self.refused, self.final)
        facts = capture.replay_facts
        if facts.breaks or facts.read_data:
            raise Refused("it broke the graph or read tensor data", final=False)
        if facts.graphs != 1 or facts.compiled is None:
            raise Refused(f"it made {facts.graphs} graphs (replay needs exactly one)",
                          final=False)
        if global_state() != self.state_before:
            raise Refused("it changed grad mode, the default dtype or autocast")
        if facts.inference != _core_config._local.inference:
            # its graph ran in an inference mode the call was not in (an inference_mode
            # block inside): replaying it would make ordinary tensors
            raise Refused("it entered or left inference mode")
        after, walk = self.state()
        if after != tuple(self.before):
            raise Refused("it changed state it can reach (arguments, globals, attributes)",
                          final=False)
        position = {id(t): i for i, t in enumerate(walk.tensors)}
        inputs = []
        for t in facts.inputs:
            i = position.get(id(t))
            if i is None:
                raise Refused("its graph reads a tensor that is not part of its arguments, "
                              "closure, module or globals")
            inputs.append(i)
        outputs = {ref: k for k, ref in enumerate(facts.output_ids)}
        template = _template(result, outputs, position)
        hash(after)  # an unhashable fingerprint cannot key the entry: TypeError -> refused
        return ReplayEntry(after, self.global_slots, tuple(inputs), template, facts.compiled,
                           facts.start_grad, facts.autocast)


def _read_slot(f_globals: dict[str, Any], builtins: dict[str, Any],
               chain: tuple[str, ...]) -> Any:
    """The value of a global, or of the attribute chain read off a module held in one (as
    far as the values are modules: later attributes belong to the value's own walk)."""
    try:
        value = f_globals[chain[0]]
    except KeyError:
        value = builtins.get(chain[0], _ABSENT)
    for name in chain[1:]:
        if not isinstance(value, types.ModuleType):
            break
        value = getattr(value, name, _ABSENT)
    return value


_ABSENT = ("absent",)  # a global or attribute that does not exist (an immutable marker)


def _where(frame: Any) -> str:
    code = frame.f_code
    return f"{code.co_name} ({code.co_filename}:{frame.f_lineno})"


def _template(value: Any, outputs: dict[int, int], position: dict[int, int]) -> Any:
    """How a replay builds the return value: ``("o", k)`` the graph's output k, ``("s", i)``
    the state's tensor i, ``("c", v)`` a constant, containers by their type."""
    if isinstance(value, Tensor):
        k = outputs.get(id(value))
        if k is not None:
            return ("o", k)
        i = position.get(id(value))
        if i is not None:
            return ("s", i)
        raise Refused("it returns a tensor the graph does not make")
    if type(value) in _SCALAR_TYPES:
        return ("c", value)
    if type(value) in (list, tuple) or (isinstance(value, tuple) and hasattr(value, "_make")):
        return (type(value), tuple(_template(v, outputs, position) for v in value))
    if type(value) is dict:
        return (dict, tuple((k, _template(v, outputs, position)) for k, v in value.items()))
    raise Refused(f"it returns a {type(value).__qualname__}")


def _build(template: Any, outputs: Any, tensors: list[Tensor]) -> Any:
    kind, what = template
    if kind == "o":
        return outputs[what]
    if kind == "s":
        return tensors[what]
    if kind == "c":
        return what
    if kind is dict:
        return {k: _build(v, outputs, tensors) for k, v in what}
    items = [_build(v, outputs, tensors) for v in what]
    if kind is list:
        return items
    if kind is tuple:
        return tuple(items)
    return kind._make(items)


class ReplayEntry:
    """An accepted capture: the state fingerprint it is guarded on, where its graph's inputs
    are in that state, how to build the result, and the compiled graph."""

    __slots__ = ("autocast", "autocast_on", "compiled", "direct", "fast", "global_slots",
                 "inputs", "key", "slot_checks", "start_grad", "template")

    def __init__(self, key: Any, global_slots: list[Any], inputs: tuple[int, ...],
                 template: Any, compiled: Callable[..., Any], start_grad: bool,
                 autocast: tuple[Any, ...]) -> None:
        self.key = key
        self.global_slots = global_slots
        self.inputs = inputs
        self.template = template
        self.compiled = compiled
        self.start_grad = start_grad
        self.autocast = autocast
        self.autocast_on = any(enabled for _, enabled, _ in autocast)
        # the number of state tensors when the graph's inputs are exactly those, in order
        # (the inputs are then passed as they are found); -1 otherwise
        self.direct = len(inputs) if inputs == tuple(range(len(inputs))) else -1
        # what fast_lookup calls (set by remember_fast): the graph without the
        # __torch_function__ checks its key rules out (torch._dynamo._direct), or compiled
        self.fast: Callable[..., Any] = compiled
        # (slot, value) of the globals its code reads, checked by identity on the fast path
        self.slot_checks: tuple[tuple[Any, Any], ...] = ()


_MISS = object()


def lookup(frame: Any, root: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Replay the call if an entry of ``frame`` matches its state: the result, or ``_MISS``."""
    state = global_state()
    entries = frame.replays.get(state)
    grad = state[0]
    enabled = state[2]
    if entries is None:
        return _MISS
    slots = frame.replay_slots
    key = None if slots else _plain_call_key(args, kwargs, root)
    if key is not None:
        entry = entries.get(key)
        tensors: Any = args  # every argument is a tensor: the walk's tensors, in order
        if entry is not None:
            remember_fast(frame, state, args, entry)
    else:
        walk = Walk()
        try:
            parts = walk.top(args, kwargs, root)
            if slots:
                for slot in slots:
                    parts.append(walk.value(_read_slot(*slot)))
            entry = entries.get(tuple(parts))
        except (Refused, TypeError):
            return _MISS
        tensors = walk.tensors
        if entry is not None and slots and not kwargs and len(tensors) == len(args):
            remember_fast(frame, state, args, entry, slots)
    if entry is None:
        return _MISS
    inputs = tensors if entry.direct == len(tensors) else [tensors[i] for i in entry.inputs]
    if entry.start_grad == grad and not entry.autocast_on and not enabled:
        outputs = entry.compiled(*inputs)
    else:
        outputs = _run_in_state(entry, inputs, grad)
    frame.replay_hits += 1
    template = entry.template
    if template[0] == "o":
        return outputs[template[1]]
    return _build(template, outputs, tensors)


def fast_lookup(frame: Any, root: Any, args: tuple[Any, ...]) -> Any:
    """:func:`lookup` for a call whose arguments are distinct plain contiguous tensors, by the
    key :func:`remember_fast` kept when such a call first replayed: the global state and each
    argument's interned layout (core's identity for shape, strides, dtype and device),
    offset and requires_grad, so a hit builds no fingerprint tuples and hashes no sizes.
    ``_MISS`` sends the call to :func:`lookup`."""
    if type(root) is not types.FunctionType or root.__closure__ is not None or \
            root.__defaults__ is not None or root.__kwdefaults__ is not None:
        return _MISS  # (the plain key's conditions: the fast key stands for that key)
    state = global_state()
    if len(args) == 2:  # the commonest arity, written out (one tuple, no loop)
        a, b = args
        if a.__class__ is not Tensor or b.__class__ is not Tensor or a is b:
            return _MISS  # (a is b: aliasing, which the walk marks)
        lay_a, lay_b = a._interned_layout, b._interned_layout
        if lay_a is None or lay_b is None or a.__dict__ or b.__dict__:
            return _MISS
        key: Any = (state, lay_a, a._offset, a._requires_grad, lay_b, b._offset,
                    b._requires_grad)
    else:
        key = _fast_key(state, args)
        if key is None:
            return _MISS
    entry = frame.replay_fast.get(key)
    if entry is None:
        return _MISS
    for slot, value in entry.slot_checks:
        if _read_slot(*slot) is not value:
            return _MISS  # a global rebound: the full walk finds its entry
    inputs = args if entry.direct == len(args) else [args[i] for i in entry.inputs]
    if entry.start_grad == state[0] and not entry.autocast_on and not state[2]:
        outputs = entry.fast(*inputs)
    else:
        outputs = _run_in_state(entry, inputs, state[0])
    frame.replay_hits += 1
    template = entry.template
    if template[0] == "o":
        return outputs[template[1]]
    return _build(template, outputs, args)


def remember_fast(frame: Any, state: tuple[Any, ...], args: tuple[Any, ...],
                  entry: ReplayEntry, slots: list[Any] | None = None) -> None:
    """Keep ``entry`` under :func:`fast_lookup`'s key when every argument is a distinct plain
    tensor with an interned layout and every global the code reads (``slots``) is a value
    fingerprinted by identity (a library module, function or class, a C function): the fast
    path then checks those globals by identity."""
    key = _fast_key(state, args)
    if key is None or len(frame.replay_fast) >= MAX_ENTRIES:
        return
    checks = []
    for slot in slots or ():
        value = _read_slot(*slot)
        try:
            if type(value) in _SCALAR_TYPES or Walk().value(value) != (value,):
                return  # fingerprinted by value or contents: the full walk's
        except Refused:
            return
        checks.append((slot, value))
    entry.slot_checks = tuple(checks)
    if entry.fast is entry.compiled:
        from torch._dynamo._direct import direct_graph

        entry.fast = direct_graph(entry.compiled) or entry.compiled
    frame.replay_fast[key] = entry


def _fast_key(state: tuple[Any, ...], args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """(state, then layout, offset, requires_grad of each argument), or None when an argument
    is not a plain tensor with an interned layout or two arguments are one tensor."""
    key: list[Any] = [state]
    for a in args:
        lay = a._interned_layout if a.__class__ is Tensor else None
        if lay is None or a.__dict__:
            return None
        key += (lay, a._offset, a._requires_grad)
    if len(args) > 1 and len(set(map(id, args))) != len(args):
        return None  # aliasing: the walk marks it
    return tuple(key)


def _plain_call_key(args: tuple[Any, ...], kwargs: dict[str, Any], root: Any) -> Any:
    """The key :meth:`Walk.top` makes, made directly for the commonest call: a plain function
    (no closure, no defaults) called with distinct plain tensors only; None otherwise."""
    if kwargs or type(root) is not types.FunctionType or root.__closure__ is not None or \
            root.__defaults__ is not None or root.__kwdefaults__ is not None:
        return None
    parts = []
    for a in args:
        t = type(a)
        if t not in _PLAIN_TENSORS or a.__dict__:
            return None
        dev = a._device
        parts.append((t, a._dtype, dev._type, dev._index, a._shape, a._stride, a._offset,
                      a._requires_grad, None))
    if len(args) > 1 and len({id(a) for a in args}) != len(args):
        return None  # aliasing: the walk's ("@", i) marks
    return (tuple(parts), None, (root,))


def _run_in_state(entry: ReplayEntry, inputs: list[Tensor], grad: bool) -> Any:
    """Run the entry's graph in the grad mode and autocast state its capture ran it in."""
    from torch._dynamo._capture import autocast_state, set_autocast_state

    autocast = autocast_state()
    _core_config.set_grad_state(entry.start_grad)
    set_autocast_state(entry.autocast)
    try:
        return entry.compiled(*inputs)
    finally:
        _core_config.set_grad_state(grad)
        set_autocast_state(autocast)


def add_entry(frame: Any, state: tuple[Any, ...], entry: ReplayEntry) -> None:
    """Keep ``entry`` for calls in global ``state`` (its globals are read at every lookup)."""
    if frame.replay_slots is None:
        frame.replay_slots = list(entry.global_slots)
    elif [s[2] for s in frame.replay_slots] != [s[2] for s in entry.global_slots] or any(
            a[0] is not b[0] for a, b in zip(frame.replay_slots, entry.global_slots)):
        return  # another path through the code reads other globals: keep the first set
    entries = frame.replays.setdefault(state, {})
    if len(entries) < MAX_ENTRIES:
        entries[entry.key] = entry
