"""``torch.export``: whole-model capture to a functional aten graph with lifted state.

:func:`export` traces through the dispatcher (non-strict: the model's Python runs once on fake
tensors), :func:`save`/:func:`load` keep a program in a zip of JSON and tensors.
"""

from __future__ import annotations

from ._serialize import load, save
from ._trace import export
from .dynamic_shapes import Dim, UserError, ValueRanges
from .exported_program import ExportedProgram, ModuleCallEntry, ModuleCallSignature
from .graph_signature import (
                              ExportGraphSignature,
                              InputKind,
                              InputSpec,
                              OutputKind,
                              OutputSpec,
                              TensorArgument,
)

__all__ = ["Dim", "ExportGraphSignature", "ExportedProgram", "InputKind", "InputSpec",
           "ModuleCallEntry", "ModuleCallSignature", "OutputKind", "OutputSpec",
           "TensorArgument", "UserError", "ValueRanges", "export", "load", "save"]
