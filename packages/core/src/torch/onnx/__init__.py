"""``torch.onnx``: export a model to an ONNX file.

``export`` traces the model with ``torch.jit``'s graph recorder and writes each aten operator
of the graph as ONNX nodes (one table row per operator, ``_ops``), with the ``onnx`` package
(imported when ``export`` runs; a clear error if it is not installed). Loaded on first use.
"""

from __future__ import annotations

import enum

from torch.onnx._export import export, is_in_onnx_export
from torch.onnx._program import ONNXProgram
from torch.onnx._symbolics import register_custom_op_symbolic, unregister_custom_op_symbolic
from torch.onnx.errors import OnnxExporterError, UnsupportedOperatorError

__all__ = ["ONNXProgram", "OnnxExporterError", "OperatorExportTypes", "TensorProtoDataType",
           "TrainingMode", "UnsupportedOperatorError", "errors", "export", "is_in_onnx_export",
           "register_custom_op_symbolic", "unregister_custom_op_symbolic"]


class TensorProtoDataType(enum.IntEnum):
    """ONNX's element types, numbered as ``onnx.TensorProto`` numbers them."""

    UNDEFINED = 0
    FLOAT = 1
    UINT8 = 2
    INT8 = 3
    UINT16 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    STRING = 8
    BOOL = 9
    FLOAT16 = 10
    DOUBLE = 11
    UINT32 = 12
    UINT64 = 13
    COMPLEX64 = 14
    COMPLEX128 = 15
    BFLOAT16 = 16


def __getattr__(name: str) -> object:
    # torch.onnx.symbolic_opset11...: namespaces that code registering custom symbolics
    # imports (torch.onnx._symbolics)
    if name.startswith("symbolic_opset") and name[len("symbolic_opset"):].isdigit():
        from torch.onnx._symbolics import opset_module

        module = opset_module(int(name[len("symbolic_opset"):]))
        if module is not None:
            return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class OperatorExportTypes(enum.IntEnum):
    """How operators are written: ``ONNX`` (standard ONNX operators) is the one supported."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class TrainingMode(enum.IntEnum):
    """The mode the model is exported in: ``EVAL`` (the default), ``PRESERVE`` (as it is), or
    ``TRAINING``."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2
