"""Factories, random ops and linalg decompositions are aten operators: a dispatch mode sees
each call by its PyTorch name, factories dispatch on their ``device`` argument, and the meta
device lays out the results the real kernels produce (column-major matrices for the
decompositions, as LAPACK writes them and PyTorch returns them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import torch
from torch._core import dispatch as _dispatch


class Recorder:
    """A dispatch mode that records the operators it sees and runs them."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        self.seen.append(func.qualname)
        return func(*args, **(kwargs or {}))


def _seen(fn: Callable[[], Any]) -> list[str]:
    mode = Recorder()
    _dispatch.push_mode(mode)
    try:
        fn()
    finally:
        _dispatch.pop_mode()
    return mode.seen


A = torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], dtype=torch.float64)
TALL = torch.tensor([[1.0, 2.0], [3.0, 4.5], [5.0, 6.0], [7.0, 8.5]], dtype=torch.float64)


@pytest.mark.parametrize(("call", "qualname"), [
    (lambda: torch.empty(2, 3), "aten::empty.memory_format"),
    (lambda: torch.empty_strided((2, 3), (1, 2)), "aten::empty_strided"),
    (lambda: torch.zeros(2), "aten::zeros"),
    (lambda: torch.ones(2), "aten::ones"),
    (lambda: torch.full((2,), 7), "aten::full"),
    (lambda: torch.zeros_like(A), "aten::zeros_like"),
    (lambda: torch.ones_like(A), "aten::ones_like"),
    (lambda: torch.empty_like(A), "aten::empty_like"),
    (lambda: torch.full_like(A, 2.0), "aten::full_like"),
    (lambda: torch.arange(5), "aten::arange"),
    (lambda: torch.arange(1, 5, 2), "aten::arange.start_step"),
    (lambda: torch.linspace(0, 1, 5), "aten::linspace"),
    (lambda: torch.logspace(0, 1, 5), "aten::logspace"),
    (lambda: torch.eye(3), "aten::eye.m"),
    (lambda: torch.scalar_tensor(2.5), "aten::scalar_tensor"),
    (lambda: torch.tril_indices(3, 3), "aten::tril_indices"),
    (lambda: torch.triu_indices(3, 3), "aten::triu_indices"),
    (lambda: torch.tensor([1, 2]), "aten::lift_fresh"),
    (lambda: torch.complex(torch.ones(2), torch.ones(2)), "aten::complex"),
    (lambda: torch.rand(3), "aten::rand"),
    (lambda: torch.rand(3, generator=torch.Generator()), "aten::rand.generator"),
    (lambda: torch.randn(3), "aten::randn"),
    (lambda: torch.randint(0, 5, (3,)), "aten::randint.low"),
    (lambda: torch.randperm(4), "aten::randperm"),
    (lambda: torch.rand_like(A), "aten::rand_like"),
    (lambda: torch.randn_like(A), "aten::randn_like"),
    (lambda: torch.randint_like(A, 3), "aten::randint_like.low_dtype"),
    (lambda: torch.normal(A, 1.0), "aten::normal.Tensor_float"),
    (lambda: torch.normal(0.0, A), "aten::normal.float_Tensor"),
    (lambda: torch.normal(A, A), "aten::normal.Tensor_Tensor"),
    (lambda: torch.normal(0.0, 1.0, (2,)), "aten::normal.float_float"),
    (lambda: torch.bernoulli(torch.full((3,), 0.5)), "aten::bernoulli"),
    (lambda: torch.multinomial(torch.ones(4), 2), "aten::multinomial"),
    (lambda: torch.empty(3).uniform_(), "aten::uniform_"),
    (lambda: torch.empty(3).normal_(), "aten::normal_"),
    (lambda: torch.empty(3).random_(), "aten::random_"),
    (lambda: torch.empty(3).random_(5), "aten::random_.to"),
    (lambda: torch.empty(3).random_(1, 5), "aten::random_.from"),
    (lambda: torch.empty(3).exponential_(), "aten::exponential_"),
    (lambda: torch.empty(3).geometric_(0.5), "aten::geometric_"),
    (lambda: torch.empty(3).log_normal_(), "aten::log_normal_"),
    (lambda: torch.empty(3).cauchy_(), "aten::cauchy_"),
    (lambda: torch.empty(3).bernoulli_(0.5), "aten::bernoulli_.float"),
    (lambda: torch.empty(3).bernoulli_(torch.full((3,), 0.5)), "aten::bernoulli_.Tensor"),
    (lambda: torch.nn.functional.dropout(torch.ones(4), 0.5), "aten::bernoulli_.float"),
    (lambda: torch.linalg.inv(A), "aten::linalg_inv"),
    (lambda: torch.linalg.det(A), "aten::linalg_det"),
    (lambda: torch.linalg.slogdet(A), "aten::linalg_slogdet"),
    (lambda: torch.linalg.solve(A, A), "aten::linalg_solve"),
    (lambda: torch.linalg.cholesky(A), "aten::linalg_cholesky"),
    (lambda: torch.linalg.qr(A), "aten::linalg_qr"),
    (lambda: torch.linalg.eigh(A), "aten::_linalg_eigh"),
    (lambda: torch.linalg.eigvalsh(A), "aten::_linalg_eigh"),
    (lambda: torch.linalg.svd(A), "aten::_linalg_svd"),
    (lambda: torch.linalg.svdvals(A), "aten::_linalg_svd"),
    (lambda: torch.linalg.pinv(A), "aten::linalg_pinv.atol_rtol_float"),
    (lambda: torch.linalg.lstsq(TALL, TALL), "aten::linalg_lstsq"),
    (lambda: torch.linalg.matrix_rank(A), "aten::linalg_matrix_rank.atol_rtol_float"),
])
def test_a_dispatch_mode_sees_the_operator(call: Callable[[], Any], qualname: str) -> None:
    assert qualname in _seen(call)


def test_the_mode_sees_the_operator_not_its_insides() -> None:
    # the mode is off while an operator it saw runs, so the primitives inside stay hidden
    assert _seen(lambda: torch.randn(4)) == ["aten::randn"]


def test_factories_dispatch_on_their_device_argument() -> None:
    op = _dispatch.get("aten::zeros")
    calls: list[Any] = []

    def meta_zeros(size: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["device"])
        return torch.empty(0, device="meta")

    op.register("Meta", meta_zeros)
    try:
        torch.zeros(2, device="meta")
        torch.zeros(2)  # the CPU's kernel: the Meta one is not called
        torch.ops.aten.zeros([2], device="meta")  # a string device is read too
    finally:
        op.unregister("Meta", meta_zeros)
    assert [getattr(d, "type", d) for d in calls] == ["meta", "meta"]


def test_factories_on_meta_have_no_values_and_the_real_layout() -> None:
    for make in (lambda **kw: torch.arange(6, **kw), lambda **kw: torch.eye(2, 3, **kw),
                 lambda **kw: torch.linspace(0, 1, 7, **kw), lambda **kw: torch.rand(2, 5, **kw),
                 lambda **kw: torch.randperm(5, **kw),
                 lambda **kw: torch.tril_indices(4, 3, -1, **kw),
                 lambda **kw: torch.empty_strided((2, 3), (1, 2), **kw)):
        real, meta = make(), make(device="meta")
        assert meta.device.type == "meta"
        assert (meta.shape, meta.dtype, meta.stride()) == (real.shape, real.dtype, real.stride())


def test_random_ops_on_meta_do_not_advance_the_generator() -> None:
    g = torch.Generator().manual_seed(3)
    torch.randn(100, generator=g, device="meta")
    torch.empty(10, device="meta").uniform_(generator=g)
    assert g.get_offset() == 0
    torch.randn(4, generator=g)
    assert g.get_offset() > 0


def test_like_factories_and_random_like_never_require_grad() -> None:
    x = torch.ones(3, requires_grad=True)
    for make in (torch.zeros_like, torch.ones_like, torch.empty_like, torch.rand_like,
                 torch.randn_like, lambda t: torch.full_like(t, 2.0)):
        y = make(x)
        assert not y.requires_grad and y.grad_fn is None


def test_in_place_samplers_give_zero_gradients() -> None:
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.uniform_()
    (y.sum() + (x * 3).sum()).backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]  # nothing through the overwritten values


def test_normal_gradients_follow_mean_and_std() -> None:
    torch.manual_seed(0)
    mean = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    std = torch.full((5,), 2.0, dtype=torch.float64, requires_grad=True)
    out = torch.normal(mean, std)
    out.sum().backward()
    assert mean.grad.tolist() == [1.0] * 5
    torch.testing.assert_close(std.grad, out.detach() / 2.0)  # z = (out - mean) / std


def _spd(a: torch.Tensor) -> torch.Tensor:
    """A batch of symmetric positive-definite matrices made from ``a`` (..., m, n)."""
    return a.mT @ a + 3 * torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def _column_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    *batch, r, c = shape
    strides = [1, max(r, 1)]
    acc = r * c
    for n in reversed(batch):
        strides.insert(0, acc)
        acc *= n
    return tuple(strides)


@pytest.mark.parametrize(("call", "layouts"), [
    (lambda a: torch.linalg.qr(a), [((2, 4, 3), True), ((2, 3, 3), True)]),
    (lambda a: torch.linalg.qr(a, mode="complete"), [((2, 4, 4), True), ((2, 4, 3), True)]),
    (lambda a: torch.linalg.qr(a, mode="r"), [((0,), False), ((2, 3, 3), True)]),
    (lambda a: torch.linalg.svd(a), [((2, 4, 4), True), ((2, 3), False), ((2, 3, 3), True)]),
    (lambda a: torch.linalg.svd(a, full_matrices=False),
     [((2, 4, 3), True), ((2, 3), False), ((2, 3, 3), True)]),
    (lambda a: torch.linalg.pinv(a), [((2, 3, 4), False)]),
    (lambda a: torch.linalg.solve(_spd(a), a.mT), [((2, 3, 4), True)]),
    (lambda a: torch.linalg.solve(_spd(a), a, left=False), [((2, 4, 3), False)]),
    # batched vectors come back column-major over their last two dims, as in PyTorch
    (lambda a: torch.linalg.solve(_spd(a), a[..., 0, :]), [((2, 3), True)]),
    (lambda a: torch.linalg.eigh(_spd(a)), [((2, 3), False), ((2, 3, 3), True)]),
    (lambda a: torch.linalg.cholesky(_spd(a)), [((2, 3, 3), True)]),
    (lambda a: torch.linalg.inv(_spd(a)), [((2, 3, 3), True)]),
    (lambda a: torch.linalg.slogdet(_spd(a)), [((2,), False), ((2,), False)]),
    (lambda a: torch.linalg.matrix_rank(a), [((2,), False)]),
])
def test_decompositions_lay_out_results_as_pytorch_on_cpu_and_meta(
        call: Callable[[torch.Tensor], Any], layouts: list[tuple[tuple[int, ...], bool]]
        ) -> None:
    a = torch.arange(24, dtype=torch.float64).reshape(2, 4, 3).sin()
    for x in (a, torch.empty(2, 4, 3, dtype=torch.float64, device="meta")):
        outs = call(x)
        outs = [outs] if isinstance(outs, torch.Tensor) else list(outs)
        assert len(outs) == len(layouts)
        for out, (shape, column_major) in zip(outs, layouts):
            assert out.device == x.device and tuple(out.shape) == shape
            want = _column_major(shape) if column_major else torch.empty(shape).stride()
            assert out.stride() == want, (x.device, shape, out.stride())


def test_meta_decompositions_check_their_arguments() -> None:
    with pytest.raises(RuntimeError, match="square"):
        torch.linalg.inv(torch.empty(2, 3, device="meta"))
    with pytest.raises(RuntimeError, match="Low precision"):
        torch.linalg.qr(torch.empty(3, 3, dtype=torch.float16, device="meta"))


def test_svdvals_computes_the_vectors_only_for_a_backward() -> None:
    seen: list[Any] = []

    class Args(Recorder):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            if func.qualname == "aten::_linalg_svd":
                # (compute_uv=True, its default, is left out as PyTorch's dispatcher does)
                seen.append(args[2] if len(args) > 2 else True)
            return super().__torch_dispatch__(func, types, args, kwargs)

    _dispatch.push_mode(Args())
    try:
        torch.linalg.svdvals(A)
        torch.linalg.svdvals(A.clone().requires_grad_(True))
    finally:
        _dispatch.pop_mode()
    assert seen == [False, True]


# -- the _ex forms, eig and LU ------------------------------------------------------------------


def test_inv_ex_and_cholesky_ex_report_failures_in_info() -> None:
    singular = torch.tensor([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 3.0]]],
                            dtype=torch.float64)
    inverse, info = torch.linalg.inv_ex(singular)
    assert info.dtype == torch.int32 and info.tolist() == [2, 0]
    torch.testing.assert_close(inverse[1], torch.tensor([[0.5, 0.0], [0.0, 1 / 3]],
                                                        dtype=torch.float64))
    with pytest.raises(torch.linalg.LinAlgError, match="singular"):
        torch.linalg.inv_ex(singular, check_errors=True)
    L, info = torch.linalg.cholesky_ex(torch.tensor([[4.0, 2.0], [2.0, -1.0]]))
    assert info.item() == 2
    L, info = torch.linalg.cholesky_ex(_spd(A))
    assert info.item() == 0
    torch.testing.assert_close(L @ L.mT, _spd(A))


def test_inv_ex_and_cholesky_ex_gradients_match_their_plain_forms() -> None:
    x = _spd(A).requires_grad_(True)
    (g_ex,) = torch.autograd.grad(torch.linalg.inv_ex(x).inverse.sum(), x)
    (g,) = torch.autograd.grad(torch.linalg.inv(x).sum(), x)
    torch.testing.assert_close(g_ex, g)
    (g_ex,) = torch.autograd.grad(torch.linalg.cholesky_ex(x, upper=True).L.sum(), x)
    (g,) = torch.autograd.grad(torch.linalg.cholesky(x, upper=True).sum(), x)
    torch.testing.assert_close(g_ex, g)


def test_eig_of_a_rotation_is_complex() -> None:
    rotation = torch.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=torch.float64)
    w, v = torch.linalg.eig(rotation)
    assert w.dtype == v.dtype == torch.complex128
    assert sorted(w.tolist(), key=lambda z: z.imag) == [-1j, 1j]
    torch.testing.assert_close(torch.linalg.eigvals(rotation), w)
    assert v.stride() == (1, 2)


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 5), (2, 5, 3)])
def test_lu_reconstructs_its_input(shape: tuple[int, ...]) -> None:
    a = torch.randn(shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    k = min(shape[-2:])
    P, L, U = torch.linalg.lu(a)
    torch.testing.assert_close(P @ L @ U, a)
    assert torch.equal(L.diagonal(dim1=-2, dim2=-1), torch.ones(shape[:-2] + (k,),
                                                                  dtype=a.dtype))
    assert torch.equal(U, U.triu()) and torch.equal(L, L.tril())
    LU, pivots = torch.linalg.lu_factor(a)
    assert pivots.dtype == torch.int32 and pivots.shape == shape[:-2] + (k,)
    torch.testing.assert_close(LU.triu()[..., :k, :], U)
    meta = torch.linalg.lu(torch.empty(shape, dtype=torch.float64, device="meta"))
    assert [m.stride() for m in meta] == [x.stride() for x in (P, L, U)]


def test_lu_factor_pivots_are_lapacks() -> None:
    # the largest entry of the first column (row 2, 1-based) is the first pivot; the second
    # column has one row left, its own
    LU, pivots = torch.linalg.lu_factor(torch.tensor([[1.0, 2.0], [3.0, 4.0]],
                                                     dtype=torch.float64))
    assert pivots.tolist() == [2, 2]
    torch.testing.assert_close(LU, torch.tensor([[3.0, 4.0], [1 / 3, 2 - 4 / 3]],
                                                dtype=torch.float64))
    with pytest.raises(torch.linalg.LinAlgError, match="is zero"):
        torch.linalg.lu_factor(torch.ones(2, 2, dtype=torch.float64))
    assert torch.linalg.lu_factor_ex(torch.ones(2, 2, dtype=torch.float64)).info.item() == 2


@pytest.mark.parametrize(("shape", "mode"), [((4, 3), "reduced"), ((3, 3), "complete"),
                                             ((3, 5), "reduced"), ((2, 4, 3), "reduced")])
def test_qr_derivatives(shape: tuple[int, ...], mode: str) -> None:
    a = torch.randn(shape, generator=torch.Generator().manual_seed(1),
                    dtype=torch.float64).requires_grad_(True)

    def qr(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return tuple(torch.linalg.qr(x, mode=mode))

    assert torch.autograd.gradcheck(qr, (a,))
    assert torch.autograd.gradgradcheck(qr, (a,))


def test_qr_derivative_needs_q() -> None:
    a = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        torch.linalg.qr(a, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete'"):
        torch.linalg.qr(a, mode="complete").Q.sum().backward()


def test_channels_last_factories() -> None:
    x = torch.empty(2, 3, 4, 5)
    assert torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride() == (60, 1, 15, 3)
    assert torch.empty(1, 2, 3, 4, 5, memory_format=torch.channels_last_3d).stride() == (
        120, 1, 40, 10, 2)
    assert torch.zeros_like(x, memory_format=torch.channels_last).stride() == (60, 1, 15, 3)
    nhwc = torch.empty_like(x, memory_format=torch.channels_last)
    assert torch.empty_like(nhwc).stride() == (60, 1, 15, 3)  # preserve_format keeps it
    assert torch.ones_like(nhwc, memory_format=torch.contiguous_format).stride() == (60, 20, 5, 1)
    assert torch.empty(2, 3, 4, 5, device="meta",
                       memory_format=torch.channels_last).stride() == (60, 1, 15, 3)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
        torch.empty(2, 3, memory_format=torch.channels_last)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular(upper: bool, unitriangular: bool, left: bool) -> None:
    g = torch.Generator().manual_seed(0)
    eye = torch.eye(3, dtype=torch.float64)
    A = torch.randn(2, 3, 3, generator=g, dtype=torch.float64) + 3 * eye
    B = torch.randn(3, 4, generator=g, dtype=torch.float64)  # broadcast over A's batch
    if not left:
        B = B.mT
    T = A.triu() if upper else A.tril()  # the other triangle is not read
    if unitriangular:
        T = T * (1 - eye) + eye
    X = torch.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)
    torch.testing.assert_close(T @ X if left else X @ T, B.expand(X.shape))
    meta = torch.linalg.solve_triangular(A.to("meta"), B.to("meta"), upper=upper, left=left,
                                         unitriangular=unitriangular)
    assert meta.stride() == X.stride() == ((12, 1, 3) if left else (12, 3, 1))
    a, b = A.clone().requires_grad_(True), B.clone().requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper, left=left,
                                                   unitriangular=unitriangular), (a, b))
