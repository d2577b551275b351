"""Random generators: ``torch.Generator``, the default generators of every device, seeds.

A generator is two numbers: a 64-bit ``seed`` (the Philox key) and a 64-bit ``offset`` (the
next unused Philox counter). Every random op reserves the counters it needs with
:meth:`Generator._reserve` and hands ``(seed, offset)`` to the ``random_bits_`` primitive, so
the same seed gives the same streams on every device that implements the primitive, and a
generator's whole state fits in 16 bytes (``get_state``/``set_state``).

Fork safety: the state is plain Python integers, copied into a forked child like everything
else (a child draws the same numbers as its parent until reseeded, as in PyTorch, which is why
data loaders seed their workers). The one lock the generators share is recreated in the child,
so a fork taken while another thread held it cannot deadlock the child.

numpy is not imported here: ``import torch`` loads this module, and tensors are only made on
first use of ``get_state``.
"""

from __future__ import annotations

import operator
import os
import threading
import time

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from typing import Any

_MASK64 = (1 << 64) - 1
_DEFAULT_SEED = 67280421310721  # PyTorch's default_generator.initial_seed()
STATE_SIZE = 16  # bytes: seed, then offset, each unsigned 64-bit little-endian

_lock = threading.Lock()


def _reinit_lock_after_fork() -> None:
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reinit_lock_after_fork)


class Generator:
    """A Philox4x32-10 random generator: a 64-bit seed and a counter offset.

    :param device: the device whose random ops it drives (``"cpu"`` by default).
    """

    def __init__(self, device: Any = "cpu") -> None:
        from .device import device as _device

        dev = device if isinstance(device, _device) else _device(device)
        if dev.type == "meta":
            raise RuntimeError("META device type not an accelerator.")
        if dev.type != "cpu":
            from .storage import _normalise

            dev = _normalise(dev)  # raises the backend's error for an unknown device
        self.device = dev
        self._seed = _DEFAULT_SEED
        self._offset = 0

    def __repr__(self) -> str:
        return f"<torch.Generator object at {id(self):#x} (device={self.device})>"

    def manual_seed(self, seed: int) -> Generator:
        """Set the seed (any int in ``[-2**63, 2**64)``; negative seeds wrap to unsigned) and
        restart the stream. Returns the generator."""
        seed = _check_seed(seed)
        with _lock:
            self._seed, self._offset = seed & _MASK64, 0
        return self

    def initial_seed(self) -> int:
        """The seed the stream started from."""
        return self._seed

    def seed(self) -> int:
        """Seed from a non-deterministic source; returns the new seed."""
        s = (int.from_bytes(os.urandom(8), "little") ^ time.monotonic_ns()) & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def get_offset(self) -> int:
        """The next unused Philox counter."""
        return self._offset

    def set_offset(self, offset: int) -> Generator:
        """Move the stream to counter ``offset``. Returns the generator."""
        offset = operator.index(offset)
        if not 0 <= offset <= _MASK64:
            raise RuntimeError(f"offset must be in [0, 2**64), got {offset}")
        with _lock:
            self._offset = offset
        return self

    def get_state(self) -> Any:
        """The state as a 16-byte ``uint8`` CPU tensor: seed then offset, little-endian."""
        from . import upcalls
        from .dtype import uint8

        with _lock:
            raw = self._seed.to_bytes(8, "little") + self._offset.to_bytes(8, "little")
        # torch.tensor, from the op surface (which also binds the state tensor's methods)
        return upcalls.load_op_surface().tensor(list(raw), dtype=uint8, device="cpu")

    def set_state(self, new_state: Any) -> Generator:
        """Restore a state from :meth:`get_state`. Returns the generator."""
        from .dtype import uint8
        from .tensor import Tensor

        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != STATE_SIZE:
            raise RuntimeError(f"Expected a PhiloxGeneratorState of size {STATE_SIZE} but found "
                               f"the input RNG state size to be {new_state.numel()}")
        raw = bytes(new_state.reshape(-1).tolist())
        with _lock:
            self._seed = int.from_bytes(raw[:8], "little")
            self._offset = int.from_bytes(raw[8:], "little")
        return self

    def clone_state(self) -> Generator:
        """A new generator on the same device with this one's seed and offset."""
        other = Generator.__new__(Generator)
        other.device = self.device
        with _lock:
            other._seed, other._offset = self._seed, self._offset
        return other

    def _reserve(self, n_counters: int) -> tuple[int, int]:
        """Take the next ``n_counters`` Philox counters: returns ``(seed, first counter)``."""
        with _lock:
            seed, offset = self._seed, self._offset
            self._offset = (offset + n_counters) & _MASK64
        return seed, offset


Generator.__module__ = "torch"


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = operator.index(seed)
    if not -(1 << 63) <= seed <= _MASK64:
        raise ValueError("Overflow when unpacking long long")  # PyTorch's type and words
    return seed


default_generator = Generator()

# Every accelerator's default generators are core's, one per (device type, index), made on
# first use without touching the device (a generator is two integers), so that seeding works
# on a machine without the device and whether or not its module was ever imported.
_device_generators: dict[tuple[str, int], Generator] = {}
# The seed new device generators start from: the last torch.manual_seed, unless the device
# type's manual_seed_all gave its own since.
_seed_for_all = _DEFAULT_SEED
_type_seeds: dict[str, int] = {}


def default_generator_for(device: Any) -> Generator:
    """The default generator of ``device`` (a normalised ``torch.device``): the CPU's
    :data:`default_generator`, or one per accelerator index, made on first use."""
    if device.type == "cpu" or device.type == "meta":
        return default_generator
    return device_generator(device.type, device.index or 0)


def device_generator(device_type: str, index: int) -> Generator:
    """The default generator of device ``device_type:index``, made on first use (it starts
    from the seed last given for every device, or for its device type)."""
    key = (device_type, index)
    gen = _device_generators.get(key)
    if gen is None:
        from .device import device as _device

        gen = Generator.__new__(Generator)
        gen.device = _device(device_type, index)
        gen._seed, gen._offset = _type_seeds.get(device_type, _seed_for_all), 0
        with _lock:
            gen = _device_generators.setdefault(key, gen)
    return gen


def manual_seed_device_type(device_type: str, seed: Any) -> None:
    """Seed every device of ``device_type``: the generators made so far and those to come
    (``torch.<device_type>.manual_seed_all``)."""
    value = _check_seed(seed) & _MASK64
    _type_seeds[device_type] = value
    for (kind, _index), gen in list(_device_generators.items()):
        if kind == device_type:
            gen.manual_seed(value)


def manual_seed(seed: Any) -> Generator:
    """Seed the CPU generator and every device's, made or to come. Returns the CPU
    generator."""
    global _seed_for_all
    default_generator.manual_seed(int(seed))  # int(): PyTorch accepts any number here
    _seed_for_all = default_generator.initial_seed()
    _type_seeds.clear()
    for gen in list(_device_generators.values()):
        gen.manual_seed(_seed_for_all)
    return default_generator


def seed() -> int:
    """Seed the CPU generator from a non-deterministic source; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The CPU generator's initial seed."""
    return default_generator.initial_seed()


def get_rng_state() -> Any:
    """The CPU generator's state (a 16-byte ``uint8`` tensor)."""
    return default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    """Restore the CPU generator's state from :func:`get_rng_state`."""
    default_generator.set_state(new_state)
