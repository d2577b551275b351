"""``torch.jit.trace`` and ``trace_module``: run once, keep the aten graph, run the graph.

The example inputs go through the callable once with the recorder on
(:mod:`torch.jit._recording`); what comes back is a callable that runs the recorded graph on
new inputs of the same structure: a :class:`~torch.jit.ScriptFunction` for a function, a
:class:`~torch.jit.TopLevelTracedModule` for a module (an ``nn.Module`` sharing the original's
parameters, buffers and submodules). As in PyTorch, Python control flow and Python numbers
taken from tensors are fixed at the values the example inputs gave.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from torch._core.tensor import Tensor
from torch.jit._graph import Graph, same_tuple
from torch.jit._recording import TracerWarning, record

__all__ = ["TracingCheckError", "trace", "trace_module"]


class TracingCheckError(Exception):
    """``torch.jit.TracingCheckError``: a trace found inconsistent by its check (Plait's
    check warns with ``TracerWarning`` instead, as PyTorch does for differing outputs)."""


class _Slot:
    """Where the i-th flat tensor goes back into an argument structure."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def flatten(obj: Any, tensors: list[Tensor], names: list[str], name: str) -> Any:
    """The structure of ``obj`` with each tensor replaced by a :class:`_Slot` (the tensors are
    appended to ``tensors``, their names to ``names``)."""
    if isinstance(obj, Tensor):
        tensors.append(obj)
        names.append(name)
        return _Slot(len(tensors) - 1)
    if isinstance(obj, (tuple, list)):
        items = [flatten(x, tensors, names, f"{name}_{i}") for i, x in enumerate(obj)]
        return same_tuple(obj, items) if isinstance(obj, tuple) else items
    if isinstance(obj, dict):
        return {k: flatten(x, tensors, names, f"{name}_{k}") for k, x in obj.items()}
    raise RuntimeError(f"Type '{type(obj)}' cannot be traced. Only Tensors and (possibly "
                       "nested) Lists, Dicts, and Tuples of Tensors can be traced")


def unflatten(spec: Any, tensors: list[Any]) -> Any:
    """The inverse of :func:`flatten`."""
    if isinstance(spec, _Slot):
        return tensors[spec.index]
    if isinstance(spec, tuple):
        return same_tuple(spec, [unflatten(x, tensors) for x in spec])
    if isinstance(spec, list):
        return [unflatten(x, tensors) for x in spec]
    if isinstance(spec, dict):
        return {k: unflatten(x, tensors) for k, x in spec.items()}
    return spec


def _same_structure(a: Any, b: Any) -> bool:
    if isinstance(a, _Slot):
        return isinstance(b, _Slot)
    if isinstance(a, (tuple, list, dict)):
        if type(a) is not type(b) or len(a) != len(b):
            return False
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(_same_structure(a[k], b[k]) for k in a)
        return all(_same_structure(x, y) for x, y in zip(a, b))
    return True


class TracedCall:
    """A recorded graph with the argument structure it was traced with: called with new
    arguments of that structure, it runs the graph."""

    def __init__(self, graph: Graph, args_spec: Any, kwargs_spec: Any,
                 arg_names: list[str]) -> None:
        # arg_names: one per flat input tensor (``pair_0`` for a tuple argument's first)
        self.graph = graph
        self.args_spec = args_spec
        self.kwargs_spec = kwargs_spec
        self.arg_names = arg_names

    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                 params: Mapping[str, Any]) -> Any:
        if isinstance(self.kwargs_spec, dict) and kwargs.keys() == self.kwargs_spec.keys():
            kwargs = {k: kwargs[k] for k in self.kwargs_spec}  # the traced order
        tensors: list[Tensor] = []
        names: list[str] = []
        args_spec = flatten(tuple(args), tensors, names, "input")
        kwargs_spec = flatten(dict(kwargs), tensors, names, "input")
        if not (_same_structure(self.args_spec, args_spec)
                and _same_structure(self.kwargs_spec, kwargs_spec)):
            raise RuntimeError("the traced function was called with arguments of another "
                               f"structure than it was traced with: expected "
                               f"{len(self.graph.inputs)} tensors as in the example inputs, "
                               f"got {len(tensors)}")
        return self.graph.run(tensors, params)


def _check_output_containers(obj: Any) -> None:
    """``strict=True``: a list or dict output may change structure with the inputs, which the
    graph cannot follow (PyTorch refuses them the same way)."""
    if isinstance(obj, (list, dict)):
        kind = type(obj).__name__
        raise RuntimeError(
            f"Encountering a {kind} at the output of the tracer might cause the trace to be "
            "incorrect: the graph keeps the structure the example inputs gave. Return a tuple "
            "(or a NamedTuple) instead, or pass strict=False to trace() if the structure "
            "never changes")
    if isinstance(obj, tuple):
        for item in obj:
            _check_output_containers(item)


def _compare(traced: Any, eager: Any, rtol: float, label: str) -> None:
    """Warn (TracerWarning) where the graph's outputs differ from the Python function's, as
    PyTorch's check_trace does."""
    got: list[Tensor] = []
    want: list[Tensor] = []
    if _tensor_tree(traced) and _tensor_tree(eager):
        flatten(traced, got, [], "out")
        flatten(eager, want, [], "out")
    for i, (a, b) in enumerate(zip(got, want)):
        if not _close(a, b, rtol):
            warnings.warn(
                f"Output nr {i + 1}. of the traced {label} does not match the corresponding "
                "output of the Python function: the trace may have fixed a value that "
                "depends on the inputs, or the function is nondeterministic",
                TracerWarning, stacklevel=4)


def _close(a: Tensor, b: Tensor, rtol: float) -> bool:
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(torch.allclose(a, b, rtol=rtol, atol=1e-5, equal_nan=True))
    return bool(torch.equal(a, b))


def _tensor_tree(obj: Any) -> bool:
    if isinstance(obj, Tensor):
        return True
    if isinstance(obj, (tuple, list)):
        return all(_tensor_tree(x) for x in obj)
    if isinstance(obj, dict):
        return all(_tensor_tree(x) for x in obj.values())
    return False


def _parameter_names(fn: Callable[..., Any], count: int, skip_self: bool) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if skip_self and names and names[0] == "self":
        names = names[1:]
    return (names + [f"input_{i}" for i in range(len(names), count)])[:count]


def _as_args(example_inputs: Any) -> tuple[Any, ...]:
    if example_inputs is None:
        return ()
    if isinstance(example_inputs, tuple):
        return example_inputs
    return (example_inputs,)


def trace_call(fn: Callable[..., Any], example_inputs: Any, example_kwarg_inputs: Any,
               params: Mapping[str, Tensor], strict: bool, check_trace: bool,
               check_inputs: Any, check_tolerance: float, label: str) -> TracedCall:
    """Record ``fn`` on the example inputs and return the replayable call."""
    args = _as_args(example_inputs)
    kwargs = dict(example_kwarg_inputs or {})
    tensors: list[Tensor] = []
    names: list[str] = []
    arg_names = _parameter_names(fn, len(args), skip_self=False)
    args_spec = tuple(flatten(a, tensors, names, n) for a, n in zip(args, arg_names))
    kwargs_spec = {k: flatten(v, tensors, names, k) for k, v in kwargs.items()}

    def call(inputs: list[Tensor]) -> Any:
        return fn(*unflatten(args_spec, inputs), **unflatten(kwargs_spec, inputs))

    graph, result = record(call, tensors, params, names)
    if strict:
        _check_output_containers(result)
    traced = TracedCall(graph, args_spec, kwargs_spec, names)
    if check_trace:
        from torch._core.grad_mode import no_grad

        checks = [(args, kwargs)] if check_inputs is None else \
            [(_as_args(c), {}) for c in check_inputs]
        with no_grad():
            for check_args, check_kwargs in checks:
                eager = result if check_args is args else fn(*check_args, **check_kwargs)
                _compare(traced(check_args, check_kwargs, params), eager, check_tolerance,
                         label)
    return traced


def trace(func: Any, example_inputs: Any = None, optimize: Any = None,
          check_trace: bool = True, check_inputs: list[Any] | None = None,
          check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
          _module_class: Any = None, _compilation_unit: Any = None,
          example_kwarg_inputs: dict[str, Any] | None = None,
          _store_inputs: bool = True) -> Any:
    """Trace a function or ``nn.Module``: run it once on ``example_inputs`` and return a
    callable that runs the aten operators it called on new inputs.

    :param func: a function, or a module (its ``forward`` is traced).
    :param example_inputs: a tensor or a tuple of positional arguments (tensors, or nested
        tuples, lists and dicts of them).
    :param check_trace: run the graph on the example inputs (or ``check_inputs``) and warn
        (``TracerWarning``) where it differs from the Python function.
    :param check_inputs: tuples of arguments to check the trace with.
    :param check_tolerance: the relative tolerance of that check.
    :param strict: refuse list and dict outputs (their structure could depend on the
        inputs); ``strict=False`` allows them.
    :param example_kwarg_inputs: keyword arguments to trace with.
    :returns: a :class:`~torch.jit.ScriptFunction` for a function, a
        :class:`~torch.jit.TopLevelTracedModule` for a module.
    """
    from torch.jit._function import ScriptFunction
    from torch.jit._modules import ScriptModule, is_module

    if isinstance(func, (ScriptModule, ScriptFunction)):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. "
                      "Returning the object as is.", stacklevel=2)
        return func
    if inspect.ismethod(func) and func.__name__ == "forward" and is_module(func.__self__):
        func = func.__self__  # a module's forward is traced as the module, as in PyTorch
    if is_module(func):
        if example_kwarg_inputs is not None:
            return trace_module(func, {"forward": example_kwarg_inputs}, None, check_trace,
                                _wrap_checks(check_inputs), check_tolerance, strict,
                                example_inputs_is_kwarg=True)
        return trace_module(func, {"forward": example_inputs}, None, check_trace,
                            _wrap_checks(check_inputs), check_tolerance, strict)
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("torch.jit.trace needs example_inputs (or example_kwarg_inputs) to "
                           "run the function once")
    traced = trace_call(func, example_inputs, example_kwarg_inputs, {}, strict, check_trace,
                        check_inputs, check_tolerance, "function")
    return ScriptFunction(func, traced=traced)


def _wrap_checks(check_inputs: list[Any] | None) -> list[dict[str, Any]] | None:
    return None if check_inputs is None else [{"forward": c} for c in check_inputs]


def trace_module(mod: Any, inputs: dict[str, Any], optimize: Any = None,
                 check_trace: bool = True, check_inputs: list[dict[str, Any]] | None = None,
                 check_tolerance: float = 1e-5, strict: bool = True,
                 _force_outplace: bool = False, _module_class: Any = None,
                 _compilation_unit: Any = None, example_inputs_is_kwarg: bool = False,
                 _store_inputs: bool = True) -> Any:
    """Trace methods of a module: ``inputs`` maps each method name to its example inputs.

    :returns: a :class:`~torch.jit.TopLevelTracedModule` whose traced methods run their
        graphs (``forward`` through calling the module).
    """
    from torch.jit._modules import TopLevelTracedModule, is_module

    if not is_module(mod):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    params = dict(mod.named_parameters(remove_duplicate=False))
    params.update(mod.named_buffers(remove_duplicate=False))
    calls = {}
    for method_name, example in inputs.items():
        method = getattr(mod, method_name)
        checks = None if check_inputs is None else [c[method_name] for c in check_inputs]
        if example_inputs_is_kwarg:
            traced = trace_call(method, None, example, params, strict, check_trace, checks,
                                check_tolerance, "module")
        else:
            traced = trace_call(method, example, None, params, strict, check_trace, checks,
                                check_tolerance, "module")
        calls[method_name] = traced
    return TopLevelTracedModule(mod, calls)
