"""The layout-changing nn operators that are ``aten::`` operators of their own in PyTorch:
``constant_pad_nd`` (``F.pad`` in constant mode), ``pixel_shuffle`` and ``pixel_unshuffle``.

Libraries written for PyTorch (dispatch modes, flop counters, exporters) key on these names,
so ``F.pad(x, (1, 1))`` must reach ``aten::constant_pad_nd``, not ``full`` + ``cat``. Each
kernel is a composite over shape ops (narrow/full/cat, reshape/permute), so every backend and
the meta device serve it; the derivatives are formulas
(``torch.autograd._formulas.nn_layout``): a constant pad's gradient is the gradient cropped by
the negated pads (``constant_pad_nd`` again), and the two shuffles are each other's gradient.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._core import dispatch as _dispatch
from .._core.tensor import Tensor
from . import factories as _fac, shape as _shape

__all__: list[str] = []  # F.pad / F.pixel_shuffle come from plait-nn


def _constant_pad_nd(self: Tensor, pad: Sequence[int], value: Any = 0) -> Tensor:
    """Pad (or crop, for negative entries) the last ``len(pad) // 2`` dims of ``self``;
    ``pad`` lists (before, after) pairs from the last dim backwards."""
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > self.dim():
        raise RuntimeError("Length of pad should be no more than twice the number of "
                           f"dimensions of the input. Pad length is {len(pad)}while the input "
                           f"has {self.dim()}dimensions.")
    shape = list(self.shape)
    for k in range(len(pad) // 2):
        dim = self.dim() - 1 - k
        if shape[dim] + pad[2 * k] + pad[2 * k + 1] < 0:
            raise RuntimeError(f"The input size {shape[dim]}, plus negative padding "
                               f"{pad[2 * k]} and {pad[2 * k + 1]} resulted in a negative "
                               "output size, which is invalid. Check dimension "
                               f"{dim} of your input.")
    out, copied = self, False
    for k in range(len(pad) // 2):
        dim = self.dim() - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        # crop first (negative pads), then grow: a dim cropped to nothing still pads
        start, stop = max(-before, 0), out.shape[dim] - max(-after, 0)
        if start or stop != out.shape[dim]:
            out = _shape.narrow(out, dim, start, max(stop - start, 0))
        parts = []
        for width in (max(before, 0), None, max(after, 0)):
            if width is None:
                parts.append(out)
            elif width:
                block = list(out.shape)
                block[dim] = width
                parts.append(_fac.full(block, value, dtype=out.dtype, device=out.device))
        if len(parts) > 1:
            out, copied = _shape.cat(parts, dim), True
    # the result never aliases the input, as PyTorch's (a zero pad or a pure crop still copies)
    return out if copied else out.clone()


def _shuffle_checks(name: str, self: Tensor, factor: int, what: str) -> None:
    if self.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {self.dim()} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def _pixel_shuffle(self: Tensor, upscale_factor: int) -> Tensor:
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    r = int(upscale_factor)
    _shuffle_checks("pixel_shuffle", self, r, "upscale_factor")
    *lead, c, h, w = self.shape
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c}"
                           f" is not divisible by {r * r}")
    k = len(lead)
    x = _shape.reshape(self, [*lead, c // (r * r), r, r, h, w])
    x = _shape.permute(x, [*range(k), k, k + 3, k + 1, k + 4, k + 2])
    return _shape.reshape(x, [*lead, c // (r * r), h * r, w * r]).contiguous()


def _pixel_unshuffle(self: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W), the inverse of ``pixel_shuffle``."""
    r = int(downscale_factor)
    _shuffle_checks("pixel_unshuffle", self, r, "downscale_factor")
    *lead, c, h, w = self.shape
    if h % r or w % r:
        which, axis, size = ("height", -2, h) if h % r else ("width", -1, w)
        raise RuntimeError(f"pixel_unshuffle expects {which} to be divisible by "
                           f"downscale_factor, but input.size({axis})={size} is not divisible "
                           f"by {r}")
    k = len(lead)
    x = _shape.reshape(self, [*lead, c, h // r, r, w // r, r])
    x = _shape.permute(x, [*range(k), k, k + 2, k + 4, k + 1, k + 3])
    return _shape.reshape(x, [*lead, c * r * r, h // r, w // r]).contiguous()


_TABLE: dict[str, tuple[Any, ...]] = {
    "constant_pad_nd": ("constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
                        _constant_pad_nd),
    "pixel_shuffle": ("pixel_shuffle(Tensor self, int upscale_factor) -> Tensor",
                      _pixel_shuffle),
    "pixel_unshuffle": ("pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor",
                        _pixel_unshuffle),
}

ATEN: dict[str, _dispatch.Operator] = _dispatch.define_aten(_TABLE)
