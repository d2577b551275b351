"""torch.Stream and torch.Event: the host's (always idle, no events, as PyTorch's CPU build) and
an accelerator's, which is its device module's own class (diffusers annotates with
``torch.cuda.Stream | torch.Stream``)."""

from __future__ import annotations

import pytest

import torch


def test_the_host_stream_is_idle_and_ordered():
    s = torch.Stream("cpu")
    assert (s.device_type, s.device_index, s.stream_id) == ("cpu", -1, 0)
    assert s.device == torch.device("cpu")
    assert s.query() is True
    s.synchronize()
    s.wait_stream(torch.Stream(device="cpu"))
    assert s == torch.Stream("cpu", priority=-1) and hash(s) == hash(torch.Stream("cpu"))
    with torch.Stream("cpu") as entered:
        assert entered == s
    assert repr(s) == "torch.Stream device_type=cpu, device_index=-1, stream_id=0"


def test_the_host_has_no_events():
    event = torch.Event("cpu")
    assert event.query() is True
    event.synchronize()
    for call in (lambda: torch.Stream("cpu").record_event(), lambda: event.record(),
                 lambda: event.elapsed_time(torch.Event("cpu"))):
        with pytest.raises(RuntimeError, match="cpu backend doesn't support events"):
            call()


def test_the_classes_take_part_in_annotations():
    assert (torch.cuda.Stream | torch.Stream | None).__args__[1] is torch.Stream
    assert torch.Stream.__module__ == torch.Event.__module__ == "torch"


def test_an_accelerator_stream_is_its_device_modules_own():
    pytest.importorskip("plait_toy_device", reason="the toy device type is not installed")
    s = torch.Stream("toy:1", priority=-1)
    assert type(s) is torch.toy.Stream
    assert isinstance(s, torch.Stream)
    assert (s.device_type, s.device_index, s.priority) == ("toy", 1, -1)
    assert s == torch.toy.Stream(1)
    event = s.record_event()
    assert isinstance(event, torch.Event) and isinstance(event, torch.toy.Event)
    assert event.device_type == "toy" and event.query() is True
    timed = torch.Event("toy", enable_timing=True)
    assert type(timed) is torch.toy.Event and timed.enable_timing is True
    with s:
        assert torch.toy.current_device() == 1
    assert torch.toy.current_device() == 0
    # without a device: the current accelerator's (the toy device is one), as in PyTorch
    if torch.accelerator.current_accelerator(check_available=True) == torch.device("toy"):
        assert isinstance(torch.Stream(), torch.toy.Stream)
