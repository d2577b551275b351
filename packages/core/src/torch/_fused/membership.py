"""``isin``: which elements of one tensor occur in another.

A composite: the test elements are sorted once and each element is looked up with
``searchsorted`` (O((N + M) log M), no N x M comparison grid). NaN is in no set, as in
PyTorch (NaN equals nothing). The result is boolean, so there is no gradient.
"""

from __future__ import annotations

from numbers import Number

from .._aten.factories import tensor as _tensor
from .._aten.reductions import searchsorted
from .._core.dtype import bool_
from .._core.tensor import Tensor

__all__ = ["isin"]


def isin(elements: Tensor | Number, test_elements: Tensor | Number, *,
         assume_unique: bool = False, invert: bool = False) -> Tensor:
    """A boolean tensor of ``elements``' shape: whether each element is in ``test_elements``.

    :param assume_unique: PyTorch's hint that both inputs hold no repeats (same result here).
    :param invert: answer whether each element is *not* in ``test_elements``.
    :raises TypeError: neither argument is a tensor.
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__}), but "
                        "expected at least one Tensor")
    if not isinstance(elements, Tensor):
        elements = _tensor(elements, device=test_elements.device)
    if not isinstance(test_elements, Tensor):
        test_elements = _tensor(test_elements, device=elements.device)
    candidates = test_elements.reshape(-1)
    if candidates.numel() == 0:
        found = elements.new_zeros(elements.shape, dtype=bool_)
        return ~found if invert else found
    ordered = candidates.sort().values
    position = searchsorted(ordered, elements).clamp(max=ordered.numel() - 1)
    found = ordered[position] == elements
    return ~found if invert else found


# torch.isin only: PyTorch has no Tensor.isin method.
METHODS: dict[str, object] = {}
