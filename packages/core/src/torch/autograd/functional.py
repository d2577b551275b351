"""``torch.autograd.functional``: Jacobians, Hessians and their products with vectors.

Everything is reverse mode on top of :func:`torch.autograd.grad`, except ``jacobian``
(and ``hessian``'s outer Jacobian) with ``strategy="forward-mode"``, which uses
:mod:`torch.autograd.forward_ad`:

- ``vjp``: one backward with ``v`` as the output gradient;
- ``jvp``: the double-backward trick. ``g(u) = u^T J`` is linear in ``u``, so differentiating
  ``g`` with respect to a dummy ``u`` (zeros that require grad) in the direction ``v`` gives
  ``J v``;
- ``jacobian``: one backward per output element (``vectorize`` is accepted and ignored: this
  layer sits below ``torch.vmap``; ``torch.func.jacrev`` batches the vjps); ``hessian`` is
  the Jacobian of the gradient;
- ``vhp``: backward of the gradient, ``hvp``: the double-backward trick on the gradient.

Inputs and outputs are a Tensor or a tuple of Tensors, and results come back in the same
structure, as in PyTorch. Results are detached unless ``create_graph=True``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# --------------------------------------------------------------------------------------------
# argument plumbing


def _as_tuple(inp: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """Return whether ``inp`` was a tuple, and ``inp`` as a tuple of Tensors."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, torch.Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the {where} has type {type(el)}."
            )
    return is_tuple, items


def _tuple_postprocess(res: Any, to_unpack: bool | tuple[bool, bool]) -> Any:
    """Undo :func:`_as_tuple` on a result (two levels for a Jacobian or Hessian)."""
    if isinstance(to_unpack, tuple):
        outer, inner = to_unpack
        if not inner:
            res = tuple(el[0] for el in res)
        if not outer:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New Tensor objects for the inputs, so grads are taken w.r.t. exactly what we pass.

    With ``create_graph`` an input that requires grad stays connected to its history (a
    ``view_as``), so the results can be differentiated further with respect to it.
    """
    from . import forward_ad

    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        elif forward_ad.unpack_dual(inp).tangent is not None:
            # a dual input (forward-over-reverse Hessian) keeps its tangent: detach() would
            # drop it, and the tangent must flow through the gradient computed from it
            res.append(inp.view_as(inp).requires_grad_(need_graph))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(results: tuple, create_graph: bool) -> tuple:
    if results and isinstance(results[0], torch.Tensor):
        return results if create_graph else tuple(r.detach() for r in results)
    return tuple(_grad_postprocess(r, create_graph) for r in results)


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prepend}v has invalid size: should be {el_other.size()} but got "
                f"{el_v.size()}."
            )


_INDEPENDENT = {
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
    "independent of the input. This is not allowed in strict mode. You should ensure that "
    "your function is thrice differentiable and that the hessian depends on the inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
    "function with respect to input {i} is independent of the input. This is not allowed in "
    "strict mode. You should ensure that your function is twice differentiable and that the "
    "jacobian depends on the inputs (this would be violated by a linear function for "
    "example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of "
    "the user-provided function. This is not allowed in strict mode.",
    "outputs": "Output {i} of the user-provided function does not require gradients. The "
    "outputs must be computed in a differentiable manner from the input when running in "
    "strict mode.",
}


def _check_requires_grad(tensors: tuple, kind: str, strict: bool) -> None:
    """In strict mode, every tensor of ``kind`` must depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode."
            )
        if not t.requires_grad:
            raise RuntimeError(_INDEPENDENT[kind].format(i=i))


def _autograd_grad(
    outputs: tuple,
    inputs: tuple,
    grad_outputs: tuple | None = None,
    create_graph: bool = False,
    retain_graph: bool | None = None,
) -> tuple:
    """``torch.autograd.grad`` that skips outputs which are ``None`` or need no grad."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept_outputs, kept_grads = [], []
    for out, g in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            kept_outputs.append(out)
            kept_grads.append(g)
    if not kept_outputs:
        return (None,) * len(inputs)
    return torch.autograd.grad(
        kept_outputs,
        inputs,
        kept_grads,
        allow_unused=True,
        create_graph=create_graph,
        retain_graph=retain_graph,
    )


_MISSING = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode gradients. "
    "This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
    "{i} in the grad_jacobian. This is not allowed in strict mode as it prevents from using "
    "the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool,
                   stage: str) -> tuple:
    """Replace missing gradients by zeros (or, in strict mode, raise)."""
    res = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING[stage].format(i=i))
            g = torch.zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _v_or_default(v: Any, against: tuple, is_tuple: bool, create_graph: bool, fn_name: str,
                  default_message: str) -> tuple | None:
    if v is None:
        if len(against) != 1 or against[0].nelement() != 1:
            raise RuntimeError(default_message)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
    _validate_v(v, against, is_tuple)
    return v


_V_NONE_INPUT = (
    "The vector v can only be None if the input to the user-provided function is a single "
    "Tensor with a single element."
)
_V_NONE_OUTPUT = (
    "The vector v can only be None if the user-provided function returns a single Tensor "
    "with a single element."
)


# --------------------------------------------------------------------------------------------
# public API


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    ``v`` has the shape of ``func``'s output and may be omitted when that output has one
    element.
    """
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "vjp"
        )
        _check_requires_grad(outputs, "outputs", strict)
        v = _v_or_default(v, outputs, is_outputs_tuple, create_graph, "vjp", _V_NONE_OUTPUT)

    with torch.set_grad_enabled(create_graph or torch.is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")

    return _finish(outputs, result, create_graph, is_outputs_tuple, is_inputs_tuple)


def _finish(outputs: Any, result: Any, create_graph: bool, is_outputs_tuple: bool,
            is_inputs_tuple: bool) -> tuple[Any, Any]:
    """The ``(outputs, result)`` pair vjp/jvp/vhp/hvp return, detached unless
    ``create_graph`` and unwrapped from tuples the caller did not pass."""
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product at ``inputs``.

    Computed with the double-backward trick (two reverse passes); ``v`` has the shape of the
    inputs and may be omitted when the input is one element.
    """
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _v_or_default(v, inputs, is_inputs_tuple, create_graph, "jvp", _V_NONE_INPUT)

        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jvp"
        )
        _check_requires_grad(outputs, "outputs", strict)
        # backward is linear in its output gradient, so any finite value works here; zeros
        # keep nan/inf out of the second pass
        dummy = tuple(torch.zeros_like(out).requires_grad_() for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, dummy, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)

    with torch.set_grad_enabled(create_graph or torch.is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, dummy, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")

    # J v has the outputs' structure
    return _finish(outputs, result, create_graph, is_outputs_tuple, is_outputs_tuple)


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``.

    For one input and one output, a Tensor of shape ``output.shape + input.shape``; for
    tuples, ``result[i][j]`` is the Jacobian of output ``i`` with respect to input ``j`` (one
    level dropped when either side is not a tuple). With ``strategy="reverse-mode"`` the rows
    are computed one backward at a time (``vectorize`` changes nothing); as in PyTorch,
    ``strategy="forward-mode"`` needs ``vectorize=True`` and then takes one forward-mode pass
    per input element.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode" and create_graph:
        raise NotImplementedError(
            "torch.autograd.functional.jacobian: `create_graph=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either '
            'set `create_graph=False` or `strategy="reverse-mode"`.'
        )
    if strict and vectorize:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
            "supported together. Please either set `strict=False` or `vectorize=False`."
        )
    if strategy == "forward-mode":
        if not vectorize:
            # PyTorch's wording (its two string pieces join without a space)
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`."
            )
        return _jacobian_forward_mode(func, inputs)

    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jacobian"
        )
        _check_requires_grad(outputs, "outputs", strict)

        result = []
        for i, out in enumerate(outputs):
            rows: list[list] = [[] for _ in inputs]  # rows[input] = one grad per out element
            n = out.nelement()
            for j in range(n):
                onehot = torch.zeros(n, dtype=out.dtype, device=out.device)
                onehot[j] = 1
                grads = _autograd_grad(
                    (out,), inputs, (onehot.reshape(out.shape),),
                    create_graph=create_graph, retain_graph=True,
                )
                for k, (g, inp) in enumerate(zip(grads, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode."
                            )
                        g = torch.zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(
                            "The jacobian of the user-provided function is independent of "
                            f"input {i}. This is not allowed in strict mode when "
                            "create_graph=True."
                        )
                    rows[k].append(g)
            per_input = []
            for k, inp in enumerate(inputs):
                shape = tuple(out.shape) + tuple(inp.shape)
                if rows[k]:
                    per_input.append(torch.stack(rows[k], 0).reshape(shape))
                else:
                    per_input.append(torch.zeros(shape, dtype=inp.dtype, device=inp.device))
            result.append(tuple(per_input))

        result = _grad_postprocess(tuple(result), create_graph)
        return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_forward_mode(func: Callable, inputs: Any) -> Any:
    """The Jacobian by forward-mode AD: one forward pass per input element, its tangent a
    one-hot direction, each pass giving one column of every output's Jacobian."""
    from . import forward_ad

    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    inputs = tuple(inp.detach() for inp in inputs)
    columns: list[list[list]] = []  # columns[input][element] = tangents of every output
    outputs: tuple = ()
    is_outputs_tuple = False
    for k, inp in enumerate(inputs):
        per_element = []
        n = inp.nelement()
        for e in range(n):
            direction = torch.zeros(n, dtype=inp.dtype, device=inp.device)
            direction[e] = 1
            with forward_ad.dual_level():
                duals = tuple(forward_ad.make_dual(x, direction.reshape(x.shape)) if j == k
                              else x for j, x in enumerate(inputs))
                raw = func(*duals)
                is_outputs_tuple, raw = _as_tuple(
                    raw, "outputs of the user-provided function", "jacobian")
                unpacked = [forward_ad.unpack_dual(out) for out in raw]
            outputs = tuple(u.primal for u in unpacked)
            per_element.append([
                torch.zeros_like(u.primal) if u.tangent is None else u.tangent
                for u in unpacked])
        columns.append(per_element)
    result = []
    for i, out in enumerate(outputs):
        per_input = []
        for k, inp in enumerate(inputs):
            shape = tuple(out.shape) + tuple(inp.shape)
            if columns[k]:
                stacked = torch.stack([col[i].reshape(-1) for col in columns[k]], 1)
                # the tangents of a forward-over-reverse pass carry the inner graph
                per_input.append(stacked.reshape(shape).detach())
            else:
                per_input.append(torch.zeros(shape, dtype=out.dtype, device=out.device))
        result.append(tuple(per_input))
    return _tuple_postprocess(tuple(result), (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of the scalar function ``func`` at ``inputs``.

    For one input, a Tensor of shape ``input.shape + input.shape``; for a tuple of inputs,
    ``result[i][j]`` is the block for inputs ``i`` and ``j``.
    """
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode".'
        )
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def scalar_function(*inp: torch.Tensor) -> torch.Tensor:
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, torch.Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a "
                "single element"
            )
        return out.squeeze()

    def jac_func(*inp: torch.Tensor) -> tuple:
        jac = jacobian(scalar_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_output_and_gradient(func: Callable, inputs: Any, v: Any, create_graph: bool,
                                strict: bool, fn_name: str) -> tuple:
    """Shared start of ``vhp``/``hvp``: outputs, gradient (with graph), inputs and ``v``."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _v_or_default(v, inputs, is_inputs_tuple, create_graph, fn_name, _V_NONE_INPUT)
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(
        outputs, "outputs of the user-provided function", fn_name
    )
    _check_requires_grad(outputs, "outputs", strict)
    if is_outputs_tuple or not isinstance(outputs[0], torch.Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, is_outputs_tuple, inputs, outputs, jac, v


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)``: vector-Hessian product of a scalar function."""
    with torch.enable_grad():
        is_inputs_tuple, is_outputs_tuple, inputs, outputs, jac, v = (
            _scalar_output_and_gradient(func, inputs, v, create_graph, strict, "vhp")
        )

    with torch.set_grad_enabled(create_graph or torch.is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")

    return _finish(outputs, result, create_graph, is_outputs_tuple, is_inputs_tuple)


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)``: Hessian-vector product of a scalar function.

    Uses the double-backward trick on the gradient; for twice-differentiable functions
    ``H`` is symmetric and this equals :func:`vhp`, which is cheaper.
    """
    with torch.enable_grad():
        is_inputs_tuple, is_outputs_tuple, inputs, outputs, jac, v = (
            _scalar_output_and_gradient(func, inputs, v, create_graph, strict, "hvp")
        )
        dummy = tuple(torch.zeros_like(inp).requires_grad_() for inp in inputs)
        double_back = _autograd_grad(jac, inputs, dummy, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)

    with torch.set_grad_enabled(create_graph or torch.is_grad_enabled()):
        grad_res = _autograd_grad(double_back, dummy, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")

    return _finish(outputs, result, create_graph, is_outputs_tuple, is_inputs_tuple)
