"""Batching rules: how an aten operator runs on physical tensors whose dim 0 is the batch.

A rule receives the :class:`~torch._functorch.batched.Level` of the call and the call's
arguments with batched tensors replaced by their physical tensors (``ctx.batched(x)`` tells
which), and returns results that all carry the batch dim first. :data:`RULES` maps operator
names to rules; most rows name a rule family:

- :func:`elementwise`: pointwise ops, in place or not: a batched operand of lower logical rank
  gets size-1 dims after its batch dim, so that broadcasting aligns logical dims;
- :func:`dims`: ops that take dims (reductions, scans, softmax, select/slice, transpose...):
  the dims shift past the batch dim; ``aligned`` ops (gather, scatter, the softmax backwards)
  take every tensor argument with the batch dim;
- :func:`leading_self`: ops that already accept leading batch dims (``linalg``, ``tril``):
  run as they are;
- shape ops (``view``, ``expand``, ``permute``...) with the batch size prepended; the matmul
  family as ``matmul`` over the batch; ``cat``; ``index``; ``convolution`` (batch folded into
  the samples, or into groups for per-sample weights) and its backward; ``native_layer_norm``,
  the fused attention op and the fused LSTM/GRU cells, with their backwards (per-sample
  gradients of shared weights); the nll and cross-entropy losses (their unreduced form over
  folded rows, then a per-sample reduction);
- random ops follow the level's ``randomness`` (``error``, ``different``, ``same``);
- ``.item()`` and Python control flow on a batched tensor raise PyTorch's vmap errors.

An operator with no row is decomposed when it is ``CompositeImplicitAutograd`` or else runs
through the loop fallback (:func:`torch._functorch.batched._fallback`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor
from torch._core import op_tables as _op_tables

from .batched import _DATA_DEPENDENT, _NO_ITEM, Level, _fallback, rebuild

Rule = Callable[[Level, Any, tuple[Any, ...], dict[str, Any]], Any]

_ATEN = torch.ops.aten


def _arg_names(func: Any) -> list[str]:
    return [a.name for a in func.schema.arguments]


def _wrap_dim(d: int, rank: int) -> int:
    """Logical dim ``d`` of a rank-``rank`` tensor -> its physical dim (after the batch)."""
    bound = max(rank, 1)
    if not -bound <= d < bound:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, "
                         f"{bound - 1}], but got {d})")
    return (d % bound) + 1


def _align(ctx: Level, x: Tensor, rank: int) -> Tensor:
    """Batched ``x`` with size-1 dims after the batch dim up to logical rank ``rank``."""
    r = ctx.rank(x)
    if not ctx.batched(x) or r >= rank:
        return x
    return ctx.mark(x.reshape((x.shape[0],) + (1,) * (rank - r) + tuple(x.shape[1:])))


# -- elementwise ------------------------------------------------------------------------------


def elementwise(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    tensors = [a for a in args if isinstance(a, Tensor)]
    tensors += [v for v in kwargs.values() if isinstance(v, Tensor)]
    rank = max(ctx.rank(t) for t in tensors)
    inplace = bool(func.schema.mutated)
    args = tuple(a if (not isinstance(a, Tensor) or (inplace and i == 0)) else
                 _align(ctx, a, rank) for i, a in enumerate(args))
    kwargs = {k: _align(ctx, v, rank) if isinstance(v, Tensor) else v for k, v in kwargs.items()}
    out = func(*args, **kwargs)
    if inplace:
        return args[0]
    return out


def leading(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Ops whose tensor arguments accept leading batch dims (every batched one is)."""
    return func(*args, **kwargs)


def leading_self(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Ops that accept leading batch dims in ``self`` only: other batched tensors take the
    fallback."""
    if any(isinstance(a, Tensor) and ctx.batched(a) for a in args[1:]) or any(
            isinstance(v, Tensor) and ctx.batched(v) for v in kwargs.values()):
        return _fallback(ctx, func, args, kwargs)
    return func(*args, **kwargs)


def samples_folded(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Ops on a fixed-rank batch of samples (``upsample_nearest2d``'s (N, C, H, W)) whose
    samples are independent: the batch dim folds into N and comes out again."""
    if any(isinstance(a, Tensor) and ctx.batched(a) for a in args[1:]) or any(
            isinstance(v, Tensor) and ctx.batched(v) for v in kwargs.values()):
        return _fallback(ctx, func, args, kwargs)
    x = args[0]
    out = func(x.reshape((-1,) + tuple(x.shape[2:])), *args[1:], **kwargs)
    return out.reshape((x.shape[0], x.shape[1]) + tuple(out.shape[1:]))


def leading_folded(rank: int) -> Rule:
    """The rule of ops taking a rank-``rank`` tensor or one sample of it (rank - 1: the
    pooling operators and their backwards, im2col on 4-d, col2im on 3-d): every tensor
    argument gets the batch dim, which folds into the leading dim (a batch of single samples
    is itself a full input) and comes out of every result again."""
    def rule(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return _leading_folded(rank, ctx, func, args, kwargs)
    return rule


def _leading_folded(rank: int, ctx: Level, func: Any, args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> Any:
    if any(isinstance(v, Tensor) for v in kwargs.values()):
        return _fallback(ctx, func, args, kwargs)
    full = [ctx.full(a) if isinstance(a, Tensor) else a for a in args]
    lead = tuple(full[0].shape[:2]) if full[0].dim() == rank + 1 else None

    def fold(a: Any) -> Any:
        if not isinstance(a, Tensor) or lead is None:
            return a
        return a.reshape((-1,) + tuple(a.shape[2:]))

    def unfold(out: Tensor) -> Tensor:
        return out if lead is None else out.reshape(lead + tuple(out.shape[1:]))

    out = func(*[fold(a) for a in full])
    return tuple(unfold(o) for o in out) if isinstance(out, tuple) else unfold(out)


# -- dims -------------------------------------------------------------------------------------

# schema argument names that hold dims of ``self``
_DIM_ARGS = frozenset({"dim", "dim0", "dim1", "dim2", "start_dim", "end_dim", "source",
                       "destination", "dims", "dimension"})
# ops where a missing (None) or empty dim list means every dim
_ALL_DIMS = frozenset({"sum.dim_IntList", "amax", "amin", "any.dims", "all.dims",
                       "linalg_vector_norm", "mean.dim", "var.correction", "std.correction",
                       "logsumexp"})


def _shift(value: Any, rank: int, all_dims: bool) -> Any:
    if value is None or (isinstance(value, (list, tuple)) and not value):
        return list(range(1, rank + 1)) if all_dims and rank else value
    if isinstance(value, (list, tuple)):
        return [_wrap_dim(d, rank) for d in value]
    return _wrap_dim(value, rank)


def dims(aligned: bool = False) -> Rule:
    """The rule of an op taking dims of its first tensor argument. ``aligned``: every tensor
    argument has that tensor's logical shape, so each takes the batch dim; otherwise the
    others must be unbatched (else the fallback serves the call)."""

    def rule(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        names = _arg_names(func)
        first = next(a for a in args if isinstance(a, Tensor))
        rank = ctx.rank(first)
        scalar = rank == 0 and ctx.batched(first)
        args = list(args)
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                if aligned:
                    args[i] = ctx.full(a)
                elif a is not first and ctx.batched(a):
                    return _fallback(ctx, func, tuple(args), kwargs)
                if scalar:  # a 0-d sample: its one dim is a size-1 dim after the batch
                    args[i] = ctx.mark(args[i].unsqueeze(-1))
        all_dims = func.name in _ALL_DIMS
        if scalar:
            rank = 1  # the size-1 dim stands for the sample's one dim
        for i, name in enumerate(names[: len(args)]):
            if name in _DIM_ARGS:
                args[i] = _shift(args[i], rank, all_dims)
        kw = {k: _shift(v, rank, all_dims) if k in _DIM_ARGS else v for k, v in kwargs.items()}
        if all_dims and "dim" not in kw and names.index("dim") >= len(args) and rank:
            kw["dim"] = list(range(1, rank + 1))  # dim left to its default: every dim
        out = func(*args, **kw)
        return _squeeze_scalar(out) if scalar else out

    return rule


def _squeeze_scalar(out: Any) -> Any:
    """Results of a 0-d sample computed over a size-1 dim: back to 0-d samples."""
    if isinstance(out, Tensor):
        return out.squeeze(1) if out.dim() == 2 else out
    if isinstance(out, (list, tuple)):
        return rebuild(out, [_squeeze_scalar(o) for o in out])
    return out


def flat_reduce(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """argmax / argmin / prod over one optional dim: ``dim=None`` reduces each sample
    flattened."""
    names = _arg_names(func)
    bound = dict(zip(names, args), **kwargs)
    if bound.get("dim") is not None or not ctx.batched(args[0]):
        return dims()(ctx, func, args, kwargs)
    x = args[0]
    rest = {k: v for k, v in bound.items() if k not in ("self", "dim", "keepdim")}
    out = func(x.reshape(x.shape[0], -1), 1, False, **rest)
    if bound.get("keepdim"):
        return out.reshape((x.shape[0],) + (1,) * (x.dim() - 1))
    return out


# The reductions of every element (``aten::sum``...) and the op reducing each sample whole.
_WHOLE_SAMPLE = {"sum": "sum.dim_IntList", "prod": "prod.dim_int", "max": "amax", "min": "amin",
                 "all": "all.dims", "any": "any.dims"}


def whole_reduce(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``x.sum()`` and the like of a batched ``x``: each sample flattened and reduced over its
    one dim by the op with a dim argument."""
    x = args[0]
    if not ctx.batched(x):
        return func(*args, **kwargs)
    name, _, overload = _WHOLE_SAMPLE[func.name].partition(".")
    by_dim = getattr(getattr(torch.ops.aten, name), overload or "default")
    dim: Any = 1 if func.name == "prod" else [1]
    return by_dim(x.reshape(x.shape[0], -1), dim, False, **kwargs)


def masked_fill(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A batched fill value (a 0-d tensor per sample) goes through ``where``."""
    x, mask, value = args[0], args[1], args[2]
    if not (isinstance(value, Tensor) and ctx.batched(value)):
        return elementwise(ctx, func, args, kwargs)
    rank = max(ctx.rank(x), ctx.rank(mask))
    return torch.where(_align(ctx, mask, rank), _align(ctx, value, rank).to(x.dtype),
                       _align(ctx, x, rank))


def broadcast_dims(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Ops over a dim of operands that broadcast (``linalg_cross``): every tensor gets the
    same rank, then the dim shifts."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    rank = max(ctx.rank(t) for t in tensors)

    def lift(t: Tensor) -> Tensor:
        if ctx.batched(t):
            return _align(ctx, t, rank)
        return t.reshape((1,) * (rank + 1 - t.dim()) + tuple(t.shape))

    names = _arg_names(func)
    out = [lift(a) if isinstance(a, Tensor) else a for a in args]
    for i, name in enumerate(names[: len(out)]):
        if name in _DIM_ARGS:
            out[i] = _shift(out[i], rank, False)
    kw = {k: _shift(v, rank, False) if k in _DIM_ARGS else v for k, v in kwargs.items()}
    return func(*out, **kw)


# -- shape ops --------------------------------------------------------------------------------


def _size_arg(args: tuple[Any, ...], kwargs: dict[str, Any], name: str = "size") -> Any:
    return args[1] if len(args) > 1 else kwargs[name]


def view_like(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    # the batch dim stays a dim of its own: the view is possible exactly when it is for
    # one sample (whose strides the physical tensor has after its batch dim)
    x, size = args[0], tuple(_size_arg(args, kwargs))
    return func(x, (x.shape[0],) + size)


def reshape_alias(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x = args[0]
    return x.reshape((x.shape[0],) + tuple(_size_arg(args, kwargs)))


def expand(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, size = args[0], tuple(_size_arg(args, kwargs))
    x = _align(ctx, x, len(size))
    return func(x, (x.shape[0],) + size)


def repeat(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, reps = args[0], tuple(_size_arg(args, kwargs, "repeats"))
    x = _align(ctx, x, len(reps))
    return func(x, (1,) + reps)


def as_strided(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Sizes, strides and offset of one sample (sample 0's, as its shell reports them); the
    batch keeps its stride."""
    names = _arg_names(func)
    bound = dict(zip(names, args), **kwargs)
    x = bound["self"]
    if not ctx.batched(x):
        return _fallback(ctx, func, args, kwargs)
    offset = bound.get("storage_offset")
    return func(x, (x.shape[0],) + tuple(bound["size"]), (x.stride(0),) + tuple(bound["stride"]),
                x.storage_offset() if offset is None else offset)


def permute(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, order = args[0], _size_arg(args, kwargs, "dims")
    rank = ctx.rank(x)
    return func(x, [0] + [_wrap_dim(d, rank) for d in order])


def transpose_2d(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``t``: a sample of rank < 2 is returned as it is (an alias)."""
    x = args[0]
    return x.transpose(1, 2) if ctx.rank(x) == 2 else _ATEN.alias(x)


def unsqueeze(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, d = args[0], _size_arg(args, kwargs, "dim")
    return func(x, _wrap_dim(d, ctx.rank(x) + 1))


def squeeze_all(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x = args[0]
    ones = [i + 1 for i, s in enumerate(x.shape[1:]) if s == 1]
    return _ATEN.squeeze.dims(x, ones) if ones else _ATEN.alias(x)


def roll(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x = args[0]
    shifts = _size_arg(args, kwargs, "shifts")
    over = args[2] if len(args) > 2 else kwargs.get("dims", [])
    if over is None or (isinstance(over, (list, tuple)) and not over):  # the flattened sample
        flat = x.reshape(x.shape[0], -1)
        return func(flat, shifts, [1]).reshape(x.shape)
    return dims()(ctx, func, args, kwargs)


def cat(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    tensors = list(args[0] if args else kwargs["tensors"])
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    # PyTorch's legacy rule: 1-d empty tensors take no part in the shape
    ranks = [ctx.rank(t) for t in tensors if not (ctx.rank(t) == 1 and t.shape[-1] == 0)]
    rank = ranks[0] if ranks else 1
    return func([ctx.full(t) for t in tensors], _wrap_dim(dim, rank))


def self_dim_last(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Ops acting on the last dim(s) of a sample of rank >= 1 (``view.dtype``, complex views)."""
    if ctx.rank(args[0]) == 0:
        return _fallback(ctx, func, args, kwargs)
    return func(*args, **kwargs)


# -- matmul family ----------------------------------------------------------------------------


def mm(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """mm / bmm: ``matmul`` broadcasts the batch dim over the unbatched operand."""
    return torch.matmul(args[0], args[1])


def mv(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return torch.matmul(args[0], args[1].unsqueeze(-1)).squeeze(-1)


def dot(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    a, b = args[0], args[1]
    if func.name == "vdot":
        a = a.conj()
    return (a * b).sum(-1)


# -- indexing ---------------------------------------------------------------------------------


def index_select(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, dim, index = args[0], args[1], args[2]
    d = _wrap_dim(dim, ctx.rank(x))
    if not ctx.batched(index):
        return func(x, d, index)
    x = ctx.full(x)
    rows = torch.arange(x.shape[0], device=x.device).unsqueeze(1)  # (B, 1)
    picked = x.movedim(d, 1)[rows, index]  # (B, k, rest...)
    return picked.movedim(1, d)


def linear(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A batched input is more leading dims; a batched weight or bias (an ensemble's) is one
    batched product of each sample's rows with its own weight."""
    x, weight = args[0], args[1]
    bias = args[2] if len(args) > 2 else kwargs.get("bias")
    if not ctx.batched(weight) and (bias is None or not ctx.batched(bias)):
        return func(*args, **kwargs)
    if ctx.rank(weight) != 2:
        return _fallback(ctx, func, args, kwargs)
    x, weight = ctx.full(x), ctx.full(weight)  # (B, *, in), (B, out, in)
    b = x.shape[0]
    out = torch.bmm(x.reshape(b, -1, x.shape[-1]), weight.transpose(1, 2))  # (B, N, out)
    out = out.reshape(*x.shape[:-1], weight.shape[1])
    if bias is not None:
        bias = ctx.full(bias)  # (B, *bias)
        out = out + bias.reshape(b, *([1] * (out.dim() - bias.dim())), *bias.shape[1:])
    return out


def embedding(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A batched table picks each sample's rows from its own table; a batched index alone is
    just more indices."""
    weight, indices = args[0], args[1]
    if not ctx.batched(weight):
        return func(*args, **kwargs)
    weight, indices = ctx.full(weight), ctx.full(indices)  # (B, N, D), (B, *s)
    b = weight.shape[0]
    flat = indices.reshape(b, -1)
    rows = torch.arange(b, device=weight.device).unsqueeze(1)  # (B, 1)
    return weight[rows, flat].reshape(*indices.shape, weight.shape[-1])


def embedding_dense_backward(ctx: Level, func: Any, args: tuple[Any, ...],
                             kwargs: dict[str, Any]) -> Any:
    """Each sample's gradient into its own table: the samples' tables side by side as one
    table of B * N rows (indices offset by sample), then split; padding rows cleared per
    sample."""
    names = ("grad_output", "indices", "num_weights", "padding_idx", "scale_grad_by_freq")
    grad, indices, num, padding, scale = (
        args[i] if i < len(args) else kwargs[name] for i, name in enumerate(names))
    grad, indices = ctx.full(grad), ctx.full(indices)  # (B, *s, D), (B, *s)
    b, d = grad.shape[0], grad.shape[-1]
    offsets = torch.arange(b, device=indices.device).reshape(b, *([1] * (indices.dim() - 1)))
    flat = (indices.long() + offsets * num).reshape(-1)
    out = func(grad.reshape(-1, d), flat, b * num, -1, scale).reshape(b, num, d)
    if 0 <= padding < num:
        out = out.index_fill(1, torch.tensor([padding], device=out.device), 0)
    return out


def _index_tail(indices: Sequence[Any]) -> tuple[int, int, bool]:
    """(dims the indices consume, index of the first one, whether they are adjacent)."""
    positions = [i for i, t in enumerate(indices) if t is not None]
    consumed = sum(t.dim() if t.dtype in (torch.bool, torch.uint8) else 1
                   for t in indices if t is not None)
    adjacent = positions == list(range(positions[0], positions[-1] + 1)) if positions else True
    return consumed, (positions[0] if positions else 0), adjacent


def index(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, indices = args[0], list(args[1])
    if not any(t is not None and ctx.batched(t) for t in indices):
        out = func(x, [None] + indices)
        consumed, _first, adjacent = _index_tail(indices)
        if adjacent:
            return out
        # advanced dims first, then the batch dim with the dims left unindexed
        remaining = x.dim() - consumed
        return out.movedim(out.dim() - remaining, 0)
    if any(t is not None and t.dtype in (torch.bool, torch.uint8) for t in indices):
        return _fallback(ctx, func, args, kwargs)
    x = ctx.full(x)
    rank = max(ctx.rank(t) for t in indices if t is not None)
    rows = torch.arange(x.shape[0], device=x.device).reshape((-1,) + (1,) * rank)
    aligned = [None if t is None else _align(ctx, t, rank) for t in indices]
    out = func(x, [rows] + aligned)  # (B, advanced..., other dims...)
    _consumed, first, adjacent = _index_tail(indices)
    if adjacent and first:  # the advanced block belongs after the first `first` dims
        order = ([0] + list(range(1 + rank, 1 + rank + first)) + list(range(1, 1 + rank))
                 + list(range(1 + rank + first, out.dim())))
        out = out.permute(order)
    return out


def index_put(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, indices = args[0], list(args[1])
    values = args[2] if len(args) > 2 else kwargs["values"]
    accumulate = args[3] if len(args) > 3 else kwargs.get("accumulate", False)
    if any(t is not None and ctx.batched(t) for t in indices) or not _index_tail(indices)[2]:
        return _fallback(ctx, func, args, kwargs)
    if ctx.batched(values):
        # the indexed region of one sample has the logical rank of x[indices]
        region = _ATEN.index.Tensor(x, [None] + indices)
        values = _align(ctx, values, region.dim() - 1)
    func(x, [None] + indices, values, accumulate)
    return x


# -- convolution ------------------------------------------------------------------------------


def _conv_args(args: tuple[Any, ...], at: int = 3) -> tuple[Any, ...]:
    """(stride, padding, dilation, transposed, output_padding, groups), from index ``at``."""
    return tuple(args[at: at + 6])


def convolution(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, w, bias = args[0], args[1], args[2]
    stride, padding, dilation, transposed, output_padding, groups = _conv_args(args)
    spatial = w.dim() - 2 - (1 if ctx.batched(w) else 0)
    lone = ctx.rank(x) == spatial + 1  # samples without their own batch dim: (C, *spatial)
    b = ctx.size
    if lone:
        x = ctx.mark(x.unsqueeze(1)) if ctx.batched(x) else x.unsqueeze(0)
    if not ctx.batched(w) and not (bias is not None and ctx.batched(bias)):
        # the batch folds into the samples: (B * N, C, *spatial)
        xb = ctx.full(x)
        n = xb.shape[1]
        out = func(xb.reshape((b * n,) + tuple(xb.shape[2:])), w, bias, stride, padding,
                   dilation, transposed, output_padding, groups)
        out = out.reshape((b, n) + tuple(out.shape[1:]))
        return out.squeeze(1) if lone else out
    out = _grouped_conv(ctx, func, ctx.full(x), ctx.full(w),
                        None if bias is None else ctx.full(bias),
                        (stride, padding, dilation, transposed, output_padding, groups))
    return out.squeeze(1) if lone else out


def _fold_groups(x: Tensor, w: Tensor, groups: int) -> tuple[Tensor, Tensor]:
    """Per-sample weights as groups: x (B, N, C, *s) -> (N, B * C, *s); w (B, O, ...) ->
    (B * O, ...)."""
    b, n = x.shape[0], x.shape[1]
    xf = x.movedim(0, 1).reshape((n, b * x.shape[2]) + tuple(x.shape[3:]))
    wf = w.reshape((b * w.shape[1],) + tuple(w.shape[2:]))
    return xf, wf


def _unfold_groups(y: Tensor, b: int) -> Tensor:
    """(N, B * O, *s) -> (B, N, O, *s)."""
    n = y.shape[0]
    return y.reshape((n, b, y.shape[1] // b) + tuple(y.shape[2:])).movedim(1, 0)


def _grouped_conv(ctx: Level, func: Any, x: Tensor, w: Tensor, bias: Tensor | None,
                  conv: tuple[Any, ...]) -> Tensor:
    stride, padding, dilation, transposed, output_padding, groups = conv
    b = x.shape[0]
    xf, wf = _fold_groups(x, w, groups)
    bf = None if bias is None else bias.reshape(-1)
    out = func(xf, wf, bf, stride, padding, dilation, transposed, output_padding, groups * b)
    return _unfold_groups(out, b)


def convolution_backward(ctx: Level, func: Any, args: tuple[Any, ...],
                         kwargs: dict[str, Any]) -> Any:
    grad, x, w, bias_sizes = args[0], args[1], args[2], args[3]
    stride, padding, dilation, transposed, output_padding, groups = _conv_args(args, 4)
    mask = list(args[10])
    b = ctx.size
    spatial = w.dim() - 2 - (1 if ctx.batched(w) else 0)
    lone = ctx.rank(x) == spatial + 1
    grad, x, w = ctx.full(grad), ctx.full(x), ctx.full(w)
    if lone:
        grad, x = grad.unsqueeze(1), x.unsqueeze(1)
    gf, _ = _fold_groups(grad, w, groups)
    xf, wf = _fold_groups(x, w, groups)
    # output channels: the weight's dim 0 of a sample, or (C_in, O / g, ...) transposed
    channels = w.shape[2] * groups if transposed else w.shape[1]
    sizes = None if bias_sizes is None else [b * channels]
    gi, gw, gb = func(gf, xf, wf, sizes, stride, padding, dilation, transposed, output_padding,
                      groups * b, mask)
    out_in = None if gi is None else _unfold_groups(gi, b)
    if out_in is not None and lone:
        out_in = out_in.squeeze(1)
    out_w = None if gw is None else gw.reshape((b,) + tuple(w.shape[1:]))
    out_b = None if gb is None else gb.reshape(b, -1)
    return out_in, out_w, out_b


# -- norms and losses -------------------------------------------------------------------------


def layer_norm(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """native_layer_norm normalizes each row (the batch is more rows); the affine part is a
    broadcast product and sum, so per-sample weights work too."""
    x, normalized, weight, bias, eps = args
    if not ctx.batched(x):
        x = ctx.full(x)
    if (weight is None or not ctx.batched(weight)) and (bias is None or not ctx.batched(bias)):
        return func(x, normalized, weight, bias, eps)
    out, mean, rstd = func(x, normalized, None, None, eps)
    rank = x.dim() - 1
    if weight is not None:
        out = out * _align(ctx, weight, rank)
    if bias is not None:
        out = out + _align(ctx, bias, rank)
    return out, mean, rstd


def _channels_folded(ctx: Level, x: Tensor) -> Tensor:
    """(B, N, C, *) -> (N, B*C, *): each sample's channels become channels of one batch
    norm (channel b*C + c is channel c of sample b)."""
    x = ctx.full(x).movedim(0, 1)
    return x.reshape((x.shape[0], x.shape[1] * x.shape[2]) + tuple(x.shape[3:]))


def _per_channel_folded(ctx: Level, t: Tensor | None) -> Tensor | None:
    """A (C,) per-channel vector, per sample (B, C) or shared, as the (B*C,) of the fold."""
    if t is None:
        return None
    return t.reshape(-1) if ctx.batched(t) else t.repeat(ctx.size)


def batch_norm(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """native_batch_norm: the samples' channels fold into the channels of one batch norm
    (training statistics stay per sample). Running statistics written in training take the
    loop fallback, as PyTorch refuses them under vmap."""
    x, weight, bias, running_mean, running_var, training, momentum, eps = args
    if kwargs or (training and (running_mean is not None or running_var is not None)):
        return _fallback(ctx, func, args, kwargs)
    folded = _channels_folded(ctx, x)
    out, mean, invstd = func(folded, *(_per_channel_folded(ctx, t) for t in
                                       (weight, bias, running_mean, running_var)),
                             training, momentum, eps)
    size = ctx.size
    out = out.reshape((out.shape[0], size, -1) + tuple(out.shape[2:])).movedim(1, 0)
    if training:
        return out, mean.reshape(size, -1), invstd.reshape(size, -1)
    return out, mean.new_empty((size, 0)), invstd.new_empty((size, 0))


def batch_norm_backward(ctx: Level, func: Any, args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> Any:
    """native_batch_norm_backward over the same fold; the parameters' gradients come out per
    sample."""
    grad, x, weight, running_mean, running_var, save_mean, save_invstd, train, eps, mask = args
    if kwargs:
        return _fallback(ctx, func, args, kwargs)
    dx, dw, db = func(_channels_folded(ctx, grad), _channels_folded(ctx, x),
                      *(_per_channel_folded(ctx, t) for t in
                        (weight, running_mean, running_var, save_mean, save_invstd)),
                      train, eps, mask)
    size = ctx.size
    if dx is not None:
        dx = dx.reshape((dx.shape[0], size, -1) + tuple(dx.shape[2:])).movedim(1, 0)
    return (dx, None if dw is None else dw.reshape(size, -1),
            None if db is None else db.reshape(size, -1))


def layer_norm_backward(ctx: Level, func: Any, args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> Any:
    grad, x, normalized, mean, rstd, weight, bias, mask = args
    grad, x, mean, rstd = ctx.full(grad), ctx.full(x), ctx.full(mean), ctx.full(rstd)
    # the weight scales the normalized rows: the input's gradient is that of the unweighted
    # op at grad * weight (a per-sample weight included)
    scaled = grad if weight is None else grad * _align(ctx, weight, grad.dim() - 1)
    gi = func(scaled, x, normalized, mean, rstd, None, None, [mask[0], False, False])[0]
    lead = list(range(1, x.dim() - len(normalized)))  # each sample's own rows
    gw = gb = None
    if mask[1] and weight is not None:
        gw = (grad * ((x - mean) * rstd)).sum(lead) if lead else grad * ((x - mean) * rstd)
    if mask[2] and bias is not None:
        gb = grad.sum(lead) if lead else grad
    return gi, gw, gb


def attention(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The fused attention op and its backward broadcast leading batch dims: every tensor
    argument takes the batch dim (gradients are per sample), aligned to one rank (the
    logsumexp one less); gradients come back in their inputs' shapes."""
    names = _arg_names(func)
    bound = dict(zip(names, args), **kwargs)
    tensors = {n: ctx.full(v) for n, v in bound.items() if isinstance(v, Tensor)}
    rank = max(ctx.rank(t) for n, t in tensors.items() if n != "logsumexp")
    shapes = {n: tuple(t.shape) for n, t in tensors.items()}
    for n, t in tensors.items():
        bound[n] = _align(ctx, t, rank - 1 if n == "logsumexp" else rank)
    out = func(*(bound[n] for n in names[: len(args)]),
               **{n: bound[n] for n in names[len(args):] if n in bound})
    if func.name.endswith("_backward"):  # (grad_query, grad_key, grad_value)
        return tuple(g.reshape(shapes[n]) for g, n in zip(out, ("query", "key", "value")))
    return out


def rnn_cell(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The fused LSTM/GRU cells take (N, k * H) rows: the batch folds into the rows (biases
    join the gates they add to, so per-sample biases work too)."""
    ig, hg, state = (ctx.full(t) for t in args[:3])
    ib = args[3] if len(args) > 3 else kwargs.get("input_bias")
    hb = args[4] if len(args) > 4 else kwargs.get("hidden_bias")
    if ib is not None:
        ig = ig + _align(ctx, ib, 2)
    if hb is not None:
        hg = hg + _align(ctx, hb, 2)
    b, n = ig.shape[0], ig.shape[1]
    outs = func(ig.reshape(b * n, -1), hg.reshape(b * n, -1), state.reshape(b * n, -1),
                None, None)
    return tuple(o.reshape(b, n, -1) for o in outs)


def rnn_cell_backward(ctx: Level, func: Any, args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> Any:
    """The cells' backwards over folded rows; bias gradients summed per sample."""
    *tensors, has_bias = args
    full = [None if t is None else ctx.full(t) for t in tensors]
    b, n = next(t for t in full if t is not None).shape[:2]
    rows = [None if t is None else t.reshape(b * n, -1) for t in full]
    outs = [None if o is None else o.reshape(b, n, -1) for o in func(*rows, False)]
    if func.name == "_thnn_fused_lstm_cell_backward_impl":  # (gates, cx, bias)
        return outs[0], outs[1], outs[0].sum(1) if has_bias else None
    # GRU: (input gates, hidden gates, hx, input bias, hidden bias)
    if has_bias:
        return outs[0], outs[1], outs[2], outs[0].sum(1), outs[1].sum(1)
    return outs[0], outs[1], outs[2], None, None


_NONE, _MEAN = 0, 1  # PyTorch's reduction enum (anything else: sum)


def _rows(ctx: Level, x: Tensor, target: Tensor) -> tuple[Tensor, Tensor, int]:
    """(B * N, C) logits and (B * N,) targets of samples of (N, C) / (C,) inputs."""
    x, target = ctx.full(x), ctx.full(target)
    classes = x.shape[-1]
    return x.reshape(-1, classes), target.reshape(-1), x.shape[1] if x.dim() == 3 else 1


def _target_weight(target: Tensor, weight: Tensor | None, ignore_index: int,
                   dtype: torch.dtype) -> Tensor:
    keep = (target != ignore_index).to(dtype)
    if weight is None:
        return keep
    return weight[torch.where(target != ignore_index, target, 0)] * keep


def _per_sample(loss: Tensor, w: Tensor, b: int, reduction: int) -> Tensor:
    loss, w = loss.reshape(b, -1), w.reshape(b, -1)
    if reduction == _NONE:
        return loss
    total = loss.sum(1)
    return total / w.sum(1) if reduction == _MEAN else total


def nll_forward(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """nll_loss_forward and _cross_entropy_forward: unreduced over all rows, then reduced per
    sample. Returns (loss, total_weight) or (loss, logsumexp)."""
    x, target, weight, reduction, ignore_index = args[:5]
    if weight is not None and ctx.batched(weight):
        return _fallback(ctx, func, args, kwargs)
    lone = ctx.rank(x) == 1
    b = ctx.size
    xr, tr, _n = _rows(ctx, x, target)
    loss, extra = func(xr, tr, weight, _NONE, ignore_index)
    w = _target_weight(tr, weight, ignore_index, xr.dtype)
    out = _per_sample(loss, w, b, reduction)
    if reduction == _NONE and lone:
        out = out.reshape(b)
    if func.name == "nll_loss_forward":
        extra = w.reshape(b, -1).sum(1) if reduction != _NONE else torch.zeros(
            b, dtype=xr.dtype, device=xr.device)
    else:
        extra = extra.reshape(b) if lone else extra.reshape(b, -1)
    return out, extra


def nll_backward(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """nll_loss_backward and _cross_entropy_backward: the unreduced backward over all rows of
    the incoming gradient spread (and for "mean" divided) per sample."""
    grad, x, target, weight, reduction, ignore_index, last = args[:7]
    if weight is not None and ctx.batched(weight):
        return _fallback(ctx, func, args, kwargs)
    b = ctx.size
    shape = (b,) + tuple(x.shape[1:] if ctx.batched(x) else x.shape)
    xr, tr, n = _rows(ctx, x, target)
    g = ctx.full(grad).reshape(b, -1)  # (B, N) for "none", else (B, 1)
    if reduction != _NONE:
        if reduction == _MEAN:
            w = _target_weight(tr, weight, ignore_index, xr.dtype).reshape(b, -1)
            g = g / w.sum(1, keepdim=True)
        g = g.expand(b, n)
    if func.name == "nll_loss_backward":
        extra = torch.zeros((), dtype=xr.dtype, device=xr.device)
    else:
        extra = ctx.full(last).reshape(-1)
    out = func(g.reshape(-1).to(xr.dtype), xr, tr, weight, _NONE, ignore_index, extra)
    return out.reshape(shape)


# -- data-dependent ---------------------------------------------------------------------------


def _no_item(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    raise RuntimeError(_NO_ITEM)


def _no_control_flow(ctx: Level, func: Any, args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> Any:
    raise RuntimeError(_DATA_DEPENDENT)


def _no_dynamic(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    raise RuntimeError("vmap: We do not support batching operators that can support dynamic "
                       f"shape. Attempting to batch over {func.name.partition('.')[0]}.")


# -- randomness -------------------------------------------------------------------------------

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either "
                 "use the 'same' or 'different' randomness flags on vmap or perform the "
                 "randomness operation out of vmap")


def random_batched(rule: Rule) -> Rule:
    """A random op with batched arguments: ``different`` draws per sample (``rule``),
    ``same`` draws one sample's values for all."""

    def random_rule(ctx: Level, func: Any, args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> Any:
        how = ctx.mode.randomness
        if how == "error":
            raise RuntimeError(_RANDOM_ERROR)
        if how == "different":
            return rule(ctx, func, args, kwargs)
        x = args[0]
        if func.schema.mutated:  # one sample's draw, written into all
            one = x[0].clone()
            func(one, *args[1:], **kwargs)
            x.copy_(one.expand_as(x))
            return x
        if func.name.partition(".")[0] in ("bernoulli",):  # same draws, per-sample odds
            return (torch.rand_like(x[0]) < x).to(x.dtype)
        one = func(x[0], *args[1:], **kwargs)
        return one.unsqueeze(0).expand((x.shape[0],) + tuple(one.shape)).contiguous()

    return random_rule


def random_unbatched(mode: Any, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A random op with no batched argument inside ``vmap``: an error in ``error`` mode, one
    draw in ``same``, one per sample in ``different``."""
    from .batched import make_batched

    how = mode.randomness
    if how == "error":
        raise RuntimeError(_RANDOM_ERROR)
    if how == "same":
        return func(*args, **kwargs)
    if func.schema.mutated:
        raise RuntimeError("vmap: Cannot ask for different inplace randomness on an unbatched "
                           "tensor. This will appear like same randomness. If this is necessary "
                           "for your usage, please file an issue with functorch.")
    b = mode.batch_size
    names = _arg_names(func)
    args = list(args)
    if "size" in names:  # factories: the batch is one more leading dim of the draw
        at = names.index("size")
        if at < len(args):
            args[at] = (b,) + tuple(args[at])
        else:
            kwargs = {**kwargs, "size": (b,) + tuple(kwargs["size"])}
        return make_batched(func(*args, **kwargs), mode.level)
    if names and names[0] in ("self", "mean", "input") and isinstance(args[0], Tensor):
        # *_like, bernoulli(p), normal(mean, std): a draw for each sample's copy of the input
        x = args[0]
        args[0] = x.unsqueeze(0).expand((b,) + tuple(x.shape)).contiguous()
        ctx = Level(mode)
        ctx.mark(args[0])
        return make_batched(elementwise(ctx, func, tuple(args), kwargs), mode.level)
    return make_batched(torch.stack([func(*args, **kwargs) for _ in range(b)]), mode.level)


# -- the table --------------------------------------------------------------------------------

_ELEMENTWISE_EXTRA = (
    "relu", "gelu", "gelu_backward", "clamp", "clamp.Tensor", "clamp_min", "clamp_max",
    "masked_fill.Scalar",
    "copy_", "_to_copy", "clone", "detach", "alias", "lift_fresh", "conj_physical",
    "rsub.Scalar", "div.Tensor", "pow.Tensor_Scalar", "pow.Scalar", "eq.Scalar", "ne.Scalar",
    "lt.Scalar", "le.Scalar", "gt.Scalar", "ge.Scalar", "complex",
    "polar", "isnan", "sgn", "angle", "nan_to_num", "logit", "lerp.Scalar",
    "where.self", "lerp.Tensor", "addcmul", "addcdiv", "xlogy.Tensor", "float_power.Tensor_Tensor",
    "empty_like", "zeros_like", "ones_like", "full_like", "signbit", "isinf", "isfinite",
    "isposinf", "isneginf", "positive", "frac", "deg2rad", "rad2deg", "square", "logaddexp",
    "logaddexp2", "fill_.Scalar", "zero_",
    # the activations of torch._aten.activations and their backwards (scalars besides)
    "leaky_relu", "leaky_relu_backward", "elu", "elu_backward", "celu", "hardtanh",
    "hardtanh_backward", "softplus", "softplus_backward", "hardsigmoid", "hardsigmoid_backward",
    "hardswish", "hardswish_backward", "mish", "mish_backward", "softshrink",
    "softshrink_backward", "hardshrink", "hardshrink_backward", "threshold",
    "threshold_backward", "log_sigmoid_forward", "log_sigmoid_backward",
)
_DIMS = (
    "_softmax", "_log_softmax", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp",
    "max.dim", "min.dim", "sort.stable", "sort", "topk", "select.int", "slice.Tensor", "narrow",
    "transpose.int", "squeeze.dim", "squeeze.dims", "unflatten.int",
    "movedim.int", "movedim.intlist", "diagonal", "unfold", "split.Tensor", "split_with_sizes",
    "unbind.int", "chunk", "flip", "linalg_vector_norm", "mean.dim", "var.correction",
    "std.correction", "glu", "all.dim", "any.dim", "logsumexp",
) + tuple(f"{r.name}.{r.overload}" if r.overload else r.name for r in _op_tables.REDUCTIONS)
_DIMS_ALIGNED = ("gather", "scatter", "scatter_reduce.two", "_softmax_backward_data",
                 "_log_softmax_backward_data", "glu_backward")
_LEADING = (
    "tril", "triu", "linalg_inv", "linalg_inv_ex", "linalg_det", "linalg_slogdet",
    "linalg_cholesky", "linalg_cholesky_ex", "linalg_eig", "linalg_eigvals", "_linalg_eigh",
    "_linalg_svd", "linalg_qr", "linalg_lu", "linalg_lu_factor_ex",
    # torch._aten.nn_layout: they pad / shuffle the trailing dims only
    "constant_pad_nd", "pixel_shuffle", "pixel_unshuffle",
)
_RANDOM = {
    "bernoulli": elementwise, "bernoulli.p": elementwise, "bernoulli_.float": elementwise,
    "bernoulli_.Tensor": elementwise, "uniform_": elementwise, "normal_": elementwise,
    "exponential_": elementwise, "geometric_": elementwise, "log_normal_": elementwise,
    "cauchy_": elementwise, "random_": elementwise, "random_.from": elementwise,
    "random_.to": elementwise, "rand_like": elementwise, "randn_like": elementwise,
    "rand_like.generator": elementwise, "randn_like.generator": elementwise,
    "randint_like.low_dtype": elementwise, "randint_like.low_generator_dtype": elementwise,
    "normal.Tensor_Tensor": elementwise, "normal.Tensor_float": elementwise,
    "normal.float_Tensor": elementwise,
}
_RANDOM_FACTORIES = ("rand", "rand.generator", "randn", "randn.generator", "randint.low",
                     "randint.low_generator", "randperm", "randperm.generator",
                     "normal.float_float", "multinomial")

RULES: dict[str, Rule] = {}
for _name in tuple(r.aten for r in _op_tables.POINTWISE) + _ELEMENTWISE_EXTRA:
    RULES[f"aten::{_name}"] = elementwise
RULES["prims::fill_"] = RULES["prims::copy_"] = elementwise
for _name in _DIMS:
    RULES[f"aten::{_name}"] = dims()
for _name in _DIMS_ALIGNED:
    RULES[f"aten::{_name}"] = dims(aligned=True)
for _name in _LEADING:
    RULES[f"aten::{_name}"] = leading_self
RULES["aten::upsample_nearest2d"] = samples_folded
RULES["aten::upsample_bilinear2d"] = samples_folded
RULES["aten::native_batch_norm"] = batch_norm  # torch._aten.normalization
RULES["aten::native_batch_norm_backward"] = batch_norm_backward
for _name in ("max_pool2d_with_indices", "max_pool2d_with_indices_backward", "avg_pool2d",
              "avg_pool2d_backward", "adaptive_max_pool2d", "adaptive_max_pool2d_backward",
              "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward"):
    RULES[f"aten::{_name}"] = leading_folded(4)  # torch._aten.pooling
RULES["aten::im2col"] = leading_folded(4)  # torch._aten.im2col
RULES["aten::col2im"] = leading_folded(3)
for _name, _rule in _RANDOM.items():
    RULES[f"aten::{_name}"] = random_batched(_rule)
RULES.update({
    "aten::argmax": flat_reduce, "aten::argmin": flat_reduce, "aten::prod.dim_int": flat_reduce,
    **{f"aten::{name}": whole_reduce for name in _WHOLE_SAMPLE},
    "aten::masked_fill.Scalar": masked_fill, "aten::linalg_cross": broadcast_dims,
    "aten::view": view_like, "aten::_unsafe_view": view_like, "aten::reshape": view_like,
    "aten::_reshape_alias": reshape_alias, "aten::expand": expand, "aten::repeat": repeat,
    "aten::permute": permute, "aten::t": transpose_2d, "aten::as_strided": as_strided,
    "aten::unsqueeze": unsqueeze,
    "aten::squeeze": squeeze_all, "aten::roll": roll, "aten::cat": cat,
    "aten::view.dtype": self_dim_last, "aten::view_as_real": self_dim_last,
    "aten::view_as_complex": self_dim_last, "aten::contiguous": leading,
    "aten::mm": mm, "aten::bmm": mm, "aten::mv": mv, "aten::dot": dot, "aten::vdot": dot,
    "aten::index_select": index_select, "aten::index.Tensor": index,
    "aten::linear": linear,
    "aten::embedding": embedding, "aten::embedding_dense_backward": embedding_dense_backward,
    "aten::index_put_": index_put,
    "aten::convolution": convolution, "aten::convolution_backward": convolution_backward,
    "aten::native_layer_norm": layer_norm,
    "aten::native_layer_norm_backward": layer_norm_backward,
    "aten::_thnn_fused_lstm_cell": rnn_cell, "aten::_thnn_fused_gru_cell": rnn_cell,
    "aten::_thnn_fused_lstm_cell_backward_impl": rnn_cell_backward,
    "aten::_thnn_fused_gru_cell_backward": rnn_cell_backward,
    "aten::_scaled_dot_product_flash_attention_for_cpu": attention,
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": attention,
    "aten::nll_loss_forward": nll_forward, "aten::_cross_entropy_forward": nll_forward,
    "aten::nll_loss_backward": nll_backward, "aten::_cross_entropy_backward": nll_backward,
    "aten::_local_scalar_dense": _no_item, "aten::is_nonzero": _no_control_flow,
    "aten::nonzero": _no_dynamic,
})


def _mean_all(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """x.mean() of a batched tensor: mean.dim over every logical dim."""
    return RULES["aten::mean.dim"](ctx, torch.ops.aten.mean.dim, (args[0], None), kwargs)


RULES["aten::mean"] = _mean_all


def _mse_loss(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """mse_loss of batched operands (of one logical shape): the unreduced loss of each sample,
    then each sample's mean or sum over its logical dims."""
    x, target = args[0], args[1]
    reduction = args[2] if len(args) > 2 else kwargs.get("reduction", 1)
    rank = max(ctx.rank(x), ctx.rank(target))
    squares = func(ctx.full(x), ctx.full(target), 0)
    if reduction == 0 or rank == 0:
        return squares
    dims = list(range(1, rank + 1))
    return squares.mean(dims) if reduction == 1 else squares.sum(dims)




def _mse_loss_backward(ctx: Level, func: Any, args: tuple[Any, ...],
                       kwargs: dict[str, Any]) -> Any:
    """mse_loss_backward of batched operands: ``2 g (x - t)``, divided by each sample's
    element count for a mean (``g`` is each sample's 0-d gradient unless unreduced)."""
    grad, x, target, reduction = args
    rank = max(ctx.rank(x), ctx.rank(target))
    x, target = ctx.full(x), ctx.full(target)
    grad = _align(ctx, ctx.full(grad), rank)
    count = 1
    for size in x.shape[1:]:
        count *= size
    scale = 2.0 / count if reduction == 1 and count else 2.0
    return (x - target) * grad * scale


RULES["aten::mse_loss"] = _mse_loss
RULES["aten::mse_loss_backward"] = _mse_loss_backward
for _name in _RANDOM_FACTORIES:
    RULES[f"aten::{_name}"] = random_batched(_fallback)

# random operators met with no batched argument: randomness decides
UNBATCHED: dict[str, Callable[..., Any]] = {
    f"aten::{n}": random_unbatched for n in tuple(_RANDOM) + _RANDOM_FACTORIES}
del _name, _rule


def _pointwise_loss(reduction_at: int) -> Rule:
    """A pointwise loss (``smooth_l1_loss``, ``binary_cross_entropy``, ...) of batched operands:
    the unreduced loss of all samples at once, then each sample's mean or sum over its logical
    dims. ``reduction_at``: the position of the ``reduction`` argument."""

    def rule(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        call = list(args) + [None] * max(0, reduction_at + 1 - len(args))
        reduction = args[reduction_at] if len(args) > reduction_at else kwargs.get("reduction", 1)
        kwargs = {k: v for k, v in kwargs.items() if k != "reduction"}
        rank = max(ctx.rank(a) for a in call if isinstance(a, Tensor))
        call = [_align(ctx, a, rank) if isinstance(a, Tensor) else a for a in call]
        call[reduction_at] = 0
        loss = func(*call, **kwargs)
        if reduction == 0 or rank == 0:
            return loss
        dims = list(range(1, rank + 1))
        return loss.mean(dims) if reduction == 1 else loss.sum(dims)

    return rule


def _pointwise_loss_backward(reduction_at: int) -> Rule:
    """A pointwise loss's backward of batched operands: each sample's gradient (0-d unless
    unreduced) divided by that sample's element count for a mean, then the unreduced backward
    of all samples at once."""

    def rule(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        call = list(args) + [None] * max(0, reduction_at + 1 - len(args))
        reduction = args[reduction_at] if len(args) > reduction_at else kwargs.get("reduction", 1)
        kwargs = {k: v for k, v in kwargs.items() if k != "reduction"}
        operands = [a for a in call[1:] if isinstance(a, Tensor)]
        rank = max(ctx.rank(a) for a in operands)
        call = [_align(ctx, a, rank) if isinstance(a, Tensor) else a for a in call]
        if reduction == 1:
            shape = torch.broadcast_shapes(*(tuple(ctx.full(a).shape) for a in operands))
            count = 1
            for size in shape[1:]:
                count *= size
            call[0] = call[0] / count if count else call[0]
        call[reduction_at] = 0
        return func(*call, **kwargs)

    return rule


for _name, _at in (("smooth_l1_loss", 2), ("huber_loss", 2), ("soft_margin_loss", 2),
                   ("binary_cross_entropy", 3), ("binary_cross_entropy_with_logits", 4)):
    RULES[f"aten::{_name}"] = _pointwise_loss(_at)
for _name, _at in (("smooth_l1_loss_backward", 3), ("huber_loss_backward", 3),
                   ("soft_margin_loss_backward", 3), ("binary_cross_entropy_backward", 4)):
    RULES[f"aten::{_name}"] = _pointwise_loss_backward(_at)


def _nll2d_rows(ctx: Level, x: Tensor, target: Tensor) -> tuple[Tensor, Tensor, tuple[int, ...]]:
    """Batched (N, C, H, W) scores and (N, H, W) targets as nll_loss_forward's batched rows
    (B, N * H * W, C) and (B, N * H * W); returns the physical (B, N, C, H, W) shape too."""
    xf, tf = ctx.full(x), ctx.full(target)
    b, c = xf.shape[0], xf.shape[2]
    rows = ctx.mark(xf.movedim(2, -1).reshape(b, -1, c))
    return rows, ctx.mark(tf.reshape(b, -1)), tuple(xf.shape)


def _nll2d_forward(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """nll_loss2d_forward of batched operands: nll_loss_forward's rule over the rows."""
    x, target, weight, reduction, ignore_index = args[:5]
    rows, target_rows, shape = _nll2d_rows(ctx, x, target)
    loss, total = nll_forward(ctx, torch.ops.aten.nll_loss_forward.default,
                              (rows, target_rows, weight, reduction, ignore_index), {})
    if reduction == _NONE:
        b, n, _, h, w = shape
        loss = loss.reshape(b, n, h, w)
    return loss, total


def _nll2d_backward(ctx: Level, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """nll_loss2d_backward of batched operands: nll_loss_backward's rule over the rows, then
    the class dim back in place."""
    grad, x, target, weight, reduction, ignore_index, total = args[:7]
    rows, target_rows, shape = _nll2d_rows(ctx, x, target)
    b, n, c, h, w = shape
    if reduction == _NONE:
        grad = ctx.mark(ctx.full(grad).reshape(b, -1))
    out = nll_backward(ctx, torch.ops.aten.nll_loss_backward.default,
                       (grad, rows, target_rows, weight, reduction, ignore_index, total), {})
    return out.reshape(b, n, h, w, c).movedim(-1, 2)


RULES["aten::nll_loss2d_forward"] = _nll2d_forward
RULES["aten::nll_loss2d_backward"] = _nll2d_backward


def _grid_sampler_rule(ctx: Level, func: Any, args: tuple[Any, ...],
                       kwargs: dict[str, Any]) -> Any:
    """grid_sampler_{2,3}d and their backward of batched operands: the vmapped dim folded into
    the sampler's own batch dim N (each sample's images meet only that sample's grids)."""
    backward = func.name.endswith("_backward")
    tensors = args[:3] if backward else args[:2]
    full = [ctx.full(t) for t in tensors]
    b, n = full[0].shape[0], full[0].shape[1]
    folded = [t.reshape((b * n,) + tuple(t.shape[2:])) for t in full]
    out = func(*folded, *args[len(tensors):], **kwargs)
    if backward:
        return tuple(o.reshape((b, n) + tuple(o.shape[1:])) for o in out)
    return out.reshape((b, n) + tuple(out.shape[1:]))


for _name in ("grid_sampler_2d", "grid_sampler_3d", "grid_sampler_2d_backward",
              "grid_sampler_3d_backward"):
    RULES[f"aten::{_name}"] = _grid_sampler_rule
