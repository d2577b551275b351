"""``ExportedProgram``: a functional aten graph with its lifted state, signature and ranges."""

from __future__ import annotations

import copy
from typing import Any

import torch
import torch.nn as nn
import torch.utils._pytree as pytree
from torch._core import dispatch

from .dynamic_shapes import ValueRanges
from .graph_signature import ExportGraphSignature, InputKind, OutputKind

__all__ = ["ExportedProgram", "ModuleCallSignature", "ModuleCallEntry", "core_aten_decompositions",
           "is_disequality"]


class ModuleCallSignature:
    """How the root module is called: the pytree specs of its inputs and outputs."""

    def __init__(self, in_spec: Any, out_spec: Any) -> None:
        self.in_spec = in_spec
        self.out_spec = out_spec


class ModuleCallEntry:
    """One entry of the module call graph (only the root module is recorded here)."""

    def __init__(self, fqn: str, signature: ModuleCallSignature | None) -> None:
        self.fqn = fqn
        self.signature = signature


def core_aten_decompositions() -> dict[Any, Any]:
    """Every operator with a ``CompositeImplicitAutograd`` kernel -> that kernel.

    "Core aten" here is the set of operators the dispatcher serves without decomposing: those
    with a backend or explicit kernel. An operator written only in other operators is lowered.
    """
    return {op: op.kernels[dispatch.COMPOSITE_IMPLICIT] for op in list(dispatch._ops.values())
            if dispatch.COMPOSITE_IMPLICIT in op.kernels and dispatch._only_implicit(op)}


class _ExportedModule(nn.Module):
    """Runs an exported graph with its state held as this module's parameters and buffers."""

    _child_class: type[nn.Module] = nn.Module  # the class of the submodules holding state

    def __init__(self, program: ExportedProgram) -> None:
        super().__init__()
        self._program = program
        for name, value in program.state_dict.items():
            owner_path, _, leaf = name.rpartition(".")
            owner = self
            for part in owner_path.split(".") if owner_path else []:
                child = getattr(owner, part, None) if part in owner._modules else None
                if child is None:
                    child = self._child_class()
                    owner.add_module(part, child)
                owner = child
            if name in program.graph_signature.parameters:
                owner.register_parameter(leaf, value if isinstance(value, nn.Parameter)
                                         else nn.Parameter(value))
            else:
                owner.register_buffer(leaf, value)
        self.graph_module = program.graph_module

    def train(self, mode: bool = True) -> _ExportedModule:
        """Refused, as in PyTorch: the graph was traced in one mode (BatchNorm and dropout are
        fixed in it); export the model again in the other mode instead."""
        raise NotImplementedError(f"Calling {'train' if mode else 'eval'}() is not supported "
                                  f"yet: export the model in the mode you want to run")

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        program = self._program
        flat, spec = pytree.tree_flatten((args, kwargs))
        if spec != program._in_spec:
            raise TypeError(f"Trying to flatten user inputs with exported input tree spec:\n"
                            f"{program._in_spec}\nbut actually got inputs with tree spec of:\n"
                            f"{spec}")
        program._check_inputs(flat)
        state = dict(self.named_parameters())
        state.update(self.named_buffers())
        state.update(program.constants)
        lifted = [state[s.target] for s in program.graph_signature.input_specs
                  if s.kind is not InputKind.USER_INPUT]
        outputs = self.graph_module(*lifted, *flat)
        if not isinstance(outputs, (list, tuple)):
            outputs = (outputs,)
        user = []
        with torch.no_grad():
            for spec_, value in zip(program.graph_signature.output_specs, outputs):
                if spec_.kind is OutputKind.BUFFER_MUTATION:
                    state[spec_.target].copy_(value)
                else:
                    user.append(value)
        return pytree.tree_unflatten(user, program._out_spec)


class ExportedProgram:
    """A model exported to a functional graph of aten operators (see :func:`torch.export.export`).

    Parameters and buffers are graph inputs; buffer updates are graph outputs. Call
    :meth:`module` to run it.
    """

    def __init__(self, graph_module: Any, graph_signature: ExportGraphSignature,
                 state_dict: dict[str, torch.Tensor], range_constraints: dict[str, ValueRanges],
                 in_spec: Any, out_spec: Any, input_dims: list[list[int | str] | None],
                 example_inputs: tuple[tuple[Any, ...], dict[str, Any]] | None = None,
                 constants: dict[str, Any] | None = None, shape_env: Any = None) -> None:
        self.graph_module = graph_module
        self.graph_signature = graph_signature
        self.state_dict = state_dict
        self.range_constraints = range_constraints
        self.constants = constants or {}
        self.example_inputs = example_inputs
        self.module_call_graph = [ModuleCallEntry("", ModuleCallSignature(in_spec, out_spec))]
        self._in_spec = in_spec
        self._out_spec = out_spec
        # per user input leaf: each dimension's fixed size or symbol name (None: not a tensor)
        self._input_dims = input_dims
        self._shape_env = shape_env

    @property
    def graph(self) -> Any:
        """The program's ``torch.fx.Graph``."""
        return self.graph_module.graph

    @property
    def call_spec(self) -> tuple[Any, Any]:
        """The input and output pytree specs."""
        return self._in_spec, self._out_spec

    def _check_inputs(self, flat: list[Any]) -> None:
        """Raise unless each input tensor's sizes fit the program's static sizes and ranges
        (``AssertionError: Guard failed: x.size()[0] <= 10``, PyTorch 2.13's words)."""
        names = list(self.graph_signature.user_inputs)
        bound: dict[str, tuple[int, str]] = {}  # symbol -> (size, the first dim that has it)
        for index, (value, dims) in enumerate(zip(flat, self._input_dims)):
            if dims is None:
                continue
            if not isinstance(value, torch.Tensor) or value.dim() != len(dims):
                raise RuntimeError(f"Expected input at *args[{index}] to be a tensor of "
                                   f"{len(dims)} dimensions")
            name = names[index] if index < len(names) else f"args[{index}]"
            for d, (want, got) in enumerate(zip(dims, value.shape)):
                where = f"{name}.size()[{d}]"
                if isinstance(want, int):
                    if got != want:
                        raise AssertionError(f"Guard failed: {where} == {want}")
                    continue
                size, first = bound.setdefault(want, (got, where))
                if size != got:
                    raise AssertionError(f"Guard failed: {where} == {first}")
                ranges = self.range_constraints.get(want)
                if ranges is not None and got < ranges.lower:
                    raise AssertionError(f"Guard failed: {where} >= {ranges.lower}")
                if ranges is not None and got > ranges.upper:
                    raise AssertionError(f"Guard failed: {where} <= {ranges.upper}")
        env = self._shape_env
        if env is not None and bound:
            values = dict(env.var_to_val)
            values.update({symbol: size for symbol, (size, _) in bound.items()})
            failed = [str(g) for g in env.guards if not is_disequality(g) and not g.holds(values)]
            if failed:
                raise AssertionError(f"Guard failed: {', '.join(failed)} (input sizes "
                                     f"{ {s: v for s, (v, _) in bound.items()} })")

    def module(self) -> nn.Module:
        """An ``nn.Module`` that runs the graph with this program's state (same results as the
        exported model; buffer mutations update its buffers)."""
        return _ExportedModule(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def run_decompositions(self, decomp_table: dict[Any, Any] | None = None,
                           ) -> ExportedProgram:
        """A new program whose graph is re-traced with ``decomp_table`` (default: the core aten
        decompositions, :func:`core_aten_decompositions`), so only core operators remain."""
        from torch.fx.experimental.proxy_tensor import make_fx

        from ._trace import _only_marked_dims_symbolic, rename_and_specs

        table = core_aten_decompositions() if decomp_table is None else decomp_table
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        fakes = [n.meta.get("val") for n in placeholders]
        mode = "symbolic" if self._shape_env is not None else "real"
        examples = [_example_of(v, self._shape_env) for v in fakes]
        graph_module = self.graph_module

        def flat(*values: Any) -> Any:
            return graph_module(*values)

        user_examples = examples[len(examples) - len(self._input_dims):]
        dynamic = {id(example): {d: size for d, size in enumerate(dims) if isinstance(size, str)}
                   for example, dims in zip(user_examples, self._input_dims) if dims}
        with _only_marked_dims_symbolic(dynamic):
            traced = make_fx(flat, table, tracing_mode=mode)(*examples)
        rename_and_specs(traced, [n.name for n in placeholders])
        new = copy.copy(self)
        new.graph_module = traced
        if mode == "symbolic":
            new._shape_env = traced.shape_env
            new._input_dims, new.range_constraints = _rename_symbols(self, traced)
        return new

    def __str__(self) -> str:
        code = self.graph_module.print_readable(print_output=False) \
            if hasattr(self.graph_module, "print_readable") else self.graph_module.code
        ranges = ", ".join(f"{k}: {v}" for k, v in self.range_constraints.items())
        return (f"ExportedProgram:\n{code}\nGraph signature:\n{self.graph_signature}\n"
                f"Range constraints: {{{ranges}}}\n")

    __repr__ = __str__


def is_disequality(guard: Any) -> bool:
    """Whether ``guard`` only says a size differs from another (``not s0 == 2``).

    The tracer records these when it compares sizes (broadcasting, matching a dimension);
    with sizes 0 and 1 specialised they do not change the graph, so they neither count as
    specialising a dynamic dimension nor reject an input.
    """
    return guard.expr.op == "eq" and not guard.value


def _example_of(value: Any, shape_env: Any) -> Any:
    """A real tensor with a fake tensor's sizes (hints for symbolic sizes)."""
    if not isinstance(value, torch.Tensor):
        return value
    sizes = [int(s.node.hint) if isinstance(s, torch.SymInt) else int(s) for s in value.shape]
    return torch.zeros(sizes, dtype=value.dtype, device=value.device)


def _rename_symbols(old: ExportedProgram, traced: Any) -> tuple[list[Any], dict[str, Any]]:
    """The re-traced graph's symbols, matched to the old ones by input position."""
    user = [n for n in traced.graph.nodes if n.op == "placeholder"][-len(old._input_dims):] \
        if old._input_dims else []
    mapping: dict[str, str] = {}
    for node, dims in zip(user, old._input_dims):
        if dims is None:
            continue
        for want, size in zip(dims, node.meta["val"].shape):
            if isinstance(want, str) and isinstance(size, torch.SymInt):
                mapping[want] = size.node.name
    dims_out = [None if dims is None else [mapping.get(d, d) if isinstance(d, str) else d
                                           for d in dims] for dims in old._input_dims]
    ranges = {mapping.get(k, k): v for k, v in old.range_constraints.items()}
    return dims_out, ranges
