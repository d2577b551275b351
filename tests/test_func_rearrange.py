"""torch.func.rearrange (einops-style), checked against the same rearrangement spelt with
numpy's reshape and transpose."""

import numpy as np
import pytest

import torch
from torch.func import rearrange

X = np.arange(2 * 3 * 4 * 6, dtype=np.float64).reshape(2, 3, 4, 6)


def _t(a):
    return torch.tensor(a)


@pytest.mark.parametrize(("pattern", "lengths", "expected"), [
    ("b c h w -> b h w c", {}, X.transpose(0, 2, 3, 1)),
    ("b c h w -> (b c) h w", {}, X.reshape(6, 4, 6)),
    ("b c h (w2 k) -> b c h w2 k", {"k": 2}, X.reshape(2, 3, 4, 3, 2)),
    ("b c (h1 h2) w -> b (h2 c) h1 w", {"h1": 2},
     X.reshape(2, 3, 2, 2, 6).transpose(0, 3, 1, 2, 4).reshape(2, 6, 2, 6)),
    ("b ... w -> w ... b", {}, X.transpose(3, 1, 2, 0)),
    ("b ... -> b (...)", {}, X.reshape(2, 72)),
    ("b c h w -> b c 1 h w", {}, X.reshape(2, 3, 1, 4, 6)),
])
def test_matches_numpy(pattern, lengths, expected):
    out = rearrange(_t(X), pattern, **lengths)
    assert out.shape == expected.shape
    assert np.array_equal(out.numpy(), expected)


def test_list_of_tensors_is_stacked():
    parts = [_t(X[i]) for i in range(2)]
    out = rearrange(parts, "n c h w -> c n h w")
    assert np.array_equal(out.numpy(), X.transpose(1, 0, 2, 3))


@pytest.mark.parametrize(("pattern", "lengths"), [
    ("b c h w -> b c h", {}),             # a name lost
    ("b c h -> b c h", {}),               # wrong dimension count
    ("b c (h w) k -> b c h w k", {}),     # two unknown sizes in a group
    ("b c (h1 h2) w -> b c h1 h2 w", {"h1": 3}),  # 4 does not split by 3
    ("b c h w", {}),                      # no arrow
])
def test_errors(pattern, lengths):
    with pytest.raises(ValueError):
        rearrange(_t(X), pattern, **lengths)
