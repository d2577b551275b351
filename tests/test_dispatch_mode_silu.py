"""F.silu reaches PyTorch's ``aten::silu`` operator under a dispatch mode, with its formula's
gradient.

The expected call list was recorded with real PyTorch 2.13 (CPU) by running ``F.silu(x)`` under
a TorchDispatchMode that appends ``str(func)`` of each call: ``['aten.silu.default']``.
"""

from dispatch_recording import CallNames

import torch
import torch.nn.functional as F


def test_silu_is_one_aten_call():
    x = torch.randn(3, 4)
    with CallNames() as recorder:
        F.silu(x)
    assert recorder.names == ["aten.silu.default"]


def test_silu_gradient_matches_formula():
    x = torch.tensor([-2.0, -0.5, 0.0, 1.5], dtype=torch.float64, requires_grad=True)
    F.silu(x).sum().backward()
    s = 1 / (1 + torch.exp(-x.detach()))
    torch.testing.assert_close(x.grad, s * (1 + x.detach() * (1 - s)))
    assert torch.autograd.gradgradcheck(F.silu, (x,))
