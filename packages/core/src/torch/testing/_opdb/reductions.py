"""Op database rows: reductions, scans, sorting and statistics.

Ops whose index results PyTorch leaves to its algorithm when values tie (topk, kthvalue,
median, nanmedian) get inputs with distinct values, so any correct implementation agrees.
"""

from __future__ import annotations

import math

import numpy as np

from . import ALL, FLOATS, INTS, OpInfo, SampleInput

NUMERIC = FLOATS + INTS
REAL_FLOATS = ("float32", "float64")


def distinct(torch, make, shape, dtype, noncontiguous=False, nan_at=()):
    """A tensor of ``shape`` whose values are all different (exact in every dtype), with NaN
    at the positions ``nan_at``."""
    full = tuple(shape[:-1]) + (shape[-1] * 2,) if noncontiguous and shape else tuple(shape)
    n = math.prod(full)
    values = make.rng.permutation(n).astype(np.float64)
    if dtype != "uint8":
        values -= n // 2
    if dtype in FLOATS:
        values /= 2
    values = values.reshape(full)
    for pos in nan_at:
        values[pos] = np.nan
    t = torch.tensor(values.tolist(), dtype=getattr(torch, dtype))
    return t[..., ::2] if noncontiguous and shape else t


def empty(torch, shape, dtype):
    """A zero-size tensor of ``shape`` (``torch.tensor`` of an empty list would be 1-d)."""
    return torch.zeros(shape, dtype=getattr(torch, dtype))


def with_nan(torch, make, shape, dtype, where=((0, 1),)):
    """A float tensor with NaN at the given positions."""
    values = make.array(shape, dtype)
    for pos in where:
        values[pos] = np.nan
    return torch.tensor(values.tolist(), dtype=getattr(torch, dtype))


# -- sample generators ----------------------------------------------------------------------


def reduce_samples(torch, dtype, make):
    """sum-like reductions: dim None/int/tuple/negative, keepdim, empty, 0-d, strided."""
    yield SampleInput(make((3, 4), dtype), name="all")
    yield SampleInput(make((3, 4), dtype), (1,), name="dim 1")
    yield SampleInput(make((3, 4), dtype), (-2,), {"keepdim": True}, name="dim -2 keepdim")
    yield SampleInput(make((2, 3, 4), dtype), ((0, 2),), name="dims")
    yield SampleInput(make((2, 3, 4), dtype), ((2, 0),), {"keepdim": True}, name="dims keepdim")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (0,), name="noncontiguous")
    yield SampleInput(make((4, 3), dtype).t(), (1,), name="transposed")
    yield SampleInput(make((5,), dtype).expand(3, 5), (0,), name="broadcast")
    yield SampleInput(empty(torch, (0, 3), dtype), (0,), name="empty dim")
    yield SampleInput(empty(torch, (0, 3), dtype), name="empty all")
    yield SampleInput(empty(torch, (3, 0), dtype), (0,), name="empty rows")
    yield SampleInput(make((), dtype), name="0-d")
    yield SampleInput(make((), dtype), (0,), name="0-d dim")


def prod_samples(torch, dtype, make):
    lo, hi = (-2, 3) if dtype in INTS else (-1.5, 1.5)
    yield SampleInput(make((3, 4), dtype, lo, hi), name="all")
    yield SampleInput(make((3, 4), dtype, lo, hi), (1,), name="dim 1")
    yield SampleInput(make((3, 4), dtype, lo, hi), (0,), {"keepdim": True}, name="keepdim")
    yield SampleInput(make((3, 4), dtype, lo, hi, noncontiguous=True), (-1,), name="strided")
    yield SampleInput(empty(torch, (0, 3), dtype), (0,), name="empty")
    yield SampleInput(make((), dtype), name="0-d")
    if dtype in INTS:
        yield SampleInput(make((3, 4), dtype, lo, hi), (1,), {"dtype": torch.float64},
                          name="dtype")


def sum_dtype_samples(torch, dtype, make):
    yield from reduce_samples(torch, dtype, make)
    yield SampleInput(make((3, 4), dtype), (1,), {"dtype": torch.float64}, name="dtype f64")
    if dtype in FLOATS:
        yield SampleInput(with_nan(torch, make, (3, 4), dtype), (1,), name="nan")


def mean_samples(torch, dtype, make):
    yield from reduce_samples(torch, dtype, make)
    yield SampleInput(make((3, 4), dtype), (1,), {"dtype": torch.float64}, name="dtype")
    if dtype in FLOATS:
        yield SampleInput(with_nan(torch, make, (3, 4), dtype), (1,), name="nan")


def var_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), name="all")
    yield SampleInput(make((3, 4), dtype), (1,), name="dim")
    yield SampleInput(make((3, 4), dtype), (0,), {"keepdim": True}, name="keepdim")
    yield SampleInput(make((2, 3, 4), dtype), ((0, 2),), name="dims")
    yield SampleInput(make((3, 4), dtype), (1,), {"correction": 0}, name="correction 0")
    yield SampleInput(make((3, 4), dtype), (1,), {"correction": 2}, name="correction 2")
    yield SampleInput(make((3, 4), dtype), (1, False), name="unbiased False")
    yield SampleInput(make((3, 4), dtype), (False,), name="legacy unbiased")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (1,), name="strided")
    yield SampleInput(empty(torch, (0, 3), dtype), (1,), name="empty rows")
    yield SampleInput(make((), dtype), (), {"correction": 0}, name="0-d")


def extreme_samples(torch, dtype, make):
    """max/min: all-reduce, with dim (values, indices), binary form."""
    yield SampleInput(make((3, 4), dtype), name="all")
    yield SampleInput(make((3, 4), dtype), (1,), name="dim")
    yield SampleInput(make((3, 4), dtype), (0, True), name="dim keepdim")
    yield SampleInput(make((2, 3, 4), dtype, noncontiguous=True), (-1,), name="strided")
    yield SampleInput(empty(torch, (0, 3), dtype), (1,), name="empty rows")
    yield SampleInput(make((), dtype), name="0-d")
    yield SampleInput(make((), dtype), (0,), name="0-d dim")
    yield SampleInput(make((3, 4), dtype), (make((4,), dtype),), name="binary")
    if dtype in FLOATS:
        yield SampleInput(with_nan(torch, make, (3, 4), dtype, ((0, 1), (0, 3), (2, 0))), (1,),
                          name="nan")


def amax_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), name="all")
    yield SampleInput(make((3, 4), dtype), (1,), name="dim")
    yield SampleInput(make((2, 3, 4), dtype), ((0, 2), True), name="dims keepdim")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (-1,), name="strided")
    yield SampleInput(empty(torch, (0, 3), dtype), (1,), name="empty rows")
    yield SampleInput(make((), dtype), name="0-d")
    if dtype in FLOATS:
        yield SampleInput(with_nan(torch, make, (3, 4), dtype), (1,), name="nan")


def argmax_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), name="flat")
    yield SampleInput(make((3, 4), dtype), (1,), name="dim")
    yield SampleInput(make((3, 4), dtype), (0,), {"keepdim": True}, name="keepdim")
    yield SampleInput(make((3, 4), dtype), (), {"keepdim": True}, name="flat keepdim")
    yield SampleInput(make((2, 3, 4), dtype, noncontiguous=True), (-1,), name="strided")
    yield SampleInput(empty(torch, (0, 3), dtype), (1,), name="empty rows")
    yield SampleInput(make((), dtype), name="0-d")
    if dtype in FLOATS:
        yield SampleInput(with_nan(torch, make, (3, 4), dtype, ((0, 1), (0, 3))), (1,),
                          name="nan")


def aminmax_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), name="all")
    yield SampleInput(make((3, 4), dtype), (), {"dim": 1}, name="dim")
    yield SampleInput(make((3, 4), dtype), (), {"dim": 0, "keepdim": True}, name="keepdim")
    yield SampleInput(make((), dtype), name="0-d")


def logsumexp_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (1,), name="dim")
    yield SampleInput(make((2, 3, 4), dtype), ((0, 2), True), name="dims keepdim")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (0,), name="strided")
    yield SampleInput(empty(torch, (0, 3), dtype), (0,), name="empty")
    yield SampleInput(make((), dtype), (0,), name="0-d")
    if dtype in FLOATS:
        big = torch.tensor([[1000.0, 1000.0], [-math.inf, -math.inf], [math.inf, 1.0]],
                           dtype=getattr(torch, dtype))
        yield SampleInput(big, (1,), name="extremes")


def truth_samples(torch, dtype, make):
    lo, hi = (-1, 2) if dtype in INTS else (None, None)
    yield SampleInput(make((3, 4), dtype, lo, hi), name="all")
    yield SampleInput(make((3, 4), dtype, lo, hi), (1,), name="dim")
    yield SampleInput(make((2, 3, 4), dtype, lo, hi), ((0, 2),), {"keepdim": True},
                      name="dims")
    yield SampleInput(make((3, 4), dtype, lo, hi, noncontiguous=True), (0,), name="strided")
    yield SampleInput(empty(torch, (0, 3), dtype), (0,), name="empty")
    yield SampleInput(make((), dtype), name="0-d")


def count_nonzero_samples(torch, dtype, make):
    lo, hi = (-1, 2) if dtype in INTS else (None, None)
    yield SampleInput(make((3, 4), dtype, lo, hi), name="all")
    yield SampleInput(make((3, 4), dtype, lo, hi), (1,), name="dim")
    yield SampleInput(make((2, 3, 4), dtype, lo, hi), ((0, 2),), name="dims")
    yield SampleInput(empty(torch, (0, 3), dtype), (0,), name="empty")


def median_samples(torch, dtype, make):
    yield SampleInput(distinct(torch, make, (3, 5), dtype), name="all")
    yield SampleInput(distinct(torch, make, (3, 4), dtype), name="all even")
    yield SampleInput(distinct(torch, make, (3, 5), dtype), (1,), name="dim")
    yield SampleInput(distinct(torch, make, (4, 3), dtype), (0, True), name="keepdim")
    yield SampleInput(distinct(torch, make, (3, 4), dtype, noncontiguous=True), (-1,),
                      name="strided")
    yield SampleInput(empty(torch, (0, 3), dtype), (1,), name="empty rows")
    yield SampleInput(make((), dtype), (0,), name="0-d")
    if dtype in FLOATS:
        yield SampleInput(distinct(torch, make, (3, 5), dtype, nan_at=((0, 1), (0, 3), (2, 4))),
                          (1,), name="nan")
        yield SampleInput(distinct(torch, make, (2, 3), dtype, nan_at=((1, 0), (1, 1), (1, 2))),
                          (1,), name="all nan row")


def kthvalue_samples(torch, dtype, make):
    yield SampleInput(distinct(torch, make, (3, 5), dtype), (2,), name="k 2")
    yield SampleInput(distinct(torch, make, (3, 5), dtype), (5, 1), name="k last")
    yield SampleInput(distinct(torch, make, (4, 3), dtype), (1, 0, True), name="keepdim")
    yield SampleInput(distinct(torch, make, (3, 4), dtype, noncontiguous=True), (3,),
                      name="strided")
    yield SampleInput(make((), dtype), (1,), name="0-d")


def mode_samples(torch, dtype, make):
    _, values = small_values(torch, make, (3, 6), dtype, 3)
    yield SampleInput(values, name="default dim")
    yield SampleInput(values, (0, True), name="dim 0 keepdim")
    yield SampleInput(make((), dtype), name="0-d")
    yield SampleInput(empty(torch, (0, 2), dtype), name="empty rows")


def quantile_samples(torch, dtype, make):
    dt = getattr(torch, dtype)
    yield SampleInput(make((3, 5), dtype), (0.3,), name="scalar q")
    yield SampleInput(make((3, 5), dtype), (torch.tensor([0.0, 0.25, 0.5, 1.0], dtype=dt), 1),
                      name="q tensor dim")
    yield SampleInput(make((3, 4), dtype), (0.5, 0, True), name="keepdim")
    yield SampleInput(make((3, 4), dtype), (torch.tensor([0.2, 0.7], dtype=dt),), {"keepdim": True},
                      name="q tensor flat keepdim")
    for mode in ("lower", "higher", "midpoint", "nearest"):
        yield SampleInput(make((2, 5), dtype), (torch.tensor([0.1, 0.5, 0.875], dtype=dt), 1),
                          {"interpolation": mode}, name=mode)
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (0.6, -1), name="strided")
    yield SampleInput(make((), dtype), (0.5,), name="0-d")
    yield SampleInput(with_nan(torch, make, (3, 4), dtype), (0.4, 1), name="nan")
    yield SampleInput(with_nan(torch, make, (2, 3), dtype, ((1, 0), (1, 1), (1, 2))),
                      (torch.tensor([0.5], dtype=dt), 1), name="all nan row")


def cumulative_samples(torch, dtype, make):
    lo, hi = (-2, 3) if dtype in INTS else (-1.5, 1.5)
    yield SampleInput(make((3, 4), dtype, lo, hi), (1,), name="dim 1")
    yield SampleInput(make((3, 4), dtype, lo, hi), (0,), name="dim 0")
    yield SampleInput(make((2, 3, 4), dtype, lo, hi, noncontiguous=True), (-1,), name="strided")
    yield SampleInput(make((3, 4), dtype, lo, hi).t(), (1,), name="transposed")
    yield SampleInput(empty(torch, (0, 3), dtype), (0,), name="empty")
    yield SampleInput(make((), dtype), (0,), name="0-d")
    if dtype in INTS + ("bool",):
        yield SampleInput(make((3, 4), dtype, lo, hi), (1,), {"dtype": torch.float32},
                          name="dtype")


def cum_extreme_samples(torch, dtype, make):
    lo, hi = (-3, 4) if dtype in INTS else (None, None)
    yield SampleInput(make((3, 6), dtype, lo, hi), (1,), name="dim 1")
    yield SampleInput(make((4, 3), dtype, lo, hi), (0,), name="dim 0")
    yield SampleInput(make((2, 3, 4), dtype, lo, hi, noncontiguous=True), (-1,), name="strided")
    yield SampleInput(empty(torch, (0, 3), dtype), (0,), name="empty")
    yield SampleInput(make((), dtype), (0,), name="0-d")
    if dtype in FLOATS:
        yield SampleInput(with_nan(torch, make, (2, 6), dtype, ((0, 2), (0, 4), (1, 5))), (1,),
                          name="nan")


def logcumsumexp_samples(torch, dtype, make):
    yield SampleInput(make((3, 6), dtype), (1,), name="dim 1")
    yield SampleInput(make((5, 3), dtype), (0,), name="dim 0")
    yield SampleInput(make((2, 3, 4), dtype, noncontiguous=True), (-1,), name="strided")
    yield SampleInput(empty(torch, (0, 3), dtype), (0,), name="empty")
    yield SampleInput(make((), dtype), (0,), name="0-d")
    if dtype in REAL_FLOATS:
        extremes = torch.tensor([-1000.0, -1000.0, 0.0, -math.inf, 5.0],
                                dtype=getattr(torch, dtype))
        yield SampleInput(extremes, (0,), name="wide range")


def sort_samples(torch, dtype, make):
    yield SampleInput(make((3, 6), dtype), (), {"stable": True}, name="stable")
    yield SampleInput(make((3, 6), dtype), (), {"dim": 0, "descending": True, "stable": True},
                      name="dim 0 descending")
    yield SampleInput(make((3, 6), dtype), (), {"descending": True, "stable": True},
                      name="descending")
    yield SampleInput(make((2, 3, 4), dtype, noncontiguous=True), (), {"dim": 1, "stable": True},
                      name="strided")
    if dtype != "bool":
        yield SampleInput(distinct(torch, make, (3, 5), dtype), name="default")
    yield SampleInput(empty(torch, (0, 3), dtype), (), {"stable": True}, name="empty")
    yield SampleInput(make((), dtype), name="0-d")
    if dtype in FLOATS:
        yield SampleInput(with_nan(torch, make, (2, 5), dtype, ((0, 1), (0, 3), (1, 0))),
                          (), {"dim": 1, "descending": True, "stable": True},
                          name="nan descending")
        yield SampleInput(with_nan(torch, make, (2, 5), dtype, ((0, 1), (0, 3), (1, 0))),
                          (), {"dim": 1, "stable": True}, name="nan")


def argsort_samples(torch, dtype, make):
    yield SampleInput(make((3, 6), dtype), (), {"stable": True}, name="stable")
    yield SampleInput(make((3, 6), dtype), (), {"dim": 0, "descending": True, "stable": True},
                      name="descending")
    yield SampleInput(make((3, 6), dtype), (1, True), name="positional")
    yield SampleInput(empty(torch, (0, 2), dtype), (), {"stable": True}, name="empty")
    yield SampleInput(make((), dtype), name="0-d")


def msort_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), name="2-d")
    yield SampleInput(make((5,), dtype, noncontiguous=True), name="strided")
    yield SampleInput(empty(torch, (0, 2), dtype), name="empty")


def topk_samples(torch, dtype, make):
    yield SampleInput(distinct(torch, make, (3, 6), dtype), (2,), name="k 2")
    yield SampleInput(distinct(torch, make, (3, 6), dtype), (3, 1, False), name="smallest")
    yield SampleInput(distinct(torch, make, (4, 3), dtype), (4, 0), name="dim 0 all")
    yield SampleInput(distinct(torch, make, (3, 4), dtype, noncontiguous=True), (1,),
                      name="strided")
    yield SampleInput(distinct(torch, make, (3, 5), dtype), (0,), name="k 0")
    yield SampleInput(make((), dtype), (1,), name="0-d")
    if dtype in FLOATS:
        yield SampleInput(distinct(torch, make, (2, 5), dtype, nan_at=((0, 1),)), (2,),
                          name="nan")


def small_values(torch, make, shape, dtype, high):
    """Values in [0, high) (halved for floats): plenty of repeats for unique/mode."""
    values = make.rng.integers(0, high, shape)
    if dtype == "bool":
        values = values % 2
    array = values.astype(np.float64) / 2 if dtype in FLOATS else values
    return array, torch.tensor(array.tolist(), dtype=getattr(torch, dtype))


def unique_samples(torch, dtype, make):
    array, small = small_values(torch, make, (3, 5), dtype, 4)
    yield SampleInput(small, name="default")
    yield SampleInput(small, (), {"return_inverse": True, "return_counts": True}, name="all")
    yield SampleInput(small.t(), (), {"return_inverse": True}, name="transposed")
    rows = np.concatenate([array[:2], array[:1], array[1:2]])
    rows_t = torch.tensor(rows.tolist(), dtype=getattr(torch, dtype))
    yield SampleInput(rows_t, (), {"dim": 0, "return_inverse": True, "return_counts": True},
                      name="dim 0")
    yield SampleInput(rows_t, (), {"dim": 1}, name="dim 1")
    yield SampleInput(make((0,), dtype), (), {"return_inverse": True, "return_counts": True},
                      name="empty")
    yield SampleInput(make((), dtype), (), {"return_inverse": True}, name="0-d")
    if dtype in FLOATS:
        yield SampleInput(with_nan(torch, make, (6,), dtype, ((1,), (4,))), name="nan")


def unique_consecutive_samples(torch, dtype, make):
    array, seq = small_values(torch, make, (10,), dtype, 2)
    yield SampleInput(seq, name="default")
    yield SampleInput(seq, (True, True), name="inverse counts")
    rows = np.stack([array[:4], array[:4], array[4:8], array[:4]])
    rows_t = torch.tensor(rows.tolist(), dtype=getattr(torch, dtype))
    yield SampleInput(rows_t, (), {"dim": 0, "return_counts": True}, name="dim 0")
    yield SampleInput(make((0,), dtype), (True, True), name="empty")


def boundaries(torch, dtype, values):
    """``values`` as a tensor of ``dtype``, shifted to be non-negative for uint8."""
    shift = 3 if dtype == "uint8" else 0
    return torch.tensor((np.asarray(values) + shift).tolist(), dtype=getattr(torch, dtype))


def searchsorted_samples(torch, dtype, make):
    edges = boundaries(torch, dtype, [-3, -1, 0, 2, 2, 4, 7])
    values = make((3, 4), dtype)
    yield SampleInput(edges, (values,), name="1-d boundaries")
    yield SampleInput(edges, (values,), {"right": True}, name="right")
    yield SampleInput(edges, (values,), {"side": "right"}, name="side right")
    yield SampleInput(edges, (values,), {"out_int32": True}, name="int32")
    yield SampleInput(edges, (make((), dtype),), name="0-d values")
    rows = boundaries(torch, dtype, [[-3, 0, 2, 5], [-1, -1, 4, 8]])
    yield SampleInput(rows, (make((2, 3), dtype),), name="batched")
    shuffled = boundaries(torch, dtype, [4, -2, 7, 0])
    yield SampleInput(shuffled, (make((5,), dtype),), {"sorter": torch.tensor([1, 3, 0, 2])},
                      name="sorter")
    yield SampleInput(edges, (make((0,), dtype),), name="no values")


def bucketize_samples(torch, dtype, make):
    edges = boundaries(torch, dtype, [-3, -1, 0, 2, 4, 7])
    yield SampleInput(make((3, 4), dtype), (edges,), name="default")
    yield SampleInput(make((3, 4), dtype), (edges,), {"right": True}, name="right")
    yield SampleInput(make((5,), dtype, noncontiguous=True), (edges,), {"out_int32": True},
                      name="strided int32")


def histc_samples(torch, dtype, make):
    yield SampleInput(make((20,), dtype), name="default bins")
    yield SampleInput(make((4, 5), dtype), (5,), name="data range")
    yield SampleInput(make((30,), dtype), (), {"bins": 6, "min": -2, "max": 3}, name="range")
    yield SampleInput(torch.tensor([1.0, 1.0, 1.0], dtype=getattr(torch, dtype)), (4,),
                      name="constant")
    yield SampleInput(make((0,), dtype), (4,), name="empty")


def bincount_samples(torch, dtype, make):
    yield SampleInput(make((12,), dtype, 0, 6), name="default")
    yield SampleInput(make((12,), dtype, 0, 6), (), {"minlength": 10}, name="minlength")
    yield SampleInput(make((12,), dtype, 0, 6), (make((12,), "float32"),), name="weights f32")
    yield SampleInput(make((12,), dtype, 0, 6), (make((12,), "int64"),), name="weights int")
    yield SampleInput(make((0,), dtype), name="empty")


def diff_samples(torch, dtype, make):
    yield SampleInput(make((3, 5), dtype), name="default")
    yield SampleInput(make((3, 5), dtype), (2,), name="n 2")
    yield SampleInput(make((3, 5), dtype), (1, 0), name="dim 0")
    yield SampleInput(make((3, 5), dtype, noncontiguous=True), (1, -1), name="strided")
    yield SampleInput(make((3, 5), dtype), (1, 1),
                      {"prepend": make((3, 1), dtype), "append": make((3, 2), dtype)},
                      name="prepend append")
    yield SampleInput(make((4,), dtype), (6,), name="n past length")
    yield SampleInput(empty(torch, (0, 3), dtype), (1, 0), name="empty")


def cov_samples(torch, dtype, make):
    yield SampleInput(make((3, 5), dtype), name="matrix")
    yield SampleInput(make((6,), dtype), name="vector")
    yield SampleInput(make((2, 4), dtype), kwargs={"correction": 0}, name="correction 0")
    yield SampleInput(make((2, 4), dtype), kwargs={
        "fweights": torch.tensor([1, 2, 1, 3]),
        "aweights": make((4,), dtype, 0.5, 2.0)}, name="weights")


def corrcoef_samples(torch, dtype, make):
    yield SampleInput(make((3, 5), dtype), name="matrix")
    yield SampleInput(make((4, 6), dtype, noncontiguous=True), name="noncontiguous")


def trapezoid_samples(torch, dtype, make):
    yield SampleInput(make((5,), dtype), name="vector")
    yield SampleInput(make((3, 4), dtype), kwargs={"dim": 0}, name="dim 0")
    yield SampleInput(make((3, 4), dtype), kwargs={"dx": 0.5}, name="dx")
    yield SampleInput(make((2, 4), dtype), (make((4,), dtype).sort().values,), name="x 1-d")
    yield SampleInput(make((2, 3), dtype), (make((2, 3), dtype),), name="x same shape")


def renorm_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (2, 0, 1.0), name="rows p=2")
    yield SampleInput(make((3, 4), dtype), (1, 1, 5.0), name="columns p=1")
    yield SampleInput(make((2, 3, 2), dtype), (float("inf"), 2, 2.0), name="p=inf")


def gradient_samples(torch, dtype, make):
    yield SampleInput(make((6,), dtype), name="1-d")
    yield SampleInput(make((3, 5), dtype), (), {"spacing": 2.0, "edge_order": 2},
                      name="all dims, edge order 2")
    yield SampleInput(make((3, 5), dtype), (), {"spacing": [0.5], "dim": 1}, name="one dim")
    coords = torch.tensor([0.0, 0.5, 2.0, 2.5, 4.0], dtype=getattr(torch, dtype))
    yield SampleInput(make((3, 5), dtype), (), {"spacing": [coords], "dim": -1,
                                                "edge_order": 2}, name="coordinates")


def histogramdd_samples(torch, dtype, make):
    yield SampleInput(make((20, 2), dtype), (3,), name="bins")
    yield SampleInput(make((20, 3), dtype), ([2, 3, 4],), {"range": [-5.0, 5.0] * 3},
                      name="bins per dim, range")
    yield SampleInput(make((4, 5, 2), dtype), ([2, 2],),
                      {"weight": make((4, 5), dtype, 0, 1), "density": True},
                      name="weights, density")


def is_same_size_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), (make((2, 3), dtype),), name="same")
    yield SampleInput(make((2, 3), dtype), (make((3, 2), dtype),), name="different")


OPS: list[OpInfo] = [
    OpInfo("nansum", sum_dtype_samples, dtypes=ALL, method="nansum"),
    OpInfo("prod", prod_samples, dtypes=ALL, method="prod", supports_out=True),
    OpInfo("mean", mean_samples, dtypes=FLOATS, method="mean", supports_out=True),
    OpInfo("nanmean", mean_samples, dtypes=FLOATS, method="nanmean"),
    OpInfo("var", var_samples, dtypes=FLOATS, method="var", supports_out=True),
    OpInfo("std", var_samples, dtypes=FLOATS, method="std", supports_out=True),
    OpInfo("var_mean", var_samples, dtypes=FLOATS),
    OpInfo("std_mean", var_samples, dtypes=FLOATS),
    OpInfo("max", extreme_samples, dtypes=ALL, method="max"),
    OpInfo("min", extreme_samples, dtypes=ALL, method="min"),
    OpInfo("amax", amax_samples, dtypes=ALL, method="amax", supports_out=True),
    OpInfo("amin", amax_samples, dtypes=ALL, method="amin", supports_out=True),
    OpInfo("aminmax", aminmax_samples, dtypes=ALL, method="aminmax"),
    OpInfo("argmax", argmax_samples, dtypes=NUMERIC, method="argmax", supports_out=True),
    OpInfo("argmin", argmax_samples, dtypes=NUMERIC, method="argmin", supports_out=True),
    OpInfo("logsumexp", logsumexp_samples, dtypes=NUMERIC, method="logsumexp",
           supports_out=True),
    OpInfo("all", truth_samples, dtypes=ALL, method="all", supports_out=True),
    OpInfo("any", truth_samples, dtypes=ALL, method="any", supports_out=True),
    OpInfo("count_nonzero", count_nonzero_samples, dtypes=ALL, method="count_nonzero"),
    OpInfo("median", median_samples, dtypes=NUMERIC, method="median"),
    OpInfo("nanmedian", median_samples, dtypes=NUMERIC, method="nanmedian"),
    OpInfo("kthvalue", kthvalue_samples, dtypes=NUMERIC, method="kthvalue"),
    OpInfo("mode", mode_samples, dtypes=ALL, method="mode"),
    OpInfo("quantile", quantile_samples, dtypes=REAL_FLOATS, method="quantile",
           supports_out=True),
    OpInfo("nanquantile", quantile_samples, dtypes=REAL_FLOATS, method="nanquantile",
           supports_out=True),
    OpInfo("cumsum", cumulative_samples, dtypes=ALL, method="cumsum", inplace="cumsum_",
           supports_out=True),
    OpInfo("cumprod", cumulative_samples, dtypes=ALL, method="cumprod", inplace="cumprod_",
           supports_out=True),
    OpInfo("cummax", cum_extreme_samples, dtypes=ALL, method="cummax"),
    OpInfo("cummin", cum_extreme_samples, dtypes=ALL, method="cummin"),
    OpInfo("logcumsumexp", logcumsumexp_samples, dtypes=FLOATS, method="logcumsumexp",
           supports_out=True),
    OpInfo("sort", sort_samples, dtypes=ALL, method="sort"),
    OpInfo("argsort", argsort_samples, dtypes=ALL, method="argsort"),
    OpInfo("msort", msort_samples, dtypes=ALL, method="msort", supports_out=True),
    OpInfo("topk", topk_samples, dtypes=NUMERIC, method="topk"),
    OpInfo("unique", unique_samples, dtypes=ALL, method="unique"),
    OpInfo("unique_consecutive", unique_consecutive_samples, dtypes=ALL,
           method="unique_consecutive"),
    OpInfo("searchsorted", searchsorted_samples, dtypes=NUMERIC, supports_out=True),
    OpInfo("bucketize", bucketize_samples, dtypes=NUMERIC, supports_out=True),
    OpInfo("histc", histc_samples, dtypes=REAL_FLOATS, method="histc", supports_out=True),
    OpInfo("bincount", bincount_samples, dtypes=INTS, method="bincount"),
    OpInfo("diff", diff_samples, dtypes=ALL, method="diff", supports_out=True),
    OpInfo("cov", cov_samples, dtypes=REAL_FLOATS, method="cov", atol=1e-5, rtol=1e-5),
    OpInfo("corrcoef", corrcoef_samples, dtypes=REAL_FLOATS, method="corrcoef", atol=1e-5,
           rtol=1e-5),
    OpInfo("trapezoid", trapezoid_samples, dtypes=REAL_FLOATS + ("int64",)),
    OpInfo("cumulative_trapezoid", trapezoid_samples, dtypes=REAL_FLOATS + ("int64",)),
    OpInfo("renorm", renorm_samples, dtypes=REAL_FLOATS, method="renorm", atol=1e-6,
           rtol=1e-5),
    OpInfo("gradient", gradient_samples, dtypes=("float32", "float64"), differentiable=True),
    # as in PyTorch, no meta kernel (fake tensors get the layouts)
    OpInfo("histogramdd", histogramdd_samples, dtypes=("float32", "float64"),
           supports_meta=False),
    OpInfo("is_same_size", is_same_size_samples, dtypes=ALL, method="is_same_size"),
]
