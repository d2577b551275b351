"""``torch.fft``: discrete Fourier transforms, as PyTorch's namespace has them.

The public namespace of the ops in :mod:`torch._aten.spectral` (the op library), each behind
the ``__torch_function__`` entry. Every transform is one of three aten operators
(``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``) over the spectral primitives.
"""

from __future__ import annotations

from .. import (
    _functions,  # noqa: F401  (Tensor methods the transforms call)
    _torch_function,
)
from .._aten.spectral import TRANSFORMS, fftfreq, fftshift, ifftshift, rfftfreq
from .._core.tensor import Tensor  # noqa: F401  (torch.fft.Tensor, as in PyTorch)
from ..amp import _composite as _autocast_composite

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
    "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
    "rfftfreq", "fftshift", "ifftshift",
]

fft = TRANSFORMS["fft"]
ifft = TRANSFORMS["ifft"]
fft2 = TRANSFORMS["fft2"]
ifft2 = TRANSFORMS["ifft2"]
fftn = TRANSFORMS["fftn"]
ifftn = TRANSFORMS["ifftn"]
rfft = TRANSFORMS["rfft"]
irfft = TRANSFORMS["irfft"]
rfft2 = TRANSFORMS["rfft2"]
irfft2 = TRANSFORMS["irfft2"]
rfftn = TRANSFORMS["rfftn"]
irfftn = TRANSFORMS["irfftn"]
hfft = TRANSFORMS["hfft"]
ihfft = TRANSFORMS["ihfft"]
hfft2 = TRANSFORMS["hfft2"]
ihfft2 = TRANSFORMS["ihfft2"]
hfftn = TRANSFORMS["hfftn"]
ihfftn = TRANSFORMS["ihfftn"]
for _fn in (fftfreq, rfftfreq, fftshift, ifftshift):
    _fn.__module__ = __name__
del _fn

# The transforms PyTorch's CPU autocast list runs in float32 (torch.amp._policy): inside an
# autocast region half-precision inputs are cast to float32. function name -> listed operator.
_autocast_composite.mark(globals(), {name: f"fft_{name}" for name in (
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
    "irfftn", "hfft", "ihfft")})

# The public functions behind the __torch_function__ entry, once (identity never changes).
_torch_function.wrap_module(__name__)
