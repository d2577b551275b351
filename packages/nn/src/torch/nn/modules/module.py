"""``nn.Module``: the base class of every layer and model, with PyTorch's semantics.

A module keeps its parameters, buffers and submodules in three ordered dicts filled by
attribute assignment (``self.fc = nn.Linear(...)``), walks them for ``parameters()``,
``state_dict()``, ``to()`` and friends, and runs hooks around ``forward`` when called.
"""

from __future__ import annotations

import functools
import itertools
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch
from torch import Tensor
from torch.nn.parameter import Buffer, Parameter, is_lazy
from torch.utils.backend_registration import generate_methods_for_privateuse1_backend
from torch.utils.hooks import RemovableHandle

__all__ = ["Module", "register_module_forward_hook", "register_module_forward_pre_hook"]

class _HookDict(OrderedDict):
    """Hooks by handle id, in call order (``prepend`` moves one to the front)."""

    def __reduce__(self) -> Any:
        # Pickled as the OrderedDict PyTorch's modules hold, so that a saved module loads with
        # weights_only=True once its own classes are allowed (add_safe_globals).
        return (OrderedDict, (list(self.items()),))


# The state_dict key suffix of get_extra_state()'s value (PyTorch's private name, which
# transformers' loader compares keys with).
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"

# Global hooks (register_module_forward_*): run for every module, before the module's own.
_global_forward_pre_hooks: _HookDict = _HookDict()
_global_forward_hooks: _HookDict = _HookDict()


# Global registration hooks (register_module_*_registration_hook): ``hook(module, name, value)``
# runs when any module registers a parameter, buffer or child; a non-None return replaces it.
_global_parameter_registration_hooks: _HookDict = _HookDict()
_global_buffer_registration_hooks: _HookDict = _HookDict()
_global_module_registration_hooks: _HookDict = _HookDict()


def _registration_hook(table: _HookDict) -> Callable[[Callable[..., Any]], RemovableHandle]:
    def register(hook: Callable[..., Any]) -> RemovableHandle:
        handle = RemovableHandle(table)
        table[handle.id] = hook
        return handle

    return register


register_module_parameter_registration_hook = _registration_hook(
    _global_parameter_registration_hooks)
register_module_parameter_registration_hook.__doc__ = (
    "A hook ``hook(module, name, param)`` run whenever any module registers a parameter; a "
    "non-None return is registered instead.")
register_module_buffer_registration_hook = _registration_hook(_global_buffer_registration_hooks)
register_module_buffer_registration_hook.__doc__ = (
    "A hook ``hook(module, name, buffer)`` run whenever any module registers a buffer; a "
    "non-None return is registered instead.")
register_module_module_registration_hook = _registration_hook(_global_module_registration_hooks)
register_module_module_registration_hook.__doc__ = (
    "A hook ``hook(module, name, submodule)`` run whenever any module registers a child; a "
    "non-None return is registered instead.")


def _registered(table: _HookDict, module: Module, name: str, value: Any) -> Any:
    """``value`` after the global registration hooks of ``table`` (each may replace it)."""
    for hook in list(table.values()):
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A forward pre-hook common to all modules."""
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A forward hook common to all modules."""
    handle = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = hook
    return handle


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns."""

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s: str, spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * spaces + line for line in lines)


def _forward_unimplemented(self: Module, *input: Any) -> None:
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                              '"forward" function')


class Module:
    """Base class for all neural network modules; subclasses define ``forward``."""

    dump_patches = False
    _version: int = 1
    training: bool
    call_super_init: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and (args or kwargs):
            if kwargs:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                                f"argument '{next(iter(kwargs))}'")
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument "
                            f"but {len(args) + 1} were given")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_pre_hooks", _HookDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", {})
        setattr_(self, "_forward_hooks", _HookDict())
        setattr_(self, "_forward_hooks_with_kwargs", {})
        setattr_(self, "_forward_hooks_always_called", {})
        setattr_(self, "_backward_pre_hooks", _HookDict())
        setattr_(self, "_backward_hooks", _HookDict())
        setattr_(self, "_state_dict_hooks", _HookDict())
        setattr_(self, "_state_dict_pre_hooks", _HookDict())
        setattr_(self, "_load_state_dict_pre_hooks", _HookDict())
        setattr_(self, "_load_state_dict_post_hooks", _HookDict())
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward: Callable[..., Any] = _forward_unimplemented

    # -- registration -------------------------------------------------------------------

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer (state that is not a parameter: BatchNorm's running mean)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer name")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{torch.typename(tensor)}' object to buffer "
                            f"'{name}' (torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.__dict__.get("persistent", persistent)
            tensor = tensor.detach() if not tensor.requires_grad else _as_tensor(tensor)
        if _global_buffer_registration_hooks:
            tensor = _registered(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (``None`` registers the name with no value, as a missing bias)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter name")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{torch.typename(param)}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             "function of another Tensor, compute the value in the forward() "
                             "method.")
        else:
            if _global_parameter_registration_hooks:
                param = _registered(_global_parameter_registration_hooks, self, name, param)
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module (attribute ``name``)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{torch.typename(module)} is not a Module subclass")
        self._check_name(name, "module name")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f"module name can't contain \".\", got: {name}")
        if _global_module_registration_hooks:
            module = _registered(_global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias of :meth:`add_module`."""
        self.add_module(name, module)

    @staticmethod
    def _check_name(name: Any, what: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{what} should be a string. Got {torch.typename(name)}")
        if name == "":
            raise KeyError(f"{what} can't be empty string \"\"")
        if "." in name and what != "module name":
            raise KeyError(f"{what} can't contain \".\"")

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``""`` is the module itself)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(mod, name)

    # -- attributes ---------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__

        def remove_from(*tables: Any) -> None:
            for t in tables:
                if name in t:
                    if isinstance(t, dict):
                        del t[name]
                    else:
                        t.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{torch.typename(value)}' as parameter "
                                f"'{name}' (torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            if _global_module_registration_hooks:
                value = _registered(_global_module_registration_hooks, self, name, value)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{torch.typename(value)}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{torch.typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.__dict__.get("persistent", True)
            else:
                persistent = name not in self._non_persistent_buffers_set
            remove_from(d)
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        attrs = set(dir(type(self))) | set(self.__dict__)
        attrs |= set(self._parameters) | set(self._modules) | set(self._buffers)
        return sorted(a for a in attrs if not a[0].isdigit())

    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name, default in (("_forward_pre_hooks_with_kwargs", {}),
                              ("_forward_hooks_with_kwargs", {}),
                              ("_forward_hooks_always_called", {}),
                              ("_state_dict_pre_hooks", _HookDict()),
                              ("_load_state_dict_post_hooks", _HookDict()),
                              ("_backward_pre_hooks", _HookDict()),
                              ("_non_persistent_buffers_set", set())):
            if name not in self.__dict__:
                self.__dict__[name] = default

    # -- traversal ----------------------------------------------------------------------

    def _named_members(self, get_members: Callable[[Module], Any], prefix: str = "",
                       recurse: bool = True, remove_duplicate: bool = True) -> Iterator[Any]:
        memo: set[int] = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter (each shared one once), submodules' first-registered order."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and every submodule, depth first, with dotted names."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    # -- modes and grads ------------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        """Set training mode (Dropout, BatchNorm behave accordingly) recursively."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter (to ``None`` by default)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    # -- conversions ----------------------------------------------------------------------

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Replace every parameter, gradient and buffer ``t`` by ``fn(t)``, in place of the
        module's own (parameters stay the same objects: their data is swapped)."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            if is_lazy(param):
                _retype_placeholder(param, fn)
                continue
            with torch.no_grad():
                new = fn(param)
            _swap_data(param, new)
            if param.grad is not None:
                with torch.no_grad():
                    grad = fn(param.grad)
                param.grad = grad
        for key, buf in self._buffers.items():
            if buf is not None and is_lazy(buf):
                _retype_placeholder(buf, fn)
            elif buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first), then on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``,
        ``to(memory_format=...)``: floating parameters and buffers take the dtype; all of them
        move to the device; 4-d and 5-d ones take the memory format (as in PyTorch)."""
        device, dtype, non_blocking, memory_format = torch._C._nn._parse_to(*args, **kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")

        def convert(t: Tensor) -> Tensor:
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                t = t.to(dtype)
            if memory_format is not None and t.dim() in (4, 5):
                t = t.to(memory_format=memory_format)
            if device is None:
                return t
            if t.is_meta and torch.device(device).type != "meta":
                raise NotImplementedError(
                    "Cannot copy out of meta tensor; no data! Please use "
                    "torch.nn.Module.to_empty() instead of torch.nn.Module.to() when moving "
                    "module from meta to a different device.")
            return t.to(device, non_blocking=non_blocking)

        return self._apply(convert)

    def cpu(self) -> Module:
        return self._apply(lambda t: t.cpu())

    def cuda(self, device: Any = None) -> Module:
        return self._apply(lambda t: t.cuda(device))

    def xpu(self, device: Any = None) -> Module:
        return self._apply(lambda t: t.to("xpu" if device is None else torch.device("xpu",
                                                                                     device)))

    def mps(self, device: Any = None) -> Module:
        return self._apply(lambda t: t.to("mps"))

    def type(self, dst_type: Any) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> Module:
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        return self._apply(lambda t: torch.empty_like(t, device=device), recurse=recurse)

    def share_memory(self) -> Module:
        """Move every parameter, gradient and buffer into shared memory (in place), so that
        processes the module is sent to (``torch.multiprocessing``) update the same tensors."""
        return self._apply(lambda t: t.share_memory_())

    # -- state dicts ----------------------------------------------------------------------

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        extra = getattr(type(self), "get_extra_state", None)
        if extra is not None:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """Every parameter and persistent buffer by dotted name (detached unless
        ``keep_vars``), in an ``OrderedDict`` with a ``_metadata`` attribute, as PyTorch."""
        if args:  # the deprecated positional form (destination, prefix, keep_vars)
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        # the hooks get this module's own metadata entry (spectral_norm writes its version there)
        local_metadata: dict[str, Any] = {"version": self._version}
        meta = getattr(destination, "_metadata", None)
        if meta is not None:
            meta[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str,
                              local_metadata: dict[str, Any], strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        """Copy this module's own entries from ``state_dict`` (override to convert old
        formats, as BatchNorm does for ``num_batches_tracked``)."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local = {**self._parameters, **persistent}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local.items():
            key = prefix + name
            if param is None:
                continue
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f"torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(value)}")
                continue
            if not is_lazy(param) and value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            try:
                if is_lazy(param):
                    with torch.no_grad():
                        param.materialize(value.shape, value.device, value.dtype)
                        param.copy_(value)
                elif assign:
                    if isinstance(param, Parameter):
                        new = value if isinstance(value, Parameter) else \
                            Parameter(value, requires_grad=param.requires_grad)
                        self._parameters[name] = new
                    else:
                        self._buffers[name] = value
                else:
                    with torch.no_grad():
                        param.copy_(value)
            except Exception as exc:
                error_msgs.append(f'While copying the parameter named "{key}", whose '
                                  f"dimensions in the model are {param.size()} and whose "
                                  f"dimensions in the checkpoint are {value.size()}, an "
                                  f"exception occurred : {exc.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if getattr(type(self), "set_extra_state", None) is not None:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                rest = key[len(prefix):]
                head = rest.split(".", 1)[0]
                if head not in self._modules and rest not in local:
                    unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` into this module and its
        descendants. ``strict``: the keys must match exactly (else ``RuntimeError``);
        ``assign``: take the checkpoint's tensors instead of copying into the module's."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def load(module: Module, prefix: str = "") -> None:
            local = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local["assign_to_params_buffers"] = assign
            module._load_from_state_dict(state_dict, prefix, local, True, missing, unexpected,
                                         errors)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")
            incompatible = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, incompatible)

        load(self)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t" +
                               "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = functools.partial(hook, self)
        return handle

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # PyTorch's older, private spellings, which libraries still call (gpytorch, peft)
    def _register_load_state_dict_pre_hook(self, hook: Callable[..., Any],
                                           with_module: bool = False) -> RemovableHandle:
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` before this module loads its entries; the module comes first with
        ``with_module``."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = (
            functools.partial(hook, self) if with_module else hook)
        return handle

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """:meth:`register_state_dict_post_hook` by its older name."""
        return self.register_state_dict_post_hook(hook)

    # -- hooks and calling ------------------------------------------------------------------

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (or ``hook(module, args, kwargs)`` with ``with_kwargs``)
        before ``forward``; it may return new args (and kwargs)."""
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
        ``with_kwargs``) after ``forward``; it may return a new output. ``always_call``: run
        even when ``forward`` raised."""
        handle = RemovableHandle(self._forward_hooks, extra_dict=(
            self._forward_hooks_with_kwargs, self._forward_hooks_always_called))
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any],
                                        prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` before the module's input gradients are computed;
        it may return a new grad_output."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook: Callable[..., Any],
                                    prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` once the gradients of the module's
        inputs are computed; it may return a new grad_input."""
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Deprecated in PyTorch; served as :meth:`register_full_backward_hook`."""
        return self.register_full_backward_hook(hook)

    # set by compile(): the module's calls go through torch.compile (one class-attribute read
    # on the eager path while it is None)
    _compiled_call_impl: Callable[..., Any] | None = None

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's calls in place with ``torch.compile(*args, **kwargs)``: the
        module keeps its type, and each call (hooks included) runs under graph capture."""
        import torch

        compiled = torch.compile(self._call_impl, *args, **kwargs)
        object.__setattr__(self, "_compiled_call_impl", compiled)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        compiled = self._compiled_call_impl
        if compiled is not None:
            import torch.compiler

            if not torch.compiler.is_compiling():
                return compiled(*args, **kwargs)
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_forward_pre_hooks
                or _global_forward_hooks):
            return self.forward(*args, **kwargs)
        for hook_id, hook in itertools.chain(_global_forward_pre_hooks.items(),
                                             self._forward_pre_hooks.items()):
            if self._forward_pre_hooks_with_kwargs.get(hook_id):
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward = None
        if self._backward_hooks or self._backward_pre_hooks:
            from torch.nn.modules._backward_hooks import BackwardHook

            backward = BackwardHook(self, self._backward_hooks, self._backward_pre_hooks)
            args = backward.setup_input_hook(args)
        try:
            result = self.forward(*args, **kwargs)
        except Exception:
            for hook_id, hook in self._forward_hooks.items():
                if self._forward_hooks_always_called.get(hook_id):
                    try:
                        if self._forward_hooks_with_kwargs.get(hook_id):
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception:
                        pass
            raise
        for hook_id, hook in itertools.chain(_global_forward_hooks.items(),
                                             self._forward_hooks.items()):
            if self._forward_hooks_with_kwargs.get(hook_id):
                new = hook(self, args, kwargs, result)
            else:
                new = hook(self, args, result)
            if new is not None:
                result = new
        if backward is not None:
            result = backward.setup_output_hook(result)
        return result

    __call__: Callable[..., Any] = _call_impl

    # -- printing -------------------------------------------------------------------------

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module's own settings, printed inside its ``repr`` (override it)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for key, module in self._modules.items():
            lines.append("(" + key + "): " + _addindent(repr(module), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


# Module.<device type>() for every backend plugin's device (npu(), toy()...), as PyTorch's
# generate_methods_for_privateuse1_backend makes them; cpu/cuda/xpu/mps are defined above.
generate_methods_for_privateuse1_backend(for_tensor=False, for_module=True)


def _as_tensor(t: Tensor) -> Tensor:
    """A plain tensor over the memory of ``t`` (a Buffer marker), keeping requires_grad."""
    out = t.detach()
    out.requires_grad = t.requires_grad
    return out


def _retype_placeholder(placeholder: Tensor, fn: Callable[[Tensor], Tensor]) -> None:
    """A lazy placeholder holds no data but takes ``fn``'s dtype and device, so that
    ``LazyLinear(3).double()`` materializes float64 weights (as in PyTorch)."""
    with torch.no_grad():
        new = fn(torch.empty(0, dtype=placeholder._dtype, device=placeholder._device))
    placeholder._dtype = new._dtype
    placeholder._device = new._device


def _swap_data(param: Tensor, new: Tensor) -> None:
    """Make ``param`` hold ``new``'s memory, shape and dtype (``Module.to`` keeps parameters
    the same objects, as optimizers refer to them)."""
    if new is param:
        return
    param._storage = new._storage
    param._shape = new._shape
    param._stride = new._stride
    param._offset = new._offset
    param._dtype = new._dtype
    param._device = new._device
    param._vc = new._vc
    param._interned_layout = None
