"""torch.profiler and torch.autograd.profiler through the public API."""

from __future__ import annotations

import json
import os

import pytest

import torch
from torch.profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)


def _names(prof: profile) -> set[str]:
    return {avg.key for avg in prof.key_averages()}


def test_profile_records_operator_calls_and_user_ranges() -> None:
    a = torch.ones(3, 4, requires_grad=True)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True,
                 with_stack=True) as prof:
        with record_function("my_block"):
            b = torch.mm(a, a.t()).sum()
        b.backward()
    names = _names(prof)
    assert {"my_block", "aten::mm", "aten::sum"} <= names
    block = next(avg for avg in prof.key_averages() if avg.key == "my_block")
    mm = next(avg for avg in prof.key_averages() if avg.key == "aten::mm")
    raw = sorted((event for event in prof.events() if event.name == "aten::mm"),
                 key=lambda event: event.start_ns)
    # the block contains the forward mm call (the first one), so its total covers it and its
    # self time excludes it; the backward's two mm calls run outside the block
    forward_mm_us = raw[0].duration_ns / 1e3
    assert block.count == 1 and block.cpu_time_total >= forward_mm_us
    assert block.self_cpu_time_total <= block.cpu_time_total - forward_mm_us + 1e-6
    # one forward mm and the two of its backward
    assert len(raw) == mm.count == 3 and all(event.key == "aten::mm" for event in raw)
    assert sum(event.cpu_time_total for event in raw) == pytest.approx(mm.cpu_time_total)
    assert all(0 <= event.self_cpu_time_total <= event.cpu_time_total for event in raw)


def test_nothing_is_recorded_outside_the_profiler() -> None:
    a = torch.ones(2)
    with profile() as prof:
        pass
    a + a
    assert len(prof.events()) == 0
    with record_function("no_profiler"):  # free and harmless with no profiler active
        a + a


def test_record_function_as_a_decorator() -> None:
    @record_function("decorated")
    def work(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    with profile() as prof:
        out = work(torch.ones(2))
        work(torch.ones(2))
    assert out.tolist() == [2.0, 2.0]
    counts = {avg.key: avg.count for avg in prof.key_averages()}
    assert counts["decorated"] == 2 and counts["aten::mul"] == 2


def test_key_averages_table_sorts_and_limits_rows() -> None:
    a = torch.ones(8, 8)
    with profile(record_shapes=True) as prof:
        for _ in range(3):
            torch.mm(a, a)
        torch.relu(a)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=1)
    lines = table.splitlines()
    assert "Name" in lines[1] and "# of Calls" in lines[1]
    assert "Self CPU time total" in table
    body = [line for line in lines[3:] if line and not line.startswith("-")
            and not line.startswith("Self CPU time total")]
    assert len(body) == 1
    by_count = prof.key_averages().table(sort_by="count", row_limit=10)
    assert by_count.index("aten::mm") < by_count.index("aten::relu")
    shapes = prof.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" in shapes and "[[8, 8], [8, 8]]" in shapes
    with pytest.raises(AttributeError):
        prof.key_averages().table(sort_by="no_such_column")


def test_export_chrome_trace_writes_valid_json(tmp_path) -> None:
    a = torch.ones(4)
    with profile(record_shapes=True) as prof:
        with record_function("outer"):
            torch.exp(a)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    document = json.loads(path.read_text())
    events = document["traceEvents"]
    names = {event["name"] for event in events}
    assert {"outer", "aten::exp"} <= names
    for event in events:
        assert event["ph"] == "X" and event["dur"] >= 0 and isinstance(event["ts"], float)
    outer = next(e for e in events if e["name"] == "outer")
    exp = next(e for e in events if e["name"] == "aten::exp")
    assert outer["ts"] <= exp["ts"] and exp["ts"] + exp["dur"] <= outer["ts"] + outer["dur"]
    assert exp["args"]["Input Dims"] == [[4]]


def test_schedule_actions() -> None:
    plan = schedule(wait=1, warmup=1, active=2, repeat=1)
    assert [plan(i) for i in range(6)] == [
        ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
        ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE, ProfilerAction.NONE]
    skipping = schedule(skip_first=2, wait=0, warmup=1, active=1)
    assert [skipping(i) for i in range(6)] == [
        ProfilerAction.NONE, ProfilerAction.NONE, ProfilerAction.WARMUP,
        ProfilerAction.RECORD_AND_SAVE, ProfilerAction.WARMUP, ProfilerAction.RECORD_AND_SAVE]


def test_schedule_with_on_trace_ready_and_tensorboard_handler(tmp_path) -> None:
    seen: list[int] = []
    handler = tensorboard_trace_handler(str(tmp_path), worker_name="worker0")

    def on_ready(prof: profile) -> None:
        seen.append(prof.step_num)
        handler(prof)

    a = torch.ones(2, 2)
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=on_ready) as prof:
        for _ in range(10):
            torch.mm(a, a)
            prof.step()
    # two active windows, each handed over once at the step that ends it (steps 4 and 8)
    assert seen == [4, 8]
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 2 and all(f.startswith("worker0.") and f.endswith(".pt.trace.json")
                                   for f in files)
    for name in files:
        events = json.loads((tmp_path / name).read_text())["traceEvents"]
        # each window recorded exactly its two active steps' mm calls
        assert sum(e["name"] == "aten::mm" for e in events) == 2


def test_scheduled_steps_are_ranges_named_by_step(tmp_path) -> None:
    """With a schedule, each step is a ``ProfilerStep#<n>`` range in the trace (TensorBoard's
    profiler plugin finds steps by them); tables add them up as ``ProfilerStep*``."""
    a = torch.ones(2, 2)
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1)) as prof:
        for _ in range(5):
            torch.mm(a, a)
            prof.step()
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    steps = [e for e in events if e["name"].startswith("ProfilerStep")]
    assert sorted(e["name"] for e in steps) == ["ProfilerStep#2", "ProfilerStep#3"]
    assert all(e["cat"] == "user_annotation" for e in steps)
    for mm in (e for e in events if e["name"] == "aten::mm"):  # each inside its step
        assert any(s["ts"] <= mm["ts"] and mm["ts"] + mm["dur"] <= s["ts"] + s["dur"]
                   for s in steps)
    (row,) = [r for r in prof.key_averages() if r.key.startswith("ProfilerStep")]
    assert row.key == "ProfilerStep*" and row.count == 2
    with profile() as unscheduled:  # no schedule: no step ranges, as in PyTorch
        torch.mm(a, a)
        unscheduled.step()
    assert not [e for e in unscheduled.events() if "ProfilerStep" in e.name]


def test_autograd_profiler_legacy_api() -> None:
    a = torch.ones(3)
    with torch.autograd.profiler.profile() as prof:
        with torch.autograd.profiler.record_function("legacy"):
            torch.relu(a)
    assert {"legacy", "aten::relu"} <= {avg.key for avg in prof.key_averages()}
    assert "aten::relu" in prof.table(sort_by="self_cpu_time_total")
    with torch.autograd.profiler.profile(enabled=False) as off:
        torch.relu(a)
    assert len(off.events()) == 0


def test_profiler_leaves_no_dispatch_mode_behind() -> None:
    from torch.utils._python_dispatch import _len_torch_dispatch_stack
    before = _len_torch_dispatch_stack()
    with profile():
        assert _len_torch_dispatch_stack() == before + 1
    assert _len_torch_dispatch_stack() == before
