"""The dispatcher's plan cache: a repeated call is a lookup and one native call.

An operator that opts in (:func:`enable`) keeps, per *call signature* — the layout of each
tensor argument (the interned contiguous :class:`~torch._core.alloc.Layout`, or the interned
:class:`~torch._core.alloc.Geometry` of a strided one), whether it requires grad, and the
class and value of every other argument — the *plan* of that call: the output's layout, the
backend's allocate-and-run entry point with its arguments bound, and the recipe of the
autograd node the call records.

The generic path stays the single source of semantics. A signature's first call runs it,
recorded (:data:`recording`): the op's kernel reports the primitives it ran on its
broadcast operands (``_elementwise.run``, ``_arith._binary`` call :func:`note`), and the call's
result carries the node autograd recorded. A plan is made only when that record pins the
whole call down — primitives whose operands are the call's own tensors, numbers or earlier
steps' outputs, an output of an interned layout, a node of core's own Autograd kernel — and
the backend has an entry point serving it; otherwise the signature is remembered as "generic"
and costs one lookup. While a call is planned the fast tiers step aside (so every step is
noted), and a kernel that does more than its primitives (a warning every call must give) says
so with :func:`refuse`. Plans are dropped on every kernel (un)registration
(``_dispatch.on_invalidate``), and none is used under a dispatch mode (the dispatcher takes the
``Python`` key first), under inference mode, with anomaly detection on, or for tensor
subclasses.

The opt-in is per operator, for kernels that are functions of the signature alone: they read
no tensor values (a kernel that branches on ``.item()`` would replay the first call's branch).
Served today: the elementwise ops of ``_elementwise``/``_arith``, ``relu`` and ``where`` (one
primitive on broadcast operands, numbers (bound into the plan as the constant the generic path
makes of them), dtype casts, outputs that follow a strided input; or a chain of
such primitives, each operand traced to the call's arguments or an earlier step's output:
``clamp`` with number bounds, ``softplus``; a chain may hold reductions whose reshaped block
the next steps read and same-device casts: ``mean``, ``var``, ``std``, ``_to_copy``), the
reductions over dims, ``mm``/``bmm``, the view operators (their geometry replayed over the
next call's storage, shifted from its offset; not ``as_strided``, whose offset is absolute;
several pieces only when they record no graph), and the factories (a template of the first
result copied, or a fill, or an allocation alone for ``empty``).
The tiers of ``torch._core.fast`` stay in front of all this for the few calls where even this
lookup is too much (``a + b``: two slot reads and one native call).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from . import config as _config, dispatch as _dispatch, dtype as _dtype, layout as _layout
from .alloc import PRIMS, _interned, adopt_geometry, from_layout, scalar_tensor
from .device import device as _Device
from .storage import _UNSET, UntypedStorage
from .tensor import Tensor, plain_tensor_classes

_state = _config.state
_local = _config._local
_new = object.__new__
_SCALAR_TYPES = frozenset((int, float, bool))
# The tensor classes a plan takes as operands: Tensor and the subclasses that are plain
# tensors below the facade (nn.Parameter; torch._core.tensor adds them as they are made).
_TENSORS = plain_tensor_classes
# (layouts and memory formats are singletons: keyed by identity)
_KWARG_TYPES = frozenset((int, float, bool, str, type(None), _dtype.dtype, _layout.layout,
                          _layout.memory_format))
# A Python number converts to these exactly as the generic path's 0-d operand does (see
# ``_fast``'s number tier); ints beyond 2**53 do not convert exactly to float64.
_SCALAR_DTYPES = frozenset((_dtype.float32, _dtype.float64))
_EXACT = 2**53
# The native op of a primitive with a keyword argument (div's rounding modes).
_PRIM_VARIANTS = {("div", "trunc"): "div_trunc", ("div", "floor"): "div_floor"}
# The native entry point of a primitive the backend's FastPath names otherwise (clone's
# in-place copy into its new output is the fast path's unary "copy").
_NATIVE_NAMES = {"copy_": "copy"}
# Signatures kept per operator; a loop over changing scalar values must not grow it forever.
_MAX_PLANS = 512
_GENERIC = False  # the plan of a signature the cache does not serve
_ALIAS = object()  # in a signature: this argument is the first tensor argument again
KERNEL = "kernel"  # the last field of a plan that runs the kernel again (``_kernel_plan``)

# The record of the call being planned (a list of ``note`` entries), or None. Process-wide,
# with the thread that plans: while it is set, no thread plans another call, and only that
# thread's primitives are noted (another thread's kernels running meanwhile, a background
# compile or a loader thread, would make the record ambiguous and the signature unplanned for
# good).
recording: list[Any] | None = None
recording_thread: int | None = None
_lock = threading.Lock()
_thread_id = threading.get_ident


def note(prim: str, operands: list[Any], compute: _dtype.dtype, out_dtype: _dtype.dtype,
         kwargs: dict[str, Any], out: Tensor) -> None:
    """Report, while a call is being planned, that its kernel ran primitive ``prim`` once into
    the new tensor ``out`` on ``operands`` (tensors or Python numbers, before conversion to
    ``compute`` and broadcasting)."""
    rec = recording
    if rec is not None and _thread_id() == recording_thread:
        rec.append((prim, operands, compute, out_dtype, kwargs, out))


def refuse() -> None:
    """Say, while a call is being planned, that no replay may serve its signature (its kernel
    does more than its primitives: a warning the next calls must give too)."""
    rec = recording
    if rec is not None and _thread_id() == recording_thread:
        rec.append(None)


def enable(*ops: _dispatch.Operator) -> None:
    """Let ``ops`` keep plans that replay their result (their kernels must be functions of
    the call signature)."""
    for op in ops:
        if op._plans is None:
            op._plans = {}
        op._replays = True


# Views no plan serves: several tensors out (split, unbind), or a result that depends on more
# than the signature says. A plan replays a view at the next call's own storage offset plus the
# first call's shift, and keys only shapes, strides and int arguments; as_strided's
# storage_offset is absolute (a replay would shift it by the input's offset) and its bounds
# check reads the storage's size, neither of which the signature holds.
_UNPLANNED_VIEWS = frozenset((None, "as_strided"))
# Views with several tensors out: planned for results that record no graph (their backward
# is a multi-output node, left to the generic path).
_PIECES_VIEWS = frozenset(("split", "split_with_sizes", "unbind"))


# view operator's qualname -> its kind (given by the op library, torch._aten.views)
_view_kinds: dict[str, str] = {}
# How a plan records its call's autograd node: torch.autograd._nodes, which installs itself here
# when it loads (core does not import autograd).
autograd_nodes: Any = None


def enable_views(kinds: dict[str, str], recorded_by: str | None = None) -> None:
    """Let the view operators in ``kinds`` (qualname -> kind) whose result is a function of the
    call signature and the input's storage offset keep plans. ``recorded_by``: the operators
    are written in other operators (``reshape``: a view when the strides allow one, else a
    copy, which the signature decides too), and the view they make is operator
    ``recorded_by``'s, whose Autograd kernel records its node; a plan replays their result when
    it is a view of the input."""
    _view_kinds.update(kinds)
    if recorded_by is not None:
        _implicit_views.update(dict.fromkeys(kinds, recorded_by))
    enable(*(_dispatch.get(name) for name, kind in kinds.items()
             if kind not in _UNPLANNED_VIEWS))


# the view operators written in others (enable_views' recorded_by), by qualname -> recorded_by
_implicit_views: dict[str, str] = {}


def _forget() -> None:
    for op in _dispatch.operators():
        if op._plans or (op._plans is None and op.namespace == "aten"
                         and not op.schema.mutated):  # (one _kernel_plan stopped)
            op._plans = {}


_dispatch.on_invalidate.append(_forget)


def call(op: _dispatch.Operator, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``op`` by its plan for this signature (made on the signature's first call, from the
    generic path's own run); None when the generic path must run it."""
    if _state.inference_active or _state.anomaly or recording is not None:
        return None
    # The common signatures first, without the loop below: a first argument that is a tensor
    # of an interned layout (contiguous) or a current interned geometry (strided: the views a
    # plan made, a tensor seen before), then up to two more arguments (a tensor, the same
    # tensor again, a number, None, a list of ints) and keywords of plain values. The key is
    # the one the loop builds for the same arguments.
    key = None
    grad = False
    # With grad mode off in this thread (a backward pass, an optimizer step) a tensor that
    # requires grad is keyed as one that does not (read only for such a tensor): nothing is
    # recorded either way, and the saved outputs a backward reads all require grad.
    n = len(args)
    a = args[0] if n else None
    if a.__class__ is Tensor:  # (longer calls find no case below and take the loop)
        lay = a._interned_layout
        if lay is None:
            lay = a._geometry  # (current while it holds the tensor's own objects)
            if lay is not None and (
                    lay.shape is not a._shape or lay.stride is not a._stride
                    or lay.dtype is not a._dtype or lay.device is not a._device):
                lay = None
        head: Any = None
        if lay is not None:
            # the loop's mark after a tensor that requires grad (while grad mode is on); the
            # tuples are written out per case (one allocation each)
            grad = a._requires_grad and not (_state.no_grad_active and not _local.grad)
            if n == 1:
                head = (lay, True) if grad else (lay,)
            elif n == 2:
                b = args[1]
                cls = b.__class__
                if cls is Tensor:
                    if b is a:  # `t + t`, `m @ m`
                        head = (lay, True, _ALIAS, lay, True) if grad else (lay, _ALIAS, lay)
                    else:
                        other = b._interned_layout
                        if other is None:
                            other = b._geometry
                            if other is not None and (
                                    other.shape is not b._shape or other.stride is not b._stride
                                    or other.dtype is not b._dtype
                                    or other.device is not b._device):
                                other = None
                        if other is None:
                            pass
                        elif b._requires_grad and not (_state.no_grad_active
                                                       and not _local.grad):
                            head = (lay, True, other, True) if grad else (lay, other, True)
                            grad = True
                        else:
                            head = (lay, True, other) if grad else (lay, other)
                elif cls is float or cls is int or cls is bool:
                    head = (lay, True, cls, b) if grad else (lay, cls, b)
                elif cls is tuple or cls is list:  # x.view(8, 4), x.sum([0])
                    for x in b:
                        if x.__class__ is not int:
                            break
                    else:
                        b = b if cls is tuple else tuple(b)
                        head = (lay, True, cls, b) if grad else (lay, cls, b)
                elif b is None:
                    head = (lay, True, None) if grad else (lay, None)
            elif n == 3:  # a reduction's (dims, keepdim), a dim and a number...
                b, c = args[1], args[2]
                cls = b.__class__
                last = c.__class__
                if cls is int and (last is int or last is bool or last is float):
                    # transpose(1, 2), _softmax(x, -1, False): one tuple, written out
                    head = (lay, True, int, b, last, c) if grad else (lay, int, b, last, c)
                else:
                    head = (lay, True) if grad else (lay,)
                    if cls is Tensor:
                        # three distinct contiguous tensors (linear, addmm, where): each layout,
                        # marked when it requires grad, as the loop keys them
                        if c.__class__ is Tensor and b is not a and c is not a and c is not b:
                            other, third = b._interned_layout, c._interned_layout
                            if other is None or third is None:
                                head = None
                            else:
                                on = not (_state.no_grad_active and not _local.grad)
                                if b._requires_grad and on:
                                    head += (other, True)
                                    grad = True
                                else:
                                    head += (other,)
                                if c._requires_grad and on:
                                    head += (third, True)
                                    grad = True
                                else:
                                    head += (third,)
                                c = _ALIAS  # (keyed: nothing more to key)
                        else:
                            head = None
                    elif cls is int:
                        head = (*head, int, b)
                    elif cls is tuple or cls is list:
                        for x in b:
                            if x.__class__ is not int:
                                head = None
                                break
                        else:
                            head = (*head, cls, b if cls is tuple else tuple(b))
                    elif b is None:
                        head = (*head, None)
                    else:
                        head = None
                    if head is not None and c is not _ALIAS:
                        cls = c.__class__
                        if cls is bool or cls is int or cls is float:
                            head = (*head, cls, c)
                        elif c is None:
                            head = (*head, None)
                        else:
                            head = None
        if head is None:
            grad = False
        elif not kwargs:
            key = head if not grad else (*head, True)
        elif len(kwargs) == 1:  # (the usual case, without a list)
            ((name, v),) = kwargs.items()
            cls = v.__class__
            if cls in _KWARG_TYPES:
                key = (*head, name, cls, v, True) if grad else (*head, name, cls, v)
            else:
                grad = False
        else:
            parts = list(head)
            for name, v in kwargs.items():
                cls = v.__class__
                if cls not in _KWARG_TYPES:
                    grad = False
                    break
                parts += (name, cls, v)
            else:
                if grad:
                    parts.append(True)
                key = tuple(parts)
    if key is None:
        signed = _signature(args, kwargs)
        if signed is None:
            return None
        key, grad = signed
    try:
        plan = op._plans.get(key)
    except TypeError:  # symbolic sizes (fake tensors with a shape env) do not hash
        return None
    if plan is None:
        return _first_call(op, args, kwargs, key, grad)
    if plan is _GENERIC:
        return None
    native, lay, recipe, interned = plan
    if lay is None:
        if recipe is None:
            return native(args)  # a view's plan makes its tensor itself
        # a native planned kernel and the recorder of its node (``_kernel_plan``): called
        # here, one frame less than a closure around it
        result = native(*args)
        if result is not None:  # (None: the kernel left this call to the generic path)
            recipe(args, result)
        return result
    h = native(args)
    if h is None:
        return None  # the backend left this call to its kernels: the generic path
    # _fast.wrap(h, lay), written out: a new tensor's objects are most of a plan's cost
    st = _new(UntypedStorage)
    st._handle = h
    st._nbytes = lay.nbytes
    st._device = lay.device
    st._runtime = lay.runtime
    st._ptr = h.ptr
    st._hostbuf = _UNSET
    out = _new(Tensor)
    out._storage = st
    out._shape = lay.shape
    out._stride = lay.stride
    out._offset = 0
    out._dtype = lay.dtype
    out._device = lay.device
    out._vc = [0]
    out._base = None
    out._grad = None
    out._interned_layout = interned
    # a strided output's layout (a _Geometry) holds the interned geometry its tensors carry
    out._geometry = None if interned is not None else lay.interned
    if recipe is None:
        out.grad_fn = None
        out._requires_grad = False
    else:
        recipe(args, out)  # (autograd_nodes.plan_recorder's: records out's node)
    return out


def _signature(args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> tuple[tuple[Any, ...], bool] | None:
    """A call's plan key and whether it records a graph, or None when no plan serves the
    call (what :func:`call` builds, in full, for the calls its written-out cases miss)."""
    # The signature, written out flat (this runs for every call the written-out cases miss): a
    # contiguous tensor by its interned layout, a strided one by its interned geometry,
    # which it takes on for its next calls (the plan binds the strides; the offset is read
    # per call), True after a tensor that requires grad, a number by its class and value
    # (1, 1.0 and True differ).
    parts: list[Any] = []
    # (several parts are added as one tuple: one step where two appends are two calls)
    grad = False
    first = None
    for a in args:
        cls = a.__class__
        if cls is Tensor or cls in _TENSORS:
            if cls is not Tensor:
                parts.append(cls)  # an nn.Parameter: keyed apart, then as a tensor
            if first is None:
                first = a
            elif a is first:
                parts.append(_ALIAS)  # `t + t`: plans apart from a call of two tensors
            lay = a._interned_layout
            if lay is None:
                lay = a._geometry
                if lay is None or (
                        lay.shape is not a._shape or lay.stride is not a._stride
                        or lay.dtype is not a._dtype or lay.device is not a._device):
                    lay = adopt_geometry(a)
                    if lay is None:
                        return None  # symbolic sizes do not hash
            if a._requires_grad:
                grad = True
                parts += (lay, True)
            else:
                parts.append(lay)
        elif cls in _SCALAR_TYPES:
            parts += (cls, a)
        elif a is None:
            parts.append(None)
        elif cls is _dtype.dtype:  # a ScalarType argument (softmax's backward): by identity
            parts += (cls, a)
        elif cls is list or cls is tuple:  # dims, sizes; an output mask of bools
            kind = a[0].__class__ if a else int
            if kind is not int and kind is not bool:
                return None  # tensor lists, SymInts...: the generic path
            for x in a:
                if x.__class__ is not kind:
                    return None
            parts += (cls if kind is int else (cls, bool), tuple(a))  # (True == 1: apart)
        else:
            return None  # subclasses, dtypes...: the generic path
    if kwargs:
        for name, v in kwargs.items():
            cls = v.__class__
            if cls in _KWARG_TYPES:
                parts += (name, cls, v)
            elif cls is _Device:  # a factory's device, by its fields (C-level hashing)
                parts += (name, v._type, v._index)
            else:
                return None
    if first is None:
        # No tensor argument (a factory): the result follows the process's default dtype
        # and this thread's default device where the call names none.
        parts.append(_config._default_dtype)
        if not kwargs or kwargs.get("device") is None:
            parts.append(_config.get_default_device())
    if grad:
        # no_grad (read from the thread only when some thread has it on; the thread-local
        # itself, not is_grad_enabled(): backward runs every op with grad off)
        grad = not _state.no_grad_active or _config._local.grad
        parts.append(grad)
    return tuple(parts), grad


def _recorded_run(op: _dispatch.Operator, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> tuple[Any, list[Any]] | None:
    """The generic path's result of ``op`` and the record of the primitives it ran, or None
    when another thread is planning (only one call is recorded at a time)."""
    global recording, recording_thread
    with _lock:
        if recording is not None:
            return None
        rec = recording = []
        recording_thread = _thread_id()
    # The fast tiers (torch._core.fast, the in-place tiers) serve a kernel's `x * y`, `x.exp()`
    # without noting a primitive; they step aside while the inference hint is up (each of its
    # readers confirms with its own thread's state), so the record holds every step the kernel
    # ran and a chain can be made of a composite written with operators (softplus, var,
    # mean with keepdim).
    with _config._counter_lock:
        _state.inference_active += 1
    try:
        return _dispatch.call(op, args, kwargs), rec
    finally:
        with _config._counter_lock:
            _state.inference_active -= 1
        recording = None


def _first_call(op: _dispatch.Operator, args: tuple[Any, ...], kwargs: dict[str, Any],
                key: tuple[Any, ...], grad: bool) -> Any:
    """Run the generic path recorded, keep the plan it allows, and return its result."""
    recorded = _recorded_run(op, args, kwargs)
    if recorded is None:
        return None  # another thread is planning: this call takes the generic path
    result, rec = recorded
    tensors = [a for a in args if a.__class__ in _TENSORS]
    if len({id(t) for t in tensors}) != len(tensors) - sum(t is tensors[0] for t in tensors[1:]):
        # A tensor other than the first passed twice: the signature does not say so, and its
        # next call may pass two (the record could not tell which operand is which argument).
        # Only a kernel plan serves such a key: it calls the kernel with each call's own
        # tensors (attention's backward of q = k = v recorded a run on every call before).
        plan = (_kernel_plan(op, args, kwargs, result, grad)
                if op.namespace == "aten" and not op.schema.mutated else None)
        if plan is not None and op._plans is not None:
            op._plans[key] = plan
        return result
    kind = _factory_kinds.get(op.qualname)
    if _tensor_as_value(op, args, kwargs):
        # A tensor where the schema takes a number (``x.narrow(0, t, 2)``, ``x.sum(t)``): the
        # key holds its layout, not its value, so a plan would replay this call's value.
        plan = None
    elif not op._replays:
        plan = None
    elif kind is not None:
        plan = _factory_plan(op, args, kwargs, kind, result)
    elif rec or kwargs:
        plan = _make(op, args, rec, result, grad)
    else:
        plan = _view_plan(op, args, result, grad)
    if plan is None and op.namespace == "aten" and not op.schema.mutated:
        plan = _kernel_plan(op, args, kwargs, result, grad)
    plans = op._plans
    if plans is not None:
        if len(plans) >= _MAX_PLANS:
            plans.clear()
        plans[key] = plan if plan is not None else _GENERIC
    return result


def _tensor_as_value(op: _dispatch.Operator, args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> bool:
    """Whether a tensor is passed where ``op``'s schema takes a number or a list of them."""
    params = op.schema.arguments
    for i, a in enumerate(args):
        if i < len(params) and not params[i].is_tensor and (
                a.__class__ in _TENSORS or (isinstance(a, (list, tuple))
                and any(isinstance(x, Tensor) for x in a))):
            return True
    by_name = {p.name: p for p in params}
    return any(isinstance(v, Tensor) and n in by_name and not by_name[n].is_tensor
               for n, v in kwargs.items())


def _make(op: _dispatch.Operator, args: tuple[Any, ...], rec: list[Any], result: Any,
          grad: bool) -> tuple[Any, ...] | None:
    """The plan that the record ``rec`` of a generic call allows, or None: the native call (a
    function of the call's arguments returning the output's memory), the output's layout and
    the recipe of the autograd node (None: the call records none)."""
    if result.__class__ is not Tensor or not rec or None in rec:  # (None: refused)
        return None
    if len(rec) > 1:
        # A step no later step reads nor returns is internal to the next one: `run` notes a
        # primitive's operands before their conversion to its dtype, and the cast it made
        # (noted by _to_copy) is redone by the replay of the primitive itself (float32 +
        # float64). A fresh output has no other effect, so it is dropped.
        rec = [entry for k, entry in enumerate(rec)
               if entry[5] is result or "dims" in entry[4]
               or any(o is entry[5] for later in rec[k + 1:] for o in later[1])]
    if len(rec) > 1:
        return _chain(op, args, rec, result, grad)
    prim, operands, compute, out_dtype, prim_kwargs, out = rec[0]
    lay = out._interned_layout if out._interned_layout is not None else _Geometry.of(out)
    if lay is None or lay.fast is None or compute is _dtype.bool_:
        return None
    fast = lay.fast
    key = lay.runtime.dispatch_key
    # The generic path ran core's composite and the backend's own primitive kernel.
    if (op.resolve(key) is not op.kernels.get(_dispatch.COMPOSITE_EXPLICIT)
            or _dispatch.registered(getattr(PRIMS, prim).resolve(key))
            is not fast.kernels.get(prim)):
        return None
    dims = None
    if prim_kwargs:
        if "dims" in prim_kwargs:  # a reduction: its result is `out` reshaped
            dims = prim_kwargs["dims"]
            lay = _interned(tuple(result._shape), out_dtype, result._device)
            if (lay is None or result._storage is not out._storage or result._offset
                    or result._stride != lay.stride):
                return None
        elif list(prim_kwargs) == ["rounding_mode"]:
            mode = prim_kwargs["rounding_mode"]
            if mode is not None:
                prim = _PRIM_VARIANTS.get((prim, mode))
                if prim is None:
                    return None
        else:
            return None
    elif out is not result:
        return None
    node = None
    if result._requires_grad:  # (a bool or integer result records nothing)
        node = _node_recipe(op, args, result) if grad else None
        if node is None:
            return None
    native = _native(fast, _NATIVE_NAMES.get(prim, prim), operands, args, compute, out_dtype,
                     lay, dims)
    if native is None:
        return None
    return (native, lay, node, lay if lay.__class__ is not _Geometry else None)


def _chain(op: _dispatch.Operator, args: tuple[Any, ...], rec: list[Any], result: Tensor,
           grad: bool) -> tuple[Any, ...] | None:
    """The plan of a call whose kernel ran several primitives (``sub`` with ``alpha=2``:
    ``mul`` then ``sub``): each step's native call, on the call's arguments and the earlier
    steps' outputs, replayed in order. Every operand of every step must be one of those or a
    number (an operand the record cannot trace, such as a view of an intermediate, makes no
    plan), each step a plain elementwise primitive into a contiguous output, and the last
    step's output the result."""
    if rec[-1][5] is not result:
        return None
    known = args
    steps = []
    key = None
    # a reduction's output as the later steps read it (its kernel's reshape of the block)
    aliases: dict[int, Tensor] = {}
    for index, (prim, operands, compute, out_dtype, prim_kwargs, out) in enumerate(rec):
        lay = out._interned_layout
        if lay is None or lay.fast is None or compute is _dtype.bool_:
            return None
        operands = [aliases.get(id(o), o) for o in operands]
        if any(out is k for k in known):
            return None  # a write into an argument or an earlier step's output: not replayed
        dims = None
        if list(prim_kwargs) == ["rounding_mode"]:  # div's (None: true division)
            mode = prim_kwargs["rounding_mode"]
            if mode is not None:
                prim = _PRIM_VARIANTS.get((prim, mode))
                if prim is None:
                    return None
        elif prim_kwargs:
            # a reduction (mean: sum, then a division by the count) whose block the later
            # steps read under the result's contiguous shape: replayed as that tensor
            if list(prim_kwargs) != ["dims"] or index == len(rec) - 1:
                return None
            dims = prim_kwargs["dims"]
            shaped = _reshaped_alias(out, rec[index + 1:])
            if shaped is None:
                return None
            if shaped is not out:
                aliases[id(shaped)] = shaped = _as_contiguous(shaped)
        if key is None:
            key = lay.runtime.dispatch_key
            # core's composite (an implicit one, addmm's, records no node of its own: a call
            # with grad finds no node recipe below and keeps the generic path)
            kernel = op.resolve(key)
            if (kernel is not op.kernels.get(_dispatch.COMPOSITE_EXPLICIT)
                    and kernel is not op.kernels.get(_dispatch.COMPOSITE_IMPLICIT)):
                return None
        if (lay.runtime.dispatch_key != key
                or _dispatch.registered(getattr(PRIMS, prim).resolve(key))
                is not lay.fast.kernels.get(prim)):
            return None
        native = _native(lay.fast, _NATIVE_NAMES.get(prim, prim), operands, known, compute,
                         out_dtype, lay, dims)
        if native is None:
            return None
        if dims is None:
            steps.append((native, lay))
            known = (*known, out)
        else:
            steps.append((native, shaped._interned_layout))
            known = (*known, shaped)
    node = None
    if result._requires_grad:
        node = _node_recipe(op, args, result) if grad else None
        if node is None:
            return None
    *inner, (last, lay) = steps

    def run_chain(args: tuple[Any, ...]) -> Any:
        for native, _ in inner:
            h = native(args)
            if h is None:
                return None  # a native kernel declined: the generic path serves the call
            # the next steps read an intermediate by its address alone (the native calls'
            # `x._storage._ptr + x._offset * size`): a scratch block, not a tensor
            block = _new(_ScratchStorage)
            block._handle = h
            block._ptr = h.ptr
            scratch = _new(_Scratch)
            scratch._storage = block
            args = (*args, scratch)
        return last(args)
    return (run_chain, lay, node, lay)


class _ScratchStorage:
    """The memory of a chain's intermediate result: the native block and its address."""

    __slots__ = ("_handle", "_ptr")


class _Scratch:
    """A chain's intermediate result as the next steps' native calls read it (its storage's
    address and an offset of 0): two small objects instead of a tensor and its storage."""

    __slots__ = ("_storage",)
    _offset = 0


def _reshaped_alias(out: Tensor, later: list[Any]) -> Tensor | None:
    """The one tensor the ``later`` record entries read for the reduction output ``out``:
    ``out`` itself, or a contiguous reshape of its whole block (the reduction's result with
    its reduced dims dropped); None when they read something else of it, or nothing."""
    found = None
    for entry in later:
        for o in entry[1]:
            if o.__class__ is not Tensor or o._storage is not out._storage:
                continue
            if o is not out and (o._offset or o._dtype is not out._dtype
                                 or _interned(tuple(o._shape), o._dtype, o._device) is None
                                 or o._stride != _interned(tuple(o._shape), o._dtype,
                                                           o._device).stride):
                return None
            if found is not None and found is not o:
                return None
            found = o
    if found is None or found._storage._nbytes != out._storage._nbytes:
        return None
    return found


def _as_contiguous(t: Tensor) -> Tensor:
    """A tensor over ``t``'s memory with the interned contiguous layout of its shape (a
    reduction's reshaped result, which the view that made it keys by geometry)."""
    alias = _new(Tensor)
    lay = _interned(tuple(t._shape), t._dtype, t._device)
    for name in ("_storage", "_offset", "_vc", "_base", "_grad", "grad_fn", "_requires_grad"):
        setattr(alias, name, getattr(t, name))
    alias._shape = lay.shape
    alias._stride = lay.stride
    alias._dtype = lay.dtype
    alias._device = lay.device
    alias._interned_layout = lay
    alias._geometry = None
    return alias


def _view_plan(op: _dispatch.Operator, args: tuple[Any, ...], result: Any,
               grad: bool) -> tuple[Any, ...] | None:
    """The plan of a view operator's call: the same geometry over the next call's storage
    (what ``Tensor._view`` builds), and the backward the view's Autograd kernel records."""
    kind = _view_kinds.get(op.qualname)
    source = args[0] if args else None
    if kind in _PIECES_VIEWS:
        return _pieces_plan(op, args, result, source, kind, grad)
    if (kind in _UNPLANNED_VIEWS or result.__class__ is not Tensor or source.__class__ is not Tensor
            or result._storage is not source._storage or result._vc is not source._vc
            or result._dtype is not source._dtype or result._device is not source._device):
        return None
    base = source._base if source._base is not None else source
    key = _dispatch.backend_key(args, {})
    recorder = _implicit_views.get(op.qualname)
    kernel = op.kernels.get(_dispatch.COMPOSITE_EXPLICIT if recorder is None
                            else _dispatch.COMPOSITE_IMPLICIT)
    if result._base is not base or op.resolve(key) is not kernel:
        return None
    if result.requires_grad:
        recording_op = op if recorder is None else _dispatch.get(recorder)
        autograd = recording_op.kernels.get(_dispatch.AUTOGRAD)
        if not grad or getattr(autograd, "_plait_view", None) != kind:
            return None
    # the result's interned geometry: the views this plan makes carry it (a strided view's
    # next op keys its plan by identity)
    geo = adopt_geometry(result)
    if geo is None:
        return None
    shape, stride, delta = geo.shape, geo.stride, result._offset - source._offset
    dtype, device = geo.dtype, geo.device
    record = autograd_nodes.record_view if result.requires_grad else None
    # the backward of a view whose gradient reads only shapes and arguments (the signature's)
    # is made once, on the plan's first call, and bound into a recorder for the next ones
    recorder: list[Any] = [None] if kind in autograd_nodes.SHAPE_ONLY_VIEWS else []

    def run_view(args: tuple[Any, ...]) -> Tensor:
        src = args[0]
        # Tensor._make, written out (no inference mode here: plans are off in it); the view
        # holds the geometry's own objects, so its slot is current
        out = _new(Tensor)
        out._storage = src._storage
        out._shape = shape
        out._stride = stride
        out._offset = src._offset + delta
        out._dtype = dtype
        out._device = device
        out._vc = src._vc
        base = src._base
        out._base = src if base is None else base
        out._grad = None
        out._interned_layout = None
        out._geometry = geo
        if record is None:
            out.grad_fn = None
            out._requires_grad = False
        elif recorder:
            bound = recorder[0]
            if bound is None:
                recorder[0] = autograd_nodes.view_recorder(kind, record(src, out, kind, args[1:]))
            else:
                bound(src, out)
        else:
            record(src, out, kind, args[1:])
        return out
    return (run_view, None, None, None)


def _pieces_plan(op: _dispatch.Operator, args: tuple[Any, ...], result: Any,
                 source: Any, kind: str, grad: bool) -> tuple[Any, ...] | None:
    """The plan of a call of a view operator with several tensors out (split, chunk, unbind):
    each piece's geometry over the next call's storage, and with grad the one multi-output
    node the operator's Autograd kernel records over them."""
    if (source.__class__ is not Tensor or (result.__class__ is not list
                                           and result.__class__ is not tuple) or not result):
        return None
    base = source._base if source._base is not None else source
    for piece in result:
        if (piece.__class__ is not Tensor or piece._storage is not source._storage
                or piece._vc is not source._vc or piece._base is not base
                or piece._dtype is not source._dtype or piece._device is not source._device
                or piece._requires_grad is not result[0]._requires_grad):
            return None
    recorder = _implicit_views.get(op.qualname)
    kernel = op.kernels.get(_dispatch.COMPOSITE_EXPLICIT if recorder is None
                            else _dispatch.COMPOSITE_IMPLICIT)
    if op.resolve(_dispatch.backend_key(args, {})) is not kernel:
        return None
    record = None
    if result[0]._requires_grad:
        # the node of the operator's own view kernel (chunk's: split's), whose arguments after
        # the sizes name the dim in the same places; an empty piece may come from another
        # operator (chunk of an empty dim splits by sizes): left to the generic path
        recording_op = op if recorder is None else _dispatch.get(recorder)
        autograd = recording_op.kernels.get(_dispatch.AUTOGRAD)
        if (not grad or getattr(autograd, "_plait_view", None) != kind
                or any(0 in p._shape for p in result)):
            return None
        record = autograd_nodes.record_pieces
    geometries = [adopt_geometry(p) for p in result]  # (the pieces a plan makes carry them)
    if None in geometries:
        return None
    pieces = [(geo, p._offset - source._offset) for geo, p in zip(geometries, result)]
    container = result.__class__
    first_dim_arg = 1 if kind == "unbind" else 2

    def run_pieces(args: tuple[Any, ...]) -> Any:
        src = args[0]
        storage, offset, vc = src._storage, src._offset, src._vc
        root = src._base if src._base is not None else src
        out = []
        for geo, delta in pieces:
            # Tensor._make, written out (plans are off in inference mode)
            t = _new(Tensor)
            t._storage = storage
            t._shape = geo.shape
            t._stride = geo.stride
            t._offset = offset + delta
            t._dtype = geo.dtype
            t._device = geo.device
            t._vc = vc
            t._base = root
            t._grad = None
            t.grad_fn = None
            t._requires_grad = False
            t._interned_layout = None
            t._geometry = geo
            out.append(t)
        if record is not None:
            record(src, out, kind, args[first_dim_arg:])
        return out if container is list else container(out)
    return (run_pieces, None, None, None)


# factory operator's qualname -> "empty" (allocates only) or "fill" (allocates and fills)
_factory_kinds: dict[str, str] = {}
# A filling factory's plan keeps its first result as a template to copy (one native call that
# allocates and copies) when it is at most this big; a bigger one is filled by the backend's
# fill kernel on each call.
_TEMPLATE_MAX = 1 << 15


def enable_factories(kinds: dict[str, str]) -> None:
    """Let the factory operators in ``kinds`` (qualname -> ``"empty"`` or ``"fill"``) keep
    plans: their result is a new contiguous tensor that is a function of the call signature
    (sizes, fill value, dtype, device; the process defaults are part of the signature)."""
    _factory_kinds.update(kinds)
    enable(*(_dispatch.get(name) for name in kinds))


def _factory_plan(op: _dispatch.Operator, args: tuple[Any, ...], kwargs: dict[str, Any],
                  kind: str, result: Any) -> tuple[Any, ...] | None:
    """The plan of a factory call: a new tensor of the result's interned layout, left
    uninitialised (``empty``) or holding the first call's values (the fill of a value the
    signature pins down)."""
    if result.__class__ is not Tensor or result._requires_grad or result._base is not None:
        return None
    lay = result._interned_layout
    if lay is None or lay.fast is None or any(
            a.__class__ in _TENSORS and a._storage is result._storage for a in args):
        return None
    key = lay.runtime.dispatch_key
    if op.resolve(key) is not op.kernels.get(_dispatch.COMPOSITE_EXPLICIT):
        return None  # a library's kernel serves it: the generic path runs that
    if kind == "empty":
        return (lambda args: from_layout(lay), None, None, None)
    fill = PRIMS.fill_.resolve(key)
    if _dispatch.registered(fill) is not lay.fast.kernels.get("fill_"):
        return None
    prepare = getattr(lay.fast, "prepare", None)
    copy = None
    if prepare is not None and lay.nbytes <= _TEMPLATE_MAX and lay.numel:
        copy = prepare("copy", lay.dcode, lay.dcode, lay.shape, lay.nbytes, [lay.stride])
    if copy is not None:
        template = result.clone()  # the first call's values, copied on every later call

        def run_copy(args: tuple[Any, ...]) -> Any:
            return copy(template._storage._ptr)  # (the closure keeps the template alive)
        return (run_copy, lay, None, lay)
    value = kwargs.get("fill_value", _FILL_VALUES.get(op.qualname))
    if value is None:
        positional = [a for a in args if a.__class__ in _SCALAR_TYPES]
        if len(positional) != 1:
            return None
        value = positional[0]

    def run_fill(args: tuple[Any, ...]) -> Tensor:
        out = from_layout(lay)
        fill(out, value)
        return out
    return (run_fill, None, None, None)


# the value each filling factory without a fill_value argument writes
_FILL_VALUES = {"aten::zeros": 0, "aten::zeros_like": 0, "aten::ones": 1, "aten::ones_like": 1}


class _Geometry:
    """A plan's output that is not contiguous (an elementwise result that follows a strided
    input's layout): what the plan's wrapping reads of a Layout."""

    __slots__ = ("dcode", "device", "dtype", "fast", "interned", "nbytes", "numel", "runtime",
                 "shape", "stride")

    @classmethod
    def of(cls, t: Tensor) -> _Geometry | None:
        """``t``'s geometry when it is dense (its elements tile its storage) at offset 0."""
        numel = 1
        for size in t._shape:
            numel *= size
        nbytes = numel * t._dtype.itemsize
        if t._offset or t._storage._nbytes != nbytes or not numel:
            return None
        interned = adopt_geometry(t)  # (t takes on its objects, which the outputs share)
        if interned is None:
            return None
        geo = cls()
        geo.interned = interned
        geo.shape, geo.stride, geo.dtype, geo.device = t._shape, t._stride, t._dtype, t._device
        geo.numel, geo.nbytes = numel, nbytes
        geo.runtime = t._storage._runtime
        fast = geo.runtime.fast
        geo.dcode = None if fast is None else fast.dtype_codes.get(t._dtype)
        geo.fast = None if geo.dcode is None else fast
        return geo


def _position(x: Any, args: tuple[Any, ...]) -> int | None:
    for i, a in enumerate(args):
        if a is x:
            return i
    return None


def _dense(t: Tensor, lay: Any) -> bool:
    """Whether ``t`` has the geometry of ``lay``: a contiguous layout, or the dense geometry of
    a strided output (a signature pins the geometry of every later call's tensor too)."""
    return t._shape == lay.shape and t._stride == lay.stride


def _native(fast: Any, prim: str, operands: list[Any], args: tuple[Any, ...],
            compute: _dtype.dtype, out_dtype: _dtype.dtype, lay: Any, dims: Any
            ) -> Callable[[tuple[Any, ...]], Any] | None:
    """The allocate-and-run call of the record: a function of the call's arguments that
    returns the output's memory, or None when the backend leaves the call to its kernels."""
    tensors = [o for o in operands if o.__class__ in _TENSORS]
    places = [_position(t, args) for t in tensors]
    if not tensors or None in places or (len(operands) > 2 and prim != "where"):
        return None
    codes = fast.dtype_codes
    prepare = getattr(fast, "prepare", None)
    if dims is not None:  # a reduction of an argument in its own dtype
        (x,) = tensors
        (i,) = places
        if x._dtype is not compute or prepare is None or codes.get(x._dtype) is None:
            return None
        reduce = prepare(prim, lay.dcode, codes[compute], x._shape, lay.nbytes, [x._stride],
                         list(dims))
        if reduce is None:
            return None
        itemsize = compute.itemsize

        def run_reduce(args: tuple[Any, ...]) -> Any:
            t = args[i]  # (the address, written out: no call)
            return reduce(t._storage._ptr + t._offset * itemsize)
        return run_reduce
    if prim == "matmul":  # two operands of the output's dtype, any strides
        a, b = tensors
        if prepare is None or a._dtype is not compute or b._dtype is not compute:
            return None
        product = prepare(prim, lay.dcode, lay.dcode, lay.shape, lay.nbytes,
                          [a._stride, b._stride], inner=a._shape[-1])
        if product is None:
            return None
        i, j = places
        itemsize = compute.itemsize

        def run_product(args: tuple[Any, ...]) -> Any:
            a = args[i]
            b = args[j]
            return product(a._storage._ptr + a._offset * itemsize,
                           b._storage._ptr + b._offset * itemsize)
        return run_product
    strided = lay.__class__ is _Geometry  # an output following a strided input's layout
    # A strided output whose operands all share its geometry (`t + t`, `t.exp()` of a transposed
    # t) is an op over one dense block of memory in the same order: the contiguous entry
    # points serve it, over the flat element count.
    if out_dtype is compute and all(t._dtype is compute for t in tensors) and (
            not strided or all(_dense(t, lay) for t in tensors)):
        served = _same_dtype(fast, prim, operands, tensors, places, compute, lay)
        if served is not None:
            return served
    if prepare is None or codes.get(compute) is None:
        return None
    out_strides = lay.stride if strided else None
    if prim == "where" or len(tensors) < len(operands):
        return _with_constants(prepare, codes, prim, operands, args, compute, lay,
                               out_strides)
    if len(operands) == 1:  # a unary op of a strided tensor, or one with another out dtype
        (x,) = tensors
        (i,) = places
        if x._dtype is not compute:
            return None
        unary = prepare(prim, lay.dcode, codes[compute], lay.shape, lay.nbytes,
                        [_expanded(x._shape, x._stride, lay.shape)], out_strides=out_strides)
        if unary is None:
            return None
        in_size = x._dtype.itemsize

        def run_strided_unary(args: tuple[Any, ...]) -> Any:
            x = args[i]  # (the address, written out: no call)
            return unary(x._storage._ptr + x._offset * in_size)
        return run_strided_unary
    if len(tensors) != 2:
        return None
    if out_dtype is not compute or strided:  # a comparison, or a strided output
        if any(t._dtype is not compute for t in tensors):
            return None
        compare = prepare(prim, lay.dcode, codes[compute], lay.shape, lay.nbytes,
                          [_expanded(t._shape, t._stride, lay.shape) for t in tensors],
                          out_strides=out_strides)
        if compare is None:
            return None
        i, j = places
        in_size = compute.itemsize

        def run_compare(args: tuple[Any, ...]) -> Any:
            a = args[i]  # (the addresses, written out: no calls)
            b = args[j]
            return compare(a._storage._ptr + a._offset * in_size,
                           b._storage._ptr + b._offset * in_size)
        return run_compare
    return _converted_binary(fast, prepare, prim, tensors, places, compute, lay)


def _constant(value: Any, dt: _dtype.dtype, device: Any) -> Tensor | None:
    """A Python number operand as the 0-d tensor of ``dt`` the generic path converts it to,
    or None where that conversion wraps an integer out of ``dt``'s range (left to it)."""
    if value.__class__ not in _SCALAR_TYPES or dt.is_complex:
        return None
    if dt._category == _dtype.INT and value.__class__ is int:
        bits = 8 * dt.itemsize
        low = -(1 << (bits - 1)) if dt.is_signed else 0
        if not low <= value < low + (1 << bits):
            return None
    return scalar_tensor(value, dt, device)


def _with_constants(prepare: Any, codes: Any, prim: str, operands: list[Any],
                    args: tuple[Any, ...], compute: _dtype.dtype, lay: Any,
                    out_strides: Any) -> Any:
    """A binary op or comparison with a Python number operand, or ``where`` (its condition
    bool, its values in ``compute``): each number bound into the call as the constant 0-d
    tensor the generic path makes of it (the signature holds the value), broadcast."""
    spec: list[tuple[int | None, int]] = []  # (argument position, itemsize) or (None, address)
    strides: list[Any] = []
    constants: list[Tensor] = []
    for k, o in enumerate(operands):
        want = _dtype.bool_ if prim == "where" and k == 0 else compute
        if o.__class__ in _TENSORS:
            if o._dtype is not want:
                return None
            spec.append((_position(o, args), want.itemsize))
            strides.append(_expanded(o._shape, o._stride, lay.shape))
        else:
            c = _constant(o, want, lay.device)
            if c is None:
                return None
            constants.append(c)
            spec.append((None, c._storage._ptr + c._offset * want.itemsize))
            strides.append((0,) * len(lay.shape))
    native = prepare(prim, lay.dcode, codes[compute], lay.shape, lay.nbytes, strides,
                     out_strides=out_strides)
    if native is None:
        return None

    places = [i for i, _ in spec]
    if None not in places and len(spec) == 3:  # where of three tensors
        (i, si), (j, sj), (k, sk) = spec

        def run_three(args: tuple[Any, ...]) -> Any:
            c = args[i]  # (the addresses, written out: no calls)
            a = args[j]
            b = args[k]
            return native(c._storage._ptr + c._offset * si, a._storage._ptr + a._offset * sj,
                          b._storage._ptr + b._offset * sk)
        return run_three
    if len(spec) == 2 and places.count(None) == 1:  # a tensor and a bound number
        (i, size), = (entry for entry in spec if entry[0] is not None)
        address = next(c for place, c in spec if place is None)
        first = places[0] is not None

        def run_with_constant(args: tuple[Any, ...]) -> Any:
            x = args[i]
            ptr = x._storage._ptr + x._offset * size
            return native(ptr, address) if first else native(address, ptr)
        run_with_constant.constants = constants  # type: ignore[attr-defined]  # (kept alive)
        return run_with_constant

    def run_bound(args: tuple[Any, ...]) -> Any:
        return native(*[c if i is None else args[i]._storage._ptr + args[i]._offset * c
                        for i, c in spec])
    run_bound.constants = constants  # type: ignore[attr-defined]  # alive as long as the plan
    return run_bound


def _same_dtype(fast: Any, prim: str, operands: list[Any], tensors: list[Tensor],
                places: list[Any], compute: _dtype.dtype, lay: Any) -> Any:
    """The one-call entry points of operands already in the output's dtype: a contiguous
    unary op, a tensor and a Python number, a broadcast binary op of any strides."""
    dcode = lay.dcode
    nbytes, numel = lay.nbytes, lay.numel
    itemsize = compute.itemsize
    if len(operands) == 1:
        code = fast.unary_ops.get(prim)
        (i,) = places
        if code is None or not _dense(tensors[0], lay):
            return None
        unary = fast.unary

        def run_unary(args: tuple[Any, ...]) -> Any:
            x = args[i]  # (the address, written out: no call)
            return unary(code, dcode, nbytes, numel, x._storage._ptr + x._offset * itemsize)
        return run_unary
    code = fast.binary_ops.get(prim)
    if code is None:
        return None
    if len(tensors) == 1:  # a tensor and a Python number
        (i,) = places
        scalar = operands[1] if operands[0] is tensors[0] else operands[0]
        reversed_ = operands[0] is not tensors[0]
        if (not _dense(tensors[0], lay) or compute not in _SCALAR_DTYPES
                or scalar.__class__ not in (int, float)
                or (scalar.__class__ is int and not -_EXACT <= scalar <= _EXACT)):
            return None
        binary_scalar = fast.binary_scalar

        def run_scalar(args: tuple[Any, ...]) -> Any:
            x = args[i]
            return binary_scalar(code, dcode, nbytes, numel,
                                 x._storage._ptr + x._offset * itemsize, scalar, reversed_)
        return run_scalar
    i, j = places
    shape = lay.shape
    a, b = tensors
    if lay.__class__ is _Geometry:  # both operands of the output's dense geometry (_native)
        bplan = fast.broadcast_plan(code, dcode, nbytes, (numel,), [1], [1])
    else:
        bplan = fast.broadcast_plan(code, dcode, nbytes, shape,
                                    _expanded(a._shape, a._stride, shape),
                                    _expanded(b._shape, b._stride, shape))
    binary_plan = fast.binary_plan

    def run_binary(args: tuple[Any, ...]) -> Any:
        a = args[i]
        b = args[j]
        return binary_plan(bplan, a._storage._ptr + a._offset * itemsize,
                           b._storage._ptr + b._offset * itemsize)
    return run_binary


def _converted_binary(fast: Any, prepare: Any, prim: str, tensors: list[Tensor],
                      places: list[Any], compute: _dtype.dtype, lay: Any) -> Any:
    """A binary op whose operands the generic path converted to ``compute`` first (float32 +
    float64): each converted into a temporary block (the backend's cast, as the generic
    path's ``to_dtype``), then the broadcast op."""
    code = fast.binary_ops.get(prim)
    if code is None:
        return None
    shape = lay.shape
    converters = []
    strides = []
    for t in tensors:
        if t._dtype is compute:
            converters.append(None)
            strides.append(_expanded(t._shape, t._stride, shape))
            continue
        src = fast.dtype_codes.get(t._dtype)
        numel = 1
        for size in t._shape:
            numel *= size
        convert = None if src is None else prepare(
            "copy", lay.dcode, src, t._shape, numel * compute.itemsize, [t._stride])
        if convert is None:
            return None
        converters.append(convert)
        dense = _interned(tuple(t._shape), compute, t._device)
        if dense is None:
            return None
        strides.append(_expanded(t._shape, dense.stride, shape))
    bplan = fast.broadcast_plan(code, lay.dcode, lay.nbytes, shape, *strides)
    binary_plan = fast.binary_plan
    i, j = places
    ca, cb = converters

    sa, sb = (t._dtype.itemsize for t in tensors)

    def run_converted(args: tuple[Any, ...]) -> Any:
        x = args[i]  # (the addresses, written out: no calls)
        y = args[j]
        pa = x._storage._ptr + x._offset * sa
        pb = y._storage._ptr + y._offset * sb
        # the temporary blocks live until the op has read them
        if ca is not None:
            a = ca(pa)
            if a is None:
                return None
            pa = a.ptr
        if cb is not None:
            b = cb(pb)
            if b is None:
                return None
            pb = b.ptr
        return binary_plan(bplan, pa, pb)
    return run_converted


def _expanded(shape: tuple[int, ...], stride: tuple[int, ...],
              full: tuple[int, ...]) -> list[int]:
    """Element strides ``stride`` of ``shape`` broadcast to ``full`` (0 where expanded)."""
    lead = len(full) - len(shape)
    strides = [0] * lead
    for size, target, st in zip(shape, full[lead:], stride):
        strides.append(st if size == target else 0)
    return strides


def _kernel_plan(op: _dispatch.Operator, args: tuple[Any, ...], kwargs: dict[str, Any],
                 result: Any, grad: bool) -> tuple[Any, ...] | None:
    """The plan that runs the call's kernel again: the kernel the generic path resolved for
    this signature, called directly, and the node core's Autograd kernel recorded around it,
    made from a recipe. This is the generic path without its lookups and argument walks, for
    any operator (a fused or native kernel, a composite): nothing of the first call's result is
    replayed, so the kernel may read tensor values.

    With grad, the node must be core's own (a derivative rule's ``OpBackward``, no list
    arguments, no hooks); a decomposition without a node of its own (no Autograd kernel)
    keeps the generic path, which costs it less than a signature."""
    outs = result if result.__class__ is tuple else (result,)
    if result is None or any(o is not None and o.__class__ is not Tensor for o in outs):
        return None  # (a None result reads as "take the generic path" to the caller)
    fn = op.resolve(_dispatch.backend_key(args, kwargs))
    planner = getattr(fn, "plan", None)  # (torch.backends.contract.plannable)
    # a native planned kernel calls no operator: nothing to keep from recording around it
    native = False
    if planner is not None:
        special = planner(*args, **kwargs)
        if special is not None:
            native = getattr(fn, "plan_native", False)
            fn = special
    if not grad:
        if kwargs:
            def run_kernel(args: tuple[Any, ...]) -> Any:
                return fn(*args, **kwargs)
        else:
            def run_kernel(args: tuple[Any, ...]) -> Any:
                return fn(*args)
        return (run_kernel, None, None, KERNEL)
    kernel = op.kernels.get(_dispatch.AUTOGRAD)
    if kernel is None:
        if op.kernels.get(_dispatch.COMPOSITE_IMPLICIT) is fn and not op._replays:
            # a decomposition with no node of its own (layer_norm's): the generic path is a
            # few lookups before its kernel, fewer than a signature; no plans for this
            # operator until the next registration (which may give it a kernel)
            op._plans = None
        return None
    node = next((o.grad_fn for o in outs if o is not None and o.grad_fn is not None), None)
    if getattr(kernel, "_plait_node", None) is None or node is None:
        return None
    recipe = autograd_nodes.kernel_recipe(node, args, result)
    if recipe is None:
        return None
    record = autograd_nodes.kernel_node
    set_grad = _config.set_grad_state
    if native:
        if not kwargs:  # `call` runs the kernel and records its node itself
            return (fn, None, autograd_nodes.kernel_recorder(recipe, result), KERNEL)

        def run_native(args: tuple[Any, ...]) -> Any:
            result = fn(*args, **kwargs)
            if result is not None:  # (None: the kernel left this call to the generic path)
                record(recipe, args, result)
            return result
        return (run_native, None, None, KERNEL)

    def run_recorded(args: tuple[Any, ...]) -> Any:
        prev = set_grad(False)  # the kernel's own operators record nothing
        try:
            result = fn(*args, **kwargs)
        finally:
            set_grad(prev)
        record(recipe, args, result)
        return result
    return (run_recorded, None, None, KERNEL)


def _node_recipe(op: _dispatch.Operator, args: tuple[Any, ...], result: Tensor) -> Any:
    """The function ``record(args, out)`` that records, for a later call of this signature,
    the node the generic call recorded (``autograd_nodes.plan_recorder``), or None."""
    kernel = op.kernels.get(_dispatch.AUTOGRAD)
    node = result.grad_fn
    if kernel is None or getattr(kernel, "_plait_node", None) is None or node is None:
        return None
    recipe = autograd_nodes.plan_recipe(node, args, result)
    return None if recipe is None else autograd_nodes.plan_recorder(recipe)


# -- out= plans: an elementwise call's one launch straight into its out tensor -------------------

# (operator, out's interned layout, the call's signature) -> the native launch writing the
# call's result into an out tensor of that layout (a function of the call's arguments and out),
# or False: the caller computes, then copies. Dropped on every kernel (un)registration.
_out_plans: dict[Any, Any] = {}
_dispatch.on_invalidate.append(_out_plans.clear)


def call_out(op: _dispatch.Operator, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any,
             write: Callable[[Tensor, Tensor], Tensor]) -> Tensor | None:
    """``op(*args, **kwargs)`` written into ``out`` by one native launch, where this call
    signature's plan allows it: ``out`` a plain contiguous tensor of the result's exact layout
    (shape, dtype, device) sharing no memory with an input, nothing requiring grad, no dispatch
    mode, an elementwise operator of one primitive (its record, as :func:`call`'s plans read
    it) and a backend with ``FastPath.prepare_out``. Returns ``out`` (its version bumped once,
    as a copy into it would). A signature's first such call runs the generic path recorded and
    ends with ``write(out, result)`` (the caller's ``out=`` copy, with its checks). None: the
    caller computes and copies."""
    if (out.__class__ is not Tensor or op._plans is None or _state.modes_active
            or _state.inference_active or _state.anomaly or recording is not None):
        return None
    olay = out._interned_layout
    if olay is None or olay.fast is None or out._requires_grad or "_inference" in out.__dict__:
        return None
    storage = out._storage
    for a in args:
        if a.__class__ in _TENSORS and (a._requires_grad or a._storage is storage):
            return None  # a graph (PyTorch's error), or an input out overwrites: generic
    n = len(args)
    first = args[0] if n else None
    # the usual calls keyed without the signature loop: one or two distinct contiguous tensors
    # (a key of other lengths than the loop's, which is (op, olay, its tuple))
    plan_key = None
    if not kwargs and first.__class__ is Tensor and first._interned_layout is not None:
        if n == 1:
            plan_key = (op, olay, first._interned_layout, None)
        elif n == 2:
            second = args[1]
            if second.__class__ is Tensor and second is not first and \
                    second._interned_layout is not None:
                plan_key = (op, olay, first._interned_layout, second._interned_layout)
    if plan_key is None:
        signed = _signature(args, kwargs)
        if signed is None:
            return None
        plan_key = (op, olay, signed[0])
    try:
        run = _out_plans.get(plan_key)
    except TypeError:  # symbolic sizes do not hash
        return None
    if run is None:
        return _first_out_call(op, args, kwargs, out, olay, plan_key, write)
    if run and run(args, out):
        out._vc[0] += 1
        return out
    return None


def _first_out_call(op: _dispatch.Operator, args: tuple[Any, ...], kwargs: dict[str, Any],
                    out: Tensor, olay: Any, plan_key: tuple[Any, ...],
                    write: Callable[[Tensor, Tensor], Tensor]) -> Tensor | None:
    """Run the generic path recorded, keep the out= plan its record allows, and write the
    result into ``out``."""
    recorded = _recorded_run(op, args, kwargs)
    if recorded is None:
        return None  # another thread is planning: this call takes the generic path
    result, rec = recorded
    run = False
    if op._replays and not _tensor_as_value(op, args, kwargs):
        run = _out_native(op, args, rec, result, olay) or False
    if len(_out_plans) >= _MAX_PLANS:
        _out_plans.clear()
    _out_plans[plan_key] = run
    return write(out, result)


def _out_native(op: _dispatch.Operator, args: tuple[Any, ...], rec: list[Any], result: Any,
                olay: Any) -> Callable[[tuple[Any, ...], Tensor], bool] | None:
    """The launch into an out tensor of layout ``olay`` that the record ``rec`` of one generic
    call allows (a function of the call's arguments and out, False when the backend declines a
    call), or None: one elementwise primitive of core's composite into the call's result, of
    ``olay``'s shape, dtype and device, on operands that are the call's tensors (in the
    primitive's dtype) or numbers (bound as the constants the generic path makes of them)."""
    if result.__class__ is not Tensor or len(rec) != 1 or result._requires_grad:
        return None
    prim, operands, compute, out_dtype, prim_kwargs, rout = rec[0]
    if (rout is not result or compute is _dtype.bool_ or result._shape != olay.shape
            or out_dtype is not olay.dtype or result._dtype is not olay.dtype
            or result._device != olay.device):
        return None
    fast = olay.fast
    prepare_out = getattr(fast, "prepare_out", None)
    key = olay.runtime.dispatch_key
    if (prepare_out is None or fast.dtype_codes.get(compute) is None
            or op.resolve(key) is not op.kernels.get(_dispatch.COMPOSITE_EXPLICIT)
            or _dispatch.registered(getattr(PRIMS, prim).resolve(key))
            is not fast.kernels.get(prim)):
        return None
    if prim_kwargs:
        if list(prim_kwargs) != ["rounding_mode"]:
            return None  # (a reduction's dims: not elementwise)
        mode = prim_kwargs["rounding_mode"]
        if mode is not None:
            prim = _PRIM_VARIANTS.get((prim, mode))
            if prim is None:
                return None
    if prim != "where" and len(operands) > 2:
        return None
    shape = olay.shape
    spec: list[tuple[int | None, int]] = []  # (argument position, itemsize) or (None, address)
    strides: list[Any] = []
    constants: list[Tensor] = []
    for k, o in enumerate(operands):
        want = _dtype.bool_ if prim == "where" and k == 0 else compute
        if o.__class__ in _TENSORS:
            place = _position(o, args)
            if place is None or o._dtype is not want:
                return None
            spec.append((place, want.itemsize))
            strides.append(_expanded(o._shape, o._stride, shape))
        else:
            c = _constant(o, want, olay.device)
            if c is None:
                return None
            constants.append(c)
            spec.append((None, c._storage._ptr + c._offset * want.itemsize))
            strides.append((0,) * len(shape))
    if not any(place is not None for place, _ in spec):
        return None
    native = prepare_out(_NATIVE_NAMES.get(prim, prim), olay.dcode, fast.dtype_codes[compute],
                         shape, strides)
    if native is None:
        return None
    out_size = olay.dtype.itemsize
    if len(spec) == 1 and spec[0][0] is not None:
        (i, size), = spec

        def run_unary(args: tuple[Any, ...], out: Tensor) -> bool:
            x = args[i]  # (the addresses, written out: no calls)
            return native(out._storage._ptr + out._offset * out_size,
                          x._storage._ptr + x._offset * size)
        return run_unary
    if len(spec) == 2 and spec[0][0] is not None and spec[1][0] is not None:
        (i, size_a), (j, size_b) = spec

        def run_binary(args: tuple[Any, ...], out: Tensor) -> bool:
            a = args[i]
            b = args[j]
            return native(out._storage._ptr + out._offset * out_size,
                          a._storage._ptr + a._offset * size_a,
                          b._storage._ptr + b._offset * size_b)
        return run_binary

    def run_bound(args: tuple[Any, ...], out: Tensor) -> bool:
        return native(out._storage._ptr + out._offset * out_size,
                      *[c if i is None else args[i]._storage._ptr + args[i]._offset * c
                        for i, c in spec])
    run_bound.constants = constants  # type: ignore[attr-defined]  # alive as long as the plan
    return run_bound


_dispatch.plan_call = call
