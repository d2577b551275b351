"""``torch.random``: the default generator's seed and state, and :func:`fork_rng`."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from ._core.generators import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state"]

_warned_many_devices = False


def _device_module(device_type: str | None) -> Any:
    """The module whose RNG states are forked alongside the CPU's (the accelerator's by
    default), or None when there is none to fork."""
    import torch

    if device_type is None:
        found = torch.accelerator.current_accelerator(check_available=True)
        device_type = None if found is None else found.type
    if device_type is None or device_type == "meta":
        return None
    mod = torch.get_device_module(device_type)
    usable = mod.is_available() and hasattr(mod, "get_rng_state")
    return mod if usable else None


@contextlib.contextmanager
def fork_rng(devices: Sequence[Any] | None = None, enabled: bool = True,
             _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str | None = None) -> Iterator[None]:
    """Run a block whose random numbers do not disturb the caller's: the CPU generator's state
    (and those of ``devices`` of ``device_type``, all of its devices by default) is restored
    when the block ends."""
    global _warned_many_devices
    if not enabled:
        yield
        return
    mod = _device_module(device_type)
    if mod is not None and devices is None:
        count = int(mod.device_count())
        if count > 1 and not _warned_many_devices:
            warnings.warn(f"{_caller} reset the RNG of all {count} devices, which may be slow; "
                          f"pass {_devices_kw}= to name the devices whose RNG you use",
                          UserWarning, stacklevel=3)
            _warned_many_devices = True
        devices = list(range(count))
    cpu_state = get_rng_state()
    device_states = [(d, mod.get_rng_state(d)) for d in (devices or ())] if mod else []
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in device_states:
            mod.set_rng_state(state, d)
