"""``torch.nn.utils.prune``: zero out parts of a parameter through a mask.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, adds the buffer
``<name>_mask`` and makes ``<name>`` the plain tensor ``<name>_orig * <name>_mask``, which a
forward pre-hook (the pruning method itself) recomputes before every call, so gradients reach
``<name>_orig`` only where the mask is 1. Pruning again combines the masks (a
:class:`PruningContainer` holds the history); :func:`remove` makes the pruning permanent.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor
from torch.nn.modules.module import Module

__all__ = [
    "BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured",
    "PruningContainer", "RandomStructured", "RandomUnstructured", "custom_from_mask",
    "global_unstructured", "identity", "is_pruned", "l1_unstructured", "ln_structured",
    "random_structured", "random_unstructured", "remove",
]


class BasePruningMethod(ABC):
    """A way of choosing a mask; an instance is also the forward pre-hook that re-applies it."""

    _tensor_name: str
    PRUNING_TYPE: str = "unstructured"  # "unstructured", "structured" or "global"

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask of ``t``, given the mask it has already (``default_mask``)."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_orig * <name>_mask`` of ``module``."""
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any,
              importance_scores: Tensor | None = None, **kwargs: Any) -> BasePruningMethod:
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)``, on top of any pruning it
        has had; the method (or the container of all of them) is returned."""
        previous = [(key, hook) for key, hook in module._forward_pre_hooks.items()
                    if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
        if len(previous) > 1:
            raise RuntimeError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                               f"of module {module}. Use a PruningContainer.")
        for key, _ in previous:
            del module._forward_pre_hooks[key]
        method: BasePruningMethod = cls(*args, **kwargs)
        method._tensor_name = name
        if previous:
            old = previous[0][1]
            if not isinstance(old, PruningContainer):
                old = PruningContainer(old)
            old.add_pruning_method(method)
            method = old
        current = getattr(module, name)
        scores = current if importance_scores is None else importance_scores
        if scores.shape != current.shape:
            raise ValueError(f"importance_scores should have the same shape as parameter {name}"
                             f" of {module}")
        first_time = not isinstance(method, PruningContainer)
        if first_time:
            module.register_parameter(name + "_orig", current)
            del module._parameters[name]
            default_mask = torch.ones_like(current)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(
                memory_format=torch.contiguous_format)
        try:
            mask = method.compute_mask(scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first_time:  # leave the module as it was
                orig = getattr(module, name + "_orig")
                del module._parameters[name + "_orig"]
                module.register_parameter(name, orig)
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """``t`` times the mask this method computes for it (no module involved)."""
        scores = t if importance_scores is None else importance_scores
        mask = self.compute_mask(scores, torch.ones_like(t) if default_mask is None
                                 else default_mask)
        return t * mask

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` becomes a parameter again holding
        ``orig * mask``, and ``<name>_orig``/``<name>_mask`` go."""
        name = self._tensor_name
        pruned = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = pruned.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """The pruning methods applied to one tensor, in order; each new one acts only on what the
    previous ones kept."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1 and isinstance(args[0], Iterable):
            args = tuple(args[0])
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append ``method``; it must prune the same tensor as the ones before it."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is None:
            return
        if self._pruning_methods and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._tensor_name = method._tensor_name
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Any:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, computed over the entries (or slices) still kept."""
        method = self._pruning_methods[-1]
        return _combine_masks(method, t, default_mask)


def _combine_masks(method: BasePruningMethod, t: Tensor, mask: Tensor) -> Tensor:
    new_mask = mask.clone(memory_format=torch.contiguous_format).to(dtype=t.dtype)
    if method.PRUNING_TYPE == "unstructured":
        kept = mask == 1
    elif method.PRUNING_TYPE == "structured":
        if not hasattr(method, "dim"):
            raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have "
                                 "the attribute `dim` defined.")
        dim = method.dim if method.dim >= 0 else t.dim() + method.dim
        others = [d for d in range(t.dim()) if d != dim]
        alive = mask.sum(dim=others) != 0 if others else mask != 0
        index: list[Any] = [slice(None)] * t.dim()
        index[dim] = alive
        kept = tuple(index)
    elif method.PRUNING_TYPE == "global":
        kept = tuple(slice(None) for _ in range(t.dim()))
    else:
        raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
    partial = method.compute_mask(t[kept], default_mask=mask[kept])
    new_mask[kept] = partial.to(dtype=new_mask.dtype)
    return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        """Prune ``module.<name>`` with an all-ones mask."""
        return super().apply(module, name)


class _UnstructuredByChoice(BasePruningMethod):
    """Prunes ``amount`` entries, the ones :meth:`_chosen` picks from the flattened tensor."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_amount(amount)
        self.amount = amount

    def _chosen(self, flat: Tensor, count: int) -> Tensor:
        raise NotImplementedError

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        count = _count_to_prune(self.amount, t.numel())
        mask = default_mask.clone(memory_format=torch.contiguous_format)
        if count:
            mask.view(-1)[self._chosen(t.reshape(-1), count)] = 0
        return mask


class RandomUnstructured(_UnstructuredByChoice):
    """Prunes ``amount`` entries chosen at random."""

    def _chosen(self, flat: Tensor, count: int) -> Tensor:
        return torch.topk(torch.rand_like(flat), k=count).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float  # type: ignore[override]
              ) -> BasePruningMethod:
        """Prune ``amount`` random entries of ``module.<name>``."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(_UnstructuredByChoice):
    """Prunes the ``amount`` entries of smallest absolute value."""

    def _chosen(self, flat: Tensor, count: int) -> Tensor:
        return torch.topk(flat.abs(), k=count, largest=False).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        """Prune the ``amount`` smallest entries (by ``importance_scores``) of ``module.<name>``."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole slices along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _validate_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t)
        size = t.shape[self.dim]
        count = _count_to_prune(self.amount, size)
        if not count:
            return default_mask
        draws = torch.rand(size)
        threshold = torch.kthvalue(draws, k=count).values
        mask = _slices_mask(t, self.dim, draws > threshold)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float,  # type: ignore[override]
              dim: int = -1) -> BasePruningMethod:
        """Prune ``amount`` random slices along ``dim`` of ``module.<name>``."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` slices along ``dim`` of smallest ``n``-norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: int | float | str, dim: int = -1) -> None:
        _validate_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t)
        size = t.shape[self.dim]
        count = _count_to_prune(self.amount, size)
        if not count:
            return default_mask
        dim = self.dim if self.dim >= 0 else t.dim() + self.dim
        others = [d for d in range(t.dim()) if d != dim]
        norms = torch.linalg.vector_norm(t, ord=_norm_order(self.n), dim=others)
        keep = torch.topk(norms, k=size - count, largest=True).indices
        mask = _slices_mask(t, dim, keep)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float,  # type: ignore[override]
              n: int | float | str, dim: int, importance_scores: Tensor | None = None,
              ) -> BasePruningMethod:
        """Prune the ``amount`` slices along ``dim`` of ``module.<name>`` of least norm."""
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise ValueError(f"mask of shape {tuple(self.mask.shape)} does not match the "
                             f"tensor's {tuple(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor  # type: ignore[override]
              ) -> BasePruningMethod:
        """Prune ``module.<name>`` where ``mask`` is 0."""
        return super().apply(module, name, mask=mask)


# -- helpers -------------------------------------------------------------------------------


def _validate_amount(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         f"non-negative integer")


def _count_to_prune(amount: int | float, size: int) -> int:
    """How many of ``size`` entries (or slices) ``amount`` means: a count, or a fraction."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                             f"to prune={size}")
        return int(amount)
    return round(amount * size)


def _check_structured(t: Tensor) -> None:
    if t.dim() <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {t.shape} with {t.dim()} dims")


def _norm_order(n: int | float | str) -> float:
    """The vector-norm order of PyTorch's ``n`` ("fro" is 2)."""
    return 2.0 if n == "fro" else float(n)


def _slices_mask(t: Tensor, dim: int, which: Tensor) -> Tensor:
    """Ones on the slices ``which`` (indices or a boolean mask) along ``dim``, zeros elsewhere."""
    mask = torch.zeros_like(t)
    index: list[Any] = [slice(None)] * t.dim()
    index[dim] = which
    mask[tuple(index)] = 1
    return mask


# -- functions -----------------------------------------------------------------------------


def identity(module: Module, name: str) -> Module:
    """Prune nothing, but give ``module.<name>`` the pruning parametrization (an all-ones
    mask)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    """Prune ``amount`` random entries of ``module.<name>`` (a count, or a fraction)."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: int | float,
                    importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` entries of ``module.<name>`` of least absolute value (of
    ``importance_scores`` when given)."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    """Prune ``amount`` random slices of ``module.<name>`` along ``dim``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: int | float, n: int | float | str,
                  dim: int, importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` slices of ``module.<name>`` along ``dim`` of least ``n``-norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]], pruning_method: type,
                        importance_scores: dict[tuple[Module, str], Tensor] | None = None,
                        **kwargs: Any) -> None:
    """Prune the given (module, name) parameters together: ``pruning_method(**kwargs)`` (an
    unstructured method) chooses over all their entries at once."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    scores = importance_scores if importance_scores is not None else {}
    if not isinstance(scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    flat_scores = torch.cat([scores.get((m, n), getattr(m, n)).reshape(-1)
                             for m, n in parameters])
    flat_mask = torch.cat([getattr(m, n + "_mask", torch.ones_like(getattr(m, n))).reshape(-1)
                           for m, n in parameters])
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`.'
                        f" Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container = PruningContainer(method)
    final = container.compute_mask(flat_scores, flat_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, final[start:start + param.numel()].view_as(param))
        start += param.numel()


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` where ``mask`` is 0."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent: it becomes a plain parameter again."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     f"can be removed")


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or any module inside it has a pruned tensor."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules()
               for hook in sub._forward_pre_hooks.values())
