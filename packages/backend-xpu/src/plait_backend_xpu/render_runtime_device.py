"""What every GPU device module (``torch.xpu``, ``torch.cuda``) takes unchanged from its
:class:`torch.backends.devicekit.DeviceKit`: one source for plait-backend-xpu and
plait-backend-cuda. The kit itself (core's) holds the behaviour; this module only names it the
way PyTorch's device modules do, so the two device modules do not spell the list twice."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from torch.backends import devicekit

#: The random-number functions of ``torch.<device>``: core's generators, one per device.
RANDOM_NAMES = ("manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
                "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all",
                "default_generator")


def kit_names(kit: devicekit.DeviceKit) -> dict[str, Any]:
    """``device`` (lower case: PyTorch's name), ``device_of``, ``Stream``, ``StreamContext``,
    ``Event``, ``current_stream``, ``stream`` and the :data:`RANDOM_NAMES` of ``kit``'s device
    type."""

    def current_stream(device: Any = None) -> devicekit.Stream:
        """The current stream of ``device`` (default: the current device)."""
        return kit.Stream(device)

    def stream(s: devicekit.Stream | None) -> AbstractContextManager[None]:
        """Select a stream for the block; with only default streams, a device switch at
        most."""
        return kit.stream(s)

    class device_of(kit.device):  # type: ignore[misc,name-defined]  # PyTorch's lower case
        """``with torch.<device_type>.device_of(t)``: ``t``'s device for the block when ``t``
        is on this device type, else nothing changes."""

        def __init__(self, obj: Any) -> None:
            on_type = getattr(getattr(obj, "device", None), "type", None) == kit.device_type
            super().__init__(obj.get_device() if on_type else None)

    class StreamContext:
        """``with torch.<device_type>.StreamContext(s)``: :func:`stream`'s block as a class
        (``None`` selects nothing)."""

        def __init__(self, stream: devicekit.Stream | None) -> None:
            self.stream = stream
            self._block: AbstractContextManager[None] | None = None

        def __enter__(self) -> None:
            self._block = kit.stream(self.stream)
            self._block.__enter__()

        def __exit__(self, *exc: Any) -> None:
            if self._block is not None:
                self._block.__exit__(*exc)
                self._block = None

    module = f"torch.{kit.device_type}"
    for cls in (device_of, StreamContext):
        cls.__qualname__ = cls.__name__
        cls.__module__ = module
    for function in (current_stream, stream):
        function.__qualname__ = function.__name__  # as the device module's own functions
    names: dict[str, Any] = {"device": kit.device, "Stream": kit.Stream, "Event": kit.Event,
                             "current_stream": current_stream, "stream": stream,
                             "device_of": device_of, "StreamContext": StreamContext}
    names.update({name: getattr(kit.random, name) for name in RANDOM_NAMES})
    return names
