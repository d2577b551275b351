"""nn modules call nn.functional through its __torch_function__ entry, as PyTorch's do: a
TorchFunctionMode (and so torch.compile's capture) sees ``F.embedding`` when
``nn.Embedding`` runs, not the operators below it."""

from __future__ import annotations

import pytest

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode


class Seen(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


CASES = [
    (lambda: nn.Embedding(5, 3), lambda: torch.tensor([[0, 4]]), "embedding"),
    (lambda: nn.EmbeddingBag(5, 3), lambda: torch.tensor([[0, 4]]), "embedding_bag"),
    (lambda: nn.GroupNorm(2, 4), lambda: torch.randn(2, 4, 3), "group_norm"),
    (lambda: nn.InstanceNorm1d(4), lambda: torch.randn(2, 4, 3), "instance_norm"),
    (lambda: nn.RMSNorm(3), lambda: torch.randn(2, 3), "rms_norm"),
    (lambda: nn.LocalResponseNorm(2), lambda: torch.randn(1, 4, 3), "local_response_norm"),
    (lambda: nn.Upsample(scale_factor=2), lambda: torch.randn(1, 1, 2, 2), "interpolate"),
    (lambda: nn.PixelShuffle(2), lambda: torch.randn(1, 4, 2, 2), "pixel_shuffle"),
    (lambda: nn.PixelUnshuffle(2), lambda: torch.randn(1, 1, 4, 4), "pixel_unshuffle"),
    (lambda: nn.ChannelShuffle(2), lambda: torch.randn(1, 4, 2, 2), "channel_shuffle"),
    (lambda: nn.Dropout2d(0.5), lambda: torch.randn(1, 2, 3, 3), "dropout2d"),
    (lambda: nn.AlphaDropout(0.5), lambda: torch.randn(4, 3), "alpha_dropout"),
    (lambda: nn.Unfold(2), lambda: torch.randn(1, 1, 3, 3), "unfold"),
    (lambda: nn.Fold((3, 3), 2), lambda: torch.randn(1, 4, 4), "fold"),
    (lambda: nn.CosineSimilarity(), lambda: torch.randn(2, 3), "cosine_similarity"),
]


@pytest.mark.parametrize("make,data,name", CASES, ids=[c[2] for c in CASES])
def test_a_module_calls_its_functional_through_the_protocol(make, data, name):
    module, x = make(), data()
    args = (x, x) if name == "cosine_similarity" else (x,)
    torch.manual_seed(0)
    expected = module(*args)
    with Seen() as seen:
        torch.manual_seed(0)
        out = module(*args)
    assert name in seen.names
    assert getattr(F, name).__name__ == name
    if "dropout" not in name:
        torch.testing.assert_close(out, expected)


def test_compiling_an_embedding_of_computed_indices_makes_one_graph():
    embedding = nn.Embedding(10, 4)

    def positions_and_tokens(idx):
        return embedding(idx) + embedding(torch.arange(idx.shape[1]))

    for grad in (True, False):
        with torch.set_grad_enabled(grad):
            explained = torch._dynamo.explain(positions_and_tokens)(torch.tensor([[1, 2, 3]]))
            assert (explained.graph_count, explained.graph_break_count) == (1, 0)
