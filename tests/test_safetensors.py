"""``torch.utils.safetensors``: round trips of every dtype and shape, files exchanged with the
``safetensors`` package's numpy front end, models with tied weights, and the errors."""

import sys

import numpy as np
import pytest

import torch

safetensors = pytest.importorskip(
    "safetensors", reason="torch.utils.safetensors needs the optional 'safetensors' package")
import safetensors.numpy as stnp  # noqa: E402

from torch.utils import safetensors as S  # noqa: E402

DTYPES = [torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
          torch.int16, torch.int8, torch.uint8, torch.bool, torch.complex64]
NUMPY_DTYPES = [d for d in DTYPES if d != torch.bfloat16]
SHAPES = [(), (0,), (0, 3), (1,), (2, 3), (2, 3, 4)]


def _sample(shape: tuple, dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape) * 50
    if dtype == torch.bool:
        values = values > 0
    elif dtype == torch.complex64:
        values = (values + 1j * rng.standard_normal(shape)).astype(np.complex64)
    # np.array: a 0-d draw comes back as a numpy scalar, not an array
    return torch.from_numpy(np.array(values)).to(dtype)


def _bits(t: torch.Tensor) -> bytes:
    """The raw bytes of ``t`` (so NaNs and bfloat16 compare exactly)."""
    t = t.contiguous()
    return (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape) and _bits(a) == _bits(b)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_bytes_round_trip_every_dtype_and_shape(dtype):
    tensors = {f"t{i}": _sample(shape, dtype, i) for i, shape in enumerate(SHAPES)}
    loaded = S.load(S.save(tensors))
    assert sorted(loaded) == sorted(tensors)
    for name, t in tensors.items():
        assert _same(loaded[name], t), name


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_file_round_trip_every_dtype(tmp_path, dtype):
    tensors = {"w": _sample((3, 5), dtype), "s": _sample((), dtype, 1),
               "e": _sample((0, 2), dtype)}
    path = tmp_path / "t.safetensors"
    S.save_file(tensors, path)
    loaded = S.load_file(str(path), device="cpu")
    for name, t in tensors.items():
        assert _same(loaded[name], t), name
        assert loaded[name].device.type == "cpu"


def test_special_float_values_survive():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 1e-40])
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        t = x.to(dtype)
        assert _same(S.load(S.save({"x": t}))["x"], t)


def test_loaded_tensors_own_writable_memory():
    a = torch.arange(6.0)
    loaded = S.load(S.save({"a": a}))
    loaded["a"].add_(1)
    assert loaded["a"].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_requires_grad_tensor_is_saved_as_data():
    p = torch.nn.Parameter(torch.tensor([1.5, -2.0]))
    loaded = S.load(S.save({"p": p}))["p"]
    assert loaded.tolist() == [1.5, -2.0]
    assert not loaded.requires_grad


def test_non_contiguous_input_is_refused_and_contiguous_copy_round_trips():
    x = _sample((3, 4), torch.float32)
    with pytest.raises(ValueError, match="non contiguous tensor: `x`"):
        S.save({"x": x.t()})
    assert _same(S.load(S.save({"x": x.t().contiguous()}))["x"], x.t().contiguous())
    # a slice of the leading dim is contiguous, but starts inside its storage
    assert _same(S.load(S.save({"x": x[1:]}))["x"], x[1:].contiguous())


def test_disjoint_views_of_one_storage_are_not_shared():
    x = torch.arange(10.0)
    loaded = S.load(S.save({"lo": x[:4], "hi": x[4:]}))
    assert loaded["lo"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert loaded["hi"].tolist() == [4.0, 5.0, 6.0, 7.0, 8.0, 9.0]


def test_metadata_round_trip(tmp_path):
    path = tmp_path / "m.safetensors"
    S.save_file({"a": torch.ones(2)}, path, metadata={"format": "pt", "note": "é"})
    with safetensors.safe_open(str(path), framework="np") as f:
        assert f.metadata() == {"format": "pt", "note": "é"}
    data = S.save({"a": torch.ones(2)}, metadata={"k": "v"})
    assert S.load(data)["a"].tolist() == [1.0, 1.0]


# --------------------------------------------------------------------------- numpy front end


@pytest.mark.parametrize("dtype", NUMPY_DTYPES, ids=str)
def test_files_are_readable_by_safetensors_numpy(tmp_path, dtype):
    tensors = {"a": _sample((2, 3), dtype), "b": _sample((), dtype, 1), "c": _sample((0,), dtype)}
    path = tmp_path / "plait.safetensors"
    S.save_file(tensors, path)
    arrays = stnp.load_file(str(path))
    for name, t in tensors.items():
        assert arrays[name].shape == tuple(t.shape)
        assert arrays[name].tobytes() == t.numpy().tobytes()
    arrays = stnp.load(S.save(tensors))
    assert arrays["a"].tobytes() == tensors["a"].numpy().tobytes()


def test_bfloat16_bytes_match_the_raw_file():
    t = _sample((4,), torch.bfloat16)
    (name, view), = safetensors.deserialize(S.save({"x": t}))
    assert (name, view["dtype"], view["shape"]) == ("x", "BF16", [4])
    assert bytes(view["data"]) == _bits(t)


def test_files_written_by_safetensors_numpy_load(tmp_path):
    rng = np.random.default_rng(3)
    arrays = {"f64": rng.standard_normal((2, 3)), "f32": rng.standard_normal(4).astype(np.float32),
              "f16": rng.standard_normal(3).astype(np.float16),
              "i64": rng.integers(-9, 9, (3,)), "i8": rng.integers(-9, 9, (2, 2)).astype(np.int8),
              "u8": rng.integers(0, 255, (5,)).astype(np.uint8), "b": rng.random(4) > 0.5,
              "c64": (rng.standard_normal(2) + 1j).astype(np.complex64),
              "scalar": np.array(7, np.int32), "empty": np.zeros((0, 4), np.float32)}
    path = tmp_path / "np.safetensors"
    stnp.save_file(arrays, str(path))
    loaded = S.load_file(path)
    for name, arr in arrays.items():
        assert tuple(loaded[name].shape) == arr.shape, name
        np.testing.assert_array_equal(loaded[name].numpy(), arr)
        assert loaded[name].numpy().dtype == arr.dtype
    assert S.load(stnp.save(arrays))["f32"].numpy().tobytes() == arrays["f32"].tobytes()


def test_dtype_without_plait_counterpart_is_reported():
    data = stnp.save({"u": np.arange(3, dtype=np.uint16)})
    with pytest.raises(TypeError, match="`u` has safetensors dtype U16"):
        S.load(data)


# --------------------------------------------------------------------------- models


class _Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(5, 3)
        self.head = torch.nn.Linear(3, 5)
        self.head.weight = self.embed.weight


def _net() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                               torch.nn.Linear(4, 2))


def test_model_round_trip(tmp_path):
    torch.manual_seed(0)
    src = _net()
    src(torch.randn(6, 3))  # moves the BatchNorm running stats off their initial values
    path = tmp_path / "net.safetensors"
    S.save_model(src, path)
    dst = _net()
    assert S.load_model(dst, path) == ([], [])
    for name, value in src.state_dict().items():
        assert _same(dst.state_dict()[name], value), name
    assert dst[1].num_batches_tracked.item() == 1


def test_tied_weights_are_stored_once_and_tied_back(tmp_path):
    torch.manual_seed(0)
    src = _Tied()
    path = tmp_path / "tied.safetensors"
    S.save_model(src, path, metadata={"user": "entry"})
    with safetensors.safe_open(str(path), framework="np") as f:
        assert sorted(f.keys()) == ["embed.weight", "head.bias"]
        assert f.metadata() == {"user": "entry", "head.weight": "embed.weight"}
    dst = _Tied()
    assert S.load_model(dst, path) == ([], [])
    assert dst.head.weight is dst.embed.weight
    assert torch.equal(dst.embed.weight, src.embed.weight)
    assert torch.equal(dst.head.bias, src.head.bias)


def test_plain_save_file_refuses_tied_state_dict(tmp_path):
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        S.save_file(_Tied().state_dict(), tmp_path / "x.safetensors")
    x = torch.arange(6.0)
    with pytest.raises(RuntimeError, match="share memory"):
        S.save({"a": x, "b": x.view(2, 3)})
    with pytest.raises(RuntimeError, match="share memory"):
        S.save({"a": x[:4], "b": x[3:]})  # overlap in one element


def test_save_model_makes_entries_contiguous(tmp_path):
    model = torch.nn.Linear(3, 2)
    with torch.no_grad():
        model.weight = torch.nn.Parameter(torch.randn(3, 2).t())  # a transposed view
    path = tmp_path / "nc.safetensors"
    with pytest.raises(ValueError, match="force_contiguous=True"):
        S.save_model(model, path, force_contiguous=False)
    S.save_model(model, path)
    assert torch.equal(S.load_file(path)["weight"], model.weight.detach())


def test_load_model_strict_and_lenient(tmp_path):
    path = tmp_path / "lin.safetensors"
    S.save_file({"weight": torch.ones(2, 3), "extra": torch.zeros(1)}, path)
    model = torch.nn.Linear(3, 2)
    with pytest.raises(RuntimeError) as info:
        S.load_model(model, path)
    assert str(info.value) == ('Error(s) in loading state_dict for Linear:\n'
                               '    Missing key(s) in state_dict: "bias"\n'
                               '    Unexpected key(s) in state_dict: "extra"')
    assert S.load_model(model, path, strict=False) == (["bias"], ["extra"])
    assert model.weight.tolist() == [[1.0] * 3] * 2


def test_load_model_reports_a_tied_copy_in_the_file_as_unexpected(tmp_path):
    src = _Tied()
    path = tmp_path / "both.safetensors"
    state = {k: v.detach().clone() for k, v in src.state_dict().items()}
    S.save_file(state, path)  # clones: both tied names are in the file
    assert S.load_model(_Tied(), path, strict=False) == ([], ["head.weight"])


# --------------------------------------------------------------------------- errors


def test_argument_errors():
    with pytest.raises(ValueError, match="Expected a dict"):
        S.save([torch.ones(1)])
    with pytest.raises(ValueError, match="Key `a` is invalid"):
        S.save({"a": np.ones(2)})
    with pytest.raises(TypeError, match="complex128"):
        S.save({"a": torch.zeros(2, dtype=torch.complex128)})
    with pytest.raises(TypeError, match="str to str"):
        S.save({"a": torch.ones(1)}, metadata={"k": 1})
    with pytest.raises(TypeError, match="str to str"):
        S.save({"a": torch.ones(1)}, metadata="k")
    with pytest.raises(safetensors.SafetensorError):
        S.load(b"not a safetensors file")


def test_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)  # makes ``import safetensors`` fail
    with pytest.raises(ModuleNotFoundError, match="pip install safetensors"):
        S.save({"a": torch.ones(1)})
