"""``torch._dynamo.config``: the settings programs and libraries write before compiling.

Libraries set them at import or around a call (``config.cache_size_limit = 64``,
``config.suppress_errors = True``, ``with config.patch(verbose=True):``). Graph capture reads
``recompile_limit`` (alias ``cache_size_limit``), ``automatic_dynamic_shapes``, ``disable``,
``allow_rnn``, ``suppress_errors``, ``error_on_recompile``, ``capture_scalar_outputs``,
``capture_dynamic_output_shape_ops``, ``assume_static_by_default`` and ``specialize_int``;
every other name PyTorch programs
commonly touch is here with PyTorch 2.13's default, and unknown names raise ``AttributeError``
as PyTorch's config module does, so a misspelt setting is not silently accepted.
"""

from __future__ import annotations

import contextlib
import copy
import sys
import types
from collections.abc import Iterator
from typing import Any

# name -> PyTorch 2.13's default
_DEFAULTS: dict[str, Any] = {
    "verbose": False,
    "recompile_limit": 8,
    "accumulated_recompile_limit": 256,
    "suppress_errors": False,
    "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False,
    "automatic_dynamic_shapes": True,
    "assume_static_by_default": True,
    "optimize_ddp": True,
    "inline_inbuilt_nn_modules": True,
    "dynamic_shapes": True,
    "force_parameter_static_shapes": True,
    "specialize_int": False,
    "specialize_float": False,
    "guard_nn_modules": True,
    "error_on_recompile": False,
    "allow_unspec_int_on_nn_module": False,
    "skip_nnmodule_hook_guards": True,
    "replay_record_enabled": False,
    "raise_on_ctx_manager_usage": True,
    "allow_rnn": False,
    "compiled_autograd": False,
    "disable": False,
    "log_compilation_metrics": True,
    "prefer_deferred_runtime_asserts_over_guards": False,
    "skip_fsdp_guards": True,
    "do_not_emit_runtime_asserts": False,
    "traceable_tensor_subclasses": set(),
    "reorderable_logging_functions": set(),
    "enable_cpp_guard_manager": True,
    # Plait's own: whether captured graphs go through AOT autograd (aot_eager, inductor):
    # traced on fake tensors, functionalized, partitioned, the backward compiled too. Off,
    # graphs that need gradients run under eager autograd (a switch for diagnosis).
    "use_aot_autograd": True,
    # Plait's own: whether a compiled function whose captured call was proven replayable
    # (docs/compile.md, "Replay") runs its graph without its Python on later matching calls
    "replay": True,
}

# older names PyTorch keeps as aliases of the current ones: both read and write the same value
_ALIASES: dict[str, str] = {
    "cache_size_limit": "recompile_limit",
    "accumulated_cache_size_limit": "accumulated_recompile_limit",
}

_values: dict[str, Any] = copy.deepcopy(_DEFAULTS)


def _setting(name: str) -> str:
    """The stored name for ``name`` (an alias resolved), or AttributeError as PyTorch raises."""
    key = _ALIASES.get(name, name)
    if key not in _values:
        raise AttributeError(f"{__name__}.{name} does not exist")
    return key


def get_config_copy() -> dict[str, Any]:
    """A copy of every setting by name (aliases excluded), as PyTorch's config module returns."""
    return copy.deepcopy(_values)


def load_config(config: dict[str, Any]) -> None:
    """Set every setting named in ``config`` (as returned by :func:`get_config_copy`)."""
    for name, value in config.items():
        _values[_setting(name)] = value


@contextlib.contextmanager
def _patched(changes: dict[str, Any]) -> Iterator[None]:
    keys = {_setting(name): value for name, value in changes.items()}
    saved = {key: _values[key] for key in keys}
    _values.update(keys)
    try:
        yield
    finally:
        _values.update(saved)


def patch(arg1: str | dict[str, Any] | None = None, arg2: Any = None,
          **kwargs: Any) -> contextlib.AbstractContextManager[None]:
    """Change settings for a ``with`` block or a decorated function, then restore them.

    Called as ``patch("name", value)``, ``patch({"name": value})`` or ``patch(name=value)``.
    """
    changes: dict[str, Any] = {}
    if isinstance(arg1, str):
        changes[arg1] = arg2
    elif isinstance(arg1, dict):
        changes.update(arg1)
    elif arg1 is not None:
        raise TypeError(f"patch() takes a setting name or a dict, not {type(arg1).__name__}")
    changes.update(kwargs)
    for name in changes:
        _setting(name)  # an unknown name fails at the call, before any block runs
    return _patched(changes)


class _ConfigModule(types.ModuleType):
    """This module, whose settings read and write the table above (aliases included)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _values[_setting(name)]

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _ALIASES or name in _values:
            _values[_setting(name)] = value
        elif name.startswith("_") or name in self.__dict__:
            super().__setattr__(name, value)
        else:
            _setting(name)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *_values, *_ALIASES})


sys.modules[__name__].__class__ = _ConfigModule
