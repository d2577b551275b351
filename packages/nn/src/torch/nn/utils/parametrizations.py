"""``torch.nn.utils.parametrizations``: weight normalisation and spectral normalisation
written as parametrizations (:mod:`torch.nn.utils.parametrize`), as in PyTorch.

``weight_norm`` stores ``weight`` as a magnitude ``g`` (``original0``) and a direction ``v``
(``original1``) and computes ``weight = g * v / ||v||``; ``spectral_norm`` divides ``weight``
by its largest singular value, estimated by power iteration in training mode. The state-dict
keys are PyTorch's (``parametrizations.weight.original0``, ``parametrizations.weight.0._u``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from torch.nn.modules.module import Module
from torch.utils.hooks import RemovableHandle

from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# -- weight norm ----------------------------------------------------------------------------


def _check_dim(dim: int, ndim: int, comma: bool = True) -> None:
    if not -ndim <= dim <= ndim - 1:
        sep = "," if comma else ""
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-ndim}, {ndim - 1}]{sep} but got {dim})")


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of ``v`` over every dimension but ``dim``, keeping ``v``'s rank (size 1
    everywhere but ``dim``); ``dim=-1`` is PyTorch's code for the norm of the whole tensor
    (a 0-d result)."""
    if dim == -1:
        return torch.linalg.vector_norm(v)
    _check_dim(dim, v.dim())
    dim %= v.dim()
    others = [d for d in range(v.dim()) if d != dim]
    if not others:  # a 1-d tensor normalised along its only dimension: each entry alone
        return v.abs()
    return torch.linalg.vector_norm(v, dim=others, keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """``g * v / ||v||`` with the norm taken over every dimension but ``dim``."""
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    """``weight = g * v / ||v||``, from ``(g, v)``; its right inverse splits a weight into
    its norm and itself."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (Salimans and Kingma, 2016).

    The magnitude ``g`` is stored as ``parametrizations.<name>.original0`` and the direction
    ``v`` as ``...original1``. ``dim`` is the dimension that keeps one norm per slice (0: one
    per output channel); ``None`` normalises over the whole tensor. A state dict written by the
    older :func:`torch.nn.utils.weight_norm` (``<name>_g``/``<name>_v``) loads into it.
    Returns ``module``.
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _load_old_format(state_dict: dict[str, Any], prefix: str, *args: Any) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    _register_load_state_dict_pre_hook(module, _load_old_format)
    return module


def _register_load_state_dict_pre_hook(module: Module, hook: Any) -> RemovableHandle:
    """A load-state-dict pre-hook called without the module:
    ``hook(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)``."""
    handle = RemovableHandle(module._load_state_dict_pre_hooks)
    module._load_state_dict_pre_hooks[handle.id] = hook
    return handle


# -- spectral norm --------------------------------------------------------------------------


class _SpectralNorm(Module):
    """``weight / sigma(weight)``, ``sigma`` the largest singular value of the weight seen as
    a matrix (``dim`` first, the other dimensions flattened), estimated by power iteration
    with the buffers ``_u`` and ``_v``; a 1-d weight is simply normalised."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        _check_dim(dim, ndim, comma=False)
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # Start from a good estimate, so the first forward is already close to sigma.
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        # (dim, everything else)
        if self.dim != 0:
            weight = weight.movedim(self.dim, 0)
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        """Update ``_u`` and ``_v`` in place (they are what the state dict holds) towards the
        leading left and right singular vectors of ``weight_mat``."""
        # ``mT`` stands for PyTorch's ``mH``: Plait's tensors are real.
        with torch.no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(torch.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(torch.mv(weight_mat.mT, self._u), dim=0,
                                          eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # Copies: the backward pass must see this step's u and v even if a later forward
        # updates the buffers in place.
        u = self._u.clone()
        v = self._v.clone()
        sigma = torch.vdot(u, torch.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        # Any tensor is a valid original: the next forward normalises it. Assigning a weight
        # therefore stores it as is.
        return value


def _default_dim(module: Module) -> int:
    """The output-channel dimension: 1 for transposed convolutions, 0 otherwise."""
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Reparametrize ``module.<name>`` as ``weight / sigma`` (Miyato et al., 2018), ``sigma``
    its spectral norm, estimated with ``n_power_iterations`` steps of power iteration at every
    forward in training mode (15 at registration); in eval mode the stored estimate is used.

    ``dim`` is the output-channel dimension (default: 1 for ``ConvTranspose*d``, else 0).
    The buffers are ``parametrizations.<name>.0._u`` and ``..._v``. Returns ``module``.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# -- orthogonal -----------------------------------------------------------------------------


def _is_orthogonal(Q: Tensor) -> bool:
    """Whether ``Q^H Q`` is the identity, to rounding."""
    n, k = Q.size(-2), Q.size(-1)
    identity = torch.eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * torch.finfo(Q.dtype).eps
    return bool(torch.allclose(Q.mT @ Q, identity, atol=eps))


def _matrix_exp(A: Tensor) -> Tensor:
    """``exp(A)`` for a batch of square matrices by scaling and squaring of a Taylor series,
    in differentiable ops (core has no ``linalg.matrix_exp``)."""
    n = A.size(-1)
    identity = torch.eye(n, dtype=A.dtype, device=A.device)
    with torch.no_grad():
        norm = float(A.abs().sum(-2).amax()) if A.numel() else 0.0
    # Scale A so that its 1-norm is below 1/2: 18 Taylor terms then reach double precision.
    squarings = 0
    while norm > 0.5:
        norm /= 2
        squarings += 1
    scaled = A / (2 ** squarings)
    result = identity + scaled
    term = scaled
    for k in range(2, 19):
        term = term @ scaled / k
        result = result + term
    for _ in range(squarings):
        result = result @ result
    return result


def _householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first ``n`` columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^H`` with ``v_i``
    the i-th column of ``A`` below the diagonal and a 1 on it (LAPACK's ``orgqr``), in
    differentiable ops (core has no ``linalg.householder_product``)."""
    *batch, m, n = A.shape
    k = tau.size(-1)
    Q = torch.eye(m, n, dtype=A.dtype, device=A.device).expand(*batch, m, n)
    rows = torch.arange(m, device=A.device).unsqueeze(-1)
    for i in reversed(range(k)):
        below = (rows > i).to(A.dtype)
        on = (rows == i).to(A.dtype)
        v = A[..., :, i:i + 1] * below + on  # (..., m, 1)
        # H_i Q = Q - tau_i v (v^H Q)
        Q = Q - tau[..., i, None, None] * v @ (v.mT @ Q)
    return Q


def _geqrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's ``geqrf`` of one (m, n) matrix, m >= n: R on and above the diagonal, the
    Householder vectors (without their leading 1) below it, and the scalars ``tau``."""
    a = a.copy()
    m, n = a.shape
    tau = np.zeros(n, dtype=a.dtype)
    for j in range(min(m, n)):
        alpha = a[j, j]
        tail_norm = np.linalg.norm(a[j + 1:, j])
        if tail_norm == 0.0:
            continue  # H_j = I, tau_j = 0
        beta = -np.copysign(np.hypot(alpha, tail_norm), alpha)
        tau[j] = (beta - alpha) / beta
        a[j + 1:, j] /= alpha - beta
        a[j, j] = beta
        v = np.concatenate([[1.0], a[j + 1:, j]]).astype(a.dtype)
        a[j:, j + 1:] -= tau[j] * np.outer(v, v @ a[j:, j + 1:])
    return a, tau


def _householder_inverse(Q: Tensor) -> Tensor:
    """The unconstrained tensor that the Householder map sends to ``Q`` (tall, orthonormal
    columns): ``Q``'s Householder vectors below the diagonal and, on it, the signs that the
    map multiplies the columns by (flipped where a reflector is the identity)."""
    q = Q.detach().cpu().numpy()
    out = np.empty_like(q)
    for index in np.ndindex(q.shape[:-2]):
        a, tau = _geqrf(q[index])
        k = min(a.shape)
        signs = np.sign(a[np.arange(k), np.arange(k)])
        signs[tau == 0.0] *= -1
        a[np.arange(k), np.arange(k)] = signs
        out[index] = a
    return torch.from_numpy(out).to(device=Q.device)


class _Orthogonal(Module):
    """Maps an unconstrained tensor to an orthogonal (unitary) matrix, or a matrix with
    orthonormal columns (rows when it is wide): by the matrix exponential or the Cayley map
    of a skew matrix, or by a product of Householder reflectors."""

    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: str, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        # (..., n, k) with n >= k
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                # Embed the (n, k) matrix in an (n, n) one.
                X = torch.cat([X, X.new_zeros((*X.shape[:-2], n, n - k))], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == "matrix_exp":
                Q = _matrix_exp(A)
            else:
                identity = torch.eye(n, dtype=A.dtype, device=A.device)
                Q = torch.linalg.solve(identity - A / 2, identity + A / 2)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            # The diagonal of X holds the signs of the columns: a full basis of O(n).
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)

        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    @torch.autograd.no_grad()
    def right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n

        if not hasattr(self, "base"):
            # Without trivialization only the Householder map can be inverted.
            if self.orthogonal_map in ("cayley", "matrix_exp"):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            A = _householder_inverse(Q)
            return A.mT if transpose else A

        if n == k:
            # Store the orthogonal matrix as the base (if it is one) and start at zero.
            if not _is_orthogonal(Q):
                Q = _make_orthogonal(Q)
            else:
                Q = Q.clone()
        else:
            # Complete Q to an orthogonal n x n matrix.
            N = torch.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = torch.cat([Q, N], dim=-1)
            Q = _make_orthogonal(Q)
        self.base = Q
        # The zero matrix maps to the identity, so the parametrized tensor is base itself.
        neg_Id = torch.zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A's QR decomposition with the signs fixed so that R has a positive diagonal
    (unique for a full-rank A)."""
    Q, R = torch.linalg.qr(A)
    signs = R.diagonal(dim1=-2, dim2=-1).sgn()
    return Q * signs.unsqueeze(-2)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to be orthogonal (unitary
    if complex), or to have orthonormal columns or rows when it is not square.

    ``orthogonal_map``: ``"matrix_exp"``, ``"cayley"`` or ``"householder"`` (default:
    ``"matrix_exp"`` for square or complex matrices, else ``"householder"``). With
    ``use_trivialization`` (the default) the result is ``base @ map(original)`` with the
    buffer ``base`` updated on assignment. Returns ``module``.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp"
                          if weight.size(-2) == weight.size(-1) or weight.is_complex()
                          else "householder")
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    parametrize.register_parametrization(
        module, name,
        _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization),
        unsafe=True)
    return module
