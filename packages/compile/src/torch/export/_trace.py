"""``export``: trace a module with its state lifted to inputs, then make the graph functional."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from typing import Any

import torch
import torch.nn as nn
import torch.utils._pytree as pytree
from torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
)
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

from .dynamic_shapes import _INT_MAX, Dim, UserError, ValueRanges
from .exported_program import ExportedProgram, is_disequality
from .graph_signature import (
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)

__all__ = ["export", "rename_and_specs"]


def _user_names(mod: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    """Placeholder names for the user input leaves: the forward's parameter names."""
    try:
        params = list(inspect.signature(mod.forward).parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for i, arg in enumerate(args):
        base = params[i] if i < len(params) else f"args_{i}"
        count = len(pytree.tree_leaves(arg))
        names += [base] if count == 1 else [f"{base}_{k}" for k in range(count)]
    for key, value in kwargs.items():
        count = len(pytree.tree_leaves(value))
        names += [key] if count == 1 else [f"{key}_{k}" for k in range(count)]
    return names


def rename_and_specs(gm: Any, names: list[str]) -> None:
    """Give the placeholders of ``gm`` the given names (in order) and regenerate its code."""
    for node, name in zip([n for n in gm.graph.nodes if n.op == "placeholder"], names):
        node.name = name
        node.target = name
    gm.recompile()


def _functionalize(gm: Any) -> dict[Any, Any]:
    """Replace ``copy_`` into a graph input by its value (later readers read the new value).

    Returns placeholder -> the node holding its final value, for every mutated input.
    """
    latest: dict[Any, Any] = {}
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        if getattr(node.target, "qualname", "") == "aten::copy_":
            dst, src = node.args[0], node.args[1]
        elif "!" in str(getattr(node.target, "schema", "")):
            functional = _functional_form(node.target)
            if functional is None:
                raise NotImplementedError(f"torch.export: in-place operator {node.target} is "
                                          f"not functionalized")
            # x.add_(y) -> add(x, y) and a copy of it into x, handled as copy_ is below
            with graph.inserting_before(node):
                src = graph.call_function(functional, node.args, node.kwargs)
            value = node.meta.get("val")
            # a new tensor (not a view of the written one), as the out-of-place op makes
            src.meta["val"] = value.clone() if isinstance(value, torch.Tensor) else value
            dst = node.args[0]
        else:
            continue
        root = dst
        while root.op != "placeholder" and root in latest.values():
            root = next(k for k, v in latest.items() if v is root)
        if root.op != "placeholder" and _aliases_another(root, graph):
            # the tensor it is a view of would keep its old value in a functional graph
            raise NotImplementedError(f"torch.export: in-place update of a view ({root.name})")
        value = src
        dst_val, src_val = dst.meta.get("val"), src.meta.get("val")
        if dst_val is not None and src_val is not None and (
                dst_val.dtype != src_val.dtype or tuple(dst_val.shape) != tuple(src_val.shape)):
            with graph.inserting_before(node):
                value = graph.call_function(torch.ops.aten._to_copy.default, (src,),
                                            {"dtype": dst_val.dtype})
                value = graph.call_function(torch.ops.aten.expand.default,
                                            (value, list(dst_val.shape)))
                value.meta["val"] = dst_val
        node.replace_all_uses_with(value)
        graph.erase_node(node)
        if root.op == "placeholder":
            latest[root] = value
    return latest


def _functional_form(target: Any) -> Any:
    """The out-of-place overload of an in-place aten operator that writes only its first
    argument (``add_.Tensor`` -> ``add.Tensor``), or None."""
    schema = str(getattr(target, "schema", ""))
    name = getattr(target, "_opname", "")
    if not name.endswith("_") or schema.count("!") != 2 or "(a!) self" not in schema:
        return None
    packet = getattr(torch.ops.aten, name[:-1], None)
    overload = getattr(packet, getattr(target, "_overloadname", "default"), None)
    return overload if "!" not in str(getattr(overload, "schema", "!")) else None


def _export_decompositions() -> dict[Any, Any]:
    """Operators whose kernels write an input the schema does not mark as written: each made
    functional (new outputs, then ``copy_``, which ``_functionalize`` lifts into mutations)."""
    from torch._aten.normalization import functional_batch_norm
    # other in-place operators (relu_, add_) are made functional by _functionalize
    return {torch.ops.aten.native_batch_norm.default: functional_batch_norm}


def _aliases_another(node: Any, graph: Any) -> bool:
    """Whether ``node``'s value shares its storage with another value of the graph (a view)."""
    value = node.meta.get("val")
    if not isinstance(value, torch.Tensor):
        return False
    storage = value.untyped_storage()
    for other in graph.nodes:
        other_value = other.meta.get("val")
        if other is node or not isinstance(other_value, torch.Tensor) or \
                "!" in str(getattr(other.target, "schema", "")):  # in-place: the same tensor
            continue
        if other_value.untyped_storage() is storage:
            return True
    return False


def _dim_specs(dynamic_shapes: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
               mod: nn.Module) -> list[dict[int, Any]]:
    """Per user input leaf: dimension -> its ``Dim`` or hint (absent: static)."""
    flat_count = len(pytree.tree_leaves((args, kwargs)))
    if dynamic_shapes is None:
        return [{} for _ in range(flat_count)]
    if isinstance(dynamic_shapes, dict):
        try:
            bound = inspect.signature(mod.forward).bind(*args, **kwargs)
            ordered = [dynamic_shapes.get(name) for name in bound.arguments]
        except TypeError as error:
            raise UserError(f"dynamic_shapes does not match the inputs: {error}") from error
        if set(dynamic_shapes) - set(bound.arguments):
            # PyTorch's words: the keys must be the names of the inputs given
            raise UserError(f"When `dynamic_shapes` is specified as a dict, its top-level keys "
                            f"must be the arg names {list(bound.arguments)} of `inputs`, but "
                            f"here they are {list(dynamic_shapes)}. Alternatively, you could "
                            f"also ignore arg names entirely and specify `dynamic_shapes` as a "
                            f"list/tuple matching `inputs`.")
        per_arg = ordered
        values = list(bound.arguments.values())
    else:
        per_arg = list(dynamic_shapes)
        values = list(args) + list(kwargs.values())
    out: list[dict[int, Any]] = []
    for spec, value in zip(per_arg, values):
        leaves = pytree.tree_leaves(value)
        if spec is None or len(leaves) != 1:
            # nested inputs: a spec per leaf in the same structure
            specs = pytree.tree_leaves(spec, is_leaf=lambda s: isinstance(s, dict) or s is None) \
                if spec is not None else [None] * len(leaves)
            out += [_one_spec(s) for s in specs] if len(specs) == len(leaves) else \
                [{} for _ in leaves]
        else:
            out.append(_one_spec(spec))
    return out


def _one_spec(spec: Any) -> dict[int, Any]:
    if spec is None:
        return {}
    if isinstance(spec, dict):
        return dict(spec)
    return {i: d for i, d in enumerate(spec) if d is not None}


@contextlib.contextmanager
def _only_marked_dims_symbolic(dynamic_dims: dict[int, dict[int, Any]]) -> Iterator[None]:
    """While tracing, give symbols only to the dimensions marked dynamic (others, parameters
    included, stay the example's sizes, so no guard ties a dynamic size to a static one).

    :param dynamic_dims: id(input) -> {dim: its hint}; the dims of one ``Dim`` or one
        symbol name (of equal example sizes) share one symbol, as PyTorch's export gives
        them."""
    from torch._subclasses.fake_tensor import FakeTensorMode, contiguous_strides

    original = FakeTensorMode.from_tensor
    shared: dict[tuple[int, int], Any] = {}  # (id(Dim), example size) -> its symbol

    def symbol(self: Any, hint: Any, size: int) -> Any:
        # one symbol per Dim (or per symbol name, when a program is traced again)
        if not isinstance(hint, (Dim, str)):
            return self.shape_env.create_symbol(size)
        key = (hint if isinstance(hint, str) else id(hint), size)
        if key not in shared:
            shared[key] = self.shape_env.create_symbol(size)
        return shared[key]

    def from_tensor(self: Any, tensor: Any, *, static_shapes: bool | None = None,
                    **kwargs: Any) -> Any:
        dims = dynamic_dims.get(id(tensor))
        if not dims or self.shape_env is None:
            return original(self, tensor, static_shapes=True)

        def layout(shape: tuple[int, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
            sizes = tuple(symbol(self, dims[d], s) if d in dims and s >= 2 else s
                          for d, s in enumerate(shape))
            strides: list[Any] = []
            acc: Any = 1
            for size in reversed(sizes):
                strides.append(acc)
                acc = acc * size
            strides.reverse()
            return (sizes, tuple(strides)) if any(not isinstance(s, int) for s in sizes) \
                else (shape, contiguous_strides(shape))

        self._symbolic_layout = layout
        try:
            return original(self, tensor, static_shapes=False, **kwargs)
        finally:
            del self._symbolic_layout

    FakeTensorMode.from_tensor = from_tensor  # type: ignore[method-assign]
    try:
        yield
    finally:
        FakeTensorMode.from_tensor = original  # type: ignore[method-assign]


def export(mod: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None, *,
           dynamic_shapes: Any = None, strict: bool = False,
           preserve_module_call_signature: tuple[str, ...] = (),
           _tracing_mode: str | None = None) -> ExportedProgram:
    """Trace ``mod(*args, **kwargs)`` into an :class:`ExportedProgram`: a functional graph of
    aten operators whose inputs are the parameters, buffers and user inputs.

    :param dynamic_shapes: per input (a tuple in argument order, or a dict by parameter name),
        a dict ``{dim: Dim(...)}`` or a tuple with one entry per dimension (``None`` static).
    :raises UserError: when a dimension marked dynamic is specialised by the model.
    """
    del strict, preserve_module_call_signature  # non-strict tracing through the dispatcher
    if not isinstance(args, tuple):
        raise UserError(f"Expecting `args` to be a tuple of example positional inputs, got "
                        f"{type(args)}")
    kwargs = dict(kwargs or {})
    params = dict(mod.named_parameters(remove_duplicate=False))
    buffers = dict(mod.named_buffers(remove_duplicate=False))
    persistent = set(mod.state_dict(keep_vars=True))
    state_names = list(params) + list(buffers)
    user_flat, in_spec = pytree.tree_flatten((args, kwargs))
    specs = _dim_specs(dynamic_shapes, args, kwargs, mod)
    symbolic = any(specs)
    out_spec_box: list[Any] = []

    def flat_fn(*values: Any) -> list[Any]:
        from torch.func import functional_call
        state = dict(zip(state_names, values[:len(state_names)]))
        call_args, call_kwargs = pytree.tree_unflatten(list(values[len(state_names):]), in_spec)
        out = functional_call(mod, state, call_args, call_kwargs)
        leaves, spec = pytree.tree_flatten(out)
        out_spec_box.append(spec)
        return leaves

    from torch.fx.experimental.proxy_tensor import make_fx
    inputs = [*params.values(), *buffers.values(), *user_flat]
    detached = [v.detach() if isinstance(v, torch.Tensor) else v for v in inputs]
    dynamic_dims = {id(v): {d: h for d, h in spec.items() if h is not Dim.STATIC and h is not None}
                    for v, spec in zip(detached[len(state_names):], specs) if spec}
    calls = _ModuleCalls(mod)
    mode = _tracing_mode or ("symbolic" if symbolic else "fake")
    try:
        try:
            with torch.no_grad(), _only_marked_dims_symbolic(dynamic_dims), calls:
                gm = make_fx(flat_fn, _export_decompositions(), tracing_mode=mode)(*detached)
        except DynamicOutputShapeException:
            # nonzero, x[mask], unique: an output size that depends on data. PyTorch gives
            # it an unbacked symbol; Plait's fake tensors have none, so the program is traced
            # on copies of the example inputs instead (the operator stays a graph node, its
            # output size is computed when the graph runs)
            calls = _ModuleCalls(mod)
            copies = [v.clone() if isinstance(v, torch.Tensor) else v for v in detached]
            out_spec_box.clear()
            with torch.no_grad(), calls:
                gm = make_fx(flat_fn, _export_decompositions(), tracing_mode="real")(*copies)
            _fake_meta(gm)
    except DataDependentOutputException as exc:
        # PyTorch's error for Python control flow on values (torch.cond is the way out)
        raise GuardOnDataDependentSymNode(
            f"Could not guard on data-dependent expression: {exc}. The model reads a "
            f"tensor's value in Python (`if x.sum() > 0`, `.item()`); use torch.cond for a "
            f"branch on data") from exc
    placeholder_names = [("p_" if n in params else "b_") + n.replace(".", "_")
                         for n in state_names] + _user_names(mod, args, kwargs)
    rename_and_specs(gm, placeholder_names)
    mutated = _functionalize(gm)
    constants = _lift_constants(gm, len(state_names))

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    input_specs = [InputSpec(InputKind.PARAMETER if name in params else InputKind.BUFFER,
                             TensorArgument(node.name), name,
                             None if name in params else name in persistent)
                   for name, node in zip(state_names, placeholders)]
    input_specs += [InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(node.name), name)
                    for name, node in zip(constants, placeholders[len(state_names):])]
    input_specs += [InputSpec(InputKind.USER_INPUT, TensorArgument(node.name), None)
                    for node in placeholders[len(state_names) + len(constants):]]
    output_node = next(n for n in gm.graph.nodes if n.op == "output")
    user_outputs = list(output_node.args[0])
    mutation_specs, mutation_values = [], []
    for name, node in zip(state_names, placeholders):
        if node in mutated:
            if name in params:
                raise UserError(f"torch.export: the model mutates parameter {name!r} in place")
            mutation_values.append(mutated[node])
            mutation_specs.append((name, mutated[node]))
    output_node.args = (tuple(mutation_values + user_outputs),)
    gm.graph.lint()
    gm.recompile()
    output_specs = [OutputSpec(OutputKind.BUFFER_MUTATION, TensorArgument(v.name), name)
                    for name, v in mutation_specs]
    output_specs += [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(getattr(v, "name", "")),
                                None) for v in user_outputs]
    signature = ExportGraphSignature(input_specs, output_specs)

    shape_env = getattr(gm, "shape_env", None)
    input_dims, ranges = _input_dims(placeholders[len(state_names) + len(constants):],
                                     user_flat, specs,
                                     shape_env)
    # a snapshot: running the program's module() must not move the original model's buffers
    state_dict = {k: nn.Parameter(v.detach().clone(), v.requires_grad) for k, v in params.items()}
    state_dict.update({k: v.detach().clone() for k, v in buffers.items()})
    program = ExportedProgram(gm, signature, state_dict, ranges, in_spec, out_spec_box[-1],
                              input_dims, (args, kwargs), constants=constants,
                              shape_env=shape_env)
    program._module_calls = calls.finish(gm)
    return program


def _fake_meta(gm: Any) -> None:
    """Give a graph traced on real tensors fake ``meta["val"]`` values, as a fake trace's
    nodes have (no tensor data is kept in the program's graph)."""
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    mode = FakeTensorMode(allow_non_fake_inputs=True)

    def fake(value: Any) -> Any:
        real = isinstance(value, torch.Tensor) and not isinstance(value, FakeTensor)
        return mode.from_tensor(value) if real else value

    for node in gm.graph.nodes:
        node.meta["val"] = pytree.tree_map(fake, node.meta.get("val"))


class _ModuleCalls:
    """Records, while export traces, each submodule call's graph nodes: its inputs, its
    outputs and the nodes made between its start and its end (``torch.export.unflatten``
    cuts a submodule's own graph out of them)."""

    def __init__(self, root: nn.Module) -> None:
        self._names = {}
        for name, module in root.named_modules(remove_duplicate=False):
            self._names.setdefault(id(module), name)
        self._open: list[tuple[str, int, Any, Any]] = []
        self._calls: list[tuple[str, set[Any], Any, Any]] = []
        self._handles: list[Any] = []

    def __enter__(self) -> _ModuleCalls:
        from torch.nn.modules.module import (
            register_module_forward_hook,
            register_module_forward_pre_hook,
        )
        self._handles = [register_module_forward_pre_hook(self._pre),
                         register_module_forward_hook(self._post)]
        return self

    def __exit__(self, *exc_info: object) -> None:
        for handle in self._handles:
            handle.remove()

    @staticmethod
    def _tracker() -> Any:
        from torch.fx.experimental.proxy_tensor import get_proxy_mode
        mode = get_proxy_mode()
        return getattr(mode, "tracker", None)

    @staticmethod
    def _nodes_of(tracker: Any, value: Any) -> tuple[list[Any] | None, Any]:
        """The graph nodes of a structured value's leaves (None where a leaf is a tensor the
        trace does not know) and its tree spec."""
        leaves, spec = pytree.tree_flatten(value)
        nodes = []
        for leaf in leaves:
            if not isinstance(leaf, torch.Tensor):
                return None, spec
            known = tracker.tensors.get(id(leaf))
            if known is None or known[0] is not leaf:
                return None, spec
            nodes.append(tracker.node_of(leaf))
        return nodes, spec

    def _pre(self, module: nn.Module, args: tuple[Any, ...]) -> None:
        name = self._names.get(id(module))
        tracker = self._tracker()
        if not name or tracker is None:
            return
        inputs = self._nodes_of(tracker, (tuple(args), {}))
        self._open.append((name, len(tracker.graph.nodes), inputs, id(module)))

    def _post(self, module: nn.Module, args: tuple[Any, ...], output: Any) -> None:
        tracker = self._tracker()
        if not self._open or self._open[-1][3] != id(module) or tracker is None:
            return
        name, start, inputs, _ = self._open.pop()
        outputs = self._nodes_of(tracker, output)
        made = set(list(tracker.graph.nodes)[start:])
        self._calls.append((name, made, inputs, outputs))

    def finish(self, gm: Any) -> list[tuple[str, set[Any], Any, Any]]:
        """The calls, in the order they ended, keeping only nodes still in ``gm``."""
        alive = set(gm.graph.nodes)
        return [(name, made & alive, inputs, outputs)
                for name, made, inputs, outputs in self._calls]


def _lift_constants(gm: Any, state_count: int) -> dict[str, torch.Tensor]:
    """Turn tensor attributes the trace read (``get_attr``) into ``CONSTANT_TENSOR`` inputs
    placed after the state, so the graph holds no tensors of its own (and saves as JSON)."""
    graph = gm.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    constants: dict[str, torch.Tensor] = {}
    for node in [n for n in graph.nodes if n.op == "get_attr"]:
        value = getattr(gm, node.target)
        if not isinstance(value, torch.Tensor):
            continue
        name = f"c_lifted_tensor_{len(constants)}"
        if hasattr(gm, node.target):
            delattr(gm, node.target)
        anchor = placeholders[state_count] if state_count < len(placeholders) else None
        with graph.inserting_before(anchor) if anchor is not None else \
                graph.inserting_after(placeholders[-1]):
            lifted = graph.placeholder(name)
        lifted.meta.update(node.meta)
        node.replace_all_uses_with(lifted)
        graph.erase_node(node)
        constants[name] = value.detach().clone()
    gm.recompile()
    return constants


def _input_dims(placeholders: list[Any], user_flat: list[Any], specs: list[dict[int, Any]],
                shape_env: Any) -> tuple[list[Any], dict[str, ValueRanges]]:
    """Each user input's dims (size, or symbol for a dynamic dim) and the symbols' ranges;
    raise when the model specialised a dimension marked dynamic."""
    dims_out: list[Any] = []
    ranges: dict[str, ValueRanges] = {}
    named: dict[str, str] = {}
    for node, value, spec in zip(placeholders, user_flat, specs):
        if not isinstance(value, torch.Tensor):
            dims_out.append(None)
            continue
        fake_shape = node.meta["val"].shape if shape_env is not None else value.shape
        dims: list[int | str] = []
        for d, size in enumerate(fake_shape):
            hint = spec.get(d, Dim.STATIC)
            if hint is Dim.STATIC or hint is None or not isinstance(size, torch.SymInt):
                if isinstance(hint, Dim) and not isinstance(size, torch.SymInt):
                    raise UserError(f"Constraints violated ({hint.__name__})! The size of "
                                    f"dimension {d} was specialized to {value.shape[d]}")
                dims.append(int(value.shape[d]))
                continue
            symbol = size.node.name
            lower, upper, name = (hint.min, hint.max, hint.__name__) if isinstance(hint, Dim) \
                else (0, _INT_MAX, symbol)
            if isinstance(hint, Dim) and named.setdefault(name, symbol) != symbol:
                raise UserError(f"Dim {name} is used for dimensions with different sizes")
            specialised = _specialised(shape_env, symbol, lower, upper)
            if specialised:
                if hint is Dim.AUTO:
                    dims.append(int(value.shape[d]))
                    continue
                raise UserError(f"Constraints violated ({name})! Not all values of {name} = "
                                f"{node.name}.size()[{d}] in the specified range "
                                f"{lower} <= {name} <= {upper} are valid because {name} was "
                                f"inferred to be constrained: {specialised}")
            # the tracer specialises sizes 0 and 1, so the graph holds from 2 up
            ranges[symbol] = ValueRanges(max(lower, 2), upper)
            dims.append(symbol)
        dims_out.append(dims)
    return dims_out, ranges


def _specialised(shape_env: Any, symbol: str, lower: int, upper: int) -> str:
    """The guard that fails for some value of ``symbol`` in its range ('' when none does).

    Sizes 0 and 1 are specialised by the tracer, so probing starts at 2."""
    hint = int(shape_env.var_to_val[symbol])
    # symbols the trace equated with this one (a broadcast of two dynamic dims) move with it:
    # a relation between dynamic dims does not specialise either (module() checks it)
    together = {symbol}
    for guard in shape_env.guards:
        expr = guard.expr
        if guard.value and expr.op == "eq" and len(expr.args) == 2 and \
                all(a.op == "symbol" for a in expr.args) and \
                {a.name for a in expr.args} & together:
            together |= {a.name for a in expr.args}
    probes = {max(lower, 2), min(upper, 2**20), hint + 1 if hint + 1 <= upper else hint - 1,
              min(upper, max(lower, 2) + 7)}
    for probe in sorted(p for p in probes if lower <= p <= upper and p >= 2):
        values = dict(shape_env.var_to_val)
        values.update(dict.fromkeys(together, probe))
        for guard in shape_env.guards:
            if symbol in str(guard.expr) and not is_disequality(guard) and \
                    not guard.holds(values):
                return f"{guard} fails for {symbol} = {probe}"
    return ""
