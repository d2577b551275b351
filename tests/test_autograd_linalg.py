"""Gradients of matrix products, norms and the torch.linalg decompositions: autograd against
central differences in float64 (first derivatives, and second derivatives against differences
of the first), plus the subgradient conventions checked by hand against PyTorch 2.13."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from numgrad import F64, check_grad, check_gradgrad, grad_of, t64

import torch


def mat(rows: int, cols: int, seed: int, *batch: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(batch + (rows, cols), dtype=F64, generator=gen)


def spd(n: int, seed: int) -> torch.Tensor:
    """A symmetric positive-definite matrix, well conditioned."""
    a = mat(n, n, seed)
    return a @ a.transpose(0, 1) + n * torch.eye(n, dtype=F64)


# -- products ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("call", "shapes"), [
    (torch.mm, [(3, 4), (4, 2)]),
    (torch.bmm, [(2, 3, 4), (2, 4, 2)]),
    (torch.mv, [(3, 4), (4, 1)]),
    (torch.dot, [(1, 4), (1, 4)]),
    (torch.vdot, [(1, 4), (1, 4)]),
    (torch.matmul, [(2, 1, 3, 4), (3, 4, 2)]),  # broadcast batch dims
    (torch.matmul, [(1, 4), (2, 4, 3)]),  # a vector against a batch
    (torch.matmul, [(2, 3, 4), (1, 4)]),
    (lambda a, b: a @ b.transpose(0, 1), [(3, 4), (2, 4)]),  # strided operand
    (lambda a, b: torch.linalg.cross(a, b), [(2, 3), (2, 3)]),
    (lambda a, b: torch.linalg.cross(a, b, dim=0), [(3, 2), (3, 1)]),  # broadcast
    (lambda a, b: torch.cross(a, b, dim=1), [(4, 3), (4, 3)]),
    (lambda a, b: torch.addmm(a[:2], b, b.transpose(0, 1)), [(1, 3), (2, 3)]),
    (lambda a, b: torch.einsum("ij,kj->ik", a, b), [(2, 3), (4, 3)]),
    (lambda a, b: torch.linalg.multi_dot([a, b.transpose(0, 1), a]), [(3, 3), (3, 3)]),
])
def test_products(call: Callable[..., torch.Tensor], shapes: list[tuple[int, ...]]) -> None:
    inputs = [mat(s[-2], s[-1], i, *s[:-2]) for i, s in enumerate(shapes)]
    inputs = [x.reshape(-1) if s[0] == 1 and len(s) == 2 else x for x, s in zip(inputs, shapes)]
    # by name: torch.mv is rebound to a checking wrapper once a subclass defines
    # __torch_function__ (another test may have made one already)
    if getattr(call, "__name__", "") == "mv":
        inputs[1] = inputs[1].reshape(-1)
    check_grad(call, *inputs)
    check_gradgrad(call, *inputs)


def test_mm_of_itself_second_derivative() -> None:
    check_gradgrad(lambda a: torch.mm(a, a), mat(3, 3, 5))


# -- norms ------------------------------------------------------------------------------------


@pytest.mark.parametrize("ord", [2, 1, 3, 1.5, 0.5, math.inf, -math.inf, -1])
@pytest.mark.parametrize("dim", [None, 1, (0, 1)])
def test_vector_norm(ord: float, dim: object) -> None:
    x = t64([[0.3, -1.2, 2.5, 0.7], [1.1, 0.4, -0.6, 1.9]])
    fn = lambda t: torch.linalg.vector_norm(t, ord, dim)  # noqa: E731
    check_grad(fn, x)
    if not math.isinf(ord):
        check_gradgrad(fn, x, atol=1e-5, rtol=1e-4)


def test_vector_norm_keepdim_and_0d() -> None:
    x = t64([[0.3, -1.2, 2.5], [1.1, 0.4, -0.6]])
    check_grad(lambda t: torch.linalg.vector_norm(t, 2, 0, keepdim=True), x)
    check_grad(lambda t: torch.linalg.vector_norm(t, 3), t64(-1.5))
    check_grad(lambda t: torch.norm(t), x)
    check_grad(lambda t: torch.linalg.norm(t, dim=1), x)
    check_grad(lambda t: torch.linalg.matrix_norm(t), x)
    check_grad(lambda t: torch.linalg.matrix_norm(t, 1), x)


@pytest.mark.parametrize("ord", [2, 1, 3, 1.5, 0.5, math.inf, -math.inf])
def test_vector_norm_at_zero_by_hand(ord: float) -> None:
    # PyTorch 2.13: the gradient of a norm at the origin is 0 for every ord
    g = grad_of(lambda t: torch.linalg.vector_norm(t, ord), torch.zeros(3, dtype=F64))
    assert g.tolist() == [0, 0, 0]


def test_vector_norm_ties_by_hand() -> None:
    # the inf-norm shares the gradient among the largest |x|, with their signs
    g = grad_of(lambda t: torch.linalg.vector_norm(t, math.inf), t64([1.0, -3.0, 3.0, 2.0]))
    assert g.tolist() == [0, -0.5, 0.5, 0]
    g = grad_of(lambda t: torch.linalg.vector_norm(t, 1), t64([1.0, 0.0, -2.0]))
    assert g.tolist() == [1, 0, -1]


# -- decompositions ---------------------------------------------------------------------------


A3 = t64([[2.0, 0.5, -0.3], [0.4, 1.5, 0.2], [-0.6, 0.1, 1.8]])


@pytest.mark.parametrize("call", [
    torch.linalg.inv,
    torch.inverse,
    torch.linalg.det,
    torch.det,
    lambda a: torch.linalg.slogdet(a).logabsdet,
    lambda a: torch.logdet(a),
    lambda a: torch.linalg.matrix_power(a, -2),
    # right-hand sides that depend on A too (no slicing: see test_solve_sliced_rhs)
    lambda a: torch.linalg.solve(a, a @ t64([[1.0, 2.0], [0.5, -1.0], [0.3, 0.7]]) + 1),
    lambda a: torch.linalg.solve(a, a.sum(0) + 1),
    lambda a: torch.linalg.solve(a, t64([[1.0, 2.0, 0.5], [0.5, -1.0, 0.3]]) @ a - 1,
                                 left=False),
])
def test_inverse_family(call: Callable[[torch.Tensor], torch.Tensor]) -> None:
    check_grad(call, A3)
    check_gradgrad(call, A3, atol=1e-5, rtol=1e-4)


def test_solve_sliced_rhs() -> None:
    check_grad(lambda a: torch.linalg.solve(a, a[:, :2] * 2 + 1), A3)


def test_batched_det_and_solve_broadcast() -> None:
    a = mat(3, 3, 7, 2) + 3 * torch.eye(3, dtype=F64)
    b = mat(3, 2, 8)
    check_grad(torch.linalg.det, a)
    check_grad(lambda x, y: torch.linalg.solve(x, y), a, b)  # b broadcasts over the batch
    check_gradgrad(lambda x, y: torch.linalg.solve(x, y), a, b, atol=1e-5, rtol=1e-4)


def test_det_of_singular_by_hand() -> None:
    # PyTorch 2.13 gives 0 (not the adjugate) for an exactly singular matrix
    assert grad_of(torch.linalg.det, t64([[1.0, 2.0], [2.0, 4.0]])).tolist() == [[0, 0], [0, 0]]


def test_det_of_singular_with_graph() -> None:
    # ... but the cofactors when building a graph, and their derivative (PyTorch's values)
    a = t64([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]]).requires_grad_(True)
    (g,) = torch.autograd.grad(torch.linalg.det(a), a, create_graph=True)
    torch.testing.assert_close(g, t64([[-2, 4, -2], [1, -2, 1], [0, 0, 0]]), atol=1e-12,
                               rtol=0)
    (h,) = torch.autograd.grad((g * torch.arange(9, dtype=F64).reshape(3, 3)).sum(), a)
    torch.testing.assert_close(h, t64([[-11, 22, -11], [6, -12, 6], [-4, 8, -4]]), atol=1e-12,
                               rtol=0)


def _symmetric(call: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor],
                                                                        torch.Tensor]:
    """``call`` of the symmetric part, so that finite differences stay on symmetric
    matrices (the decompositions read one triangle)."""
    return lambda a: call(0.5 * (a + a.transpose(-2, -1)))


@pytest.mark.parametrize("call", [
    torch.linalg.cholesky,
    lambda a: torch.linalg.cholesky(a, upper=True),
    torch.linalg.eigvalsh,
    lambda a: torch.linalg.eigh(a).eigenvalues,
    # eigenvectors are defined up to sign: a sign-free function of them
    lambda a: (torch.linalg.eigh(a).eigenvectors ** 2) * t64([1.0, -2.0, 0.5]),
    lambda a: torch.linalg.eigh(a, UPLO="U").eigenvalues,
])
def test_hermitian_decompositions(call: Callable[[torch.Tensor], torch.Tensor]) -> None:
    check_grad(_symmetric(call), spd(3, 11))


@pytest.mark.parametrize("call", [
    torch.linalg.cholesky,
    lambda a: torch.linalg.cholesky(a, upper=True),
    torch.linalg.eigvalsh,
    lambda a: (torch.linalg.eigh(a).eigenvectors ** 2) * t64([1.0, -2.0, 0.5]),
])
def test_hermitian_second_derivatives(call: Callable[[torch.Tensor], torch.Tensor]) -> None:
    check_gradgrad(_symmetric(call), spd(3, 11), atol=1e-5, rtol=1e-4)


def test_eigvalsh_repeated_eigenvalues() -> None:
    # no eigenvector gradient, so equal eigenvalues are fine: d(sum w) = tr(dA)
    assert grad_of(torch.linalg.eigvalsh, torch.eye(3, dtype=F64)).tolist() == torch.eye(
        3, dtype=F64).tolist()


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_svdvals(shape: tuple[int, int]) -> None:
    a = mat(*shape, 13)
    check_grad(torch.linalg.svdvals, a)
    check_grad(lambda t: torch.linalg.matrix_norm(t, "nuc"), a)
    check_grad(lambda t: torch.linalg.matrix_norm(t, 2), a)


def test_svdvals_second_derivatives() -> None:
    # the double backward moves the singular vectors with A (tall: the (I - U U^H) term)
    check_gradgrad(torch.linalg.svdvals, mat(4, 3, 13), atol=1e-5, rtol=1e-4)
    check_gradgrad(lambda t: torch.linalg.matrix_norm(t, "nuc"), mat(2, 4, 13), atol=1e-5,
                   rtol=1e-4)


# -- pinv, lstsq, matrix_power(A, 0), beta=0 products, the 0-norm -----------------------------


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5)])
def test_pinv(shape: tuple[int, ...]) -> None:
    A = mat(shape[-2], shape[-1], 7, *shape[:-2])
    check_grad(torch.linalg.pinv, A)
    check_gradgrad(torch.linalg.pinv, A, atol=1e-4, rtol=1e-3)


_G = t64([[0.3, -1.0, 0.2], [0.7, 0.1, -0.4], [1.2, -0.3, 0.5]])
_T = t64([[1.0, 2, 3], [4, 5, 6.5], [7, 8, 10], [1, 1, 1]])


@pytest.mark.parametrize(("A", "kwargs", "cotangent", "want"), [
    # PyTorch 2.13's pinv_backward away from the smooth case: the values it returns
    (t64([[4.0, 1, 0.5], [1, 3, 0.2], [0.5, 0.2, 2]]), {"hermitian": True}, _G,
     [[-0.005920345335092704, 0.09472799632708613, -0.03857044932523862],
      [-0.05792583176121833, -0.03083687854387765, 0.10281643748092997],
      [-0.15881469545017995, 0.09107383532029115, -0.09528440483153168]]),
    (torch.ones(3, 3, dtype=F64), {}, _G,
     [[0.01481481481481483, 0.048148148148148114, 0.08518518518518509],
      [-0.11111111111111088, -0.07777777777777764, -0.040740740740740626],
      [-0.055555555555555435, -0.022222222222222164, 0.014814814814814822]]),
    (_T, {"rtol": 0.5}, t64([[0.3, -1.0, 0.2, 0.4], [0.7, 0.1, -0.4, -0.9],
                             [1.2, -0.3, 0.5, 0.6]]),
     [[0.0016974819554435479, 0.0020709932414059223, 0.0031919564867721358],
      [-0.0016799711366612315, -0.0018720535863552437, -0.0009843137105107337],
      [-0.0009075201235694636, -0.0008765198127228955, 0.0011186770598911207],
      [1.6704717824106977e-05, 4.368516653093303e-05, 0.0003168179075547329]]),
])
def test_pinv_by_hand(A: torch.Tensor, kwargs: dict, cotangent: torch.Tensor,
                      want: list[list[float]]) -> None:
    leaf = A.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(torch.linalg.pinv(leaf, **kwargs), leaf, cotangent)
    torch.testing.assert_close(g, t64(want), atol=1e-12, rtol=1e-9)


@pytest.mark.parametrize("driver", [None, "gelsd", "gelss", "gels"])
@pytest.mark.parametrize("vector", [False, True])
def test_lstsq(driver: str | None, vector: bool) -> None:
    B = mat(4, 1, 3).squeeze(-1) if vector else mat(4, 2, 3)

    def solution(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.linalg.lstsq(A, B, driver=driver).solution

    check_grad(solution, _T, B, atol=1e-5, rtol=1e-5)
    check_gradgrad(solution, _T, B, atol=1e-3, rtol=1e-3)


def test_lstsq_batched() -> None:
    check_grad(lambda A, B: torch.linalg.lstsq(A, B).solution, mat(5, 3, 1, 2), mat(5, 2, 2, 2))


def test_matrix_power_0() -> None:
    A = mat(3, 3, 4).requires_grad_(True)
    identity = torch.linalg.matrix_power(A, 0)
    assert identity.requires_grad
    assert identity.tolist() == torch.eye(3, dtype=F64).tolist()
    (g,) = torch.autograd.grad(identity.sum(), A)
    assert g.tolist() == torch.zeros(3, 3, dtype=F64).tolist()


@pytest.mark.parametrize(("call", "shapes"), [
    (torch.addmm, [(3,), (2, 4), (4, 3)]),
    (torch.addmv, [(2,), (2, 4), (4,)]),
    (torch.baddbmm, [(1, 2, 3), (2, 2, 4), (2, 4, 3)]),
    (torch.addbmm, [(2, 3), (2, 2, 4), (2, 4, 3)]),
])
def test_products_beta_0(call: Callable[..., torch.Tensor],
                         shapes: list[tuple[int, ...]]) -> None:
    # PyTorch gives ``input`` a zero gradient, and its NaN stays out of the result
    input = torch.full(shapes[0], math.nan, dtype=F64).requires_grad_(True)
    rest = [mat(s[-2] if len(s) > 1 else 1, s[-1], i + 1, *s[:-2]).reshape(s)
            for i, s in enumerate(shapes[1:])]
    out = call(input, *rest, beta=0)
    assert not bool(torch.isnan(out).any())
    (g,) = torch.autograd.grad(out.sum(), input)
    assert g.tolist() == torch.zeros(shapes[0], dtype=F64).tolist()


def test_vector_norm_0_has_no_gradient() -> None:
    x = t64([[1.0, 0.0, -2.0]]).requires_grad_(True)
    out = torch.linalg.vector_norm(x, 0)
    assert float(out) == 2
    assert torch.autograd.grad(out, x, allow_unused=True) == (None,)
