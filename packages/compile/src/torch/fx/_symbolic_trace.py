"""Symbolic tracing: :class:`Tracer`, :func:`symbolic_trace` and :func:`wrap`.

The tracer calls the program once with :class:`~torch.fx.Proxy` objects for its inputs. While
it runs, ``nn.Module.__call__`` and ``nn.Module.__getattr__`` are patched: a call of a leaf
module (the ``torch.nn`` built-ins, by default) becomes one ``call_module`` node, other
modules are traced through, and reading a parameter or buffer becomes a ``get_attr`` node.
Functions registered with :func:`wrap` (and those of the ``autowrap`` modules and functions)
are patched in the globals that name them, so a call on a Proxy becomes one ``call_function``
node instead of running. Everything patched is restored when the trace ends, even on error.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import math
import operator
import types
import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.fx.graph import Graph
from torch.fx.graph_module import GraphModule
from torch.fx.node import Argument
from torch.fx.proxy import ParameterProxy, Proxy, TracerBase

__all__ = ["PH", "Tracer", "is_fx_tracing", "symbolic_trace", "wrap"]


class _PH:
    """The marker for ``concrete_args`` entries that stay inputs (``torch.fx.PH``)."""

    def __repr__(self) -> str:
        return "PH"


PH = _PH()

_is_fx_tracing_flag = False


def is_fx_tracing() -> bool:
    """Whether a symbolic trace is running."""
    return _is_fx_tracing_flag


# (id of a module's globals, name) -> those globals: functions registered with wrap()
_wrapped_fns_to_patch: dict[tuple[int, str], dict[str, Any]] = {}


def wrap(fn_or_name: str | Callable[..., Any]) -> str | Callable[..., Any]:
    """Record calls of a module-level function as one ``call_function`` node instead of
    tracing into it (for functions that branch on values, or builtins such as ``len``).

    Call it at the top level of the module whose code calls the function: the name is
    patched in that module's globals during traces.
    """
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    if callable(fn_or_name):
        name = fn_or_name.__name__
        if name == "<lambda>":
            raise NotImplementedError("wrap cannot be applied to a lambda")
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise TypeError("wrap expects a function or the name of one")
    _wrapped_fns_to_patch[(id(caller.f_globals), name)] = caller.f_globals
    return fn_or_name


def _find_proxy(args: Any, kwargs: Any) -> Proxy | None:
    found: list[Proxy] = []

    def look(a: Any) -> None:
        if isinstance(a, Proxy) and not found:
            found.append(a)

    from torch.fx.node import map_aggregate

    map_aggregate(args, look)
    map_aggregate(kwargs, look)
    return found[0] if found else None


def _wrapped(orig_fn: Callable[..., Any]) -> Callable[..., Any]:
    """``orig_fn`` that records one node when a Proxy is among its arguments."""

    @functools.wraps(orig_fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            return proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
        return orig_fn(*args, **kwargs)

    wrapped.__fx_orig__ = orig_fn  # type: ignore[attr-defined]
    return wrapped


class _Patcher:
    """Patches attributes and globals, and undoes every patch (last first) on exit."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []
        self._patched_globals: set[tuple[int, str]] = set()

    def __enter__(self) -> _Patcher:
        return self

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()

    def patch_attr(self, obj: Any, name: str, new: Any) -> None:
        had = name in obj.__dict__
        orig = obj.__dict__.get(name)
        setattr(obj, name, new)
        self._undo.append(lambda: setattr(obj, name, orig) if had else delattr(obj, name))

    def patch_global(self, globals_: dict[str, Any], name: str, new: Any) -> None:
        key = (id(globals_), name)
        if key in self._patched_globals:
            return
        self._patched_globals.add(key)
        if name in globals_:
            orig = globals_[name]
            self._undo.append(lambda: globals_.__setitem__(name, orig))
        else:
            self._undo.append(lambda: globals_.pop(name, None))
        globals_[name] = new

    def autowrap(self, globals_: dict[str, Any], function_ids: set[int]) -> None:
        """Patch every global of ``globals_`` that is one of the autowrapped functions."""
        for name, value in list(globals_.items()):
            if not name.startswith("_") and callable(value) and id(value) in function_ids:
                self.patch_global(globals_, name, _wrapped(value))


class Tracer(TracerBase):
    """Turns a module or function into a :class:`Graph` by running it on proxies.

    :param autowrap_modules: modules whose public functions are recorded as one node when
        called on a Proxy (``math`` by default: ``math.sqrt(x.size(-1))``).
    :param autowrap_functions: more functions recorded that way.
    :param param_shapes_constant: parameters' ``shape``, ``size()``, ``dim()`` and
        ``numel()`` answer with the real values instead of recording nodes.
    """

    def __init__(self, autowrap_modules: tuple[types.ModuleType, ...] = (math,),
                 autowrap_functions: tuple[Callable[..., Any], ...] = (),
                 param_shapes_constant: bool = False) -> None:
        super().__init__()
        self._autowrap_modules = tuple(autowrap_modules)
        self._autowrap_function_ids = {
            id(value) for module in autowrap_modules for name, value in vars(module).items()
            if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self.param_shapes_constant = param_shapes_constant
        self.proxy_buffer_attributes = True
        self.submodule_paths: dict[nn.Module, str] | None = None
        self.scope = None
        self.module_stack: dict[str, Any] = {}
        self.node_name_to_scope: dict[str, Any] = {}
        self.tensor_attrs: dict[int, tuple[torch.Tensor, str]] = {}
        self._param_names: dict[int, str] = {}
        self._buffer_names: dict[int, str] = {}

    # -- hooks a subclass overrides ---------------------------------------------------------

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        """Whether calls of ``m`` stay one ``call_module`` node: by default the modules of
        ``torch.nn`` (except ``Sequential``, which is traced through)."""
        module = type(m).__module__
        return (module.startswith("torch.nn") or module.startswith("torch.ao.nn")) and \
            not isinstance(m, nn.Sequential)

    def path_of_module(self, mod: nn.Module) -> str:
        """The qualified name of ``mod`` in the traced root.

        :raises NameError: when ``mod`` is not a submodule of the root.
        """
        if self.submodule_paths is not None:
            path = self.submodule_paths.get(mod)
            if path is not None:
                return path
        for name, candidate in self.root.named_modules():
            if candidate is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: nn.Module, forward: Callable[..., Any], args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> Any:
        """A call of submodule ``m``: one node for a leaf, otherwise traced through."""
        qualified = self.path_of_module(m)
        if not self.is_leaf_module(m, qualified):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", qualified, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Any]
                ) -> Any:
        """What reading ``module.attr`` gives during a trace: a ``get_attr`` Proxy for a
        parameter (and for a buffer), the value otherwise."""
        if isinstance(attr_val, torch.Tensor):
            is_param = isinstance(attr_val, nn.Parameter)
            if is_param or self.proxy_buffer_attributes:
                name = self._param_names.get(id(attr_val)) if is_param else \
                    self._buffer_names.get(id(attr_val))
                if name is not None:
                    if name not in parameter_proxy_cache:
                        factory = None
                        if is_param and self.param_shapes_constant:
                            def factory(node: Any, name: str = name) -> Proxy:
                                return ParameterProxy(self, node, name, attr_val)
                        parameter_proxy_cache[name] = self.create_proxy(
                            "get_attr", name, (), {}, proxy_factory_fn=factory)
                    return parameter_proxy_cache[name]
        return attr_val

    def create_arg(self, a: Any) -> Argument:
        """As :meth:`TracerBase.create_arg`; tensors become ``get_attr`` nodes (a tensor that
        is no attribute of the root is added to it as ``_tensor_constant<N>``)."""
        if isinstance(a, nn.Parameter):
            name = self._param_names.get(id(a))
            if name is None:
                raise NameError("parameter is not a member of this module")
            return self.create_node("get_attr", name, (), {})
        if isinstance(a, torch.Tensor) and not isinstance(a, Proxy):
            known = self.tensor_attrs.get(id(a))
            if known is None or known[0] is not a:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                qualname = f"_tensor_constant{i}"
                setattr(self.root, qualname, a)
                known = self.tensor_attrs[id(a)] = (a, qualname)
            return self.create_node("get_attr", known[1], (), {})
        return super().create_arg(a)

    # -- the trace --------------------------------------------------------------------------

    def trace(self, root: nn.Module | Callable[..., Any],
              concrete_args: dict[str, Any] | None = None) -> Graph:
        """Trace ``root`` (a module's ``forward``, or a function) into a new graph.

        :param concrete_args: inputs to fix to a value (so control flow on them can be
            traced); the value ``torch.fx.PH`` keeps an entry an input.
        """
        global _is_fx_tracing_flag
        if isinstance(root, nn.Module):
            self.root = root
            fn = getattr(type(root), self.traced_func_name)
            is_module = True
        else:
            self.root = nn.Module()
            fn = root
            is_module = False
        self.graph = Graph(tracer_cls=type(self))
        self.submodule_paths = {mod: name for name, mod in self.root.named_modules()}
        self._param_names, self._buffer_names = {}, {}
        for name, p in self.root.named_parameters(remove_duplicate=False):
            self._param_names.setdefault(id(p), name)
        for name, b in self.root.named_buffers(remove_duplicate=False):
            self._buffer_names.setdefault(id(b), name)
        # every tensor the root holds, by identity (the tensor is kept so its id stays its own)
        self.tensor_attrs = {}
        for name, t in (*self.root.named_parameters(remove_duplicate=False),
                        *self.root.named_buffers(remove_duplicate=False)):
            self.tensor_attrs.setdefault(id(t), (t, name))
        for mod_name, mod in self.root.named_modules():
            for attr, value in vars(mod).items():
                if isinstance(value, torch.Tensor):
                    path = f"{mod_name}.{attr}" if mod_name else attr
                    self.tensor_attrs.setdefault(id(value), (value, path))

        fn_globals = getattr(fn, "__globals__", {})
        call, args, kwargs = self._create_args_for_root(fn, is_module, concrete_args)
        parameter_proxy_cache: dict[str, Any] = {}
        orig_getattr = nn.Module.__getattr__
        orig_call = nn.Module.__call__
        tracer = self

        def module_getattr_wrapper(mod: nn.Module, attr: str) -> Any:
            return tracer.getattr(attr, orig_getattr(mod, attr), parameter_proxy_cache)

        def module_call_wrapper(mod: nn.Module, *args: Any, **kwargs: Any) -> Any:
            def forward(*args: Any, **kwargs: Any) -> Any:
                return orig_call(mod, *args, **kwargs)

            patcher.autowrap(getattr(getattr(mod, "forward", mod), "__globals__", {}),
                             tracer._autowrap_function_ids)
            return tracer.call_module(mod, forward, args, kwargs)

        previous_flag = _is_fx_tracing_flag
        _is_fx_tracing_flag = True
        try:
            with _Patcher() as patcher:
                patcher.patch_attr(nn.Module, "__getattr__", module_getattr_wrapper)
                patcher.patch_attr(nn.Module, "__call__", module_call_wrapper)
                for (_, name), globals_ in list(_wrapped_fns_to_patch.items()):
                    orig = globals_.get(name, getattr(builtins, name, None))
                    if orig is not None:
                        patcher.patch_global(globals_, name, _wrapped(orig))
                patcher.autowrap(fn_globals, self._autowrap_function_ids)
                for module in self._autowrap_modules:
                    patcher.autowrap(vars(module), self._autowrap_function_ids)
                result = call(*args, **kwargs)
                return_type = getattr(fn, "__annotations__", {}).get("return")
                if isinstance(return_type, str):
                    return_type = None  # a string annotation cannot be evaluated here
                self.create_node("output", "output", (self.create_arg(result),), {},
                                 type_expr=return_type)
        finally:
            _is_fx_tracing_flag = previous_flag
            self.submodule_paths = None
        return self.graph

    def _create_args_for_root(self, fn: Callable[..., Any], is_module: bool,
                              concrete_args: dict[str, Any] | None
                              ) -> tuple[Callable[..., Any], list[Any], dict[str, Any]]:
        """The placeholders (or concrete values) ``fn`` is called with, and ``fn`` itself
        rewritten to take ``*args``/``**kwargs`` as plain parameters when it has them."""
        signature = inspect.signature(fn)
        params = list(signature.parameters.values())
        if is_module:
            params = params[1:]
        if isinstance(concrete_args, (tuple, list)):
            concrete_args = {p.name: v for p, v in zip(params, concrete_args)}
        concrete = dict(concrete_args or {})
        unknown = set(concrete) - {p.name for p in params}
        if unknown:
            raise ValueError(f"concrete_args names parameters {sorted(unknown)} that "
                             f"{getattr(fn, '__name__', fn)} does not have")
        variadic = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)
        call = _flatten_variadics(fn) if variadic else fn
        args: list[Any] = [self.root] if is_module else []
        kwargs: dict[str, Any] = {}
        for p in params:
            prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
            if p.name in concrete and concrete[p.name] is not PH:
                arg: Any = concrete[p.name]
                self._specialise(p, prefix, arg)
            else:
                default = () if p.default is inspect.Parameter.empty else (p.default,)
                type_expr = None if p.annotation is inspect.Parameter.empty else p.annotation
                if isinstance(type_expr, str):
                    type_expr = None  # a string annotation cannot be evaluated here
                node = self.create_node("placeholder", prefix + p.name, default, {},
                                        type_expr=type_expr)
                arg = self.proxy(node)
            if p.kind == p.KEYWORD_ONLY:
                kwargs[p.name] = arg
            else:
                args.append(arg)
        return call, args, kwargs


    def _specialise(self, p: inspect.Parameter, prefix: str, value: Any) -> None:
        """An input fixed by ``concrete_args``: it stays in the signature (as ``<name>_1``,
        with the parameter's default) and the graph asserts that it is given the traced
        value, as PyTorch does; a value with no equality to check only warns."""
        default = () if p.default is inspect.Parameter.empty else (p.default,)
        node = self.create_node("placeholder", f"{prefix}{p.name}_1", default, {})
        message = f"{p.name} has been specialized to have value {value} but got another value"
        if type(value) in (bool, int, float, complex, str):
            equal = self.create_node("call_function", operator.eq, (node, value), {})
            self.create_node("call_function", torch._assert, (equal, message), {})
        elif value is None:
            self.create_node("call_function", _assert_is_none, (node, message), {})
        else:
            warnings.warn(f"Was not able to add assertion to guarantee correct input {p.name} "
                          "to specialized function. It is up to the user to make sure that "
                          "your inputs match the inputs you specialized the function with.",
                          stacklevel=4)


def _assert_is_none(value: Any, msg: str) -> None:
    """The check a ``concrete_args`` entry of None leaves in the graph."""
    if value is not None:
        raise AssertionError(msg)


def _flatten_variadics(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its ``*args`` and ``**kwargs`` turned into ordinary parameters, so that a
    single Proxy can be passed for each (a Proxy cannot be unpacked)."""
    code = fn.__code__
    if code.co_kwonlyargcount:
        raise NotImplementedError("symbolic_trace: a function with both *args/**kwargs and "
                                  "keyword-only parameters is not supported")
    extra = bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags &
                                                           inspect.CO_VARKEYWORDS)
    new_code = code.replace(co_argcount=code.co_argcount + extra,
                            co_flags=code.co_flags & ~(inspect.CO_VARARGS |
                                                       inspect.CO_VARKEYWORDS))
    return types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def symbolic_trace(root: nn.Module | Callable[..., Any],
                   concrete_args: dict[str, Any] | None = None) -> GraphModule:
    """Trace ``root`` with a default :class:`Tracer` and return it as a GraphModule."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
