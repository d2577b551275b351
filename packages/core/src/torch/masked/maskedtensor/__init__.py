"""``torch.masked.maskedtensor``: the MaskedTensor class and its constructors."""

from .core import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor

__all__ = ["MaskedTensor", "as_masked_tensor", "is_masked_tensor", "masked_tensor"]
