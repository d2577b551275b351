"""``torch.nn.attention.flex_attention``: attention with a score function and a mask function.

``score_mod(score, b, h, q_idx, kv_idx)`` rewrites each attention score and
``mask_mod(b, h, q_idx, kv_idx)`` says which pairs take part. PyTorch compiles them into a
block-sparse kernel; here both are evaluated densely by broadcasting: the index arguments are
``arange`` tensors shaped to broadcast to (B, H, Q, KV), so a function written with tensor
operations (comparisons, arithmetic, indexing a tensor by them) computes the whole grid in one
call. A :class:`BlockMask` holds that dense grid; its block-sparse fields are not kept.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple, TypedDict

import torch
from torch import Tensor

__all__ = ["AuxOutput", "AuxRequest", "BlockMask", "FlexKernelOptions", "and_masks",
           "create_block_mask", "create_mask", "flex_attention", "noop_mask", "or_masks"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128


class AuxRequest(NamedTuple):
    """Which extra outputs :func:`flex_attention` should return (``return_aux=``)."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The extra outputs asked for with an :class:`AuxRequest`; None where not asked."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


class FlexKernelOptions(TypedDict, total=False):
    """Tuning options of PyTorch's compiled kernel; accepted and unused by the dense path."""


def noop_mask(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    """The mask that keeps every pair."""
    return batch.new_ones((), dtype=torch.bool)


def and_masks(*mask_mods: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The mask that keeps a pair when every one of ``mask_mods`` does."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def mask_mod(b: Tensor, h: Tensor, q: Tensor, kv: Tensor) -> Tensor:
        result = b.new_ones((), dtype=torch.bool)
        for mod in mask_mods:
            result = result & mod(b, h, q, kv)
        return result

    return mask_mod


def or_masks(*mask_mods: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The mask that keeps a pair when any of ``mask_mods`` does."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def mask_mod(b: Tensor, h: Tensor, q: Tensor, kv: Tensor) -> Tensor:
        result = b.new_zeros((), dtype=torch.bool)
        for mod in mask_mods:
            result = result | mod(b, h, q, kv)
        return result

    return mask_mod


def _grid(B: int, H: int, Q: int, KV: int, device: Any) -> tuple[Tensor, ...]:
    """Index tensors shaped (B,1,1,1), (1,H,1,1), (1,1,Q,1), (1,1,1,KV)."""
    def arange(n: int, dim: int) -> Tensor:
        shape = [1, 1, 1, 1]
        shape[dim] = n
        return torch.arange(n, device=device).view(shape)

    return arange(B, 0), arange(H, 1), arange(Q, 2), arange(KV, 3)


def create_mask(mod_fn: Callable[..., Tensor], B: int | None, H: int | None, Q_LEN: int,
                KV_LEN: int, device: Any = "cpu") -> Tensor:
    """The dense boolean mask (B, H, Q_LEN, KV_LEN) of a mask function (B or H None: 1)."""
    b, h, q, kv = _grid(B or 1, H or 1, Q_LEN, KV_LEN, device)
    mask = mod_fn(b, h, q, kv)
    return mask.to(torch.bool).expand(B or 1, H or 1, Q_LEN, KV_LEN)


class BlockMask:
    """Which (query, key) pairs take part, as made by :func:`create_block_mask`.

    PyTorch's holds block-sparse indices for its kernel; this one holds the dense mask
    (``mask``, (B, H, Q_LEN, KV_LEN)), its sequence lengths, block size and ``mask_mod``.
    """

    def __init__(self, mask: Tensor, BLOCK_SIZE: tuple[int, int] = (128, 128),
                 mask_mod: Callable[..., Tensor] = noop_mask) -> None:
        """:param mask: the dense boolean mask, (B, H, Q_LEN, KV_LEN)."""
        self.mask = mask
        self.seq_lengths = (mask.shape[-2], mask.shape[-1])
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """(B, H, Q_LEN, KV_LEN)."""
        return tuple(self.mask.shape)  # type: ignore[return-value]

    def to_dense(self) -> Tensor:
        """The dense boolean mask."""
        return self.mask

    def to(self, device: Any) -> BlockMask:
        """This mask on ``device``."""
        return BlockMask(self.mask.to(device), self.BLOCK_SIZE, self.mask_mod)

    def __repr__(self) -> str:
        return f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%)"

    def sparsity(self) -> float:
        """The percentage of pairs masked out."""
        return 100.0 * (1.0 - self.mask.float().mean().item())


def create_block_mask(mask_mod: Callable[..., Tensor], B: int | None, H: int | None, Q_LEN: int,
                      KV_LEN: int, device: Any = None,
                      BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile: bool = False, **kwargs: Any) -> BlockMask:
    """A :class:`BlockMask` from a mask function, evaluated over the whole grid."""
    block = BLOCK_SIZE if isinstance(BLOCK_SIZE, tuple) else (BLOCK_SIZE, BLOCK_SIZE)
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device or "cpu")
    return BlockMask(mask, block, mask_mod)


def flex_attention(query: Tensor, key: Tensor, value: Tensor,
                   score_mod: Callable[..., Tensor] | None = None,
                   block_mask: BlockMask | None = None, scale: float | None = None,
                   enable_gqa: bool = False, return_lse: bool = False,
                   kernel_options: dict[str, Any] | None = None, *,
                   return_aux: AuxRequest | None = None) -> Any:
    """``softmax(score_mod(q @ k^T * scale)) @ v`` over the pairs ``block_mask`` keeps.

    :param query: (B, Hq, L, E); ``key`` (B, Hkv, S, E); ``value`` (B, Hkv, S, Ev).
    :param enable_gqa: allow Hq to be a multiple of Hkv (each key/value head serves a group).
    :param return_lse: also return the log-sum-exp of the scores per query, (B, Hq, L).
    :param return_aux: also return an :class:`AuxOutput` with what it asks for (the
        log-sum-exp, the largest score per query).
    :returns: the output (B, Hq, L, Ev), and the log-sum-exp or the :class:`AuxOutput` when
        asked.
    """
    B, Hq, L, E = query.shape
    Hkv, S = key.shape[1], key.shape[2]
    if Hq != Hkv:
        if not enable_gqa or Hq % Hkv:
            raise ValueError(f"Expect query and key/value to have the same number of heads but "
                             f"got Hq={Hq} and Hkv={Hkv}. Try setting enable_gqa=True for GQA.")
        key = key.repeat_interleave(Hq // Hkv, dim=1)
        value = value.repeat_interleave(Hq // Hkv, dim=1)
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    # float32 scores for half-precision inputs, as PyTorch's kernel accumulates
    scores = (query.float() @ key.float().transpose(-2, -1)) * scale
    if score_mod is not None:
        scores = score_mod(scores, *_grid(B, Hq, L, S, query.device))
    if block_mask is not None:
        scores = scores.masked_fill(~block_mask.mask, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    # a query with every key masked out gets zeros, not NaN (PyTorch's kernel does too)
    weights = torch.exp(scores - lse.unsqueeze(-1)).nan_to_num(0.0)
    out = (weights @ value.float()).to(query.dtype)
    if return_aux is not None:
        max_scores = scores.amax(dim=-1) if return_aux.max_scores else None
        return out, AuxOutput(lse if return_aux.lse else None, max_scores)
    return (out, lse) if return_lse else out
