"""Batch and group normalisation as PyTorch's ``aten::`` operators: ``native_batch_norm`` ->
(output, save_mean, save_invstd) with ``native_batch_norm_backward``, and
``native_group_norm`` -> (output, mean, rstd) with ``native_group_norm_backward``.

``F.batch_norm`` and ``F.instance_norm`` (a batch norm of the (1, N*C, *) view) reach
``native_batch_norm``, ``F.group_norm`` reaches ``native_group_norm``, so dispatch modes, flop
counters and exporters see the operator PyTorch shows. The kernels are composites over
reductions and elementwise ops (every backend and the meta device serve them); float16 and
bfloat16 compute in float32 and round once, as PyTorch's CPU kernels do. The saved statistics
are not differentiable outputs, and the first derivatives call the backward operators
(``torch.autograd._formulas.nn_norm``), whose own derivatives are formulas too.

Batch norm in training updates ``running_mean`` / ``running_var`` in place (unbiased variance,
``running = (1 - momentum) * running + momentum * batch``); in evaluation it normalises with
them and its saved statistics are empty, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._core import dispatch as _dispatch, dtype as _dtype
from .._core.grad_mode import no_grad
from .._core.tensor import Tensor
from . import elementwise as _ew, factories as _fac
from .convert import to_dtype

__all__: list[str] = []  # F.batch_norm / F.group_norm come from plait-nn

_HALF = (_dtype.float16, _dtype.bfloat16)


def compute_dtype(dt: _dtype.dtype) -> _dtype.dtype:
    """The dtype the arithmetic runs in: float32 for half inputs, else the input's own."""
    return _dtype.float32 if dt in _HALF else dt


def _in(t: Tensor | None, dt: _dtype.dtype) -> Tensor | None:
    return None if t is None else to_dtype(t, dt)


def channel_shape(x: Tensor) -> list[int]:
    """(1, C, 1, ..., 1): a per-channel vector broadcast against (N, C, *)."""
    return [1, x.shape[1]] + [1] * (x.dim() - 2)


def channel_dims(x: Tensor) -> list[int]:
    """Every dim of (N, C, *) but the channels: batch norm's reduction dims."""
    return [0, *range(2, x.dim())]


def _affine(out: Tensor, weight: Tensor | None, bias: Tensor | None,
            shape: Sequence[int]) -> Tensor:
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                       running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                       momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    if input.dim() < 2:
        raise RuntimeError(f"native_batch_norm: expected 2D or more input (got {input.dim()}D "
                           "input)")
    if input.numel() == 0 and training:
        raise RuntimeError(f"input tensor must have at least one element, but got "
                           f"input_sizes = {list(input.shape)}")
    ct = compute_dtype(input.dtype)
    x = to_dtype(input, ct)
    shape, dims = channel_shape(input), channel_dims(input)
    if training:
        mean = x.mean(dims)
        var = x.var(dims, unbiased=False)
        if running_mean is not None or running_var is not None:
            count = input.numel() // input.shape[1]
            with no_grad():  # the running statistics carry no history
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(
                        to_dtype(mean, running_mean.dtype) * momentum)
                if running_var is not None:
                    # unbiased: count / (count - 1) (inf for one value, as PyTorch's)
                    factor = count / (count - 1) if count > 1 else float("inf")
                    running_var.mul_(1 - momentum).add_(
                        to_dtype(var, running_var.dtype) * (momentum * factor))
    else:
        if running_mean is None or running_var is None:
            # PyTorch crashes here; an error that says why is the useful answer
            raise RuntimeError("native_batch_norm: running_mean and running_var must be "
                               "defined in evaluation mode")
        mean, var = to_dtype(running_mean, ct), to_dtype(running_var, ct)
    invstd = _ew.rsqrt(var + eps)
    out = (x - mean.reshape(shape)) * invstd.reshape(shape)
    out = to_dtype(_affine(out, _in(weight, ct), _in(bias, ct), shape), input.dtype)
    # a half input with float32 parameters (mixed precision) saves float32 statistics, as
    # PyTorch's CPU kernel does; otherwise they have the input's dtype
    mixed = input.dtype in _HALF and any(
        t is not None and t.dtype == ct for t in (weight, bias, running_mean, running_var))
    stat_dtype = ct if mixed else input.dtype
    if not training:
        empty = _fac.empty((0,), dtype=stat_dtype, device=input.device)
        return out, empty, _fac.empty((0,), dtype=stat_dtype, device=input.device)
    return out, to_dtype(mean, stat_dtype), to_dtype(invstd, stat_dtype)


def _native_batch_norm_backward(
        grad_out: Tensor, input: Tensor, weight: Tensor | None, running_mean: Tensor | None,
        running_var: Tensor | None, save_mean: Tensor | None, save_invstd: Tensor | None,
        train: bool, eps: float,
        output_mask: Sequence[bool]) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    ct = compute_dtype(input.dtype)
    shape, dims = channel_shape(input), channel_dims(input)
    if train:
        if save_mean is None or save_invstd is None:
            raise RuntimeError("native_batch_norm_backward: save_mean and save_invstd must be "
                               "defined in training mode")
        mean, invstd = to_dtype(save_mean, ct), to_dtype(save_invstd, ct)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("native_batch_norm_backward: running_mean and running_var must "
                               "be defined in evaluation mode")
        mean = to_dtype(running_mean, ct)
        invstd = _ew.rsqrt(to_dtype(running_var, ct) + eps)
    g, x = to_dtype(grad_out, ct), to_dtype(input, ct)
    r = invstd.reshape(shape)
    xhat = (x - mean.reshape(shape)) * r
    dx = dw = db = None
    if output_mask[0]:
        h = g if weight is None else g * to_dtype(weight, ct).reshape(shape)
        if train:  # the batch statistics depend on x
            dx = r * (h - h.mean(dims, keepdim=True)
                      - xhat * (h * xhat).mean(dims, keepdim=True))
        else:
            dx = h * r
        dx = to_dtype(dx, input.dtype)
    if output_mask[1]:
        dw = (g * xhat).sum(dims)
        dw = to_dtype(dw, weight.dtype if weight is not None else input.dtype)
    if output_mask[2]:
        db = to_dtype(g.sum(dims), weight.dtype if weight is not None else input.dtype)
    return dx, dw, db


def _group_view(input: Tensor, n: int, c: int, hxw: int, group: int) -> list[int]:
    """(N, G, C/G, HxW): group norm normalises over the last two dims of this view."""
    if c % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={group}")
    if input.numel() != n * c * hxw:
        raise RuntimeError(f"Expected input to have {n * c * hxw} elements (N={n}, C={c}, "
                           f"HxW={hxw}), but got input of shape {list(input.shape)}")
    return [n, group, c // group, hxw]


def _native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int,
                       C: int, HxW: int, group: int,
                       eps: float) -> tuple[Tensor, Tensor, Tensor]:
    view = _group_view(input, N, C, HxW, group)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.shape[0] != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number "
                               f"of channels in input, but got {name} of shape "
                               f"{list(t.shape)} and input of shape {list(input.shape)}")
    ct = compute_dtype(input.dtype)
    x = to_dtype(input, ct).reshape(view)
    if HxW * (C // group) == 0:  # nothing to normalise per group
        mean = _fac.zeros((N, group, 1, 1), dtype=ct, device=input.device)
        rstd = _fac.full((N, group, 1, 1), float("nan"), dtype=ct, device=input.device)
        out = x.clone()
    else:
        mean = x.mean([2, 3], keepdim=True)
        var = x.var([2, 3], unbiased=False, keepdim=True)
        rstd = _ew.rsqrt(var + eps)
        out = (x - mean) * rstd
    affine = [1, group, C // group, 1]
    out = _affine(out, _in(weight, ct), _in(bias, ct), affine).reshape(input.shape)
    dt = input.dtype
    return (to_dtype(out, dt), to_dtype(mean.reshape(N, group), dt),
            to_dtype(rstd.reshape(N, group), dt))


def _native_group_norm_backward(
        grad_out: Tensor, input: Tensor, mean: Tensor, rstd: Tensor, weight: Tensor | None,
        N: int, C: int, HxW: int, group: int,
        output_mask: Sequence[bool]) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    view = _group_view(input, N, C, HxW, group)
    ct = compute_dtype(input.dtype)
    g = to_dtype(grad_out, ct).reshape(view)
    x = to_dtype(input, ct).reshape(view)
    m = to_dtype(mean, ct).reshape(N, group, 1, 1)
    r = to_dtype(rstd, ct).reshape(N, group, 1, 1)
    xhat = (x - m) * r
    affine = [1, group, C // group, 1]
    dx = dw = db = None
    if output_mask[0]:
        h = g if weight is None else g * to_dtype(weight, ct).reshape(affine)
        if HxW * (C // group) == 0:
            dx = h.clone()
        else:
            dx = r * (h - h.mean([2, 3], keepdim=True)
                      - xhat * (h * xhat).mean([2, 3], keepdim=True))
        dx = to_dtype(dx.reshape(input.shape), input.dtype)
    param_dtype = weight.dtype if weight is not None else input.dtype
    if output_mask[1]:
        dw = to_dtype((g * xhat).sum([0, 3]).reshape(C), param_dtype)
    if output_mask[2]:
        db = to_dtype(g.sum([0, 3]).reshape(C), param_dtype)
    return dx, dw, db


def _native_batch_norm_legit_functional(
        input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor,
        running_var: Tensor, training: bool, momentum: float,
        eps: float) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    # the functional form: the updated running statistics are new outputs
    new_mean, new_var = running_mean.clone(), running_var.clone()
    out, mean, invstd = _native_batch_norm(input, weight, bias, new_mean, new_var, training,
                                           momentum, eps)
    return out, mean, invstd, new_mean, new_var


def functional_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                          running_mean: Tensor | None, running_var: Tensor | None,
                          training: bool, momentum: float, eps: float) -> Any:
    """A decomposition of ``native_batch_norm`` for graph capture (``torch.export``): in
    training with running statistics, ``_native_batch_norm_legit_functional`` (the updated
    statistics as outputs) and a ``copy_`` into each, which the capture turns into buffer
    mutations, as PyTorch's export does; any other call is left as it is (NotImplemented)."""
    if not training or running_mean is None or running_var is None:
        return NotImplemented
    out, mean, invstd, new_mean, new_var = ATEN["_native_batch_norm_legit_functional"](
        input, weight, bias, running_mean, running_var, training, momentum, eps)
    running_mean.copy_(new_mean)
    running_var.copy_(new_var)
    return out, mean, invstd


_TABLE: dict[str, tuple[Any, ...]] = {
    "_native_batch_norm_legit_functional": (
        "_native_batch_norm_legit_functional(Tensor input, Tensor? weight, Tensor? bias, "
        "Tensor running_mean, Tensor running_var, bool training, float momentum, float eps) "
        "-> (Tensor, Tensor, Tensor, Tensor running_mean_out, Tensor running_var_out)",
        _native_batch_norm_legit_functional),
    "native_batch_norm": (
        "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
        "Tensor? running_var, bool training, float momentum, float eps) -> "
        "(Tensor, Tensor, Tensor)", _native_batch_norm),
    "native_batch_norm_backward": (
        "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, "
        "Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, "
        "bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
        _native_batch_norm_backward),
    "native_group_norm": (
        "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, "
        "SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)", _native_group_norm),
    "native_group_norm_backward": (
        "native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, "
        "Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> "
        "(Tensor, Tensor, Tensor)", _native_group_norm_backward),
}

ATEN: dict[str, _dispatch.Operator] = _dispatch.define_aten(_TABLE)
