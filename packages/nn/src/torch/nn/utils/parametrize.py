"""``torch.nn.utils.parametrize``: express a module's parameter or buffer as a function of
other tensors, as PyTorch does.

``register_parametrization(module, "weight", P())`` moves the tensor into
``module.parametrizations.weight.original`` (a :class:`ParametrizationList`) and replaces the
attribute by a property that returns ``P()(original)`` each time it is read. The property lives
on a class made for this one module (``ParametrizedLinear`` for a ``Linear``), so other
instances of ``Linear`` are untouched; removing the last parametrization restores the class.
Assigning to the attribute runs the parametrizations' ``right_inverse`` backwards and stores
the result in ``original`` (or ``original0``, ``original1``... when ``right_inverse`` returns
several tensors). The state-dict keys are therefore PyTorch's:
``parametrizations.weight.original``.
"""

from __future__ import annotations

import copy
import copyreg
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
from torch import Tensor
from torch.nn.modules.container import ModuleDict, ModuleList
from torch.nn.modules.module import Module
from torch.nn.parameter import Parameter

__all__ = [
    "cached",
    "ParametrizationList",
    "register_parametrization",
    "is_parametrized",
    "remove_parametrizations",
    "type_before_parametrizations",
    "transfer_parametrizations_and_params",
]

# Inside ``cached()`` each parametrized tensor is computed once per (module, name); nested
# ``cached()`` blocks share one cache, which is dropped when the outermost one exits.
_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Compute each parametrized tensor once inside the block and reuse it on every read.

    Useful when a parametrized weight is read several times per step (a recurrent layer
    reading its weight at every time step) and the parametrization is expensive. The cache
    is dropped on leaving the outermost ``cached()`` block.
    """
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _set_tensor_(tensor: Tensor, value: Tensor) -> None:
    """``tensor.set_(value)``: ``tensor`` (the same object, so optimizers and state dicts that
    hold it stay valid) takes ``value``'s memory, shape and dtype. It keeps its own version
    counter, which is bumped as for any in-place change."""
    if value is tensor:
        return
    tensor._storage = value._storage
    tensor._shape = value._shape
    tensor._stride = value._stride
    tensor._offset = value._offset
    tensor._dtype = value._dtype
    tensor._device = value._device
    tensor._interned_layout = None  # the layout changed: no stale fast-path key
    tensor._bump_version()


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _right_inverse_of(module: Module, value: Any) -> Any:
    """``module.right_inverse(value)``, or ``value`` when the module has none (or says so by
    raising ``NotImplementedError``): registering treats a missing inverse as the identity."""
    if not hasattr(module, "right_inverse"):
        return value
    try:
        return module.right_inverse(value)
    except NotImplementedError:
        return value


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor of a module, applied in order, with the
    unparametrized tensor(s) it owns: ``original``, or ``original0``, ``original1``... when the
    first parametrization's ``right_inverse`` returns a sequence of tensors.

    Calling it evaluates the parametrized tensor; :meth:`right_inverse` stores a new value.
    It is built by :func:`register_parametrization`, not by hand.
    """

    original: Tensor
    unsafe: bool

    def __init__(self, modules: Sequence[Module], original: Tensor | Parameter,
                 unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe

        original_shape = original.shape
        original_dtype = original.dtype
        with torch.no_grad():
            new = original
            for module in reversed(list(self)):
                new = _right_inverse_of(module, new)

        if not isinstance(new, Tensor) and not isinstance(new, Sequence):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)

        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                                 f"dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            # Keep the same tensor object, so that an optimizer built before registering the
            # parametrization still updates it.
            with torch.no_grad():
                _set_tensor_(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, original_i in enumerate(new):
                if not isinstance(original_i, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(original_i).__name__}.")
                if isinstance(original, Parameter):
                    original_i = Parameter(original_i, original.requires_grad)
                original_i.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", original_i)

        if not self.unsafe:
            # The parametrized tensor must be able to stand in for the original one.
            value = self()
            if not isinstance(value, Tensor):
                raise ValueError("A parametrization must return a tensor. Got "
                                 f"{type(value).__name__}.")
            if value.dtype != original_dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the "
                                 "tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized dtype: {original_dtype}\n"
                                 f"parametrized dtype: {value.dtype}")
            if value.shape != original_shape:
                raise ValueError("Registering a parametrization may not change the shape of the "
                                 "tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized shape: {original_shape}\n"
                                 f"parametrized shape: {value.shape}")

    def right_inverse(self, value: Tensor) -> None:
        """Store ``value`` as the parametrized tensor: run every parametrization's
        ``right_inverse`` from the last to the first and copy the result into ``original``
        (``original0``, ``original1``...), which keep their identity."""
        with torch.no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError("`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set_tensor_(self.original, value)
            else:
                if not isinstance(value, Sequence):
                    raise ValueError("'right_inverse' must return a sequence of tensors. Got "
                                     f"{type(value).__name__}.")
                if len(value) != self.ntensors:
                    raise ValueError("'right_inverse' must return a sequence of tensors of "
                                     f"length {self.ntensors}. Got a sequence of length "
                                     f"{len(value)}.")
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, Tensor):
                        # PyTorch's wording (it also accepts its opaque objects here)
                        raise ValueError("'right_inverse' must return a sequence of tensors or "
                                         f"reference-type opaques. Got element {i} of type "
                                         f"{type(tensor).__name__}.")
                    if original_i.dtype != tensor.dtype:
                        raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                         f"{tensor.dtype} while `original{i}` has dtype "
                                         f"{original_i.dtype}")
                    _set_tensor_(original_i, tensor)

    def forward(self) -> Tensor:
        """The parametrized tensor: the first parametrization applied to the original
        tensor(s), then each following one to the previous result."""
        modules = list(self._modules.values())
        if self.is_tensor:
            x = modules[0](self.original)
        else:
            originals = [getattr(self, f"original{i}") for i in range(self.ntensors)]
            x = modules[0](*originals)
        for module in modules[1:]:
            x = module(x)
        return x


def _raise_on_pickle(self: Module) -> Any:
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _deepcopy_parametrized(self: Module, memo: dict[int, Any]) -> Module:
    """``copy.deepcopy`` of a parametrized module: pickling is refused, so copy the instance
    dictionary (and slots) directly; the copy keeps the generated class."""
    existing = memo.get(id(self))
    if existing is not None:
        return existing
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):  # type: ignore[attr-defined]
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _inject_new_class(module: Module) -> None:
    """Give ``module`` a class of its own, ``Parametrized<Class>``, a subclass of its class,
    to hold the properties of its parametrized tensors."""
    cls = module.__class__
    namespace: dict[str, Any] = {"__getstate__": _raise_on_pickle,
                                 "__module__": __name__}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _deepcopy_parametrized
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    """Make ``module.<tensor_name>`` a property that evaluates the parametrization (cached
    inside :func:`cached`), and whose setter calls its ``right_inverse``."""

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Parametrize ``module.<tensor_name>`` (a parameter or buffer) by ``parametrization``.

    The first parametrization of a tensor moves it to
    ``module.parametrizations[tensor_name].original`` (after ``parametrization.right_inverse``,
    if it has one; ``original0``, ``original1``... if that returns a sequence); later ones are
    appended and applied to the previous result. Unless ``unsafe``, the parametrized tensor must
    keep the original's shape and dtype. Returns ``module``.

    :raises ValueError: ``module`` has no parameter, buffer or parametrized tensor
        ``tensor_name``, or (without ``unsafe``) the parametrization changes its shape or dtype.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            value = parametrization(current)
            if not isinstance(value, Tensor):
                raise ValueError("A parametrization must return a tensor. Got "
                                 f"{type(value).__name__}.")
            if value.dtype != current.dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the "
                                 "tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.dtype: {current.dtype}\n"
                                 f"parametrization(module.{tensor_name}).dtype: {value.dtype}")
            if value.shape != current.shape:
                raise ValueError("Registering a parametrization may not change the shape of the "
                                 "tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.shape: {current.shape}\n"
                                 f"parametrization(module.{tensor_name}).shape: {value.shape}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    inverse = parametrization.right_inverse(value)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(inverse, Tensor):
                        raise ValueError("parametrization.right_inverse must return a tensor. "
                                         f"Got: {type(inverse).__name__}")
                    if inverse.dtype != current.dtype:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have the "
                            f"same dtype as module.{tensor_name}, unless the `unsafe` flag is "
                            f"enabled.\nmodule.{tensor_name}.dtype: {current.dtype}\n"
                            f"returned dtype: {inverse.dtype}")
                    if inverse.shape != current.shape:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have the "
                            f"same shape as module.{tensor_name}, unless the `unsafe` flag is "
                            f"enabled.\nmodule.{tensor_name}.shape: {current.shape}\n"
                            f"returned shape: {inverse.shape}")
        parametrizations = module.parametrizations[tensor_name]
        parametrizations.append(parametrization)
        parametrizations.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization, or one on ``tensor_name``."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Remove the parametrizations of ``module.<tensor_name>``.

    With ``leave_parametrized`` the tensor keeps its current (parametrized) value, else it
    goes back to ``original``. When ``original`` is a single tensor, that same tensor object
    becomes the module's parameter or buffer again (its value set to the parametrized one);
    when the parametrization took several tensors, a new parameter is made. The module gets its
    class back once no parametrization is left. Returns ``module``.

    :raises ValueError: ``tensor_name`` is not parametrized, or ``leave_parametrized=False``
        for a tensor parametrized by several originals.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")

    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with torch.no_grad():
                value = getattr(module, tensor_name)
                _set_tensor_(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        # Not under no_grad: whether the result requires grad says whether any original did.
        value = getattr(module, tensor_name)
        if value.requires_grad:
            original = Parameter(value.detach(), value.requires_grad)
        else:
            original = value.detach()

    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)

    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The class of ``module`` as it was before it was parametrized (``Linear`` for a
    ``ParametrizedLinear``)."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register ``from_module``'s parametrizations (of ``tensor_name``, or all of them) on
    ``to_module`` and make it share their original tensors. A parametrized tensor that
    ``to_module`` lacks is created first. Returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        source = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
