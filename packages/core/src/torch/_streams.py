"""``torch.Stream`` and ``torch.Event``: streams and events of any device type.

``torch.Stream(device)`` on an accelerator is that device module's own stream
(``torch.xpu.Stream``...: their classes derive from this one, through
:mod:`torch.backends.devicekit`), so ``isinstance(torch.cuda.Stream(), torch.Stream)`` holds
as in PyTorch. Without a device (``None``) it is the current accelerator's, else the host's.
The host's stream is the calling thread itself: CPU kernels run in order as they are called, so
it is always idle and has nothing to wait for. Its events cannot be recorded, as in PyTorch
("cpu backend doesn't support events").
"""

from __future__ import annotations

from typing import Any

from ._core.device import device as _device

__all__ = ["Event", "Stream"]

_NO_CPU_EVENTS = "cpu backend doesn't support events."


def _resolve(device: Any) -> _device:
    """The device a stream or event is made for: ``device``, else the current accelerator
    when it has a usable device, else the host."""
    if device is None:
        from .accelerator import current_accelerator

        return current_accelerator(check_available=True) or _device("cpu")
    return device if isinstance(device, _device) else _device(device)


def _device_module(device_type: str) -> Any:
    from . import get_device_module

    return get_device_module(device_type)


class _ByDevice(type):
    """The metaclass of the two generic classes: calling ``torch.Stream``/``torch.Event``
    itself with an accelerator's device makes that device module's own (a subclass, built
    and initialised by its own signature); subclasses are made as usual."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Stream or cls is Event:
            target = _resolve(args[0] if args else kwargs.get("device"))
            if target.type != "cpu":
                rest = {name: value for name, value in kwargs.items() if name != "device"}
                module = _device_module(target.type)
                if cls is Stream:
                    return module.Stream(target, *args[1:], **rest)
                return module.Event(**rest)  # (a device module's events take no device)
        return super().__call__(*args, **kwargs)


class Stream(metaclass=_ByDevice):
    """An in-order queue of work on one device; ``torch.Stream(device=None, *, priority=0)``."""

    __module__ = "torch"

    device_type = "cpu"
    device_index = -1
    stream_id = 0

    def __init__(self, device: Any = None, *, priority: int = 0, **kwargs: Any) -> None:
        self.priority = priority

    @property
    def device(self) -> _device:
        return _device("cpu")

    def query(self) -> bool:
        """Whether all work queued on the stream is done: host work is done when called."""
        return True

    def synchronize(self) -> None:
        """Wait for the stream's work: none is pending on the host."""

    def wait_event(self, event: Event) -> None:
        """Make later work wait for ``event``: host work is already ordered."""

    def wait_stream(self, stream: Stream) -> None:
        """Make later work wait for ``stream``'s queued work: host work is already ordered."""

    def record_event(self, event: Event | None = None) -> Event:
        raise RuntimeError(_NO_CPU_EVENTS)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and (self.device_type, self.device_index,
                                              self.stream_id) == (
            other.device_type, other.device_index, other.stream_id)

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self) -> str:
        return (f"torch.Stream device_type={self.device_type}, device_index="
                f"{self.device_index}, stream_id={self.stream_id}")


class Event(metaclass=_ByDevice):
    """A marker in a stream; ``torch.Event(device=None, *, enable_timing=False,
    blocking=False, interprocess=False)``."""

    __module__ = "torch"

    device_type = "cpu"
    device_index = -1

    def __init__(self, device: Any = None, *, enable_timing: bool = False,
                 blocking: bool = False, interprocess: bool = False, **kwargs: Any) -> None:
        self.enable_timing = enable_timing

    @property
    def device(self) -> _device:
        return _device("cpu")

    def record(self, stream: Stream | None = None) -> None:
        raise RuntimeError(_NO_CPU_EVENTS)

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Nothing recorded on the host to wait for."""

    def wait(self, stream: Stream | None = None) -> None:
        """Nothing recorded on the host to wait for."""

    def elapsed_time(self, end_event: Event) -> float:
        raise RuntimeError(_NO_CPU_EVENTS)

    def __repr__(self) -> str:
        return (f"torch.Event device_type={self.device_type}, device_index="
                f"{self.device_index}, event_flag=0, event_id=0")
