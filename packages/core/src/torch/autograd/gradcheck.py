"""``gradcheck`` and ``gradgradcheck``: compare analytical gradients with finite differences.

The analytical Jacobian of each differentiable output is built one row at a time with
:func:`torch.autograd.grad` (one backward per output element, run twice to catch nondeterministic
backward functions), the numerical one by central differences on clones of the inputs: input
element ``k`` is moved by ``-eps`` and ``+eps`` and ``(f(x + eps) - f(x - eps)) / (2 eps)`` is
the Jacobian row of that element. Both are laid out as PyTorch prints them, one row per input
element and one column per output element.

``fast_mode=True`` compares ``v^T J u`` for random unit vectors ``u`` (per input) and ``v`` (per
output) instead of whole Jacobians (PyTorch's fast gradcheck); on a mismatch it recomputes the
two Jacobians of the failing pair in slow mode for the error message.

Differences from PyTorch, written down: the inputs are perturbed on clones, not in place, so a
function that reads an input through a closure instead of its argument sees the unperturbed
value; complex inputs and outputs, forward-mode AD and batched (vmap) gradients are not
supported yet and raise ``NotImplementedError``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


_FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
"""


# --------------------------------------------------------------------------------------------
# small helpers


def _as_tuple(x: Any) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_tensor(x: Any) -> bool:
    return isinstance(x, torch.Tensor)


def _is_float_or_complex(x: Any) -> bool:
    return _is_tensor(x) and (x.is_floating_point() or x.is_complex())


def _differentiable_outputs(out: Any) -> tuple:
    return tuple(o for o in _as_tuple(out) if _is_tensor(o) and o.requires_grad)


def _diff_input_indices(inputs: tuple) -> list[int]:
    return [i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]


def _allclose(a: torch.Tensor, b: torch.Tensor, rtol: float, atol: float) -> bool:
    dtype = torch.promote_types(a.dtype, b.dtype)
    return torch.allclose(a.to(dtype), b.to(dtype), rtol, atol)


def _max_abs(t: torch.Tensor) -> float:
    return float(t.abs().max()) if t.numel() else 0.0


def _check_inputs(inputs: tuple) -> None:
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if not (_is_tensor(inp) and inp.requires_grad):
            continue
        if inp.is_complex():
            raise NotImplementedError(
                f"gradcheck: input #{idx} is complex; Plait's gradcheck supports real "
                "inputs only for now."
            )
        if inp.dtype != torch.float64:
            warnings.warn(
                f"Input #{idx} requires gradient and is not a double precision floating "
                "point or complex. This check will likely fail if all the inputs are not of "
                "double precision floating point or complex. ",
                stacklevel=3,
            )
        if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.size())):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical "
                "gradients correctly. You should call .contiguous on the input before "
                "passing it to gradcheck."
            )
        any_requires_grad = True
    if not any_requires_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of "
            "them have requires_grad=True."
        )


def _check_outputs(outputs: tuple) -> None:
    for o in outputs:
        if o.is_complex():
            raise NotImplementedError(
                "gradcheck: complex outputs are not supported yet; check the real and "
                "imaginary parts (torch.real / torch.imag) as separate outputs."
            )


def _jacobian_message(analytical: Any, numerical: Any, out_idx: int, in_idx: int) -> str:
    return (
        f"Jacobian mismatch for output {out_idx:d} with respect to input {in_idx:d},\n"
        f"numerical:{numerical}\nanalytical:{analytical}\n"
    )


# --------------------------------------------------------------------------------------------
# numerical side


def _perturbed(inputs: tuple, idx: int, delta: torch.Tensor) -> tuple:
    """``inputs`` with ``inputs[idx]`` replaced by a fresh leaf holding ``inputs[idx] + delta``."""
    x = inputs[idx]
    with torch.no_grad():
        moved = (x.detach() + delta.reshape(x.shape)).to(x.dtype)
    moved.requires_grad_(x.requires_grad)
    new = list(inputs)
    new[idx] = moved
    return tuple(new)


def _float_outputs(func: Callable, inputs: tuple) -> tuple:
    """Evaluate ``func`` and return every output (detached; non-float ones as ``None``)."""
    outs = _as_tuple(func(*inputs))
    return tuple(o.detach() if _is_float_or_complex(o) else None for o in outs)


def _numerical_directional(
    func: Callable, inputs: tuple, idx: int, direction: torch.Tensor, eps: float
) -> list:
    """Central difference of every output of ``func`` along ``direction`` of input ``idx``."""
    step = direction * eps
    outs_minus = _float_outputs(func, _perturbed(inputs, idx, -step))
    outs_plus = _float_outputs(func, _perturbed(inputs, idx, step))
    return [
        None if a is None else ((b - a) / (2 * eps)).reshape(-1)
        for a, b in zip(outs_minus, outs_plus)
    ]


def _numerical_jacobians(func: Callable, inputs: tuple, func_out: tuple, eps: float) -> list:
    """``J[out][in]`` of shape ``(in.numel(), out.numel())`` for every output and diff input.

    Non-floating outputs get ``None``.
    """
    in_indices = _diff_input_indices(inputs)
    per_input = []
    for idx in in_indices:
        x = inputs[idx]
        n = x.numel()
        rows: list[list] = [[] for _ in func_out]
        for k in range(n):
            basis = torch.zeros(n, dtype=x.dtype, device=x.device)
            basis[k] = 1
            for o_i, d in enumerate(_numerical_directional(func, inputs, idx, basis, eps)):
                rows[o_i].append(d)
        jac = []
        for o, o_rows in zip(func_out, rows):
            if not _is_float_or_complex(o):
                jac.append(None)
            elif o_rows:
                jac.append(torch.stack(o_rows))
            else:
                jac.append(torch.zeros(0, o.numel(), dtype=o.dtype, device=o.device))
        per_input.append(jac)
    # transpose to [output][input]
    return [list(col) for col in zip(*per_input)] if per_input else [[] for _ in func_out]


# --------------------------------------------------------------------------------------------
# analytical side


def _vjp(output: torch.Tensor, diff_inputs: list, grad_output: torch.Tensor) -> tuple:
    return torch.autograd.grad(
        output, diff_inputs, grad_output, retain_graph=True, allow_unused=True
    )


def _stack_columns(cols: list, diff_inputs: list, out_numel: int) -> tuple[list, bool, bool]:
    """Turn per-output-element gradients into Jacobians; also report dtype and size checks."""
    types_ok = sizes_ok = True
    jacobians = []
    for i, x in enumerate(diff_inputs):
        columns = []
        for grads in cols:
            g = grads[i]
            if g is None:
                columns.append(torch.zeros(x.numel(), dtype=x.dtype, device=x.device))
                continue
            if g.dtype != x.dtype:
                types_ok = False
            if g.shape != x.shape:
                sizes_ok = False
                g = g.reshape(-1)[: x.numel()] if g.numel() >= x.numel() else None
                if g is None:
                    columns.append(torch.zeros(x.numel(), dtype=x.dtype, device=x.device))
                    continue
            columns.append(g.detach().reshape(-1))
        if columns:
            jacobians.append(torch.stack(columns, 1))
        else:
            jacobians.append(torch.zeros(x.numel(), out_numel, dtype=x.dtype, device=x.device))
    return jacobians, types_ok, sizes_ok


def _analytical_jacobians(
    output: torch.Tensor,
    diff_inputs: list,
    nondet_tol: float,
    check_grad_dtypes: bool,
    v: torch.Tensor | None = None,
) -> list:
    """Rows ``e_j^T J`` (or one ``v^T J`` when ``v`` is given) for every diff input.

    Each is computed twice; differing results beyond ``nondet_tol`` mean a nondeterministic
    backward.
    """

    def columns() -> list:
        if v is not None:
            return [_vjp(output, diff_inputs, v.reshape(output.shape))]
        cols = []
        for j in range(output.numel()):
            grad_out = torch.zeros(output.numel(), dtype=output.dtype, device=output.device)
            grad_out[j] = 1
            cols.append(_vjp(output, diff_inputs, grad_out.reshape(output.shape)))
        return cols

    out_numel = 1 if v is not None else output.numel()
    jac1, types_ok, sizes_ok = _stack_columns(columns(), diff_inputs, out_numel)
    jac2, _, _ = _stack_columns(columns(), diff_inputs, out_numel)
    reentrant = all(
        a.numel() == 0 or _max_abs(a - b) <= nondet_tol for a, b in zip(jac1, jac2)
    )
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and "
            "grad_output multiple times gives different values, although analytical "
            "gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {nondet_tol}."
        )
    return jac1


# --------------------------------------------------------------------------------------------
# the checks


def _check_no_differentiable_outputs(
    func: Callable, inputs: tuple, func_out: tuple, eps: float
) -> None:
    for per_output in _numerical_jacobians(func, inputs, func_out, eps):
        for jac in per_output:
            if jac is not None and bool((jac != 0).any()):
                raise GradcheckError("Numerical gradient for function expected to be zero")


def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol) -> None:
    if not outputs:
        _check_no_differentiable_outputs(func, inputs, func_out, eps)
        return
    numerical = _numerical_jacobians(func, inputs, func_out, eps)
    # keep the outputs that require grad, in order (the analytical side's numbering)
    numerical = [
        n for o, n in zip(func_out, numerical) if _is_tensor(o) and o.requires_grad
    ]
    diff_inputs = [inputs[i] for i in _diff_input_indices(inputs)]
    for out_idx, o in enumerate(outputs):
        analytical = _analytical_jacobians(o, diff_inputs, nondet_tol, check_grad_dtypes)
        for in_idx, (a, n) in enumerate(zip(analytical, numerical[out_idx])):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_jacobian_message(a, n, out_idx, in_idx))


def _random_unit_vector(like: torch.Tensor, generator: Any) -> torch.Tensor:
    vec = torch.rand(like.numel(), generator=generator, dtype=torch.float64)
    vec = vec.to(dtype=like.dtype, device=like.device)
    return vec / vec.norm()


def _slow_mode_report(func, inputs, func_out, in_idx, out_idx, rtol, atol, eps) -> str:
    numerical = _numerical_jacobians(func, inputs, func_out, eps)
    numerical = [
        n for o, n in zip(func_out, numerical) if _is_tensor(o) and o.requires_grad
    ][out_idx][in_idx]
    diff_inputs = [inputs[i] for i in _diff_input_indices(inputs)]
    outputs = _differentiable_outputs(func_out)
    analytical = _analytical_jacobians(outputs[out_idx], diff_inputs, float("inf"), False)[in_idx]
    max_diff = _max_abs(numerical - analytical.to(numerical.dtype))
    msg = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more "
        "background \nabout fast mode. Below, we recompute numerical and analytical jacobians "
        "in slow mode:\n\n"
        f"Numerical:\n {numerical}\n"
        f"Analytical:\n{analytical}\n\n"
        f"The max per-element difference (slow mode) is: {max_diff}.\n"
    )
    if _allclose(analytical, numerical, rtol, atol):
        msg += _FAST_FAIL_SLOW_OK_MSG
    return msg


def _fast_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol) -> None:
    in_indices = _diff_input_indices(inputs)
    generator = torch.Generator()  # our own, so the caller's random stream is untouched
    generator.manual_seed(0)
    all_u = [_random_unit_vector(inputs[i], generator) for i in in_indices]
    all_v = [_random_unit_vector(o, generator) for o in outputs]

    # numerical v^T (J u): one central difference per input
    float_outs = [o for o in func_out if _is_float_or_complex(o)]
    numerical = []  # [input][output]
    for idx, u in zip(in_indices, all_u):
        ju = [d for d in _numerical_directional(func, inputs, idx, u, eps) if d is not None]
        if not outputs:
            for d in ju:
                if d.numel() and _max_abs(d) > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
            continue
        ju = [d for d, o in zip(ju, float_outs) if o.requires_grad]
        numerical.append([(v * d).sum() for v, d in zip(all_v, ju)])
    if not outputs:
        return

    # analytical (v^T J) u: one backward per output
    diff_inputs = [inputs[i] for i in in_indices]
    analytical = []  # [output][input]
    for o, v in zip(outputs, all_v):
        vj = _analytical_jacobians(o, diff_inputs, nondet_tol, check_grad_dtypes, v=v)
        analytical.append([(row.reshape(-1) * u).sum() for row, u in zip(vj, all_u)])

    for in_idx, per_output in enumerate(numerical):
        for out_idx, n in enumerate(per_output):
            a = analytical[out_idx][in_idx]
            # |v^T (A - N) u| <= atol * sum(u) * sum(v) bounds the elementwise atol
            scaled_atol = atol * float(all_u[in_idx].sum()) * float(all_v[out_idx].sum())
            if not _allclose(a, n, rtol, scaled_atol):
                report = _slow_mode_report(
                    func, inputs, func_out, in_idx, out_idx, rtol, atol, eps
                )
                raise GradcheckError(
                    _jacobian_message(float(a), float(n), out_idx, in_idx) + report
                )


def _test_backward_mul_by_grad_output(outputs: tuple, inputs: tuple, masked: bool) -> None:
    diff_inputs = [inputs[i] for i in _diff_input_indices(inputs)]
    grads = torch.autograd.grad(
        outputs, diff_inputs, [torch.zeros_like(o) for o in outputs], allow_unused=True
    )
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if masked:
            if not torch.allclose(gi, torch.zeros_like(gi)):
                raise GradcheckError("backward not multiplied by grad_output")
        elif not bool((gi == 0).all()):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.size() != di.size():
            raise GradcheckError("grad is incorrect size")


def _test_undefined_backward_mode(func: Callable, inputs: tuple) -> None:
    """Backward must cope with outputs that receive no gradient at all.

    PyTorch passes undefined output gradients; here an output that gets no gradient is left
    out of the ``grad`` call, and the engine hands its node zeros (or nothing).
    """
    diff_inputs = [inputs[i] for i in _diff_input_indices(inputs)]

    def warn_bc_breaking() -> None:
        warnings.warn(
            "Backwards compatibility: New undefined gradient support checking feature is "
            "enabled by default, but it may break existing callers of this function. If this "
            'is true for you, you can call this function with "check_undefined_grad=False" '
            "to disable the feature",
            stacklevel=4,
        )

    def check(outputs: tuple, undefined: set[int]) -> None:
        kept = [o for i, o in enumerate(outputs) if i not in undefined]
        if not kept:
            # every output undefined: no graph to run; an all-zero gradient is the contract
            kept = list(outputs)
        grads_output = [torch.zeros_like(o) for o in kept]
        try:
            grads = torch.autograd.grad(kept, diff_inputs, grads_output, allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look "
                'at "Notes about undefined output gradients" in '
                '"tools/autograd/derivatives.yaml"'
            ) from e
        for gi in grads:
            if gi is not None and not bool((gi == 0).all()):
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads "
                    'are undefined or zero. Please look at "Notes about undefined output '
                    'gradients" in "tools/autograd/derivatives.yaml"'
                )

    outputs = _differentiable_outputs(func(*inputs))
    check(outputs, set(range(len(outputs))))
    if len(outputs) > 1:
        for undefined in range(len(outputs)):
            check(_differentiable_outputs(func(*inputs)), {undefined})


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                      check_grad_dtypes, check_batched_grad, check_batched_forward_grad,
                      check_forward_ad, check_backward_ad, fast_mode, masked) -> bool:
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    if check_forward_ad or check_batched_forward_grad:
        raise NotImplementedError(
            "gradcheck: forward-mode AD is not implemented in Plait yet; pass "
            "check_forward_ad=False and check_batched_forward_grad=False."
        )
    if check_batched_grad:
        raise NotImplementedError(
            "gradcheck: check_batched_grad=True is not supported (the checks run below "
            "torch.vmap); pass check_batched_grad=False."
        )

    func_out = _as_tuple(func(*tupled_inputs))
    outputs = _differentiable_outputs(func_out)
    _check_outputs(outputs)
    if not check_backward_ad:
        return True

    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    check(func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes,
          nondet_tol)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, tupled_inputs, bool(masked))
        if check_undefined_grad:
            _test_undefined_backward_mode(func, tupled_inputs)
    return True


# --------------------------------------------------------------------------------------------
# public API


def gradcheck(
    func: Callable[..., torch.Tensor | Sequence[torch.Tensor]],
    inputs: torch.Tensor | Sequence[torch.Tensor],
    *,
    eps: float = 1e-06,
    atol: float = 1e-05,
    rtol: float = 0.001,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    Every input that requires grad is perturbed by ``eps`` element by element; the numerical
    Jacobian must match the one backward produces within ``atol + rtol * |numerical|``. Use
    float64 inputs. Also checks that backward is linear in the output gradient (zero in, zero
    out), returns gradients of the inputs' dtype and size, and (``check_undefined_grad``)
    copes with outputs that receive no gradient.

    :returns: ``True``; on a failed check raises :class:`GradcheckError`, or returns ``False``
        when ``raise_exception=False``.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True"
        )
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True"
        )
    args = (func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
            check_batched_grad, check_batched_forward_grad, check_forward_ad, check_backward_ad,
            fast_mode, masked)
    if not raise_exception:
        try:
            return _gradcheck_helper(*args)
        except GradcheckError:
            return False
    return _gradcheck_helper(*args)


def gradgradcheck(
    func: Callable[..., torch.Tensor | Sequence[torch.Tensor]],
    inputs: torch.Tensor | Sequence[torch.Tensor],
    grad_outputs: torch.Tensor | Sequence[torch.Tensor | None] | None = None,
    *,
    eps: float = 1e-06,
    atol: float = 1e-05,
    rtol: float = 0.001,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: :func:`gradcheck` of the function ``(inputs, grad_outputs) ->
    grad(func(inputs), inputs, grad_outputs, create_graph=True)``.

    Without ``grad_outputs``, random ones in ``[-1, 1)`` that require grad are drawn, so the
    check also covers the backward's dependence on the output gradient.
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True"
        )
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True"
        )
    tupled_inputs = _as_tuple(inputs)

    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(
            torch.testing.make_tensor(
                o.shape,
                dtype=o.dtype if o.is_floating_point() or o.is_complex() else torch.float64,
                device=o.device,
                low=-1,
                high=1,
                requires_grad=True,
                noncontiguous=gen_non_contig_grad_outputs,
            )
            for o in outputs
        )
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)

    num_outputs = len(tupled_grad_outputs)
    diff_input_indices = {
        i for i, x in enumerate(tupled_inputs) if _is_tensor(x) and x.requires_grad
    }
    diff_grad_output_indices = {
        i for i, g in enumerate(tupled_grad_outputs) if _is_tensor(g) and g.requires_grad
    }

    def new_func(*args: Any) -> tuple:
        input_args = tuple(
            x.requires_grad_() if i in diff_input_indices else x
            for i, x in enumerate(args[:-num_outputs] if num_outputs else args)
        )
        outputs = _differentiable_outputs(func(*input_args))
        grad_outs = tuple(
            g.requires_grad_() if i in diff_grad_output_indices else g
            for i, g in enumerate(args[-num_outputs:] if num_outputs else ())
        )
        diff_inputs = tuple(x for i, x in enumerate(input_args) if i in diff_input_indices)
        grad_inputs = torch.autograd.grad(
            outputs, diff_inputs, grad_outs, create_graph=True, allow_unused=True
        )
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(
        new_func,
        tupled_inputs + tupled_grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        fast_mode=fast_mode,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        masked=masked,
    )
