"""``torch.nn.modules.utils``: the argument helpers layer code imports from PyTorch's path
(``_pair(3) == (3, 3)``) and :func:`consume_prefix_in_state_dict_if_present`."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple[Any, ...]]:
    """A function that repeats a scalar ``n`` times and passes an iterable through as a tuple."""

    def parse(x: Any) -> tuple[Any, ...]:
        if isinstance(x, Iterable):
            return tuple(x)
        return tuple(itertools.repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: Sequence[Any], n: int) -> tuple[Any, ...]:
    """``t`` reversed with each element repeated ``n`` times (conv padding to F.pad order)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size: Sequence[Any] | int, defaults: Sequence[int]) -> list[int]:
    """``out_size`` with its None entries taken from the trailing ``defaults``."""
    if isinstance(out_size, int):
        return [out_size]
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    tail = defaults[-len(out_size):]
    return [d if v is None else v for v, d in zip(out_size, tail)]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys (and metadata keys) of ``state_dict`` that start with it,
    in place (a DataParallel checkpoint's ``module.``); the stripped keys move to the end in
    their order, as PyTorch's do."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        # the module's own entry ("module") becomes the root's ("")
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)
