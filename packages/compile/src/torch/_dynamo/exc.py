"""Exceptions of ``torch._dynamo``, with PyTorch's names and base classes."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["BackendCompilerFailed", "InvalidBackend", "RecompileError", "TorchDynamoException",
           "UncapturedHigherOrderOpError", "Unsupported", "UserError"]


class TorchDynamoException(RuntimeError):
    """Base class of the errors that ``torch._dynamo`` raises."""


class TorchRuntimeError(TorchDynamoException):
    """An operator of the compiled code failed (a shape, dtype or device error): PyTorch's
    wrapper of the error its fake run met, whose message it quotes."""


class InvalidBackend(TorchDynamoException):
    """``torch.compile`` was given a backend name that no backend is registered under."""

    def __init__(self, name: str, valid: Iterable[str]) -> None:
        """:param name: the backend name given.
        :param valid: the names that are registered.
        """
        self.name = name
        super().__init__(
            f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available "
            f"backends: {', '.join(valid)}"
        )


class Unsupported(TorchDynamoException):
    """A graph break where none is allowed (``fullgraph=True``): the message names the reason
    and the program's source line."""


class BackendCompilerFailed(TorchDynamoException):
    """The backend raised while compiling a graph; ``inner_exception`` is what it raised."""

    def __init__(self, backend_name: str, inner_exception: BaseException) -> None:
        """:param backend_name: the backend's name.
        :param inner_exception: the backend's error.
        """
        self.backend_name = backend_name
        self.inner_exception = inner_exception
        super().__init__(f"backend={backend_name!r} raised:\n"
                         f"{type(inner_exception).__name__}: {inner_exception}")


class RecompileError(TorchDynamoException):
    """A recompile where the stance forbids one (``set_stance("fail_on_recompile")``)."""


class UserError(TorchDynamoException):
    """The program used the compile API wrongly."""


class UncapturedHigherOrderOpError(TorchDynamoException):
    """A control-flow operator (``torch.while_loop``, ``scan``...) was used against its
    contract (a carried value changed shape, a condition was not a scalar)."""
