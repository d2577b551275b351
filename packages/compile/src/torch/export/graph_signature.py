"""The signature of an exported graph: what each placeholder and each output stands for."""

from __future__ import annotations

import dataclasses
import enum

__all__ = ["ExportGraphSignature", "InputKind", "InputSpec", "OutputKind", "OutputSpec",
           "TensorArgument"]


class InputKind(enum.Enum):
    """What a graph input carries."""

    USER_INPUT = enum.auto()
    PARAMETER = enum.auto()
    BUFFER = enum.auto()
    CONSTANT_TENSOR = enum.auto()


class OutputKind(enum.Enum):
    """What a graph output carries."""

    USER_OUTPUT = enum.auto()
    BUFFER_MUTATION = enum.auto()
    USER_INPUT_MUTATION = enum.auto()


@dataclasses.dataclass(frozen=True)
class TensorArgument:
    """A tensor argument of the graph, by the name of its node."""

    name: str


@dataclasses.dataclass(frozen=True)
class InputSpec:
    """One graph input: its kind, node and (for state) the state-dict name it reads."""

    kind: InputKind
    arg: TensorArgument
    target: str | None
    persistent: bool | None = None


@dataclasses.dataclass(frozen=True)
class OutputSpec:
    """One graph output: its kind, node and (for a mutation) the buffer it updates."""

    kind: OutputKind
    arg: TensorArgument
    target: str | None


@dataclasses.dataclass
class ExportGraphSignature:
    """The graph's inputs (state first, then user inputs) and outputs (buffer mutations first)."""

    input_specs: list[InputSpec]
    output_specs: list[OutputSpec]

    def _inputs(self, kind: InputKind) -> tuple[str, ...]:
        return tuple(s.target or s.arg.name for s in self.input_specs if s.kind is kind)

    @property
    def parameters(self) -> tuple[str, ...]:
        """State-dict names of the lifted parameters, in graph order."""
        return self._inputs(InputKind.PARAMETER)

    @property
    def buffers(self) -> tuple[str, ...]:
        """State-dict names of the lifted buffers, in graph order."""
        return self._inputs(InputKind.BUFFER)

    @property
    def user_inputs(self) -> tuple[str, ...]:
        """Placeholder names of the user inputs."""
        return tuple(s.arg.name for s in self.input_specs if s.kind is InputKind.USER_INPUT)

    @property
    def user_outputs(self) -> tuple[str, ...]:
        """Node names of the user outputs."""
        return tuple(s.arg.name for s in self.output_specs if s.kind is OutputKind.USER_OUTPUT)

    @property
    def buffers_to_mutate(self) -> dict[str, str]:
        """Output node name -> the buffer it holds the new value of."""
        return {s.arg.name: s.target for s in self.output_specs
                if s.kind is OutputKind.BUFFER_MUTATION and s.target is not None}

    def __str__(self) -> str:
        lines = ["# inputs"] + [f"{s.arg.name}: {s.kind.name}" + (f" target='{s.target}'"
                                if s.target else "") for s in self.input_specs]
        lines += ["", "# outputs"] + [f"{s.arg.name}: {s.kind.name}" + (
            f" target='{s.target}'" if s.target else "") for s in self.output_specs]
        return "\n".join(lines)
