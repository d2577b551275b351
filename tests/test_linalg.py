"""Linear algebra: the matmul primitive, the products built on it, einsum, norms, and the
decompositions of torch.linalg.

Expected values come from numpy (computed here, independently of the code under test) or were
checked against PyTorch 2.13 and written down.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import torch

RNG = np.random.default_rng(1234)


def T(values, dtype=torch.float64):
    return torch.tensor(np.asarray(values).tolist(), dtype=dtype)


def arr(t: torch.Tensor) -> np.ndarray:
    if t.dtype is torch.bfloat16:
        t = t.float()
    return np.array(t.tolist())


def rand(*shape):
    return RNG.uniform(-2, 2, shape)


# -- the matmul primitive --------------------------------------------------------------------


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "int64", "uint8"])
def test_integer_matmul_is_exact_and_wraps_like_the_dtype(dt):
    info = np.iinfo(dt)
    a = RNG.integers(max(info.min, -100), min(info.max, 100), (3, 5))
    b = RNG.integers(max(info.min, -100), min(info.max, 100), (5, 2))
    out = torch.mm(T(a, getattr(torch, dt)), T(b, getattr(torch, dt)))
    expected = (a.astype(object) @ b.astype(object))  # exact Python integers
    wrapped = np.array([[int(x) for x in row] for row in expected], dtype=np.int64).astype(dt)
    assert out.dtype is getattr(torch, dt)
    np.testing.assert_array_equal(arr(out), wrapped)


def test_int64_matmul_beyond_float_precision():
    a = torch.tensor([[2**40 + 1, 3]], dtype=torch.int64)
    b = torch.tensor([[2**12 + 1], [5]], dtype=torch.int64)
    assert torch.mm(a, b).item() == (2**40 + 1) * (2**12 + 1) + 15


def test_half_matmul_accumulates_in_float32():
    # 2048 + 1 + 1 + ...: a float16 accumulator would stick at 2048 (spacing 2 there)
    a = torch.tensor([[2048.0] + [1.0] * 8], dtype=torch.float16)
    b = torch.ones(9, 1, dtype=torch.float16)
    assert torch.mm(a, b).item() == 2056.0
    # bfloat16 spacing at 256 is 2: 256 + 1 would round back to 256 in a bf16 accumulator
    a16 = torch.tensor([[256.0] + [1.0] * 8], dtype=torch.bfloat16)
    assert torch.mm(a16, b.bfloat16()).item() == 264.0


def test_matmul_strided_and_stride_zero_operands():
    base = rand(4, 6)
    a = T(base)[:, ::2]  # (4, 3), strided
    b = T(rand(4, 3)).t()  # (3, 4), transposed
    np.testing.assert_allclose(arr(torch.mm(a, b)), base[:, ::2] @ arr(b))
    row = T(rand(1, 3)).expand(5, 3)  # stride 0 along rows
    np.testing.assert_allclose(arr(torch.mm(row, b)), arr(row) @ arr(b))


def test_zero_size_products():
    assert torch.mm(torch.ones(3, 0), torch.ones(0, 2)).tolist() == [[0.0, 0.0]] * 3
    assert torch.bmm(torch.ones(0, 2, 3), torch.ones(0, 3, 4)).shape == (0, 2, 4)
    assert torch.matmul(torch.ones(2, 0, 3), torch.ones(3)).shape == (2, 0)
    assert torch.dot(torch.ones(0), torch.ones(0)).item() == 0.0


# -- matmul's shape rules --------------------------------------------------------------------


@pytest.mark.parametrize("sa,sb", [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)),
                                   ((2, 3, 4), (4,)), ((2, 3, 4), (4, 5)), ((4,), (2, 4, 5)),
                                   ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
                                   ((1, 4), (4,))])
def test_matmul_matches_numpy(sa, sb):
    a, b = rand(*sa), rand(*sb)
    out = torch.matmul(T(a), T(b))
    expected = np.matmul(a, b)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(arr(out), expected, rtol=1e-12)


def test_matmul_operators():
    a, b = rand(2, 3), rand(3, 3)
    ta, tb = T(a), T(b)
    np.testing.assert_allclose(arr(ta @ tb), a @ b)
    np.testing.assert_allclose(arr(tb.__rmatmul__(ta)), a @ b)
    c = ta.clone()
    c @= tb
    np.testing.assert_allclose(arr(c), a @ b)
    with pytest.raises(TypeError):
        ta @ 2


def test_matmul_errors():
    with pytest.raises(RuntimeError, match="at least 1D"):
        torch.matmul(torch.ones(()), torch.ones(3))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 "
                                           r"and 4x4\)"):
        torch.mm(torch.ones(2, 3), torch.ones(4, 4))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: "
                                           "float != double"):
        torch.mm(torch.ones(2, 3), torch.ones(3, 4, dtype=torch.float64))
    with pytest.raises(NotImplementedError, match="Bool"):
        torch.mm(torch.ones(2, 3, dtype=torch.bool), torch.ones(3, 4, dtype=torch.bool))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        torch.bmm(torch.ones(2, 3), torch.ones(2, 3, 4))
    with pytest.raises(RuntimeError, match="size mismatch"):
        torch.mv(torch.ones(2, 3), torch.ones(4))
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        torch.dot(torch.ones(3, 1), torch.ones(3))


def test_out_argument():
    out = torch.empty(0)
    res = torch.mm(T(np.eye(2)), T([[1.0, 2.0], [3.0, 4.0]]), out=out)
    assert res is out and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]


# -- the other products ----------------------------------------------------------------------


def test_addmm_family():
    inp, m1, m2 = rand(4), rand(2, 3), rand(3, 4)
    np.testing.assert_allclose(arr(torch.addmm(T(inp), T(m1), T(m2), beta=0.5, alpha=2)),
                               0.5 * inp + 2 * (m1 @ m2))
    v = rand(3)
    np.testing.assert_allclose(arr(torch.addmv(T(rand(2)) * 0, T(m1), T(v), alpha=3)),
                               3 * (m1 @ v))
    b1, b2, c = rand(2, 3, 4), rand(2, 4, 5), rand(3, 5)
    np.testing.assert_allclose(arr(torch.baddbmm(T(c), T(b1), T(b2), beta=2)),
                               2 * c + b1 @ b2)
    np.testing.assert_allclose(arr(torch.addbmm(T(c), T(b1), T(b2), alpha=-1)),
                               c - (b1 @ b2).sum(0))
    t = T(c.copy())
    t.addmm_(T(rand(3, 2)) * 0, T(rand(2, 5)))
    np.testing.assert_allclose(arr(t), c)


def test_addmm_beta_zero_ignores_nan_and_ints_truncate_scalars():
    nan = torch.full((2, 2), float("nan"))
    assert torch.addmm(nan, torch.ones(2, 3), torch.ones(3, 2), beta=0).tolist() == [[3.0] * 2] * 2
    # checked against PyTorch 2.13: alpha 2.5 acts as 2, beta 1.5 as 1 on int64
    ones = torch.ones(2, 3, dtype=torch.int64)
    eye = torch.ones(3, 3, dtype=torch.int64)
    assert torch.addmm(ones * 0, ones, eye, alpha=2.5).tolist() == [[6] * 3] * 2
    assert torch.addmm(ones, ones, eye, beta=1.5).tolist() == [[4] * 3] * 2


def test_outer_inner_kron_trace_tensordot():
    a, b = rand(3), rand(4)
    np.testing.assert_allclose(arr(torch.outer(T(a), T(b))), np.outer(a, b))
    assert torch.ger(torch.ones(2), torch.ones(3, dtype=torch.int64)).dtype is torch.float32
    x, y = rand(2, 3, 4), rand(5, 4)
    np.testing.assert_allclose(arr(torch.inner(T(x), T(y))), np.inner(x, y))
    k1, k2 = RNG.integers(-5, 5, (2, 3)), RNG.integers(-5, 5, (3, 1, 2))
    np.testing.assert_array_equal(arr(torch.kron(T(k1, torch.int64), T(k2, torch.int64))),
                                  np.kron(k1, k2))
    m = RNG.integers(-5, 5, (3, 4))
    tr = torch.trace(T(m, torch.int32))
    assert tr.dtype is torch.int64 and tr.item() == np.trace(m)
    p, q = rand(3, 4, 5), rand(5, 3, 2)
    np.testing.assert_allclose(arr(torch.tensordot(T(p), T(q), dims=([0, 2], [1, 0]))),
                               np.tensordot(p, q, axes=([0, 2], [1, 0])))
    assert torch.tensordot(T(p), T(rand(4, 5, 6))).shape == (3, 6)


def test_tensordot_against_numpy_int_dims():
    p, q = rand(3, 4, 5), rand(4, 5, 6)
    np.testing.assert_allclose(arr(torch.tensordot(T(p), T(q), dims=2)),
                               np.tensordot(p, q, 2))
    np.testing.assert_allclose(arr(torch.tensordot(T(p), T(q), dims=0)),
                               np.tensordot(p, q, 0))


def test_cross():
    a, b = rand(4, 3), rand(4, 3)
    np.testing.assert_allclose(arr(torch.linalg.cross(T(a), T(b))), np.cross(a, b))
    np.testing.assert_allclose(arr(torch.cross(T(a.T), T(b.T), dim=0)), np.cross(a, b).T)
    with pytest.warns(UserWarning, match="without specifying the dim"):
        torch.cross(T(a), T(b))
    with pytest.raises(RuntimeError, match="must have length 3"):
        torch.linalg.cross(torch.ones(3, 4), torch.ones(3, 4))
    ints = torch.linalg.cross(torch.tensor([1, 0, 0]), torch.tensor([0, 1, 0]))
    assert ints.tolist() == [0, 0, 1] and ints.dtype is torch.int64


# -- einsum ----------------------------------------------------------------------------------


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ij->ji", [(2, 3)]), ("i,j->ij", [(3,), (4,)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("...ij,...jk", [(2, 1, 2, 3), (4, 3, 5)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("iij->j", [(3, 3, 2)]), ("ba", [(2, 3)]), ("Ab,bc->Ac", [(2, 3), (3, 2)]),
    ("i...->...", [(3, 2, 2)]), ("ij,ij->i", [(2, 3), (2, 3)]),
])
def test_einsum_matches_numpy(eq, shapes):
    ops = [rand(*s) for s in shapes]
    out = torch.einsum(eq, *[T(o) for o in ops])
    np.testing.assert_allclose(arr(out), np.einsum(eq, *ops), rtol=1e-12, atol=1e-12)


def test_einsum_forms_and_errors():
    a, b = rand(2, 3), rand(3, 4)
    np.testing.assert_allclose(arr(torch.einsum("ij,jk", [T(a), T(b)])), a @ b)
    np.testing.assert_allclose(arr(torch.einsum(T(a), [0, 1], T(b), [1, 2], [0, 2])), a @ b)
    with pytest.raises(RuntimeError, match="does not match the number of dimensions"):
        torch.einsum("ij", torch.ones(3))
    with pytest.raises(RuntimeError, match="output subscript j does not appear"):
        torch.einsum("i->j", torch.ones(3))
    with pytest.raises(RuntimeError, match="fewer operands"):
        torch.einsum("i,j", torch.ones(3))
    with pytest.raises(RuntimeError, match="does not broadcast"):
        torch.einsum("i,i->", torch.ones(3), torch.ones(2))


# -- norms -----------------------------------------------------------------------------------


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, 0, math.inf, -math.inf, -1])
def test_vector_norm_matches_numpy(ord):
    x = rand(3, 4)
    x[0, 0] = 0.0
    with np.errstate(divide="ignore"):  # numpy's own -1 norm divides by the zero
        whole = np.linalg.norm(x.ravel(), ord)
        rows = np.linalg.norm(x, ord, axis=1, keepdims=True)
    np.testing.assert_allclose(arr(torch.linalg.vector_norm(T(x), ord)), whole, rtol=1e-12)
    np.testing.assert_allclose(arr(torch.linalg.vector_norm(T(x), ord, dim=1, keepdim=True)),
                               rows, rtol=1e-12)


def test_vector_norm_dtypes_and_errors():
    half = torch.linalg.vector_norm(torch.tensor([3.0, 4.0], dtype=torch.float16))
    assert half.dtype is torch.float16 and half.item() == 5.0
    wide = torch.linalg.vector_norm(torch.tensor([3.0, 4.0]), dtype=torch.float64)
    assert wide.dtype is torch.float64
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        torch.linalg.vector_norm(torch.ones(3, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor"):
        torch.linalg.vector_norm(torch.ones(0), math.inf)
    assert torch.linalg.vector_norm(torch.zeros(0, 3), math.inf, dim=1).shape == (0,)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_matrix_norm_matches_numpy(ord):
    x = rand(2, 3, 4)
    expected = np.linalg.norm(x, ord, axis=(-2, -1))
    np.testing.assert_allclose(arr(torch.linalg.matrix_norm(T(x), ord)), expected, rtol=1e-10)
    kept = torch.linalg.matrix_norm(T(x), ord, dim=(0, 2), keepdim=True)
    np.testing.assert_allclose(arr(kept), np.linalg.norm(x, ord, axis=(0, 2), keepdims=True),
                               rtol=1e-10)


def test_norm_dispatch():
    x = rand(3, 4)
    np.testing.assert_allclose(arr(torch.linalg.norm(T(x))), np.linalg.norm(x))
    np.testing.assert_allclose(arr(torch.linalg.norm(T(x), 2)), np.linalg.norm(x, 2))
    np.testing.assert_allclose(arr(torch.norm(T(x), p=3, dim=1)),
                               np.linalg.norm(x, 3, axis=1))
    np.testing.assert_allclose(arr(torch.norm(T(x), p="nuc")), np.linalg.norm(x, "nuc"))
    np.testing.assert_allclose(arr(T(x).norm(1, 0, True)), np.abs(x).sum(0, keepdims=True))
    with pytest.raises(RuntimeError, match="input must be 1D or 2D"):
        torch.linalg.norm(torch.ones(2, 3, 3), ord=2)
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        torch.linalg.matrix_norm(torch.ones(3, 3), ord=3)


# -- decompositions and solvers ----------------------------------------------------------------


def well_conditioned(*shape):
    return rand(*shape) + shape[-1] * np.eye(shape[-1])


def spd(*shape):
    m = rand(*shape)
    return m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])


def test_inv_det_slogdet_solve():
    a = well_conditioned(2, 3, 3)
    np.testing.assert_allclose(arr(torch.linalg.inv(T(a))), np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(arr(torch.inverse(T(a))), np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(arr(torch.linalg.det(T(a))), np.linalg.det(a), rtol=1e-10)
    sign, logabs = torch.linalg.slogdet(T(a))
    ns, nl = np.linalg.slogdet(a)
    np.testing.assert_allclose(arr(sign), ns)
    np.testing.assert_allclose(arr(logabs), nl, rtol=1e-10)
    assert type(torch.linalg.slogdet(T(a))).__name__ == "linalg_slogdet"
    assert type(torch.slogdet(T(a[0]))).__name__ == "slogdet"
    b = rand(2, 3, 2)
    np.testing.assert_allclose(arr(torch.linalg.solve(T(a), T(b))), np.linalg.solve(a, b),
                               rtol=1e-10)
    v = rand(3)
    x = torch.linalg.solve(T(a), T(v))  # B is broadcast as a vector
    assert x.shape == (2, 3)
    np.testing.assert_allclose(np.einsum("bij,bj->bi", a, arr(x)), np.broadcast_to(v, (2, 3)))
    xl = torch.linalg.solve(T(a[0]), T(rand(4, 3)), left=False)
    assert xl.shape == (4, 3)
    assert math.isnan(torch.logdet(T([[-1.0, 0.0], [0.0, 1.0]])).item())
    assert torch.logdet(T([[0.0, 0.0], [0.0, 1.0]])).item() == -math.inf


def test_linalg_errors():
    with pytest.raises(RuntimeError, match=r"Expected a floating point or complex tensor as "
                                           r"input. Got Long"):
        torch.linalg.inv(torch.ones(3, 3, dtype=torch.int64))
    with pytest.raises(RuntimeError, match=r"Low precision dtypes not supported. Got Half"):
        torch.linalg.inv(torch.ones(3, 3, dtype=torch.float16))
    with pytest.raises(RuntimeError, match="batches of square matrices, but they are 3 by 4"):
        torch.linalg.inv(torch.ones(3, 4))
    with pytest.raises(torch.linalg.LinAlgError, match="The diagonal element 2 is zero"):
        torch.linalg.inv(torch.ones(3, 3))
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): The diagonal element 2"):
        torch.linalg.inv(T([np.eye(2), [[1.0, 0.0], [0.0, 0.0]]]))
    with pytest.raises(torch.linalg.LinAlgError, match="leading minor of order 2"):
        torch.linalg.cholesky(T([[1.0, 0.0], [0.0, -1.0]]))
    with pytest.raises(torch.linalg.LinAlgError, match="input matrix is singular"):
        torch.linalg.solve(torch.ones(3, 3), torch.ones(3))
    with pytest.raises(RuntimeError, match="unrecognized mode 'x'"):
        torch.linalg.qr(torch.ones(3, 3), mode="x")


def test_cholesky():
    a = spd(2, 4, 4)
    L = torch.linalg.cholesky(T(a))
    np.testing.assert_allclose(arr(L), np.linalg.cholesky(a), rtol=1e-10)
    U = torch.linalg.cholesky(T(a), upper=True)
    np.testing.assert_allclose(arr(U), np.swapaxes(np.linalg.cholesky(a), -1, -2), rtol=1e-10)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 5, 2)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_reconstructs(shape, mode):
    a = rand(*shape)
    q, r = torch.linalg.qr(T(a), mode=mode)
    m, n = shape[-2:]
    k = m if mode == "complete" else min(m, n)
    assert q.shape == shape[:-2] + (m, k) and r.shape == shape[:-2] + (k, n)
    qa, ra = arr(q), arr(r)
    np.testing.assert_allclose(qa @ ra, a, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(qa, -1, -2) @ qa, np.broadcast_to(np.eye(k),
                                                                           qa.shape[:-2] + (k, k)),
                               atol=1e-12)
    assert np.allclose(np.tril(ra, -1), 0)
    assert torch.linalg.qr(T(a), mode="r").Q.shape == (0,)


@pytest.mark.parametrize("full", [True, False])
def test_svd_reconstructs(full):
    a = rand(2, 4, 3)
    U, S, Vh = torch.linalg.svd(T(a), full_matrices=full)
    assert U.shape == ((2, 4, 4) if full else (2, 4, 3)) and Vh.shape == (2, 3, 3)
    np.testing.assert_allclose(arr(S), np.linalg.svd(a, compute_uv=False), rtol=1e-10)
    u, s, vh = arr(U)[..., :3], arr(S), arr(Vh)
    np.testing.assert_allclose(u * s[..., None, :] @ vh, a, atol=1e-12)
    np.testing.assert_allclose(arr(torch.linalg.svdvals(T(a))), s, rtol=1e-10)
    legacy = torch.svd(T(a))
    np.testing.assert_allclose(arr(legacy.U) * s[..., None, :] @ np.swapaxes(arr(legacy.V), -1,
                                                                          -2), a, atol=1e-12)


def test_eigh_reconstructs():
    a = spd(2, 4, 4)
    w, v = torch.linalg.eigh(T(a))
    np.testing.assert_allclose(arr(w), np.linalg.eigvalsh(a), rtol=1e-10)
    va = arr(v)
    np.testing.assert_allclose(va * arr(w)[..., None, :] @ np.swapaxes(va, -1, -2), a,
                               atol=1e-10)
    np.testing.assert_allclose(arr(torch.linalg.eigvalsh(T(a), UPLO="U")), np.linalg.eigvalsh(a),
                               rtol=1e-10)
    with pytest.raises(RuntimeError, match="UPLO"):
        torch.linalg.eigh(T(a), UPLO="X")


def test_pinv_lstsq_rank():
    a = rand(2, 5, 3)
    np.testing.assert_allclose(arr(torch.linalg.pinv(T(a))), np.linalg.pinv(a), rtol=1e-8)
    ones = np.ones((4, 3))
    np.testing.assert_allclose(arr(torch.linalg.pinv(T(ones))), np.linalg.pinv(ones), rtol=1e-8)
    b = rand(5, 2)
    res = torch.linalg.lstsq(T(a[0]), T(b), driver="gelsd")
    sol, resid, rank, sv = np.linalg.lstsq(a[0], b, rcond=None)
    np.testing.assert_allclose(arr(res.solution), sol, rtol=1e-8)
    np.testing.assert_allclose(arr(res.residuals), resid, rtol=1e-8)
    assert res.rank.item() == rank and res.rank.dtype is torch.int64
    np.testing.assert_allclose(arr(res.singular_values), sv, rtol=1e-10)
    default = torch.linalg.lstsq(T(a[0]), T(b))  # gelsy: no residuals or singular values
    assert default.residuals.shape == (0,) and default.singular_values.shape == (0,)
    assert torch.linalg.matrix_rank(T(np.ones((2, 4, 3)))).tolist() == [1, 1]
    assert torch.linalg.matrix_rank(T(a[0])).item() == 3
    assert torch.linalg.matrix_rank(T(np.diag([1.0, 0.5, 0.01])), atol=0.1).item() == 2


def test_matrix_power_and_multi_dot():
    m = RNG.integers(-3, 4, (2, 3, 3))
    for n in (0, 1, 2, 5):
        np.testing.assert_array_equal(
            arr(torch.linalg.matrix_power(T(m, torch.int64), n)),
            np.linalg.matrix_power(m, n))
    a = well_conditioned(3, 3)
    np.testing.assert_allclose(arr(torch.matrix_power(T(a), -2)),
                               np.linalg.matrix_power(a, -2), rtol=1e-10)
    chain = [rand(3), rand(3, 4), rand(4, 5), rand(5)]
    np.testing.assert_allclose(arr(torch.linalg.multi_dot([T(c) for c in chain])),
                               np.linalg.multi_dot(chain))
    with pytest.raises(RuntimeError, match="expected at least 2 tensors"):
        torch.linalg.multi_dot([torch.ones(3)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(arr(torch.chain_matmul(T(chain[1]), T(chain[2]))),
                                   chain[1] @ chain[2])


def test_decompositions_on_a_plugin_device_stay_there():
    a = torch.tensor([[2.0, 1.0], [1.0, 3.0]], device="toy")
    inv = torch.linalg.inv(a)
    assert inv.device == a.device
    np.testing.assert_allclose(np.array(inv.cpu().tolist()), np.linalg.inv([[2, 1], [1, 3]]),
                               rtol=1e-6)


@pytest.mark.parametrize("a_shape,b_shape,solution_shape", [
    ((0, 3), (0, 2), (3, 2)), ((3, 0), (3, 2), (0, 2)), ((2, 0, 3), (2, 0, 1), (2, 3, 1))])
def test_lstsq_of_empty_matrices_is_zero(a_shape, b_shape, solution_shape):
    result = torch.linalg.lstsq(torch.zeros(a_shape), torch.zeros(b_shape))
    assert tuple(result.solution.shape) == solution_shape
    assert not result.solution.any() and not result.rank.any()
