"""Derivative formulas: matrix products and norms (the CompositeExplicitAutograd ops of
``torch._aten.linalg`` and ``torch._aten.linalg_ops``, the ops of ``torch.linalg``).

Complex inputs follow PyTorch's convention (the gradient is the conjugate Wirtinger
derivative), which is why the transposes below are conjugate transposes. The decompositions
of :mod:`torch.linalg` are at the end.
"""

from __future__ import annotations

import math
from typing import Any

from ..._aten import (
    creation as _creation,
    elementwise as _ew,
    factories as _fac,
    linalg as _linalg,
    linalg_ops as _linalg_ops,
    shape as _shape,
)
from ..._aten.linalg import bmm, matmul, mv
from ..._core import config as _config
from ..._core.tensor import Tensor
from ..function import Function
from . import ADDMM_OPERANDS, CROSS, LINEAR_OPERANDS, derivative
from .reductions import _arg, _only_first, _reduced_dims, _restore


def _conj(t: Tensor) -> Tensor:
    return t.conj() if t.is_complex() else t


def _h(t: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims."""
    return _conj(t.transpose(-2, -1))


# -- products -------------------------------------------------------------------------------
# Each product keeps an argument only to compute the other's gradient (CROSS), as PyTorch's
# nodes, and never its result.


_MM = _linalg.ATEN["mm"]  # the operator itself: its arguments need no checks here


def _ht(t: Tensor) -> Tensor:
    """The conjugate transpose of a matrix."""
    return t.t().conj() if t._dtype.is_complex else t.t()


def _column_major(t: Tensor | None) -> bool:
    """Whether a matrix is laid out by columns (the transposed view of a row-major one, as a
    linear layer's ``weight.t()``); False for an argument the node did not keep (CROSS keeps
    one only for the other's gradient, and for a sparse matrix, which has no strides)."""
    return t is not None and t._stride != () and t._stride[0] == 1 \
        and t._stride[1] == t._shape[0] and t._shape[1] > 1


def _grad_a(grad: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """``grad @ b^H``, the gradient of ``a @ b`` for ``a``, laid out as ``a`` is: by columns
    for a column-major ``a``, as ``(b @ grad^H)^H``, so that the gradient of a transposed
    parameter arrives in the parameter's own layout and ``.grad`` needs no copy (PyTorch
    computes it so too)."""
    if _column_major(a):
        return _ht(_MM(b, _ht(grad)))
    return _MM(grad, _ht(b))


def _grad_b(grad: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """``a^H @ grad``, the gradient of ``a @ b`` for ``b``, laid out as ``b`` is (a linear
    layer's ``weight.t()`` is column-major: ``(grad^H @ a)^H``)."""
    if _column_major(b):
        return _ht(_MM(_ht(grad), a))
    return _MM(_ht(a), grad)


@derivative("aten::mm", args=CROSS, result=False)
def _(ctx, grad):
    # two products and two transposed views, nothing else: this runs for every linear layer
    need_a, need_b = ctx.needs_input_grad
    a, b = ctx.args
    return (_grad_a(grad, a, b) if need_a else None,  # (n, k)
            _grad_b(grad, a, b) if need_b else None)  # (k, m)


def _scaled(grad: Tensor, factor: Any) -> Tensor:
    """``grad`` times a Scalar argument's conjugate (itself when it is 1)."""
    if factor.__class__ is int and factor == 1:
        return grad
    return grad * (factor.conjugate() if isinstance(factor, complex) else factor)


def _scaled_sum_grads(ctx: Any, grad: Any, grad_first: Any, grad_second: Any) -> tuple:
    """Gradients of ``beta * self + alpha * (first @ second)`` (addmm, baddbmm): ``grad_first``
    and ``grad_second`` map the alpha-scaled output gradient to each factor's; only the
    gradients asked for are computed."""
    need_self, need_1, need_2 = ctx.needs_input_grad[:3]
    product = _scaled(grad, ctx.kwargs.get("alpha", 1)) if need_1 or need_2 else None
    return (_scaled(grad, ctx.kwargs.get("beta", 1)) if need_self else None,
            grad_first(product) if need_1 else None,
            grad_second(product) if need_2 else None)


@derivative("aten::addmm", args=ADDMM_OPERANDS, result=False)
def _(ctx, grad):
    # beta * self + alpha * (mat1 @ mat2) as one node (a linear layer's), as PyTorch records
    # it: self's gradient is summed back to its shape by the node; self is never read
    mat1, mat2 = ctx.args[1], ctx.args[2]
    return _scaled_sum_grads(ctx, grad, lambda product: _grad_a(product, mat1, mat2),  # (n, k)
                             lambda product: _grad_b(product, mat1, mat2))  # (k, m)


@derivative("aten::baddbmm", args=ADDMM_OPERANDS, result=False)
def _(ctx, grad):
    # beta * self + alpha * (batch1 @ batch2) as one node, as PyTorch records it (a dispatch
    # mode sees baddbmm forward and two bmm backward); self's gradient is summed back to its
    # shape by the node
    batch1, batch2 = ctx.args[1], ctx.args[2]
    return _scaled_sum_grads(ctx, grad, lambda product: bmm(product, _h(batch2)),  # (b, n, k)
                             lambda product: bmm(_h(batch1), product))  # (b, k, m)


@derivative("aten::linear", args=LINEAR_OPERANDS, result=False)
def _(ctx, grad):
    # y = x @ W^T + b over the input's rows (x: (*, in) as (N, in); W: (out, in), a 1-d W
    # as one row): dx = g @ conj(W), dW = g^T @ conj(x), laid out as W is (row-major); db is
    # g summed to the bias's shape, which the node does (the bias broadcasts to the output)
    need_x, need_w, need_b = (tuple(ctx.needs_input_grad) + (False,))[:3]
    x, w = ctx.args[0], ctx.args[1]
    (x_shape, *_), (w_shape, *_) = ctx._node._inputs_meta[:2]
    # (shapes unpacked, not indexed: a Size's indexing is a Python call)
    *_, features = x_shape
    out_features, *_ = w_shape if len(w_shape) == 2 else (1,)
    g = _rows(grad, out_features)
    gx = gw = None
    if need_x:
        gx = _MM(g, _conj(_rows(w, features)))
        if gx._shape != x_shape:
            gx = gx.view(x_shape)
    if need_w:
        gw = _MM(g.t(), _conj(_rows(x, features)))
        if gw._shape != w_shape:
            gw = gw.view(w_shape)
    return gx, gw, grad if need_b else None


def _rows(t: Tensor, width: int) -> Tensor:
    """``t`` as a matrix of rows ``width`` wide (itself when it is one already: a reshape is a
    dispatched op, and a linear layer's backward runs this for three tensors)."""
    shape = t._shape
    if len(shape) == 2:
        _, cols = shape  # (unpacked: a Size's indexing is a Python call)
        if cols == width:
            return t
    return t.reshape(-1, width)


@derivative("aten::bmm", args=CROSS, result=False)
def _(ctx, grad):
    a, b = ctx.args
    need_a, need_b = ctx.needs_input_grad[:2]
    return (bmm(grad, _h(b)) if need_a else None,  # (B, n, k)
            bmm(_h(a), grad) if need_b else None)  # (B, k, m)


@derivative("aten::mv", args=CROSS, result=False)
def _(ctx, grad):
    a, vec = ctx.args
    need_a, need_vec = ctx.needs_input_grad[:2]
    return (grad.unsqueeze(1) * _conj(vec).unsqueeze(0) if need_a else None,  # (n, k)
            mv(_h(a), grad) if need_vec else None)  # (k,)


@derivative("aten::dot", args=CROSS, result=False)
def _(ctx, grad):
    a, b = ctx.args
    need_a, need_b = ctx.needs_input_grad[:2]
    return (grad * _conj(b) if need_a else None, grad * _conj(a) if need_b else None)


@derivative("aten::vdot", args=CROSS, result=False)
def _(ctx, grad):
    # vdot(a, b) = sum(conj(a) * b)
    a, b = ctx.args
    need_a, need_b = ctx.needs_input_grad[:2]
    return (_conj(grad) * b if need_a else None, grad * a if need_b else None)


@derivative("aten::linalg_cross", args=CROSS, result=False)
def _(ctx, grad):
    a, b = ctx.args
    dim = ctx.kwargs.get("dim", -1)
    need_a, need_b = ctx.needs_input_grad[:2]
    return (_linalg_ops.cross(_conj(b), grad, dim=dim) if need_a else None,
            _linalg_ops.cross(grad, _conj(a), dim=dim) if need_b else None)


# -- norms ----------------------------------------------------------------------------------


def _sgn(x: Tensor) -> Tensor:
    return _ew.sgn(x) if x.is_complex() else _ew.sign(x)


def _vector_norm_grad(x: Tensor, ord: float, dims: list[int], norm: Tensor,
                      grad: Tensor) -> Tensor:
    """d norm / d x for the norm over ``dims``, ``norm`` and ``grad`` keepdim-shaped. Where
    the norm is 0 the gradient is 0 (PyTorch's choice of subgradient)."""
    if ord == 1:
        return _sgn(x) * grad
    if ord == 2:
        return grad * _ew.where(_ew.eq(norm, 0), 0, x / norm)
    if math.isinf(ord):
        # the max (min) of |x|: ties share the gradient; a NaN takes it
        magnitude = x.abs()
        winners = _ew.logical_or(_ew.eq(magnitude, norm), _ew.isnan(magnitude))
        winners = winners.to(grad.dtype)
        count = winners.sum(dims, keepdim=True) if dims else winners
        return _sgn(x) * (grad / count * winners)
    if ord < 1:
        scaled = _sgn(x) * _ew.where(_ew.eq(x, 0), 0, x.abs().pow(ord - 1))
        return scaled * grad * norm.pow(1 - ord)
    scale = _ew.where(_ew.eq(norm, 0), 0, grad / norm.pow(ord - 1))
    if ord < 2:
        return _sgn(x) * x.abs().pow(ord - 1) * scale
    return x * x.abs().pow(ord - 2) * scale


@derivative("aten::linalg_vector_norm")
def _(ctx, grad):
    x = ctx.args[0]
    ord = float(_arg(ctx, 1, "ord", 2))
    if ord == 0:  # a count of nonzeros: PyTorch leaves x without a gradient (None)
        return _only_first(ctx, None)
    dims = _reduced_dims(_arg(ctx, 2, "dim", None), x.ndim)
    keepdim = _arg(ctx, 3, "keepdim", False)
    norm = _restore(ctx.result, dims, keepdim)
    grad = _restore(grad, dims, keepdim)
    return _only_first(ctx, _vector_norm_grad(x, ord, dims, norm, grad))


# -- decompositions -------------------------------------------------------------------------
#
# The operators of torch.linalg (computed on the host with LAPACK). Each rule is PyTorch's,
# written in differentiable torch ops of the saved inputs and outputs, so second derivatives
# work. Outputs that got no gradient arrive as zeros: the eigen- and singular-vector terms are
# skipped for an all-zero gradient, which also keeps repeated eigenvalues (0 / 0) out of them.


def _nonzero(g: Tensor | None) -> bool:
    return g is not None and bool((g != 0).any())


def _eye(n: int, like: Tensor) -> Tensor:
    return _creation.eye(n, dtype=like.dtype, device=like.device)


def _inv_grad(inverse: Tensor, grad: Tensor) -> Tensor:
    # d(A^-1) = -A^-1 dA A^-1
    inverse_h = _h(inverse)
    return -matmul(matmul(inverse_h, grad), inverse_h)


@derivative("aten::linalg_inv", args=False)
def _(ctx, grad):
    return (_inv_grad(ctx.result, grad),)


@derivative("aten::linalg_inv_ex", args=False)
def _(ctx, grad, _grad_info):
    return (_inv_grad(ctx.result[0], grad),)


@derivative("aten::linalg_det")
def _(ctx, grad):
    return (_det_backward(ctx.args[0], ctx.result, grad, False),)


@derivative("aten::linalg_slogdet", result=False)
def _(ctx, grad_sign, grad_logabsdet):
    # d log|det A| = Re tr(A^-1 dA)
    A = ctx.args[0]
    if A.is_complex() and _nonzero(grad_sign):
        raise NotImplementedError("the derivative of slogdet's complex sign is not "
                                  "implemented; differentiate logabsdet only")
    if grad_logabsdet is None:  # only the sign was used: a real sign has no gradient
        return (None,)
    if A.numel() == 0:
        return (_fac.zeros_like(A),)
    return (grad_logabsdet.unsqueeze(-1).unsqueeze(-1) * _h(_linalg_ops.inv(A)),)


@derivative("aten::linalg_solve")
def _(ctx, grad):
    # A X = B: gB = A^-H G, gA = -gB X^H;  X A = B: gB = G A^-H, gA = -X^H gB
    A, B = ctx.args[0], ctx.args[1]
    left = ctx.kwargs.get("left", True)
    X = ctx.result
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        grad, X = grad.unsqueeze(-1), X.unsqueeze(-1)
    grad_b = _linalg_ops.solve(_h(A), grad, left=left)
    grad_a = -(matmul(grad_b, _h(X)) if left else matmul(_h(X), grad_b))
    if vector:
        grad_b = grad_b.squeeze(-1)
    need_a, need_b = ctx.needs_input_grad[:2]
    return (grad_a if need_a else None, grad_b if need_b else None)


def _cholesky_grad(factor: Tensor, grad: Tensor, upper: bool) -> Tensor:
    # A = L L^H: gA = L^-H Phi(L^H gL) L^-1, Phi = the lower triangle with half the diagonal,
    # made Hermitian (A is)
    L, grad_l = (_h(factor), _h(grad)) if upper else (factor, grad)
    P = matmul(_h(L), grad_l)
    phi = P.tril(-1) + 0.5 * P * _eye(P.shape[-1], P)
    L_inv = _linalg_ops.inv(L)
    grad_a = matmul(matmul(_h(L_inv), phi), L_inv)
    return 0.5 * (grad_a + _h(grad_a))


@derivative("aten::linalg_cholesky", args=False)
def _(ctx, grad):
    return (_cholesky_grad(ctx.result, grad, ctx.kwargs.get("upper", False)),)


@derivative("aten::linalg_cholesky_ex", args=False)
def _(ctx, grad, _grad_info):
    return (_cholesky_grad(ctx.result[0], grad, ctx.kwargs.get("upper", False)),)


@derivative("aten::_linalg_eigh", args=False)
def _(ctx, grad_w, grad_v):
    # gA = V (diag(gw) + skew(V^H gV) / (w_j - w_i) off the diagonal) V^H
    w, V = ctx.result
    if V.numel() == 0:
        raise RuntimeError("linalg.eigh: the eigenvalues' derivative needs the eigenvectors; "
                           "call _linalg_eigh with compute_v=True")
    eye = _eye(V.shape[-1], V)
    inner = eye * grad_w.unsqueeze(-2)
    if _nonzero(grad_v):
        VhgV = matmul(_h(V), grad_v)
        VhgV = 0.5 * (VhgV - _h(VhgV))
        gaps = _ew.where(eye != 0, 1, w.unsqueeze(-2) - w.unsqueeze(-1))  # w_j - w_i
        inner = inner + _ew.where(eye != 0, 0, VhgV / gaps)
    return (matmul(matmul(V, inner), _h(V)),)


@derivative("aten::_linalg_svd")
def _(ctx, grad_u, grad_s, grad_vh):
    # gA = U [(skew(U^H gU) / E) S + S (skew(V^H gV) / E) + diag(gS)] V^H
    #      + (I - U U^H) gU S^-1 V^H + U S^-1 gV^H (I - V V^H),
    # E_ij = s_j^2 - s_i^2 off the diagonal (1 on it), skew(X) = X - X^H
    U, S, Vh = ctx.result
    if U.numel() == 0 and S.numel():
        raise RuntimeError("linalg.svd: the singular values' derivative needs the singular "
                           "vectors; call _linalg_svd with compute_uv=True")
    k = S.shape[-1]
    if ctx.kwargs.get("full_matrices", False) or (len(ctx.args) > 1 and ctx.args[1]):
        # only the first k vectors take part in A (PyTorch narrows them too)
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        grad_u, grad_vh = grad_u.narrow(-1, 0, k), grad_vh.narrow(-2, 0, k)
    vectors = _nonzero(grad_u) or _nonzero(grad_vh)
    if U.is_complex() and vectors:
        raise NotImplementedError("the derivative of the singular vectors of a complex matrix "
                                  "is not implemented; differentiate the singular values only")
    m, n = U.shape[-2], Vh.shape[-1]
    eye = _creation.eye(k, dtype=S.dtype, device=S.device)
    inner = eye * grad_s.to(U.dtype).unsqueeze(-2)  # diag(gS), (..., k, k)
    if not vectors:
        return (matmul(matmul(U, inner), Vh),)
    s_sq = S * S
    gaps = _ew.where(eye != 0, 1, s_sq.unsqueeze(-2) - s_sq.unsqueeze(-1))  # s_j^2 - s_i^2
    V = _h(Vh)  # (..., n, k)
    row_s, col_s = S.unsqueeze(-1), S.unsqueeze(-2)  # (..., k, 1), (..., 1, k)
    result = None
    if _nonzero(grad_u):
        UhgU = matmul(_h(U), grad_u)  # (..., k, k)
        inner = inner + _ew.where(eye != 0, 0, (UhgU - _h(UhgU)) / gaps) * col_s
        if m > k:
            off = grad_u - matmul(U, UhgU)  # (I - U U^H) gU, (..., m, k)
            result = matmul(off / col_s, Vh)
    if _nonzero(grad_vh):
        grad_v = _h(grad_vh)  # (..., n, k)
        VhgV = matmul(Vh, grad_v)  # (..., k, k)
        inner = inner + row_s * _ew.where(eye != 0, 0, (VhgV - _h(VhgV)) / gaps)
        if n > k:
            off = grad_v - matmul(V, VhgV)  # (I - V V^H) gV, (..., n, k)
            term = matmul(U / col_s, _h(off))
            result = term if result is None else result + term
    core = matmul(matmul(U, inner), Vh)
    return (core if result is None else core + result,)


@derivative("aten::linalg_pinv.atol_rtol_float", "aten::linalg_pinv.atol_rtol_tensor")
def _(ctx, grad):
    return (_pinv_backward(grad, ctx.result, ctx.args[0]),)


@derivative("aten::linalg_lstsq", result=False)
def _(ctx, grad, *_others):
    # the solution is pinv(A) @ B; the residuals' gradient comes through torch.linalg.lstsq's
    # recomputation from the solution, and rank and the singular values have none
    if grad is None:  # only the residuals, rank or singular values were used
        return (None, None)
    A, B = ctx.args[0], ctx.args[1]
    vector = B.ndim == A.ndim - 1
    pinvA = _linalg_ops.pinv(A)
    Bm = B.unsqueeze(-1) if vector else B
    gX = grad.unsqueeze(-1) if vector else grad
    need_a, need_b = ctx.needs_input_grad[:2]
    grad_a = _pinv_backward(matmul(gX, _h(Bm)), pinvA, A) if need_a else None
    grad_b = None
    if need_b:
        grad_b = matmul(_h(pinvA), gX)
        if vector:
            grad_b = grad_b.squeeze(-1)
    return (grad_a, grad_b)


def _copyltu(M: Tensor) -> Tensor:
    """The Hermitian matrix whose lower triangle (diagonal included) is ``M``'s."""
    lower = M.tril(-1)
    return lower + _h(lower) + M * _eye(M.shape[-1], M)


def _qr_square_grad(Q: Tensor, R: Tensor, gQ: Tensor, gR: Tensor) -> Tensor:
    """The gradient of A = Q R for m >= n (R square, invertible):
    gA = (gQ + Q copyltu(M)) R^-H with M = R gR^H - gQ^H Q."""
    M = matmul(R, _h(gR)) - matmul(_h(gQ), Q)
    B = gQ + matmul(Q, _copyltu(M))
    return _linalg_ops.solve(_h(R), B, left=False)  # B R^-H


@derivative("aten::linalg_qr")
def _(ctx, grad_q, grad_r):
    A = ctx.args[0]
    mode = ctx.args[1] if len(ctx.args) > 1 else ctx.kwargs.get("mode", "reduced")
    Q, R = ctx.result
    m, n = A.shape[-2], A.shape[-1]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    if m >= n:
        return (_qr_square_grad(Q, R, grad_q, grad_r),)
    # m < n: A = Q [X | Y] with X square; Y = Q^H A[:, m:] passes gY on to Q
    X = R[..., :m]
    gX, gY = grad_r[..., :m], grad_r[..., m:]
    V = A[..., m:]
    grad_u = _qr_square_grad(Q, X, grad_q + matmul(V, _h(gY)), gX)
    return (_shape.cat([grad_u, matmul(Q, gY)], -1),)


@derivative("aten::linalg_solve_triangular")
def _(ctx, grad):
    # A X = B: gB = A^-H G (A^H is triangular the other way), gA = -gB X^H on A's triangle;
    # X A = B: gB = G A^-H, gA = -X^H gB
    A = ctx.args[0]
    upper = ctx.kwargs["upper"]
    left = ctx.kwargs.get("left", True)
    unit = ctx.kwargs.get("unitriangular", False)
    X = ctx.result
    grad_b = _linalg_ops.solve_triangular(_h(A), grad, upper=not upper, left=left,
                                           unitriangular=unit)
    need_a, need_b = ctx.needs_input_grad[:2]
    grad_a = None
    if need_a:
        grad_a = -(matmul(grad_b, _h(X)) if left else matmul(_h(X), grad_b))
        offset = 1 if unit else 0  # a unit diagonal is not read, so it gets no gradient
        grad_a = grad_a.triu(offset) if upper else grad_a.tril(-offset)
    return (grad_a, grad_b if need_b else None)


# -- the backward of det (cofactors at a singular matrix) and of pinv -----------------------


def _eye_like(A: Tensor) -> Tensor:
    return _eye(A.shape[-1], A)


def _det_backward(A: Tensor, d: Tensor, grad: Tensor, exact: bool) -> Tensor:
    """The gradient of ``d = det(A)`` for the output gradient ``grad``: ``grad * conj(det) *
    A^-H`` away from singular A; at a singular A, the conjugate cofactor matrix when a graph
    is built or ``exact`` (PyTorch 2.13 goes through the SVD there), else 0, as PyTorch 2.13
    gives without a graph."""
    if A.numel() == 0:
        return _fac.zeros_like(A)
    singular = (d == 0).unsqueeze(-1).unsqueeze(-1)
    if (exact or _config.is_grad_enabled()) and bool(singular.any()):
        # the cofactors are dets of minors, so they can be differentiated again
        cofactors = _cofactors(A)
        cofactors = cofactors.conj() if cofactors.is_complex() else cofactors
        return grad.unsqueeze(-1).unsqueeze(-1) * cofactors
    # the identity stands in for a singular A in the inverse (its det is 0 anyway)
    A = _ew.where(singular, _eye_like(A), A)
    scale = grad * (d.conj() if d.is_complex() else d)
    return scale.unsqueeze(-1).unsqueeze(-1) * _h(_linalg_ops.inv(A))


class _MinorDet(Function):
    """The determinant of a minor inside the cofactor matrix: its gradient at a singular minor
    is always the cofactors (``exact``), so that a second derivative of a singular det gets
    PyTorch's values."""

    @staticmethod
    def forward(ctx: Any, A: Tensor) -> Tensor:
        d = _linalg_ops._OPS["linalg_det"](A)
        ctx.save_for_backward(A, d)
        return d

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        A, d = ctx.saved_tensors
        return _det_backward(A, d, grad, True)


def _cofactors(A: Tensor) -> Tensor:
    """The cofactor matrix of square ``A`` (..., n, n): C_ij = (-1)^(i+j) det(A without row i
    and column j), the gradient of det at any A, singular or not."""
    n = A.shape[-1]
    if n == 1:
        return _fac.ones_like(A)
    rows = []
    for i in range(n):
        without_row = _shape.cat([A[..., :i, :], A[..., i + 1:, :]], -2)  # (..., n-1, n)
        minors = [_shape.cat([without_row[..., :j], without_row[..., j + 1:]], -1)
                  for j in range(n)]  # n x (..., n-1, n-1)
        signs = [1.0 if (i + j) % 2 == 0 else -1.0 for j in range(n)]
        row = [sign * _MinorDet.apply(m) for sign, m in zip(signs, minors)]
        rows.append(_shape.stack(row, -1))  # (..., n)
    return _shape.stack(rows, -2)  # (..., n, n)


def _pinv_backward(grad: Tensor, pinvA: Tensor, A: Tensor) -> Tensor:
    """PyTorch's derivative of ``pinvA = pinv(A)`` (FunctionsManual ``pinv_backward``),
    arranged so the products have the smaller of A's dims."""
    m, n = A.shape[-2], A.shape[-1]
    pinvAh, gradh = _h(pinvA), _h(grad)
    if m <= n:
        K = matmul(gradh, pinvA)
        KpinvAh = matmul(K, pinvAh)
        return (-_h(matmul(pinvA, K)) + KpinvAh - matmul(matmul(A, pinvA), KpinvAh)
                + matmul(matmul(pinvAh, pinvA), gradh - matmul(K, A)))
    K = matmul(pinvA, gradh)
    pinvAhK = matmul(pinvAh, K)
    return (-_h(matmul(K, pinvA)) + pinvAhK - matmul(pinvAhK, matmul(pinvA, A))
            + matmul(gradh - matmul(A, K), matmul(pinvA, pinvAh)))
