"""Seeds: the default generator's state, ready for the Philox generator of DESIGN.md §8.

The counter-based generator and the random ops arrive with the tensor library; this module
owns the seed that ``torch.manual_seed`` sets and forwards it to every mounted device module.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

_MASK64 = (1 << 64) - 1


class Generator:
    """A random generator state: a 64-bit seed and a Philox counter offset."""

    def __init__(self, device: Any = "cpu") -> None:
        from ._device import device as _device

        self.device = _device(device)
        self._seed = 67280421310721
        self._offset = 0
        self._lock = threading.Lock()

    def manual_seed(self, seed: int) -> Generator:
        seed = _check_seed(seed)
        with self._lock:
            self._seed, self._offset = seed & _MASK64, 0
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """Seed from a non-deterministic source; returns the seed."""
        s = int.from_bytes(os.urandom(8), "little") ^ time.monotonic_ns()
        self.manual_seed(s & ((1 << 63) - 1))
        return self._seed

    def get_offset(self) -> int:
        return self._offset


def _check_seed(seed: Any) -> int:
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise TypeError(f"manual_seed expected an int, got {type(seed).__name__}") from None
    if not -(1 << 63) <= seed < (1 << 64):
        raise RuntimeError(f"Overflow when unpacking long long: seed {seed} is out of range "
                           "[-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff]")
    return seed


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the CPU generator and every mounted accelerator's generators."""
    default_generator.manual_seed(seed)
    from .backends import _registry

    for mod in list(_registry._device_modules.values()):
        fn = getattr(mod, "manual_seed_all", None)
        if fn is not None:
            fn(seed)
    return default_generator


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()
