"""Shape ops: values against numpy's equivalents, views vs copies, dtype promotion, errors.

Expected values come from numpy (``np.concatenate``, ``np.flip``, ``np.roll``...) applied to the
same data, or were checked against PyTorch 2.13 and written down.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import torch


def make(*shape: int, dtype: torch.dtype = torch.int64) -> tuple[torch.Tensor, np.ndarray]:
    """A tensor 0, 1, 2, ... of ``shape`` and the identical numpy array."""
    a = np.arange(math.prod(shape)).reshape(shape)
    return torch.tensor(a.tolist(), dtype=dtype), a


def strided(*shape: int) -> tuple[torch.Tensor, np.ndarray]:
    """A non-contiguous view (every other element of the last dim) and its numpy twin."""
    t, a = make(*shape[:-1], shape[-1] * 2)
    return t[..., ::2], a[..., ::2]


def check(result: torch.Tensor, expected: np.ndarray, dtype: torch.dtype | None = None) -> None:
    assert tuple(result.shape) == expected.shape
    assert result.tolist() == expected.tolist()
    if dtype is not None:
        assert result.dtype == dtype


def shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage() is b.untyped_storage()


# -- cat / stack ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_matches_numpy(dim):
    t1, a1 = make(2, 3)
    t2, a2 = strided(2, 3)
    t3, a3 = make(2, 3)
    out = torch.cat([t1, t2, t3], dim)
    check(out, np.concatenate([a1, a2, a3], axis=dim))
    assert out.is_contiguous() and not shares_storage(out, t1)


def test_cat_aliases_and_out():
    t, a = make(2, 2)
    for fn in (torch.cat, torch.concat, torch.concatenate):
        check(fn((t, t), dim=1), np.concatenate([a, a], 1))
    out = torch.empty(0, dtype=torch.int64)
    r = torch.cat([t, t], out=out)
    assert r is out
    check(out, np.concatenate([a, a]))


def test_cat_promotes_and_skips_legacy_empty():
    i = torch.tensor([[1, 2]], dtype=torch.int32)
    h = torch.tensor([[0.5, 1.5]], dtype=torch.float16)
    b = torch.tensor([[True, False]])
    assert torch.cat([i, h]).dtype == torch.float16
    assert torch.cat([i, b]).dtype == torch.int32
    assert torch.cat([b, b]).dtype == torch.bool
    r = torch.cat([torch.ones(2, 3), torch.ones(0, dtype=torch.float64)], 1)
    assert r.shape == (2, 3) and r.dtype == torch.float64  # skipped, but still promotes
    assert torch.cat([torch.ones(0), torch.ones(0)]).shape == (0,)
    check(torch.cat([torch.zeros(2, 0, dtype=torch.int64), make(2, 2)[0]], 1), make(2, 2)[1])


@pytest.mark.parametrize("tensors, dim, exc, msg", [
    ([], 0, ValueError, "expected a non-empty list"),
    ([torch.ones(2, 3), torch.ones(3, 3)], 1, RuntimeError,
     "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for "
     "tensor number 1"),
    ([torch.ones(2, 3), torch.ones(2)], 0, RuntimeError, "same number of dimensions: got 2 and 1"),
    ([torch.ones(2), torch.ones(())], 0, RuntimeError, "zero-dimensional tensor (at position 1)"),
    ([torch.ones(2)], 1, IndexError, "Dimension out of range"),
])
def test_cat_errors(tensors, dim, exc, msg):
    with pytest.raises(exc, match=msg.replace("(", r"\(").replace(")", r"\)")):
        torch.cat(tensors, dim)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack(dim):
    t1, a1 = make(2, 3)
    t2, a2 = strided(2, 3)
    check(torch.stack([t1, t2], dim), np.stack([a1, a2], axis=dim))


def test_stack_errors_and_0d():
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got "
                                           r"\[2\] at entry 0 and \[3\] at entry 1"):
        torch.stack([torch.ones(2), torch.ones(3)])
    check(torch.stack([torch.tensor(1), torch.tensor(2)]), np.array([1, 2]))


def test_hstack_vstack_dstack_column_stack():
    v, av = make(3)
    m, am = make(3, 2)
    s = torch.tensor(7)
    check(torch.hstack([v, v]), np.hstack([av, av]))
    check(torch.hstack([m, m]), np.hstack([am, am]))
    check(torch.hstack([s, v]), np.hstack([np.array(7), av]))
    check(torch.vstack([v, v]), np.vstack([av, av]))
    check(torch.row_stack([m.t(), m.t()]), np.vstack([am.T, am.T]))
    check(torch.dstack([v, v]), np.dstack([av, av]))
    check(torch.dstack([m, m]), np.dstack([am, am]))
    check(torch.column_stack([v, m]), np.column_stack([av, am]))
    check(torch.column_stack([s, s]), np.column_stack([np.array(7), np.array(7)]))


# -- splitting -----------------------------------------------------------------------------------


def check_pieces(pieces, expected, base):
    assert isinstance(pieces, tuple)
    assert len(pieces) == len(expected)
    for p, e in zip(pieces, expected):
        check(p, e)
        assert shares_storage(p, base)


def test_split_int_and_sizes():
    t, a = make(5, 4)
    check_pieces(torch.split(t, 2), np.split(a, [2, 4]), t)
    check_pieces(t.split([1, 3], 1), np.split(a, [1], axis=1), t)
    check_pieces(t.split(3, dim=-1), np.split(a, [3], axis=1), t)
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly "
                                           "to 5"):
        t.split([2, 2])
    e = torch.zeros(0, 3)
    assert [p.shape for p in torch.split(e, 2)] == [(0, 3)]


def test_chunk():
    t, a = make(5)
    check_pieces(torch.chunk(t, 2), [a[:3], a[3:]], t)
    # PyTorch 2.13: 6 elements in 4 chunks gives 3 chunks of 2
    assert [p.tolist() for p in make(6)[0].chunk(4)] == [[0, 1], [2, 3], [4, 5]]
    assert [p.shape for p in torch.chunk(torch.zeros(0), 3)] == [(0,), (0,), (0,)]
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0"):
        t.chunk(0)


def test_tensor_split_matches_numpy_array_split():
    t, a = make(7, 2)
    check_pieces(torch.tensor_split(t, 3), np.array_split(a, 3), t)
    check_pieces(t.tensor_split([1, 5]), np.split(a, [1, 5]), t)
    check_pieces(t.tensor_split([4, 2, 9]), np.split(a, [4, 2, 9]), t)
    check_pieces(t.tensor_split(torch.tensor([2, 3])), np.split(a, [2, 3]), t)
    check_pieces(t.tensor_split(torch.tensor(2), dim=1), np.array_split(a, 2, axis=1), t)
    with pytest.raises(RuntimeError, match="number of sections must be larger than 0"):
        t.tensor_split(0)


def test_hsplit_vsplit_dsplit():
    t, a = make(4, 6, 2)
    check_pieces(torch.hsplit(t, 3), np.hsplit(a, 3), t)
    check_pieces(torch.vsplit(t, [1]), np.vsplit(a, [1]), t)
    check_pieces(torch.dsplit(t, 2), np.dsplit(a, 2), t)
    v, av = make(6)
    check_pieces(v.hsplit(2), np.hsplit(av, 2), v)
    with pytest.raises(RuntimeError, match="not divisible by the split_size 4"):
        torch.hsplit(t, 4)
    with pytest.raises(RuntimeError, match=r"torch\.vsplit requires a tensor with at least 2"):
        torch.vsplit(v, 2)


def test_unbind():
    t, a = make(3, 2)
    check_pieces(torch.unbind(t), list(a), t)
    check_pieces(t.unbind(1), list(a.T), t)


# -- reordering dims -----------------------------------------------------------------------------


@pytest.mark.parametrize("src, dst", [(0, 2), (-1, 0), ((0, 1), (2, 0)), ([0, 2], [1, 0])])
def test_movedim_matches_numpy(src, dst):
    t, a = make(2, 3, 4)
    for fn in (torch.movedim, torch.moveaxis, torch.Tensor.movedim):
        r = fn(t, src, dst)
        check(r, np.moveaxis(a, src, dst))
        assert shares_storage(r, t)


def test_movedim_errors():
    t = torch.zeros(2, 3)
    with pytest.raises(RuntimeError, match="repeated dim in `source`"):
        torch.movedim(t, (0, 0), (0, 1))
    with pytest.raises(RuntimeError, match="should contain the same number of dims"):
        torch.movedim(t, (0, 1), (0,))


def test_swapaxes_functions():
    t, a = make(2, 3, 4)
    check(torch.swapaxes(t, 0, 2), np.swapaxes(a, 0, 2))
    check(torch.swapdims(t, 1, -1), np.swapaxes(a, 1, 2))
    check(torch.transpose(t, 0, 1), np.swapaxes(a, 0, 1))


# -- copies: flip, roll, rot90, repeat, tile, repeat_interleave --------------------------------


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 2), (-1, 0, 1), ()])
def test_flip_matches_numpy(dims):
    t, a = make(2, 3, 4)
    r = torch.flip(t, dims)
    check(r, np.flip(a, dims) if dims else a)
    assert not shares_storage(r, t)
    s, sa = strided(3, 3)
    check(s.flip(dims[:1] if dims and dims[0] < 2 else (0,)),
          np.flip(sa, dims[:1] if dims and dims[0] < 2 else (0,)))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.bool, torch.uint8,
                                   torch.float64])
def test_flip_dtypes(dtype):
    t = torch.tensor([[0, 1, 1], [0, 0, 1]], dtype=dtype)
    assert t.flip(1).tolist() == torch.tensor([[1, 1, 0], [1, 0, 0]], dtype=dtype).tolist()
    assert t.fliplr().dtype == dtype


def test_fliplr_flipud():
    t, a = make(3, 4)
    check(torch.fliplr(t), np.fliplr(a))
    check(torch.flipud(t), np.flipud(a))
    with pytest.raises(RuntimeError, match="Input must be >= 2-d"):
        torch.fliplr(torch.zeros(3))


@pytest.mark.parametrize("shifts, dims", [(1, None), (-7, None), (1, 0), (-2, 1),
                                          ((1, 2), (0, 1)), ((5, -1), (1, 0))])
def test_roll_matches_numpy(shifts, dims):
    t, a = make(3, 4)
    check(torch.roll(t, shifts, dims), np.roll(a, shifts, dims))
    s, sa = strided(3, 4)
    check(s.roll(shifts, dims), np.roll(sa, shifts, dims))


def test_roll_error():
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        torch.roll(torch.zeros(2, 2), (1, 2), 0)


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4, -1, 5])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (2, 0)])
def test_rot90_matches_numpy(k, dims):
    t, a = make(2, 3, 4)
    check(torch.rot90(t, k, dims), np.rot90(a, k, dims))


@pytest.mark.parametrize("reps", [(2, 3), (1, 1), (2, 1, 2), (0, 2), (3, 1, 1, 2)])
def test_repeat_matches_numpy_tile(reps):
    t, a = strided(2, 3)
    r = t.repeat(*reps)
    check(r, np.tile(a, reps))
    assert r.is_contiguous()
    check(t.repeat(reps), np.tile(a, reps))


def test_repeat_errors_and_tile():
    t, a = make(2, 3)
    with pytest.raises(RuntimeError, match="can not be smaller than number of dimensions"):
        t.repeat(2)
    check(torch.tile(t, (2,)), np.tile(a, (2,)))
    check(t.tile(2, 1, 1), np.tile(a, (2, 1, 1)))
    check(torch.tile(torch.tensor(5), (3,)), np.tile(np.array(5), 3))


def test_repeat_interleave():
    t, a = make(2, 3)
    check(torch.repeat_interleave(t, 2), np.repeat(a, 2))
    check(t.repeat_interleave(3, dim=1), np.repeat(a, 3, axis=1))
    check(t.repeat_interleave(torch.tensor([1, 0]), dim=0), np.repeat(a, [1, 0], axis=0))
    check(t.repeat_interleave(torch.tensor([2, 0, 1]), dim=-1), np.repeat(a, [2, 0, 1], axis=1))
    check(t.repeat_interleave(torch.tensor(2)), np.repeat(a, 2))
    check(torch.repeat_interleave(torch.tensor([2, 0, 3])), np.repeat([0, 1, 2], [2, 0, 3]))
    with pytest.raises(RuntimeError, match="repeats must have the same size as input along dim"):
        t.repeat_interleave(torch.tensor([1, 2, 3]), dim=0)
    with pytest.raises(RuntimeError, match="repeats can not be negative"):
        t.repeat_interleave(torch.tensor([1, -1]), dim=0)


# -- broadcasting and grids ---------------------------------------------------------------------


def test_broadcast_to_and_tensors_are_views():
    t, a = make(3, 1)
    r = torch.broadcast_to(t, (2, 3, 4))
    check(r, np.broadcast_to(a, (2, 3, 4)))
    assert shares_storage(r, t) and r.stride()[0] == 0
    check(t.broadcast_to((3, -1)), a)
    u, b = make(4)
    x, y = torch.broadcast_tensors(t, u)
    ex, ey = np.broadcast_arrays(a, b)
    check(x, ex)
    check(y, ey)
    assert shares_storage(x, t) and shares_storage(y, u)


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_matches_numpy(indexing):
    x, ax = make(2)
    y, ay = make(3)
    z, az = make(4)
    for got, exp in zip(torch.meshgrid(x, y, z, indexing=indexing),
                        np.meshgrid(ax, ay, az, indexing=indexing)):
        check(got, exp)
    grids = torch.meshgrid([x, y], indexing=indexing)
    assert all(shares_storage(g, s) for g, s in zip(grids, (x, y)))


def test_meshgrid_default_warns():
    with pytest.warns(UserWarning, match="indexing argument"):
        gx, _ = torch.meshgrid(torch.tensor([1, 2]), torch.tensor([3, 4, 5]))
    assert gx.shape == (2, 3)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_atleast(shape):
    t, a = make(*shape) if shape else (torch.tensor(5), np.array(5))
    check(torch.atleast_1d(t), np.atleast_1d(a))
    check(torch.atleast_2d(t), np.atleast_2d(a))
    check(torch.atleast_3d(t), np.atleast_3d(a))
    pair = torch.atleast_2d(t, t)
    assert isinstance(pair, tuple) and len(pair) == 2
    assert shares_storage(torch.atleast_3d(t), t)


# -- torch.* forms of the view methods ----------------------------------------------------------


def test_view_functions():
    t, a = make(1, 3, 1, 2)
    check(torch.squeeze(t), a.squeeze())
    check(torch.squeeze(t, 2), a.squeeze(2))
    check(torch.unsqueeze(t, 0), a[None])
    check(torch.flatten(t), a.reshape(-1))
    check(torch.flatten(t, 1, 2), a.reshape(1, 3, 2))
    check(torch.unflatten(torch.flatten(t), 0, (3, -1)), a.reshape(3, 2))
    check(torch.narrow(t, 1, 1, 2), a[:, 1:3])
    check(torch.select(t, 1, -1), a[:, -1])
    check(torch.permute(t, (3, 2, 1, 0)), a.transpose(3, 2, 1, 0))
    check(torch.reshape(t, (6,)), a.reshape(6))
    check(torch.t(make(2, 3)[0]), make(2, 3)[1].T)
    check(torch.diagonal(make(3, 4)[0], 1), np.diagonal(make(3, 4)[1], 1))
    check(torch.as_strided(t, (2, 2), (1, 2)), np.array([[0, 2], [1, 3]]))
    for r in (torch.squeeze(t), torch.narrow(t, 1, 1, 2), torch.permute(t, (3, 2, 1, 0))):
        assert shares_storage(r, t)


def test_ravel_view_as_reshape_as_contiguous():
    t, a = make(2, 3)
    assert shares_storage(torch.ravel(t), t)
    s, sa = strided(2, 3)
    r = s.ravel()
    check(r, sa.reshape(-1))
    assert r.is_contiguous() and not shares_storage(r, s)
    check(t.view_as(torch.empty(3, 2)), a.reshape(3, 2))
    check(s.reshape_as(torch.empty(6)), sa.reshape(6))
    c = s.contiguous()
    assert c.is_contiguous() and c.tolist() == sa.tolist()
    assert t.contiguous() is t


def test_narrow_copy_and_scatter_variants():
    t, a = make(3, 4)
    r = torch.narrow_copy(t, 1, 1, 2)
    check(r, a[:, 1:3])
    assert not shares_storage(r, t)
    src = torch.tensor([-1, -2, -3, -4])
    e = a.copy()
    e[1] = [-1, -2, -3, -4]
    check(torch.select_scatter(t, src, 0, 1), e)
    e = a.copy()
    e[:, 0:4:2] = [[-1, -2]] * 3
    check(torch.slice_scatter(t, torch.tensor([[-1, -2]] * 3), 1, 0, None, 2), e)
    e = a.copy()
    e[[0, 1, 2], [1, 2, 3]] = [-1, -2, -3]
    check(torch.diagonal_scatter(t, torch.tensor([-1, -2, -3]), 1), e)
    check(t, a)  # the input is untouched


def test_copies_bump_no_version_and_views_share_it():
    t, _ = make(2, 3)
    v = t.movedim(0, 1)
    v[0, 0] = 100
    assert t[0, 0].item() == 100 and t._version == v._version == 1
