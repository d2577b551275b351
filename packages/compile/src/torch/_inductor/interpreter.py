"""The fused interpreter: a kernel group run in one pass over blocks through torch ops.

Used while a group's C++ build is not ready, when no compiler exists, and on devices without
a code generator. Each block (a slice of the leading dimension holding about
``config.interpreter_block`` elements) goes through the whole chain before the next block, so
intermediates stay block-sized; each op is the eager operator itself, so results are eager's.
"""

from __future__ import annotations

from typing import Any

import torch

from . import config
from .scheduler import KernelGroup


def _arg(value: Any, env: dict[Any, Any]) -> Any:
    return env[value] if hasattr(value, "op") else value


def _run_block(group: KernelGroup, values: dict[Any, Any]) -> None:
    tail = [n for n in (group.reduction, group.norm) if n is not None]
    for node in group.members + tail:
        args = [_arg(a, values) for a in node.args]
        values[node] = node.target(*args, **node.kwargs)


def run_group(group: KernelGroup, inputs: list[Any], outputs: list[Any] | None = None
              ) -> list[Any]:
    """Run ``group`` on ``inputs`` (its input values in order); its output tensors."""
    shape = torch.broadcast_shapes(*(t.shape for t in inputs if isinstance(t, torch.Tensor)))
    numel = 1
    for size in shape:
        numel *= size
    # the reduction spans dim 0, or a layer norm (whose value is a tuple): one block
    whole = (group.reduction is not None and len(shape) == 1) or group.norm is not None
    if whole or len(shape) == 0 or numel <= config.interpreter_block or shape[0] <= 1:
        values = dict(zip(group.inputs, inputs))
        _run_block(group, values)
        return [values[node] for node in group.outputs]
    if outputs is None:
        outputs = [torch.empty(shape, dtype=node.meta["val"].dtype, device=inputs[0].device)
                   for node in group.outputs]
        if group.reduction is not None:
            keepdim = len(group.reduction.args) > 2 and bool(group.reduction.args[2])
            outputs[-1] = torch.empty(shape[:-1] + ((1,) if keepdim else ()),
                                      dtype=group.reduction.meta["val"].dtype,
                                      device=inputs[0].device)
    row = numel // shape[0]
    rows = max(1, config.interpreter_block // max(row, 1))
    expanded = [t.expand(shape) if isinstance(t, torch.Tensor) else t for t in inputs]
    for start in range(0, shape[0], rows):
        stop = min(start + rows, shape[0])
        values = {node: t[start:stop] if isinstance(t, torch.Tensor) else t
                  for node, t in zip(group.inputs, expanded)}
        _run_block(group, values)
        for out, node in zip(outputs, group.outputs):
            out[start:stop].copy_(values[node])
    return outputs
