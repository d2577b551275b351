"""A dispatch mode that records the operators a call reaches, as the dispatch-mode tests compare
them with the names real PyTorch's mode sees (``str(func)``: ``aten.<name>.<overload>``)."""

from torch.utils._python_dispatch import TorchDispatchMode


class CallNames(TorchDispatchMode):
    """Appends ``str(func)`` of every operator call to ``names`` and runs it."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))
