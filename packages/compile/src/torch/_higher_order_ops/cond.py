"""``torch.cond(pred, true_fn, false_fn, operands)``: a branch on a tensor's value that a
compiled graph can hold.

Eagerly it calls the branch ``pred`` selects. While graph capture is active, reading
``pred`` would break the graph (``fullgraph=True`` would refuse it), so both branches are
recorded and each output is selected with ``torch.where(pred, ...)``: the same values, as
``cond``'s contract requires branches without side effects that return tensors of the same
metadata. Gradients flow to the operands through the selected branch only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils import _pytree as pytree

__all__ = ["cond"]


def _check_outputs(true_out: Any, false_out: Any) -> None:
    """Both branches must return tensors of one structure, shapes and dtypes (as PyTorch)."""
    true_leaves, true_spec = pytree.tree_flatten(true_out)
    false_leaves, false_spec = pytree.tree_flatten(false_out)
    if true_spec != false_spec:
        raise RuntimeError("torch.cond: true_fn and false_fn must return the same structure, "
                           f"got {true_spec} and {false_spec}")
    for a, b in zip(true_leaves, false_leaves):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            raise RuntimeError("torch.cond: the branches must return tensors")
        if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
            raise RuntimeError(
                "torch.cond: the branches must return tensors of the same metadata, got "
                f"{tuple(a.shape)} {a.dtype} and {tuple(b.shape)} {b.dtype}")


def cond(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
         operands: tuple[Any, ...] | list[Any] = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    :param pred: a bool, or a tensor of one element.
    :param operands: the branches' arguments (a tuple or list of tensors).
    :returns: what the selected branch returns.
    """
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"torch.cond: operands must be a tuple or list, got {type(operands)}")
    if not isinstance(pred, torch.Tensor):
        return true_fn(*operands) if pred else false_fn(*operands)
    if pred.numel() != 1:
        raise RuntimeError(f"torch.cond: pred must have one element, got shape {tuple(pred.shape)}")
    from torch._dynamo import _capture

    if _capture.current() is None:
        return true_fn(*operands) if bool(pred) else false_fn(*operands)
    # capturing: both branches into the graph, each output selected by pred
    true_out = true_fn(*operands)
    false_out = false_fn(*operands)
    _check_outputs(true_out, false_out)
    flag = pred.reshape(()).to(torch.bool)
    selected = [torch.where(flag, a, b) for a, b in zip(pytree.tree_leaves(true_out),
                                                        pytree.tree_leaves(false_out))]
    return pytree.tree_unflatten(selected, pytree.tree_structure(true_out))
