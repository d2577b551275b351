""":class:`BackendInfo`, what a backend plugin declares in phase 1.

Its own module, importing nothing, because every plugin builds one while ``import torch``
runs: reaching it through :mod:`torch.backends.hookspecs` would load pluggy and the hook
specifications on every import. Plugins write ``from torch.backends import BackendInfo``.
"""

from __future__ import annotations

_FIELDS = ("device_type", "distribution", "version", "dispatch_key", "capabilities",
           "amp_dtypes")


class BackendInfo:
    """What a backend declares about itself in phase 1 (no native code loaded). Immutable and
    compared by value.

    :param device_type: the device type string (``torch.device("<device_type>:0")``).
    :param distribution: the distribution that ships the backend, named in error messages.
    :param version: the backend's version string.
    :param dispatch_key: the dispatcher key its kernels register under; defaults to the device
        type in upper case (``npu`` -> ``NPU``).
    :param capabilities: free-form capability flags that subsystems query instead of comparing
        device-type strings. Core reads ``"host_accessible"`` (device memory can be viewed by
        numpy through the buffer protocol, so no copies are needed to reach the host),
        ``"float64"`` (double precision supported) and ``"amp"`` (autocast supported).
    :param amp_dtypes: dtype names autocast may use on this device, its default first
        (``("float16", "bfloat16")``).
    """

    __slots__ = _FIELDS
    device_type: str
    distribution: str
    version: str
    dispatch_key: str
    capabilities: frozenset[str]
    amp_dtypes: tuple[str, ...]

    def __init__(self, device_type: str, distribution: str, version: str = "0",
                 dispatch_key: str = "", capabilities: frozenset[str] | set[str] = frozenset(),
                 amp_dtypes: tuple[str, ...] = ()) -> None:
        values = (device_type, distribution, version, dispatch_key or device_type.upper(),
                  frozenset(capabilities), tuple(amp_dtypes))
        for name, value in zip(_FIELDS, values):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field '{name}': BackendInfo is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field '{name}': BackendInfo is immutable")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in _FIELDS)

    def __eq__(self, other: object) -> bool:
        if type(other) is not BackendInfo:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS)
        return f"BackendInfo({fields})"
