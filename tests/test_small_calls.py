"""Small repeated calls: torch.Size's tuple behaviour, the device of a tensor-list call, and
the plan of strided views keyed by their geometry."""

import pytest

import torch


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
