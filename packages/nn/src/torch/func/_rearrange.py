"""``torch.func.rearrange``: einops-style ``rearrange(tensor, "b c (h w) -> b h w c", h=4)``
as one reshape, one permute and one reshape.

A pattern side is a list of groups, one per dimension: a name (``b``), a parenthesised
composition of names (``(h w)``, sizes multiplied, row-major), ``1`` or ``()`` for a dimension
of size 1, and at most one ``...`` for the dimensions not named. Every name on one side
appears exactly once on the other.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = ["rearrange"]

_ELLIPSIS = "…"
_GROUPED_ELLIPSIS = "(…)"  # an ellipsis inside parentheses: its dimensions merge
_TOKEN = re.compile(r"\.\.\.|\(|\)|[A-Za-z_][A-Za-z0-9_]*|\d+|\S")


def _parse_side(text: str) -> list[list[str]]:
    """Groups of elementary names (``[]`` for a size-1 dimension); the ellipsis is one
    name, ``_ELLIPSIS`` (``_GROUPED_ELLIPSIS`` inside parentheses)."""
    groups: list[list[str]] = []
    current: list[str] | None = None
    for token in _TOKEN.findall(text):
        if token == "(":
            if current is not None:
                raise ValueError(f"rearrange: nested parentheses in '{text}'")
            current = []
        elif token == ")":
            if current is None:
                raise ValueError(f"rearrange: unbalanced ')' in '{text}'")
            groups.append(current)
            current = None
        elif token == "1" and current is None:
            groups.append([])
        elif token == "..." or token.isidentifier():
            if token == "...":
                name = _ELLIPSIS if current is None else _GROUPED_ELLIPSIS
            else:
                name = token
            if current is None:
                groups.append([name])
            else:
                current.append(name)
        else:
            raise ValueError(f"rearrange: unexpected '{token}' in '{text}'")
    if current is not None:
        raise ValueError(f"rearrange: unbalanced '(' in '{text}'")
    names = [n for g in groups for n in g]
    if len(names) != len(set(names)):
        raise ValueError(f"rearrange: a name repeats in '{text}'")
    return groups


def _expand_ellipsis(groups: list[list[str]], count: int) -> list[list[str]]:
    """The ellipsis replaced by ``count`` names (kept inside its group when it is in one)."""
    dims = [f"{_ELLIPSIS}{i}" for i in range(count)]
    out: list[list[str]] = []
    for group in groups:
        if group == [_ELLIPSIS]:
            out.extend([d] for d in dims)
        elif _GROUPED_ELLIPSIS in group:
            i = group.index(_GROUPED_ELLIPSIS)
            out.append(group[:i] + dims + group[i + 1:])
        else:
            out.append(group)
    return out


def rearrange(tensor: Tensor | Sequence[Tensor], pattern: str, **axes_lengths: int) -> Tensor:
    """Reorder, split and merge the dimensions of ``tensor`` as ``pattern`` says (a list of
    tensors is stacked along a new first dimension first). ``axes_lengths`` gives the sizes a
    split needs (one size per group may be left to inference)."""
    if not isinstance(tensor, Tensor):
        tensor = torch.stack(list(tensor))
    if pattern.count("->") != 1:
        raise ValueError(f"rearrange: the pattern needs one '->': '{pattern}'")
    left_text, right_text = pattern.split("->")
    left, right = _parse_side(left_text), _parse_side(right_text)
    def ellipsis_in(side: list[list[str]]) -> bool:
        return any(_ELLIPSIS in g or _GROUPED_ELLIPSIS in g for g in side)

    has_ellipsis = ellipsis_in(left)
    if has_ellipsis != ellipsis_in(right):
        raise ValueError(f"rearrange: '...' must be on both sides of '{pattern}'")
    if any(_GROUPED_ELLIPSIS in g for g in left):
        raise ValueError(f"rearrange: '...' cannot be inside parentheses on the left of "
                         f"'{pattern}'")
    n_ellipsis = tensor.dim() - (len(left) - 1) if has_ellipsis else 0
    if n_ellipsis < 0 or (not has_ellipsis and len(left) != tensor.dim()):
        raise ValueError(f"rearrange: '{left_text.strip()}' has {len(left)} dimensions, the "
                         f"tensor {tensor.dim()}")
    left, right = _expand_ellipsis(left, n_ellipsis), _expand_ellipsis(right, n_ellipsis)
    left_names = [n for g in left for n in g]
    right_names = [n for g in right for n in g]
    if set(left_names) != set(right_names):
        raise ValueError(f"rearrange: the names differ between the sides of '{pattern}': "
                         f"{sorted(set(left_names) ^ set(right_names))}")
    unknown_given = set(axes_lengths) - set(left_names)
    if unknown_given:
        raise ValueError(f"rearrange: sizes given for names not in the pattern: "
                         f"{sorted(unknown_given)}")
    sizes: dict[str, int] = {}
    for group, size in zip(left, tensor.shape):
        missing = [n for n in group if n not in axes_lengths]
        known = math.prod(axes_lengths[n] for n in group if n in axes_lengths)
        if len(missing) > 1:
            raise ValueError(f"rearrange: cannot infer the sizes of {missing} in '{pattern}'")
        if missing:
            if known == 0 or size % known:
                raise ValueError(f"rearrange: dimension of size {size} does not split by "
                                 f"{known}")
            sizes[missing[0]] = size // known
        elif known != size:
            raise ValueError(f"rearrange: the sizes of {group} multiply to {known}, the "
                             f"dimension is {size}")
        sizes.update({n: axes_lengths[n] for n in group if n in axes_lengths})
    elementary = tensor.reshape([sizes[n] for n in left_names])
    permuted = elementary.permute([left_names.index(n) for n in right_names])
    return permuted.reshape([math.prod(sizes[n] for n in g) for g in right])
