"""``torch.onnx``: export a model to an ONNX file.

``export`` traces the model with ``torch.jit``'s graph recorder and writes each aten operator
of the graph as ONNX nodes (one table row per operator, ``_ops``), with the ``onnx`` package
(imported when ``export`` runs; a clear error if it is not installed). Loaded on first use.
"""

from __future__ import annotations

import enum

from torch.onnx._export import export, is_in_onnx_export
from torch.onnx._program import ONNXProgram
from torch.onnx.errors import OnnxExporterError, UnsupportedOperatorError

__all__ = ["ONNXProgram", "OnnxExporterError", "OperatorExportTypes", "TrainingMode",
           "UnsupportedOperatorError", "errors", "export", "is_in_onnx_export"]


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
