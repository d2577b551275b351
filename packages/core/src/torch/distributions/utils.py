"""Helpers shared by the distributions: broadcasting parameters, lazy properties, and the
conversions between probabilities and logits."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Number
from typing import Any

import torch

__all__ = ["broadcast_all", "clamp_probs", "euler_constant", "lazy_property", "logits_to_probs",
           "probs_to_logits", "tensor_text", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant (Gumbel's mean)


def _standard_normal(shape: Any, dtype: torch.dtype, device: Any) -> torch.Tensor:
    """Standard normal samples of ``shape`` (the draw ``rsample`` reparameterises; libraries
    built on the distributions, gpytorch and pyro, call it)."""
    return torch.randn(shape, dtype=dtype, device=device)


def _sum_rightmost(value: Any, dims: int) -> Any:
    """``value`` summed over its ``dims`` rightmost dims (a number, or ``dims == 0``: as it
    is): a log-density over event dims becomes one per batch element."""
    if not dims or not isinstance(value, torch.Tensor):
        return value
    return value.reshape(value.shape[:value.dim() - dims] + (-1,)).sum(-1)


def _tril_mask(n: int, diag: int, device: Any) -> torch.Tensor:
    """The (n, n) mask of the entries (i, j) with ``j <= i + diag``."""
    index = torch.arange(n, device=device)
    return index.view(1, -1) <= index.view(-1, 1) + diag


def tril_matrix_to_vec(mat: torch.Tensor, diag: int = 0) -> torch.Tensor:
    """The lower-triangular entries of the last two dims of ``mat`` (those with
    ``j <= i + diag``), row by row, as its last dim."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec: torch.Tensor, diag: int = 0) -> torch.Tensor:
    """The inverse of :func:`tril_matrix_to_vec`: a square matrix, zero above the ``diag``-th
    diagonal, whose lower-triangular entries are ``vec``'s last dim, row by row."""
    count = vec.shape[-1]
    n = 1
    while int(_tril_mask(n, diag, "cpu").sum()) < count:
        n += 1
    if int(_tril_mask(n, diag, "cpu").sum()) != count:
        raise ValueError(f"vec of {count} entries fills no square matrix's triangle with "
                         f"diag={diag}")
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat


def broadcast_all(*values: Any) -> tuple[torch.Tensor, ...]:
    """Tensors and numbers broadcast to one shape; numbers become tensors of the first tensor's
    dtype and device (the default dtype when every value is a number).

    :raises ValueError: a value is neither a tensor nor a number.
    """
    if not all(isinstance(v, (torch.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    like = next((v for v in values if isinstance(v, torch.Tensor)), None)
    if like is None:
        return tuple(torch.tensor(float(v), dtype=torch.get_default_dtype()) for v in values)
    tensors = [v if isinstance(v, torch.Tensor)
               else torch.tensor(v, dtype=like.dtype, device=like.device) for v in values]
    shape = tensors[0].shape
    # Parameters of one shape (the common case) need no broadcasting views.
    if all(t.shape == shape for t in tensors):
        return tuple(tensors)
    return tuple(torch.broadcast_tensors(*tensors))


def tensor_text(value: torch.Tensor) -> str:
    """How PyTorch's messages show a tensor: a 0-d one as its number, others as ``tensor(...)``."""
    return str(value.item()) if value.dim() == 0 else str(value)


class lazy_property:
    """A property computed once on first access and then stored on the instance, so that
    ``Categorical(logits=...)`` only builds ``probs`` when someone asks for it."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def check_probs_or_logits(probs: Any, logits: Any) -> None:
    """Raises PyTorch's ValueError unless exactly one of ``probs`` and ``logits`` is given (the
    distributions parametrised either way)."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def expand_probs_or_logits(source: Any, target: Any, shape: Any) -> None:
    """``expand`` for a distribution parametrised by ``probs`` or ``logits``: whichever of the
    two ``source`` holds (given, or already computed from the other) goes to ``target``
    expanded to ``shape``; ``_param`` follows the logits if ``source`` keeps one."""
    for name in ("probs", "logits"):
        if name in source.__dict__:
            setattr(target, name, source.__dict__[name].expand(shape))
            if "_param" in source.__dict__:
                target._param = target.__dict__[name]


def clamp_probs(probs: torch.Tensor) -> torch.Tensor:
    """``probs`` kept inside ``[eps, 1 - eps]`` so that their logs stay finite."""
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: torch.Tensor, is_binary: bool = False) -> torch.Tensor:
    """Probabilities from logits: a sigmoid for binary ones, else a softmax over the last dim."""
    if is_binary:
        return torch.sigmoid(logits)
    return torch.softmax(logits, dim=-1)


def probs_to_logits(probs: torch.Tensor, is_binary: bool = False) -> torch.Tensor:
    """Logits from probabilities (clamped first so that 0 and 1 give finite logits)."""
    clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(clamped) - torch.log1p(-clamped)
    return torch.log(clamped)
