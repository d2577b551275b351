"""Guards, the compiled-graph cache and recompiles (packages/compile/README.md, "Cache").

A recorded graph is keyed by its structure (each op's target and constant arguments, which
values are returned) and by its guards: each input tensor's type, dtype, device, sizes,
strides, storage offset and ``requires_grad``, plus the grad mode and default dtype it
started under. A key seen before at the same *place* (compiled function + graph index within
its call) runs the cached compiled callable; a new key at a place already compiled is a
recompile, explained by the first guard that differs from the latest entry there. Sizes start
static; when only sizes changed at a place (``dynamic=None``), those dims stop being guarded
there ("automatic dynamic": the graph is rerecorded at each call, so a graph with the same
structure is right for any size; the backend then gets example inputs with symbolic sizes).
``dynamic=True`` unguards every dim of size >= 2 from the start, ``False`` never. After
``config.recompile_limit`` graphs at one place, the function runs eagerly from then on with
one warning.
"""

from __future__ import annotations

import collections
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch._core import config as _core_config
from torch._core.tensor import Tensor
from torch._dynamo import _log, config
from torch._dynamo.exc import BackendCompilerFailed, RecompileError

__all__ = ["FrameState", "counters", "input_guards", "stance"]

# torch._dynamo.utils.counters: category -> Counter (graph breaks by reason, frames...)
counters: collections.defaultdict[str, collections.Counter[Any]] = collections.defaultdict(
    collections.Counter)

# torch.compiler.set_stance: the active stance (a one-element list so it can be patched)
stance: list[str] = ["default"]

_TENSOR_FIELDS = ("type", "dtype", "device", "size()", "stride()", "storage_offset()",
                  "requires_grad")


def _tensor_guard(t: Tensor) -> tuple[Any, ...]:
    return (type(t), t.dtype, t.device, tuple(t.shape), tuple(t.stride()), t.storage_offset(),
            t.requires_grad)


def input_guards(inputs: list[Tensor], grad_enabled: bool, default_dtype: torch.dtype,
                 autocast: tuple[Any, ...] = (),
                 global_lengths: tuple[tuple[str, int], ...] = ()) -> tuple[Any, ...]:
    """The guards of a graph's inputs and of the global state it started under (and the
    lengths of the global lists the compiled function's code reads, as PyTorch guards
    them)."""
    guards = (grad_enabled, default_dtype, tuple(_tensor_guard(t) for t in inputs), autocast)
    return (*guards, global_lengths) if global_lengths else guards


def global_lengths(fn: Any) -> tuple[tuple[str, int], ...]:
    """(name, length) of each global list the code of ``fn`` (a function or bound method)
    reads, at the call's start."""
    fn = getattr(fn, "__func__", fn)
    code, scope = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
    if code is None or scope is None:
        return ()
    return tuple((name, len(value)) for name in code.co_names
                 if type(value := scope.get(name)) is list)


def explain_miss(old: tuple[Any, ...], new: tuple[Any, ...], names: list[str]) -> str:
    """Why ``new`` missed the entry keyed ``old``: the first guard or op that differs."""
    old_struct, old_guards = old
    new_struct, new_guards = new
    if old_guards[0] != new_guards[0]:
        return f"grad mode: expected {old_guards[0]}, got {new_guards[0]}"
    if old_guards[1] != new_guards[1]:
        return f"default dtype: expected {old_guards[1]}, got {new_guards[1]}"
    for i, (a, b) in enumerate(zip(old_guards[2], new_guards[2])):
        if a == b:
            continue
        name = names[i] if i < len(names) else f"input {i}"
        for field_name, x, y in zip(_TENSOR_FIELDS, a, b):
            if x == y:
                continue
            if isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y):
                dim = next(d for d, (p, q) in enumerate(zip(x, y)) if p != q)
                return f"tensor '{name}' {field_name}[{dim}]: expected {x[dim]}, got {y[dim]}"
            return f"tensor '{name}' {field_name}: expected {x}, got {y}"
    if old_guards[4:] != new_guards[4:]:
        for (name, old_len), (_, new_len) in zip(*old_guards[4:], *new_guards[4:]):
            if old_len != new_len:
                return f"len({name}) == {old_len}: got {new_len}"
        return f"global lists: expected {old_guards[4:]}, got {new_guards[4:]}"
    if old_guards[3:] != new_guards[3:]:
        return f"autocast: expected {old_guards[3:]}, got {new_guards[3:]}"
    if len(old_guards[2]) != len(new_guards[2]):
        return (f"number of graph inputs: expected {len(old_guards[2])}, "
                f"got {len(new_guards[2])}")
    for i, (a, b) in enumerate(zip(old_struct[0], new_struct[0])):
        if a != b:
            bound = _bound_miss(a, b)
            if bound is not None:
                name = a[1] if isinstance(a[1], str) else getattr(a[1], "__name__", a[1])
                return f"int argument of graph op {i} ({name}): {bound}"
            constant = _first_difference(a[2:], b[2:]) if a[:2] == b[:2] else None
            if constant is not None:
                name = a[1] if isinstance(a[1], str) else getattr(a[1], "__name__", a[1])
                return f"constant argument of graph op {i} ({name}): expected " \
                    f"{constant[0]}, got {constant[1]}"
            return f"graph op {i}: expected {_op_text(a)}, got {_op_text(b)}"
    if len(old_struct[0]) != len(new_struct[0]):
        return f"graph length: expected {len(old_struct[0])} ops, got {len(new_struct[0])}"
    return "the values the program keeps from the graph differ"


_BOUND_CLASS_TEXT = {"pos": "an int >= 2", "neg": "a negative int", 0: "0", 1: "1"}


def _bound_miss(a: tuple[Any, ...], b: tuple[Any, ...]) -> str | None:
    """How two ops differ in a symbolic int's class (a slice bound, a size), or None."""
    parts_a, parts_b = _int_parts(a), _int_parts(b)
    if a[:2] != b[:2] or a[2][0] != b[2][0] or parts_a is None or parts_b is None:
        return None
    for (_, x), (_, y) in zip(parts_a, parts_b):
        if x != y and x[0] == "int" and y[0] == "symint":
            return f"expected {x[1]}, got another int (automatic dynamic: now a graph input)"
        if x != y and "symint" in (x[0], y[0]):
            return f"expected {_BOUND_CLASS_TEXT.get(x[1], x[1])}, got " \
                f"{_BOUND_CLASS_TEXT.get(y[1], y[1])}"
    return None


_CONTAINER_KEYS = ("tuple", "list", "Size", "slice", "dict")


def _leaf_text(key: Any) -> str:
    return repr(key[1]) if isinstance(key, tuple) and len(key) == 2 and \
        isinstance(key[0], str) else repr(key)


def _first_difference(a: Any, b: Any) -> tuple[str, str] | None:
    """The first constants that differ between two argument keys (``pos`` in
    ``cache[:, pos] = k``), as text, or None when they differ in structure."""
    if a == b:
        return None
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and (
            not a or not isinstance(a[0], str) or (a[0] == b[0] and a[0] in _CONTAINER_KEYS)):
        for x, y in zip(a, b):
            found = _first_difference(x, y)
            if found is not None:
                return found
        return None
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 2 and \
            isinstance(a[0], str) and a[0] not in _CONTAINER_KEYS and a[0] != "ref":
        return _leaf_text(a), _leaf_text(b)
    return None


def _op_text(op: tuple[Any, ...]) -> str:
    _, target, args, _ = op
    name = target if isinstance(target, str) else getattr(target, "__name__", repr(target))
    return f"{name}{args!r}"[:120]


@dataclass
class Place:
    """One graph position of a compiled function: its compiled entries, newest last."""

    entries: dict[Any, Callable[..., Any]] = field(default_factory=dict)
    keys: list[Any] = field(default_factory=list)
    dynamic: set[tuple[int, int]] = field(default_factory=set)  # (input, dim) not guarded
    last_guards: Any = None  # the unmasked guards of the newest entry
    # (op, argument) positions of Python numbers that became graph inputs (automatic
    # dynamic scalars), and the unmasked structure of the newest entry
    scalars: frozenset[tuple[int, int]] = frozenset()
    # (op, argument, item or None, slice part) positions of ints in slice bounds that became
    # graph inputs (automatic dynamic ints: ``x[:n]`` with another ``n``)
    symints: frozenset[tuple[Any, ...]] = frozenset()
    # (unmasked guards, unmasked structure) of each entry compiled, newest last
    structures: list[tuple[Any, Any]] = field(default_factory=list)


_ANY = "*"  # a key's size, stride or offset that is not guarded (a dynamic dimension)


def _contiguous(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    expected = 1
    for size, st in zip(reversed(shape), reversed(stride)):
        if size != 1 and st != expected:
            return False
        expected *= size
    return True


def masked(guards: tuple[Any, ...], dynamic: set[tuple[int, int]]) -> tuple[Any, ...]:
    """``guards`` with the sizes of the ``dynamic`` dims unguarded: such an input keeps its
    type, dtype, device, rank, static sizes, contiguity and ``requires_grad`` guards."""
    if not dynamic:
        return guards
    tensors = list(guards[2])
    for i, d in dynamic:
        if i < len(tensors) and d < len(tensors[i][3]):
            g = tensors[i]
            # sizes 0 and 1 stay guarded (PyTorch specialises them even on a dynamic dim)
            shape = tuple(_ANY if k == d and (s is _ANY or s >= 2) else s
                          for k, s in enumerate(g[3]))
            stride = g[4] if isinstance(g[4], str) else (
                "contiguous" if _contiguous(g[3], g[4]) else "strided")
            tensors[i] = (g[0], g[1], g[2], shape, stride, _ANY, g[6])
    return (guards[0], guards[1], tuple(tensors), *guards[3:])


# Arithmetic whose Python-number operand may become a 0-dim tensor input of the result's
# dtype without changing the result (type promotion gives the same dtype, and the number is
# cast to that dtype by eager's kernels too): Tensor methods by name, torch functions.
_LIFTABLE_METHODS = frozenset(("__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
                               "__rmul__", "__truediv__", "add", "sub", "mul", "div"))
_LIFTABLE_FUNCTIONS = frozenset(("add", "sub", "mul", "div", "true_divide", "multiply",
                                 "subtract"))


# result dtypes whose kernels compute with the number cast to that dtype, as a 0-dim
# tensor input is (half types compute in float32: the number would be rounded first), and
# that hold any number a program passes (int64)
_LIFTABLE_DTYPES = frozenset((torch.float32, torch.float64, torch.int64))


def _liftable_op(kind: str, target: Any) -> bool:
    if kind == "call_method":
        return target in _LIFTABLE_METHODS
    name = getattr(target, "__name__", None)
    return name in _LIFTABLE_FUNCTIONS and getattr(torch, name, None) is target


def scalar_changes(old: tuple[Any, ...], new: tuple[Any, ...], recording: Any
                   ) -> set[tuple[int, int]] | None:
    """The (op, argument) positions where two graph structures differ only in a Python
    number operand of arithmetic on a tensor (``x * scale`` with another ``scale``), or None
    when they differ otherwise. PyTorch makes such numbers symbolic after they change
    (automatic dynamic), rather than recompiling for each value."""
    if len(old) != len(new):
        return None
    changed: set[tuple[int, int]] = set()
    for index, (a, b) in enumerate(zip(old, new)):
        if a == b:
            continue
        if a[0] != b[0] or a[1] != b[1] or a[3] != b[3] \
                or not _liftable_op(a[0], a[1]):
            return None
        a_args, b_args = a[2][1], b[2][1]
        if len(a_args) != len(b_args):
            return None
        dtype = getattr(recording.op_fakes[index], "dtype", None)
        if dtype not in _LIFTABLE_DTYPES:
            return None
        for j, (x, y) in enumerate(zip(a_args, b_args)):
            if x == y:
                continue
            if x[0] != y[0] or x[0] not in ("int", "float") or (
                    x[0] == "float" and not dtype.is_floating_point):
                return None
            changed.add((index, j))
    return changed or None


def numbers_from_data(recording: Any) -> set[tuple[int, int]]:
    """Positions of numbers in liftable arithmetic equal to a value the program read from a
    pending op (``x * y.sum().item()`` with ``capture_scalar_outputs``): graph inputs from the
    first graph, as PyTorch's symbolic scalars are (one graph for every value)."""
    return _liftable_numbers(recording,
                             lambda a: type(a) in (int, float) and a in recording.peeked)


def sizes_as_numbers(recording: Any, dynamic: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """Positions of ints in liftable arithmetic equal to the size of a dynamic dim
    (``x * x.size(0)`` with dim 0 marked dynamic): most likely read from that size, so they
    are graph inputs from the first graph (PyTorch traces such a size symbolically)."""
    sizes = {recording.inputs[i].shape[d] for i, d in dynamic if i < len(recording.inputs)}
    return _liftable_numbers(recording, lambda a: type(a) is int and a in sizes)


def _liftable_numbers(recording: Any, wanted: Any) -> set[tuple[int, int]]:
    """(op index, argument index) of each number ``wanted`` accepts among the arguments of
    the recording's liftable arithmetic."""
    found: set[tuple[int, int]] = set()
    for index, (kind, target, args, _) in enumerate(recording.ops):
        if not _liftable_op(kind, target) or getattr(
                recording.op_fakes[index], "dtype", None) not in _LIFTABLE_DTYPES:
            continue
        found.update((index, j) for j, a in enumerate(args) if wanted(a))
    return found


# Operators whose int arguments are sizes (top level, or in a tuple or list argument): such
# an int equal to a dynamic dim's size is written as that input's ``size(d)`` in the graph
# (as PyTorch traces it symbolically), instead of making one graph per size.
_SIZE_METHODS = frozenset(("view", "reshape", "expand", "repeat", "new_zeros", "new_ones",
                           "new_empty", "new_full", "unflatten", "tile", "broadcast_to",
                           "narrow", "split"))
_SIZE_FUNCTIONS = frozenset(("zeros", "ones", "empty", "full", "rand", "randn", "arange",
                             "reshape", "tile", "broadcast_to", "narrow", "split"))


def _size_op(kind: str, target: Any) -> bool:
    if kind == "call_method":
        return target in _SIZE_METHODS
    name = getattr(target, "__name__", None)
    return name in _SIZE_FUNCTIONS and getattr(torch, name, None) is target


def mask_dims(ops: tuple[Any, ...], guards: tuple[Any, ...], dims: set[tuple[int, int]]
              ) -> tuple[Any, ...]:
    """``ops`` (a structure) with each size argument equal to the size of a dynamic dim
    (``dims``, of contiguous inputs: their example inputs are symbolic) as ``("dim", i, d)``
    instead of its value. A value two dims share goes to the first; a literal that happens to
    equal a size stops matching when the size changes, and so recompiles, correctly."""
    if not dims:
        return ops
    tensors = guards[2]
    by_size: dict[int, tuple[int, int]] = {}
    for i, d in sorted(dims):
        if i < len(tensors) and d < len(tensors[i][3]) and _contiguous(tensors[i][3],
                                                                       tensors[i][4]):
            size = tensors[i][3][d]
            if size >= 2:
                by_size.setdefault(size, (i, d))
    if not by_size:
        return ops

    def leaf(key: Any) -> Any:
        if key[0] == "int" and key[1] in by_size:
            return ("dim", *by_size[key[1]])
        return key

    def bounds(key: Any) -> Any:  # a slice's bounds (x[:, :T]), not a bare index
        if key[0] == "slice":
            return ("slice", *(leaf(k) for k in key[1:]))
        return key

    changed = list(ops)
    for index, (kind, target, args, kwargs) in enumerate(ops):
        if kind == "call_method" and target == "__getitem__":
            items = tuple(bounds(a) if a[0] == "slice" else (a[0], tuple(bounds(v) for v in a[1]))
                          if a[0] == "tuple" else a for a in args[1])
        elif _size_op(kind, target):
            items = tuple(leaf(a) if a[0] == "int" else (a[0], tuple(leaf(v) for v in a[1]))
                          if a[0] in ("tuple", "list", "Size") else a for a in args[1])
        else:
            continue
        if items != args[1]:
            changed[index] = (kind, target, (args[0], items), kwargs)
    return tuple(changed)


def dim_positions(masked_ops: tuple[Any, ...]) -> dict[tuple[Any, ...], tuple[int, int]]:
    """(op, argument, item or None, slice part or None) -> (input, dim) of the size
    arguments :func:`mask_dims` replaced."""
    found: dict[tuple[Any, ...], tuple[int, int]] = {}

    def visit(key: Any, where: tuple[Any, ...]) -> None:
        if key[0] == "dim":
            found[(*where, None)] = (key[1], key[2])
        elif key[0] == "slice":
            for part, k in enumerate(key[1:]):
                if k[0] == "dim":
                    found[(*where, part)] = (k[1], k[2])

    for index, (_, _, args, _) in enumerate(masked_ops):
        for j, a in enumerate(args[1]):
            if a[0] in ("tuple", "list", "Size"):
                for k, v in enumerate(a[1]):
                    if isinstance(v, tuple) and v:
                        visit(v, (index, j, k))
            else:
                visit(a, (index, j, None))
    return found


def mask_scalars(structure: tuple[Any, ...], scalars: frozenset[tuple[int, int]]
                 ) -> tuple[Any, ...]:
    """``structure`` with the numbers at the ``scalars`` positions unguarded."""
    if not scalars:
        return structure
    ops = list(structure)
    for index, j in scalars:
        if index < len(ops):
            kind, target, args, kwargs = ops[index]
            items = list(args[1])
            if j < len(items):
                items[j] = (items[j][0], _ANY)
                ops[index] = (kind, target, (args[0], tuple(items)), kwargs)
    return tuple(ops)


def _slice_parts(args_key: Any) -> list[tuple[tuple[Any, ...], Any]]:
    """((argument, item or None, part), leaf key) of each bound of the slices in the index
    argument of a ``__getitem__`` structure (``x[:n]``, ``x[:, a:b]``)."""
    found: list[tuple[tuple[Any, ...], Any]] = []
    for j, a in enumerate(args_key[1]):
        if a[0] == "slice":
            found.extend(((j, None, part), k) for part, k in enumerate(a[1:]))
        elif a[0] == "tuple":
            for item, v in enumerate(a[1]):
                if isinstance(v, tuple) and v and v[0] == "slice":
                    found.extend(((j, item, part), k) for part, k in enumerate(v[1:]))
    return found


def _size_parts(args_key: Any) -> list[tuple[tuple[Any, ...], Any]]:
    """((argument, item or None, None), leaf key) of each int size argument of a size
    operator's structure (``x.view(n, -1)``, ``torch.zeros(n)``, ``x.repeat((n, 1))``)."""
    found: list[tuple[tuple[Any, ...], Any]] = []
    for j, a in enumerate(args_key[1]):
        if a[0] in ("int", "dim", "symint"):
            found.append(((j, None, None), a))
        elif a[0] in ("tuple", "list", "Size"):
            found.extend(((j, item, None), v) for item, v in enumerate(a[1])
                         if isinstance(v, tuple) and v and v[0] in ("int", "dim", "symint"))
    return found


def _int_parts(op: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], Any]] | None:
    """The positions of the ints automatic dynamic may make inputs in ``op``: slice bounds
    of a ``__getitem__``, size arguments of a size operator; None for other ops."""
    if _is_getitem(op):
        return _slice_parts(op[2])
    if _size_op(op[0], op[1]):
        return _size_parts(op[2])
    return None


def _all_int_parts(structure: tuple[Any, ...]) -> set[tuple[Any, ...]]:
    """The positions of every int of 2 or more that automatic dynamic may make an input
    (slice bounds, size arguments; 0, 1 and negative ints stay constants, as PyTorch
    specialises them)."""
    found: set[tuple[Any, ...]] = set()
    for index, op in enumerate(structure):
        if not isinstance(op, tuple) or len(op) < 3:
            continue
        for position, leaf in _int_parts(op) or ():
            if isinstance(leaf, tuple) and len(leaf) == 2 and leaf[0] == "int" and \
                    type(leaf[1]) is int and leaf[1] >= 2:
                found.add((index, *position))
            elif isinstance(leaf, tuple) and leaf and leaf[0] == "dim":
                # an int equal to a dynamic size may be a literal that happens to equal it
                # (num_heads == batch == 2): an input, read from each call, is right either way
                found.add((index, *position))
    return found


def _is_getitem(op: tuple[Any, ...]) -> bool:
    return op[0] == "call_method" and op[1] == "__getitem__"


def _bound_changes(index: int, a: tuple[Any, ...], b: tuple[Any, ...]
                   ) -> set[tuple[Any, ...]] | None:
    """The positions where two ops differ only in int slice bounds (``x[:n]`` with another
    ``n``) or int size arguments (``x.view(n, -1)``), or None when they differ otherwise."""
    if a[:2] != b[:2] or a[3] != b[3] or a[2][0] != b[2][0] or len(a[2][1]) != len(b[2][1]):
        return None
    parts_a, parts_b = _int_parts(a), _int_parts(b)
    if parts_a is None or parts_b is None or [p for p, _ in parts_a] != [p for p, _ in parts_b]:
        return None
    changed = {p for (p, x), (_, y) in zip(parts_a, parts_b) if x != y}
    if not changed or any(not (_bound_int(x) and _bound_int(y))
                          for (p, x), (_, y) in zip(parts_a, parts_b) if p in changed):
        return None
    ones = {(0, *p) for p in changed}
    if mask_symints((a,), ones) != mask_symints((b,), ones):
        return None  # they differ elsewhere too (a bare index)
    return {(index, *p) for p in changed}


def symint_changes(old: tuple[Any, ...], new: tuple[Any, ...], recording: Any
                   ) -> tuple[set[tuple[int, int]], set[tuple[Any, ...]]] | None:
    """Where two graph structures differ only in Python numbers that automatic dynamic
    makes graph inputs: ``(scalar positions, slice-bound positions)``, or None when they
    differ otherwise. Scalars are numbers in tensor arithmetic (:func:`scalar_changes`);
    slice bounds are ints in a ``__getitem__`` slice (``x[:n]``, ``x[n:]``), which PyTorch
    makes symbolic sizes after they changed: one recompile, not one per value."""
    if len(old) != len(new):
        return None
    bounds: set[tuple[Any, ...]] = set()
    rest_old, rest_new = list(old), list(new)
    for index, (a, b) in enumerate(zip(old, new)):
        if a == b:
            continue
        found = _bound_changes(index, a, b)
        if found is not None:
            bounds |= found
            rest_old[index] = rest_new[index] = ("compared",)
    if tuple(rest_old) == tuple(rest_new):
        return set(), bounds
    scalars = scalar_changes(tuple(rest_old), tuple(rest_new), recording)
    return None if scalars is None else (scalars, bounds)


def _bound_int(key: Any) -> bool:
    return key[0] in ("int", "dim", "symint")


def _bound_class(value: int) -> Any:
    """What a symbolic slice bound still guards of its value: its sign (a negative bound
    counts from the end) and 0 and 1 (specialised, as PyTorch specialises them)."""
    return value if value in (0, 1) else "neg" if value < 0 else "pos"


def mask_symints(structure: tuple[Any, ...], symints: Any) -> tuple[Any, ...]:
    """``structure`` with the slice bounds at the ``symints`` positions unguarded but for
    :func:`_bound_class`."""
    if not symints:
        return structure
    ops = list(structure)
    by_op: dict[int, list[tuple[Any, ...]]] = {}
    for index, *where in symints:
        by_op.setdefault(index, []).append(tuple(where))
    for index, places in by_op.items():
        if index >= len(ops) or _int_parts(ops[index]) is None:
            continue
        kind, target, args, kwargs = ops[index]
        items = list(args[1])
        for j, item, part in places:
            if j >= len(items):
                continue
            holder = items[j] if item is None else (
                items[j][1][item] if items[j][0] in ("tuple", "list", "Size")
                and item < len(items[j][1]) else None)
            if not isinstance(holder, tuple) or not holder:
                continue
            if part is None:  # a size argument: the leaf itself
                bound: Any = _symint_leaf(holder)
            elif holder[0] == "slice":
                parts = list(holder)
                parts[1 + part] = _symint_leaf(holder[1 + part])
                bound = tuple(parts)
            else:
                continue
            if item is None:
                items[j] = bound
            else:
                inner = list(items[j][1])
                inner[item] = bound
                items[j] = (items[j][0], tuple(inner))
        ops[index] = (kind, target, (args[0], tuple(items)), kwargs)
    return tuple(ops)


def _symint_leaf(leaf: Any) -> Any:
    if leaf[0] == "int":
        return ("symint", _bound_class(leaf[1]))
    if leaf[0] == "dim":
        return ("symint", "pos")
    return leaf


def symint_values(recording: Any, symints: Any) -> list[int]:
    """This call's ints at the ``symints`` positions, in position order: the graph's extra
    int inputs (after the scalars')."""
    values = []
    for index, j, item, part in sorted(symints, key=_position_order):
        index_arg = recording.ops[index][2][j]
        bound = index_arg if item is None else index_arg[item]
        values.append(bound if part is None else (bound.start, bound.stop, bound.step)[part])
    return values


def _position_order(position: tuple[Any, ...]) -> tuple[Any, ...]:
    index, j, item, part = position
    return (index, j, -1 if item is None else item, -1 if part is None else part)


def scalar_inputs(recording: Any, scalars: frozenset[tuple[int, int]]) -> list[Tensor]:
    """This call's numbers at the ``scalars`` positions, as 0-dim tensors of their op's
    result dtype (on its device), in position order: the graph's extra inputs."""
    values = []
    for index, j in sorted(scalars):
        fake = recording.op_fakes[index]
        values.append(torch.tensor(recording.ops[index][2][j], dtype=fake.dtype,
                                   device=fake.device))
    return values


def marked_dynamic(inputs: list[Tensor], everything: bool) -> set[tuple[int, int]]:
    """(input, dim) pairs that are dynamic from the start: every dim of size >= 2 with
    ``dynamic=True`` (0 and 1 stay specialised, as in PyTorch), else those marked with
    ``torch._dynamo.mark_dynamic``."""
    found: set[tuple[int, int]] = set()
    for i, t in enumerate(inputs):
        if everything:
            found.update((i, d) for d, s in enumerate(t.shape) if s >= 2)
        else:
            marks = t.__dict__.get("_dynamo_dynamic_indices")
            if marks:
                found.update((i, d) for d in marks if d < t.dim())
            marks = t.__dict__.get("_dynamo_weak_dynamic_indices")
            if marks:
                found.update((i, d) for d in marks if d < t.dim())
    return found


def marked_static(inputs: list[Tensor]) -> set[tuple[int, int]]:
    """(input, dim) pairs marked with ``torch._dynamo.mark_static``: never made dynamic."""
    found: set[tuple[int, int]] = set()
    for i, t in enumerate(inputs):
        marks = t.__dict__.get("_dynamo_static_indices")
        if marks:
            found.update((i, d) for d in marks)
    return found


def size_changes(old: tuple[Any, ...], new: tuple[Any, ...]) -> set[tuple[int, int]] | None:
    """The (input, dim) pairs whose sizes differ between two guard sets that differ in
    nothing else but strides and offsets; None when something else differs."""
    if old[:2] != new[:2] or old[3:] != new[3:] or len(old[2]) != len(new[2]):
        return None
    changed: set[tuple[int, int]] = set()
    for i, (a, b) in enumerate(zip(old[2], new[2])):
        if a == b:
            continue
        if (a[0], a[1], a[2], a[6]) != (b[0], b[1], b[2], b[6]) or len(a[3]) != len(b[3]):
            return None
        changed.update((i, d) for d, (p, q) in enumerate(zip(a[3], b[3])) if p != q)
    return changed or None


@dataclass
class GraphRecord:
    """What ``torch._dynamo.explain`` reports of one compiled graph."""

    graph_module: Any
    guards: list[str]
    op_count: int


class FrameState:
    """The cache and bookkeeping of one compiled function (``torch.compile``'s frame)."""

    def __init__(self, name: str, backend: Callable[..., Any], options: dict[str, Any],
                 dynamic: bool | None = None) -> None:
        self.name = name
        self._dynamic = dynamic  # torch.compile's dynamic=
        self.backend = backend
        self.options = options
        self.places: dict[int, Place] = {}
        self.eager = False  # past the recompile limit: the function runs eagerly
        self.warned = False
        self.called = False  # called once already (set_stance("eager_then_compile"))
        self.first_sizes: list[Any] | None = None  # its eager first call's tensor sizes
        self.breaks: list[tuple[str, str]] = []  # (reason, source line)
        self.graphs: list[GraphRecord] = []  # every graph compiled, for explain
        self.fake_mode: Any = None  # the FakeTensorMode of its captures (made at the first)
        self.input_fakes: dict[int, Any] = {}  # id(real input) -> (weak ref, metadata, fake)
        self._reset_replay()

    def _reset_replay(self) -> None:
        # replay (torch._dynamo._replay): global state -> state fingerprint -> entry; the
        # globals the entries read; why the function is not replayed (None: not refused)
        self.replays: dict[Any, dict[Any, Any]] = {}
        # the same entries under _replay.fast_lookup's key (plain contiguous tensor arguments)
        self.replay_fast: dict[Any, Any] = {}
        self.replay_slots: list[Any] | None = None
        self.replay_refused: str | None = None
        self.replay_hits = 0
        self.replay_probes = 0  # probed calls refused so far

    def reset(self) -> None:
        """Forget every compiled graph (``torch._dynamo.reset``)."""
        self.places.clear()
        self.eager = False
        self.warned = False
        self.called = False
        self.breaks.clear()
        self.graphs.clear()
        self._reset_replay()

    @property
    def dynamic(self) -> bool | None:
        """torch.compile's ``dynamic=``; ``None`` reads as True while
        ``config.assume_static_by_default`` is off (every size dynamic from the first call,
        as PyTorch does)."""
        if self._dynamic is None and not config.assume_static_by_default:
            return True
        return self._dynamic

    def record_break(self, reason: str, where: str) -> None:
        self.breaks.append((reason, where))

    def run_graph(self, capture: Any, recording: Any, outputs: list[Any]) -> list[Tensor]:
        """Run ``recording`` (compiled, or found in the cache) on its real inputs and return
        the real values of ``outputs``."""
        ops_structure = tuple(recording.structure)
        outputs_key = tuple(lz.ref.key() for lz in outputs)
        guards = recording.guards()
        place = self.places.setdefault(capture.graph_index, Place())
        if self.dynamic is not False:
            place.dynamic |= marked_dynamic(recording.inputs, self.dynamic is True) - \
                marked_static(recording.inputs)
            if place.dynamic and not place.structures:
                place.scalars = place.scalars | sizes_as_numbers(recording, place.dynamic)
            if recording.peeked and not place.structures:
                place.scalars = place.scalars | numbers_from_data(recording)
        dim_ops, key = _place_key(place, ops_structure, guards, outputs_key)
        if self.dynamic is True and not place.structures and not place.symints:
            # dynamic=True: int size arguments and slice bounds (n // 2, n + 1 of a size
            # n) are int inputs from the first graph, as PyTorch's symbolic sizes are
            seeds = _all_int_parts(dim_ops)
            if seeds:
                place.symints = frozenset(seeds)
                dim_ops, key = _place_key(place, ops_structure, guards, outputs_key)
        compiled = place.entries.get(key)
        if compiled is None and place.structures and self.dynamic is not False and \
                config.automatic_dynamic_shapes and self._generalize(
                    place, guards, ops_structure, outputs_key, recording, capture.graph_index):
            dim_ops, key = _place_key(place, ops_structure, guards, outputs_key)
            compiled = place.entries.get(key)
        dims = dim_positions(dim_ops) if dim_ops is not ops_structure else {}
        # a slice bound made an int input is read from it, even where it equalled a size
        dims = {k: v for k, v in dims.items() if k not in place.symints}
        grad_now = torch.is_grad_enabled()
        from torch._dynamo._capture import autocast_state, set_autocast_state

        autocast_now = autocast_state()
        # the graph starts in the grad mode and autocast state its ops were recorded under;
        # the backend compiles it so too (its set_grad_enabled nodes may run while it traces)
        torch.set_grad_enabled(recording.start_grad)
        set_autocast_state(recording.autocast)
        inference_now = _core_config.set_inference_state(recording.inference)
        try:
            if compiled is None:
                compiled = self._compile_missing(capture, recording, outputs, place, key,
                                                 guards, dims)
                place.last_guards = guards
                place.structures.append((guards, (ops_structure, outputs_key)))
            if capture.verify:
                from torch._dynamo._verify import verify_graph

                verify_graph(self.backend, self.build(capture, recording, outputs),
                             recording.inputs, recording.input_fakes)
            if place.scalars or place.symints:
                extra = [*scalar_inputs(recording, place.scalars),
                         *symint_values(recording, place.symints)]
                graph_fn = compiled

                def compiled(*inputs: Any) -> Any:  # this call's numbers bound
                    return graph_fn(*inputs, *extra)

            capture.replay_facts.compiled = compiled
            result = compiled(*recording.inputs)
        finally:
            _core_config.set_inference_state(inference_now)
            torch.set_grad_enabled(grad_now)
            set_autocast_state(autocast_now)
        return list(result)

    def _generalize(self, place: Place, guards: Any, ops_structure: Any, outputs_key: Any,
                    recording: Any, graph_index: int) -> bool:
        """Automatic dynamic: when this graph is an earlier entry's at new sizes (with
        ``dynamic=None``) and/or with other numbers in its arithmetic, those dims stop
        being guarded and those numbers become inputs at this place. Whether anything
        changed."""
        for old_guards, (old_ops, old_outputs) in reversed(place.structures):
            if old_outputs != outputs_key:
                continue
            sizes: set[tuple[int, int]] | None = set()
            if masked(old_guards, place.dynamic) != masked(guards, place.dynamic):
                sizes = size_changes(old_guards, guards) if self.dynamic is None else None
                if sizes is None or sizes & marked_static(recording.inputs):
                    continue
            # size arguments that followed the sizes are the same graph
            dims = place.dynamic | sizes
            old_masked = mask_dims(old_ops, old_guards, dims)
            new_masked = mask_dims(ops_structure, guards, dims)
            changes = symint_changes(old_masked, new_masked, recording) \
                if old_masked != new_masked else (set(), set())
            if changes is None:
                continue
            scalars, bounds = changes
            if config.specialize_int:  # ints stay constants: a graph per value (PyTorch)
                scalars = {p for p in scalars if type(recording.ops[p[0]][2][p[1]]) is not int}
                bounds = set()
            new_scalars, new_sizes = scalars - place.scalars, sizes - place.dynamic
            new_bounds = bounds - place.symints
            if not new_scalars and not new_sizes and not new_bounds:
                return False
            if new_sizes:
                place.dynamic |= new_sizes
                _log.recompiles.info("automatic dynamic shapes at %s (graph %d): %s",
                                     self.name, graph_index, sorted(new_sizes))
            if new_scalars:
                place.scalars = place.scalars | new_scalars
                _log.recompiles.info("automatic dynamic scalars at %s (graph %d): ops %s",
                                     self.name, graph_index, sorted(new_scalars))
            if new_bounds:
                place.symints = place.symints | new_bounds
                _log.recompiles.info("automatic dynamic slice bounds at %s (graph %d): %s",
                                     self.name, graph_index,
                                     sorted(new_bounds, key=_position_order))
            return True
        return False

    def _compile_missing(self, capture: Any, recording: Any, outputs: list[Any], place: Place,
                         key: Any, guards: Any, dims: dict[Any, tuple[int, int]] | None = None
                         ) -> Callable[..., Any]:
        names = [capture.arg_names.get(id(t), f"input {i}")
                 for i, t in enumerate(recording.inputs)]
        gm = self.build(capture, recording, outputs, place.scalars, dims, place.symints)
        if place.keys:
            reason = explain_miss((place.keys[-1][0], place.last_guards), (key[0], guards), names)
            mode = stance[0]
            if mode == "fail_on_recompile" or config.error_on_recompile:
                # PyTorch's opening words, which programs and their tests match
                raise RecompileError(
                    f"Detected recompile when torch.compile stance is 'fail_on_recompile'. "
                    f"function name: '{self.name}' (graph {capture.graph_index})\n"
                    f"    triggered by the following guard failure(s):\n    - {reason}")
            limit = config.recompile_limit
            if mode == "eager_on_recompile" or len(place.keys) >= limit:
                if mode != "eager_on_recompile":
                    self.eager = True
                    if not self.warned:
                        self.warned = True
                        message = (
                            f"torch._dynamo hit config.recompile_limit ({limit}) at "
                            f"{self.name} (graph {capture.graph_index}): last reason: {reason}. "
                            "It runs eagerly from now on; to diagnose recompilation issues, "
                            "set TORCH_LOGS=recompiles.")
                        warnings.warn(message, stacklevel=2)
                        # PyTorch logs it (a record on the way to the program's handlers)
                        _log.limit.warning("%s", message)
                return gm.forward  # this one graph: eagerly, no backend
            counters["stats"]["recompiles"] += 1
            _log.recompiles.info("Recompiling function %s (graph %d)\n    triggered by the "
                                 "following guard failure(s):\n    - %s", self.name,
                                 capture.graph_index, reason)
        _log.graph_code.debug("TRACED GRAPH\n %s", gm.code)
        guards = describe_guards(key[1], names)
        _log.guards.debug("GUARDS:\n%s", "\n".join(guards))
        if place.dynamic or _takes_fakes(self.backend):
            # (sizes that vary: fake inputs with symbolic sizes say so to any backend, and
            # to the built-in ones a program's backend may hand the graph on to)
            examples = list(recording.input_fakes)
            if place.dynamic:
                examples = _symbolic_examples(recording.inputs, examples, place.dynamic)
            if place.scalars:
                examples += [recording.fake_mode.from_tensor(t)
                             for t in scalar_inputs(recording, place.scalars)]
            examples += _symbolic_ints(examples, symint_values(recording, place.symints))
        else:
            # a backend of the program's own gets the real inputs, as PyTorch's dynamo
            # gives them (a backend may run or benchmark the graph on them)
            examples = list(recording.inputs)
            if place.scalars:
                examples += scalar_inputs(recording, place.scalars)
            # (int inputs as SymInts, as PyTorch gives them: a backend handing the graph on
            # to a built-in one must not specialise them)
            examples += _symbolic_ints(examples, symint_values(recording, place.symints))
        if place.symints:  # the int placeholders' values are the symbols backends get
            placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
            for node, value in zip(placeholders[-len(place.symints):],
                                   examples[-len(place.symints):]):
                node.meta["example_value"] = value
        try:
            compiled = self.backend(gm, examples)
        except Exception as exc:
            name = getattr(self.backend, "__name__", repr(self.backend))
            if not config.suppress_errors:
                raise BackendCompilerFailed(name, exc) from exc
            # config.suppress_errors: as PyTorch, the graph runs eagerly instead
            _log.recompiles.warning("backend %r failed (%s: %s); the graph runs eagerly",
                                    name, type(exc).__name__, exc)
            compiled = gm.forward
        counters["stats"]["unique_graphs"] += 1
        self.graphs.append(GraphRecord(gm, guards, sum(
            1 for op in recording.ops if op[1] is not _set_grad_target())))
        place.entries[key] = compiled
        place.keys.append(key)
        return compiled

    def build(self, capture: Any, recording: Any, outputs: list[Any],
              scalars: frozenset[tuple[int, int]] = frozenset(),
              dims: dict[Any, tuple[int, int]] | None = None,
              symints: frozenset[tuple[Any, ...]] = frozenset()) -> Any:
        """The recording as a ``torch.fx.GraphModule`` returning ``outputs`` as a tuple;
        the numbers at the ``scalars`` positions are extra inputs (0-dim tensors), the size
        arguments at the ``dims`` positions read their input's size, the slice bounds at the
        ``symints`` positions are int inputs after those."""
        from torch._dynamo._graph import build_graph_module

        lifted = None
        if scalars:
            lifted = dict(zip(sorted(scalars), (
                recording.fake_mode.from_tensor(t)
                for t in scalar_inputs(recording, scalars))))
        ints = None
        if symints:
            order = sorted(symints, key=_position_order)
            ints = dict(zip(order, symint_values(recording, symints)))
        return build_graph_module(capture, recording, outputs, lifted, dims, ints)


def _place_key(place: Place, ops_structure: tuple[Any, ...], guards: tuple[Any, ...],
               outputs_key: Any) -> tuple[tuple[Any, ...], Any]:
    """(the structure with dynamic sizes marked, the cache key at ``place``)."""
    dim_ops = mask_dims(ops_structure, guards, place.dynamic)
    structure = (mask_symints(mask_scalars(dim_ops, place.scalars), place.symints),
                 outputs_key)
    return dim_ops, (structure, masked(guards, place.dynamic))


def _symbolic_ints(examples: list[Any], values: list[int]) -> list[Any]:
    """Example values of the int inputs (slice bounds) for backends that trace on fakes:
    ``SymInt`` s, in the shape environment of the symbolic example tensors if any."""
    if not values:
        return []
    from torch._core.symbolic import ShapeEnv

    env = next((t.fake_mode.shape_env for t in examples
                if any(isinstance(s, torch.SymInt) for s in getattr(t, "shape", ()))
                and getattr(getattr(t, "fake_mode", None), "shape_env", None) is not None),
               None) or ShapeEnv()
    return [env.create_symbol(v) if v not in (0, 1) else v for v in values]


def _takes_fakes(backend: Callable[..., Any]) -> bool:
    """Whether ``backend`` is one of the built-in ones (or made by ``aot_autograd``), which
    trace the graph on fake example inputs (symbolic where sizes vary) and never run it."""
    from torch._dynamo.backends.registry import _BUILTIN_CALLABLES

    return any(backend is b for b in _BUILTIN_CALLABLES.values()) or \
        getattr(backend, "__name__", None) == "aot_autograd"


def _symbolic_examples(inputs: list[Tensor], fakes: list[Any],
                       dynamic: set[tuple[int, int]]) -> list[Any]:
    """Example inputs for a graph with dynamic dims: those inputs as fake tensors with
    symbolic sizes (``SymInt``), so a backend that specialises on sizes sees they vary."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(static_shapes=False)
    which = {i for i, _ in dynamic}
    return [mode.from_tensor(t) if i in which and t.is_contiguous() else f
            for i, (t, f) in enumerate(zip(inputs, fakes))]


def _set_grad_target() -> Any:
    from torch._dynamo._capture import set_grad_enabled_node

    return set_grad_enabled_node


def describe_guards(guards: tuple[Any, ...], names: list[str]) -> list[str]:
    """The guards of a key as readable lines (explain's ``out_guards``, ``TORCH_LOGS=guards``)."""
    lines = [f"GLOBAL_STATE: grad_enabled == {guards[0]}",
             f"GLOBAL_STATE: default_dtype == {guards[1]}"]
    for i, g in enumerate(guards[2]):
        name = names[i] if i < len(names) else f"input {i}"
        lines.append(f"TENSOR_MATCH: {name}: {g[0].__name__}, {g[1]}, device={g[2]}, "
                     f"size={list(g[3])}, "
                     f"stride={g[4] if isinstance(g[4], str) else list(g[4])}, "
                     f"requires_grad={g[6]}")
    for name, length in guards[4] if len(guards) > 4 else ():
        lines.append(f"LENGTH_CHECK: len(G['{name}']) == {length}")
    return lines
