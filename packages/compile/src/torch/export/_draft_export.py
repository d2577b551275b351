"""``torch.export.draft_export``: export that reports what stops a sound export instead of
raising, and falls back to the example inputs' values where the model reads data."""

from __future__ import annotations

import enum
from typing import Any

import torch.nn as nn
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

from ._trace import export
from .exported_program import ExportedProgram

__all__ = ["DraftExportReport", "FailureReport", "FailureType", "draft_export"]


class FailureType(enum.IntEnum):
    """What kind of problem a draft export met (PyTorch's numbering)."""

    MISSING_FAKE_KERNEL = 1
    DATA_DEPENDENT_ERROR = 2
    GUARD_ADDED = 3
    MISMATCHED_FAKE_KERNEL = 4


class FailureReport:
    """One problem: its kind, what was seen, and whether it is only worth knowing."""

    def __init__(self, failure_type: FailureType, data: dict[str, Any], xfail: bool = False
                 ) -> None:
        self.failure_type = failure_type
        self.data = data
        self.xfail = xfail

    def __repr__(self) -> str:
        return f"FailureReport(failure_type={self.failure_type}, xfail={self.xfail}, " \
               f"data={self.data})"

    def print(self, str_to_filename: dict[str, str] | None = None) -> str:
        """A readable description of the problem."""
        del str_to_filename
        return f"{self.failure_type.name}: {self.data.get('message', '')}"


class DraftExportReport:
    """The problems a draft export met (``ep._report``); none means ``export`` would have
    produced the same program."""

    def __init__(self, failures: list[FailureReport], str_to_filename: dict[str, str] | None
                 = None, expressions_created: dict[int, dict[str, Any]] | None = None,
                 op_profiles: dict[str, Any] | None = None) -> None:
        self.failures = failures
        self.str_to_filename = str_to_filename or {}
        self.expressions_created = expressions_created or {}
        self.op_profiles = op_profiles or {}

    def successful(self) -> bool:
        """Whether the program is sound (every problem met is only worth knowing)."""
        return all(f.xfail for f in self.failures)

    def __str__(self) -> str:
        if self.successful():
            return ("Congratulations: No issues are found during export, and it was able to "
                    "soundly produce a graph.\nYou can now change back to "
                    "torch.export.export()")
        lines = [f"Draft export found {len(self.failures)} issue(s):"]
        lines += [f"{i + 1}. {f.print(self.str_to_filename)}"
                  for i, f in enumerate(self.failures)]
        return "\n".join(lines)

    def apply_suggested_fixes(self) -> None:
        """Not provided (as in PyTorch)."""
        raise NotImplementedError("Not implemented yet")


def check_traced_value(value: Any, expected: Any, node_name: str) -> None:
    """Raise when a value the program read from a tensor differs from the one it was traced
    with (the graph holds the branch that value took)."""
    if value != expected:
        raise RuntimeError(f"Runtime assertion failed for expression {node_name} == "
                           f"{expected!r} on node {node_name!r}: got {value!r}")


# operators whose Python result the traced program branched on or computed with
_VALUE_READS = ("aten::is_nonzero", "aten::_local_scalar_dense", "aten::item", "aten::equal")


def _assert_traced_values(program: ExportedProgram) -> None:
    """After each value read in a program traced on its example inputs, a check that the
    value is the traced one, as PyTorch's draft export inserts runtime asserts."""
    graph = program.graph
    for node in list(graph.nodes):
        if getattr(node.target, "qualname", None) not in _VALUE_READS:
            continue
        expected = node.meta.get("val")
        if not isinstance(expected, (bool, int, float)):
            continue
        with graph.inserting_after(node):
            graph.call_function(check_traced_value, (node, expected, node.name))
    program.graph_module.recompile()


def draft_export(mod: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None,
                 *, dynamic_shapes: Any = None,
                 preserve_module_call_signature: tuple[str, ...] = (),
                 strict: bool = False) -> ExportedProgram:
    """Export ``mod``, reporting (in ``ep._report``) instead of raising where the model reads
    a tensor's value in Python: that part is traced on the example inputs, so the program
    takes the branch they took."""
    failures: list[FailureReport] = []
    try:
        program = export(mod, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict,
                         preserve_module_call_signature=preserve_module_call_signature)
    except GuardOnDataDependentSymNode as error:
        failures.append(FailureReport(FailureType.DATA_DEPENDENT_ERROR,
                                      {"message": str(error).splitlines()[0]}))
        program = export(mod, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict,
                         preserve_module_call_signature=preserve_module_call_signature,
                         _tracing_mode="real")
        _assert_traced_values(program)
    program._report = DraftExportReport(failures)
    return program
