"""``torch.fx.passes.shape_prop``: record each node's tensor metadata by running the graph.

``ShapeProp(gm).propagate(*inputs)`` runs ``gm`` node by node (an :class:`Interpreter`) and
stores, for every node whose value holds tensors, a :class:`TensorMetadata` (or the same
structure of them, for tuples and lists) in ``node.meta["tensor_meta"]`` and the value's type
in ``node.meta["type"]``. With a ``fake_mode`` the inputs are made fake first, so nothing is
computed.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
from torch.fx.interpreter import Interpreter
from torch.fx.node import Node, map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    """What ShapeProp records about one tensor."""

    shape: torch.Size
    dtype: torch.dtype
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: torch.memory_format | None
    is_quantized: bool
    qparams: dict[str, Any]


_MEMORY_FORMATS = ("contiguous_format", "channels_last", "channels_last_3d")


def _extract_tensor_metadata(result: torch.Tensor) -> TensorMetadata:
    memory_format = None
    for name in _MEMORY_FORMATS:
        fmt = getattr(torch, name, None)
        if fmt is None:
            continue
        try:
            if result.is_contiguous(memory_format=fmt):
                memory_format = fmt
                break
        except (RuntimeError, ValueError):  # a format of another rank
            continue
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(),
                          memory_format, bool(getattr(result, "is_quantized", False)), {})


class ShapeProp(Interpreter):
    """Runs a GraphModule and records each node's tensor metadata (see the module
    docstring).

    :param gm: the module to run.
    :param fake_mode: a ``FakeTensorMode`` to run in (the inputs are converted with its
        ``from_tensor``), or None to run on the real inputs.
    """

    def __init__(self, gm: Any, fake_mode: Any = None) -> None:
        super().__init__(gm)
        self.fake_mode = fake_mode

    def run_node(self, n: Node) -> Any:
        if self.fake_mode is not None:
            with self.fake_mode:
                result = super().run_node(n)
        else:
            result = super().run_node(n)
        found = False

        def extract(obj: Any) -> Any:
            nonlocal found
            if isinstance(obj, torch.Tensor):
                found = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        """Run the module on ``args`` (made fake first under a ``fake_mode``) and return its
        result; every node's meta is filled on the way."""
        if self.fake_mode is not None:
            args = tuple(self.fake_mode.from_tensor(a) if isinstance(a, torch.Tensor) else a
                         for a in args)
        return super().run(*args)
