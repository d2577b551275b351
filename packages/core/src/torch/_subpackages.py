"""Subpackages of ``torch`` that other distributions provide (docs/architecture.md).

``torch`` extends its ``__path__`` with :func:`extend_path` (what :func:`pkgutil.extend_path`
does, without importing pkgutil and the typing it brings), so ``plait-nn`` and
``plait-compile`` add ``torch/nn``, ``torch/optim``, ``torch/utils/data``, ``torch/fx`` and
``torch/_dynamo`` from their own wheels. When one of them is not installed, a plain
``import torch.nn`` would fail with "No module named 'torch.nn'", which does not say what to do.

:func:`install_missing_distribution_finder` appends a finder to the *end* of
:data:`sys.meta_path`. The import system asks it only after every ordinary finder has failed to
find one of the subpackages in :data:`SUBPACKAGES`, and it then raises a
:class:`ModuleNotFoundError` that names the distribution to install. It never finds a module
itself. Consequently ``importlib.util.find_spec("torch.nn")`` raises instead of returning
``None`` when plait-nn is missing, just as it does for a child of a missing parent package.

:func:`import_subpackage` is what the facade's lazy module ``__getattr__`` calls, so that
``import torch; torch.nn.Module`` works without an explicit ``import torch.nn``.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from types import MappingProxyType

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

__all__ = [
    "SUBPACKAGES",
    "MissingDistributionFinder",
    "extend_path",
    "import_subpackage",
    "install_missing_distribution_finder",
]

# subpackage (relative to ``torch``) -> the distribution that provides it
SUBPACKAGES: Mapping[str, str] = MappingProxyType(
    {
        "nn": "plait-nn",
        "optim": "plait-nn",
        "utils.data": "plait-nn",
        "utils.safetensors": "plait-nn",
        "func": "plait-nn",
        "ao": "plait-nn",
        "quantization": "plait-nn",
        "fx": "plait-compile",
        "_dynamo": "plait-compile",
        "_inductor": "plait-compile",
        "_logging": "plait-compile",
        "_higher_order_ops": "plait-compile",
        "export": "plait-compile",
    }
)

_install_lock = threading.Lock()


def _importer(entry: str) -> object | None:
    """The path-entry finder of one ``sys.path`` entry, made and cached as the import system
    does (:data:`sys.path_hooks`, :data:`sys.path_importer_cache`)."""
    try:
        return sys.path_importer_cache[entry]
    except KeyError:
        pass
    for hook in sys.path_hooks:
        try:
            finder = hook(entry)
        except ImportError:
            continue
        sys.path_importer_cache.setdefault(entry, finder)
        return finder
    return None


def extend_path(path: list[str], name: str) -> list[str]:
    """``path`` (package ``name``'s ``__path__``) plus the portions of ``name`` in every other
    entry of its search path (``sys.path`` for a top-level package, the parent's ``__path__``
    for a subpackage): directories with or without ``__init__.py``, as the entries' finders see
    them (:func:`pkgutil.extend_path`'s rule, ``.pkg`` files aside)."""
    parent, _, final = name.rpartition(".")
    search = sys.modules[parent].__path__ if parent else sys.path
    path = list(path)
    for entry in search:
        if not isinstance(entry, str) or not os.path.isdir(entry or "."):
            continue
        finder = _importer(entry)
        find_spec = getattr(finder, "find_spec", None)
        spec = find_spec(final) if find_spec is not None else None
        for portion in (spec.submodule_search_locations or []) if spec is not None else []:
            if portion not in path:
                path.append(portion)
    return path


def _owner(fullname: str) -> tuple[str, str] | None:
    """The ``(subpackage, distribution)`` that ``fullname`` belongs to, or ``None``."""
    if not fullname.startswith("torch."):
        return None
    relative = fullname[len("torch.") :]
    for subpackage, distribution in SUBPACKAGES.items():
        if relative == subpackage or relative.startswith(subpackage + "."):
            return subpackage, distribution
    return None


def _missing_message(subpackage: str, distribution: str) -> str:
    """Explain why ``torch.<subpackage>`` is missing and what to do about it."""
    module = f"torch.{subpackage}"
    # importlib.metadata costs ~18 ms to import: pay for it only on this error path.
    from importlib import metadata

    try:
        version = metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return (
            f"{module} is provided by the {distribution} distribution, which is not installed: "
            f"pip install {distribution}"
        )
    torch_path = list(getattr(sys.modules.get("torch"), "__path__", []))
    return (
        f"{module} is provided by the {distribution} distribution; {distribution} {version} is "
        f"installed but {module} was not found on torch.__path__ = {torch_path}. The installs of "
        f"plait-core and {distribution} do not line up: pip install --force-reinstall "
        f"plait-core {distribution}"
    )


class MissingDistributionFinder:
    """A last-resort :data:`sys.meta_path` finder for subpackages provided by other distributions.

    It finds nothing. Asked for ``torch.<subpackage>`` from :data:`SUBPACKAGES` after the
    ordinary finders failed, it raises a :class:`ModuleNotFoundError` that names the
    distribution to install. A missing *submodule* of a subpackage that did import (say
    ``torch.nn.nonexistent``) is an ordinary missing module, and is left to the import system.
    """

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        """Raise :class:`ModuleNotFoundError` for a subpackage whose distribution is missing.

        :param fullname: the module's dotted name.
        :param path: the parent package's ``__path__``.
        :param target: the module object being reloaded, if any.
        :returns: ``None`` for every module it does not speak for, or a spec that a finder
            placed after this one in :data:`sys.meta_path` found.
        :raises ModuleNotFoundError: ``torch.<subpackage>`` (or a module inside it) cannot be
            found and the subpackage itself is not imported.
        """
        owner = _owner(fullname)
        if owner is None:
            return None
        subpackage, distribution = owner
        if f"torch.{subpackage}" in sys.modules:
            return None  # the subpackage exists; only one of its submodules is missing
        spec = self._find_with_later_finders(fullname, path, target)
        if spec is not None:
            return spec
        raise ModuleNotFoundError(_missing_message(subpackage, distribution), name=fullname)

    def _find_with_later_finders(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None,
    ) -> ModuleSpec | None:
        """Give finders appended after this one their turn before raising.

        This finder is appended last, but something may append another finder later (an
        editable-install hook, for instance); raising here must not hide what it would find.
        """
        try:
            later = sys.meta_path[sys.meta_path.index(self) + 1 :]
        except ValueError:
            return None
        for finder in later:
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is not None:
                spec = find_spec(fullname, path, target)
                if spec is not None:
                    return spec
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} for {sorted(SUBPACKAGES)}>"


_FINDER = MissingDistributionFinder()


def install_missing_distribution_finder() -> MissingDistributionFinder:
    """Append the finder to the end of :data:`sys.meta_path`, once.

    Idempotent and thread-safe: a second call returns the finder that is already installed.

    :returns: the installed finder.
    """
    with _install_lock:
        if _FINDER not in sys.meta_path:
            sys.meta_path.append(_FINDER)
    return _FINDER


def import_subpackage(name: str) -> ModuleType:
    """Import ``torch.<name>`` for a subpackage that another distribution provides.

    The facade's module ``__getattr__`` calls it, so ``torch.nn`` works as an attribute
    without ``import torch.nn``. Importing is idempotent and thread-safe (the import lock).

    :param name: a key of :data:`SUBPACKAGES`, such as ``"nn"`` or ``"utils.data"``.
    :returns: the imported module.
    :raises ValueError: ``name`` is not a key of :data:`SUBPACKAGES`.
    :raises ModuleNotFoundError: the distribution that provides it is not installed; the
        message names it.
    """
    if name not in SUBPACKAGES:
        known = ", ".join(sorted(SUBPACKAGES))
        raise ValueError(f"torch.{name} is not a subpackage of another distribution ({known})")
    return importlib.import_module(f"torch.{name}")
