"""``compile_fx``: an aten GraphModule in, a callable on its flat inputs out.

The graph is split by :mod:`.scheduler` into library calls and kernel groups. On the CPU each
group's C++ (:mod:`.cpp`) is built by :mod:`.cpp_builder` (in the background, cached on disk);
until the library is loaded, and for good when no compiler runs, the group goes through the
fused interpreter (:mod:`.interpreter`). Another device's backend may supply its own
generator through the ``torch_backend_codegen`` hook (docs/compile.md, "inductor").
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from keyword import iskeyword
from typing import Any

import torch
from torch.backends import contract

from . import config
from .interpreter import run_group
from .passes import (
    addmm_to_linear,
    fold_double_transposes,
    fuse_gelu_backward_sum,
    fuse_layer_norm_backward_add,
    merge_cat_of_reshapes,
)
from .scheduler import NORMS, KernelGroup, Schedule, norm_dtype, schedule
from .templates import template_for

__all__ = ["CompiledGraph", "GroupRunner", "compile_fx", "compile_fx_inner", "is_aten_graph"]

log = logging.getLogger("torch._inductor")

_empty = contract.empty  # a kernel output: one allocation, no argument parsing
_CPU = torch.device("cpu")


def _vendor_generator(device_type: str) -> Any:
    """The device backend's code generator for kernel groups, if it offers one."""
    from torch._core import registry

    plugin = registry._serving(device_type)
    if plugin is None:
        return None
    return registry._call_owner(plugin, "torch_backend_codegen", device_type=device_type,
                                target="pointwise")


class GroupRunner:
    """Runs one kernel group: the built kernel once it is ready, the interpreter before."""

    def __init__(self, group: KernelGroup) -> None:
        self.group = group
        self.calls = {"interpreted": 0, "compiled": 0, "vendor": 0}
        self._kernel: Future[Any] | None = None
        self._native: Any = None
        self._vendor: Callable[[list[Any]], list[Any]] | None = None
        # a layer norm's kernel writes three tensors after the group's other outputs: out,
        # mean and rstd, its node's value (the tuple; `out` alone for aten.layer_norm)
        self._norm = group.norm is not None
        self._norm_tuple = self._norm and NORMS[group.norm.target]
        self._out_dtypes = [node.meta["val"].dtype for node in group.outputs
                            if node is not group.norm]
        if group.norm is not None:
            self._out_dtypes += [norm_dtype(group.norm)] * 3
        self._layouts: dict[Any, tuple[Any, ...]] = {}
        device_type = getattr(group.device, "type", "cpu")
        if device_type == "cpu":
            if config.cpp_codegen:
                from . import cpp, cpp_builder

                self.source: str | None = cpp.render(group)
                self._kernel = cpp_builder.load_kernel(self.source)
        else:
            generator = _vendor_generator(device_type)
            if generator is not None:
                self._vendor = generator.compile_group(group)

    @property
    def ready(self) -> bool:
        """Whether calls now run the built kernel."""
        return self._resolve() is not None

    def _resolve(self) -> Any:
        if self._native is None and self._kernel is not None and self._kernel.done():
            self._native = self._kernel.result()
            if self._native is None:
                self._kernel = None  # no build possible: interpret from now on
        return self._native

    def __call__(self, inputs: list[Any]) -> list[Any]:
        native = self._native if self._native is not None else self._resolve()
        if native is not None:
            try:
                # the call's layout (sizes, strides, device of every input) picks a prepared
                # argument set: a loop calling with the same layouts reads each tensor's
                # geometry and address and nothing else (the slots, not the public methods:
                # this runs for every group of every call)
                key = tuple([(t._shape, t._stride, t._device) for t in inputs])
            except AttributeError:  # not a tensor: the interpreter's rules
                key = None
            if key is not None:
                layout = self._layouts.get(key)
                if layout is None:
                    layout = self._layouts[key] = self._prepare(inputs)
                if layout is not None:
                    self.calls["compiled"] += 1
                    return self._run_native(native, inputs, layout)
        if self._vendor is not None:
            self.calls["vendor"] += 1
            return self._vendor(inputs)
        self.calls["interpreted"] += 1
        return run_group(self.group, inputs)

    def _run_native(self, native: Any, inputs: list[Any], layout: tuple[Any, ...]
                    ) -> list[Any]:
        out_shapes, numel, arguments, pointer_array = layout
        if numel == 0:
            if self.group.reduction is not None or self._norm:
                return run_group(self.group, inputs)  # empty rows: the library's rules
            return [_empty(s, d, _CPU) for s, d in zip(out_shapes, self._out_dtypes)]
        outputs = [_empty(s, d, _CPU) for s, d in zip(out_shapes, self._out_dtypes)]
        pointers = [t.data_ptr() for t in inputs]
        pointers += [t.data_ptr() for t in outputs]
        native(*arguments, pointer_array(*pointers))
        if self._norm:
            return [*outputs[:-3], tuple(outputs[-3:]) if self._norm_tuple else outputs[-3]]
        return outputs

    def _prepare(self, inputs: list[Any]) -> tuple[Any, ...] | None:
        """Output shapes, element count, the kernel's layout arguments and the type of its
        pointer array for one layout of the inputs; ``None`` when the built kernel cannot
        take them (not all CPU tensors)."""
        if len(self._layouts) > 64:
            self._layouts.clear()  # many sizes (dynamic shapes): keep the table small
        if not all(isinstance(t, torch.Tensor) and t.device.type == "cpu" for t in inputs):
            return None
        shape = tuple(torch.broadcast_shapes(*(t.shape for t in inputs)))
        numel = 1
        for size in shape:
            numel *= size
        out_shapes = [shape] * len(self._out_dtypes)
        reduction = self.group.reduction
        if reduction is not None:
            keepdim = len(reduction.args) > 2 and bool(reduction.args[2])
            out_shapes[-1] = shape[:-1] + ((1,) if keepdim else ())
        if self._norm:  # out of the group's shape; mean and rstd one per row
            out_shapes[-2:] = [shape[:-1] + (1,)] * 2
        flat = 1
        strides: list[int] = []
        for t in inputs:
            same = tuple(t.shape) == shape
            if not (same and t.is_contiguous()):
                flat = 0
            strides.extend(t.stride() if same else t.expand(shape).stride())
        ndim = len(shape)
        arguments = (numel, ndim, (ctypes.c_int64 * max(ndim, 1))(*shape),
                     (ctypes.c_int64 * max(len(strides), 1))(*strides), flat)
        return out_shapes, numel, arguments, ctypes.c_void_p * (len(inputs) + len(out_shapes))


def _map(value: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(value, (list, tuple)):
        mapped = [_map(v, fn) for v in value]
        return type(value)(mapped) if isinstance(value, tuple) else mapped
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    if hasattr(value, "op"):
        return fn(value)
    return value


class CompiledGraph:
    """The callable :func:`compile_fx` returns: runs the schedule on flat inputs.

    The schedule becomes one generated Python function (as fx's own code is), each value a
    local: a call costs the library calls and the kernel groups, and no walk over the
    schedule, argument structures or an environment dict per node. A value is dropped after
    its last use, so intermediates are freed as early as eager frees them."""

    def __init__(self, gm: Any) -> None:
        self.gm = gm
        merge_cat_of_reshapes(gm)
        fuse_layer_norm_backward_add(gm)
        fuse_gelu_backward_sum(gm)
        fold_double_transposes(gm)
        addmm_to_linear(gm)
        plan = schedule(gm)
        self.schedule = plan
        self.runners = {id(group): GroupRunner(group) for group in plan.groups}
        self.source, self._run = _generate(gm, plan, self.runners)

    @property
    def groups(self) -> list[GroupRunner]:
        """The runners of the kernel groups, in execution order."""
        return [self.runners[id(g)] for g in self.schedule.groups]

    @property
    def templates(self) -> list[Any]:
        """The kernel templates standing for library calls (:mod:`.templates`), in order."""
        return list(self._run.__globals__["_templates"])

    def __call__(self, *args: Any) -> Any:
        return self._run(*args)


def _attribute(root: Any, path: str) -> Any:
    value = root
    for part in path.split("."):
        value = getattr(value, part)
    return value


#: Operators that only cut a tensor from the autograd graph (the generated code skips them while
#: grad mode is off).
_DETACHES = frozenset({torch.ops.aten.detach.default})

_aten = torch.ops.aten
#: View operators the generated code calls through a :class:`_DirectView` (about 5 us each
#: through the dispatcher; 300 views in a nanoGPT train step). A reshape is one when its
#: result shares the input's memory.
_VIEWS = frozenset({
    _aten.view.default, _aten._unsafe_view.default, _aten.t.default, _aten.transpose.int,
    _aten.permute.default, _aten.unsqueeze.default, _aten.squeeze.dim, _aten.squeeze.dims,
    _aten.squeeze.default, _aten.expand.default, _aten.alias.default, _aten.slice.Tensor,
    _aten.select.int, _aten.reshape.default,
})


class _DirectView:
    """One view node of a compiled graph, called while grad mode is off. The first call
    with an input of a given shape and strides runs the operator; when its result is a view
    of the input's memory, the next calls with that input layout build the same view
    (``Tensor._view``: shape, strides, offset from the input's) without the dispatcher. Any
    other input (a subclass, another layout) runs the operator."""

    __slots__ = ("_args", "_kwargs", "_op", "_result", "_source")

    def __init__(self, op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self._op = op
        self._args = args
        self._kwargs = kwargs
        self._source: tuple[Any, Any] | None = None  # (shape, stride) of the input
        self._result: tuple[Any, Any, int] | None = None  # (shape, stride, offset delta)

    def __call__(self, src: Any) -> Any:
        source = self._source
        if source is not None and src.__class__ is torch.Tensor and src._stride == source[1] \
                and src._shape == source[0]:
            shape, stride, delta = self._result
            return src._view(shape, stride, src._offset + delta)
        out = self._op(src, *self._args, **self._kwargs)
        if src.__class__ is torch.Tensor and out.__class__ is torch.Tensor \
                and out._storage is src._storage and out._vc is src._vc:
            self._source = (src._shape, src._stride)
            self._result = (out._shape, out._stride, out._offset - src._offset)
        return out


def _direct_view(step: Any) -> _DirectView | None:
    """The :class:`_DirectView` of a view node whose arguments other than its input are
    constants (a size or bound that is a graph value, an int input, is known at run time
    only), else None."""
    if step.op != "call_function" or step.target not in _VIEWS or not step.args \
            or not hasattr(step.args[0], "op"):
        return None
    later: list[Any] = []
    _map((step.args[1:], dict(step.kwargs)), later.append)
    if later:
        return None
    return _DirectView(step.target, tuple(step.args[1:]), dict(step.kwargs))


def _generate(gm: Any, plan: Schedule, runners: dict[int, GroupRunner]
              ) -> tuple[str, Callable[..., Any]]:
    """The Python source of ``plan`` and the function it defines."""
    names: dict[Any, str] = {}
    scope: dict[str, Any] = {"_attribute": _attribute, "_gm": gm}
    templates: list[Any] = []
    scope["_templates"] = templates  # CompiledGraph.templates

    def constant(value: Any) -> str:
        name = f"c{len(scope)}"
        scope[name] = value
        return name

    def render(value: Any) -> str:
        if hasattr(value, "op"):
            return names[value]
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return "(" + "".join(render(v) + ", " for v in value) + ")"
        if isinstance(value, list):
            return "[" + ", ".join(render(v) for v in value) + "]"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k!r}: {render(v)}" for k, v in value.items()) + "}"
        if isinstance(value, slice):
            return f"slice({render(value.start)}, {render(value.stop)}, {render(value.step)})"
        if value is None or isinstance(value, (bool, int, str)) or (
                isinstance(value, float) and value == value and abs(value) != float("inf")):
            return repr(value)
        return constant(value)  # dtypes, devices, named tuples, odd floats...

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    output = next(n for n in gm.graph.nodes if n.op == "output")
    for k, node in enumerate(placeholders):
        names[node] = f"a{k}"
    # each value's last reader among the steps (the output node reads last of all)
    produced: list[list[Any]] = []
    for step in plan.steps:
        produced.append(step.outputs if isinstance(step, KernelGroup) else [step])
    reads: list[list[Any]] = []
    for step in plan.steps:
        read: list[Any] = []
        if isinstance(step, KernelGroup):
            read = list(step.inputs)
        else:
            _map((step.args, dict(step.kwargs)), read.append)
        reads.append(read)
    returned: list[Any] = []
    _map(output.args[0], returned.append)
    last: dict[Any, int] = {}
    for index, read in enumerate(reads):
        for node in read:
            last[node] = index
    kept = set(returned)
    body: list[str] = []
    # A detach whose result the graph does not return is its input while grad mode is off
    # (as it is inside AOT autograd's forward and backward): no op downstream records a
    # graph then, so the two differ in nothing an op reads. An AOT graph detaches every
    # input, one dispatcher call each (about 5 µs; 112 calls in a nanoGPT train step).
    elided = {step for step in plan.steps
              if not isinstance(step, KernelGroup) and step.op == "call_function"
              and step.target in _DETACHES and step not in kept and len(step.args) == 1
              and hasattr(step.args[0], "op") and not step.kwargs}
    direct = {}
    if config.direct_views:
        for step in plan.steps:
            if not isinstance(step, KernelGroup):
                found = _direct_view(step)
                if found is not None:
                    direct[step] = found
    if elided or direct:
        scope["_grad_enabled"] = torch.is_grad_enabled
        body.append("_grad = _grad_enabled()")
    for index, step in enumerate(plan.steps):
        for node in produced[index]:
            names[node] = f"v{len(names)}"
        if isinstance(step, KernelGroup):
            runner = constant(runners[id(step)])
            targets = "".join(names[n] + ", " for n in step.outputs)
            body.append(f"{targets}= {runner}([{', '.join(names[n] for n in step.inputs)}])")
        elif step.op == "get_attr":
            body.append(f"{names[step]} = _attribute(_gm, {step.target!r})")
        elif step in elided:
            source_name = names[step.args[0]]
            body.append(f"{names[step]} = {constant(step.target)}({source_name}) if _grad "
                        f"else {source_name}")
        elif step.op == "call_function":
            template = template_for(step)
            if template is not None:
                templates.append(template)
            target = constant(step.target if template is None else template)
            arguments = [render(a) for a in step.args]
            arguments += [f"{k}={render(v)}" if k.isidentifier() and not iskeyword(k) else
                          f"**{{{k!r}: {render(v)}}}" for k, v in step.kwargs.items()]
            call = f"{target}({', '.join(arguments)})"
            if step in direct:  # grad mode on: the operator records the view's backward
                call = (f"{constant(direct[step])}({names[step.args[0]]}) if not _grad "
                        f"else {call}")
            body.append(f"{names[step]} = {call}")
        else:
            raise NotImplementedError(f"inductor: unsupported node kind {step.op!r}")
        dead = sorted({names[n] for n in reads[index]
                       if last.get(n) == index and n not in kept and n.op != "placeholder"})
        if dead:
            body.append(f"del {', '.join(dead)}")
    body.append(f"return {render(output.args[0])}")
    source = (f"def run({''.join(names[n] + ', ' for n in placeholders)}):\n"
              + "".join(f"    {line}\n" for line in body))
    exec(compile(source, "<inductor graph>", "exec"), scope)
    return source, scope["run"]


_OPERATOR_TYPE = type(torch.ops.aten.add.Tensor)


def is_aten_graph(gm: Any) -> bool:
    """Whether every call in ``gm`` is an aten operator (or ``getitem`` of a result, or
    ``operator`` arithmetic on symbolic sizes, as ``make_fx`` writes it under dynamic
    shapes), with the ``meta["val"]`` the scheduler reads."""
    import operator

    for node in gm.graph.nodes:
        if node.op == "call_function":
            target = node.target
            if not (isinstance(target, _OPERATOR_TYPE) or target is operator.getitem
                    or getattr(operator, getattr(target, "__name__", ""), None) is target):
                return False
            if "val" not in node.meta:
                return False
        elif node.op in ("call_method", "call_module"):
            return False
    return True


def _lower_to_aten(gm: Any, example_inputs: Sequence[Any],
                   config_patches: dict[str, Any] | None) -> Callable[..., Any]:
    """A graph of torch-level calls (graph capture's): through AOT autograd (forward and
    backward compiled here, the backward at its first call) unless
    ``torch._dynamo.config.use_aot_autograd`` is off; else traced to aten with ``make_fx``
    when no gradient is needed, or run as it is (eager autograd) when one is."""
    from torch._dynamo.backends.common import aot_autograd, aot_available

    def compiler(graph: Any, inputs: list[Any]) -> Callable[..., Any]:
        return compile_fx(graph, inputs, config_patches=config_patches)

    if aot_available():
        from torch._functorch.partitioners import min_cut_rematerialization_partition

        return aot_autograd(fw_compiler=compiler, bw_compiler=compiler,
                            partition_fn=min_cut_rematerialization_partition
                            )(gm, list(example_inputs))
    needs_grad = torch.is_grad_enabled() and (
        any(getattr(t, "requires_grad", False) for t in example_inputs)
        or any(p.requires_grad for p in gm.parameters()))
    if needs_grad:
        return gm.forward
    from torch.fx.experimental.proxy_tensor import make_fx

    try:
        traced = make_fx(gm)(*example_inputs)
    except Exception as error:  # a graph make_fx cannot trace still runs, unfused
        log.debug("inductor: make_fx could not trace the graph (%s); running it as is", error)
        return gm.forward
    return compile_fx(traced, example_inputs, config_patches=config_patches)


def compile_fx_inner(gm: Any, example_inputs: Sequence[Any], **kwargs: Any
                     ) -> Callable[[list[Any]], Any]:
    """Compile an aten graph into a boxed callable: it takes the inputs as one list (and
    empties it, as PyTorch's boxed calling convention does)."""
    compiled = CompiledGraph(gm)

    def run(args: list[Any]) -> Any:
        values = list(args)
        args.clear()
        return compiled(*values)

    run._boxed_call = True  # type: ignore[attr-defined]
    run.compiled_graph = compiled  # type: ignore[attr-defined]
    return run


def compile_fx(gm: Any, example_inputs: Sequence[Any],
               config_patches: dict[str, Any] | None = None, **kwargs: Any
               ) -> Callable[..., Any]:
    """Compile an aten-level GraphModule (``make_fx``'s, AOT autograd's) into a callable
    taking the graph's flat inputs and returning what the graph returns.

    :param gm: the GraphModule; its nodes carry ``meta["val"]`` (fake or real tensors).
    :param example_inputs: inputs of the graph's shape (unused beyond the metadata).
    :param config_patches: :mod:`torch._inductor.config` settings for this compilation.
    :returns: a :class:`CompiledGraph`.
    """
    if not is_aten_graph(gm):
        return _lower_to_aten(gm, example_inputs, config_patches)
    saved = {}
    for name, value in (config_patches or {}).items():
        if not hasattr(config, name):
            raise RuntimeError(f"torch._inductor.config has no option {name!r}")
        saved[name] = getattr(config, name)
        setattr(config, name, value)
    try:
        return CompiledGraph(gm)
    finally:
        for name, value in saved.items():
            setattr(config, name, value)
