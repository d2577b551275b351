"""``torch.nn.utils.rnn``: variable-length batches for the recurrent layers.

A ``PackedSequence`` stores a batch of sequences sorted by decreasing length, time step by time
step: ``data`` is the concatenation over t of the rows of the sequences still running at t, and
``batch_sizes[t]`` is how many rows that step has. ``sorted_indices`` maps the packed order to
the caller's batch order (``None`` when the batch was already sorted) and ``unsorted_indices`` is
its inverse.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import torch
from torch import Tensor

__all__ = [
    "PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence",
    "pad_packed_sequence", "pad_sequence", "unpack_sequence", "unpad_sequence",
]


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation ``q`` with ``q[permutation[i]] = i`` (``None`` stays ``None``)."""
    if permutation is None:
        return None
    output = torch.empty_like(permutation)
    output.scatter_(0, permutation, torch.arange(permutation.numel(), dtype=permutation.dtype,
                                                 device=permutation.device))
    return output


class PackedSequence(_PackedSequenceBase):
    """Holds the packed data and the batch size of each time step of a packed batch (see the
    module docstring); build one with :func:`pack_padded_sequence` or :func:`pack_sequence`."""

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            # PackedSequence(*tuple_of_four) is also accepted, as in PyTorch
            data, batch_sizes = data[0], data[1]
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence "
                             "should never be created manually. They should be instantiated by "
                             "functions like pack_sequence and pack_padded_sequences in "
                             "nn.utils.rnn. https://pytorch.org/docs/stable/nn.html"
                             "#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Moves/casts ``data`` (and the index tensors to ``data``'s device)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices = (None if self.sorted_indices is None
                          else self.sorted_indices.to(data.device))
        unsorted_indices = (None if self.unsorted_indices is None
                            else self.unsorted_indices.to(data.device))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cuda", *args, **kwargs)

    def double(self) -> PackedSequence:
        return self.to(dtype=torch.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=torch.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=torch.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=torch.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=torch.int32)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def _lengths_list(lengths: Any) -> list[int]:
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.reshape(-1).tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input: Tensor, lengths: Tensor | Sequence[int],
                         batch_first: bool = False, enforce_sorted: bool = True
                         ) -> PackedSequence:
    """Packs a padded batch ``input`` of shape (T, B, *) (or (B, T, *) with ``batch_first``)
    whose sequence ``b`` has ``lengths[b]`` valid steps. With ``enforce_sorted`` the lengths must
    be decreasing; otherwise the batch is sorted here and the permutation is recorded."""
    lens = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    if len(lens) != input.shape[batch_dim]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={input.shape[batch_dim]})")
    if enforce_sorted:
        if any(lens[i] < lens[i + 1] for i in range(len(lens) - 1)):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        sorted_indices = None
    else:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])  # stable, like PyTorch
        sorted_indices = torch.tensor(order, dtype=torch.int64, device=input.device)
        lens = [lens[i] for i in order]
        input = input.index_select(batch_dim, sorted_indices)
    if lens and lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if batch_first:
        input = input.transpose(0, 1)
    max_len = lens[0] if lens else 0
    if max_len > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be at least {max_len}, but got "
                           f"{input.shape[0]}")
    sizes = [sum(1 for n in lens if n > t) for t in range(max_len)]
    # one gather of the rows (t, b < sizes[t]): its backward is one scatter, where slicing
    # step by step would give autograd one full-size gradient per step
    batch = input.shape[1]
    rows = torch.tensor([t * batch + b for t, bs in enumerate(sizes) for b in range(bs)],
                        dtype=torch.int64, device=input.device)
    data = input.reshape(input.shape[0] * batch, *input.shape[2:]).index_select(0, rows)
    return PackedSequence(data, torch.tensor(sizes, dtype=torch.int64), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None
                        ) -> tuple[Tensor, Tensor]:
    """Inverse of :func:`pack_padded_sequence`: returns the padded batch (T, B, *) (or (B, T, *))
    in the caller's batch order and the lengths (an int64 tensor)."""
    sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    data = sequence.data
    max_len = len(sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_len}")
    else:
        total_length = max_len
    batch = sizes[0] if sizes else 0
    # gather every (t, b) of the padded result from the data rows plus one padding row
    # (index len(data)); differentiable with a linear-time backward
    rows = [len(data)] * (total_length * batch)
    offset = 0
    for t, bs in enumerate(sizes):
        rows[t * batch:t * batch + bs] = range(offset, offset + bs)
        offset += bs
    source = torch.cat([data, data.new_full((1, *data.shape[1:]), padding_value)], 0)
    out = source.index_select(0, torch.tensor(rows, dtype=torch.int64, device=data.device))
    out = out.reshape(total_length, batch, *data.shape[1:])
    lens = [sum(1 for bs in sizes if bs > b) for b in range(batch)]
    lengths = torch.tensor(lens, dtype=torch.int64)
    if sequence.unsorted_indices is not None:
        out = out.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices.to(lengths.device))
    if batch_first:
        out = out.transpose(0, 1)
    return out, lengths


def pad_sequence(sequences: Tensor | Iterable[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stacks tensors of shape (L_i, *) into (T, B, *) (or (B, T, *)), padding each to the
    longest with ``padding_value`` on the ``padding_side`` ('right' or 'left')."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    seqs = list(sequences.unbind(0) if isinstance(sequences, Tensor) else sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.shape[0] for s in seqs)
    trailing = tuple(seqs[0].shape[1:])
    # one gather from the concatenated sequences plus a padding row (a linear-time backward)
    total = sum(s.shape[0] for s in seqs)
    rows: list[int] = []
    offset = 0
    for s in seqs:
        n = s.shape[0]
        pad = [total] * (max_len - n)
        rows += (list(range(offset, offset + n)) + pad if padding_side == "right"
                 else pad + list(range(offset, offset + n)))
        offset += n
    source = torch.cat([*seqs, seqs[0].new_full((1, *trailing), padding_value)], 0)
    out = source.index_select(0, torch.tensor(rows, dtype=torch.int64,
                                              device=source.device))
    out = out.reshape(len(seqs), max_len, *trailing)
    return out if batch_first else out.transpose(0, 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor | Sequence[int],
                   batch_first: bool = False) -> list[Tensor]:
    """Splits a padded batch back into the list of its sequences (each (L_i, *))."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_lengths_list(lengths))]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Packs a list of tensors (L_i, *) (decreasing lengths unless ``enforce_sorted=False``)."""
    lengths = torch.tensor([s.shape[0] for s in sequences], dtype=torch.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a ``PackedSequence`` holds, in the caller's batch order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
