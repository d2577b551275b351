"""``torch.optim.Optimizer``: parameter groups, per-parameter state, ``state_dict`` in PyTorch's
layout (integer parameter ids; ``param_groups`` with ``params`` lists) and step hooks."""

from __future__ import annotations

import copy
import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor
from torch.utils.hooks import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_post_hook",
           "register_optimizer_step_pre_hook", "required"]


class _RequiredParameter:
    """Singleton marking a default that every parameter group must provide (e.g. SGD's lr in
    old PyTorch versions)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

StepHook = Callable[..., Any]
_global_pre_hooks: OrderedDict[int, StepHook] = OrderedDict()
_global_post_hooks: OrderedDict[int, StepHook] = OrderedDict()
_NO_HOOKS: dict[int, StepHook] = {}


def _register(hooks: OrderedDict[int, StepHook], hook: StepHook) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_optimizer_step_pre_hook(hook: StepHook) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``; it may return
    ``(new_args, new_kwargs)``."""
    return _register(_global_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: StepHook) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    return _register(_global_post_hooks, hook)


def _with_step_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a subclass's ``step`` so that the global and per-optimizer hooks run around it."""

    @functools.wraps(step)
    def wrapper(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        # (a subclass that wraps another optimizer may skip Optimizer.__init__, as
        # accelerate's AcceleratedOptimizer does: it has no hooks of its own)
        for hook in itertools.chain(_global_pre_hooks.values(),
                                    getattr(self, "_optimizer_step_pre_hooks", _NO_HOOKS).values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{hook} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
                args, kwargs = result
        out = step(self, *args, **kwargs)
        for hook in itertools.chain(getattr(self, "_optimizer_step_post_hooks", _NO_HOOKS).values(),
                                    _global_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    wrapper._plait_step_hooks = True  # type: ignore[attr-defined]
    return wrapper


class Optimizer:
    """Base class of all optimizers.

    :param params: an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter
        groups, each with a ``params`` entry and optional per-group options).
    :param defaults: the options a group takes when it does not set them.
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict[int, StepHook] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, StepHook] = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {torch.typename(params)}")
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_plait_step_hooks", False):
            cls.step = _with_step_hooks(step)  # type: ignore[method-assign]

    # ------------------------------------------------------------------ groups

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (a dict with ``params`` and optional options; missing
        options take the optimizer's defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        names = []
        tensors = []
        for p in params:
            if isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str):
                names.append(p[0])
                p = p[1]
            tensors.append(p)
        if names and len(names) != len(tensors):
            raise ValueError("all optimizer params should be with/without names. Some param "
                             "names are missing")
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + torch.typename(p))
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group)
        group["params"] = tensors
        if names:
            group["param_names"] = names
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group.setdefault(name, default)
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          UserWarning, stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    # ------------------------------------------------------------------ gradients

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter: drop them (``set_to_none=True``, the
        default) or zero them in place."""
        for group in self.param_groups:
            for p in group["params"]:
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

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters once (subclasses implement it)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ hooks

    def register_step_pre_hook(self, hook: StepHook) -> RemovableHandle:
        """Run ``hook(self, args, kwargs)`` before this optimizer's ``step``; it may return
        ``(new_args, new_kwargs)``."""
        return _register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: StepHook) -> RemovableHandle:
        """Run ``hook(self, args, kwargs)`` after this optimizer's ``step``."""
        return _register(self._optimizer_step_post_hooks, hook)

    # ------------------------------------------------------------------ state dict

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {id: per-parameter state}, "param_groups": [group options with "params":
        [ids]]}``; ids number the parameters in group order, as PyTorch does. The state's
        tensors are references, not copies."""
        ids: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                ids.setdefault(id(p), len(ids))
            packed["params"] = [ids[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {ids[id(p)]: s for p, s in self.state.items() if id(p) in ids}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict()`` (of this optimizer or one built over the same parameter
        layout); state tensors are cast to their parameter's dtype and device (``step`` keeps
        its own)."""
        state_dict = dict(state_dict)
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(self.param_groups, saved_groups):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        id_map = {saved_id: p for group, saved in zip(self.param_groups, saved_groups)
                  for saved_id, p in zip(saved["params"], group["params"])}
        state: defaultdict[Tensor, Any] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = {k: self._cast_state(param, v, k) for k, v in value.items()}
            else:
                state[key] = copy.deepcopy(value)
        new_groups = []
        for group, saved in zip(self.param_groups, saved_groups):
            new_group = {k: v for k, v in saved.items() if k != "params"}
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                new_group["param_names"] = group["param_names"]
            new_groups.append(new_group)
        self.state = state
        self.param_groups = new_groups

    @staticmethod
    def _cast_state(param: Tensor, value: Any, key: str) -> Any:
        if isinstance(value, Tensor):
            if key == "step":
                return value.clone()  # the step count keeps its (float32) dtype
            if param.dtype.is_floating_point or param.dtype.is_complex:
                return value.to(dtype=param.dtype, device=param.device)
            return value.to(device=param.device)
        if isinstance(value, dict):
            return {k: Optimizer._cast_state(param, v, k) for k, v in value.items()}
        return copy.deepcopy(value)

    # ------------------------------------------------------------------ misc

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())

    def __repr__(self) -> str:
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


def _scalar(value: Any) -> float:
    """A hyperparameter as a Python float (PyTorch accepts 0-d tensors for lr and betas)."""
    return float(value.item()) if isinstance(value, Tensor) else float(value)
