"""Building blocks for a backend's device module (what ``torch.cuda``, ``torch.xpu`` become).

Every device module answers some questions the same way whatever the device: which index
``None``, ``1``, ``"npu:1"`` or ``torch.device("npu", 1)`` names, which device is the calling
thread's current one, what ``with torch.npu.device(1):`` restores, how streams and events behave
before a backend has real queues, and where ``manual_seed`` keeps a seed before a device random
generator exists. This module holds those answers once, for the in-tree backends and for any
vendor's. A backend keeps what is its own (probing the driver, choosing devices, native calls)
and hands it in as a few callables::

    from torch.backends.devicekit import DeviceKit

    kit = DeviceKit(
        "npu",
        device_count=device_count,        # the backend's probe; 0 without a device
        require=require_device,           # raises RuntimeError saying why no device is usable
        synchronize=synchronize,          # the module's own synchronize(device=None)
        why_no_generator="acme-npu has no device random generator yet",
    )
    current_device = kit.devices.current
    set_device = kit.devices.set_current
    device, Stream, Event = kit.device, kit.Stream, kit.Event
    manual_seed = kit.seeds.manual_seed

Importing this module imports ``torch``, which is loaded already when a device module is
reached as ``torch.<device>``: a device module makes its kit once, at import, as above.

The parts also work alone: :class:`DeviceIndex` (index parsing and the current device),
:class:`SeedRecorder` (seeds before a generator), and :class:`DeviceContext`, :class:`Stream`
and :class:`Event`, the bases of the classes a kit binds to its device type.

Pure Python and light: standard library only, no numpy, no native code, so a device module may
use it before its native extension loads.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

__all__ = ["DeviceContext", "DeviceIndex", "DeviceKit", "Event", "SeedRecorder", "Stream"]

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
    ) -> None:
        self.device_type = device_type
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


class SeedRecorder:
    """Seeds given to ``manual_seed`` before the device has a random generator.

    They are recorded without touching the device (``torch.manual_seed`` seeds every device
    module and must work on a machine without one), per device or for all devices, and will
    seed the generator when it comes.

    :param device_type: the device type, for messages (``torch.<device_type>.get_rng_state``).
    :param current_device: the calling thread's current device index.
    :param why_no_generator: the start of the ``NotImplementedError`` that the generator's
        state functions raise: who lacks it and when it comes.
    """

    ALL = -1  # the key of a seed given to manual_seed_all

    def __init__(
        self, device_type: str, current_device: Callable[[], int], *, why_no_generator: str
    ) -> None:
        self.device_type = device_type
        self._current_device = current_device
        self.why_no_generator = why_no_generator
        self._seeds: dict[int, int] = {}

    def manual_seed(self, seed: int) -> None:
        """Record ``seed`` for the current device."""
        self._seeds[self._current_device()] = int(seed)

    def manual_seed_all(self, seed: int) -> None:
        """Record ``seed`` for every device, replacing the per-device seeds."""
        self._seeds.clear()
        self._seeds[self.ALL] = int(seed)

    def initial_seed(self) -> int:
        """The current device's seed, else the seed for all devices, else 0."""
        return self._seeds.get(self._current_device(), self._seeds.get(self.ALL, 0))

    def not_implemented(self, what: str) -> NotImplementedError:
        """The error for ``torch.<device_type>.<what>`` (``get_rng_state``...) to raise."""
        return NotImplementedError(
            f"torch.{self.device_type}.{what}: {self.why_no_generator}. Seeds given to "
            "manual_seed are recorded and will seed it."
        )


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


class Stream:
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

    def query(self) -> bool:
        """Whether all work queued on the stream is done: with nothing queued, always."""
        return True

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


class Event:
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
    :param why_no_generator: see :class:`SeedRecorder`.
    :param require: see :class:`DeviceIndex`.
    :param activate: see :class:`DeviceIndex`.
    :param invalid_index: the ``invalid`` message of :class:`DeviceIndex`.
    :param stream_class: a :class:`Stream` subclass with the backend's details.

    ``devices`` is the :class:`DeviceIndex`, ``seeds`` the :class:`SeedRecorder`; ``device``,
    ``Stream`` and ``Event`` are subclasses of :class:`DeviceContext`, ``stream_class`` and
    :class:`Event` of this kit's own, so that ``torch.cuda.Stream()`` knows its device type.
    """

    def __init__(
        self,
        device_type: str,
        *,
        device_count: int | Callable[[], int],
        synchronize: Callable[[int | None], None],
        why_no_generator: str,
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
        self.seeds = SeedRecorder(
            device_type, self.devices.current, why_no_generator=why_no_generator
        )
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
