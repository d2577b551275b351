"""Views and meta computations accept symbolic sizes (docs/architecture.md): shapes stay expressions
in the symbols, their hints are the concrete sizes, and conditions taken on the way are
recorded as guards."""

from __future__ import annotations

import pytest

import torch
from torch._core.symbolic import ShapeEnv, SymInt


@pytest.fixture
def env():
    return ShapeEnv()


def hints(shape):
    return [s.node.hint if isinstance(s, SymInt) else s for s in shape]


def test_meta_tensor_keeps_symbolic_sizes(env):
    s0 = env.create_symbol(4)
    with env:
        t = torch.empty(s0, 3, device="meta")
        assert isinstance(t.shape[0], SymInt) and hints(t.shape) == [4, 3]
        assert t.stride() == (3, 1)
        assert isinstance(t.numel(), SymInt) and t.numel().node.hint == 12


@pytest.mark.parametrize(("make", "want_shape", "symbolic_dims"), [
    (lambda t, s: t.view(-1), [12], [0]),
    (lambda t, s: t.t(), [3, 4], [1]),
    (lambda t, s: t.unsqueeze(0), [1, 4, 3], [1]),
    (lambda t, s: t.unsqueeze(0).expand(2, s, 3), [2, 4, 3], [1]),
    (lambda t, s: t.reshape(3, s), [3, 4], [1]),
    (lambda t, s: t.flatten(), [12], [0]),
    (lambda t, s: t.select(1, 0), [4], [0]),
    (lambda t, s: t.permute(1, 0), [3, 4], [1]),
    (lambda t, s: t + t, [4, 3], [0]),
], ids=["view", "t", "unsqueeze", "expand", "reshape", "flatten", "select", "permute", "add"])
def test_views_stay_symbolic(env, make, want_shape, symbolic_dims):
    s0 = env.create_symbol(4)
    with env:
        out = make(torch.empty(s0, 3, device="meta"), s0)
    assert hints(out.shape) == want_shape
    for d in symbolic_dims:
        assert isinstance(out.shape[d], SymInt), (d, out.shape)


def test_conditions_become_guards_that_fail_for_other_sizes(env):
    s0 = env.create_symbol(4)
    with env:
        torch.empty(s0, 3, device="meta").view(-1)
    assert env.guards  # e.g. the size is not 1, not negative
    assert env.evaluate_guards({"s0": 4}) is True
    assert env.evaluate_guards({"s0": 1}) is False
