"""Building blocks for a backend's device module (what ``torch.cuda``, ``torch.xpu`` become).

Every device module answers some questions the same way whatever the device: which index
``None``, ``1``, ``"npu:1"`` or ``torch.device("npu", 1)`` names, which device is the calling
thread's current one, what ``with torch.npu.device(1):`` restores, how streams and events behave
before a backend has real queues, and the random functions over core's per-device generators.
This module holds those answers once, for the in-tree backends and for any vendor's. A backend
keeps what is its own (probing the driver, choosing devices, native calls) and hands it in as a
few callables::

    from torch.backends.devicekit import DeviceKit

    kit = DeviceKit(
        "npu",
        device_count=device_count,        # the backend's probe; 0 without a device
        require=require_device,           # raises RuntimeError saying why no device is usable
        synchronize=synchronize,          # the module's own synchronize(device=None)
    )
    current_device = kit.devices.current
    set_device = kit.devices.set_current
    device, Stream, Event = kit.device, kit.Stream, kit.Event
    manual_seed = kit.random.manual_seed  # core's generator of the current device

Importing this module imports ``torch``, which is loaded already when a device module is
reached as ``torch.<device>``: a device module makes its kit once, at import, as above.

The parts also work alone: :class:`DeviceIndex` (index parsing and the current device),
:class:`DeviceRandom` (``manual_seed``, ``get_rng_state``... over core's generators), and
:class:`DeviceContext`, :class:`Stream` and :class:`Event`, the bases of the classes a kit
binds to its device type.

Pure Python and light: the standard library and core's generic ``torch.Stream``/``torch.Event``
(the bases of the kit's classes), no numpy, no native code, so a device module may use it
before its native extension loads.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from .. import _streams

__all__ = ["DeviceContext", "DeviceIndex", "DeviceKit", "DeviceRandom", "Event", "Stream"]

INVALID_INDEX = "invalid {device_type} device index {index}; {count} available"


class DeviceIndex:
    """The device indices of one device type, and the calling thread's current one.

    :param device_type: the device type, e.g. ``"cuda"``.
    :param device_count: how many devices there are: a callable (the backend's probe, called for
        every check, so cache it), or an ``int`` when the count is fixed (MPS has one device), in
        which case :meth:`parse` checks an index at once.
    :param require: raises ``RuntimeError`` saying why no device is usable; called by
        :meth:`checked` before the range check. ``None``: nothing to require.
    :param activate: called with the index :meth:`set_current` makes current (the native
        ``cudaSetDevice``). ``None``: nothing to tell the device.
    :param current: the calling thread's current device when the backend keeps it itself.
        ``None``: this index keeps it (per thread, 0 until :meth:`set_current`).
    :param invalid: the message of an index out of range, formatted with ``device_type``,
        ``index`` and ``count``.
    """

    def __init__(
        self,
        device_type: str,
        device_count: int | Callable[[], int],
        *,
        require: Callable[[], None] | None = None,
        activate: Callable[[int], None] | None = None,
        invalid: str = INVALID_INDEX,
        current: Callable[[], int] | None = None,
    ) -> None:
        self.device_type = device_type
        if current is not None:
            self.current = current  # type: ignore[method-assign]
        if callable(device_count):
            self.fixed_count: int | None = None
            self._device_count = device_count
        else:
            self.fixed_count = count = int(device_count)
            self._device_count = lambda: count
        self._require = require
        self._activate = activate
        self._invalid = invalid
        self._local = threading.local()  # .index: the calling thread's current device

    def count(self) -> int:
        """The number of devices."""
        return self._device_count()

    def parse(self, device: Any = None) -> int:
        """The index ``device`` names: ``None``, and a ``"cuda"`` or ``torch.device("cuda")``
        without an index, mean the current device; an int is taken as it is (negative included).
        A device of another type is a ``ValueError``. Only a fixed count is checked here."""
        index = self._parse(device)
        if self.fixed_count is not None:
            self._check_range(index, self.fixed_count)
        return index

    def _parse(self, device: Any) -> int:
        if device is None:
            return self.current()
        if isinstance(device, int):
            return device
        if isinstance(device, str):
            kind, _, index = device.partition(":")
            if kind != self.device_type:
                raise ValueError(f"Expected a {self.device_type} device, but got: {device}")
            return int(index) if index else self.current()
        kind, index = getattr(device, "type", None), getattr(device, "index", None)
        if kind != self.device_type:
            raise ValueError(f"Expected a {self.device_type} device, but got: {device}")
        return self.current() if index is None else int(index)

    def checked(self, device: Any = None) -> int:
        """:meth:`parse`, then require a usable device and an index below :meth:`count`."""
        index = self.parse(device)
        if self._require is not None:
            self._require()
        self._check_range(index, self.count())
        return index

    def _check_range(self, index: int, count: int) -> None:
        if not 0 <= index < count:
            raise RuntimeError(
                self._invalid.format(device_type=self.device_type, index=index, count=count)
            )

    def current(self) -> int:
        """The calling thread's current device index (0 until :meth:`set_current`)."""
        return getattr(self._local, "index", 0)

    def set_current(self, device: Any) -> None:
        """``set_device``: check ``device``, activate it and make it the calling thread's
        current device. A negative index is ignored, as in PyTorch."""
        index = self.parse(device)
        if index < 0:
            return
        index = self.checked(index)
        if self._activate is not None:
            self._activate(index)
        self._local.index = index


class DeviceRandom:
    """``torch.<device_type>``'s random-number functions, over core's generators.

    Every device's default generators are core's (``torch.Generator`` objects, one per device
    index, made on first use without touching the device), so these work on a machine without
    the device, and a random kernel only ever receives ``(seed, offset)``.
    ``torch.manual_seed`` seeds them all, whether or not the device module was imported.

    :param device_type: the device type, e.g. ``"cuda"``.
    :param devices: the device type's :class:`DeviceIndex`: which device is current, how an
        index is parsed, how many there are.
    """

    def __init__(self, device_type: str, devices: DeviceIndex) -> None:
        self.device_type = device_type
        self.devices = devices

    def _generator(self, index: int) -> Any:
        from .._core import generators as _random

        return _random.device_generator(self.device_type, index)

    def default_generator(self, device: Any = None) -> Any:
        """The default ``torch.Generator`` of ``device`` (default: the current device)."""
        return self._generator(self.devices.parse(device))

    def manual_seed(self, seed: int) -> None:
        """Seed the current device's generator."""
        self._generator(self.devices.current()).manual_seed(int(seed))

    def manual_seed_all(self, seed: int) -> None:
        """Seed every device's generator, including those not made yet."""
        from .._core import generators as _random

        _random.manual_seed_device_type(self.device_type, int(seed))

    def seed(self) -> int:
        """Seed the current device's generator from a non-deterministic source."""
        return self._generator(self.devices.current()).seed()

    def seed_all(self) -> int:
        """Seed every device's generator with one non-deterministic seed; returns it."""
        from .._core import generators as _random

        value = _random.Generator().seed()
        _random.manual_seed_device_type(self.device_type, value)
        return value

    def initial_seed(self) -> int:
        """The seed the current device's generator started from."""
        return self._generator(self.devices.current()).initial_seed()

    def get_rng_state(self, device: Any = None) -> Any:
        """The generator state of ``device`` (a ``uint8`` CPU tensor)."""
        return self._generator(self.devices.checked(device)).get_state()

    def set_rng_state(self, new_state: Any, device: Any = None) -> None:
        """Restore a state from :meth:`get_rng_state`."""
        self._generator(self.devices.checked(device)).set_state(new_state)

    def get_rng_state_all(self) -> list[Any]:
        """Every device's generator state, by index."""
        return [self._generator(i).get_state() for i in range(self.devices.count())]

    def set_rng_state_all(self, new_states: Any) -> None:
        """Restore every device's generator state from :meth:`get_rng_state_all`."""
        for i, state in enumerate(new_states):
            self.set_rng_state(state, i)


# -- classes a kit binds to its device type -------------------------------------------------


class DeviceContext:
    """``torch.<device_type>.device(d)``: make ``d`` the current device for a block and restore
    the previous one on exit. ``None`` or a negative index leaves the current device alone."""

    kit: ClassVar[DeviceKit]

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else self.kit.devices.parse(device)
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx >= 0:
            self.prev_idx = self.kit.devices.current()
            if self.idx != self.prev_idx:
                self.kit.devices.set_current(self.idx)

    def __exit__(self, *exc: object) -> None:
        if self.idx >= 0 and self.idx != self.prev_idx:
            self.kit.devices.set_current(self.prev_idx)


class Stream(_streams.Stream):
    """A device's default stream, for a backend without queues yet.

    Work on one device runs in order, so waiting for another stream or an event has nothing to
    do, and synchronising a stream synchronises its device. Streams are equal when they are on
    the same device. Subclass it to add a backend's details (see ``stream_class`` of
    :class:`DeviceKit`).
    """

    kit: ClassVar[DeviceKit]

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device_index = self.kit.devices.parse(device)
        self.priority = priority

    @property
    def device(self) -> Any:
        import torch  # loaded already: this module is part of it

        return torch.device(self.kit.device_type, self.device_index)

    @property
    def device_type(self) -> str:  # type: ignore[override]
        return self.kit.device_type

    def query(self) -> bool:
        """Whether all work queued on the stream is done: with nothing queued, always."""
        return True

    def __enter__(self) -> Stream:
        """``with stream:`` selects it (its device) for the block."""
        self._selected = self.kit.stream(self)
        self._selected.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._selected.__exit__(*exc)

    def synchronize(self) -> None:
        self.kit.synchronize(self.device_index)

    def wait_stream(self, stream: Stream) -> None:
        """Nothing to wait for: work on one device's default stream is already ordered."""

    def wait_event(self, event: Event) -> None:
        """Nothing to wait for: events are recorded synchronously."""

    def record_event(self, event: Event | None = None) -> Event:
        event = self.kit.Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and (self.kit.device_type, self.device_index) == (
            other.kit.device_type,
            other.device_index,
        )

    def __hash__(self) -> int:
        return hash((self.kit.device_type, self.device_index))

    def __repr__(self) -> str:
        device_type = self.kit.device_type
        return f"<torch.{device_type}.Stream device={device_type}:{self.device_index}>"


class Event(_streams.Event):
    """A point in a stream: recording synchronises the stream's device and timestamps on the
    host, so an event is complete once recorded and ``elapsed_time`` is host time between two
    records."""

    kit: ClassVar[DeviceKit]

    def __init__(
        self,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
        **kwargs: Any,
    ) -> None:
        self.enable_timing = enable_timing
        self._time: float | None = None

    @property
    def device_type(self) -> str:  # type: ignore[override]
        return self.kit.device_type

    @property
    def device(self) -> Any:
        import torch

        return torch.device(self.kit.device_type)

    def __repr__(self) -> str:
        return f"<torch.{self.kit.device_type}.Event>"

    def record(self, stream: Stream | None = None) -> None:
        """Record on ``stream`` (default: the current device's)."""
        self.kit.synchronize(None if stream is None else stream.device_index)
        self._time = time.perf_counter()

    def query(self) -> bool:
        return True  # recording already waited for the work before it

    def synchronize(self) -> None:
        """Nothing to wait for: ``record`` synchronised."""

    def wait(self, stream: Stream | None = None) -> None:
        """Nothing to wait for: ``record`` synchronised."""

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between this event and ``end_event``."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0


# -- the kit ---------------------------------------------------------------------------------


class DeviceKit:
    """The parts above bound to one device type: what a device module makes once and
    re-exports.

    :param device_type: the device type, e.g. ``"cuda"``.
    :param device_count: see :class:`DeviceIndex`.
    :param synchronize: the device module's ``synchronize(device=None)``: what
        ``Stream.synchronize`` and ``Event.record`` call with a device index (``None`` for the
        current device).
    :param require: see :class:`DeviceIndex`.
    :param activate: see :class:`DeviceIndex`.
    :param invalid_index: the ``invalid`` message of :class:`DeviceIndex`.
    :param stream_class: a :class:`Stream` subclass with the backend's details.

    ``devices`` is the :class:`DeviceIndex`, ``random`` the :class:`DeviceRandom`; ``device``,
    ``Stream`` and ``Event`` are subclasses of :class:`DeviceContext`, ``stream_class`` and
    :class:`Event` of this kit's own, so that ``torch.cuda.Stream()`` knows its device type.
    """

    def __init__(
        self,
        device_type: str,
        *,
        device_count: int | Callable[[], int],
        synchronize: Callable[[int | None], None],
        require: Callable[[], None] | None = None,
        activate: Callable[[int], None] | None = None,
        invalid_index: str = INVALID_INDEX,
        stream_class: type[Stream] = Stream,
    ) -> None:
        self.device_type = device_type
        self.synchronize = synchronize
        self.devices = DeviceIndex(
            device_type, device_count, require=require, activate=activate, invalid=invalid_index
        )
        self.random = DeviceRandom(device_type, self.devices)
        # Named as PyTorch names them (torch.cuda.Stream): torch.<device_type> finds them again.
        bound = {"kit": self, "__module__": f"torch.{device_type}"}
        self.device = type("device", (DeviceContext,), bound)
        self.Stream = type("Stream", (stream_class,), bound)
        self.Event = type("Event", (Event,), bound)

    @contextlib.contextmanager
    def stream(self, s: Stream | None) -> Iterator[None]:
        """``torch.<device_type>.stream(s)``: select ``s`` for the block; with only default
        streams that is a device switch at most."""
        if s is None:
            yield
            return
        with self.device(s.device_index):
            yield
