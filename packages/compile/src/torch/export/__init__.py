"""``torch.export``: whole-model capture to a functional aten graph with lifted state.

:func:`export` traces through the dispatcher (non-strict: the model's Python runs once on fake
tensors), :func:`save`/:func:`load` keep a program in a zip of JSON and tensors.
"""

from __future__ import annotations

from typing import Any

from ._draft_export import draft_export
from ._serialize import load, save
from ._trace import export
from .dynamic_shapes import Dim, UserError, ValueRanges, dims
from .exported_program import ExportedProgram, ModuleCallEntry, ModuleCallSignature
from .graph_signature import (
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)
from .unflatten import FlatArgsAdapter, UnflattenedModule, unflatten

__all__ = ["Dim", "ExportGraphSignature", "ExportedProgram", "FlatArgsAdapter", "InputKind",
           "InputSpec", "ModuleCallEntry", "ModuleCallSignature", "OutputKind", "OutputSpec",
           "TensorArgument", "UnflattenedModule", "UserError", "ValueRanges",
           "default_decompositions", "dims", "draft_export", "export", "load",
           "register_dataclass", "save", "unflatten"]


def default_decompositions() -> dict[Any, Any]:
    """The decomposition table ``ExportedProgram.run_decompositions()`` uses by default
    (PyTorch's core aten set), to edit and pass back."""
    from .exported_program import core_aten_decompositions

    return dict(core_aten_decompositions())


def register_dataclass(cls: type[Any], *, serialized_type_name: str | None = None) -> None:
    """Let a dataclass be an input or output of exported programs: its fields are flattened
    as a pytree node (``serialized_type_name`` names it in saved programs)."""
    import dataclasses

    import torch.utils._pytree as pytree

    if not dataclasses.is_dataclass(cls):
        raise ValueError(f"register_dataclass expects a dataclass, got {cls!r}")
    names = [f.name for f in dataclasses.fields(cls)]
    pytree.register_pytree_node(
        cls, lambda obj: ([getattr(obj, n) for n in names], None),
        lambda values, _context: cls(**dict(zip(names, values))),
        serialized_type_name=serialized_type_name or f"{cls.__module__}.{cls.__qualname__}")
