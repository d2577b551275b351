"""cat's plans (``torch._aten.shape._CAT_PLANS``): a repeated cat of the same interned input
layouts replays the first call's output layout and piece offsets. Each case runs twice (the
second call is the planned one) and is compared with values written out here with numpy."""

from __future__ import annotations

import numpy as np
import pytest

import torch
from torch._aten import shape as _shape
from torch._core import dispatch as _dispatch


def _inputs(shapes, dtypes):
    return [torch.arange(int(np.prod(s)), dtype=dt).reshape(s) + 10 * k
            for k, (s, dt) in enumerate(zip(shapes, dtypes))]


CASES = [
    # (shapes, dtypes, dim)
    ([(2, 3), (2, 3), (2, 3), (2, 3)], [torch.float32] * 4, 1),  # a chunk's backward
    ([(2, 3), (4, 3)], [torch.float32] * 2, 0),
    ([(2, 3), (2, 1), (2, 0), (2, 2)], [torch.float32] * 4, -1),  # an empty piece in between
    ([(2, 3), (0,), (1, 3)], [torch.float32] * 3, 0),  # a 1-d empty tensor is skipped
    ([(2, 2), (2, 2)], [torch.int64, torch.float64], 1),  # promoted to float64
    ([(3,), (2,)], [torch.float32, torch.float32], 0),
]


@pytest.mark.parametrize("shapes,dtypes,dim", CASES)
def test_a_repeated_cat_is_planned_and_gives_the_same_tensor(shapes, dtypes, dim):
    xs = _inputs(shapes, dtypes)
    kept = [np.asarray(x.tolist(), dtype=np.float64).reshape(tuple(x.shape)) for x in xs]
    expected = np.concatenate([k for k in kept if k.shape != (0,)], axis=dim)
    first = torch.cat(xs, dim)
    key = (dim, *[x._interned_layout for x in xs])
    assert key in _shape._CAT_PLANS
    for x in xs:  # the plan must read the inputs' values at each call
        x.add_(1)
    second = torch.cat(xs, dim)
    for out, shift in ((first, 0), (second, 1)):
        assert out.shape == expected.shape
        assert out.stride() == torch.empty(expected.shape).stride()
        assert out.dtype == first.dtype
        np.testing.assert_array_equal(np.asarray(out.tolist()).reshape(expected.shape),
                                      expected + shift)
    assert second.data_ptr() != first.data_ptr()
    assert all(second.data_ptr() != x.data_ptr() for x in xs)
    assert second._version == 0


def test_a_planned_cat_still_refuses_other_shapes():
    a, b = torch.zeros(2, 3), torch.zeros(2, 3)
    torch.cat([a, b], 1)
    torch.cat([a, b], 1)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        torch.cat([a, torch.zeros(3, 3)], 1)
    with pytest.raises(IndexError):
        torch.cat([a, b], 2)
    with pytest.raises(TypeError, match="expected Tensor as element 1"):
        torch.cat([a, 1.0], 1)


def test_strided_inputs_are_not_planned_and_are_copied_right():
    base = torch.arange(12.0).reshape(3, 4)
    xs = [base.t(), base.t()]  # not contiguous: no interned layout
    before = len(_shape._CAT_PLANS)
    out = torch.cat(xs, 0)
    assert len(_shape._CAT_PLANS) == before
    col = np.arange(12.0).reshape(3, 4).T
    np.testing.assert_array_equal(np.asarray(out.tolist()), np.concatenate([col, col], 0))


def test_cat_plans_are_dropped_when_kernels_change():
    a = torch.ones(2, 2)
    torch.cat([a, a], 0)
    assert _shape._CAT_PLANS
    _dispatch._invalidate()
    assert not _shape._CAT_PLANS


def test_a_planned_cat_with_grad_gives_each_input_its_slice():
    a = torch.ones(2, 3, requires_grad=True)
    b = torch.ones(2, 2, requires_grad=True)
    weights = torch.arange(10.0).reshape(2, 5)
    for _ in range(2):  # the second call runs the plan
        a.grad = b.grad = None
        (torch.cat([a, b], 1) * weights).sum().backward()
        assert a.grad.tolist() == [[0.0, 1.0, 2.0], [5.0, 6.0, 7.0]]
        assert b.grad.tolist() == [[3.0, 4.0], [8.0, 9.0]]


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_a_repeated_stack_of_contiguous_tensors_takes_a_cat_plan(dim):
    """stack's pieces (unsqueezed views of contiguous tensors) carry their interned layout, so
    the cat they go to is planned; the planned stack reads each call's values, a piece at a
    storage offset and a strided piece included."""
    base = torch.arange(40, dtype=torch.float32)
    x, y = base[:12].reshape(3, 4), base[20:32].reshape(3, 4)  # y at a storage offset
    strided = base[:24].reshape(4, 6)[:3, 1:5]
    for pieces in ([x, y], [y, x, y], [x, strided]):
        for step in range(3):
            for p in pieces:
                p.add_(step)
            got = torch.stack(pieces, dim)
            want = np.stack([np.asarray(p.tolist(), dtype=np.float32) for p in pieces], dim)
            np.testing.assert_array_equal(np.asarray(got.tolist(), dtype=np.float32), want)
            assert got.is_contiguous()
    fresh = [torch.ones(3, 4), torch.zeros(3, 4)]  # tensors of an interned layout
    d = dim % 3
    piece = _shape._interned((3, 4)[:d] + (1,) + (3, 4)[d:], torch.float32, x.device)
    torch.stack(fresh, dim)
    if not _shape._state.keys_active:  # (once a __torch_dispatch__ class exists, stack
        # dispatches each unsqueeze, whose views carry a geometry: the checked cat)
        assert (d, piece, piece) in _shape._CAT_PLANS
    np.testing.assert_array_equal(torch.stack(fresh, dim).sum(d).tolist(), np.ones((3, 4)))
