"""``nn.AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2016)."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor
from torch.nn import functional as F

from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of targets under a softmax split into a frequent-class head and
    rarer-class clusters.

    ``cutoffs`` splits the classes into ``[0, c0)`` (the shortlist, scored by the head), and
    ``[c0, c1)``, ..., ``[c_last, n_classes)`` (the clusters). The head has one output per
    shortlist class plus one per cluster; cluster ``i`` has a two-layer projection through
    ``in_features // div_value ** (i + 1)`` features. The log-probability of a class in a
    cluster is the head's log-probability of the cluster plus the cluster's own.
    ``forward`` returns ``(output, loss)``: each target's log-probability and the mean of
    their negatives.
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, size, bias=False, **factory)))

    def reset_parameters(self) -> None:
        """Re-initialise the head and every cluster projection."""
        self.head.reset_parameters()
        for projection, output in self.tail:
            projection.reset_parameters()
            output.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        """``(output, loss)``: the log-probability of each target and their negated mean."""
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        if target.numel() and (int(target.min()) < 0 or int(target.max()) >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        # the head column each row reads: its class in the shortlist, else its cluster's slot
        head_column = target.clone()
        output = torch.zeros(target.shape[0], dtype=input.dtype, device=input.device)
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            rows = ((target >= low) & (target < high)).nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            head_column = head_column.index_fill(0, rows, self.shortlist_size + i)
            cluster_logprob = F.log_softmax(self.tail[i](input.index_select(0, rows)), dim=1)
            local = cluster_logprob.gather(1, (target.index_select(0, rows) - low).unsqueeze(1))
            output = output.index_add(0, rows, local.reshape(-1))
        output = output + head_logprob.gather(1, head_column.unsqueeze(1)).reshape(-1)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob
                         + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return torch.cat(parts, dim=1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of all ``n_classes`` classes for each row of ``input``
        (``(N, in_features)`` to ``(N, n_classes)``)."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most probable class of each row: ``log_prob(input).argmax(1)``, computing the
        clusters only for rows whose head prediction is not a shortlist class."""
        head_output = self.head(input)
        output = torch.argmax(head_output, dim=1)
        outside = output >= self.shortlist_size
        if not bool(outside.any()):
            return output
        if bool(outside.all()):
            return torch.argmax(self._full_log_prob(input, head_output), dim=1)
        full = self._full_log_prob(input[outside], head_output[outside])
        output[outside] = torch.argmax(full, dim=1)
        return output
