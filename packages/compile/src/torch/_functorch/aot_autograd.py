"""AOT autograd: trace forward and backward together, partition, compile each half.

``aot_function`` traces a joint function (the forward, then ``torch.autograd.grad`` of its
tensor outputs with tangents as inputs) with ``make_fx``, splits it with a partition function
and wraps the compiled halves in an ``autograd.Function``.  The backward half is compiled
lazily at the first backward, as PyTorch does.  Inference calls (grad mode off or no input
requiring grad) trace and compile only the forward.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.fx import GraphModule
from torch.fx.experimental.proxy_tensor import make_fx

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


def aot_function(fn: Callable, fw_compiler: Callable, bw_compiler: Callable | None = None,
                 partition_fn: Callable = default_partition, decompositions: dict | None = None,
                 num_params_buffers: int = 0, keep_inference_input_mutations: bool = False,
                 inference_compiler: Callable | None = None, dynamic: bool = False) -> Callable:
    """Compile ``fn`` (positional tensor arguments, tensor or tuple output) ahead of time."""
    bw_compiler = bw_compiler or fw_compiler
    inference_compiler = inference_compiler or fw_compiler
    mode = "symbolic" if dynamic else "real"
    cache: dict[tuple, Callable] = {}

    def key_of(args: tuple) -> tuple:
        return tuple((tuple(a.shape), a.dtype, a.requires_grad) if isinstance(a, torch.Tensor)
                     else ("const", repr(a)) for a in args) + (torch.is_grad_enabled(),)

    def compile_for(args: tuple) -> Callable:
        needs_grad = torch.is_grad_enabled() and any(
            isinstance(a, torch.Tensor) and a.requires_grad for a in args)
        if not needs_grad:
            with torch.no_grad():
                gm = make_fx(fn, decomposition_table=decompositions, tracing_mode=mode)(*args)
            compiled = inference_compiler(gm, list(args))
            return lambda *a: _call(compiled, list(a))
        return _build_autograd(fn, args, fw_compiler, bw_compiler, partition_fn,
                               decompositions, mode)

    def compiled_fn(*args: Any) -> Any:
        key = key_of(args)
        runner = cache.get(key)
        if runner is None:
            runner = cache[key] = compile_for(args)
        return runner(*args)

    return compiled_fn


def _build_autograd(fn: Callable, args: tuple, fw_compiler: Callable, bw_compiler: Callable,
                    partition_fn: Callable, decompositions: dict | None, mode: str) -> Callable:
    diff_index = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
    with torch.no_grad():
        sample = fn(*[a.detach() if isinstance(a, torch.Tensor) else a for a in args])
    single = not isinstance(sample, (tuple, list))
    outs = (sample,) if single else tuple(sample)
    num_out = len(outs)

    def joint(*flat: Any) -> tuple:
        primals, tangents = flat[:len(args)], flat[len(args):]
        primals = [p.detach().requires_grad_(i in diff_index) if isinstance(p, torch.Tensor)
                   else p for i, p in enumerate(primals)]
        result = fn(*primals)
        result = (result,) if single else tuple(result)
        pairs = [(o, t) for o, t in zip(result, tangents)
                 if isinstance(o, torch.Tensor) and o.requires_grad]
        grads = torch.autograd.grad([o for o, _ in pairs], [primals[i] for i in diff_index],
                                    [t for _, t in pairs], allow_unused=True) if pairs else \
            [None] * len(diff_index)
        return tuple(result) + tuple(grads)

    tangent_examples = [torch.zeros_like(o) if isinstance(o, torch.Tensor) else torch.zeros(())
                        for o in outs]
    joint_gm = make_fx(joint, decomposition_table=decompositions,
                       tracing_mode=mode)(*args, *tangent_examples)
    fw_gm, bw_gm = partition_fn(joint_gm, None, num_fwd_outputs=num_out, num_primals=len(args))
    fw_compiled = fw_compiler(fw_gm, list(args))
    bw_state: dict[str, Callable] = {}

    class CompiledFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *flat: Any) -> Any:
            results = _call(fw_compiled, list(flat))
            ctx.saved = results[num_out:]
            returned = tuple(results[:num_out])
            no_grad_outs = [r for r in returned if isinstance(r, torch.Tensor)
                            and not r.is_floating_point()]
            if no_grad_outs:
                ctx.mark_non_differentiable(*no_grad_outs)
            return returned

        @staticmethod
        def backward(ctx: Any, *tangents: Any) -> tuple:
            tangents = [torch.zeros(()) if t is None else t for t in tangents]
            if "bw" not in bw_state:
                bw_state["bw"] = bw_compiler(bw_gm, list(ctx.saved) + list(tangents))
            grads = _call(bw_state["bw"], list(ctx.saved) + list(tangents))
            full: list = [None] * len(args)
            for i, g in zip(diff_index, grads):
                full[i] = g
            return tuple(full)

    def run(*call_args: Any) -> Any:
        returned = CompiledFunction.apply(*call_args)
        return returned[0] if single else returned

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
                          bw_compiler: Callable | None = None, **kwargs: Any) -> Callable:
    """What torch.compile backends call: compile a GraphModule for its example inputs."""
    if isinstance(mod, torch.nn.Module):
        return aot_module(mod, fw_compiler, bw_compiler, **kwargs)
    return aot_function(mod, fw_compiler, bw_compiler, **kwargs)
