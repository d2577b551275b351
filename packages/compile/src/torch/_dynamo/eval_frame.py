"""``optimize``: what ``torch.compile`` hands a model to (packages/compile/README.md).

The wrapper it returns runs each call under graph capture (:mod:`torch._dynamo._capture`): the
program's Python runs as written while its tensor operations are recorded into graphs, which
the backend compiles once per guard set (:mod:`torch._dynamo._cache`) and which then run.
"""

from __future__ import annotations

import functools
import inspect
import sys
import weakref
from collections.abc import Callable, Sized
from typing import Any

from torch import nn
from torch._core.tensor import Tensor
from torch._dynamo import _cache, _capture, _log, _replay, config
from torch._dynamo.backends.registry import lookup_backend, resolve_backend

__all__ = ["OptimizedModule", "optimize", "reset_all", "run_disabled", "set_stance"]

_frames: weakref.WeakSet[_cache.FrameState] = weakref.WeakSet()
_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile",
            "eager_then_compile", "aot_eager_then_compile")
# stances under which a call may replay at once (the others decide per call what runs)
_REPLAY_STANCES = frozenset(("default", "eager_on_recompile", "fail_on_recompile"))
# stances whose first call of each compiled function runs eagerly
_EAGER_FIRST_STANCES = frozenset(("eager_then_compile", "aot_eager_then_compile"))
_config_values = config._values  # read directly on every call (the module's __getattr__ is slower)


def set_stance(stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
               force_backend: Any = None) -> Any:
    """``torch.compiler.set_stance``: how compiled functions behave from now on.

    ``"default"`` compiles; ``"force_eager"`` runs every compiled function eagerly;
    ``"eager_on_recompile"`` runs a graph eagerly instead of recompiling it;
    ``"fail_on_recompile"`` raises :class:`~torch._dynamo.exc.RecompileError` instead;
    ``"eager_then_compile"`` (and ``"aot_eager_then_compile"``) runs each compiled
    function's first call eagerly and compiles from its second. Usable as a call, a context
    manager and a decorator (the previous stance comes back). As in PyTorch, an unknown
    stance is accepted here and refused by the next compiled call (``RuntimeError``).

    :raises AssertionError: called inside a compiled function (PyTorch forbids it there).
    """
    if _capture.current() is not None:
        raise AssertionError(f"Attempt to trace forbidden callable {set_stance!r}")
    previous = _cache.stance[0]
    _cache.stance[0] = stance
    return _StanceRestore(previous, stance)


class _StanceRestore:
    """What set_stance returns: the stance is set already; ``with`` restores the old one."""

    def __init__(self, previous: str, stance: str) -> None:
        self.previous = previous
        self.stance = stance

    def __enter__(self) -> None:
        _cache.stance[0] = self.stance

    def __exit__(self, *exc: object) -> None:
        _cache.stance[0] = self.previous

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        _cache.stance[0] = self.previous  # as a decorator: only inside the function

        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return inner


def reset_all() -> None:
    """Forget every compiled graph of every compiled function."""
    for frame in list(_frames):
        frame.reset()


def run_disabled(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` eagerly: a graph being captured is flushed first (a graph break)."""
    capture = _capture.current()
    if capture is None:
        return fn(*args, **kwargs)
    name = getattr(fn, "__qualname__", repr(fn))
    # PyTorch's opening words, which programs match
    capture.flush(f"Skip calling `torch.compiler.disable()`d function: {name}, which "
                  f"torch.compiler.disable keeps eager")
    with _capture._suspended():
        return fn(*args, **kwargs)


def run_skipped(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` as its own stretch of the capture (``disable(recursive=False)``): a graph
    break before and after it, the ops of the functions it calls captured in between."""
    capture = _capture.current()
    if capture is None:
        return fn(*args, **kwargs)
    name = getattr(fn, "__qualname__", repr(fn))
    capture.flush(f"Skip inlining `torch.compiler.disable()`d function: {name} "
                  f"(recursive=False: the functions it calls are captured)")
    result = fn(*args, **kwargs)
    capture = _capture.current()
    if capture is not None:
        capture.flush(f"Skip inlining `torch.compiler.disable()`d function: return from "
                      f"{name}")
    return result


def _name_tensors(names: dict[int, str], prefix: str, value: Any, depth: int = 0) -> None:
    """id(tensor) -> the program's name for it, for guards and graph placeholders."""
    if isinstance(value, Tensor):
        names.setdefault(id(value), prefix)
    elif isinstance(value, nn.Module):
        for name, t in value.named_parameters():
            names.setdefault(id(t), f"{prefix}.{name}")
        for name, t in value.named_buffers():
            names.setdefault(id(t), f"{prefix}.{name}")
    elif isinstance(value, (list, tuple)) and depth < 2:
        for i, v in enumerate(value):
            _name_tensors(names, f"{prefix}[{i}]", v, depth + 1)
    elif isinstance(value, dict) and depth < 2:
        for k, v in value.items():
            _name_tensors(names, f"{prefix}[{k!r}]", v, depth + 1)


def _arg_names(fn: Callable[..., Any], module: nn.Module | None, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> dict[int, str]:
    names: dict[int, str] = {}
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
        items = list(bound.arguments.items())
    except (TypeError, ValueError):
        items = [(f"arg{i}", a) for i, a in enumerate(args)] + list(kwargs.items())
    for name, value in items:
        _name_tensors(names, name, value)
        if type(value) is int:  # an int argument a graph may take as an input (x[:n])
            names.setdefault(("int", value), name)  # type: ignore[call-overload]
    if module is not None:
        _name_tensors(names, "self", module)
    _name_free_values(names, fn)
    return names


def _name_free_values(names: dict[Any, str], fn: Callable[..., Any]) -> None:
    """The tensors and modules ``fn`` reads from its globals and closure cells, named after
    the variable (a global model ``m``'s weight: ``m.weight``, placeholder ``l_m_weight_``)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    scope = getattr(fn, "__globals__", {})
    for name in code.co_names:
        value = scope.get(name)
        if isinstance(value, (Tensor, nn.Module)):
            _name_tensors(names, name, value)
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, (Tensor, nn.Module)):
            _name_tensors(names, name, value)


def _compiled_call(fn: Callable[..., Any], signature_fn: Callable[..., Any],
                   module: nn.Module | None, frame: _cache.FrameState, fullgraph: bool,
                   verify: bool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """One call of a compiled function: replayed when an accepted capture's state matches
    (torch._dynamo._replay); otherwise its Python runs and its tensor ops are captured."""
    captures = _capture._stack.captures
    stance = _cache.stance[0]
    if stance not in _REPLAY_STANCES:
        if stance not in _STANCES:
            raise RuntimeError(f"invalid torch.compile stance 'DynamoStance(stance={stance!r}, "
                               f"skip_guard_eval_unsafe=False, backend=None)'")
        if stance in _EAGER_FIRST_STANCES:
            if not frame.called:
                frame.called = True
                frame.first_sizes = _tensor_sizes(args)
                return fn(*args, **kwargs)
            if frame.first_sizes is not None:
                # the dims that changed since the eager call compile dynamic (PyTorch
                # infers dynamism from the first two calls under this stance)
                _mark_changed_dims(frame.first_sizes, args)
                frame.first_sizes = None
    frame.called = True
    if (frame.eager or stance == "force_eager" or _config_values["disable"]
            or (captures and captures[-1] is not None)):
        # past the recompile limit, forced eager, or called inside another compiled
        # function (whose capture records its ops)
        return fn(*args, **kwargs)
    if frame.replays:
        result = _replay.lookup(frame, fn, args, kwargs)
        if result is not _replay._MISS:
            return result
    capture = _capture.Capture(frame, fullgraph,
                               lambda: _arg_names(signature_fn, module, args, kwargs), verify)
    capture.global_lengths = _cache.global_lengths(fn)
    probe = None
    if (frame.replay_refused is None and not verify and _config_values["replay"]
            and sys.getprofile() is None):
        probe = _replay.Probe(fn, args, kwargs)
    mode = _capture.enter(capture)
    try:
        if probe is not None:
            sys.setprofile(probe)
        try:
            result = fn(*args, **kwargs)
        except BaseException:
            if probe is not None and sys.getprofile() is probe:
                sys.setprofile(None)
            # the operations that ran before the exception in eager did run: so do these
            capture.flush()
            raise
        if probe is not None and sys.getprofile() is probe:
            sys.setprofile(None)  # (a profiler the program installed meanwhile stays)
        capture.flush()
    finally:
        _capture.leave(mode)
    if probe is not None:
        _accept(frame, probe, capture, result)
    return result


def _tensor_sizes(args: tuple[Any, ...]) -> list[tuple[int, ...] | None]:
    return [tuple(a.shape) if isinstance(a, Tensor) else None for a in args]


def _mark_changed_dims(first: list[tuple[int, ...] | None], args: tuple[Any, ...]) -> None:
    """``maybe_mark_dynamic`` the dims of ``args`` whose sizes differ from ``first``."""
    from torch._dynamo.markers import maybe_mark_dynamic

    for before, arg in zip(first, args):
        if before is not None and isinstance(arg, Tensor) and arg.dim() == len(before):
            changed = [d for d, (a, b) in enumerate(zip(before, arg.shape)) if a != b]
            if changed:
                maybe_mark_dynamic(arg, changed)


def _accept(frame: _cache.FrameState, probe: _replay.Probe, capture: _capture.Capture,
            result: Any) -> None:
    """Keep the probed call as a replay entry, or record why it cannot be one."""
    try:
        entry = probe.accept(capture, result)
    except (_replay.Refused, TypeError) as exc:
        frame.replay_probes += 1
        if getattr(exc, "final", True) or frame.replay_probes >= _replay.MAX_PROBES:
            frame.replay_refused = str(exc) or type(exc).__name__
            _cache.counters["replay_refused"][frame.replay_refused] += 1
            _log.recompiles.debug("%s is not replayed: %s", frame.name, frame.replay_refused)
        return
    _replay.add_entry(frame, probe.state_before, entry)


def _make_frame(name: str, backend: Any, options: dict[str, Any] | None,
                dynamic: bool | None) -> _cache.FrameState:
    frame = _cache.FrameState(name, resolve_backend(backend), dict(options or {}), dynamic)
    _frames.add(frame)
    return frame


class OptimizedModule(nn.Module):
    """What ``torch.compile`` returns for an ``nn.Module``: an ``nn.Module`` that holds the
    original as its one submodule, ``_orig_mod``, as in PyTorch.

    So ``state_dict()`` and ``named_parameters()`` keys carry the ``_orig_mod.`` prefix, and
    ``load_state_dict`` expects it. Attribute reads that the wrapper does not answer itself
    go to the original module (``compiled.weight``), writes go there too, and ``training`` is
    the original's. Calling the wrapper calls the module (its hooks included) under graph
    capture.
    """

    # Names the wrapper keeps for itself; any other attribute write goes to the original.
    _opt_mod_attributes = frozenset({"_orig_mod", "forward", "_torchdynamo_orig_callable",
                                     "_compile_call"})

    def __init__(self, mod: nn.Module, compile_call: Callable[..., Any] | None = None) -> None:
        """:param mod: the module to wrap.
        :param compile_call: what a call runs (the module's call under capture); None calls
            the module as it is.
        """
        super().__init__()
        self._orig_mod = mod  # registered as the submodule "_orig_mod" by nn.Module
        # The instance's forward is the original's bound method, as PyTorch sets it.
        self.forward = mod.forward
        self._torchdynamo_orig_callable = mod.forward
        self._compile_call = compile_call

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        call = self.__dict__.get("_compile_call")
        if call is None:
            return self._orig_mod(*args, **kwargs)
        return call(*args, **kwargs)

    @property  # type: ignore[override]
    def training(self) -> bool:
        """The original module's training flag."""
        orig = self.__dict__.get("_modules", {}).get("_orig_mod")
        return True if orig is None else orig.training

    @training.setter
    def training(self, mode: bool) -> None:
        orig = self.__dict__.get("_modules", {}).get("_orig_mod")
        if orig is not None:  # nn.Module.__init__ sets it before the original is attached
            orig.training = mode

    def __getattr__(self, name: str) -> Any:
        if name == "_orig_mod":
            modules = self.__dict__.get("_modules")
            if modules is None or "_orig_mod" not in modules:  # copy, unpickling: no recursion
                raise AttributeError(name)
            return modules["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(type(self), name) or name in self._opt_mod_attributes:
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if hasattr(type(self), name) or name in self._opt_mod_attributes:
            super().__delattr__(name)
        else:
            delattr(self._orig_mod, name)

    def __len__(self) -> int:
        # A compiled Sequential or ModuleList has the original's length; as in PyTorch, any
        # other module has none (so bool() of it raises too).
        if isinstance(self._orig_mod, Sized):
            return len(self._orig_mod)
        raise TypeError(f"{type(self._orig_mod).__name__} does not support len()")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(dir(self._orig_mod)))

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as "wrap this module again" (an uncompiled wrapper: compiled graphs are
        # not pickled).
        return (type(self), (self._orig_mod,))


def optimize(*args: Any, **kwargs: Any) -> Callable[..., Any]:
    """PyTorch's decorator factory ``torch._dynamo.optimize(backend="inductor", *,
    nopython=False, dynamic=None, disable=False)``: returns a decorator compiling a function
    or module as ``torch.compile(fn, backend=backend, fullgraph=nopython, dynamic=dynamic)``
    (older tutorials write ``torch._dynamo.optimize("inductor")(model)``).

    Called as ``optimize(model, backend=...)`` (core's ``torch.compile`` does), it compiles
    ``model`` at once: see :func:`compile_callable`.
    """
    if args and "backend" in kwargs:
        return compile_callable(*args, **kwargs)
    if len(args) > 1:
        raise TypeError("torch._dynamo.optimize takes one positional argument, the backend")
    backend = args[0] if args else kwargs.pop("backend", "inductor")
    fullgraph = bool(kwargs.pop("nopython", False))
    dynamic = kwargs.pop("dynamic", None)
    disable = kwargs.pop("disable", False)
    for ignored in ("guard_export_fn", "guard_fail_fn", "rebuild_ctx"):
        kwargs.pop(ignored, None)
    if kwargs:
        raise TypeError(f"torch._dynamo.optimize got unexpected arguments {sorted(kwargs)}")
    lookup_backend(backend)  # an unknown name fails here, as in PyTorch

    def decorator(model_or_fn: Callable[..., Any]) -> Callable[..., Any]:
        if disable:
            return model_or_fn
        return compile_callable(model_or_fn, backend=backend, fullgraph=fullgraph,
                                dynamic=dynamic)

    return decorator


def compile_callable(
    model_or_fn: Callable[..., Any],
    *,
    backend: str | Callable[..., Any] = "inductor",
    fullgraph: bool = False,
    dynamic: bool | None = None,
    mode: str | None = None,
    options: dict[str, Any] | None = None,
) -> Callable[..., Any]:
    """Wrap a function or module so that its calls are captured into graphs and compiled.

    ``torch.compile`` validates ``mode``, ``options`` and the Python version before it calls
    this. ``mode`` is accepted (no backend tunes yet). ``options={"verify": True}`` runs each
    graph eagerly beside the compiled one and raises at the first node that differs.

    :param model_or_fn: an ``nn.Module``, or any other callable (a function, a callable object).
    :param backend: a name from :func:`~torch._dynamo.backends.registry.list_backends` or a
        backend callable ``(GraphModule, example_inputs) -> callable``.
    :param fullgraph: a graph break raises :class:`~torch._dynamo.exc.Unsupported`.
    :param dynamic: symbolic sizes from the start (``True``), never (``False``) or after a
        size change (``None``).
    :param mode: a ``torch.compile`` mode.
    :param options: backend options.
    :returns: an :class:`OptimizedModule` for an ``nn.Module``, otherwise a function wrapper
        made with :func:`functools.wraps`; its ``_torchdynamo_orig_callable`` is the original,
        as in PyTorch.
    :raises InvalidBackend: ``backend`` is a string that names no backend.
    :raises TypeError: ``model_or_fn`` is not callable, or ``backend`` is neither a name nor
        callable.
    """
    if not callable(model_or_fn):
        raise TypeError(
            f"torch.compile expects a function or an nn.Module, got {type(model_or_fn).__name__}"
        )
    verify = bool((options or {}).get("verify", False))
    name = getattr(model_or_fn, "__qualname__", type(model_or_fn).__name__)
    frame = _make_frame(name, backend, options, dynamic)
    if isinstance(model_or_fn, nn.Module):
        mod = model_or_fn

        def call_module(*args: Any, **kwargs: Any) -> Any:
            return _compiled_call(mod, mod.forward, mod, frame, fullgraph, verify, args, kwargs)

        optimized = OptimizedModule(mod, call_module)
        optimized.__dict__["_torchdynamo_frame"] = frame
        return optimized

    fn = model_or_fn
    owner = getattr(fn, "__self__", None)
    module = owner if isinstance(owner, nn.Module) else None

    @functools.wraps(fn)
    def compiled(*args: Any, **kwargs: Any) -> Any:
        # the commonest replayed call first (_compiled_call's conditions, then a fast key)
        if frame.replay_fast and not kwargs and not frame.eager and \
                _cache.stance[0] in _REPLAY_STANCES and not _config_values["disable"]:
            captures = _capture._stack.captures
            if not (captures and captures[-1] is not None):
                result = _replay.fast_lookup(frame, fn, args)
                if result is not _replay._MISS:
                    return result
        return _compiled_call(fn, fn, module, frame, fullgraph, verify, args, kwargs)

    compiled._torchdynamo_orig_callable = fn  # type: ignore[attr-defined]
    compiled._torchdynamo_frame = frame  # type: ignore[attr-defined]
    return compiled
