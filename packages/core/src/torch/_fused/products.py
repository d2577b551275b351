"""``addr``: a matrix plus a scaled outer product of two vectors, as a composite (so autograd
and every backend serve it): ``beta * input + alpha * outer(vec1, vec2)``; for booleans the
scaling factors act as logical switches, as in PyTorch."""

from __future__ import annotations

from numbers import Number

from .._core.tensor import Tensor

__all__ = ["addr"]


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Number = 1, alpha: Number = 1,
         out: Tensor | None = None) -> Tensor:
    """``beta * input + alpha * vec1 vec2^T`` (``input`` broadcasts to the outer product's
    (n, m) shape; ``beta=0`` ignores its values, NaN included)."""
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D"
                           if vec1.dim() != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    outer = vec1[:, None] * vec2[None, :]  # (n, m)
    if outer.dtype.is_floating_point or outer.dtype.is_complex or outer.dtype.is_signed:
        scaled = outer if alpha == 1 else outer * alpha
        result = scaled if beta == 0 else (input if beta == 1 else input * beta) + scaled
        result = result.expand(outer.shape) if result.shape != outer.shape else result
    else:  # booleans: alpha and beta switch the terms on or off
        result = outer & bool(alpha)
        if beta:
            result = result | input.to(result.dtype)
    return result if out is None else out.copy_(result)


def addr_(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Number = 1,
          alpha: Number = 1) -> Tensor:
    """In-place ``addr``: ``self`` becomes ``beta * self + alpha * vec1 vec2^T``."""
    return self.copy_(addr(self, vec1, vec2, beta=beta, alpha=alpha))


METHODS = {"addr": addr, "addr_": addr_}
