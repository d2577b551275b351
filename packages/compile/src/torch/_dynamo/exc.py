"""Exceptions of ``torch._dynamo``, with PyTorch's names and base classes."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["InvalidBackend", "TorchDynamoException"]


class TorchDynamoException(RuntimeError):
    """Base class of the errors that ``torch._dynamo`` raises."""


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
