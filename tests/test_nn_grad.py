"""``torch.nn.grad``: a convolution's input and weight gradients as functions (what custom
autograd Functions call, as PyTorch's fused conv + batch-norm tutorial does), checked against
autograd through ``F.conv{n}d``."""

from __future__ import annotations

import numpy as np
import pytest

import torch
import torch.nn.functional as F

_CONVS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize(("stride", "padding", "dilation", "groups"),
                         [(1, 0, 1, 1), (2, 1, 1, 2), (1, 2, 2, 1)])
def test_gradients_match_autograd(n, stride, padding, dilation, groups) -> None:
    rs = np.random.RandomState(n)
    x = torch.tensor(rs.standard_normal((2, 4) + (7,) * n)).requires_grad_()
    w = torch.tensor(rs.standard_normal((6, 4 // groups) + (3,) * n)).requires_grad_()
    y = _CONVS[n](x, w, stride=stride, padding=padding, dilation=dilation, groups=groups)
    g = torch.tensor(rs.standard_normal(tuple(y.shape)))
    gx, gw = torch.autograd.grad(y, (x, w), g)
    conv_input = getattr(torch.nn.grad, f"conv{n}d_input")
    conv_weight = getattr(torch.nn.grad, f"conv{n}d_weight")
    ix = conv_input(x.shape, w, g, stride=stride, padding=padding, dilation=dilation,
                    groups=groups)
    iw = conv_weight(x, w.shape, g, stride=stride, padding=padding, dilation=dilation,
                     groups=groups)
    assert ix.shape == x.shape and iw.shape == w.shape
    assert torch.allclose(ix, gx) and torch.allclose(iw, gw)


def test_tuple_arguments_and_errors() -> None:
    x = torch.randn(1, 2, 5, 6)
    w = torch.randn(3, 2, 3, 2)
    g = F.conv2d(x, w, stride=(1, 2), padding=(1, 0))
    gi = torch.nn.grad.conv2d_input(x.shape, w, torch.ones_like(g), stride=(1, 2),
                                    padding=(1, 0))
    assert gi.shape == x.shape
    with pytest.raises(RuntimeError, match="stride"):
        torch.nn.grad.conv2d_input(x.shape, w, torch.ones_like(g), stride=(1, 2, 3))
    with pytest.raises(RuntimeError):
        torch.nn.grad.conv2d_weight(x, w.shape, torch.ones(3, 4))
