"""``torch.utils``: utilities shared by core and the other Plait distributions.

Like ``torch`` itself, this package extends its ``__path__`` (``torch._subpackages.extend_path``),
so that ``plait-nn`` can add ``torch/utils/data`` from its own wheel (which holds no
``torch/utils/__init__.py``). ``torch.utils.data`` also works as an attribute, without an
explicit import, as it does in PyTorch.
"""

from types import ModuleType

from torch._subpackages import extend_path

__path__ = extend_path(__path__, __name__)

# attribute -> key in torch._subpackages.SUBPACKAGES
_LAZY_SUBPACKAGES = {"data": "utils.data", "safetensors": "utils.safetensors"}


def __getattr__(name: str) -> ModuleType:
    """Import a submodule (``torch.utils.checkpoint``, ``torch.utils._pytree``, the
    ``torch.utils.data`` of plait-nn...) on first attribute access, as PyTorch's eager imports
    make them attributes."""
    if name == "generate_methods_for_privateuse1_backend":
        from .backend_registration import generate_methods_for_privateuse1_backend

        return generate_methods_for_privateuse1_backend
    if name in _LAZY_SUBPACKAGES:
        from torch._subpackages import import_subpackage

        return import_subpackage(_LAZY_SUBPACKAGES[name])
    if not name.startswith("__"):
        import importlib
        import importlib.util

        if importlib.util.find_spec(f"{__name__}.{name}") is not None:
            return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
