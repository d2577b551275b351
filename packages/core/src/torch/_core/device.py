"""``torch.device``: a device type string plus an optional index, parsed like PyTorch.

Device types are not a closed enum: any type an installed backend plugin declares is valid
(``torch.device("npu:0")``), next to the built-in ``cpu`` and ``meta`` and the well-known names
core keeps placeholders for. The list lives in :mod:`torch._core.registry`.
"""

from __future__ import annotations

from . import config as _config

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from typing import Any

_CACHE: dict[Any, device] = {}

# Device types whose devices carry no index, as in PyTorch (``torch.device("cpu")`` stays
# ``cpu``; ``cuda`` becomes ``cuda:0`` once a tensor is placed there).
INDEXLESS = frozenset(("cpu", "meta"))


class device:
    """A device: ``torch.device("cuda:1")``, ``torch.device("cuda", 1)``, ``torch.device(d)``.

    Usable as a context manager that makes it the default device of factory functions in this
    thread, taking precedence over :func:`torch.set_default_device`.
    """

    __slots__ = ("_index", "_type")

    def __new__(cls, type: Any, index: int | None = None) -> device:
        # Only exact str/int keys: ("cuda", 1.0) and ("cuda", True) compare equal to ("cuda", 1)
        # and must not find its cached device instead of raising.
        exact = index is None or index.__class__ is int
        key = (type, index) if type.__class__ is str and exact else None
        if key is not None:
            cached = _CACHE.get(key)
            if cached is not None:
                return cached
        dev_type, dev_index = _parse(type, index)
        self = object.__new__(cls)
        self._type = dev_type
        self._index = dev_index
        if key is not None and len(_CACHE) < 1024:
            _CACHE[key] = self
        return self

    @property
    def type(self) -> str:
        return self._type

    @property
    def index(self) -> int | None:
        return self._index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, device):
            return self._type == other._type and self._index == other._index
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._type, self._index))

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (device, (self._type, self._index))

    def __enter__(self) -> device:
        _config.push_device(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _config.pop_device()


device.__module__ = "torch"


def _parse(spec: Any, index: Any) -> tuple[str, int | None]:
    if isinstance(spec, device):
        if index is not None:
            raise TypeError("device(): an index cannot be given with a torch.device argument")
        return spec._type, spec._index
    if isinstance(spec, int) and not isinstance(spec, bool):
        # PyTorch reads a bare ordinal as an index on the accelerator.
        if index is not None:
            raise TypeError("device(): got an ordinal and an index")
        return "cuda", _check_index(spec)
    if not isinstance(spec, str):
        raise TypeError(f"device() received an invalid combination of arguments - got "
                        f"({type(spec).__name__}), but expected a str, int or torch.device")
    dev_type, sep, idx = spec.partition(":")
    if sep:
        if index is not None:
            raise RuntimeError(f"type (string) must not include an index because index was "
                               f"passed explicitly: {spec}")
        if not idx.isdigit() or (len(idx) > 1 and idx[0] == "0"):
            raise RuntimeError(f"Invalid device string: '{spec}'")
        index = int(idx)
    _check_type(dev_type, spec)
    if index is not None:
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"device(): index must be an int, not {type(index).__name__}")
        index = _check_index(index)
    return dev_type, index


def _check_index(index: int) -> int:
    if index < 0:
        raise RuntimeError(f"Device index must not be negative, got {index}")
    return index


def _check_type(dev_type: str, spec: str) -> None:
    from . import registry as _registry

    if dev_type in _registry.KNOWN_DEVICE_TYPES:
        return
    if _registry.is_declared(dev_type):
        return
    raise RuntimeError(_registry.unknown_device_message(dev_type, spec))


CPU = device("cpu")
