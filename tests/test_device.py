"""``torch.device``: parsing, equality, errors, the default-device context, and the devices
core provides (``cpu``, ``meta``) or finds through plugins (the ``toy`` test plugin)."""

from __future__ import annotations

import pickle
import threading

import pytest

import torch


@pytest.fixture
def restore_defaults():
    try:
        yield
    finally:
        torch.set_default_device(None)
        torch.set_default_dtype(torch.float32)


# -- parsing ---------------------------------------------------------------------------------


@pytest.mark.parametrize("spec, type_, index", [
    ("cpu", "cpu", None),
    ("cuda", "cuda", None),
    ("cuda:0", "cuda", 0),
    ("cuda:1", "cuda", 1),
    ("cuda:12", "cuda", 12),
    ("meta", "meta", None),
    ("cpu:0", "cpu", 0),
    ("toy", "toy", None),
    ("toy:1", "toy", 1),
])
def test_parse_string(spec, type_, index):
    d = torch.device(spec)
    assert d.type == type_
    assert d.index == index
    assert str(d) == spec
    if index is None:
        assert repr(d) == f"device(type='{type_}')"
    else:
        assert repr(d) == f"device(type='{type_}', index={index})"


def test_type_and_index_arguments():
    d = torch.device("cuda", 1)
    assert (d.type, d.index) == ("cuda", 1)
    assert torch.device("cuda", index=3).index == 3
    assert torch.device(type="cuda", index=2) == torch.device("cuda:2")
    assert torch.device("cpu", 0) == torch.device("cpu:0")


def test_device_of_a_device_is_equal():
    d = torch.device("cuda:1")
    again = torch.device(d)
    assert again == d
    assert (again.type, again.index) == ("cuda", 1)


def test_bare_ordinal_is_a_cuda_index():
    d = torch.device(0)
    assert (d.type, d.index) == ("cuda", 0)
    assert torch.device(2) == torch.device("cuda:2")


def test_equality_and_hashing():
    assert torch.device("cuda") != torch.device("cuda:0")
    assert torch.device("cuda:0") != torch.device("cuda:1")
    assert torch.device("cpu") != torch.device("meta")
    assert torch.device("cuda:1") == torch.device("cuda", 1)
    assert hash(torch.device("cuda:1")) == hash(torch.device("cuda", 1))
    assert len({torch.device("cuda"), torch.device("cuda:0"), torch.device("cuda", 0),
                torch.device("cpu"), torch.device("cpu")}) == 3


def test_pickle_round_trip():
    for spec in ("cpu", "cuda:1", "meta", "toy:1"):
        d = torch.device(spec)
        assert pickle.loads(pickle.dumps(d)) == d


def test_device_class_lives_in_torch():
    assert torch.device.__module__ == "torch"
    assert isinstance(torch.device("cpu"), torch.device)


# -- errors ----------------------------------------------------------------------------------


def test_unknown_type_lists_known_types():
    with pytest.raises(RuntimeError) as info:
        torch.device("foo")
    msg = str(info.value)
    assert "foo" in msg
    for known in ("cpu", "cuda", "meta", "toy"):
        assert known in msg


@pytest.mark.parametrize("spec", ["cuda:-1", "cuda:x", "cuda:", "cuda:1:2", "cuda:1.5"])
def test_invalid_index_string(spec):
    with pytest.raises(RuntimeError, match="Invalid device string"):
        torch.device(spec)


def test_index_in_string_and_argument():
    with pytest.raises(RuntimeError, match="must not include an index"):
        torch.device("cuda:1", 1)
    with pytest.raises(RuntimeError, match="must not include an index"):
        torch.device("cuda:1", index=0)


def test_negative_index():
    with pytest.raises(RuntimeError, match="negative"):
        torch.device("cuda", -1)
    with pytest.raises(RuntimeError, match="negative"):
        torch.device(-1)


@pytest.mark.parametrize("bad", [None, 1.5, [0], True])
def test_invalid_argument_types(bad):
    with pytest.raises(TypeError):
        torch.device(bad)


def test_non_int_index():
    assert torch.device("cuda", 1).index == 1  # an equal-comparing cached key must not leak
    with pytest.raises(TypeError):
        torch.device("cuda", 1.0)
    with pytest.raises(TypeError):
        torch.device("cuda", True)


# -- the default device ----------------------------------------------------------------------


def test_default_device_is_cpu():
    assert torch.get_default_device() == torch.device("cpu")
    assert torch.empty(2).device == torch.device("cpu")
    assert torch.empty(2).device.index is None


def test_context_manager_sets_default_for_factories():
    with torch.device("meta") as d:
        assert d == torch.device("meta")
        assert torch.get_default_device() == torch.device("meta")
        for t in (torch.empty(2), torch.zeros(2), torch.ones(2, 3), torch.full((2,), 1.0),
                  torch.tensor([1.0, 2.0])):
            assert t.device.type == "meta"
        # an explicit device wins over the context
        assert torch.zeros(2, device="cpu").device.type == "cpu"
    assert torch.empty(2).device.type == "cpu"


def test_context_managers_nest():
    with torch.device("meta"):
        with torch.device("cpu"):
            assert torch.empty(1).device.type == "cpu"
            with torch.device("meta"):
                assert torch.empty(1).device.type == "meta"
            assert torch.empty(1).device.type == "cpu"
        assert torch.empty(1).device.type == "meta"
    assert torch.empty(1).device.type == "cpu"


def test_context_is_restored_after_an_exception():
    with pytest.raises(ValueError), torch.device("meta"):
        raise ValueError("boom")
    assert torch.empty(1).device.type == "cpu"


def test_set_default_device_and_context_precedence(restore_defaults):
    torch.set_default_device("meta")
    assert torch.get_default_device() == torch.device("meta")
    assert torch.zeros(3).device.type == "meta"
    with torch.device("cpu"):
        assert torch.zeros(3).device.type == "cpu"  # the context wins
    assert torch.zeros(3).device.type == "meta"
    torch.set_default_device("cpu")
    assert torch.zeros(3).device.type == "cpu"
    torch.set_default_device("meta")
    torch.set_default_device(None)
    assert torch.zeros(3).device.type == "cpu"


def test_the_default_device_is_per_thread_and_the_default_dtype_process_wide(
        restore_defaults):
    # As in PyTorch: torch.set_default_device is thread-local, torch.set_default_dtype is not.
    seen = {}

    def probe():
        seen["dtype"] = torch.get_default_dtype()
        seen["device"] = torch.get_default_device()
        seen["tensor"] = (torch.ones(2).dtype, torch.ones(2).device.type)

    torch.set_default_device("meta")
    torch.set_default_dtype(torch.float64)
    with torch.device("meta"):
        worker = threading.Thread(target=probe)
        worker.start()
        worker.join()
        assert torch.ones(2).dtype is torch.float64
    assert seen == {"dtype": torch.float64, "device": torch.device("cpu"),
                    "tensor": (torch.float64, "cpu")}


def test_a_device_set_in_a_thread_stays_there_and_a_dtype_does_not(restore_defaults):
    def worker():
        torch.set_default_device("meta")
        torch.set_default_dtype(torch.float64)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert torch.get_default_device() == torch.device("cpu")
    assert torch.zeros(1).device.type == "cpu"
    assert torch.get_default_dtype() is torch.float64 and torch.zeros(1).dtype is torch.float64


# -- devices without a backend ---------------------------------------------------------------


def test_cuda_without_backend_or_driver_says_so():
    try:
        t = torch.empty(2, device="cuda")
    except RuntimeError as exc:
        msg = str(exc)
        assert "plait-backend-cuda" in msg or "no CUDA driver" in msg
    else:  # a working CUDA backend and driver: the tensor lands on the current device
        assert t.device.type == "cuda"
        assert t.device.index is not None


def test_parsing_does_not_need_a_backend():
    # "cuda" parses whether or not a CUDA backend is installed
    assert torch.device("cuda:3").index == 3
    assert torch.device("xpu").type == "xpu"
    assert torch.device("mps").type == "mps"


# -- plugin device: toy ----------------------------------------------------------------------


def test_toy_tensors_get_index_zero():
    t = torch.tensor([1.0, 2.0], device="toy")
    assert t.device == torch.device("toy:0")
    assert str(t.device) == "toy:0"
    assert t.device.index == 0
    assert torch.zeros(2, device="toy").device == torch.device("toy", 0)
    assert torch.zeros(2, device="toy:1").device == torch.device("toy:1")
    assert not t.is_cpu and not t.is_cuda and not t.is_meta


def test_toy_context_manager():
    with torch.device("toy"):
        t = torch.zeros(2)
    assert t.device == torch.device("toy:0")


# -- meta ------------------------------------------------------------------------------------


def test_meta_tensors_have_metadata_but_no_data():
    t = torch.empty(2, 3, device="meta")
    assert t.is_meta
    assert t.device == torch.device("meta")
    assert t.device.index is None
    assert t.shape == (2, 3)
    assert t.stride() == (3, 1)
    assert t.dtype is torch.float32
    v = t.t()[1:]
    assert v.shape == (2, 2)
    assert v.stride() == (1, 3)
    assert v.storage_offset() == 1
    with pytest.raises(NotImplementedError, match="meta"):
        t.tolist()
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        t[0, 0].item()  # PyTorch's error
    with pytest.raises(TypeError):
        t.numpy()


def test_meta_arithmetic_computes_shapes_and_dtypes():
    a = torch.empty(2, 1, device="meta", dtype=torch.int32)
    b = torch.empty(3, device="meta", dtype=torch.float16)
    out = a + b
    assert out.is_meta
    assert out.shape == (2, 3)
    assert out.dtype is torch.float16
    s = out.sum(0)
    assert s.is_meta
    assert s.shape == (3,)


def test_to_meta_keeps_shape_and_dtype():
    t = torch.ones(2, 3, dtype=torch.float64).to("meta")
    assert t.is_meta
    assert t.shape == (2, 3)
    assert t.dtype is torch.float64
