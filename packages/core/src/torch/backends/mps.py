"""``torch.backends.mps``: whether the Metal backend is built and usable."""

from __future__ import annotations

from .._core import registry as _registry


def is_built() -> bool:
    """Whether a backend plugin for ``mps`` is installed and loaded."""
    plugin = _registry.installed().get("mps")
    return plugin is not None and plugin.status == "loaded"


def is_available() -> bool:
    mod = _registry.device_module("mps")
    return bool(mod is not None and mod.is_available())
