"""AOT autograd: trace forward and backward together, partition, compile each half.

``aot_function`` traces a joint function (the forward, then ``torch.autograd.grad`` of its
differentiable outputs with tangents as inputs) on fake tensors, functionalized
(:mod:`.functionalize`: no in-place operator in the graph; the inputs it writes come back as
extra outputs, copied into the inputs once per call), splits it with a partition function
and wraps the compiled halves in an ``autograd.Function``. The backward half is compiled
lazily at the first backward, as PyTorch does. Inference calls (grad mode off or no input
requiring grad) trace and compile only the forward. Nothing real runs while compiling: no
random number is drawn and no buffer moves (docs/compile.md, "AOT autograd").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.fx import GraphModule
from torch.utils import _pytree as pytree

from .functionalize import functional_trace
from .partitioners import default_partition, min_cut_rematerialization_partition

__all__ = ["aot_function", "aot_module", "aot_module_simplified", "make_boxed_func",
           "make_boxed_compiler", "nop", "default_partition",
           "min_cut_rematerialization_partition"]


def make_boxed_func(f: Callable) -> Callable:
    """Wrap ``f`` so it takes its arguments as one list (the boxed calling convention)."""
    def boxed(args: list) -> Any:
        return f(*args)
    boxed._boxed_call = True
    return boxed


def make_boxed_compiler(compiler: Callable) -> Callable:
    """Turn a compiler returning an unboxed callable into one returning a boxed callable."""
    def boxed_compiler(gm: GraphModule, example_inputs: list) -> Callable:
        return make_boxed_func(compiler(gm, example_inputs))
    return boxed_compiler


def nop(gm: GraphModule, example_inputs: list) -> Callable:
    """The compiler that compiles nothing: runs the graph module as is."""
    return gm


def _call(compiled: Callable, args: list) -> Any:
    return compiled(args) if getattr(compiled, "_boxed_call", False) else compiled(*args)


def _is_symbolic(args: tuple[Any, ...]) -> bool:
    return any(isinstance(a, torch.SymInt) or (isinstance(a, torch.Tensor) and any(
        isinstance(s, torch.SymInt) for s in a.shape)) for a in args)


def _differentiable(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.requires_grad and \
        (value.is_floating_point() or value.is_complex())


def _output_metadata(fn: Callable, args: tuple[Any, ...]) -> tuple[list[Any], Any]:
    """``fn``'s flat outputs and their structure, from a run on fake tensors (nothing real
    is computed, drawn or written)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import _input_fake

    mode = FakeTensorMode(allow_non_fake_inputs=True, static_shapes=not _is_symbolic(args))
    fakes = [_input_fake(mode, a) if isinstance(a, torch.Tensor) else a for a in args]
    try:
        with mode:
            out = fn(*fakes)
    except RuntimeError as error:
        # the traces see each input that requires grad as a leaf: an in-place write to one
        # that is not a leaf in the caller's graph is refused here, not by eager's message
        if "leaf Variable" in str(error) and any(
                isinstance(a, torch.Tensor) and a.grad_fn is not None for a in args):
            raise NotImplementedError(
                "AOT autograd: the function writes in place an input that requires grad and "
                "is not a leaf; eager autograd records that write, the compiled graph "
                "cannot") from error
        raise
    return pytree.tree_flatten(out)


def _restructure_output(gm: GraphModule, num_grads: int) -> None:
    """Functional tracing returns ``(outputs + grads, written inputs)``; the partitioners
    and the runners take ``outputs, written inputs, grads`` flat."""
    output = next(n for n in gm.graph.nodes if n.op == "output")
    results, written = output.args[0]
    results = list(results)
    split = len(results) - num_grads
    output.args = (tuple(results[:split]) + tuple(written) + tuple(results[split:]),)
    gm.recompile()


def _copy_back(args: Any, written: list[int], values: Any) -> None:
    """The epilogue: the new values of the inputs the graph wrote go into those inputs."""
    with torch.no_grad():
        for index, value in zip(written, values):
            args[index].copy_(value)


def aot_function(fn: Callable, fw_compiler: Callable, bw_compiler: Callable | None = None,
                 partition_fn: Callable = default_partition, decompositions: dict | None = None,
                 num_params_buffers: int = 0, keep_inference_input_mutations: bool = False,
                 inference_compiler: Callable | None = None, dynamic: bool = False) -> Callable:
    """Compile ``fn`` (tensor arguments, a tensor or a pytree of tensors out) ahead of time.

    Traced on fake tensors and functionalized (:mod:`.functionalize`); compiled once per
    input shapes, dtypes, ``requires_grad`` and grad mode."""
    del num_params_buffers, keep_inference_input_mutations
    compilers = (fw_compiler, bw_compiler or fw_compiler, inference_compiler or fw_compiler)
    cache: dict[tuple, Callable] = {}

    def key_of(args: tuple) -> tuple:
        return tuple((tuple(a.shape), a.dtype, a.requires_grad) if isinstance(a, torch.Tensor)
                     else ("const", repr(a)) for a in args) + (torch.is_grad_enabled(),)

    def compiled_fn(*args: Any) -> Any:
        key = key_of(args)
        runner = cache.get(key)
        if runner is None:
            runner = cache[key] = _compile(fn, args, compilers, partition_fn, decompositions,
                                           dynamic)
        return runner(*args)

    return compiled_fn


def _compile(fn: Callable, args: tuple[Any, ...], compilers: tuple[Callable, ...],
             partition_fn: Callable, decompositions: dict | None, dynamic: bool,
             cacheable: bool = False) -> Callable:
    """A runner for ``fn`` on arguments like ``args``: the joint graph partitioned under an
    ``autograd.Function`` when a gradient is needed, the forward alone otherwise.
    ``cacheable``: ``fn`` is a captured GraphModule whose code says all it computes, so the
    partitioned graphs may come from (and go to) the disk cache (:mod:`._aot_cache`)."""
    mode = "symbolic" if dynamic or _is_symbolic(args) else "fake"
    needs_grad = torch.is_grad_enabled() and any(
        isinstance(a, torch.Tensor) and a.requires_grad for a in args)
    if needs_grad:
        from . import _aot_cache, config

        key = _aot_cache.cache_key(fn, args, partition_fn, decompositions) \
            if cacheable and mode == "fake" and config.enable_autograd_cache else None
        return _build_autograd(fn, args, compilers[0], compilers[1], partition_fn,
                               decompositions, mode, key)
    spec_box: list[Any] = []

    def flat_fn(*flat: Any) -> tuple:
        leaves, spec = pytree.tree_flatten(fn(*flat))
        spec_box.append(spec)
        return tuple(leaves)

    gm, written = functional_trace(flat_fn, tuple(args), mode, decompositions)
    _restructure_output(gm, 0)
    compiled = compilers[2](gm, list(args))
    spec = spec_box[0]
    num_out = spec.num_leaves

    if not written and spec == pytree.tree_structure((0,) * num_out):
        # a flat tuple out and no input written (graph capture's graphs, mostly): no wrapping
        def run_flat(*call_args: Any) -> Any:
            return tuple(_call(compiled, list(call_args)))

        return run_flat

    def run(*call_args: Any) -> Any:
        results = _call(compiled, list(call_args))
        _copy_back(call_args, written, results[num_out:])
        return pytree.tree_unflatten(list(results[:num_out]), spec)

    return run


def _trace_autograd(fn: Callable, args: tuple, partition_fn: Callable,
                    decompositions: dict | None, mode: str) -> tuple[Any, ...]:
    """The joint graph of ``fn`` on ``args``, partitioned: ``(forward graph, backward graph,
    written input indices, number of outputs, indices of the outputs that get a tangent,
    output structure)``."""
    diff_index = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
    sample, spec = _output_metadata(fn, args)
    num_out = len(sample)
    # outputs that get a gradient (a tangent input of the backward)
    tangent_of = [i for i, o in enumerate(sample) if _differentiable(o)]

    def joint(*flat: Any) -> tuple:
        primals, tangents = flat[:len(args)], flat[len(args):]
        primals = [p.detach().requires_grad_(i in diff_index) if isinstance(p, torch.Tensor)
                   else p for i, p in enumerate(primals)]
        result = pytree.tree_leaves(fn(*primals))
        pairs = [(result[i], t) for i, t in zip(tangent_of, tangents)
                 if isinstance(result[i], torch.Tensor) and result[i].requires_grad]
        grads = torch.autograd.grad([o for o, _ in pairs], [primals[i] for i in diff_index],
                                    [t for _, t in pairs], allow_unused=True) if pairs else \
            [None] * len(diff_index)
        return tuple(result) + tuple(grads)

    tangent_examples = [sample[i].detach() for i in tangent_of]
    joint_gm, written = functional_trace(joint, (*args, *tangent_examples), mode,
                                         decompositions)
    for index in written:
        if index in diff_index:
            raise NotImplementedError(
                "AOT autograd: the function writes an input that requires grad in place; "
                "eager autograd records that write, the compiled graph cannot")
    _restructure_output(joint_gm, len(diff_index))
    num_written = len(written)
    fw_gm, bw_gm = partition_fn(joint_gm, None, num_fwd_outputs=num_out + num_written,
                                num_primals=len(args))
    return fw_gm, bw_gm, written, num_out, tangent_of, spec


def _build_autograd(fn: Callable, args: tuple, fw_compiler: Callable, bw_compiler: Callable,
                    partition_fn: Callable, decompositions: dict | None, mode: str,
                    cache_key: str | None = None) -> Callable:
    from . import _aot_cache

    traced = _aot_cache.load(cache_key) if cache_key is not None else None
    if traced is None:
        traced = _trace_autograd(fn, args, partition_fn, decompositions, mode)
        if cache_key is not None:
            _aot_cache.store(cache_key, traced[0], traced[1], traced[2:])
    fw_gm, bw_gm, written, num_out, tangent_of, spec = traced
    diff_index = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
    num_written = len(written)
    fw_compiled = fw_compiler(fw_gm, list(args))
    bw_state: dict[str, Callable] = {}
    non_differentiable = [i for i in range(num_out) if i not in tangent_of]

    class CompiledFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *flat: Any) -> Any:
            results = _call(fw_compiled, list(flat))
            if written:
                _copy_back(flat, written, results[num_out:num_out + num_written])
            ctx.saved = results[num_out + num_written:]
            returned = tuple(results[:num_out])
            ctx.layouts = [(r.shape, r.dtype, r.device) for r in
                           (returned[i] for i in tangent_of)]
            marked = [returned[i] for i in non_differentiable
                      if isinstance(returned[i], torch.Tensor)]
            if marked:
                ctx.mark_non_differentiable(*marked)
            return returned

        @staticmethod
        def backward(ctx: Any, *grad_outputs: Any) -> tuple:
            if torch.is_grad_enabled():  # backward(create_graph=True): as PyTorch says
                raise RuntimeError("torch.compile with aot_autograd does not currently support "
                                   "double backward")
            if ctx.saved is None:  # an earlier backward freed them
                raise RuntimeError(
                    "Trying to backward through the graph of a compiled function a second "
                    "time: its saved tensors were freed after the first backward (a compiled "
                    "backward cannot keep them for retain_graph=True)")
            tangents = [grad_outputs[i] if grad_outputs[i] is not None
                        else torch.zeros(shape, dtype=dtype, device=device)
                        for i, (shape, dtype, device) in zip(tangent_of, ctx.layouts)]
            inputs = list(ctx.saved) + tangents
            if "bw" not in bw_state:
                bw_state["bw"] = bw_compiler(bw_gm, list(inputs))
            grads = _call(bw_state["bw"], inputs)
            ctx.saved = None  # freed as eager autograd frees its saved tensors
            full: list = [None] * len(args)
            for i, g in zip(diff_index, grads):
                full[i] = g
            return tuple(full)

    flat_tuple = spec == pytree.tree_structure((0,) * num_out)

    def run(*call_args: Any) -> Any:
        returned = CompiledFunction.apply(*call_args)
        if not isinstance(returned, tuple):
            returned = (returned,)
        return returned if flat_tuple else pytree.tree_unflatten(list(returned), spec)

    return run


def aot_module(mod: torch.nn.Module, *args: Any, **kwargs: Any) -> Callable:
    """Compile ``mod`` with :func:`aot_function`, its parameters and buffers as leading inputs."""
    names = [n for n, _ in mod.named_parameters()] + [n for n, _ in mod.named_buffers()]

    def functional(*flat: Any) -> Any:
        state = dict(zip(names, flat[:len(names)]))
        return torch.func.functional_call(mod, state, tuple(flat[len(names):]))

    compiled = aot_function(functional, *args, num_params_buffers=len(names), **kwargs)

    def forward(*inputs: Any) -> Any:
        state = dict(mod.named_parameters())
        state.update(mod.named_buffers())
        return compiled(*[state[n] for n in names], *inputs)

    return forward


def aot_module_simplified(mod: Callable, example_inputs: list, fw_compiler: Callable,
                          bw_compiler: Callable | None = None,
                          partition_fn: Callable = default_partition,
                          decompositions: dict | None = None,
                          inference_compiler: Callable | None = None,
                          **kwargs: Any) -> Callable:
    """What torch.compile backends call: compile a captured GraphModule for its example
    inputs (fake tensors, symbolic where sizes vary) now, once; graph capture's guards
    decide when it is compiled again. A module with parameters or buffers goes through
    :func:`aot_module` (they become leading inputs)."""
    owns_state = isinstance(mod, torch.nn.Module) and (
        next(iter(mod.parameters()), None) is not None
        or next(iter(mod.buffers()), None) is not None)
    if owns_state:
        return aot_module(mod, fw_compiler, bw_compiler, partition_fn=partition_fn,
                          decompositions=decompositions,
                          inference_compiler=inference_compiler, **kwargs)
    compilers = (fw_compiler, bw_compiler or fw_compiler, inference_compiler or fw_compiler)
    return _compile(mod, tuple(example_inputs), compilers, partition_fn, decompositions,
                    bool(kwargs.get("dynamic", False)), cacheable=isinstance(mod, GraphModule))
