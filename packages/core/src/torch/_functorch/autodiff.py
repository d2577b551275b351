"""``torch.func``'s autodiff transforms over the tape autograd: ``grad``, ``grad_and_value``,
``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``.

Each transform differentiates with respect to fresh leaves standing for its inputs (an input
that already requires grad, from an enclosing transform or the caller's own autograd, is
taken through an alias so that the enclosing gradient flows through). The graph of the
result is kept (``create_graph``) only when the function's output depends on tensors of an
enclosing level (found by walking the graph back from the output); otherwise results are
plain tensors, as PyTorch's transforms return them.

Plait has no forward-mode AD: ``jvp`` is the double-vjp (the vjp is linear in its cotangent,
so differentiating it with respect to the cotangent in direction ``tangents`` gives J @ t),
and ``jacfwd`` computes the same Jacobian as ``jacrev``, by reverse mode. Both agree with
PyTorch's forward mode to rounding.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch
from torch import autograd as _autograd
from torch._core import config as _config
from torch._core.grad_mode import enable_grad
from torch._core.tensor import Tensor
from torch.utils import _pytree

from .batched import BatchedTensor
from .vmap import vmap

__all__ = ["grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "linearize", "vjp"]


def _lift(x: Any) -> Any:
    """A leaf of this transform for tensor ``x`` (an alias in the graph when ``x`` already
    requires grad)."""
    if not isinstance(x, Tensor):
        return x
    if x.requires_grad:
        return x.view_as(x)
    if _physical_grad(x):  # a batched tensor whose physical tensor an outer level tracks
        return x.view_as(x).requires_grad_(True)
    return x.detach().requires_grad_(True)


def _physical_grad(x: Any) -> bool:
    """Whether the physical tensor under batched ``x`` (at any depth) requires grad."""
    while isinstance(x, BatchedTensor):
        x = x._bt_value
        if x.requires_grad:
            return True
    return False


def _depends_outside(outputs: list[Any], leaves: list[Any]) -> bool:
    """Whether the graph of ``outputs`` reaches a leaf other than ``leaves`` (a tensor of an
    enclosing level, whose gradient then needs this level's graph)."""
    if not _config.is_grad_enabled():
        return False
    own = {id(t) for t in leaves if isinstance(t, Tensor)}
    seen: set[int] = set()
    stack = [o.grad_fn for o in outputs if isinstance(o, Tensor) and o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node._is_accumulator:
            if id(node.variable) not in own:
                return True
            continue
        for nxt, _nr in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    # an input taken through an alias: the alias's own graph leads outside; or a batched
    # tensor whose physical tensor is tracked by an enclosing level
    return any(isinstance(t, Tensor) and (t.grad_fn is not None or _physical_grad(t))
               for t in leaves) or any(_physical_grad(o) for o in outputs)


def _check_argnums(argnums: Any, nargs: int, api: str) -> tuple[int, ...]:
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not nums or not all(isinstance(n, int) and not isinstance(n, bool) for n in nums):
        raise RuntimeError(f"{api}: argnums must be int or Tuple[int, ...], got: "
                           f"{type(argnums)}")
    out = []
    for n in nums:
        if not -nargs <= n < nargs:
            raise RuntimeError(f"{api}: Got argnums={argnums}, but only {nargs} positional "
                               "inputs")
        out.append(n % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{api}: argnums must be unique, got {argnums}")
    return tuple(out)


def _grads(outputs: list[Tensor], inputs: list[Any], cotangents: list[Any] | None,
           create: bool) -> list[Any]:
    """d outputs / d inputs (zeros where an input was not used)."""
    from torch._aten import factories as _fac

    tensors = [t for t in inputs if isinstance(t, Tensor)]
    found = _autograd.grad(outputs, tensors, cotangents, retain_graph=True, create_graph=create,
                           allow_unused=True) if outputs and tensors else ()
    it = iter(found)
    out = []
    for t in inputs:
        if not isinstance(t, Tensor):
            out.append(None)
            continue
        g = next(it)
        out.append(_fac.zeros_like(t) if g is None else g)
    return out


def _settle(x: Any, keep: bool) -> Any:
    """A result of a transform: detached unless an enclosing level needs its graph."""
    if keep or not isinstance(x, Tensor):
        return x
    return x.detach()


def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """``func``'s gradient with respect to the inputs at ``argnums`` and its value.

    :param func: returns a one-element tensor (or ``(output, aux)`` with ``has_aux``).
    :param argnums: which positional input(s) to differentiate (each may be a pytree of
        tensors); a tuple gives a tuple of gradients.
    :param has_aux: ``func`` returns ``(output, aux)``; aux is returned beside the value.
    :returns: a function returning ``(grad, value)`` or ``(grad, (value, aux))``.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _check_argnums(argnums, len(args), "grad_and_value(f)(*args)")
        with enable_grad():
            args = list(args)
            flat_per_arg = []
            for n in nums:
                leaves, spec = _pytree.tree_flatten(args[n])
                lifted = [_lift(x) for x in leaves]
                flat_per_arg.append((lifted, spec))
                args[n] = _pytree.tree_unflatten(lifted, spec)
            result = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should "
                                       "be a tuple: (output, aux) if has_aux is True")
                result, aux = result
            if not isinstance(result, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got type {type(result)}")
            if result.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {result.dim()} dims. Maybe "
                                   "you wanted to use the vjp or jacrev APIs instead?")
            every = [x for lifted, _ in flat_per_arg for x in lifted]
            keep = _depends_outside([result], every)
            flat = _grads([result], every, None, keep) if result.requires_grad else [
                _zeros(x) for x in every]
        grads, at = [], 0
        for lifted, spec in flat_per_arg:
            part = [_settle(g, keep) for g in flat[at: at + len(lifted)]]
            at += len(lifted)
            grads.append(_pytree.tree_unflatten(part, spec))
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        value = _settle(result, keep)
        if has_aux:
            aux = _pytree.tree_map(lambda a: _settle(a, keep), aux)
            return g, (value, aux)
        return g, value

    return wrapper


def _zeros(x: Any) -> Any:
    from torch._aten import factories as _fac

    return _fac.zeros_like(x) if isinstance(x, Tensor) else None


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of ``func`` (which returns a one-element tensor) with respect to the
    inputs at ``argnums``; with ``has_aux``, ``(grad, aux)``. See :func:`grad_and_value`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = grad_and_value(func, argnums, has_aux)(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``func(*primals)`` and a function mapping cotangents of the output (same structure) to
    the vector-Jacobian products with respect to each primal (a tuple).

    :returns: ``(output, vjp_fn)``, or ``(output, vjp_fn, aux)`` with ``has_aux``.
    """
    with enable_grad():
        leaves, spec = _pytree.tree_flatten(primals)
        lifted = [_lift(x) for x in leaves]
        result = func(*_pytree.tree_unflatten(lifted, spec))
        aux = None
        if has_aux:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            result, aux = result
        out_leaves, out_spec = _pytree.tree_flatten(result)
        for o in out_leaves:
            if not isinstance(o, Tensor):
                raise RuntimeError("vjp(f, *primals): Expected f(*primals) to return only "
                                   f"tensors, got unsupported type {type(o)}")
        keep = _depends_outside(out_leaves, lifted)

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        ct_leaves, ct_spec = _pytree.tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function. cotangents: "
                               f"{ct_spec}, primal output: {out_spec}")
        create = keep or any(isinstance(c, Tensor) and c.requires_grad for c in ct_leaves)
        with enable_grad():
            pairs = [(o, c) for o, c in zip(out_leaves, ct_leaves) if o.requires_grad]
            flat = _grads([o for o, _ in pairs], lifted, [c for _, c in pairs], create) \
                if pairs else [_zeros(x) for x in lifted]
        return _pytree.tree_unflatten([_settle(g, create) for g in flat], spec)

    output = _pytree.tree_unflatten([_settle(o, keep) for o in out_leaves], out_spec)
    if has_aux:
        return output, vjp_fn, _pytree.tree_map(lambda a: _settle(a, keep), aux)
    return output, vjp_fn


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple[Any, ...]:
    """``func(*primals)`` and its Jacobian-vector product with ``tangents`` (computed as the
    derivative of the vjp with respect to its cotangent; Plait has no forward-mode AD).

    :returns: ``(output, jvp_out)``, or ``(output, jvp_out, aux)`` with ``has_aux``.
    """
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    p_leaves, p_spec = _pytree.tree_flatten(primals)
    t_leaves, t_spec = _pytree.tree_flatten(tangents)
    if not isinstance(tangents, tuple) or p_spec != t_spec:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           "the same python structure. For example, if primals is a tuple of "
                           "3 tensors, tangents also must be. Got primals with structure "
                           f"{p_spec} and tangents with structure {t_spec}")
    for p, t in zip(p_leaves, t_leaves):
        if isinstance(p, Tensor) and tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to "
                               f"have the same shape, got {tuple(p.shape)} and "
                               f"{tuple(t.shape)}")
    from torch._aten import factories as _fac

    res = vjp(func, *primals, has_aux=has_aux)
    output, vjp_fn = res[0], res[1]
    out_leaves, out_spec = _pytree.tree_flatten(output)
    with enable_grad():
        # u: a cotangent to differentiate the (linear) vjp with respect to
        us = [_fac.zeros_like(o).requires_grad_(True) for o in out_leaves]
        vjps = _pytree.tree_leaves(vjp_fn(_pytree.tree_unflatten(us, out_spec)))
        pairs = [(v, t) for v, t in zip(vjps, t_leaves) if isinstance(v, Tensor)
                 and v.requires_grad]
        keep = _depends_outside([v for v, _ in pairs], us) or any(
            isinstance(t, Tensor) and t.requires_grad for t in t_leaves)
        flat = _grads([v for v, _ in pairs], us, [t for _, t in pairs], keep) if pairs else \
            [_zeros(u) for u in us]
    jvp_out = _pytree.tree_unflatten([_settle(g, keep) for g in flat], out_spec)
    if has_aux:
        return output, jvp_out, res[2]
    return output, jvp_out


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``func(*primals)`` and a function of tangents (one per primal) giving the
    Jacobian-vector product at ``primals`` (each call a :func:`jvp`)."""
    output = func(*primals)

    def jvp_fn(*tangents: Any) -> Any:
        return jvp(func, primals, tangents)[1]

    return _pytree.tree_map(lambda o: _settle(o, False), output), jvp_fn


def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *,
           has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``func`` with respect to the inputs at ``argnums``, by reverse mode:
    one vjp per output element, batched with ``vmap``. Each output's Jacobian has shape
    ``output.shape + input.shape``; a tuple ``argnums`` gives a tuple per output.

    :param chunk_size: how many vjps ``vmap`` runs at a time (None: all).
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from torch._aten import shape as _shape

        nums = _check_argnums(argnums, len(args), "jacrev(f)(*args)")

        def partial(*diff: Any) -> Any:
            full = list(args)
            for n, d in zip(nums, diff):
                full[n] = d
            return func(*full, **kwargs)

        res = vjp(partial, *(args[n] for n in nums), has_aux=has_aux)
        output, vjp_fn = res[0], res[1]
        out_leaves, out_spec = _pytree.tree_flatten(output)
        sizes = [o.numel() for o in out_leaves]
        total = sum(sizes)
        o0 = out_leaves[0]
        basis = torch.eye(total, dtype=o0.dtype, device=o0.device)  # (total, total)
        cts, at = [], 0
        for o, n in zip(out_leaves, sizes):
            cts.append(basis[:, at: at + n].reshape((total,) + tuple(o.shape)))
            at += n
        rows = vmap(vjp_fn, chunk_size=chunk_size)(_pytree.tree_unflatten(cts, out_spec))
        # rows: per diff input (pytree), (total, *input.shape)
        per_input = []
        for r in rows:
            leaves, spec = _pytree.tree_flatten(r)
            per_input.append((leaves, spec))
        jac_per_output = []
        at = 0
        for o, n in zip(out_leaves, sizes):
            per = []
            for leaves, spec in per_input:
                blocks = [_shape.narrow(x, 0, at, n).reshape(tuple(o.shape) + tuple(x.shape[1:]))
                          for x in leaves]
                per.append(_pytree.tree_unflatten(blocks, spec))
            at += n
            jac_per_output.append(per[0] if isinstance(argnums, int) else tuple(per))
        jac = _pytree.tree_unflatten(jac_per_output, out_spec)
        return (jac, res[2]) if has_aux else jac

    return wrapper


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
           has_aux: bool = False, *, randomness: str = "error") -> Callable[..., Any]:
    """The Jacobian of ``func`` with respect to the inputs at ``argnums`` (PyTorch computes it
    by forward mode; Plait, without forward-mode AD, by reverse mode: the same values)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """The Hessian of ``func`` with respect to the inputs at ``argnums``: the Jacobian of its
    gradient (``jacfwd(jacrev(func))``)."""
    return jacfwd(jacrev(func, argnums), argnums)
