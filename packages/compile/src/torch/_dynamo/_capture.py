"""Capture by deferred execution: the user's Python runs as written, tensor operations are
recorded (packages/compile/README.md, "Graph capture").

While a compiled function runs, a :class:`CaptureMode` (a ``TorchFunctionMode``) sees every
public torch call. A call it can defer runs on fake tensors only (its output metadata, through
``FakeTensorMode``, without autograd; ``requires_grad`` is set as eager would set it) and is
appended to the current :class:`Recording`; its results are
:class:`~torch._dynamo._lazy.LazyTensor` s. A call that needs data (``item``, ``bool``,
``print``, ``backward``, a shape-changing in-place method, global RNG state...) is a *graph
break*: the recording is flushed (compiled by the backend, or found in the cache, and run on
the real inputs; every lazy tensor still referenced becomes its real value), then the call
runs eagerly and recording starts again. The function's return flushes too. Nothing the
program does in Python is skipped or replayed.
"""

from __future__ import annotations

import linecache
import operator
import sys
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch._core import config as _core_config
from torch._core.tensor import Tensor
from torch._dynamo import _cache, _log, _plans
from torch._dynamo._lazy import LazyTensor, become
from torch._dynamo.exc import TorchRuntimeError, Unsupported
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.amp import autocast_mode as _amp
from torch.overrides import TorchFunctionMode

__all__ = ["CaptureMode", "Recording", "current", "set_grad_enabled_node"]

# Tensor methods that read data or change what Python sees of a tensor (its sizes, its
# autograd state) at once: they break the graph and run eagerly on real tensors.
_BREAK_METHODS = frozenset((
    "item", "tolist", "numpy", "__bool__", "__float__", "__int__", "__index__", "__complex__",
    "__array__", "__dlpack__", "__format__", "__reduce_ex__", "__setstate__", "backward",
    "data_ptr", "untyped_storage", "storage", "register_hook", "register_post_accumulate_grad_hook",
    "retain_grad", "requires_grad_", "detach_", "resize_", "resize_as_", "squeeze_", "unsqueeze_",
    "t_", "transpose_", "swapdims_", "swapaxes_", "as_strided_", "set_", "share_memory_",
    "pin_memory", "record_stream", "is_nonzero", "equal", "allclose",
))
# the break methods that only read data: on a tensor no pending op makes or writes they run
# at once, without a graph break
_READ_METHODS = frozenset((
    "item", "tolist", "numpy", "__bool__", "__float__", "__int__", "__index__", "__complex__",
    "__array__", "__dlpack__", "__format__", "data_ptr", "is_nonzero", "equal", "allclose",
))
# reads PyTorch captures as symbolic scalars with config.capture_scalar_outputs (and, in
# 2.13, always under fullgraph=True; numpy() too), and the fake run's errors of ops whose
# output size depends on data (nonzero, x[mask], unique), which it captures with
# config.capture_dynamic_output_shape_ops or fullgraph=True: breaks here still, but
# fullgraph=True allows them
_SCALAR_OUTPUTS = frozenset(("item", "__float__", "__int__", "__index__", "numpy"))
_DYNAMIC_OUTPUT_ERRORS = frozenset(("DynamicOutputShapeException",
                                    "DataDependentOutputException"))
# global functions with side effects on state the graph's ops read: break, then run
_BREAK_FUNCTIONS = ("manual_seed", "seed", "get_rng_state", "set_rng_state", "set_default_dtype",
                    "set_default_device", "use_deterministic_algorithms")
# leaf types a deferred call may return besides tensors (metadata answers: sizes, dtypes...)
_PLAIN = (int, float, bool, str, type(None), torch.dtype, torch.device, torch.Size)

_TENSOR_METHOD_NAMES: dict[Any, str] = {}  # protocol entry -> Tensor method name


def _method_name(func: Any) -> str | None:
    if not _TENSOR_METHOD_NAMES:
        for name, value in vars(Tensor).items():
            if callable(value):
                _TENSOR_METHOD_NAMES[value] = name
    return _TENSOR_METHOD_NAMES.get(func)


_AUTOCAST_DEVICES = ("cpu",)
_amp_local = _amp._local  # autocast's per-thread state (enabled: device type -> dtype)


def autocast_state() -> tuple[Any, ...]:
    """(device, enabled, dtype) of autocast for the devices it applies to here."""
    from torch.amp import autocast_mode as amp

    return tuple((d, amp.is_autocast_enabled(d), amp.get_autocast_dtype(d))
                 for d in _AUTOCAST_DEVICES)


def set_autocast_state(state: tuple[Any, ...]) -> None:
    """Put autocast back in ``state`` (as :func:`autocast_state` returned it)."""
    from torch.amp import autocast_mode as amp

    for device, enabled, dtype in state:
        amp.set_autocast_enabled(device, enabled)
        amp.set_autocast_dtype(device, dtype)


def set_grad_enabled_node(mode: bool) -> None:
    """A graph node that switches grad mode, as the recorded program did at that point."""
    torch.set_grad_enabled(mode)


_SET_GRAD = set_grad_enabled_node


class Ref:
    """A value in a recording: input ``index`` (``op`` None) or output ``index`` of op ``op``
    (``index`` None for a single result)."""

    __slots__ = ("index", "op")

    def __init__(self, op: int | None, index: int | None) -> None:
        self.op = op
        self.index = index

    def key(self) -> tuple[Any, ...]:
        return ("ref", self.op, self.index)


class Recording:
    """The operations of one graph, in order, with their inputs (real tensors by identity)."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        # one fake mode per compiled function, so that an input's fake (and the metadata
        # plans keyed on it) serve every call; its memo of real tensors is this recording's
        frame = capture.frame
        if frame.fake_mode is None:
            frame.fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
        self.fake_mode = frame.fake_mode
        self.fake_mode._memo.clear()
        self.real_of: dict[int, Tensor] = {}  # id(input's fake) -> the input
        self.peeked: set[int | float] = set()  # numbers read from pending ops (Capture.peek)
        # (kind, target, args, kwargs): kind "call_function" or "call_method"; args hold Refs
        self.ops: list[tuple[str, Any, tuple[Any, ...], dict[str, Any]]] = []
        self.op_fakes: list[Any] = []  # each op's fake result (node meta)
        self.structure: list[Any] = []  # hashable description of each op
        self.inputs: list[Tensor] = []
        self.input_ids: dict[int, Ref] = {}
        self.input_fakes: list[FakeTensor] = []
        self.lazies: list[weakref.ref[LazyTensor]] = []
        self.grad_enabled = torch.is_grad_enabled()
        self.start_grad = self.grad_enabled
        self.default_dtype = torch.get_default_dtype()
        self.constants: list[Any] = []  # objects keyed by id: kept alive with the key
        self.in_fake_run = False  # a call's metadata run is under way (not to be recorded)
        self.autocast = autocast_state()
        self.autocast_enabled = dict(_amp_local.enabled)  # cheap to compare at every op
        self.inference = _core_config._local.inference  # inference mode: ops make
        # inference tensors, so a graph runs in the inference mode of its ops

    # -- values in -----------------------------------------------------------------------

    def lift(self, value: Any) -> tuple[Any, Any]:
        """(the value a fake run gets, the value the recording holds) for one argument."""
        if isinstance(value, LazyTensor):
            if value.capture is not self.capture:
                raise RuntimeError("a tensor of another compiled graph reached this one")
            return value, value.ref
        if isinstance(value, Tensor):
            ref = self.input_ids.get(id(value))
            if ref is None:
                fake = self._input_fake(value)
                ref = Ref(None, len(self.inputs))
                self.input_ids[id(value)] = ref
                self.inputs.append(value)
                self.input_fakes.append(fake)
                self.real_of[id(fake)] = value
            return self.input_fakes[ref.index], ref  # type: ignore[index]
        if isinstance(value, (list, tuple)):
            pairs = [self.lift(v) for v in value]
            fakes = [p[0] for p in pairs]
            refs = [p[1] for p in pairs]
            if isinstance(value, tuple):
                if hasattr(value, "_make"):
                    return value._make(fakes), value._make(refs)  # type: ignore[attr-defined]
                return tuple(fakes), tuple(refs)
            return fakes, refs
        if isinstance(value, dict):
            pairs_d = {k: self.lift(v) for k, v in value.items()}
            return ({k: p[0] for k, p in pairs_d.items()}, {k: p[1] for k, p in pairs_d.items()})
        return value, value

    def _input_fake(self, t: Tensor) -> FakeTensor:
        """The fake of a real input: the one an earlier call made while ``t`` has the same
        storage and metadata, else a new one."""
        cache = self.capture.frame.input_fakes
        meta = (id(t._storage), t._shape, t._stride, t._offset, t._dtype, t._device,
                t._requires_grad, type(t))
        hit = cache.get(id(t))
        if hit is not None and hit[0]() is t and hit[1] == meta:
            return hit[2]
        fake = self.fake_mode.from_tensor(t)
        key = id(t)
        # the entry goes when the tensor does (its id may then be reused)
        cache[key] = (weakref.ref(t, lambda _, key=key: cache.pop(key, None)), meta, fake)
        return fake

    def key_of(self, value: Any) -> Any:
        """A hashable description of a recorded argument (constants by value where they have
        one, other objects by identity, kept alive)."""
        if isinstance(value, Ref):
            return value.key()
        if isinstance(value, (list, tuple)):
            return (type(value).__name__, tuple(self.key_of(v) for v in value))
        if isinstance(value, dict):
            return ("dict", tuple((k, self.key_of(v)) for k, v in value.items()))
        if isinstance(value, slice):
            return ("slice", self.key_of(value.start), self.key_of(value.stop),
                    self.key_of(value.step))
        if isinstance(value, float) and value != value:
            return ("nan",)
        if value is None or value is Ellipsis or isinstance(value, (int, float, complex, str,
                                                                     torch.dtype, torch.device)):
            return (type(value).__name__, value)
        try:
            hash(value)
        except TypeError:
            self.constants.append(value)
            return ("id", id(value))
        return ("obj", value)

    def forget_inputs(self, keep: int) -> None:
        """Drop the inputs lifted after the first ``keep`` (for a call that was not recorded)."""
        for t in self.inputs[keep:]:
            del self.input_ids[id(t)]
        for f in self.input_fakes[keep:]:
            del self.real_of[id(f)]
        del self.inputs[keep:]
        del self.input_fakes[keep:]

    # -- operations ----------------------------------------------------------------------

    def append(self, kind: str, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
               fake_out: Any) -> int:
        if not self.ops:
            # the graph starts in the mode of its first op (not of the moment the previous
            # graph was flushed, which may be inside a no_grad block of library code)
            self.start_grad = self.grad_enabled = torch.is_grad_enabled()
            self.autocast = autocast_state()
            self.autocast_enabled = dict(_amp_local.enabled)
            self.inference = _core_config._local.inference
        elif torch.is_grad_enabled() != self.grad_enabled:
            self.grad_enabled = torch.is_grad_enabled()
            self._append_raw("call_function", _SET_GRAD, (self.grad_enabled,), {}, None)
        return self._append_raw(kind, target, args, kwargs, fake_out)

    def _append_raw(self, kind: str, target: Any, args: tuple[Any, ...],
                    kwargs: dict[str, Any], fake_out: Any) -> int:
        self.ops.append((kind, target, args, kwargs))
        self.op_fakes.append(_meta_copy(fake_out))
        self.structure.append((kind, target, self.key_of(args), self.key_of(kwargs)))
        return len(self.ops) - 1

    def wrap_outputs(self, op: int, fake_out: Any, real_of: dict[int, Tensor]) -> Any:
        """The op's result for the program: lazy tensors for new values; an input tensor the
        op returned (an in-place method on it) is returned itself."""
        def wrap(value: Any, index: int | None) -> Any:
            if isinstance(value, LazyTensor):
                return value  # in-place on a lazy tensor: the same object, now this op's
            if isinstance(value, FakeTensor):
                real = real_of.get(id(value))
                if real is not None:
                    return real  # in-place on an input: the program gets its tensor back
                value.__class__ = LazyTensor
                value.capture = self.capture
                value.ref = Ref(op, index)
                self.lazies.append(weakref.ref(value))
                return value
            return value

        if isinstance(fake_out, (list, tuple)) and not isinstance(fake_out, torch.Size):
            items = [wrap(v, i) if not isinstance(v, (list, tuple)) or isinstance(v, torch.Size)
                     else self._nested(op, i, v) for i, v in enumerate(fake_out)]
            if hasattr(fake_out, "_make"):
                return fake_out._make(items)  # type: ignore[attr-defined]
            return type(fake_out)(items)
        return wrap(fake_out, None)

    def _nested(self, op: int, index: int, value: Any) -> Any:
        """A list or tuple inside an op's result tuple: its tensors are read out of the
        graph by a getitem each (recorded as ops of their own)."""
        items = []
        for j, v in enumerate(value):
            if isinstance(v, FakeTensor) and not isinstance(v, LazyTensor):
                inner = self._append_raw("call_function", operator.getitem,
                                         (Ref(op, index), j), {}, v)
                items.append(self.wrap_outputs(inner, v, {}))
            else:
                items.append(v)
        return type(value)(items)

    def live_outputs(self) -> list[LazyTensor]:
        return [lz for lz in (r() for r in self.lazies)
                if lz is not None and isinstance(lz, LazyTensor)]

    def guards(self) -> tuple[Any, ...]:
        return _cache.input_guards(self.inputs, self.start_grad, self.default_dtype,
                                   self.autocast, self.capture.global_lengths)


def _meta_copy(value: Any) -> Any:
    """A fake tensor with ``value``'s metadata that is not ``value`` (node meta must not keep
    the program's deferred tensors alive: the live ones are the graph's outputs)."""
    if isinstance(value, FakeTensor):
        copy = FakeTensor._make(value._storage, value._shape, value._stride, value._offset,
                                value._dtype, value._device)
        copy.fake_mode = value.fake_mode
        copy._requires_grad = value._requires_grad
        return copy
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        return [_meta_copy(v) for v in value]
    return value


class ReplayFacts:
    """What a call's capture tells replay (torch._dynamo._replay): graph breaks, data reads,
    the graphs made, and of the last one its compiled callable, inputs and outputs."""

    __slots__ = ("autocast", "breaks", "compiled", "graphs", "inference", "inputs",
                 "output_ids", "read_data", "start_grad")

    def __init__(self) -> None:
        self.breaks = 0
        self.read_data = False
        self.graphs = 0
        self.compiled: Callable[..., Any] | None = None
        self.inputs: list[Tensor] = []
        self.output_ids: list[int] = []
        self.start_grad = True
        self.autocast: tuple[Any, ...] = ()
        self.inference = False  # whether a graph ran in inference mode


# names of ops that draw random numbers (the module's random functions and methods)
_RANDOM_WORDS = ("rand", "bernoulli", "dropout", "normal", "multinomial", "poisson", "uniform",
                 "exponential", "cauchy", "geometric", "log_normal", "random")


def _captures_dynamic_outputs() -> bool:
    from torch._dynamo import config

    return bool(config.capture_dynamic_output_shape_ops)


def _impure(kind: str, target: Any, kwargs: dict[str, Any]) -> bool:
    """Whether a recorded op writes a tensor (in place, ``out=``, item assignment) or draws
    random numbers."""
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    if not isinstance(name, str):
        return True
    in_place = (name.endswith("_") and not name.endswith("__")) or name in (
        "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
        "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__")
    return in_place or "out" in kwargs or any(w in name for w in _RANDOM_WORDS)


class Capture:
    """One call of a compiled function being captured: its recordings, one after another."""

    def __init__(self, frame: _cache.FrameState, fullgraph: bool,
                 arg_names: Callable[[], dict[int, str]], verify: bool) -> None:
        """:param arg_names: returns id(tensor) -> the program's name for it; called only when
            a graph is compiled (names of placeholders and guards), not at every call."""
        self.frame = frame
        self.fullgraph = fullgraph
        self._arg_names = arg_names
        self._names: dict[int, str] | None = None
        self.verify = verify
        self.graph_index = 0
        self.replay_facts = ReplayFacts()
        self.global_lengths: tuple[tuple[str, int], ...] = ()  # (_cache.global_lengths)
        self.recording = Recording(self)

    @property
    def arg_names(self) -> dict[int, str]:
        """id(tensor) -> the program's name for it (arguments, module attributes)."""
        if self._names is None:
            self._names = self._arg_names()
        return self._names

    def flush(self, reason: str | None = None, captured_in_pytorch: bool = False) -> None:
        """Compile (or find) and run the current recording; start a new one. With a
        ``reason``, this is a graph break at the user's current source line.
        ``captured_in_pytorch``: a break PyTorch would not make under the settings in
        force (``config.capture_scalar_outputs``...): ``fullgraph=True`` lets it pass."""
        recording = self.recording
        facts = self.replay_facts
        if reason is not None:
            facts.breaks += 1
            where = user_source_line()
            if self.fullgraph and not captured_in_pytorch:
                raise Unsupported(f"graph break (fullgraph=True): {reason}\n  at {where}")
            _cache.counters["graph_break"][reason] += 1
            self.frame.record_break(reason, where)
            _log.graph_breaks.info("Graph break: %s\n  at %s", reason, where)
        if recording.ops:
            outputs = recording.live_outputs()
            with _suspended():
                reals = self.frame.run_graph(self, recording, outputs)
            facts.graphs += 1
            facts.inputs = recording.inputs
            facts.output_ids = [id(lz) for lz in outputs]
            facts.start_grad = recording.start_grad
            facts.autocast = recording.autocast
            facts.inference = facts.inference or recording.inference
            realized: dict[int, Tensor] = {}
            for lazy, real in zip(outputs, reals):
                become(lazy, real, realized)
            self.graph_index += 1
        self.recording = Recording(self)

    def peek(self, lazy: LazyTensor) -> Tensor | None:
        """The value of ``lazy`` computed now by running the pending ops on their real
        inputs without ending the graph (they run again in it), or None when a pending op
        writes a tensor or draws random numbers (running it twice would show)."""
        values = self.peek_all([lazy])
        if values is None:
            return None
        value = values[0]
        if value.numel() == 1:  # a number the program may compute with: an input from the
            self.recording.peeked.add(value.item())  # first graph (_cache.numbers_from_data)
        return value

    def peek_all(self, lazies: list[LazyTensor]) -> list[Tensor] | None:
        """The values of ``lazies`` (see :meth:`peek`), or None."""
        from torch._dynamo._graph import build_graph_module

        recording = self.recording
        if any(_impure(kind, target, kwargs) for kind, target, _, kwargs in recording.ops):
            return None
        gm = build_graph_module(self, recording, lazies)
        if gm.graph.eliminate_dead_code():  # only what the values need runs twice
            gm.recompile()
        with _suspended(), torch.no_grad():
            return list(gm(*recording.inputs))

    def run_aside(self, func: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        """Fakes of what ``func`` returns on this call's real values, computed now on the side
        (for an op whose output size depends on data: ``nonzero``, ``x[mask]``), or None
        when the values cannot be computed twice."""
        import torch.utils._pytree as pytree

        lazies = [t for t in _tensors_in((args, kwargs)) if isinstance(t, LazyTensor)]
        reals = self.peek_all(lazies) if lazies else []
        if reals is None:
            return None
        self.replay_facts.read_data = True  # the program's Python saw this call's sizes
        real_of = {id(lz): real for lz, real in zip(lazies, reals)}
        real_args, real_kwargs = pytree.tree_map(
            lambda v: real_of.get(id(v), v) if isinstance(v, Tensor) else v, (args, kwargs))
        with _suspended(), torch.no_grad():
            out = func(*real_args, **real_kwargs)
        fake_mode = self.recording.fake_mode
        return pytree.tree_map(
            lambda v: fake_mode.from_tensor(v) if isinstance(v, Tensor) else v, out)

    def touches(self, args: Any) -> bool:
        """Whether a pending op of the current recording makes or may write one of the
        tensors in ``args`` (a lazy tensor, or one sharing storage with a graph input)."""
        recording = self.recording
        storages = {id(t._storage) for t in recording.inputs}
        for a in _tensors_in(args):
            if isinstance(a, LazyTensor) or id(a._storage) in storages:
                return True
        return False

    def eager(self, func: Callable[..., Any], args: Any, kwargs: Any, reason: str,
              captured_in_pytorch: bool = False) -> Any:
        """A graph break: flush, then run ``func`` eagerly on real tensors."""
        self.flush(reason, captured_in_pytorch)
        if any(isinstance(t, FakeTensor) for t in _tensors_in((args, kwargs))):
            # a tensor the capture does not know (made below it): it cannot become real
            raise Unsupported(f"{reason}; and a tensor made outside graph capture's view "
                              f"reached it\n  at {user_source_line()}")
        with _suspended():
            return func(*args, **kwargs)

    def defer(self, func: Callable[..., Any], name: str | None, args: Any,
              kwargs: dict[str, Any]) -> Any:
        """Record ``func(*args, **kwargs)`` (a torch function, a Tensor method ``name``, or an
        aten operator reached below the torch level) and return its deferred results; a call
        the fake run cannot do, or that returns data, breaks the graph and runs eagerly."""
        recording = self.recording
        if _core_config._default_dtype is not recording.default_dtype or (
                recording.ops and _amp_local.enabled != recording.autocast_enabled
                and autocast_state() != recording.autocast) or (
                recording.ops and _core_config._local.inference != recording.inference):
            # a graph runs under one default dtype, one autocast state, one inference mode
            self.flush()
            recording = self.recording
        known_inputs = len(recording.inputs)
        fake_args, ref_args = recording.lift(tuple(args))
        fake_kwargs, ref_kwargs = recording.lift(kwargs)
        found = _plans.signature(func, name, fake_args, fake_kwargs)
        plan = _plans.PLANS.get(found[0]) if found is not None else None
        if plan is not None:  # this signature's metadata, known: no fake run
            fake_out = _plans.rebuild(plan, found[1], recording.fake_mode)  # type: ignore[index]
        else:
            layouts = _plans.layouts(found[1]) if found is not None else None
            recording.in_fake_run = True
            try:
                # warnings are the real call's to give (at flush), not the metadata run's
                # without autograd: a fake autograd graph would keep every intermediate
                # alive (and so an output of the graph); requires_grad is set by _mark_grad
                with _suspended(), recording.fake_mode, warnings.catch_warnings(), \
                        torch.no_grad():
                    warnings.simplefilter("ignore")
                    fake_out = func(*fake_args, **fake_kwargs)
            except Exception as exc:  # any failure: the real call decides
                # (PyTorch captures an op of data-dependent output size when asked to)
                dynamic_output = type(exc).__name__ in _DYNAMIC_OUTPUT_ERRORS
                aside = self.run_aside(func, args, kwargs) if dynamic_output and (
                    _captures_dynamic_outputs() or self.fullgraph) else None
                if aside is not None:  # (its sizes are this call's: no plan is kept)
                    return self._record(func, name, aside, fake_args, fake_kwargs, ref_args,
                                        ref_kwargs)
                recording.forget_inputs(known_inputs)
                qual = getattr(func, "__name__", repr(func))
                try:
                    return self.eager(func, args, kwargs, f"{qual}() cannot run on metadata "
                                      f"only ({type(exc).__name__}: {exc})".split("\n")[0],
                                      dynamic_output)
                except RuntimeError as error:
                    if type(error) is not RuntimeError or type(exc) is not RuntimeError:
                        raise
                    # PyTorch's class and words around the operator's own message
                    raise TorchRuntimeError(
                        f"Dynamo failed to run FX node with fake tensors: call_function "
                        f"{name or qual}: got RuntimeError({str(error)!r})") from error
            finally:
                recording.in_fake_run = False
            if found is not None and _plans.layouts(found[1]) == layouts:
                # (a call that changed an argument's sizes, an out= resize, is not planned:
                # a plan's results would leave the argument as it was)
                description = _plans.describe(fake_out, found[1])
                if description is not None:
                    _plans.store(found[0], description)
        if not _deferrable(fake_out):
            recording.forget_inputs(known_inputs)
            qual = getattr(func, "__name__", repr(func))
            return self.eager(func, args, kwargs,
                              f"{qual}() returned a {type(fake_out).__name__}, not tensors")
        return self._record(func, name, fake_out, fake_args, fake_kwargs, ref_args,
                            ref_kwargs)

    def _record(self, func: Callable[..., Any], name: str | None, fake_out: Any,
                fake_args: Any, fake_kwargs: Any, ref_args: Any, ref_kwargs: Any) -> Any:
        """Append a call whose results' metadata ``fake_out`` holds; its deferred results."""
        recording = self.recording
        real_of = recording.real_of
        if fake_out is not None and not _holds_tensor(fake_out):
            return fake_out  # a metadata answer (size(), dim(), dtype...): nothing to record
        # (a call returning None is made for its effect: x[i] = v, in-place initialisers)
        if torch.is_grad_enabled() and name not in _NO_GRAD_METHODS and any(
                t.requires_grad for t in _tensors_in((fake_args, fake_kwargs))):
            _mark_grad(fake_out, real_of)
        if name is not None:
            op = recording.append("call_method", name, ref_args, ref_kwargs, fake_out)
        else:
            op = recording.append("call_function", func, ref_args, ref_kwargs, fake_out)
        return recording.wrap_outputs(op, fake_out, real_of)


class DeferredBackward:
    """The ``grad_fn`` of a deferred tensor that requires grad (until it becomes real): so
    ``is_leaf`` is False and ``grad_fn is not None``, as for its eager value."""

    def name(self) -> str:
        return "DeferredBackward"

    def __repr__(self) -> str:
        return "<DeferredBackward (the real node exists once the graph runs)>"


_DEFERRED_NODE = DeferredBackward()
_NO_GRAD_METHODS = frozenset(("detach", "detach_", "requires_grad_"))


def _mark_grad(value: Any, inputs: Any) -> None:
    """Make ``value``'s new floating results require grad, as eager autograd would (the fakes
    of the graph's inputs, returned by an in-place call, are left alone)."""
    if isinstance(value, FakeTensor):
        if id(value) not in inputs and (value._dtype.is_floating_point
                                        or value._dtype.is_complex):
            value._requires_grad = True
            if value.grad_fn is None:
                value.grad_fn = _DEFERRED_NODE
    elif isinstance(value, (list, tuple)):
        for v in value:
            _mark_grad(v, inputs)


def _tensors_in(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors_in(v)]
    return []


class _Stack(threading.local):
    """This thread's captures, innermost last; None while one is suspended."""

    def __init__(self) -> None:
        self.captures: list[Capture | None] = []


_stack = _Stack()
_patched = [0]  # captures active on all threads: the global-state functions stay replaced
_patch_lock = threading.Lock()


def current() -> Capture | None:
    """The capture the caller runs inside, or None (also while it is suspended)."""
    captures = _stack.captures
    return captures[-1] if captures else None


class _Suspend:
    """Capture off for a block (a graph runs, a disabled function runs): the mode popped."""

    def __enter__(self) -> None:
        self.mode = None
        from torch.overrides import _get_current_function_mode

        mode = _get_current_function_mode()
        if isinstance(mode, CaptureMode):
            self.mode = mode
            mode.__exit__(None, None, None)
        _stack.captures.append(None)

    def __exit__(self, *exc: object) -> None:
        _stack.captures.pop()
        if self.mode is not None:
            self.mode.__enter__()


def _suspended() -> _Suspend:
    return _Suspend()


def _library_frame(frame: Any) -> bool:
    """Whether ``frame`` runs code of torch or of a Plait distribution (``plait_*``)."""
    module = frame.f_globals.get("__name__", "")
    return (module == "torch" or module.startswith(("torch.", "plait_"))
            or frame.f_code.co_filename.startswith("<eval_with_key>"))


def user_source_line() -> str:
    """``file:line in function: source`` of the innermost frame on the stack that is the
    program's own (not torch's, not a Plait backend's)."""
    frame = sys._getframe(1)
    while frame is not None:
        if not _library_frame(frame):
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
            return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}: {line}"
        frame = frame.f_back  # type: ignore[assignment]
    return "<unknown source line>"


class CaptureMode(TorchFunctionMode):
    """Defers every torch call it can into the active capture's recording (module docstring)."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture

    def __torch_function__(self, func: Callable[..., Any], types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        capture = self.capture
        if _called_from_kernel() and not capture.touches((args, kwargs)):
            # below the torch level, on tensors no pending op makes or writes: part of an
            # operator running eagerly, so it runs too
            return func(*args, **kwargs)
        name = _method_name(func)
        if name is not None and name in _BREAK_METHODS:
            if name in _READ_METHODS and not capture.touches(args):
                # a read of a tensor no pending op makes or writes: nothing to wait for (but
                # the program's Python now depends on data: its call cannot be replayed)
                capture.replay_facts.read_data = True
                with _suspended():
                    return func(*args, **kwargs)
            from torch._dynamo import config
            if name in _SCALAR_OUTPUTS and isinstance(args[0], LazyTensor) and (
                    name == "numpy" or config.capture_scalar_outputs or capture.fullgraph):
                value = capture.peek(args[0])
                if value is not None:
                    # PyTorch keeps one graph here (a symbolic scalar, a traced array): the
                    # value is computed now on the side, and the graph goes on
                    capture.replay_facts.read_data = True
                    with _suspended():
                        return func(value, *args[1:], **kwargs)
            return capture.eager(func, args, kwargs, f"Tensor.{name}() needs the tensor's "
                                 "data or changes it outside the graph",
                                 name in _SCALAR_OUTPUTS)
        if func is torch.from_numpy or (func is torch.as_tensor and args and \
                type(args[0]).__module__ == "numpy"):
            # a tensor over an array's memory, made now: a graph input like any tensor
            # (recorded, the array would be a constant of the graph, a new one each call)
            with _suspended():
                return func(*args, **kwargs)
        if name == "__iter__" and args and isinstance(args[0], Tensor):
            return iter(self.__torch_function__(Tensor.unbind, types, (args[0],), {}))
        if name is None and func is vars(Tensor)["data"].fget:
            # x.data: the tensor's values without its autograd history, an alias as
            # detach() makes (whose fake run answers a fake, where .data's would not)
            return capture.defer(Tensor.detach, "detach", args[:1], {})
        return capture.defer(func, name, args, kwargs)


# modules whose code runs below the torch level (kernels, the dispatcher, reference
# implementations): a torch call they make while running an operator on real tensors is part
# of that operator, not of the program
_KERNEL_MODULES = ("torch._aten", "torch._core", "torch._refs", "torch._fused", "plait_backend")
_PROTOCOL_MODULES = ("torch._torch_function", "torch.overrides", __name__)


def _called_from_kernel() -> bool:
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
            _PROTOCOL_MODULES):
        frame = frame.f_back  # type: ignore[assignment]
    return frame is not None and frame.f_globals.get("__name__", "").startswith(
        _KERNEL_MODULES)


def _deferrable(value: Any) -> bool:
    if isinstance(value, (Tensor, *_PLAIN)):
        return not (isinstance(value, Tensor) and not isinstance(value, FakeTensor))
    if isinstance(value, (list, tuple)):
        return all(_deferrable(v) for v in value)
    return False


def _holds_tensor(value: Any) -> bool:
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_tensor(v) for v in value)
    return False


class _GlobalBreak:
    """A torch-level function with effects on global state (RNG, default dtype), replaced
    while a capture is active by one that breaks the graph first."""

    def __init__(self, module: Any, name: str) -> None:
        self.module = module
        self.name = name
        self.original = getattr(module, name)
        # a class that inherits the attribute gets it back by deletion, not by a copy
        self.inherited = isinstance(module, type) and name not in vars(module)

    def restore(self) -> None:
        """Put the original back."""
        if self.inherited:
            delattr(self.module, self.name)
        else:
            setattr(self.module, self.name, self.original)

    def wrapper(self) -> Callable[..., Any]:
        original, name = self.original, self.name

        def breaking(*args: Any, **kwargs: Any) -> Any:
            capture = current()
            if capture is not None:
                capture.flush(f"torch.{name}() changes global state the graph reads")
            return original(*args, **kwargs)

        breaking.__wrapped__ = original  # type: ignore[attr-defined]
        return breaking


_globals: list[tuple[_GlobalBreak, Callable[..., Any]]] = []


def _global_breaks() -> list[tuple[_GlobalBreak, Callable[..., Any]]]:
    if not _globals:
        import torch.random

        for module in (torch, torch.random):
            for name in _BREAK_FUNCTIONS:
                if callable(getattr(module, name, None)):
                    g = _GlobalBreak(module, name)
                    _globals.append((g, g.wrapper()))
        for name in ("grad", "backward"):
            g = _GlobalBreak(torch.autograd, name)
            _globals.append((g, g.wrapper()))
        g = _GlobalBreak(torch, "save")
        _globals.append((g, g.wrapper()))
        _globals.extend(_eager_break(module, name, reason) for module, name, reason in (
            ("torch._functorch.vmap", "_vmap_call", "torch.func.vmap"),
            ("torch._functorch.autodiff", "vjp", "torch.func.vjp"),
            ("torch._functorch.autodiff", "jvp", "torch.func.jvp"),
            ("torch.func", "vjp", "torch.func.vjp"),
            ("torch.func", "jvp", "torch.func.jvp"),
        ))
        _globals.extend(_eager_transform(module, "grad_and_value")
                        for module in ("torch._functorch.autodiff", "torch.func"))
        _globals.append(_function_apply_break())
        _globals.append(_rnn_break())
        _globals.extend(_repr_break(name) for name in ("__repr__", "__str__"))
        _globals.append(_print_break())
    return _globals


def _print_break() -> tuple[_GlobalBreak, Any]:
    """``print`` breaks the graph, as in PyTorch (``fullgraph=True`` refuses it, ``explain``
    counts it): the ops before it run first, so its output comes after their effects (a
    hook's output, a warning) as it does eagerly."""
    import builtins

    g = _GlobalBreak(builtins, "print")
    original = g.original

    def breaking_print(*args: Any, **kwargs: Any) -> None:
        capture = current()
        if capture is not None:
            capture.flush("print() is a graph break (a builtin with an effect outside the graph)")
        original(*args, **kwargs)

    breaking_print.__wrapped__ = original  # type: ignore[attr-defined]
    return g, breaking_print


def _eager_break(module_name: str, name: str, what: str) -> tuple[_GlobalBreak, Any]:
    """A function (found by its module's globals at each call) that breaks the graph and runs
    eagerly with capture off: the torch.func transforms, whose tensors (batched, dual, lifted
    for an inner autograd) are made and consumed below the torch level."""
    import importlib

    g = _GlobalBreak(importlib.import_module(module_name), name)
    original = g.original

    def run_eagerly(*args: Any, **kwargs: Any) -> Any:
        capture = current()
        if capture is None:
            return original(*args, **kwargs)
        capture.flush(f"{what} runs eagerly")
        with _suspended():
            return original(*args, **kwargs)

    return g, run_eagerly


def _eager_transform(module_name: str, name: str) -> tuple[_GlobalBreak, Any]:
    """A transform ``name(func, ...) -> function`` whose functions, called while capturing,
    break the graph and run eagerly (``torch.func.grad`` calls ``grad_and_value`` so)."""
    import importlib

    g = _GlobalBreak(importlib.import_module(module_name), name)
    original = g.original

    def transform(func: Any, *options: Any, **named: Any) -> Any:
        transformed = original(func, *options, **named)

        def run(*args: Any, **kwargs: Any) -> Any:
            capture = current()
            if capture is None:
                return transformed(*args, **kwargs)
            capture.flush(f"torch.func.{name} runs eagerly")
            with _suspended():
                return transformed(*args, **kwargs)

        return run

    return g, transform


def _repr_break(name: str) -> tuple[_GlobalBreak, Any]:
    """``Tensor.__repr__``/``__str__`` (outside the protocol) replaced by ones that flush
    first when a pending op writes the tensor, so printing shows its current value."""
    g = _GlobalBreak(Tensor, name)
    original = g.original

    def text(self: Tensor) -> str:
        capture = current()
        if capture is not None and not isinstance(self, FakeTensor) and capture.touches(self):
            capture.flush(f"Tensor.{name}() of a tensor the graph writes")
        return original(self)

    return g, text

def _rnn_break() -> tuple[_GlobalBreak, Any]:
    """``nn.RNN``/``LSTM``/``GRU`` calls break the graph and run eagerly unless
    ``config.allow_rnn``, as PyTorch's dynamo does (their time loops call fused cell
    operators below the torch level on state that autograd saves)."""
    from torch import nn
    from torch._dynamo import config

    g = _GlobalBreak(nn.RNNBase, "__call__")
    call = g.original

    def rnn_call(module: Any, *args: Any, **kwargs: Any) -> Any:
        capture = current()
        if capture is None or config.allow_rnn:
            return call(module, *args, **kwargs)
        capture.flush(f"{type(module).__name__} (an RNN module) runs eagerly: "
                      "torch._dynamo.config.allow_rnn is False")
        with _suspended():
            return call(module, *args, **kwargs)

    return g, rnn_call

def _function_apply_break() -> tuple[_GlobalBreak, Any]:
    """``torch.autograd.Function.apply`` replaced by one that breaks the graph and applies
    the function eagerly: its forward runs without grad and its backward node is attached to
    the real outputs, which a deferred forward would not have (the graph would run the
    forward under no_grad and lose the node)."""
    from torch.autograd.function import Function

    g = _GlobalBreak(Function, "apply")
    original = Function.__dict__["apply"].__func__

    def apply(cls: Any, *args: Any, **kwargs: Any) -> Any:
        capture = current()
        if capture is None:
            return original(cls, *args, **kwargs)
        capture.flush(f"{cls.__name__}.apply (a custom autograd.Function) runs eagerly")
        with _suspended():
            return original(cls, *args, **kwargs)

    g.original = Function.__dict__["apply"]
    return g, classmethod(apply)


def enter(capture: Capture) -> CaptureMode:
    """Start capturing: the mode entered, global-state functions replaced."""
    with _patch_lock:
        if _patched[0] == 0:
            for g, wrapper in _global_breaks():
                setattr(g.module, g.name, wrapper)
        _patched[0] += 1
    _stack.captures.append(capture)
    mode = CaptureMode(capture)
    mode.__enter__()
    return mode


def leave(mode: CaptureMode) -> None:
    """Stop capturing (after the final flush)."""
    mode.__exit__(None, None, None)
    _stack.captures.pop()
    with _patch_lock:
        _patched[0] -= 1
        if _patched[0] == 0:
            for g, _ in _global_breaks():
                g.restore()
