"""Op database rows: linalg (products, einsum, norms, decompositions, solvers).

Decompositions whose factors carry implementation-defined signs (qr, svd, eigh) are sampled
through sign-independent ops instead (svdvals, eigvalsh, pinv, cholesky, whose factor has a
positive diagonal); their factors are checked by reconstruction in ``tests/test_linalg.py``.
"""

from __future__ import annotations

import numpy as np

from . import FLOATS, INTS, OpInfo, SampleInput

NUMERIC = FLOATS + INTS
DECOMP = ("float32", "float64")


def _from(torch, values, dtype):
    return torch.tensor(np.asarray(values).tolist(), dtype=getattr(torch, dtype))


def _small(make, shape, dtype, noncontiguous=False):
    """Small integer values in any dtype: products and sums stay exact even in bfloat16, so
    results do not depend on the order of accumulation."""
    torch = make.torch
    if 0 in shape:
        return torch.zeros(shape, dtype=getattr(torch, dtype))
    low = 0 if dtype == "uint8" else -3
    if noncontiguous and shape:
        big = make.rng.integers(low, 4, tuple(shape[:-1]) + (2 * shape[-1],))
        return _from(torch, big, dtype)[..., ::2]
    return _from(torch, make.rng.integers(low, 4, shape), dtype)


def _make(make, shape, dtype, low=None, high=None, noncontiguous=False):
    """``make`` that also serves zero-size shapes (a nested list cannot say (0, 3))."""
    if 0 in shape:
        return make.torch.zeros(shape, dtype=getattr(make.torch, dtype))
    return make(shape, dtype, low, high, noncontiguous)


def mm_samples(torch, dtype, make):
    yield SampleInput(_small(make, (3, 4), dtype), (_small(make, (4, 5), dtype),), name="3x4@4x5")
    yield SampleInput(_small(make, (1, 1), dtype), (_small(make, (1, 1), dtype),), name="1x1")
    yield SampleInput(_small(make, (3, 0), dtype), (_small(make, (0, 2), dtype),), name="k=0")
    yield SampleInput(_small(make, (0, 3), dtype), (_small(make, (3, 2), dtype),), name="n=0")
    yield SampleInput(_small(make, (4, 3), dtype).t(), (_small(make, (4, 5), dtype, True),),
                      name="transposed, strided")
    yield SampleInput(_small(make, (1, 4), dtype).expand(3, 4), (_small(make, (4, 2), dtype),),
                      name="expanded")


def bmm_samples(torch, dtype, make):
    yield SampleInput(_small(make, (2, 3, 4), dtype), (_small(make, (2, 4, 5), dtype),),
                      name="basic")
    yield SampleInput(_small(make, (0, 3, 4), dtype), (_small(make, (0, 4, 5), dtype),),
                      name="empty batch")
    yield SampleInput(_small(make, (2, 3, 0), dtype), (_small(make, (2, 0, 5), dtype),),
                      name="k=0")
    yield SampleInput(_small(make, (2, 4, 3), dtype).transpose(1, 2),
                      (_small(make, (2, 4, 5), dtype, True),), name="strided")


def matmul_samples(torch, dtype, make):
    cases = [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)), ((3, 4), (4, 2)),
             ((2, 3, 4), (4,)), ((2, 3, 4), (4, 5)), ((4,), (2, 4, 5)), ((3, 4), (2, 4, 5)),
             ((2, 1, 3, 4), (5, 4, 2)), ((2, 3, 4), (2, 4, 5)), ((0, 3, 4), (4, 2)),
             ((2, 3, 0), (2, 0, 5)), ((1, 4), (4,))]
    for sa, sb in cases:
        yield SampleInput(_small(make, sa, dtype), (_small(make, sb, dtype),), name=f"{sa}@{sb}")
    yield SampleInput(_small(make, (2, 3, 4), dtype, True),
                      (_small(make, (4, 2), dtype, True),), name="noncontiguous")


def mv_samples(torch, dtype, make):
    yield SampleInput(_small(make, (3, 4), dtype), (_small(make, (4,), dtype),), name="basic")
    yield SampleInput(_small(make, (0, 4), dtype), (_small(make, (4,), dtype),), name="n=0")
    yield SampleInput(_small(make, (3, 0), dtype), (_small(make, (0,), dtype),), name="k=0")
    yield SampleInput(_small(make, (4, 3), dtype).t(), (_small(make, (4,), dtype, True),),
                      name="strided")


def dot_samples(torch, dtype, make):
    yield SampleInput(_small(make, (5,), dtype), (_small(make, (5,), dtype),), name="basic")
    yield SampleInput(_small(make, (0,), dtype), (_small(make, (0,), dtype),), name="empty")
    yield SampleInput(_small(make, (4,), dtype, True), (_small(make, (4,), dtype),),
                      name="strided")


def cdist_samples(torch, dtype, make):
    x1, x2 = make((2, 3, 4), dtype), make((2, 5, 4), dtype)
    for p in (2.0, 1.0, 3.0, 0.5, float("inf")):
        yield SampleInput(x1, (x2, p), name=f"p {p}")
    yield SampleInput(make((4, 3), dtype, noncontiguous=True), (make((2, 3), dtype),),
                      name="unbatched noncontiguous")
    yield SampleInput(make((3, 1, 4, 2), dtype), (make((2, 3, 2), dtype),), name="broadcast")
    yield SampleInput(make((4, 3), dtype), (make((5, 3), dtype),),
                      {"compute_mode": "use_mm_for_euclid_dist"}, name="matrix product")


def dist_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (make((3, 4), dtype),), name="default")
    yield SampleInput(make((3, 4), dtype), (make((4,), dtype), 1), name="broadcast p 1")
    yield SampleInput(make((3, 4), dtype), (make((3, 4), dtype), 3.5), name="p 3.5")
    yield SampleInput(make((5,), dtype), (make((5,), dtype), float("inf")), name="p inf")


def outer_samples(torch, dtype, make):
    yield SampleInput(_small(make, (3,), dtype), (_small(make, (4,), dtype),), name="basic")
    yield SampleInput(_small(make, (0,), dtype), (_small(make, (4,), dtype),), name="empty")
    yield SampleInput(_small(make, (3,), dtype, True), (_small(make, (2,), "int64"),),
                      name="promoting")


def inner_samples(torch, dtype, make):
    yield SampleInput(_small(make, (4,), dtype), (_small(make, (4,), dtype),), name="vectors")
    yield SampleInput(_small(make, (2, 3, 4), dtype), (_small(make, (5, 4), dtype),),
                      name="batched")
    yield SampleInput(_small(make, (), dtype), (_small(make, (2, 3), dtype),), name="0-d")
    yield SampleInput(_small(make, (2, 0), dtype), (_small(make, (3, 0), dtype),), name="empty")


def _addmm_input(make, dtype, shape):
    return _small(make, shape, dtype)


def addmm_samples(torch, dtype, make):
    m1, m2 = _small(make, (2, 3), dtype), _small(make, (3, 4), dtype)
    yield SampleInput(_small(make, (2, 4), dtype), (m1, m2), name="basic")
    yield SampleInput(_small(make, (4,), dtype), (m1, m2), name="broadcast input")
    yield SampleInput(_small(make, (2, 4), dtype), (m1, m2), {"beta": 2, "alpha": 3},
                      name="beta alpha")
    yield SampleInput(_small(make, (2, 4), dtype), (m1, m2), {"beta": 0}, name="beta 0")
    yield SampleInput(_small(make, (0, 4), dtype), (_small(make, (0, 3), dtype), m2),
                      name="empty")


def addmv_samples(torch, dtype, make):
    mat, vec = _small(make, (3, 4), dtype), _small(make, (4,), dtype)
    yield SampleInput(_small(make, (3,), dtype), (mat, vec), name="basic")
    yield SampleInput(_small(make, (1,), dtype), (mat, vec), {"beta": 2, "alpha": -1},
                      name="broadcast beta alpha")
    yield SampleInput(_small(make, (), dtype), (mat, vec), {"beta": 0}, name="0-d beta 0")


def baddbmm_samples(torch, dtype, make):
    b1, b2 = _small(make, (2, 3, 4), dtype), _small(make, (2, 4, 5), dtype)
    yield SampleInput(_small(make, (2, 3, 5), dtype), (b1, b2), name="basic")
    yield SampleInput(_small(make, (3, 5), dtype), (b1, b2), {"beta": -1, "alpha": 2},
                      name="broadcast beta alpha")
    yield SampleInput(_small(make, (2, 3, 5), dtype), (b1, b2), {"beta": 0}, name="beta 0")


def addbmm_samples(torch, dtype, make):
    b1, b2 = _small(make, (2, 3, 4), dtype), _small(make, (2, 4, 5), dtype)
    yield SampleInput(_small(make, (3, 5), dtype), (b1, b2), name="basic")
    yield SampleInput(_small(make, (5,), dtype), (b1, b2), {"beta": 2, "alpha": -1},
                      name="broadcast beta alpha")
    yield SampleInput(_small(make, (3, 5), dtype), (_small(make, (0, 3, 4), dtype),
                                                    _small(make, (0, 4, 5), dtype)),
                      name="empty batch")


def einsum_samples(torch, dtype, make):
    s = lambda shape: _small(make, shape, dtype)  # noqa: E731
    yield SampleInput("ij,jk->ik", (s((2, 3)), s((3, 4))), name="matmul")
    yield SampleInput("ij,jk", (s((2, 3)), s((3, 4))), name="implicit")
    yield SampleInput("bij,bjk->bik", (s((2, 2, 3)), s((2, 3, 4))), name="batched")
    yield SampleInput("...ij,...jk", (s((2, 1, 2, 3)), s((4, 3, 5))), name="ellipsis")
    yield SampleInput("i,j->ij", (s((3,)), s((4,))), name="outer")
    yield SampleInput("i,i->", (s((4,)), s((4,))), name="dot")
    yield SampleInput("ij->ji", (s((2, 3)),), name="transpose")
    yield SampleInput("ii->i", (s((3, 3)),), name="diagonal")
    yield SampleInput("ij,ij->ij", (s((2, 3)), s((2, 3))), name="hadamard")
    yield SampleInput("ij,jk,kl->il", (s((2, 3)), s((3, 4)), s((4, 2))), name="chain")
    yield SampleInput("bn,anm,bm->ba", (s((2, 3)), s((4, 3, 5)), s((2, 5))), name="bilinear")
    yield SampleInput("i,i->", (s((3,)), s((1,))), name="size-1 broadcast")
    yield SampleInput("ij,jk->ik", (s((0, 3)), s((3, 4))), name="empty")
    yield SampleInput("ij,jk->ik", (s((3, 2)).t(), _small(make, (3, 4), dtype, True)),
                      name="strided")


def tensordot_samples(torch, dtype, make):
    s = lambda shape: _small(make, shape, dtype)  # noqa: E731
    yield SampleInput(s((3, 4, 5)), (s((4, 5, 6)),), name="dims=2")
    yield SampleInput(s((3, 4, 5)), (s((5, 6)),), {"dims": 1}, name="dims=1")
    yield SampleInput(s((3, 4)), (s((2, 5)),), {"dims": 0}, name="dims=0")
    yield SampleInput(s((3, 4, 5)), (s((5, 3, 2)),), {"dims": ([0, 2], [1, 0])}, name="lists")
    yield SampleInput(s((3, 0)), (s((0, 2)),), {"dims": 1}, name="empty")


def kron_samples(torch, dtype, make):
    s = lambda shape: _small(make, shape, dtype)  # noqa: E731
    yield SampleInput(s((2, 3)), (s((3, 2)),), name="2d")
    yield SampleInput(s((2,)), (s((2, 3)),), name="1d x 2d")
    yield SampleInput(s(()), (s((3,)),), name="0-d")
    yield SampleInput(s((2, 0)), (s((3, 1)),), name="empty")
    yield SampleInput(s((2, 2)), (_small(make, (3,), "int64"),), name="promoting")


def trace_samples(torch, dtype, make):
    yield SampleInput(_small(make, (3, 3), dtype), name="square")
    yield SampleInput(_small(make, (2, 4), dtype), name="wide")
    yield SampleInput(_small(make, (4, 2), dtype, True), name="tall strided")
    yield SampleInput(_small(make, (0, 3), dtype), name="empty")


def cross_samples(torch, dtype, make):
    s = lambda shape: _small(make, shape, dtype)  # noqa: E731
    yield SampleInput(s((4, 3)), (s((4, 3)),), {"dim": 1}, name="dim 1")
    yield SampleInput(s((3, 2)), (s((3, 2)),), {"dim": 0}, name="dim 0")
    yield SampleInput(s((2, 1, 3)), (s((1, 4, 3)),), {"dim": -1}, name="broadcast")
    yield SampleInput(s((0, 3)), (s((0, 3)),), {"dim": 1}, name="empty")


def linalg_cross_samples(torch, dtype, make):
    s = lambda shape: _small(make, shape, dtype)  # noqa: E731
    yield SampleInput(s((4, 3)), (s((4, 3)),), name="default dim")
    yield SampleInput(s((3, 2)), (s((3, 2)),), {"dim": 0}, name="dim 0")
    yield SampleInput(s((2, 1, 3)), (s((1, 4, 3)),), name="broadcast")
    yield SampleInput(s((3,)), (s((3,)),), name="vectors")


def vector_norm_samples(torch, dtype, make):
    x = make((3, 4), dtype)
    yield SampleInput(x, name="default")
    for ord in (1, 2, 3, 0.5, 0, float("inf"), -float("inf"), -1):
        yield SampleInput(x, (ord,), name=f"ord {ord}")
    yield SampleInput(x, (2, 1), name="dim 1")
    yield SampleInput(make((2, 3, 4), dtype), (1, (0, 2), True), name="dims keepdim")
    yield SampleInput(make((), dtype), (3,), name="0-d")
    yield SampleInput(_make(make, (0, 3), dtype), (2,), name="empty")
    yield SampleInput(_make(make, (0, 3), dtype), (float("inf"), 1), name="empty inf kept dim")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (2, -1), name="noncontiguous")
    yield SampleInput(make((3, 4), dtype), kwargs={"dtype": torch.float64}, name="dtype")


def matrix_norm_samples(torch, dtype, make):
    x = make((2, 3, 4), dtype)
    low = dtype in ("float16", "bfloat16")
    for ord in ("fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")):
        if low and ord in ("nuc", 2, -2):
            continue
        yield SampleInput(x, (ord,), name=f"ord {ord}")
    yield SampleInput(x, ("fro", (0, 2), True), name="dims keepdim")
    yield SampleInput(make((4, 3), dtype), (1,), {"keepdim": True}, name="1 keepdim")
    if not low:
        yield SampleInput(make((3, 2, 4), dtype), ("nuc", (2, 0)), name="nuc dims")
    yield SampleInput(_make(make, (2, 0, 3), dtype), ("fro",), name="empty")


def norm_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), name="default")
    yield SampleInput(make((2, 3, 4), dtype), name="3-d default")
    yield SampleInput(make((3, 4), dtype), (1,), name="2-d ord 1")
    yield SampleInput(make((4,), dtype), (3,), name="1-d ord 3")
    yield SampleInput(make((2, 3, 4), dtype), (None, 1), name="dim 1")
    yield SampleInput(make((2, 3, 4), dtype), ("fro", (1, 2), True), name="fro dims")
    yield SampleInput(make((2, 3, 4), dtype), (float("inf"), (0, 2)), name="matrix inf")


def torch_norm_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), name="default")
    yield SampleInput(make((3, 4), dtype), (1,), name="p 1")
    yield SampleInput(make((2, 3, 4), dtype), (3, 1, True), name="p 3 dim keepdim")
    yield SampleInput(make((2, 3, 4), dtype), ("fro", (1, 2)), name="fro dims")
    yield SampleInput(make((2, 3, 4), dtype), (float("inf"),), name="inf")
    if dtype not in ("float16", "bfloat16"):
        yield SampleInput(make((3, 4), dtype), ("nuc",), name="nuc")


def _well_conditioned(make, shape, dtype):
    """Random square matrices with n on the diagonal: comfortably invertible."""
    n = shape[-1]
    values = make.array(shape, dtype, -1, 1) + n * np.eye(n)
    if 0 in shape:
        return make.torch.zeros(shape, dtype=getattr(make.torch, dtype))
    return _from(make.torch, values, dtype)


def _spd(make, shape, dtype):
    m = make.array(shape, dtype, -1, 1)
    values = m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])
    return _from(make.torch, values, dtype)


def square_samples(torch, dtype, make):
    yield SampleInput(_well_conditioned(make, (3, 3), dtype), name="3x3")
    yield SampleInput(_well_conditioned(make, (2, 4, 4), dtype), name="batched")
    yield SampleInput(_well_conditioned(make, (1, 1), dtype), name="1x1")
    yield SampleInput(_well_conditioned(make, (0, 2, 2), dtype), name="empty batch")
    yield SampleInput(_well_conditioned(make, (3, 3), dtype).t(), name="transposed")


def det_samples(torch, dtype, make):
    yield from square_samples(torch, dtype, make)
    yield SampleInput(_from(torch, make.array((3, 3), dtype), dtype), name="random")
    yield SampleInput(_from(torch, [[1.0, 2.0], [2.0, 4.0]], dtype), name="singular")
    yield SampleInput(torch.zeros((0, 0), dtype=getattr(torch, dtype)), name="0x0")


def solve_samples(torch, dtype, make):
    A = _well_conditioned(make, (3, 3), dtype)
    yield SampleInput(A, (make((3,), dtype),), name="vector")
    yield SampleInput(A, (make((3, 2), dtype),), name="matrix")
    yield SampleInput(_well_conditioned(make, (2, 3, 3), dtype), (make((3,), dtype),),
                      name="batched A, vector")
    yield SampleInput(_well_conditioned(make, (2, 3, 3), dtype), (make((2, 3), dtype),),
                      name="batch of vectors")
    yield SampleInput(A, (make((4, 3, 2), dtype),), name="broadcast B")
    yield SampleInput(A, (make((2, 3), dtype),), {"left": False}, name="left=False")


def cholesky_samples(torch, dtype, make):
    yield SampleInput(_spd(make, (3, 3), dtype), name="3x3")
    yield SampleInput(_spd(make, (2, 4, 4), dtype), name="batched")
    yield SampleInput(_spd(make, (3, 3), dtype), kwargs={"upper": True}, name="upper")


def svdvals_samples(torch, dtype, make):
    for shape in ((4, 3), (3, 4), (2, 3, 3), (0, 2), (2, 0, 3)):
        yield SampleInput(_make(make, shape, dtype), name=f"{shape}")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), name="noncontiguous")


def eigvalsh_samples(torch, dtype, make):
    yield SampleInput(_spd(make, (3, 3), dtype), name="spd")
    sym = make.array((2, 4, 4), dtype)
    yield SampleInput(_from(torch, sym + np.swapaxes(sym, -1, -2), dtype), name="symmetric")
    yield SampleInput(make((3, 3), dtype), kwargs={"UPLO": "U"}, name="upper triangle")


def pinv_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), name="tall")
    yield SampleInput(make((2, 3, 5), dtype), name="batched wide")
    yield SampleInput(_from(torch, np.ones((3, 3)), dtype), name="rank 1")
    yield SampleInput(_spd(make, (3, 3), dtype), kwargs={"hermitian": True}, name="hermitian")
    yield SampleInput(make((4, 3), dtype), kwargs={"rtol": 0.5}, name="rtol")


def lstsq_samples(torch, dtype, make):
    A = _from(torch, [[1.0, 2, 3], [4, 5, 6.5], [7, 8, 10], [1, 1, 1]], dtype)
    yield SampleInput(A, (make((4, 2), dtype),), name="default driver")
    yield SampleInput(A, (make((4, 2), dtype),), {"driver": "gelsd"}, name="gelsd")
    yield SampleInput(A, (make((4,), dtype),), {"driver": "gelss"}, name="vector gelss")
    yield SampleInput(make((2, 5, 3), dtype), (make((2, 5, 2), dtype),), {"driver": "gels"},
                      name="batched gels")


def matrix_rank_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), name="full rank")
    yield SampleInput(_from(torch, np.ones((2, 3, 3)), dtype), name="rank 1")
    yield SampleInput(_spd(make, (3, 3), dtype), kwargs={"hermitian": True}, name="hermitian")
    yield SampleInput(make((4, 3), dtype), kwargs={"atol": 1.0, "rtol": 0.0}, name="atol")


def matrix_power_samples(torch, dtype, make):
    yield SampleInput(_small(make, (3, 3), dtype), (0,), name="0")
    yield SampleInput(_small(make, (3, 3), dtype), (1,), name="1")
    yield SampleInput(_small(make, (2, 3, 3), dtype), (3,), name="3 batched")
    yield SampleInput(_small(make, (2, 2), dtype, True), (6,), name="6 strided")


def matrix_power_neg_samples(torch, dtype, make):
    yield SampleInput(_well_conditioned(make, (3, 3), dtype), (-2,), name="-2")


def multi_dot_samples(torch, dtype, make):
    s = lambda shape: _small(make, shape, dtype)  # noqa: E731
    yield SampleInput([s((2, 3)), s((3, 4)), s((4, 5))], name="three")
    yield SampleInput([s((3,)), s((3, 4)), s((4,))], name="vector ends")
    yield SampleInput([s((3,)), s((3,))], name="two vectors")
    yield SampleInput([s((5, 2)), s((2, 6)), s((6, 1)), s((1, 4))], name="four")


def vecdot_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), (make((3,), dtype),), name="broadcast")
    yield SampleInput(make((3, 2), dtype), (make((3, 2), dtype),), {"dim": 0}, name="dim 0")


def symmetrize(a):
    """The op reads one triangle: check gradients through a symmetric input."""
    return 0.5 * (a + a.mT)


def matrix_exp_samples(torch, dtype, make):
    yield SampleInput(make((3, 3), dtype, -1, 1), name="3x3")
    yield SampleInput(make((2, 2, 2), dtype, -2, 2), name="batched")
    yield SampleInput(make((1, 1), dtype), name="1x1")
    yield SampleInput(make((0, 2, 2), dtype), name="empty batch")


def geqrf_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype, -1, 1), name="tall")
    yield SampleInput(make((3, 4), dtype, -1, 1), name="wide")
    yield SampleInput(make((2, 3, 3), dtype, -1, 1), name="batched")


def householder_samples(torch, dtype, make):
    # any vectors and scales define reflectors; geqrf's are one case of them
    yield SampleInput(make((4, 3), dtype, -1, 1), (make((3,), dtype, 0, 2),), name="4x3")
    yield SampleInput(make((2, 3, 3), dtype, -1, 1), (make((2, 2), dtype, 0, 2),),
                      name="batched, fewer reflectors")


def ormqr_samples(torch, dtype, make):
    a, tau = make((4, 3), dtype, -1, 1), make((3,), dtype, 0, 2)
    yield SampleInput(a, (tau, make((4, 2), dtype)), name="left")
    yield SampleInput(a, (tau, make((4, 2), dtype)), {"transpose": True}, name="left, Q^T")
    yield SampleInput(a, (tau, make((2, 4), dtype), False), name="right")
    yield SampleInput(a, (tau, make((2, 4), dtype), False, True), name="right, Q^T")


def nuclear_norm_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), name="matrix")
    yield SampleInput(make((2, 3, 4), dtype), ((0, 2),), {"keepdim": True}, name="dims")


def frobenius_norm_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), ((0, 1),), name="both dims")
    yield SampleInput(make((2, 3, 4), dtype), (1,), {"keepdim": True}, name="one dim")


def _indefinite(make, shape, dtype):
    """Symmetric matrices with zeros on the diagonal: Bunch-Kaufman needs 2x2 pivots."""
    m = make.array(shape, dtype, -1, 1)
    values = m + np.swapaxes(m, -1, -2)
    values[..., range(shape[-1]), range(shape[-1])] = 0.0
    return _from(make.torch, values, dtype)


def ldl_factor_samples(torch, dtype, make):
    yield SampleInput(_indefinite(make, (4, 4), dtype), name="indefinite")
    yield SampleInput(_spd(make, (2, 3, 3), dtype), name="batched definite")
    yield SampleInput(_indefinite(make, (3, 3), dtype), (), {"hermitian": True},
                      name="hermitian flag")


def ldl_solve_samples(torch, dtype, make):
    for a, b, name in ((_indefinite(make, (4, 4), dtype), make((4, 2), dtype), "indefinite"),
                       (_spd(make, (2, 3, 3), dtype), make((2, 3, 1), dtype), "batched")):
        ld, pivots = torch.linalg.ldl_factor(a)
        yield SampleInput(ld, (pivots, b), name=name)


OPS: list[OpInfo] = [
    OpInfo("mm", mm_samples, dtypes=NUMERIC, method="mm", supports_out=True),
    OpInfo("bmm", bmm_samples, dtypes=NUMERIC, method="bmm", supports_out=True),
    OpInfo("matmul", matmul_samples, dtypes=NUMERIC, method="matmul", supports_out=True),
    OpInfo("mv", mv_samples, dtypes=NUMERIC, method="mv", supports_out=True),
    OpInfo("dot", dot_samples, dtypes=NUMERIC, method="dot", supports_out=True),
    OpInfo("vdot", dot_samples, dtypes=NUMERIC, method="vdot", supports_out=True),
    OpInfo("inner", inner_samples, dtypes=NUMERIC, method="inner", supports_out=True),
    OpInfo("outer", outer_samples, dtypes=NUMERIC, method="outer", supports_out=True),
    OpInfo("ger", outer_samples, dtypes=NUMERIC, method="ger", supports_out=True),
    OpInfo("addmm", addmm_samples, dtypes=NUMERIC, method="addmm", inplace=None,
           supports_out=True),
    OpInfo("addmv", addmv_samples, dtypes=NUMERIC, method="addmv", supports_out=True),
    OpInfo("baddbmm", baddbmm_samples, dtypes=NUMERIC, method="baddbmm", supports_out=True),
    OpInfo("addbmm", addbmm_samples, dtypes=NUMERIC, method="addbmm", supports_out=True),
    OpInfo("einsum", einsum_samples, dtypes=NUMERIC),
    OpInfo("tensordot", tensordot_samples, dtypes=NUMERIC, supports_out=True),
    OpInfo("kron", kron_samples, dtypes=NUMERIC, method="kron", supports_out=True),
    OpInfo("trace", trace_samples, dtypes=NUMERIC, method="trace"),
    OpInfo("cross", cross_samples, dtypes=NUMERIC, method="cross", supports_out=True),
    OpInfo("linalg.cross", linalg_cross_samples, dtypes=NUMERIC, supports_out=True),
    OpInfo("linalg.vector_norm", vector_norm_samples, dtypes=FLOATS, supports_out=True),
    OpInfo("cdist", cdist_samples, dtypes=DECOMP, atol=1e-4, rtol=1e-4),
    OpInfo("dist", dist_samples, dtypes=FLOATS, method="dist",
           dtype_tol=(("float16", 1e-2, 1e-2), ("bfloat16", 1e-1, 1e-2))),
    OpInfo("linalg.matrix_norm", matrix_norm_samples, dtypes=FLOATS, supports_out=True),
    OpInfo("linalg.norm", norm_samples, dtypes=FLOATS, supports_out=True),
    OpInfo("norm", torch_norm_samples, dtypes=FLOATS, method="norm"),
    OpInfo("linalg.inv", square_samples, dtypes=DECOMP, supports_out=True),
    OpInfo("inverse", square_samples, dtypes=DECOMP, method="inverse"),
    OpInfo("linalg.det", det_samples, dtypes=DECOMP, atol=1e-4, rtol=1e-4),
    OpInfo("det", det_samples, dtypes=DECOMP, method="det", atol=1e-4, rtol=1e-4),
    OpInfo("linalg.slogdet", square_samples, dtypes=DECOMP),
    OpInfo("logdet", square_samples, dtypes=DECOMP, method="logdet"),
    OpInfo("linalg.solve", solve_samples, dtypes=DECOMP, supports_out=True),
    OpInfo("linalg.cholesky", cholesky_samples, dtypes=DECOMP, supports_out=True,
           gradcheck_wrapper=symmetrize),
    OpInfo("linalg.svdvals", svdvals_samples, dtypes=DECOMP, supports_out=True),
    OpInfo("linalg.eigvalsh", eigvalsh_samples, dtypes=DECOMP, supports_out=True,
           gradcheck_wrapper=symmetrize),
    OpInfo("linalg.pinv", pinv_samples, dtypes=DECOMP, supports_out=True, atol=1e-4,
           rtol=1e-4),
    OpInfo("linalg.lstsq", lstsq_samples, dtypes=DECOMP, atol=1e-4, rtol=1e-4),
    OpInfo("linalg.matrix_rank", matrix_rank_samples, dtypes=DECOMP, supports_out=True),
    OpInfo("linalg.matrix_power", matrix_power_samples, dtypes=NUMERIC, supports_out=True),
    OpInfo("matrix_power", matrix_power_neg_samples, dtypes=DECOMP, method="matrix_power"),
    OpInfo("linalg.multi_dot", multi_dot_samples, dtypes=NUMERIC, supports_out=True),
    OpInfo("linalg.vecdot", vecdot_samples, dtypes=FLOATS, supports_out=True),
    OpInfo("matrix_exp", matrix_exp_samples, dtypes=DECOMP, method="matrix_exp",
           differentiable=True, atol=1e-5, rtol=1e-4),
    OpInfo("linalg.matrix_exp", matrix_exp_samples, dtypes=DECOMP, differentiable=True,
           atol=1e-5, rtol=1e-4),
    # geqrf runs LAPACK on a host copy (fake tensors get the layouts; no meta kernel and no
    # derivative, as in PyTorch)
    OpInfo("geqrf", geqrf_samples, dtypes=DECOMP, method="geqrf", atol=1e-5, rtol=1e-4,
           supports_meta=False),
    OpInfo("linalg.householder_product", householder_samples, dtypes=DECOMP,
           differentiable=True, atol=1e-5, rtol=1e-4),
    OpInfo("ormqr", ormqr_samples, dtypes=DECOMP, method="ormqr", differentiable=True,
           atol=1e-5, rtol=1e-4),
    OpInfo("nuclear_norm", nuclear_norm_samples, dtypes=DECOMP, atol=1e-5, rtol=1e-4),
    OpInfo("frobenius_norm", frobenius_norm_samples, dtypes=DECOMP),
    # LAPACK's Bunch-Kaufman on a host copy (meta and fake tensors get the layouts only; no
    # derivative, as in PyTorch)
    OpInfo("linalg.ldl_factor_ex", ldl_factor_samples, dtypes=DECOMP, atol=1e-5, rtol=1e-4),
    OpInfo("linalg.ldl_factor", ldl_factor_samples, dtypes=DECOMP, atol=1e-5, rtol=1e-4),
    OpInfo("linalg.ldl_solve", ldl_solve_samples, dtypes=DECOMP, atol=1e-5, rtol=1e-4),
]
