"""``torch.accelerator``'s memory and stream calls: each asks the accelerator's own device
module for the device given (or the current one), and says which backend lacks a call."""

from __future__ import annotations

import types

import pytest

import torch
import torch.accelerator as accelerator


def _fake_module(calls: list) -> types.SimpleNamespace:
    def recorder(name, value=None):
        def fn(*args):
            calls.append((name, args))
            return value
        return fn

    return types.SimpleNamespace(
        current_device=lambda: 1,
        memory_allocated=recorder("memory_allocated", 100),
        max_memory_allocated=recorder("max_memory_allocated", 200),
        memory_reserved=recorder("memory_reserved", 300),
        max_memory_reserved=recorder("max_memory_reserved", 400),
        memory_stats=recorder("memory_stats", {"allocated_bytes.all.current": 100}),
        reset_peak_memory_stats=recorder("reset_peak_memory_stats"),
        mem_get_info=recorder("mem_get_info", (5, 10)),
        current_stream=recorder("current_stream", "the stream"),
        set_stream=recorder("set_stream"),
    )


@pytest.fixture
def fake(monkeypatch):
    calls: list = []
    module = _fake_module(calls)
    monkeypatch.setattr(accelerator, "_require", lambda: ("fakedev", module))
    return calls


def test_memory_calls_reach_the_device_module_for_the_current_device(fake) -> None:
    assert accelerator.memory_allocated() == 100
    assert accelerator.max_memory_allocated() == 200
    assert accelerator.memory_reserved() == 300
    assert accelerator.max_memory_reserved() == 400
    assert accelerator.memory_stats() == {"allocated_bytes.all.current": 100}
    accelerator.reset_peak_memory_stats()
    assert accelerator.get_memory_info() == (5, 10)
    assert [args for _, args in fake] == [(1,)] * 7  # the current device, index 1


def test_a_device_given_by_index(fake) -> None:
    accelerator.memory_allocated(0)
    accelerator.memory_allocated(3)
    assert [args for _, args in fake] == [(0,), (3,)]
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        accelerator.memory_allocated("meta")


def test_streams(fake) -> None:
    assert accelerator.current_stream() == "the stream"
    accelerator.set_stream("s")
    assert fake[-1] == ("set_stream", ("s",))


def test_a_call_the_backend_lacks_names_it(fake) -> None:
    with pytest.raises(RuntimeError, match=r"fakedev backend does not provide "
                                           r"torch\.fakedev\.reset_accumulated_memory_stats"):
        accelerator.reset_accumulated_memory_stats()


def test_without_an_accelerator(monkeypatch) -> None:
    monkeypatch.setattr(accelerator, "_available_type", lambda: None)
    for call in (accelerator.memory_allocated, accelerator.get_memory_info,
                 accelerator.current_stream):
        with pytest.raises(RuntimeError, match="none is available"):
            call()
    assert torch.accelerator.memory_allocated is accelerator.memory_allocated
