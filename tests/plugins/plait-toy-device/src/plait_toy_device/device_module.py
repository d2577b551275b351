"""``torch.toy``: two pretend devices, built from ``torch.backends.devicekit``.

Core serves ``torch.toy.synchronize`` (through the plugin's ``torch_backend_synchronize``
hook) and the random functions (its own generators); this module answers the device
questions only.
"""

from __future__ import annotations

from typing import Any

from torch.backends import devicekit

DEVICE_TYPE = "toy"
COUNT = 2


def is_available() -> bool:
    return True


def device_count() -> int:
    return COUNT


def synchronize(device: Any = None) -> None:
    """Wait for the device's work (toy kernels are synchronous: only recorded)."""
    from . import plugin

    plugin.runtime().synchronize(_kit.devices.checked(device))


_kit = devicekit.DeviceKit(DEVICE_TYPE, device_count=COUNT, synchronize=synchronize)

current_device = _kit.devices.current
set_device = _kit.devices.set_current
device, Stream, Event = _kit.device, _kit.Stream, _kit.Event
