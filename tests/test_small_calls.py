"""Small repeated calls: torch.Size's tuple behaviour, the device of a tensor-list call, and
the plan of strided views keyed by their geometry."""

import pytest

import torch
from torch._core import dispatch as _dispatch


def test_size_index_gives_int_slice_and_sums_give_size():
    s = torch.Size([2, 3, 4])
    assert s[1] == 3 and type(s[1]) is int
    assert s[-1] == 4
    assert type(s[:2]) is torch.Size and s[:2] == (2, 3)
    assert type(s[::-1]) is torch.Size and s[::-1] == (4, 3, 2)
    assert type(s + (5,)) is torch.Size and s + (5,) == (2, 3, 4, 5)
    assert type((1,) + s) is torch.Size and (1,) + s == (1, 2, 3, 4)
    assert type(s * 2) is torch.Size and s * 2 == (2, 3, 4, 2, 3, 4)
    assert type(2 * s) is torch.Size
    with pytest.raises(IndexError):
        s[3]
    with pytest.raises(TypeError):
        s + [5]


def test_chunk_and_unbind_shapes_are_sizes():
    x = torch.arange(24.0).reshape(2, 12)
    pieces = x.chunk(3, dim=1)
    assert [type(p.shape) for p in pieces] == [torch.Size] * 3
    assert [p.shape for p in pieces] == [(2, 4)] * 3
    assert pieces[1].tolist() == [[4.0, 5.0, 6.0, 7.0], [16.0, 17.0, 18.0, 19.0]]
    rows = x.unbind(1)
    assert type(rows[0].shape) is torch.Size and rows[0].shape == (2,)
    assert rows[5].tolist() == [5.0, 17.0]


def test_cat_of_a_list_takes_the_device_of_its_tensors():
    a = torch.ones(3)
    out = torch.cat([a, torch.zeros(2)])
    assert out.device.type == "cpu" and out.tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]
    meta = torch.cat([torch.ones(3, device="meta"), torch.ones(2, device="meta")])
    assert meta.device.type == "meta" and meta.shape == (5,)
    with pytest.raises(RuntimeError, match="same device"):
        torch.cat([a, torch.ones(2, device="meta")])


def _transposed(values):
    return [list(row) for row in zip(*values)]


def _current_geometry(t):
    geo = t._geometry
    return geo is not None and geo.shape is t._shape and geo.stride is t._stride


def test_strided_views_made_by_a_plan_share_one_geometry_and_add_by_it():
    base = torch.arange(12.0).reshape(3, 4)
    other = torch.arange(100.0, 112.0).reshape(3, 4)
    rows, others = base.tolist(), other.tolist()
    want = [[a + b for a, b in zip(r, s)] for r, s in zip(_transposed(rows), _transposed(others))]
    results = []
    for _ in range(4):  # the first calls plan t() and add, the later ones replay them
        a, b = base.t(), other.t()
        results.append((a + b).tolist())
    assert results == [want] * 4
    a, b = base.t(), other.t()
    assert _current_geometry(a) and a._geometry is b._geometry
    add = _dispatch.get("aten::add.Tensor")
    assert any(a._geometry in key for key, plan in add._plans.items() if plan is not False)


def test_an_in_place_change_of_strides_leaves_no_stale_geometry():
    base = torch.arange(16.0).reshape(4, 4)
    other = torch.ones(4, 4).t()
    for _ in range(3):
        view = base.t()
        (view + other).tolist()  # planned by the transposed geometry
    assert _current_geometry(view)
    # the same storage and shape, row-major strides: the same elements as base
    view.set_(base.untyped_storage(), 0, (4, 4), (4, 1))
    assert not _current_geometry(view)
    want = [[v + 1.0 for v in row] for row in base.tolist()]
    assert (view + other).tolist() == want
    assert (view + other).tolist() == want
    assert _current_geometry(view) and view._geometry.stride == (4, 1)

    narrow = base.t()[1:]
    (narrow * 2.0).tolist()
    narrow.resize_(2, 3)  # contiguous strides from its offset (1), as in PyTorch
    assert narrow.stride() == (3, 1)
    assert (narrow * 2.0).tolist() == [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]]


def test_data_assignment_of_another_dtype_is_keyed_apart():
    base = torch.arange(6.0).reshape(2, 3)
    view = base.t()
    (view + view.clone().t().t()).tolist()
    assert _current_geometry(view)
    view.data = torch.arange(6, dtype=torch.float64).reshape(2, 3).t()
    assert view.dtype == torch.float64
    out = view + torch.zeros(3, 2, dtype=torch.float64)
    assert out.dtype == torch.float64 and out.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def test_a_strided_planned_output_carries_its_geometry():
    base = torch.arange(6.0).reshape(2, 3)
    for _ in range(3):
        out = base.t() + base.t()  # follows its operands' transposed layout
    assert out.stride() == (1, 3) and _current_geometry(out)
    assert out.tolist() == [[0.0, 6.0], [2.0, 8.0], [4.0, 10.0]]
    assert (out * 2.0).tolist() == [[0.0, 12.0], [4.0, 16.0], [8.0, 20.0]]
