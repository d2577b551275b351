"""Indexing: advanced __getitem__/__setitem__, index_put, gather/scatter, index_*, masked ops,
take/put, nonzero.

Expected values come from numpy's advanced indexing and small Python loops written from the
op's definition, or were checked against PyTorch 2.13 and written down (where PyTorch and numpy
differ: integers next to index tensors, mean of integers, error messages).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import torch


def make(*shape: int, dtype: torch.dtype = torch.int64) -> tuple[torch.Tensor, np.ndarray]:
    a = np.arange(math.prod(shape)).reshape(shape)
    return torch.tensor(a.tolist(), dtype=dtype), a


def check(result: torch.Tensor, expected: np.ndarray) -> None:
    assert tuple(result.shape) == np.shape(expected)
    assert result.tolist() == np.asarray(expected).tolist()


L = torch.tensor  # index tensors read like the lists they hold


# -- __getitem__ ---------------------------------------------------------------------------------

# (torch index, numpy index): cases where PyTorch and numpy agree
GETITEM_CASES = [
    ([2, 0], [2, 0]),
    ((slice(None), L([[0, 3], [1, 1]])), (slice(None), np.array([[0, 3], [1, 1]]))),
    ((L([0, 2]), slice(None), L([1, 4])), ([0, 2], slice(None), [1, 4])),  # index dims first
    ((slice(None), L([0, 2]), L([1, -1])), (slice(None), [0, 2], [1, -1])),  # in place
    ((slice(1, None), L([[0], [2]]), slice(None, None, 2)),
     (slice(1, None), np.array([[0], [2]]), slice(None, None, 2))),
    ((Ellipsis, L([4, 0, 4])), (Ellipsis, [4, 0, 4])),
    ((None, L([1]), None), (None, [1], None)),
    ((L([[0], [2]]), L([1, 3])), (np.array([[0], [2]]), [1, 3])),  # broadcast
    ((L([True, False, True]),), (np.array([True, False, True]),)),
    ((Ellipsis, L([[True, False, True, False, True]] * 4)),
     (Ellipsis, np.array([[True, False, True, False, True]] * 4))),
    ((slice(None), L([True, False, True, True])), (slice(None), [True, False, True, True])),
    ((L([], dtype=torch.int64),), (np.array([], dtype=np.int64),)),
    ((True,), (True,)),
    ((False,), (False,)),
    ((L([1, 2], dtype=torch.int32), L([0, 0], dtype=torch.int16)), ([1, 2], [0, 0])),
]


@pytest.mark.parametrize("index, np_index", GETITEM_CASES,
                         ids=[str(i) for i in range(len(GETITEM_CASES))])
def test_getitem_matches_numpy(index, np_index):
    t, a = make(3, 4, 5)
    r = t[index]
    check(r, a[np_index])
    assert r.untyped_storage() is not t.untyped_storage()  # advanced indexing copies


def test_getitem_0d_integer_tensor_selects_a_view():
    # PyTorch reads a 0-d integer tensor index as an int: select, a view of the same storage
    t, a = make(3, 4, 5)
    r = t[L(2)]
    check(r, a[2])
    assert r.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    assert r.storage_offset() == 40
    check(t[L(1, dtype=torch.int16), L([0, 3])], a[1][[0, 3]])


def test_getitem_ints_apply_first():
    # PyTorch (unlike numpy) applies integers as selects before the index tensors: checked
    # against PyTorch 2.13.
    t, a = make(2, 3, 4)
    assert t[0, :, [0, 1]].shape == (3, 2)
    check(t[0, :, [0, 1]], a[0][:, [0, 1]])
    assert t[[0, 1], None, [0, 1]].shape == (2, 1, 4)
    assert t[None, [0, 1], 0].shape == (1, 2, 4)


def test_getitem_noncontiguous_and_expanded():
    t, a = make(4, 6)
    s = t[:, ::2].t()  # (3, 4) with strides (2, 6)
    check(s[[2, 0], 1:], a[:, ::2].T[[2, 0], 1:])
    e = torch.tensor([1, 2, 3]).expand(4, 3)
    check(e[[0, 3], [2, 1]], np.array([3, 2]))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.bool, torch.uint8,
                                   torch.float64, torch.int8])
def test_getitem_dtypes(dtype):
    t = torch.tensor([[0, 1, 1], [1, 0, 1]], dtype=dtype)
    r = t[[1, 0], [0, 0]]
    assert r.dtype == dtype
    assert r.tolist() == torch.tensor([1, 0], dtype=dtype).tolist()


def test_getitem_nested_list_is_a_tuple_with_warning():
    t, a = make(2, 3)
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        r = t[[[0, 1]]]
    check(r, a[[0, 1]])


def test_getitem_errors():
    t = torch.zeros(2, 3)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        t[L([0, 5, 7])]
    with pytest.raises(IndexError, match="index -4 is out of bounds for dimension 0 with size 3"):
        t[:, L([-4])]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool"):
        t[L([0.0])]
    with pytest.raises(IndexError, match=r"The shape of the mask \[1, 3\] at index 0 does not "
                                         r"match the shape of the indexed tensor \[2, 3\]"):
        t[L([[True, False, True]])]
    with pytest.raises(IndexError, match="shape mismatch: indexing tensors could not be "
                                         r"broadcast together with shapes \[2\], \[3\]"):
        t[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        t[[0], [0], [0]]


def test_uint8_mask_warns():
    t, a = make(3)
    with pytest.warns(UserWarning, match="uint8 is now deprecated"):
        r = t[L([1, 0, 1], dtype=torch.uint8)]
    check(r, a[[True, False, True]])


# -- __setitem__ and index_put -------------------------------------------------------------------

SETITEM_CASES = [
    (1, 1),
    ((slice(None), 2), (slice(None), 2)),
    ([0, 2], [0, 2]),
    ((L([0, 2]), slice(None), L([1, 4])), ([0, 2], slice(None), [1, 4])),
    ((slice(None), L([[0], [3]]), L([1, 2])), (slice(None), np.array([[0], [3]]), [1, 2])),
    ((Ellipsis, L([True, False, True, False, True])), (Ellipsis, [True, False, True, False,
                                                                  True])),
    ((L([[True] * 4, [False] * 4, [True, False] * 2]),),
     (np.array([[True] * 4, [False] * 4, [True, False] * 2]),)),
]


@pytest.mark.parametrize("index, np_index", SETITEM_CASES,
                         ids=[str(i) for i in range(len(SETITEM_CASES))])
def test_setitem_scalar_and_tensor(index, np_index):
    t, a = make(3, 4, 5)
    t[index] = -1
    a[np_index] = -1
    check(t, a)
    # a tensor value broadcast to the indexed shape
    t, a = make(3, 4, 5)
    shape = a[np_index].shape
    value = np.arange(shape[-1]) * 100 if shape else np.array(100)
    t[index] = torch.tensor(value.tolist())
    a[np_index] = value
    check(t, a)


def test_setitem_on_a_view_writes_through():
    t, a = make(4, 6)
    v = t[:, ::2]
    v[[0, 3], [1, 2]] = torch.tensor([-5, -6])
    a[:, ::2][[0, 3], [1, 2]] = [-5, -6]
    check(t, a)


def test_setitem_casts_and_leading_ones():
    t = torch.zeros(2, 3, dtype=torch.int64)
    t[:, [0, 2]] = 2.7  # a Python float into integers truncates, as in PyTorch
    assert t.tolist() == [[2, 0, 2], [2, 0, 2]]
    f = torch.zeros(2, 3)
    f[0] = torch.ones(1, 3)  # leading size-1 dims of the value are dropped
    f[[1]] = torch.full((1, 1, 3), 2.0)
    assert f.tolist() == [[1, 1, 1], [2, 2, 2]]
    f[0] = torch.tensor([1, 2, 3], dtype=torch.int64)  # basic indexing casts
    assert f[0].tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="Index put requires the source and destination "
                                           "dtypes match"):
        f[[0]] = torch.tensor([1, 2, 3])
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        f[[0, 5]] = 1.0


def test_setitem_bumps_version():
    t, _ = make(5)
    assert t._version == 0
    t[1] = 3
    assert t._version == 1
    t[[1]] = 3
    assert t._version == 2
    t[L([True, False, True, False, False])] = 0
    assert t._version == 3
    assert t.tolist() == [0, 3, 0, 3, 4]


def test_index_put():
    t, a = make(4, 3)
    r = torch.index_put(t, (L([0, 3]), L([2, 0])), L(-1))
    e = a.copy()
    e[[0, 3], [2, 0]] = -1
    check(r, e)
    check(t, a)  # out of place
    t.index_put_((L([1, 1, 3]),), L([[1, 1, 1], [2, 2, 2], [3, 3, 3]]), accumulate=True)
    np.add.at(a, [1, 1, 3], [[1, 1, 1], [2, 2, 2], [3, 3, 3]])
    check(t, a)
    assert t._version == 1
    x = torch.zeros(3)
    x.index_put_((L([0, 0, 2]),), torch.tensor([1.0, 2.0, 5.0]), accumulate=True)
    assert x.tolist() == [3.0, 0.0, 5.0]
    with pytest.raises(TypeError, match="expected Tensor as element 0"):
        t.index_put((None, L([0])), L(1))


# -- gather / scatter ------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_matches_take_along_axis(dim):
    t, a = make(3, 4)
    idx = np.array([[0, 2, 1], [2, 2, 0]]) if dim == 0 else np.array([[3, 0], [1, 1], [2, 3]])
    r = torch.gather(t, dim, L(idx.tolist()))
    n = dim % 2
    exp = np.take_along_axis(a[tuple(slice(0, s) if k != n else slice(None)
                                     for k, s in enumerate(idx.shape))], idx, axis=n)
    check(r, exp)
    check(t.gather(dim, L(idx.tolist())), exp)


def test_gather_dtypes_and_errors():
    t = torch.tensor([[1.5, 2.5], [3.5, 4.5]], dtype=torch.bfloat16)
    assert t.gather(1, L([[1], [0]])).tolist() == [[2.5], [3.5]]
    assert torch.gather(torch.tensor(7), 0, L(0)).tolist() == 7
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 0 with size 2"):
        t.gather(0, L([[5]]))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds"):
        t.gather(0, L([[-1]]))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        t.gather(0, L([0, 1]))
    with pytest.raises(RuntimeError, match="Size does not match at dimension 0"):
        t.gather(1, L([[0], [0], [0]]))


def scatter_loop(a, dim, idx, src, fn=None):
    """The definition: self[idx[p] along dim][other coords of p] op= src[p]."""
    out = a.copy()
    for p in itertools.product(*(range(n) for n in idx.shape)):
        q = list(p)
        q[dim] = idx[p]
        out[tuple(q)] = src[p] if fn is None else fn(out[tuple(q)], src[p])
    return out


def test_scatter_src_value_and_legacy_reduce():
    t, a = make(3, 4)
    idx = np.array([[0, 1, 2, 0], [2, 0, 1, 1]])
    src = np.arange(100, 112).reshape(2, 6)
    check(torch.scatter(t, 0, L(idx.tolist()), L(src.tolist())),
          scatter_loop(a, 0, idx, src))
    check(t.scatter(1, L([[3], [0]]), 9), scatter_loop(a, 1, np.array([[3], [0]]),
                                                       np.full((2, 1), 9)))
    check(t.scatter(0, L(idx.tolist()), L(src.tolist()), reduce="add"),
          scatter_loop(a, 0, idx, src, lambda x, y: x + y))
    check(t.scatter(0, L(idx.tolist()), 3, reduce="multiply"),
          scatter_loop(a, 0, idx, np.full(idx.shape, 3), lambda x, y: x * y))
    check(t, a)
    t.scatter_(0, L(idx.tolist()), L(src.tolist()))
    check(t, scatter_loop(a, 0, idx, src))
    assert t._version == 1


def test_scatter_errors():
    t = torch.zeros(2, 3, dtype=torch.int64)
    with pytest.raises(RuntimeError, match=r"Expected self\.dtype to be equal to src\.dtype"):
        t.scatter(0, L([[0]]), torch.ones(1, 1))
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        t.scatter(0, L([[0]]), 1, reduce="mean")
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 0 with size 2"):
        t.scatter(0, L([[5]]), 1)


def test_scatter_add():
    t, a = make(3, 4)
    idx = np.array([[0, 0, 2, 0], [0, 1, 2, 2]])
    src = np.arange(8).reshape(2, 4) + 10
    exp = a.copy()
    np.add.at(exp, (idx, np.arange(4)[None, :].repeat(2, 0)), src)
    check(torch.scatter_add(t, 0, L(idx.tolist()), L(src.tolist())), exp)
    t.scatter_add_(0, L(idx.tolist()), L(src.tolist()))
    check(t, exp)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_float(reduce, include_self):
    self_ = np.array([1.0, 2.0, -3.0, 4.0])
    idx = np.array([0, 0, 2, 2, 2])
    src = np.array([5.0, -1.0, 2.0, 7.0, 0.5])
    exp = self_.copy()
    for i in set(idx.tolist()):
        vals = list(src[idx == i]) + ([self_[i]] if include_self else [])
        exp[i] = {"sum": sum, "prod": math.prod, "mean": lambda v: sum(v) / len(v),
                  "amax": max, "amin": min}[reduce](vals)
    r = torch.tensor(self_.tolist()).scatter_reduce(0, L(idx.tolist()), torch.tensor(
        src.tolist()), reduce, include_self=include_self)
    np.testing.assert_allclose(r.numpy(), exp, rtol=1e-6)


def test_scatter_reduce_integer_mean_floors_and_nan():
    # checked against PyTorch 2.13
    s = L([1, 2, 3])
    assert s.scatter_reduce(0, L([0, 0, 0]), L([-7, 8, -9]), "mean").tolist() == [-2, 2, 3]
    assert s.scatter_reduce(0, L([0, 0, 0]), L([-7, 8, -9]), "mean",
                            include_self=False).tolist() == [-3, 2, 3]
    f = torch.tensor([1.0, 2.0])
    r = f.scatter_reduce(0, L([0, 0]), torch.tensor([float("nan"), 5.0]), "amax")
    assert math.isnan(r[0].item()) and r[1].item() == 2.0
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean"):
        f.scatter_reduce(0, L([0]), f[:1], "max")
    f.scatter_reduce_(0, L([1]), torch.tensor([10.0]), "sum")
    assert f.tolist() == [1.0, 12.0] and f._version == 1


# -- index_select / index_add / index_copy / index_fill / index_reduce ------------------------


def test_index_select():
    t, a = make(4, 3)
    check(torch.index_select(t, 0, L([3, 0, 3])), a[[3, 0, 3]])
    check(t.index_select(1, L([2, 1], dtype=torch.int32)), a[:, [2, 1]])
    check(t.index_select(-1, L([], dtype=torch.int64)), a[:, []])
    check(t.index_select(0, L(2)), a[[2]])
    with pytest.raises(IndexError, match="index out of range in self"):
        t.index_select(0, L([4]))
    with pytest.raises(IndexError, match="index out of range in self"):
        t.index_select(0, L([-1]))
    with pytest.raises(RuntimeError, match="Expected dtype int64 or int32 for index"):
        t.index_select(0, L([0.0]))


def test_index_add_copy_fill():
    t, a = make(4, 3)
    src = np.arange(9).reshape(3, 3) * 10
    exp = a.copy()
    np.add.at(exp, [3, 0, 3], 2 * src)
    check(t.index_add(0, L([3, 0, 3]), L(src.tolist()), alpha=2), exp)
    exp = a.copy()
    exp[:, [2, 0]] = [[-1, -2]] * 4
    check(torch.index_copy(t, 1, L([2, 0]), L([[-1, -2]] * 4)), exp)
    exp = a.copy()
    exp[:, -1] = 7
    check(t.index_fill(1, L([-1]), 7), exp)
    check(t.index_fill(0, L([1, 2]), L(0)), np.where(np.isin(np.arange(4), [1, 2])[:, None], 0,
                                                     a))
    check(t, a)
    t.index_add_(0, L([0]), L([[1, 1, 1]]))
    t.index_copy_(0, L([3]), L([[9, 9, 9]]))
    t.index_fill_(1, L([0]), -4)
    assert t._version == 3
    assert t.tolist() == [[-4, 2, 3], [-4, 4, 5], [-4, 7, 8], [-4, 9, 9]]


def test_index_ops_errors():
    t = torch.zeros(2, 3, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 0 with size 2"):
        t.index_add(0, L([5]), torch.ones(1, 3, dtype=torch.int64))
    with pytest.raises(IndexError, match=r"index_copy_\(\): index -1 is out of bounds"):
        t.index_copy(0, L([-1]), torch.ones(1, 3, dtype=torch.int64))
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        t.index_fill(0, L([5]), 1)
    with pytest.raises(RuntimeError, match=r"self \(Long\) and source \(Float\) must have the "
                                           "same scalar type"):
        t.index_add(0, L([1]), torch.ones(1, 3))
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax or "
                                           "amin but got sum"):
        t.index_reduce(0, L([1]), torch.ones(1, 3, dtype=torch.int64), "sum")


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(reduce, include_self):
    self_ = np.array([[1.0, -2.0], [3.0, 4.0], [0.5, 6.0]])
    idx = [0, 2, 0]
    src = np.array([[2.0, 3.0], [-1.0, 5.0], [4.0, -6.0]])
    exp = self_.copy()
    ops = {"prod": math.prod, "mean": lambda v: sum(v) / len(v), "amax": max, "amin": min}
    for i in set(idx):
        for c in range(2):
            vals = [src[k, c] for k in range(3) if idx[k] == i]
            exp[i, c] = ops[reduce](vals + ([self_[i, c]] if include_self else []))
    r = torch.tensor(self_.tolist()).index_reduce(0, L(idx), torch.tensor(src.tolist()), reduce,
                                                  include_self=include_self)
    np.testing.assert_allclose(r.numpy(), exp, rtol=1e-6)


# -- masked ops --------------------------------------------------------------------------------


def test_masked_fill():
    t, a = make(2, 3)
    m = np.array([True, False, True])
    check(t.masked_fill(L(m.tolist()), -1), np.where(m, -1, a))
    check(torch.masked_fill(make(3)[0], L([[True], [False]]), 5),
          np.where(np.array([[True], [False]]), 5, np.arange(3)))  # broadcasts both
    assert t.masked_fill(L(m.tolist()), 2.5).tolist()[0] == [2, 1, 2]  # cast to int64
    f = torch.zeros(2, 3, dtype=torch.float16)
    f.masked_fill_(L(m.tolist()), L(1.5))
    assert f.tolist() == [[1.5, 0.0, 1.5]] * 2 and f._version == 1
    with pytest.raises(RuntimeError, match="only supports boolean masks, but got mask with "
                                           "dtype long int"):
        t.masked_fill(L([1, 0, 1]), 5)
    with pytest.raises(RuntimeError, match="only supports a 0-dimensional value tensor"):
        t.masked_fill(L(m.tolist()), L([5]))


def test_masked_select_and_scatter():
    t, a = make(3, 4)
    m = (a % 3 == 0)
    check(torch.masked_select(t, L(m.tolist())), a[m])
    check(t.masked_select(L([True, False, False, True])), a[:, [0, 3]].reshape(-1))
    check(torch.masked_select(L(5), L(True)), np.array([5]))
    with pytest.raises(RuntimeError, match="expected BoolTensor for mask"):
        t.masked_select(L([1, 0, 1, 0]))
    src = np.arange(100, 112)
    exp = a.copy()
    exp[m] = src[: m.sum()]
    check(t.masked_scatter(L(m.tolist()), L(src.tolist())), exp)
    check(t, a)
    t.masked_scatter_(L(m.tolist()), L(src.reshape(3, 4).tolist()))
    check(t, exp)
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones"):
        t.masked_scatter(L(m.tolist()), L([1]))


# -- take / take_along_dim / put -----------------------------------------------------------------


def test_take_and_take_along_dim():
    t, a = make(3, 4)
    check(torch.take(t, L([[0, 11], [-1, 5]])), np.take(a, [[0, 11], [-1, 5]]))
    check(t[:, ::2].take(L([1, 5])), np.take(a[:, ::2], [1, 5]))
    with pytest.raises(IndexError, match="out of range: tried to access index 12 on a tensor of "
                                         "12 elements"):
        t.take(L([12]))
    idx = np.array([[0, 3], [1, 1], [2, -1]])
    check(torch.take_along_dim(t, L(idx.tolist()), 1), np.take_along_axis(a, idx % 4, 1))
    check(t.take_along_dim(L([[2, 0, 1, 0]]), 0),
          np.take_along_axis(a, np.array([[2, 0, 1, 0]]), 0))
    check(t.take_along_dim(L([5, 0])), np.take(a, [5, 0]))
    col = L([[1], [0], [3]])  # broadcasts against the other dims
    check(t.take_along_dim(col, 1), np.take_along_axis(a, np.array([[1], [0], [3]]), 1))


def test_put():
    t, a = make(3, 4)
    exp = a.copy().reshape(-1)
    exp[[0, 11, -1]] = [-1, -2, -3]
    check(t.put(L([0, 11, -1]), L([-1, -2, -3])), exp.reshape(3, 4))
    s = t[:, ::2]
    s.put_(L([[1, 1]]), L([[10, 20]]), accumulate=True)
    exp = a.copy()
    exp[0, 2] += 30
    check(t, exp)


# -- nonzero ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.bool, torch.int8,
                                   torch.float64])
def test_nonzero_matches_argwhere(dtype):
    a = np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 5, 1]])
    t = torch.tensor(a.tolist(), dtype=dtype)
    r = torch.nonzero(t)
    check(r, np.argwhere(a))
    assert r.dtype == torch.int64
    assert r.stride() == (1, r.shape[0])  # PyTorch's column-major layout
    cols = torch.nonzero(t, as_tuple=True)
    assert [c.tolist() for c in cols] == [list(c) for c in np.nonzero(a)]
    check(torch.argwhere(t), np.argwhere(a))
    check(t[:, ::2].nonzero(), np.argwhere(a[:, ::2]))


def test_nonzero_edge_cases():
    assert torch.nonzero(torch.zeros(0, 3)).shape == (0, 2)
    assert torch.nonzero(torch.tensor(3)).shape == (1, 0)
    assert torch.nonzero(torch.tensor(0)).shape == (0, 0)
    assert [c.tolist() for c in torch.nonzero(torch.tensor(3), as_tuple=True)] == [[0]]
    assert [c.tolist() for c in torch.nonzero(torch.tensor(0), as_tuple=True)] == [[]]
    nan = torch.tensor([float("nan"), 0.0, -0.0])
    assert nan.nonzero().tolist() == [[0]]


# -- the reference kernels directly ------------------------------------------------------------


def test_reference_scatter_kernel_reduces_half_in_float32():
    from torch._core.alloc import PRIMS

    out = torch.tensor([0.0, 0.0], dtype=torch.float16)
    src = torch.full((4,), 0.1, dtype=torch.float16)
    PRIMS.scatter_(out, 0, L([0, 0, 0, 0]), src, "sum", True)
    assert out.tolist() == torch.tensor([0.4, 0.0], dtype=torch.float16).tolist()


def test_numpy_indices_and_meta_tensors():
    t, a = make(3, 4)
    check(t[np.array([2, 0])], a[np.array([2, 0])])
    check(t[:, np.array([True, False, True, False])], a[:, np.array([True, False, True, False])])
    check(t[np.int64(1)], a[1])
    m = torch.zeros(3, 4, device="meta")
    assert m[[0, 2], 1:].shape == (2, 3) and m[[0, 2]].device.type == "meta"
    assert m.gather(1, torch.zeros(3, 2, dtype=torch.int64, device="meta")).shape == (3, 2)
