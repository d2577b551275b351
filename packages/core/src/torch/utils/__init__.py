"""``torch.utils``: utilities shared by core and the other Plait distributions.

Like ``torch`` itself, this package extends its ``__path__`` with :func:`pkgutil.extend_path`,
so that ``plait-nn`` can add ``torch/utils/data`` from its own wheel (which holds no
``torch/utils/__init__.py``). ``torch.utils.data`` also works as an attribute, without an
explicit import, as it does in PyTorch.
"""

from types import ModuleType

__path__ = __import__("pkgutil").extend_path(__path__, __name__)

# attribute -> key in torch._subpackages.SUBPACKAGES
_LAZY_SUBPACKAGES = {"data": "utils.data", "safetensors": "utils.safetensors"}


def __getattr__(name: str) -> ModuleType:
    """Import ``torch.utils.data``/``safetensors`` (and core's ``checkpoint``) on first
    attribute access."""
    if name in ("checkpoint", "backend_registration", "dlpack", "hooks"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name == "generate_methods_for_privateuse1_backend":
        from .backend_registration import generate_methods_for_privateuse1_backend

        return generate_methods_for_privateuse1_backend
    if name in _LAZY_SUBPACKAGES:
        from torch._subpackages import import_subpackage

        return import_subpackage(_LAZY_SUBPACKAGES[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
