"""``torch.onnx.export``: trace the model (:mod:`torch.jit._recording`), translate each node
of the graph through the operator table (:mod:`torch.onnx._ops`), write the file with the
``onnx`` package.

Values that depend only on constants of the trace (``arange``, masks, shapes) are computed
once and stored as initializers, as PyTorch's constant folding does; parameters and buffers
are initializers named by their qualified names.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import torch
from torch.jit._graph import Graph, Node, Value
from torch.onnx._builder import Builder, Var, onnx_type
from torch.onnx._ops import SHAPE_ONLY, lookup
from torch.onnx._program import ONNXProgram
from torch.onnx._symbolics import registered
from torch.onnx.errors import OnnxExporterError, UnsupportedOperatorError

__all__ = ["export", "is_in_onnx_export"]

_log = logging.getLogger("torch.onnx")

DEFAULT_OPSET = 18  # PyTorch 2.13's default
MIN_OPSET = 13  # the first with Split/ReduceSum/Squeeze/Unsqueeze taking their axes as inputs
MAX_OPSET = 21


class _State(threading.local):
    def __init__(self) -> None:
        self.exporting = 0


_state = _State()


def is_in_onnx_export() -> bool:
    """Whether ``torch.onnx.export`` is running (on this thread)."""
    return bool(_state.exporting)


def _require_onnx() -> Any:
    try:
        import onnx
    except ImportError as error:
        raise ImportError("torch.onnx.export writes the model with the 'onnx' package, which "
                          "is not installed: pip install onnx") from error
    return onnx


@contextlib.contextmanager
def _exporting(model: Any, training: Any) -> Iterator[None]:
    """The export's mode: the flag ``is_in_onnx_export`` reads, and the model's train/eval
    mode as ``training`` asks (restored afterwards, module by module)."""
    from torch.onnx import TrainingMode

    modes = []
    if hasattr(model, "modules") and training != TrainingMode.PRESERVE:
        modes = [(m, m.training) for m in model.modules()]
        model.train(training == TrainingMode.TRAINING)
    _state.exporting += 1
    try:
        yield
    finally:
        _state.exporting -= 1
        for module, mode in modes:
            module.training = mode


def _split_args(args: Any, kwargs: dict[str, Any] | None) -> tuple[tuple[Any, ...],
                                                                   dict[str, Any]]:
    """PyTorch's forms: a tensor, or a tuple whose last item may be a dict of keyword
    arguments."""
    kwargs = dict(kwargs or {})
    if not isinstance(args, tuple):
        args = (args,)
    if args and isinstance(args[-1], dict):
        kwargs.update(args[-1])
        args = args[:-1]
    return args, kwargs


def _dynamic_axes(dynamic_axes: Any, dynamic_shapes: Any,
                  names: Sequence[str]) -> dict[str, dict[int, str]]:
    """``{name: {axis: symbolic name}}`` from ``dynamic_axes`` (a list of axes or a dict of
    axis -> name per input/output) or ``dynamic_shapes`` (per argument name)."""
    out: dict[str, dict[int, str]] = {}
    for name, axes in (dynamic_axes or {}).items():
        if isinstance(axes, Mapping):
            out[name] = {int(k): str(v) for k, v in axes.items()}
        else:
            out[name] = {int(a): f"{name}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}
    if isinstance(dynamic_shapes, Mapping):
        for name, axes in dynamic_shapes.items():
            if isinstance(axes, Mapping):
                out[name] = {int(k): v if isinstance(v, str) else f"{name}_dim_{k}"
                             for k, v in axes.items()}
    elif dynamic_shapes is not None:
        for name, axes in zip(names, dynamic_shapes):
            if isinstance(axes, Mapping):
                out[name] = {int(k): v if isinstance(v, str) else f"{name}_dim_{k}"
                             for k, v in axes.items()}
    return out


def _value_info(onnx: Any, name: str, value: Value, dynamic: Mapping[int, str]) -> Any:
    dims = [dynamic.get(i, size) for i, size in enumerate(value.shape)]
    return onnx.helper.make_tensor_value_info(name, onnx_type(onnx, value.dtype), dims)


def _needed(graph: Graph) -> set[Node]:
    """The nodes the outputs depend on."""
    needed: set[Node] = set()
    stack = [v.node for v in graph.output_values() if v.node is not None]
    while stack:
        node = stack.pop()
        if node in needed:
            continue
        needed.add(node)
        stack.extend(v.node for v in node.inputs() if v.node is not None)
    return needed


def _static(graph: Graph) -> set[Value]:
    """Values fixed by the trace: constants, and outputs of nodes whose tensor arguments are
    all fixed (or that read only shapes)."""
    static: set[Value] = set(graph.constants)
    for node in graph.nodes:
        if node.kind in SHAPE_ONLY or all(v in static for v in node.inputs()):
            static.update(node.outputs)
    return static


def build_model(graph: Graph, env: Mapping[Value, Any], *, opset: int,
                input_names: Sequence[str], output_names: Sequence[str],
                dynamic: Mapping[str, Mapping[int, str]], export_params: bool,
                keep_initializers_as_inputs: bool) -> Any:
    """The ONNX model of a traced graph (``env`` holds each value's tensor from a run on
    the example inputs)."""
    onnx = _require_onnx()
    g = Builder(onnx, opset)
    names: dict[Value, str] = {}
    inputs = []
    for value, name in zip(graph.inputs, input_names):
        names[value] = name
        inputs.append(_value_info(onnx, name, value, dynamic.get(name, {})))
    needed = _needed(graph)
    used = {v for node in needed for v in node.inputs()} | set(graph.output_values())
    for qualname, value in graph.params.items():
        if value not in used:
            continue
        names[value] = qualname
        if export_params:
            g.tensor(env[value], qualname)
        if not export_params or keep_initializers_as_inputs:
            inputs.append(_value_info(onnx, qualname, value, {}))
    static = _static(graph)
    for node in graph.nodes:
        # the write changes the view's base too, which the graph's values do not show (and
        # the base's later readers need not even depend on this node)
        if node.writes_view:
            raise UnsupportedOperatorError(f"{node.kind} (an in-place write into a view)", opset)

    def var(value: Value) -> Var:
        if value not in names:  # a fixed value: computed in the trace, stored
            names[value] = g.tensor(env[value], g.fresh(f"const_{value.name}"))
        return Var(names[value], value.shape, value.dtype)

    def as_vars(obj: Any) -> Any:
        if isinstance(obj, Value):
            return var(obj)
        if isinstance(obj, (list, tuple)):
            return type(obj)(as_vars(x) for x in obj)
        if isinstance(obj, dict):
            return {k: as_vars(x) for k, x in obj.items()}
        return obj

    for node in graph.nodes:
        if node not in needed or all(v in static for v in node.outputs):
            continue
        translate = lookup(node.kind)
        if translate is None:
            if registered(node.kind):
                raise UnsupportedOperatorError(
                    node.kind, opset, registered_symbolic=True)
            raise UnsupportedOperatorError(node.kind, opset)
        produced = translate(g, node, as_vars(node.args), as_vars(node.kwargs))
        produced = [produced] if isinstance(produced, str) else list(produced)
        for value, name in zip(node.outputs, produced):
            if name is not None:
                names[value] = name
    outputs = []
    for value, name in zip(graph.output_values(), output_names):
        g.nodes.append(onnx.helper.make_node("Identity", [var(value).name], [name],
                                             name=f"/output/{name}"))
        outputs.append(_value_info(onnx, name, value, dynamic.get(name, {})))
    model_graph = onnx.helper.make_graph(g.nodes, "main_graph", inputs, outputs,
                                         initializer=g.initializers)
    model = onnx.helper.make_model(model_graph, producer_name="plait",
                                   producer_version=str(torch.__version__),
                                   opset_imports=[onnx.helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model


def export(model: Any, args: Any = (), f: Any = None, *, kwargs: dict[str, Any] | None = None,
           export_params: bool = True, verbose: bool | None = None, input_names:
           Sequence[str] | None = None, output_names: Sequence[str] | None = None,
           opset_version: int | None = None, dynamic_axes: Any = None,
           keep_initializers_as_inputs: bool = False, dynamo: bool = True,
           dynamic_shapes: Any = None, training: Any = None,
           do_constant_folding: bool = True, operator_export_type: Any = None,
           **options: Any) -> Any:
    """Export ``model`` to an ONNX file by tracing it on ``args``.

    :param model: an ``nn.Module`` (or a traced module, or a function).
    :param args: the example inputs: a tensor, or a tuple (its last item may be a dict of
        keyword arguments).
    :param f: a path or a binary file object to write the model to (optional with
        ``dynamo=True``: the returned program can be saved later).
    :param kwargs: keyword arguments of ``model``.
    :param export_params: store the parameters in the file (else they become inputs).
    :param input_names: names of the graph inputs, in order of the flattened arguments.
    :param output_names: names of the graph outputs, in order.
    :param opset_version: the ONNX opset (default 18; 13 to 21).
    :param dynamic_axes: per input/output name, the axes whose size may change (a list, or a
        dict from axis to its symbolic name).
    :param dynamic_shapes: the same per argument name (``torch.export``'s form).
    :param training: a :class:`TrainingMode`; ``EVAL`` (the default) exports the model in
        eval mode and restores its modes afterwards.
    :param dynamo: PyTorch's choice of exporter; both export the same trace here, and only
        the result differs, as in PyTorch: an :class:`ONNXProgram` with ``dynamo=True`` (the
        default), None with ``dynamo=False``.
    :raises UnsupportedOperatorError: the graph has an operator without an ONNX translation.
    :returns: an :class:`ONNXProgram`, or None (``dynamo=False``).

    ``do_constant_folding``, ``operator_export_type`` and the other options of PyTorch's
    exporters are accepted.
    """
    from torch.jit._tracing import trace_call
    from torch.onnx import OperatorExportTypes, TrainingMode

    onnx = _require_onnx()
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise OnnxExporterError(f"opset_version {opset} is not supported: Plait exports "
                                f"opsets {MIN_OPSET} to {MAX_OPSET}")
    if operator_export_type not in (None, OperatorExportTypes.ONNX):
        raise OnnxExporterError(f"operator_export_type={operator_export_type} is not "
                                "supported: only OperatorExportTypes.ONNX")
    if f is None and not dynamo:
        raise OnnxExporterError("torch.onnx.export(dynamo=False) needs a file (a path or a "
                                "binary file object) to write to")
    call_args, call_kwargs = _split_args(args, kwargs)
    training = TrainingMode.EVAL if training is None else training
    is_module = hasattr(model, "named_parameters") and hasattr(model, "forward")
    params: dict[str, Any] = {}
    if is_module:
        params = dict(model.named_parameters(remove_duplicate=False))
        params.update(model.named_buffers(remove_duplicate=False))
    fn = model.forward if is_module else model
    with _exporting(model, training):
        traced = trace_call(fn, call_args, call_kwargs, params, strict=False,
                            check_trace=False, check_inputs=None, check_tolerance=0.0,
                            label="model")
        graph = traced.graph
        env: dict[Value, Any] = {}
        with torch.no_grad():
            graph.run(_flat_inputs(call_args, call_kwargs), params, env)
    names_in = list(input_names or [])
    names_in += [v.name for v in graph.inputs[len(names_in):]]
    outputs = graph.output_values()
    default_out = ["output"] if len(outputs) == 1 else [f"output_{i}"
                                                       for i in range(len(outputs))]
    names_out = list(output_names or [])
    names_out += default_out[len(names_out):]
    dynamic = _dynamic_axes(dynamic_axes, dynamic_shapes, names_in)
    onnx_model = build_model(graph, env, opset=opset, input_names=names_in,
                             output_names=names_out, dynamic=dynamic,
                             export_params=export_params,
                             keep_initializers_as_inputs=keep_initializers_as_inputs)
    if verbose:
        _log.info("exported graph:\n%s", onnx.helper.printable_graph(onnx_model.graph))
    program = ONNXProgram(onnx_model)
    if f is not None:
        if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
            raise OnnxExporterError(f"f must be a path or a binary file object, not "
                                    f"{type(f).__name__}")
        program.save(f)
    return program if dynamo else None


def _flat_inputs(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    from torch.jit._tracing import flatten

    tensors: list[Any] = []
    flatten(args, tensors, [], "input")
    flatten(kwargs, tensors, [], "input")
    return tensors
