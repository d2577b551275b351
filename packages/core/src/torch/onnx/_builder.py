"""The ONNX graph under construction: nodes, initializers, fresh names and dtype mapping.

Operator translations (:mod:`torch.onnx._ops`) call :meth:`Builder.op` and
:meth:`Builder.const`; tensors flow between them as :class:`Var` (an ONNX value name with the
shape and dtype the trace saw).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

__all__ = ["Builder", "Var", "onnx_type"]

# torch dtype -> onnx.TensorProto data type name
_ONNX_TYPES = {
    torch.float32: "FLOAT", torch.float64: "DOUBLE", torch.float16: "FLOAT16",
    torch.bfloat16: "BFLOAT16", torch.int64: "INT64", torch.int32: "INT32",
    torch.int16: "INT16", torch.int8: "INT8", torch.uint8: "UINT8", torch.bool: "BOOL",
    torch.complex64: "COMPLEX64", torch.complex128: "COMPLEX128",
}


def onnx_type(onnx: Any, dtype: torch.dtype) -> int:
    """The ONNX element type of a torch dtype."""
    name = _ONNX_TYPES.get(dtype)
    if name is None:
        from torch.onnx.errors import OnnxExporterError

        raise OnnxExporterError(f"ONNX has no element type for {dtype}")
    return int(getattr(onnx.TensorProto, name))


class Var:
    """A tensor of the ONNX graph: its name and the shape and dtype it had in the trace."""

    __slots__ = ("dtype", "name", "shape")

    def __init__(self, name: str, shape: Sequence[int], dtype: torch.dtype) -> None:
        self.name = name
        self.shape = tuple(shape)
        self.dtype = dtype

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Var({self.name}, {list(self.shape)}, {self.dtype})"


class Builder:
    """Collects the nodes and initializers of one ONNX graph."""

    def __init__(self, onnx: Any, opset: int) -> None:
        self.onnx = onnx
        self.opset = opset
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def op(self, op_type: str, *inputs: Var | str | None, outputs: int = 1,
           **attrs: Any) -> Any:
        """Add a node; returns its output name, or a list of names when ``outputs > 1``.
        ``None`` among the inputs is an omitted optional input."""
        names = ["" if x is None else x.name if isinstance(x, Var) else x for x in inputs]
        outs = [self.fresh(op_type) for _ in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.onnx.helper.make_node(op_type, names, outs,
                                                     name=self.fresh(f"/{op_type}"), **attrs))
        return outs[0] if outputs == 1 else outs

    def const(self, value: Any, dtype: torch.dtype, name: str | None = None) -> str:
        """An initializer holding ``value`` (a tensor, number or nested list) as ``dtype``."""
        tensor = value if isinstance(value, torch.Tensor) else torch.tensor(value)
        return self.tensor(tensor.to(dtype), name or self.fresh("const"))

    def ints(self, values: Sequence[int]) -> str:
        """A 1-D int64 initializer (shapes, axes, starts...)."""
        return self.const(list(values), torch.int64)

    def tensor(self, tensor: torch.Tensor, name: str) -> str:
        """Add ``tensor`` as an initializer named ``name``."""
        from onnx import numpy_helper

        t = tensor.detach()
        if t.dtype == torch.bfloat16:  # numpy has no bfloat16: stored via float32, then cast
            source = self.tensor(t.float(), self.fresh("bf16_source"))
            self.nodes.append(self.onnx.helper.make_node(
                "Cast", [source], [name], to=onnx_type(self.onnx, torch.bfloat16)))
            return name
        self.initializers.append(numpy_helper.from_array(t.contiguous().numpy(), name))
        return name

    def cast(self, x: Var | str, dtype: torch.dtype, current: torch.dtype | None = None) -> str:
        """``x`` as ``dtype`` (no node when it already is)."""
        if isinstance(x, Var):
            current = x.dtype
        name = x.name if isinstance(x, Var) else x
        if current == dtype:
            return name
        return self.op("Cast", name, to=onnx_type(self.onnx, dtype))

    def axes_input(self, op_type: str, x: Var | str, axes: Sequence[int] | None,
                   since: int, **attrs: Any) -> str:
        """A node whose ``axes`` became an input in opset ``since`` (ReduceMean, Squeeze...)."""
        if axes is None:
            return self.op(op_type, x, **attrs)
        if self.opset >= since:
            return self.op(op_type, x, self.ints(axes), **attrs)
        return self.op(op_type, x, axes=list(axes), **attrs)
