"""``LazyModuleMixin``: modules whose parameter shapes come from the first input."""

from __future__ import annotations

from typing import Any

from torch.nn.parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mix in before the module class: the first call runs ``initialize_parameters(*args)``,
    then the module becomes ``cls_to_become`` (``LazyLinear`` -> ``Linear``)."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            _infer_parameters)

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer is still a placeholder."""
        tensors = list(self._parameters.values()) + list(self._buffers.values())  # type: ignore[attr-defined]
        return any(is_lazy(t) for t in tensors if t is not None)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")


def _infer_parameters(module: Any, args: tuple[Any, ...]) -> None:
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become
