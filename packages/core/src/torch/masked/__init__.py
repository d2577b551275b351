"""``torch.masked``: reductions and normalisations over the elements a boolean mask keeps, and
``MaskedTensor``, a tensor that carries such a mask (PyTorch's prototype API)."""

from ._ops import (
    amax,
    amin,
    argmax,
    argmin,
    cumprod,
    cumsum,
    log_softmax,
    logaddexp,
    logsumexp,
    mean,
    median,
    norm,
    normalize,
    prod,
    softmax,
    softmin,
    std,
    sum,
    var,
)
from .maskedtensor import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor

__all__ = ["MaskedTensor", "amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod",
           "cumsum", "is_masked_tensor", "log_softmax", "logaddexp", "logsumexp",
           "masked_tensor", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]
