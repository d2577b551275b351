"""View operations: metadata-only tensors over the same storage.

Each view is checked against numpy's equivalent view of an identical array: shape, strides (in
elements: numpy's byte strides over the itemsize), storage offset (the data pointer distance
from the base) and values. Views must share storage and the version counter with their base.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided, sliding_window_view

import torch


def make(*shape: int) -> tuple[torch.Tensor, np.ndarray]:
    """A contiguous int64 tensor 0, 1, 2, ... and the identical numpy array."""
    a = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    return torch.tensor(a.tolist(), dtype=torch.int64), a


def np_offset(view: np.ndarray, base: np.ndarray) -> int:
    return (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // 8


def assert_view_of(v: torch.Tensor, base: torch.Tensor, ref: np.ndarray, ref_base: np.ndarray):
    """``v`` is a view of ``base`` laid out exactly like numpy's ``ref`` over ``ref_base``."""
    assert tuple(v.shape) == ref.shape
    assert v.dim() == ref.ndim
    assert len(v.stride()) == ref.ndim
    for size, stride, np_stride in zip(ref.shape, v.stride(), ref.strides):
        if size != 1:  # numpy and PyTorch may differ on the stride of a size-1 dim
            assert stride == np_stride // 8
    if ref.size:
        assert v.storage_offset() == base.storage_offset() + np_offset(ref, ref_base)
    assert v.untyped_storage() is base.untyped_storage()
    assert v.data_ptr() == base.untyped_storage().data_ptr() + 8 * v.storage_offset()
    assert v.tolist() == ref.tolist()


VIEW_CASES = [
    # (name, shape, torch view, numpy view)
    ("view", (2, 3, 4), lambda t: t.view(6, 4), lambda a: a.reshape(6, 4)),
    ("view tuple", (2, 3, 4), lambda t: t.view((4, 6)), lambda a: a.reshape(4, 6)),
    ("view -1", (2, 3, 4), lambda t: t.view(-1), lambda a: a.reshape(-1)),
    ("view infer mid", (2, 3, 4), lambda t: t.view(4, -1, 2), lambda a: a.reshape(4, 3, 2)),
    ("view size", (2, 3, 4), lambda t: t.view(torch.Size([3, 8])), lambda a: a.reshape(3, 8)),
    ("view transposed ok", (2, 3, 4), lambda t: t.transpose(0, 1).view(3, 2, 2, 2),
     lambda a: a.transpose(1, 0, 2).reshape(3, 2, 2, 2)),
    ("view 0-d", (1,), lambda t: t.view(()), lambda a: a.reshape(())),
    ("reshape view", (2, 3, 4), lambda t: t.reshape(3, 8), lambda a: a.reshape(3, 8)),
    ("view_as", (2, 6), lambda t: t.view_as(torch.empty(3, 4)), lambda a: a.reshape(3, 4)),
    ("permute", (2, 3, 4), lambda t: t.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("permute tuple", (2, 3, 4), lambda t: t.permute((1, 2, 0)),
     lambda a: a.transpose(1, 2, 0)),
    ("permute negative", (2, 3, 4), lambda t: t.permute(-1, -3, -2),
     lambda a: a.transpose(2, 0, 1)),
    ("transpose", (2, 3, 4), lambda t: t.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    ("transpose negative", (2, 3, 4), lambda t: t.transpose(-1, 1), lambda a: a.swapaxes(2, 1)),
    ("swapaxes", (2, 3, 4), lambda t: t.swapaxes(0, 1), lambda a: a.swapaxes(0, 1)),
    ("t", (3, 4), lambda t: t.t(), lambda a: a.T),
    ("t 1-d", (4,), lambda t: t.t(), lambda a: a),
    ("T", (3, 4), lambda t: t.T, lambda a: a.T),
    ("mT", (2, 3, 4), lambda t: t.mT, lambda a: a.swapaxes(-1, -2)),
    ("expand", (3, 1), lambda t: t.expand(2, 3, 4), lambda a: np.broadcast_to(a, (2, 3, 4))),
    ("expand -1", (3, 1), lambda t: t.expand(-1, 5), lambda a: np.broadcast_to(a, (3, 5))),
    ("expand list", (1, 4), lambda t: t.expand([3, 4]), lambda a: np.broadcast_to(a, (3, 4))),
    ("expand_as", (3, 1), lambda t: t.expand_as(torch.empty(2, 3, 2)),
     lambda a: np.broadcast_to(a, (2, 3, 2))),
    ("narrow", (3, 5), lambda t: t.narrow(1, 1, 3), lambda a: a[:, 1:4]),
    ("narrow negative start", (3, 5), lambda t: t.narrow(-1, -2, 2), lambda a: a[:, 3:5]),
    ("narrow dim 0", (4, 5), lambda t: t.narrow(0, 2, 2), lambda a: a[2:4]),
    ("select", (2, 3, 4), lambda t: t.select(1, 2), lambda a: a[:, 2]),
    ("select negative", (2, 3, 4), lambda t: t.select(-1, -1), lambda a: a[..., -1]),
    ("squeeze all", (1, 3, 1, 4), lambda t: t.squeeze(), lambda a: a.squeeze()),
    ("squeeze dim", (1, 3, 1, 4), lambda t: t.squeeze(2), lambda a: a.squeeze(2)),
    ("squeeze non-1 dim", (1, 3, 1, 4), lambda t: t.squeeze(1), lambda a: a),
    ("squeeze tuple", (1, 3, 1, 4), lambda t: t.squeeze((0, 2)), lambda a: a.squeeze((0, 2))),
    ("unsqueeze 0", (3, 4), lambda t: t.unsqueeze(0), lambda a: a[None]),
    ("unsqueeze mid", (3, 4), lambda t: t.unsqueeze(1), lambda a: a[:, None]),
    ("unsqueeze -1", (3, 4), lambda t: t.unsqueeze(-1), lambda a: a[..., None]),
    ("unfold", (2, 5), lambda t: t.unfold(1, 2, 1), lambda a: sliding_window_view(a, 2, axis=1)),
    ("unfold step", (2, 7), lambda t: t.unfold(1, 3, 2),
     lambda a: sliding_window_view(a, 3, axis=1)[:, ::2]),
    ("unfold dim 0", (6, 2), lambda t: t.unfold(0, 2, 3),
     lambda a: sliding_window_view(a, 2, axis=0)[::3]),
    ("as_strided", (9,), lambda t: t.as_strided((2, 2), (3, 1), 1),
     lambda a: as_strided(a[1:], (2, 2), (24, 8))),
    ("as_strided overlap", (6,), lambda t: t.as_strided((3, 3), (1, 1)),
     lambda a: as_strided(a, (3, 3), (8, 8))),
    ("as_strided zero stride", (6,), lambda t: t.as_strided((2, 3), (0, 2), 0),
     lambda a: as_strided(a, (2, 3), (0, 16))),
    ("diagonal", (3, 4), lambda t: t.diagonal(), lambda a: a.diagonal()),
    ("diagonal +1", (3, 4), lambda t: t.diagonal(1), lambda a: a.diagonal(1)),
    ("diagonal +3", (3, 4), lambda t: t.diagonal(3), lambda a: a.diagonal(3)),
    ("diagonal -1", (3, 4), lambda t: t.diagonal(-1), lambda a: a.diagonal(-1)),
    ("diagonal -2", (3, 4), lambda t: t.diagonal(-2), lambda a: a.diagonal(-2)),
    ("diagonal 3-d", (2, 3, 4), lambda t: t.diagonal(0, 0, 2), lambda a: a.diagonal(0, 0, 2)),
    ("diagonal 3-d offset", (2, 3, 4), lambda t: t.diagonal(1, 1, 2),
     lambda a: a.diagonal(1, 1, 2)),
    ("diagonal swapped dims", (3, 4), lambda t: t.diagonal(1, 1, 0), lambda a: a.diagonal(1, 1, 0)),
    ("diagonal keywords", (2, 3, 4), lambda t: t.diagonal(offset=-1, dim1=-1, dim2=1),
     lambda a: a.diagonal(-1, 2, 1)),
    ("flatten", (2, 3, 4), lambda t: t.flatten(), lambda a: a.reshape(-1)),
    ("flatten start", (2, 3, 4), lambda t: t.flatten(1), lambda a: a.reshape(2, 12)),
    ("flatten range", (2, 3, 4), lambda t: t.flatten(0, 1), lambda a: a.reshape(6, 4)),
    ("flatten 0-d", (1,), lambda t: t.view(()).flatten(), lambda a: a.reshape(1)),
    ("unflatten", (2, 12), lambda t: t.unflatten(1, (3, 4)), lambda a: a.reshape(2, 3, 4)),
    ("unflatten -1", (2, 12), lambda t: t.unflatten(-1, (2, -1)), lambda a: a.reshape(2, 2, 6)),
    ("detach", (2, 3), lambda t: t.detach(), lambda a: a),
    # basic indexing
    ("int", (3, 4), lambda t: t[1], lambda a: a[1]),
    ("negative int", (3, 4), lambda t: t[-1], lambda a: a[-1]),
    ("two ints", (3, 4), lambda t: t[2, 3], lambda a: a[2, 3, ...]),
    ("int second dim", (3, 4), lambda t: t[:, 1], lambda a: a[:, 1]),
    ("slice", (5, 4), lambda t: t[1:3], lambda a: a[1:3]),
    ("slice step", (7, 4), lambda t: t[1::2], lambda a: a[1::2]),
    ("slice step 3", (7, 4), lambda t: t[::3, 1:], lambda a: a[::3, 1:]),
    ("slice negative bounds", (7, 4), lambda t: t[-5:-1, :-2], lambda a: a[-5:-1, :-2]),
    ("slice clamps", (3, 4), lambda t: t[1:100, -100:2], lambda a: a[1:100, -100:2]),
    ("ellipsis", (2, 3, 4), lambda t: t[..., 1], lambda a: a[..., 1]),
    ("ellipsis middle", (2, 3, 4), lambda t: t[1, ..., ::3], lambda a: a[1, ..., ::3]),
    ("ellipsis empty", (2, 3, 4), lambda t: t[1, 2, ..., 3], lambda a: a[1, 2, ..., 3]),
    ("none", (2, 3), lambda t: t[None], lambda a: a[None]),
    ("none mixed", (2, 3, 4), lambda t: t[:, None, 1:, None, 2], lambda a: a[:, None, 1:, None, 2]),
    ("none and ellipsis", (2, 3), lambda t: t[..., None], lambda a: a[..., None]),
    ("all", (2, 3), lambda t: t[:], lambda a: a[:]),
    ("view of view", (4, 6), lambda t: t[1:][:, ::2].t()[1], lambda a: a[1:][:, ::2].T[1]),
    ("index of permuted", (2, 3, 4), lambda t: t.permute(2, 0, 1)[1:, :, 2],
     lambda a: a.transpose(2, 0, 1)[1:, :, 2]),
]


@pytest.mark.parametrize("name, shape, tview, nview", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_view_matches_numpy(name, shape, tview, nview):
    t, a = make(*shape)
    assert_view_of(tview(t), t, nview(a), a)


# as_strided's storage_offset is absolute, not relative to the base: not comparable here
OFFSET_CASES = [c for c in VIEW_CASES if not c[0].startswith("as_strided")]


@pytest.mark.parametrize("name, shape, tview, nview", OFFSET_CASES,
                         ids=[c[0] for c in OFFSET_CASES])
def test_view_of_an_offset_base(name, shape, tview, nview):
    # the same view, taken of a base that is itself a view with a storage offset
    big, big_np = make(2, *shape)
    t, a = big[1], big_np[1]
    assert t.storage_offset() == math.prod(shape)
    assert_view_of(tview(t), big, nview(a), big_np)


@pytest.mark.parametrize("name, shape, tview, nview", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_writes_through_view_show_in_base_and_share_version(name, shape, tview, nview):
    t, a = make(*shape)
    v = tview(t)
    ref = nview(a)
    # numpy's diagonal / broadcast_to / sliding windows are read-only: write through a writable
    # view of a copy with the same layout instead
    expected = a.copy()
    writable = as_strided(expected.reshape(-1)[np_offset(ref, a):], ref.shape, ref.strides)
    (writable[0, ...] if writable.ndim else writable)[...] = -7
    (v.select(0, 0) if v.dim() else v).fill_(-7)
    assert t.tolist() == expected.tolist()
    assert t._version == 1
    assert v._version == 1


def test_unsqueeze_strides():
    t, _ = make(2, 3, 4)
    assert t.unsqueeze(0).stride() == (24, 12, 4, 1)
    assert t.unsqueeze(1).stride() == (12, 12, 4, 1)
    assert t.unsqueeze(2).stride() == (12, 4, 4, 1)
    assert t.unsqueeze(3).stride() == (12, 4, 1, 1)
    assert t.unsqueeze(-1).shape == (2, 3, 4, 1)
    s = torch.tensor(5).unsqueeze(0)
    assert (s.shape, s.stride()) == ((1,), (1,))


def test_none_index_strides():
    t, _ = make(2, 3)
    assert t[None].stride() == (6, 3, 1)
    assert t[:, None].stride() == (3, 3, 1)
    assert t[..., None].stride() == (3, 1, 1)


def test_select_and_int_index_give_0d():
    t, _ = make(3, 4)
    s = t[1, 2]
    assert s.shape == ()
    assert s.dim() == 0
    assert s.stride() == ()
    assert s.storage_offset() == 6
    assert s.item() == 6


def test_expand_strides_are_zero():
    t, _ = make(3, 1)
    e = t.expand(2, 3, 4)
    assert e.stride() == (0, 1, 0)
    assert not e.is_contiguous()


def test_expand_errors():
    t, _ = make(3)
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(4\) must match "
                                           r"the existing size \(3\) at non-singleton "
                                           r"dimension 1"):
        t.expand(2, 4)
    with pytest.raises(RuntimeError, match="number of sizes provided"):
        make(2, 3)[0].expand(3)
    with pytest.raises(RuntimeError):
        t.expand(-1, 3)  # -1 is not allowed in a new leading dimension


def test_view_errors():
    t, _ = make(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"view size is not compatible with input tensor's "
                                           r"size and stride"):
        t.transpose(0, 1).view(6, 4)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.permute(2, 1, 0).view(-1)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        t.view(-1, -1)
    with pytest.raises(RuntimeError, match=r"shape '\[5, -1\]' is invalid for input of size 24"):
        t.view(5, -1)
    with pytest.raises(RuntimeError, match=r"shape '\[5, 5\]' is invalid for input of size 24"):
        t.view(5, 5)
    with pytest.raises(RuntimeError):
        t.view(-2, 12)


def test_view_of_empty_tensor():
    t = torch.empty(0, 3)
    v = t.view(3, 0, 5)
    assert v.shape == (3, 0, 5)
    assert t.view(-1).shape == (0,)
    assert t.reshape(0, 4, 2).shape == (0, 4, 2)
    with pytest.raises(RuntimeError):
        t.view(-1, 0)  # -1 is ambiguous next to a 0


def test_reshape_copies_only_when_it_must():
    t, a = make(2, 3, 4)
    r = t.reshape(4, 6)
    assert r.untyped_storage() is t.untyped_storage()
    c = t.transpose(0, 2).reshape(-1)
    assert c.tolist() == a.transpose(2, 1, 0).reshape(-1).tolist()
    assert c.untyped_storage() is not t.untyped_storage()
    assert c.is_contiguous()
    c.fill_(0)
    assert t.tolist() == a.tolist()  # the copy is independent
    f = t.transpose(0, 2).flatten()
    assert f.tolist() == a.transpose(2, 1, 0).reshape(-1).tolist()
    assert f.untyped_storage() is not t.untyped_storage()


def test_reshape_as_and_shape_forms():
    t, a = make(2, 6)
    assert t.reshape_as(torch.empty(3, 4)).tolist() == a.reshape(3, 4).tolist()
    assert t.reshape([4, 3]).shape == (4, 3)
    assert t.reshape((12,)).shape == (12,)


def test_permute_errors():
    t, _ = make(2, 3, 4)
    with pytest.raises(RuntimeError, match="number of dimensions"):
        t.permute(0, 1)
    with pytest.raises(RuntimeError, match="duplicate"):
        t.permute(0, 1, 1)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-3, 2\], but got 3\)"):
        t.permute(0, 1, 3)


def test_t_and_mT_errors():
    t, _ = make(2, 3, 4)
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
        t.t()
    with pytest.raises(RuntimeError):
        _ = make(3)[0].mT


def test_narrow_errors():
    t, _ = make(3, 5)
    with pytest.raises(RuntimeError):
        t.narrow(1, 3, 3)
    with pytest.raises(IndexError):
        t.narrow(1, 6, 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.narrow(2, 0, 1)


def test_unfold_errors():
    t, _ = make(2, 5)
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 1 is 5 but size "
                                           "is 6"):
        t.unfold(1, 6, 1)
    with pytest.raises(RuntimeError, match="step"):
        t.unfold(1, 2, 0)


def test_as_strided_out_of_bounds():
    t, _ = make(9)
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 72"):
        t.as_strided((3, 3), (3, 1), 1)
    with pytest.raises(RuntimeError):
        t.as_strided((2, 2), (1,))
    # exactly the last element is still in bounds
    v = t.as_strided((3, 3), (3, 1), 0)
    assert v.tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert t.as_strided((1,), (1,), 8).tolist() == [8]


def test_as_strided_keeps_offset_by_default():
    t, _ = make(10)
    v = t[4:]
    w = v.as_strided((2,), (2,))
    assert w.storage_offset() == 4
    assert w.tolist() == [4, 6]
    assert v.as_strided((2,), (1,), 0).tolist() == [0, 1]


def test_diagonal_errors_and_empty():
    t, _ = make(3, 4)
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical"):
        t.diagonal(0, 1, 1)
    assert t.diagonal(4).shape == (0,)
    assert t.diagonal(-3).shape == (0,)
    assert t.diagonal(10).tolist() == []


def test_flatten_errors():
    t, _ = make(2, 3, 4)
    with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
        t.flatten(2, 1)
    same = t.flatten(1, 1)
    assert same.shape == (2, 3, 4)
    assert same.untyped_storage() is t.untyped_storage()


def test_unflatten_errors():
    t, _ = make(2, 12)
    with pytest.raises(RuntimeError):
        t.unflatten(1, (5, 2))


def test_squeeze_of_0d_and_no_op():
    s = torch.tensor(3)
    assert s.squeeze().shape == ()
    assert s.squeeze(0).shape == ()
    t, _ = make(2, 3)
    assert t.squeeze().shape == (2, 3)


# -- basic indexing errors -------------------------------------------------------------------


def test_index_out_of_range_messages():
    t, _ = make(2, 3)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        t[5]
    with pytest.raises(IndexError, match="index -3 is out of bounds for dimension 0 with size 2"):
        t[-3]
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        t[:, 3]
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        t.select(1, 3)
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(IndexError):
        t[..., ...]
    with pytest.raises(IndexError):
        torch.tensor(1)[0]


def test_slice_step_must_be_positive():
    t, _ = make(5)
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-1]
    with pytest.raises(ValueError):
        t[::0]


def test_empty_slices():
    t, a = make(5, 2)
    assert t[3:1].shape == (0, 2)
    assert t[5:].shape == (0, 2)
    assert t[:, 2:].shape == (5, 0)
    assert t[3:1].tolist() == a[3:1].tolist()
    # PyTorch offsets an empty slice by its (clamped) start all the same
    assert t[3:1].storage_offset() == 6
    assert t[9:].storage_offset() == 10
    assert t[:, 2:].storage_offset() == 2
    assert t[9:].numpy().shape == (0, 2)
    assert (t[3:1] + 1).shape == (0, 2)


def test_view_of_expanded_tensor():
    t, _ = make(3, 1)
    e = t.expand(3, 4)
    v = e.view(3, 2, 2)
    assert (v.shape, v.stride()) == ((3, 2, 2), (1, 0, 0))
    assert v.tolist() == [[[0, 0], [0, 0]], [[1, 1], [1, 1]], [[2, 2], [2, 2]]]
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        e.view(12)
    assert e.reshape(12).tolist() == [0] * 4 + [1] * 4 + [2] * 4


@pytest.mark.parametrize("dim, method", [
    (2, lambda t, d: t.size(d)),
    (-3, lambda t, d: t.stride(d)),
    (2, lambda t, d: t.select(d, 0)),
    (2, lambda t, d: t.transpose(0, d)),
    (-3, lambda t, d: t.squeeze(d)),
    (2, lambda t, d: t.narrow(d, 0, 1)),
    (2, lambda t, d: t.unfold(d, 1, 1)),
    (2, lambda t, d: t.diagonal(0, 0, d)),
])
def test_dimension_out_of_range(dim, method):
    t, _ = make(2, 3)
    with pytest.raises(IndexError, match=rf"Dimension out of range \(expected to be in range of "
                                         rf"\[-2, 1\], but got {dim}\)"):
        method(t, dim)


def test_unsqueeze_accepts_one_past_the_end():
    t, _ = make(2, 3)
    with pytest.raises(IndexError, match=r"\[-3, 2\], but got 3"):
        t.unsqueeze(3)
    with pytest.raises(IndexError, match=r"\[-3, 2\], but got -4"):
        t.unsqueeze(-4)


def test_size_and_stride_accessors():
    t, _ = make(2, 3, 4)
    assert t.size() == torch.Size([2, 3, 4])
    assert isinstance(t.shape, torch.Size)
    assert repr(t.shape) == "torch.Size([2, 3, 4])"
    assert t.size(-1) == 4
    assert t.stride() == (12, 4, 1)
    assert t.stride(0) == 12
    assert t.ndim == 3
    assert t.numel() == 24
    assert len(t) == 2
    assert isinstance(t.shape[1:], torch.Size)


# -- storage, versions, contiguity -----------------------------------------------------------


def test_views_share_version_counter():
    t, _ = make(3, 4)
    a, b = t[1], t.t()
    assert t._version == a._version == b._version == 0
    a.fill_(1)
    assert t._version == a._version == b._version == 1
    b.copy_(torch.zeros(4, 3, dtype=torch.int64))
    assert t._version == a._version == b._version == 2
    t.add_(1)
    assert a._version == 3
    t.detach().mul_(2)
    assert b._version == 4
    other, _ = make(3, 4)
    assert other._version == 0


def test_copy_through_transposed_view():
    t, _ = make(3, 4)
    src = np.arange(100, 112).reshape(4, 3)
    t.t().copy_(torch.tensor(src.tolist()))
    assert t.tolist() == src.T.tolist()
    t.diagonal().fill_(-1)
    expected = src.T.copy()
    np.fill_diagonal(expected, -1)
    assert t.tolist() == expected.tolist()


def test_in_place_arithmetic_through_strided_view():
    t, a = make(4, 4)
    t[::2, 1::2].add_(100)
    a[::2, 1::2] += 100
    assert t.tolist() == a.tolist()
    t[1].mul_(torch.tensor([1, 2, 3, 4]))
    a[1] *= np.array([1, 2, 3, 4])
    assert t.tolist() == a.tolist()


def test_view_base():
    t, _ = make(3, 4)
    v = t[1:]
    w = v.t()
    assert not t._is_view()
    assert v._is_view() and w._is_view()
    assert v._base is t
    assert w._base is t


def test_view_as_dtype_reinterprets_bits():
    f = torch.tensor([1.0, -2.0, 0.5])
    i = f.view(torch.int32)
    expected = np.array([1.0, -2.0, 0.5], np.float32).view(np.int32)
    assert i.dtype is torch.int32
    assert i.tolist() == expected.tolist()
    assert i.untyped_storage() is f.untyped_storage()


@pytest.mark.parametrize("expr, contiguous", [
    (lambda t: t, True),
    (lambda t: t.t(), False),
    (lambda t: t[:, ::2], False),
    (lambda t: t[::2], False),
    (lambda t: t[1], True),
    (lambda t: t[:, 1], False),
    (lambda t: t[1:3], True),
    (lambda t: t.unsqueeze(1), True),
    (lambda t: t[:1].t(), True),  # size-1 dims do not count
    (lambda t: t[:, :1], False),
    (lambda t: t[:1, :1].expand(1, 5), False),
    (lambda t: t[:1].expand(3, 6), False),
    (lambda t: t[:0].t(), True),  # empty tensors are contiguous
    (lambda t: t.view(2, 2, 6).transpose(0, 1), False),
])
def test_is_contiguous(expr, contiguous):
    t, _ = make(4, 6)
    assert expr(t).is_contiguous() is contiguous


def test_contiguous_copies_only_when_needed():
    t, a = make(3, 4)
    assert t.contiguous() is t
    rows = t[1:]
    assert rows.contiguous() is rows
    nc = t.t()
    c = nc.contiguous()
    assert c is not nc
    assert c.is_contiguous()
    assert c.stride() == (3, 1)
    assert c.storage_offset() == 0
    assert c.tolist() == a.T.tolist()
    assert c.untyped_storage() is not t.untyped_storage()
    c.fill_(0)
    assert t.tolist() == a.tolist()
    e = t[:1].expand(2, 3, 4).contiguous()
    assert e.stride() == (12, 4, 1)
    assert e.tolist() == np.broadcast_to(a[:1], (2, 3, 4)).tolist()


def test_iteration_yields_views():
    t, a = make(3, 2)
    rows = list(t)
    assert [r.tolist() for r in rows] == a.tolist()
    rows[1].fill_(9)
    assert t.tolist() == [[0, 1], [9, 9], [4, 5]]
    with pytest.raises(TypeError):
        iter(torch.tensor(1))
    with pytest.raises(TypeError):
        len(torch.tensor(1))
