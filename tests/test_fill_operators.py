"""``fill_`` and ``zero_`` are PyTorch's aten operators (``aten::fill_.Scalar``,
``aten::fill_.Tensor``, ``aten::zero_``): a dispatch mode and vmap see them,
while a plain call outside modes writes directly; values, version counters and errors are the
same either way."""

from __future__ import annotations

import pytest
from dispatch_recording import CallNames

import torch
from torch.func import vmap


def _names(fn) -> list[str]:
    mode = CallNames()
    with mode:
        fn()
    return mode.names


def test_modes_see_the_aten_operators():
    t = torch.zeros(3)
    assert _names(lambda: t.fill_(2.5)) == ["aten.fill_.Scalar"]
    assert _names(lambda: t.zero_()) == ["aten.zero_.default"]
    value = torch.tensor(4.0)
    assert _names(lambda: t.fill_(value)) == ["aten.fill_.Tensor"]
    # PyTorch writes a number into a selected row with fill_ too (after select.int)
    grid = torch.zeros(2, 3)
    assert _names(lambda: grid.__setitem__(0, 1.0))[-1].startswith("aten.fill_.")


@pytest.mark.parametrize("in_mode", [False, True])
def test_values_versions_and_errors_agree(in_mode):
    def run():
        t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        version = t._version
        t[1].fill_(7.0)
        t[0].zero_()
        assert t.tolist() == [[0.0, 0.0, 0.0], [7.0, 7.0, 7.0]]
        assert t._version == version + 2
        i = torch.zeros(2, dtype=torch.int64)
        assert i.fill_(torch.tensor(3)).tolist() == [3, 3]
        with pytest.raises(RuntimeError, match="0-dimension value tensor"):
            t.fill_(torch.ones(2))
        with pytest.raises(TypeError, match="must be Number"):
            t.fill_("a")
        with pytest.raises(RuntimeError, match="without overflow"):
            t.fill_(1 + 2j)

    if in_mode:
        with CallNames():
            run()
    else:
        run()


def test_vmap_fills_each_sample_without_the_fallback():
    from torch._functorch import batched

    def f(x):
        y = x.clone()
        y.fill_(3.0)
        z = x.clone()
        z.zero_()
        return y + z

    before = dict(batched.fallback_counts)
    out = vmap(f)(torch.randn(4, 5))
    assert out.tolist() == [[3.0] * 5] * 4
    assert batched.fallback_counts == before


def test_overwritten_history_gets_zero_gradients():
    # PyTorch's CopyBackwards sends zeros to the history a copy_/fill_/zero_ overwrote: the
    # input's gradient is a zero tensor, not None
    for write in (lambda y: y.fill_(3.0), lambda y: y.zero_(),
                  lambda y: y.copy_(torch.full((3,), 4.0))):
        x = torch.ones(3, requires_grad=True)
        y = x * 2
        write(y)
        y.sum().backward()
        assert x.grad is not None and x.grad.tolist() == [0.0, 0.0, 0.0]
    x = torch.ones(3, requires_grad=True)
    z = torch.ones(3, requires_grad=True)
    y = x * 2
    y.copy_(z * 3)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0] and z.grad.tolist() == [3.0, 3.0, 3.0]
    # a view written in place: only the written elements' gradient is cut
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y[0].fill_(5.0)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 2.0]
    # a tensor that did not require grad before the copy has no earlier history to feed
    w = torch.zeros(3)
    w.copy_(z * 2)
    w.sum().backward()
    assert z.grad.tolist() == [5.0, 5.0, 5.0]
