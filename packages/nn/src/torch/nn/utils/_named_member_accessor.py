"""``torch.nn.utils._named_member_accessor``: read, set and swap a module's tensors and
submodules by (dotted) name, writing parameters and buffers into their tables directly (so a
plain tensor can stand in for a parameter), as ``torch.func.functional_call`` does."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from torch import Tensor

from ..modules.module import Module
from .stateless import _MISSING, _owner, _swap_tensor

__all__ = ["NamedMemberAccessor", "set_tensor", "swap_submodule", "swap_tensor"]


def set_tensor(module: Module, name: str, tensor: Tensor) -> None:
    """Set ``module``'s own attribute ``name`` (a parameter, buffer or tensor attribute) to
    ``tensor``."""
    swap_tensor(module, name, tensor, allow_missing=True)


def swap_tensor(module: Module, name: str, tensor: Tensor | None,
                allow_missing: bool = False) -> Tensor | None:
    """Put ``tensor`` at ``module``'s own attribute ``name``; return the tensor that was there.

    :raises AttributeError: nothing was there and ``allow_missing`` is False.
    :raises KeyError: ``name`` is empty or dotted (use :class:`NamedMemberAccessor`)."""
    if not isinstance(module, Module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")
    if name == "" or "." in name:
        raise KeyError(f'tensor name can\'t be empty string "" or contain ".": {name!r}')
    if (not allow_missing and name not in module._parameters and name not in module._buffers
            and not hasattr(module, name)):
        raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
    old = _swap_tensor(module, name, tensor)
    return None if old is _MISSING else old


def swap_submodule(module: Module, name: str, submodule: Module) -> Module:
    """Put ``submodule`` at ``module``'s child ``name``; return the child that was there."""
    if not isinstance(submodule, Module):
        raise TypeError(f"{submodule} is not an instance of torch.nn.Module")
    if name not in module._modules:
        raise KeyError(f"submodule {name} does not exist")
    old = module._modules[name]
    module._modules[name] = submodule
    return old


class NamedMemberAccessor:
    """Tensors and submodules of ``module`` by dotted name (``"encoder.layer.0.weight"``)."""

    def __init__(self, module: Module) -> None:
        self.module = module

    def get_submodule(self, name: str) -> Module:
        """The submodule at dotted ``name`` (``""``: the module itself)."""
        return self.module.get_submodule(name) if name else self.module

    def swap_submodule(self, path: str, value: Module) -> Module:
        """Put ``value`` at dotted ``path``; return the submodule that was there."""
        prefix, _, attr = path.rpartition(".")
        return swap_submodule(self.get_submodule(prefix), attr, value)

    def get_tensor(self, name: str) -> Tensor:
        """The tensor at dotted ``name``."""
        owner, leaf = _owner(self.module, name)
        value = getattr(owner, leaf)
        if not isinstance(value, Tensor):
            raise TypeError(f"{value} is not an instance of torch.Tensor")
        return value

    def set_tensor(self, name: str, value: Tensor) -> None:
        """Put ``value`` at dotted ``name``."""
        owner, leaf = _owner(self.module, name)
        set_tensor(owner, leaf, value)

    def del_tensor(self, name: str) -> None:
        """Delete the tensor at dotted ``name``."""
        owner, leaf = _owner(self.module, name)
        delattr(owner, leaf)

    def swap_tensor(self, name: str, value: Tensor | None, allow_missing: bool = False
                    ) -> Tensor | None:
        """Put ``value`` at dotted ``name``; return the tensor that was there."""
        owner, leaf = _owner(self.module, name)
        return swap_tensor(owner, leaf, value, allow_missing)

    def get_tensors(self, names: Iterable[str]) -> list[Tensor]:
        """The tensors at ``names``."""
        return [self.get_tensor(name) for name in names]

    def set_tensors(self, names: Iterable[str], values: Iterable[Tensor]) -> None:
        """Put each of ``values`` at its name."""
        for name, value in zip(names, values, strict=True):
            self.set_tensor(name, value)

    def set_tensors_dict(self, named_tensors: dict[str, Tensor]) -> None:
        """Put each tensor of ``named_tensors`` at its name."""
        for name, value in named_tensors.items():
            self.set_tensor(name, value)

    def swap_tensors(self, names: Iterable[str], values: Iterable[Tensor],
                     allow_missing: bool = False) -> list[Any]:
        """Put each of ``values`` at its name; return the tensors that were there."""
        return [self.swap_tensor(name, value, allow_missing)
                for name, value in zip(names, values, strict=True)]

    def swap_tensors_dict(self, named_tensors: dict[str, Tensor], allow_missing: bool = False
                          ) -> tuple[dict[str, Any], list[str]]:
        """Put each tensor of ``named_tensors`` at its name: (the tensors that were there,
        the names that had none)."""
        old: dict[str, Any] = {}
        missing: list[str] = []
        for name, value in named_tensors.items():
            try:
                old[name] = self.swap_tensor(name, value)
            except AttributeError:
                if not allow_missing:
                    raise
                self.swap_tensor(name, value, allow_missing=True)
                missing.append(name)
        return old, missing

    def check_keys(self, keys: Iterable[str]) -> tuple[list[str], list[str]]:
        """(the names in ``keys`` the module does not have, the module's tensor names not in
        ``keys``), both sorted."""
        wanted = set(keys)
        valid = {name for name, _ in self.module.named_parameters(remove_duplicate=False)}
        valid |= {name for name, _ in self.module.named_buffers(remove_duplicate=False)}
        return sorted(wanted - valid), sorted(valid - wanted)

    def named_parameters(self, remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """The module's named parameters."""
        yield from self.module.named_parameters(remove_duplicate=remove_duplicate)

    def named_buffers(self, remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """The module's named buffers."""
        yield from self.module.named_buffers(remove_duplicate=remove_duplicate)
