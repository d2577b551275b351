"""``torch.special``: special functions, as PyTorch's namespace has them.

Functions ``torch.*`` already has are the same objects here under PyTorch's special names; the
rest are composites from ``torch._fused.special``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch._fused import special as _special

# torch.special name -> the torch.* function it is
_ALIASES: dict[str, str] = {
    "erf": "erf", "erfc": "erfc", "erfinv": "erfinv", "expit": "sigmoid", "logit": "logit",
    "exp2": "exp2", "expm1": "expm1", "log1p": "log1p", "gammaln": "lgamma",
    "digamma": "digamma", "psi": "digamma", "polygamma": "polygamma",
    "multigammaln": "mvlgamma", "i0": "i0", "sinc": "sinc", "xlogy": "xlogy",
    "logsumexp": "logsumexp", "round": "round", "gammainc": "igamma",
    "gammaincc": "igammac",
}

__all__ = sorted([*_ALIASES, *_special.UNARY, *_special.BINARY, *_special.POLYNOMIALS,
                  "softmax", "log_softmax"])

for _name, _target in _ALIASES.items():
    globals()[_name] = getattr(torch, _target)
for _name in _special.UNARY:
    globals()[_name] = _special.unary(_name)
for _name in _special.BINARY:
    globals()[_name] = _special.binary(_name)
for _name in _special.POLYNOMIALS:
    globals()[_name] = _special.polynomial(_name)
del _name, _target


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Softmax over ``dim`` (``dim`` is required here, as in PyTorch's torch.special)."""
    return torch.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Log-softmax over ``dim``."""
    return torch.log_softmax(input, dim, dtype=dtype)


# The public functions behind the __torch_function__ entry, once (identity never changes), as
# torch.special's are overridable in PyTorch (and graph capture sees each as one call).
from torch import _torch_function  # noqa: E402

_torch_function.wrap_module(__name__)
