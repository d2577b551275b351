"""How a DTensor lies on one mesh dimension: :class:`Shard` (split along a dimension),
:class:`Replicate` (a full copy on each rank), :class:`Partial` (pending a reduction)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Partial", "Placement", "Replicate", "Shard", "_StridedShard"]


class Placement:
    """A DTensor's placement on one mesh dimension."""

    def is_shard(self, dim: int | None = None) -> bool:
        """Whether this is a :class:`Shard` (on ``dim`` when given)."""
        return isinstance(self, Shard) and (dim is None or self.dim == dim)

    def is_replicate(self) -> bool:
        """Whether this is :class:`Replicate`."""
        return isinstance(self, Replicate)

    def is_partial(self) -> bool:
        """Whether this is :class:`Partial`."""
        return isinstance(self, Partial)


@dataclass(frozen=True)
class Shard(Placement):
    """Split along tensor dimension ``dim``, one contiguous chunk per rank."""

    dim: int

    @staticmethod
    def local_shard_size_and_offset(size_on_dim: int, num_chunks: int,
                                    rank: int) -> tuple[int, int]:
        """The size and start of rank ``rank``'s chunk when ``size_on_dim`` is split in
        ``num_chunks`` (the last chunks may be smaller or empty, as ``torch.chunk``)."""
        chunk = -(-size_on_dim // num_chunks)
        start = min(chunk * rank, size_on_dim)
        return min(chunk, size_on_dim - start), start


@dataclass(frozen=True)
class Replicate(Placement):
    """A full copy on every rank."""


@dataclass(frozen=True)
class Partial(Placement):
    """Each rank holds a partial value; the tensor is their reduction (``reduce_op``)."""

    reduce_op: str = "sum"


@dataclass(frozen=True)
class _StridedShard(Shard):
    """A Shard whose chunks are interleaved ``split_factor`` ways (FSDP over TP)."""

    split_factor: int = 1
