"""torch.backends.devicekit: the parts every backend's device module shares.

A kit for a made-up ``npu`` device with two devices; ``calls`` records what the kit asks of the
backend (activate a device, synchronise one), so each test checks both the answer and the
traffic. Device objects are duck-typed (``.type``, ``.index``), as ``torch.device`` is.
"""

from __future__ import annotations

import importlib
import threading
from collections import namedtuple

import pytest
from conftest import run_json

from torch.backends import devicekit

Dev = namedtuple("Dev", "type index")  # what the kit reads of a torch.device


class Backend:
    """The backend's side: a device count, a reason to refuse, and a log of calls."""

    def __init__(self, count: int = 2) -> None:
        self.count = count
        self.calls: list[tuple[str, int | None]] = []

    def require(self) -> None:
        if self.count == 0:
            raise RuntimeError("no npu device was found: the driver is missing")

    def kit(self, **kwargs) -> devicekit.DeviceKit:
        return devicekit.DeviceKit(
            "npu",
            device_count=lambda: self.count,
            require=self.require,
            activate=lambda index: self.calls.append(("activate", index)),
            synchronize=lambda index: self.calls.append(("synchronize", index)),
            **kwargs,
        )


@pytest.fixture
def backend() -> Backend:
    return Backend()


@pytest.fixture
def kit(backend) -> devicekit.DeviceKit:
    return backend.kit()


# -- device indices --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "device,index",
    [(None, 0), (1, 1), (-1, -1), (7, 7), ("npu", 0), ("npu:1", 1), (Dev("npu", 1), 1),
     (Dev("npu", None), 0)],
)
def test_parse_names_an_index_without_checking_it(kit, backend, device, index):
    assert kit.devices.parse(device) == index
    assert backend.calls == []


@pytest.mark.parametrize("device", ["cpu", "cuda:1", Dev("cpu", None), Dev("cuda", 0), 1.0])
def test_parse_rejects_other_device_types(kit, device):
    with pytest.raises(ValueError, match=r"^Expected a npu device, but got: "):
        kit.devices.parse(device)


def test_parse_without_an_index_means_the_current_device(kit):
    kit.devices.set_current(1)
    assert [kit.devices.parse(d) for d in (None, "npu", Dev("npu", None))] == [1, 1, 1]
    assert kit.devices.parse("npu:0") == 0


def test_checked_requires_a_device_then_the_range(kit, backend):
    assert kit.devices.checked("npu:1") == 1
    with pytest.raises(RuntimeError, match=r"^invalid npu device index 2; 2 available$"):
        kit.devices.checked(2)
    with pytest.raises(RuntimeError, match="invalid npu device index -1"):
        kit.devices.checked(-1)
    backend.count = 0
    with pytest.raises(RuntimeError, match="the driver is missing"):  # not "index 0; 0"
        kit.devices.checked(0)


def test_invalid_index_message_is_the_backends(backend):
    kit = backend.kit(invalid_index="NPU error: bad ordinal {index} of {count} ({device_type})")
    with pytest.raises(RuntimeError, match=r"^NPU error: bad ordinal 5 of 2 \(npu\)$"):
        kit.devices.checked(5)


def test_set_current_checks_activates_and_is_per_thread(kit, backend):
    kit.devices.set_current("npu:1")
    assert kit.devices.current() == 1 and backend.calls == [("activate", 1)]
    seen = []
    worker = threading.Thread(target=lambda: seen.append(kit.devices.current()))
    worker.start()
    worker.join()
    assert seen == [0]  # another thread starts on device 0
    with pytest.raises(RuntimeError, match="index 3"):
        kit.devices.set_current(3)
    kit.devices.set_current(-1)  # ignored, as in PyTorch
    assert kit.devices.current() == 1 and backend.calls == [("activate", 1)]


def test_a_fixed_count_checks_indices_at_once(backend):
    kit = devicekit.DeviceKit(
        "npu", device_count=1, synchronize=lambda index: None,
        invalid_index="invalid npu device index {index}: one device, 0",
    )
    assert kit.devices.parse(None) == kit.devices.parse("npu:0") == 0
    for device in (1, -1, "npu:2", Dev("npu", 1)):
        with pytest.raises(RuntimeError, match="one device, 0"):
            kit.devices.parse(device)
    kit.devices.set_current(0)  # no require given: works without a device
    with pytest.raises(RuntimeError, match="one device, 0"):
        kit.devices.set_current(-1)  # checked before it could be ignored


# -- the device context ------------------------------------------------------------------------


def test_device_context_switches_and_restores(kit, backend):
    with kit.device("npu:1"):
        assert kit.devices.current() == 1
        with kit.device(0):
            assert kit.devices.current() == 0
        assert kit.devices.current() == 1
    assert kit.devices.current() == 0
    assert backend.calls == [("activate", 1), ("activate", 0), ("activate", 1), ("activate", 0)]


def test_device_context_restores_after_an_error(kit):
    with pytest.raises(KeyError), kit.device(1):
        raise KeyError("boom")
    assert kit.devices.current() == 0


@pytest.mark.parametrize("device", [None, -1, 0])
def test_device_context_leaves_the_device_alone(kit, backend, device):
    with kit.device(device):
        assert kit.devices.current() == 0
    assert backend.calls == []


def test_device_context_checks_on_entry(kit):
    ctx = kit.device(5)  # parsed, not yet checked: as in PyTorch
    with pytest.raises(RuntimeError, match="index 5"), ctx:
        pass
    assert kit.devices.current() == 0
    with pytest.raises(ValueError, match="Expected a npu device"):
        kit.device("cpu")


# -- streams and events ----------------------------------------------------------------------


def test_stream_is_a_device_default_stream(kit, backend):
    s = kit.Stream("npu:1", priority=-1)
    assert (s.device_index, s.priority) == (1, -1)
    assert kit.Stream().device_index == 0
    assert s.query() is True
    s.wait_stream(kit.Stream())
    s.wait_event(kit.Event())
    assert backend.calls == []  # waiting has nothing to do
    s.synchronize()
    assert backend.calls == [("synchronize", 1)]
    assert repr(s) == "<torch.npu.Stream device=npu:1>"


def test_streams_compare_by_device_type_and_index(kit, backend):
    assert kit.Stream(1) == kit.Stream("npu:1") and hash(kit.Stream(1)) == hash(kit.Stream(1))
    assert kit.Stream(0) != kit.Stream(1)
    other = devicekit.DeviceKit(
        "tpu", device_count=2, synchronize=lambda index: None
    )
    assert other.Stream(1) != kit.Stream(1)
    assert other.Stream is not kit.Stream and issubclass(kit.Stream, devicekit.Stream)


def test_stream_device_is_a_torch_device():
    pytest.importorskip("plait_toy_device", reason="the toy device type is not installed")
    import torch

    kit = devicekit.DeviceKit(
        "toy", device_count=2, synchronize=lambda index: None
    )
    assert kit.Stream(1).device == torch.device("toy", 1)


def test_stream_context_switches_to_the_streams_device(kit):
    with kit.stream(kit.Stream(1)):
        assert kit.devices.current() == 1
    assert kit.devices.current() == 0
    with kit.stream(None):
        assert kit.devices.current() == 0


def test_a_backend_stream_class_keeps_its_details(backend):
    class NpuStream(devicekit.Stream):
        npu_stream = 0

        def query(self) -> bool:
            return False

    kit = backend.kit(stream_class=NpuStream)
    s = kit.Stream(1)
    assert isinstance(s, NpuStream) and s.npu_stream == 0 and s.query() is False
    assert isinstance(s.record_event(), kit.Event)


def test_event_record_synchronizes_the_streams_device(kit, backend):
    kit.Event().record()
    kit.Event().record(kit.Stream(1))
    event = kit.Stream(1).record_event()
    assert isinstance(event, kit.Event)
    assert backend.calls == [("synchronize", None), ("synchronize", 1), ("synchronize", 1)]
    assert event.query() is True


def test_elapsed_time_needs_timing_and_records(kit):
    start, end = kit.Event(enable_timing=True), kit.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="must be recorded before calculating elapsed time"):
        start.elapsed_time(end)
    start.record()
    with pytest.raises(RuntimeError, match="must be recorded"):
        start.elapsed_time(end)  # only one of the two
    end.record()
    assert 0.0 <= start.elapsed_time(end) < 60_000.0
    untimed = kit.Event()
    untimed.record()
    for a, b in ((untimed, end), (start, untimed)):
        with pytest.raises(RuntimeError, match="enable_timing=True"):
            a.elapsed_time(b)


def test_event_accepts_pytorchs_arguments(kit):
    assert kit.Event(True, False, False).enable_timing is True
    assert kit.Event(enable_timing=False, blocking=True, interprocess=False).enable_timing is False


# -- random numbers: core's generators ------------------------------------------------------


@pytest.fixture
def toy_kit(backend) -> devicekit.DeviceKit:
    """A kit of the installed ``toy`` device type (a generator's device must parse)."""
    return devicekit.DeviceKit("toy", device_count=lambda: backend.count, require=backend.require,
                               synchronize=lambda index: backend.calls.append(("sync", index)))


def test_seeds_go_to_cores_generator_of_each_device(toy_kit):
    import torch

    rnd = toy_kit.random
    rnd.manual_seed("3")
    assert rnd.initial_seed() == 3
    assert rnd.default_generator("toy:0").initial_seed() == 3
    assert rnd.default_generator(0) is rnd.default_generator(torch.device("toy", 0))
    assert rnd.default_generator(0).device == torch.device("toy", 0)
    with toy_kit.device(1):
        rnd.manual_seed(5)
        assert rnd.initial_seed() == 5
    assert rnd.initial_seed() == 3
    rnd.manual_seed_all(7)  # every device, made or not
    assert rnd.initial_seed() == 7 and rnd.default_generator(1).initial_seed() == 7
    torch.manual_seed(11)  # reaches every device's generator too
    assert rnd.default_generator(1).initial_seed() == 11


def test_rng_state_round_trips_through_cores_generator(toy_kit):
    import torch

    rnd = toy_kit.random
    rnd.manual_seed_all(21)
    state = rnd.get_rng_state(1)
    assert state.dtype == torch.uint8 and state.shape == (16,)
    assert int.from_bytes(bytes(state[:8].tolist()), "little") == 21
    gen = rnd.default_generator(1)
    gen.set_offset(40)
    rnd.set_rng_state(state, 1)
    assert gen.get_offset() == 0 and gen.initial_seed() == 21
    assert [s.tolist() for s in rnd.get_rng_state_all()] == [
        rnd.get_rng_state(0).tolist(), state.tolist()]


def test_seeding_never_touches_the_device(backend, toy_kit):
    backend.count = 0
    toy_kit.random.manual_seed(1)
    toy_kit.random.manual_seed_all(2)
    assert toy_kit.random.initial_seed() == 2 and backend.calls == []
    with pytest.raises(RuntimeError, match="no npu device"):  # a state needs a usable device
        toy_kit.random.get_rng_state()


# -- the in-tree device modules --------------------------------------------------------------


@pytest.mark.parametrize("package", [f"plait_backend_{t}" for t in ("cuda", "xpu", "mps")])
def test_device_modules_hand_out_the_kits_classes(package):
    pytest.importorskip(f"{package}._C", reason=f"{package} is not installed")
    mod = importlib.import_module(f"{package}.device_module")
    assert issubclass(mod.device, devicekit.DeviceContext)
    assert issubclass(mod.Stream, devicekit.Stream) and issubclass(mod.Event, devicekit.Event)
    assert mod.Stream is mod.Stream  # made once
    assert isinstance(mod.current_stream(), mod.Stream)
    assert {"device", "Stream", "Event"} <= set(dir(mod))
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        mod.nonesuch  # noqa: B018


def test_devicekit_is_light():
    out = run_json("""
        import json, sys
        import torch.backends.devicekit
        print(json.dumps(sorted(m for m in sys.modules if m == "numpy" or m.endswith("._C"))))
    """)
    assert out == []  # no numpy, no backend's native extension
