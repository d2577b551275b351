"""torch.save / torch.load: PyTorch's zip checkpoint format, both directions.

Files under tests/data/serialization/ were written by real PyTorch 2.13 (make_files.py there);
the values they hold are spelled out here. Files written by Plait are read back by real PyTorch
when PLAIT_REAL_TORCH_PYTHON names a Python that has it.
"""

from __future__ import annotations

import io
import json
import math
import os
import pathlib
import pickle
import struct
import subprocess
import sys
import textwrap
import zipfile
from collections import Counter, OrderedDict

import numpy as np
import pytest

import torch

DATA = pathlib.Path(__file__).parent / "data" / "serialization"


def roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kwargs)


def layout(t):
    return (t.dtype, tuple(t.shape), t.stride(), t.storage_offset())


# -- round trips in Plait ----------------------------------------------------------------------

DTYPE_VALUES = [
    (torch.bool, [True, False, True]),
    (torch.uint8, [0, 7, 255]),
    (torch.int8, [-128, 0, 127]),
    (torch.int16, [-32768, 1, 32767]),
    (torch.int32, [-(2**31), 2, 2**31 - 1]),
    (torch.int64, [-(2**63), 3, 2**63 - 1]),
    (torch.float16, [0.5, -65504.0, math.inf]),
    (torch.bfloat16, [1.0, -2.0**100, 0.0078125]),  # exactly representable in bfloat16
    (torch.float32, [1.5, -2.25, 2.0**-100]),
    (torch.float64, [1e-300, -2.5, 1e300]),
    (torch.complex64, [1 + 2j, -3.5j]),
    (torch.complex128, [0.25 - 1j]),
]


@pytest.mark.parametrize("dtype,values", DTYPE_VALUES, ids=lambda v: str(v))
def test_roundtrip_every_dtype(dtype, values):
    t = torch.tensor(values, dtype=dtype)
    back = roundtrip(t)
    assert back.dtype is dtype
    assert back.shape == (len(values),)
    assert back.tolist() == values


def test_roundtrip_nan_bits():
    back = roundtrip(torch.tensor([math.nan, -0.0], dtype=torch.float64))
    got = back.tolist()
    assert math.isnan(got[0]) and math.copysign(1.0, got[1]) == -1.0


def test_views_share_storage_after_load():
    base = torch.tensor([[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]])
    obj = {"base": base, "col": base[:, 1], "t": base.t(), "tail": base[1:, 2:],
           "row": base[2]}
    back = roundtrip(obj)
    for name in obj:
        assert layout(back[name]) == layout(obj[name]), name
        assert back[name].tolist() == obj[name].tolist(), name
        assert back[name].untyped_storage() is back["base"].untyped_storage(), name
    # one storage in the file, and writes through one view show through the others
    back["col"].copy_(torch.tensor([-1.0, -2.0, -3.0]))
    assert back["base"][:, 1].tolist() == [-1.0, -2.0, -3.0]
    assert back["t"][1].tolist() == [-1.0, -2.0, -3.0]


def test_one_record_per_storage():
    base = torch.tensor([1.0, 2.0, 3.0, 4.0])
    buf = io.BytesIO()
    torch.save([base, base[1:], base[::2], torch.tensor([5.0])], buf)
    names = zipfile.ZipFile(buf).namelist()
    assert sorted(n for n in names if "/data/" in n) == ["archive/data/0", "archive/data/1"]


def test_zero_size_zero_dim_and_expanded():
    obj = [torch.zeros(0, 3), torch.tensor(7, dtype=torch.int32),
           torch.tensor([1.0, 2.0]).expand(3, 2)]
    back = roundtrip(obj)
    assert [layout(t) for t in back] == [layout(t) for t in obj]
    assert back[1].tolist() == 7
    assert back[2].tolist() == [[1.0, 2.0]] * 3


def test_containers_and_python_values():
    obj = OrderedDict([
        ("list", [1, 2.5, "three", None, True, -(2**70)]),
        ("tuple", (b"raw", 1 + 2j, bytearray(b"ba"))),
        ("nested", {"a": [{"b": (torch.tensor([1, 2]),)}]}),
        ("size", torch.Size([2, 3])),
        ("dtype", torch.bfloat16),
        ("device", torch.device("cpu")),
        ("set", {3, 4}),
        ("counter", Counter("aab")),
        ("layout", torch.strided),
    ])
    back = roundtrip(obj)
    assert type(back) is OrderedDict and list(back) == list(obj)
    assert back["list"] == obj["list"]
    assert back["tuple"] == obj["tuple"]
    assert back["nested"]["a"][0]["b"][0].tolist() == [1, 2]
    assert back["size"] == (2, 3) and type(back["size"]) is torch.Size
    assert back["dtype"] is torch.bfloat16
    assert back["device"] == torch.device("cpu")
    assert back["set"] == {3, 4}
    assert back["counter"] == Counter({"a": 2, "b": 1})
    assert back["layout"] is torch.strided


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_every_pickle_protocol_loads_weights_only(protocol):
    # protocols 4 and 5 use STACK_GLOBAL, MEMOIZE and FRAME: the weights-only machine reads them
    t = torch.arange(6.0).reshape(2, 3).t()
    t.note = "n"
    obj = OrderedDict(t=t, u=torch.tensor([7], dtype=torch.uint32), b=[b"raw", 1 + 2j, None],
                      s={1, 2}, c=Counter("aab"), size=torch.Size([2]), ba=bytearray(b"q"))
    buf = io.BytesIO()
    torch.save(obj, buf, pickle_protocol=protocol)
    buf.seek(0)
    back = torch.load(buf)
    assert layout(back["t"]) == layout(t) and back["t"].tolist() == t.tolist()
    assert back["t"].note == "n" and back["u"].tolist() == [7]
    assert (back["b"], back["s"], back["c"]) == ([b"raw", 1 + 2j, None], {1, 2}, Counter("aab"))
    assert back["size"] == (2,) and back["ba"] == bytearray(b"q")


def test_requires_grad_and_python_attributes():
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    plain = torch.tensor([3.0])
    plain.note = "kept"
    back = roundtrip([t, plain])
    assert back[0].requires_grad and back[0].is_leaf
    assert not back[1].requires_grad and back[1].note == "kept"


def test_bare_storages():
    t = torch.tensor([1.0, 2.0])
    back = roundtrip({"u": t.untyped_storage(), "n": 3})
    # PyTorch loads a bare storage as uint8 elements; the bytes are float32 1.0 and 2.0
    assert back["u"].dtype is torch.uint8 and len(back["u"]) == 8
    assert back["u"].tolist() == list(np.array([1.0, 2.0], np.float32).view(np.uint8))


def test_same_tensor_twice_is_one_object():
    t = torch.tensor([1.0])
    back = roundtrip({"a": t, "b": t})
    assert back["a"] is back["b"]


def test_meta_tensor_saves_without_data():
    back = roundtrip(torch.empty(2, 3, device="meta"))
    assert back.device == torch.device("meta")
    assert layout(back) == (torch.float32, (2, 3), (3, 1), 0)


# -- files, paths, archive layout ----------------------------------------------------------


def test_path_str_and_file_objects(tmp_path):
    t = torch.tensor([1, 2, 3])
    torch.save(t, tmp_path / "p.pt")
    torch.save(t, str(tmp_path / "s.pt"))
    with open(tmp_path / "f.pt", "wb") as fh:
        torch.save(t, fh)
    for name in ("p.pt", "s.pt", "f.pt"):
        assert torch.load(tmp_path / name).tolist() == [1, 2, 3]
        assert torch.load(str(tmp_path / name)).tolist() == [1, 2, 3]
        with open(tmp_path / name, "rb") as fh:
            assert torch.load(fh).tolist() == [1, 2, 3]


class _WriteOnly:
    """A sink with only write(): no seek or tell (a pipe or a socket)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def write(self, data) -> int:
        self.chunks.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass


class _ReadOnly:
    def __init__(self, data: bytes) -> None:
        self._buf = io.BytesIO(data)

    def read(self, n: int = -1) -> bytes:
        return self._buf.read(n)


def test_unseekable_streams():
    sink = _WriteOnly()
    torch.save({"x": torch.tensor([[1.0, 2.0]])}, sink)
    data = b"".join(sink.chunks)
    assert torch.load(_ReadOnly(data))["x"].tolist() == [[1.0, 2.0]]


def test_archive_records_and_alignment(tmp_path):
    path = tmp_path / "model.ckpt"
    torch.save({"a": torch.tensor([1.0, 2.0]), "b": torch.tensor([1, 2, 3], dtype=torch.int8)},
               path)
    raw = path.read_bytes()
    archive = zipfile.ZipFile(path)
    names = archive.namelist()
    assert names[0] == "model/data.pkl"  # the archive folder is the file's stem
    assert {"model/version", "model/byteorder", "model/data/0", "model/data/1",
            "model/.format_version", "model/.storage_alignment"} <= set(names)
    assert archive.read("model/version") == b"3\n"
    assert archive.read("model/byteorder") == sys.byteorder.encode()
    for info in archive.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:
                                                       info.header_offset + 30])
        start = info.header_offset + 30 + name_len + extra_len
        assert start % 64 == 0, info.filename
    assert np.frombuffer(archive.read("model/data/0"), np.float32).tolist() == [1.0, 2.0]
    assert np.frombuffer(archive.read("model/data/1"), np.int8).tolist() == [1, 2, 3]
    # the persistent ids name PyTorch's storage classes
    pkl = archive.read("model/data.pkl")
    assert b"FloatStorage" in pkl and b"CharStorage" in pkl and b"_rebuild_tensor_v2" in pkl


def test_big_endian_checkpoint_is_swapped(tmp_path):
    buf = io.BytesIO()
    torch.save(torch.tensor([1.5, -2.0], dtype=torch.float64), buf)
    src = zipfile.ZipFile(buf)
    path = tmp_path / "big.pt"
    with zipfile.ZipFile(path, "w") as out:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("byteorder"):
                data = b"big"
            elif name.endswith("data/0"):
                data = np.array([1.5, -2.0], ">f8").tobytes()
            out.writestr(name, data)
    assert torch.load(path).tolist() == [1.5, -2.0]


# -- files written by real PyTorch ---------------------------------------------------------


def test_reads_pytorch_dtypes_file():
    r = torch.load(DATA / "dtypes.pt")
    for dtype, values in [
        (torch.bool, [True, False, True]),
        (torch.uint8, [0, 7, 255]),
        (torch.int8, [-128, 0, 127]),
        (torch.int16, [-32768, 1, 32767]),
        (torch.int32, [-(2**31), 2, 2**31 - 1]),
        (torch.int64, [-(2**63), 3, 2**63 - 1]),
        (torch.float16, [0.5, -65504.0, math.inf]),
        (torch.complex64, [1 + 2j, -3.5j]),
        (torch.complex128, [0.25 - 1j]),
    ]:
        name = str(dtype).removeprefix("torch.")
        assert r[name].dtype is dtype and r[name].tolist() == values, name
    # -3.0e38 rounds to bfloat16 0xFF62: -(1 + 98/128) * 2**127
    assert r["bfloat16"].tolist() == [1.0, -(1 + 98 / 128) * 2.0**127, 0.0078125]
    f64 = r["float64"].tolist()
    assert f64[:2] == [1e-300, -2.5] and math.isnan(f64[2])
    base = [[0.0, 1.5, -2.25, 3.0], [4.0, -5.5, 6.0, 7.125], [8.0, 9.0, 10.0, 11.0]]
    assert r["float32"].tolist() == base
    assert layout(r["column"]) == (torch.float32, (3,), (4,), 1)
    assert r["column"].tolist() == [1.5, -5.5, 9.0]
    assert layout(r["transposed"]) == (torch.float32, (4, 3), (1, 4), 0)
    assert r["transposed"].tolist() == [list(c) for c in zip(*base)]
    assert layout(r["narrow"]) == (torch.float32, (2, 2), (4, 1), 6)
    assert r["narrow"].tolist() == [[6.0, 7.125], [10.0, 11.0]]
    for view in ("column", "transposed", "narrow"):
        assert r[view].untyped_storage() is r["float32"].untyped_storage()
    assert layout(r["expanded"]) == (torch.float32, (3, 2), (0, 1), 0)
    assert r["scalar"].tolist() == 42 and r["scalar"].dim() == 0
    assert tuple(r["empty"].shape) == (0, 3)
    assert r["grad"].requires_grad and r["grad"].tolist() == [1.0, 2.0]
    nested = r["nested"]
    assert isinstance(nested, OrderedDict)
    assert nested["list"] == [1, 2.5, "three", None, True]
    assert nested["tuple"] == (b"raw", 1 + 2j)
    assert nested["size"] == torch.Size([2, 3]) and nested["dtype"] is torch.bfloat16
    assert nested["device"] == torch.device("cpu") and nested["set"] == {3}


def test_reads_pytorch_unsigned_file():
    # uint16/32/64 have no legacy storage class: PyTorch saves them untyped, with
    # _rebuild_tensor_v3 and the dtype as its last argument
    pkl = zipfile.ZipFile(DATA / "unsigned.pt").read("unsigned/data.pkl")
    assert b"_rebuild_tensor_v3" in pkl and b"torch.storage\nUntypedStorage" in pkl
    r = torch.load(DATA / "unsigned.pt")
    assert r["uint16"].dtype is torch.uint16 and r["uint16"].tolist() == [0, 1, 65535]
    assert layout(r["uint32"]) == (torch.uint32, (2, 3), (3, 1), 0)
    assert r["uint32"].tolist() == [[0, 1, 2], [3, 2**32 - 1, 5]]
    assert layout(r["uint32_t"]) == (torch.uint32, (3, 2), (1, 3), 0)
    assert r["uint32_t"].untyped_storage() is r["uint32"].untyped_storage()
    assert layout(r["uint64"]) == (torch.uint64, (2,), (1,), 1)
    assert r["uint64"].tolist() == [0, 2**63]
    assert r["uint64"].untyped_storage().nbytes() == 24
    assert r["float"].tolist() == [1.5]


def test_unsigned_dtypes_roundtrip_as_pytorch_writes_them():
    u64 = torch.tensor([2**64 - 1, 7, 2**63], dtype=torch.uint64)
    obj = {"u16": torch.tensor([[1, 65535]], dtype=torch.uint16),
           "u32": torch.tensor([2**32 - 1], dtype=torch.uint32), "u64": u64, "tail": u64[1:]}
    buf = io.BytesIO()
    torch.save(obj, buf)
    pkl = zipfile.ZipFile(buf).read("archive/data.pkl")
    assert b"torch._utils\n_rebuild_tensor_v3" in pkl
    assert b"torch.storage\nUntypedStorage" in pkl and b"_rebuild_tensor_v2" not in pkl
    buf.seek(0)
    back = torch.load(buf)
    for name, t in obj.items():
        assert layout(back[name]) == layout(t), name
        assert back[name].tolist() == t.tolist(), name
    assert back["tail"].untyped_storage() is back["u64"].untyped_storage()
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64"):
        torch.promote_types(torch.uint16, torch.int32)
    assert torch.promote_types(torch.uint32, torch.float64) is torch.float64
    assert not torch.uint64.is_signed and torch.uint16.itemsize == 2


def _flip_byte_in_record(src: bytes, record: str) -> bytes:
    """``src`` with the first byte of ``record``'s data changed (its CRC no longer matches)."""
    archive = zipfile.ZipFile(io.BytesIO(src))
    info = archive.getinfo(record)
    header = src[info.header_offset:info.header_offset + 30]
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    at = info.header_offset + 30 + name_len + extra_len
    return src[:at] + bytes([src[at] ^ 0xFF]) + src[at + 1:]


@pytest.mark.parametrize("record", ["archive/data/0", "archive/data.pkl"])
def test_crc_error_is_a_runtime_error(tmp_path, record):
    good = io.BytesIO()
    torch.save({"x": torch.tensor([1.0, 2.0, 3.0])}, good)
    bad = _flip_byte_in_record(good.getvalue(), record)
    short = record.removeprefix("archive/")
    with pytest.raises(RuntimeError, match=f"PytorchStreamReader failed reading file "
                                           f"archive/{short}: invalid header or archive is "
                                           f"corrupted") as info:
        torch.load(io.BytesIO(bad))
    assert isinstance(info.value.__cause__, zipfile.BadZipFile)  # the CRC mismatch underneath
    (tmp_path / "bad.pt").write_bytes(bad)
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed"):
        torch.load(tmp_path / "bad.pt", weights_only=False)


def test_reads_pytorch_module_file():
    r = torch.load(DATA / "module.pt")
    sd = r["state_dict"]
    assert list(sd) == ["weight", "bias"]
    assert sd["weight"].tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert sd["bias"].tolist() == [0.5, -0.5]
    assert not sd["weight"].requires_grad
    assert r["param"].requires_grad  # nn.Parameter (a tensor needing grad without plait-nn)
    assert r["param"].tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def test_reads_pytorch_meta_file():
    r = torch.load(DATA / "meta.pt")
    assert r["meta"].device == torch.device("meta") and tuple(r["meta"].shape) == (2, 3)
    assert r["ones"].tolist() == [1.0, 1.0]


def test_unavailable_device_needs_map_location():
    with pytest.raises(RuntimeError, match=r"cuda:0.*map_location"):
        torch.load(DATA / "cuda.pt")


@pytest.mark.parametrize("map_location", [
    "cpu", torch.device("cpu"), {"cuda:0": "cpu"}, lambda storage, loc: storage,
    lambda storage, loc: None if loc == "cpu" else storage.cpu(),
])
def test_map_location_to_cpu(map_location):
    r = torch.load(DATA / "cuda.pt", map_location=map_location)
    assert r["w"].device == torch.device("cpu") and r["w"].tolist() == [1.0, 2.0, 3.0]


def test_map_location_callable_sees_saved_location():
    seen = []
    torch.load(DATA / "cuda.pt", map_location=lambda s, loc: seen.append(loc) or s)
    assert seen == ["cuda:0"]


def test_legacy_format_is_refused_clearly():
    with pytest.raises(RuntimeError, match="legacy"):
        torch.load(DATA / "legacy.pt")
    with pytest.raises(RuntimeError, match="mmap"):
        torch.load(DATA / "legacy.pt", mmap=True)


# -- the toy plugin device -----------------------------------------------------------------


def test_map_location_to_plugin_device():
    r = torch.load(DATA / "dtypes.pt", map_location="toy")
    assert r["float32"].device == torch.device("toy:0")
    assert r["column"].untyped_storage() is r["float32"].untyped_storage()
    assert r["column"].cpu().tolist() == [1.5, -5.5, 9.0]
    r = torch.load(DATA / "cuda.pt", map_location={"cuda:0": "toy:1"})
    assert r["w"].device == torch.device("toy:1")


def test_plugin_device_roundtrip():
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device="toy")
    buf = io.BytesIO()
    torch.save({"t": t, "row": t[1]}, buf)
    assert b"toy:0" in zipfile.ZipFile(buf).read("archive/data.pkl")
    back = torch.load(io.BytesIO(buf.getvalue()))
    assert back["t"].device == torch.device("toy:0")
    assert back["row"].cpu().tolist() == [3.0, 4.0]
    on_cpu = torch.load(io.BytesIO(buf.getvalue()), map_location="cpu")
    assert on_cpu["t"].device == torch.device("cpu") and on_cpu["t"].tolist() == [[1.0, 2.0],
                                                                                 [3.0, 4.0]]


# -- weights_only ----------------------------------------------------------------------------


class _Evil:
    def __init__(self, target: str) -> None:
        self.target = target

    def __reduce__(self):
        return (os.system, (f"touch {self.target}",))


def test_malicious_checkpoint_is_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    torch.save({"w": torch.tensor([1.0]), "x": _Evil(str(marker))}, path)
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals") as info:
        torch.load(path)
    assert f"{os.system.__module__}.system" in str(info.value)
    assert not marker.exists()
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path, weights_only=True, mmap=True)
    assert not marker.exists()
    assert torch.serialization.get_unsafe_globals_in_checkpoint(path) == [
        f"{os.system.__module__}.system"]
    assert not marker.exists()
    # the same file with the full unpickler does run it: the check above would notice
    torch.load(path, weights_only=False)
    assert marker.exists()


def test_non_zip_pickle_is_never_unpickled(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "raw.pkl"
    path.write_bytes(pickle.dumps(_Evil(str(marker)), protocol=2))
    for weights_only in (True, False):
        with pytest.raises(RuntimeError, match="not a PyTorch zip archive"):
            torch.load(path, weights_only=weights_only)
    assert not marker.exists()


class Point:
    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = x, y


def test_safe_globals():
    buf = io.BytesIO()
    torch.save({"p": Point(1, 2), "t": torch.tensor([1])}, buf)
    with pytest.raises(pickle.UnpicklingError, match="Point"):
        torch.load(io.BytesIO(buf.getvalue()))
    with torch.serialization.safe_globals([Point]):
        r = torch.load(io.BytesIO(buf.getvalue()))
    assert (r["p"].x, r["p"].y) == (1, 2)
    with torch.serialization.safe_globals([(Point, f"{__name__}.Point")]):
        assert torch.load(io.BytesIO(buf.getvalue()))["p"].x == 1
    with pytest.raises(pickle.UnpicklingError):  # the context is gone
        torch.load(io.BytesIO(buf.getvalue()))
    try:
        torch.serialization.add_safe_globals([Point])
        assert Point in torch.serialization.get_safe_globals()
        assert torch.load(io.BytesIO(buf.getvalue()))["p"].y == 2
    finally:
        torch.serialization.clear_safe_globals()
    assert torch.serialization.get_safe_globals() == []


def test_pickle_module_means_full_unpickler():
    buf = io.BytesIO()
    torch.save({"p": Point(3, 4)}, buf)
    assert torch.load(io.BytesIO(buf.getvalue()), pickle_module=pickle)["p"].x == 3
    with pytest.raises(RuntimeError, match="pickle_module"):
        torch.load(io.BytesIO(buf.getvalue()), pickle_module=pickle, weights_only=True)


def test_weights_only_checks_tensor_bounds(tmp_path):
    # a crafted checkpoint whose tensor reaches past its 2-element storage
    buf = io.BytesIO()
    torch.save(torch.tensor([1.0, 2.0]), buf)
    src = zipfile.ZipFile(buf)
    pkl = src.read("archive/data.pkl")
    assert b"K\x02\x85" in pkl  # size (2,)
    path = tmp_path / "oob.pt"
    with zipfile.ZipFile(path, "w") as out:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("data.pkl"):
                data = data.replace(b"K\x02\x85", b"K\x09\x85", 1)
            out.writestr(name, data)
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.load(path)


# -- mmap ----------------------------------------------------------------------------------


def _is_file_mapped(t) -> bool:
    arr = t.numpy()
    while arr is not None:
        if isinstance(arr, np.memmap):
            return True
        arr = arr.base if isinstance(arr.base, np.ndarray) else None
    return False


def test_mmap_views_the_file(tmp_path):
    path = tmp_path / "m.pt"
    torch.save({"a": torch.tensor([[1.0, 2.0], [3.0, 4.0]]), "col": None}, path)
    before = path.read_bytes()
    r = torch.load(path, mmap=True)
    assert _is_file_mapped(r["a"])
    assert not _is_file_mapped(torch.load(path)["a"])
    assert r["a"].tolist() == [[1.0, 2.0], [3.0, 4.0]]
    r["a"][0].copy_(torch.tensor([9.0, 9.0]))  # copy-on-write: the file stays as it was
    assert r["a"].tolist() == [[9.0, 9.0], [3.0, 4.0]]
    del r
    assert path.read_bytes() == before
    r = torch.load(DATA / "dtypes.pt", mmap=True)
    assert r["narrow"].tolist() == [[6.0, 7.125], [10.0, 11.0]]


def test_mmap_needs_a_path():
    buf = io.BytesIO()
    torch.save(torch.tensor([1]), buf)
    buf.seek(0)
    with pytest.raises(ValueError, match="file path"):
        torch.load(buf, mmap=True)


# -- errors ----------------------------------------------------------------------------------


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        torch.load(tmp_path / "nope.pt")


def test_corrupt_files(tmp_path):
    good = io.BytesIO()
    torch.save({"x": torch.tensor([1.0, 2.0, 3.0])}, good)
    cases = {
        "garbage.pt": b"this is not a checkpoint at all" * 4,
        "truncated.pt": good.getvalue()[: len(good.getvalue()) // 2],
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(RuntimeError):
            torch.load(tmp_path / name)
    (tmp_path / "empty.pt").write_bytes(b"")
    with pytest.raises(EOFError):
        torch.load(tmp_path / "empty.pt")
    src = zipfile.ZipFile(good)
    with zipfile.ZipFile(tmp_path / "norecord.pt", "w") as out:
        for name in src.namelist():
            if "/data/" not in name:
                out.writestr(name, src.read(name))
    with pytest.raises(RuntimeError, match="missing"):
        torch.load(tmp_path / "norecord.pt")


def test_save_errors(tmp_path):
    with pytest.raises(RuntimeError, match="Parent directory"):
        torch.save(torch.tensor([1]), tmp_path / "no" / "such" / "dir.pt")
    x = torch.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="different types"):
        torch.save([x, x.view(torch.int32)], io.BytesIO())
    with pytest.raises(RuntimeError, match="legacy"):
        torch.save(x, io.BytesIO(), _use_new_zipfile_serialization=False)


# -- real PyTorch reads Plait's files --------------------------------------------------------

_REAL_READER = textwrap.dedent("""
    import json, sys, torch
    r = torch.load(sys.argv[1])  # weights_only=True: only allowed globals
    def desc(t):
        vals = t.to(torch.float64).tolist() if t.dtype == torch.bfloat16 else t.tolist()
        if t.is_complex():
            vals = [[v.real, v.imag] for v in vals]
        return [str(t.dtype), list(t.shape), list(t.stride()), t.storage_offset(), vals,
                t.requires_grad, t.untyped_storage().data_ptr()]
    out = {k: desc(v) for k, v in r.items() if isinstance(v, torch.Tensor)}
    out["__other__"] = [type(r["other"]).__name__, repr(dict(r["other"]))]
    print(json.dumps(out))
""")


def test_real_pytorch_reads_plait_files(tmp_path):
    real = os.environ.get("PLAIT_REAL_TORCH_PYTHON")
    if not real:
        pytest.skip("PLAIT_REAL_TORCH_PYTHON is not set (the parity session points it at a "
                    "Python with real PyTorch)")
    base = torch.tensor([[0.0, 1.5, -2.25], [3.0, 4.0, 5.0]])
    obj = {name: torch.tensor(values, dtype=dtype)
           for (dtype, values), name in zip(DTYPE_VALUES, map(str, range(len(DTYPE_VALUES))))}
    obj.update({"base": base, "col": base[:, 1], "t": base.t(), "scalar": torch.tensor(5),
                "empty": torch.zeros(0, 2), "grad": torch.tensor([1.0], requires_grad=True),
                "u16": torch.tensor([1, 65535], dtype=torch.uint16),
                "u64": torch.tensor([2**64 - 1, 5], dtype=torch.uint64)[1:],
                "other": OrderedDict(a=[1, "s", None, (2.5, b"b")], d=torch.float16,
                                     s=torch.Size([1, 2]))})
    path = tmp_path / "plait.pt"
    torch.save(obj, path)
    proc = subprocess.run([real, "-c", _REAL_READER, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, t in obj.items():
        if not isinstance(t, torch.Tensor):
            continue
        dtype, shape, stride, offset, vals, requires_grad, _ptr = got[name]
        assert (dtype, tuple(shape), tuple(stride), offset) == (
            str(t.dtype), tuple(t.shape), t.stride(), t.storage_offset()), name
        expected = t.tolist()
        if t.is_complex():
            expected = [[v.real, v.imag] for v in expected]
        if t.dtype.is_floating_point:
            assert np.array_equal(np.array(vals, float), np.array(expected, float)), name
        else:
            assert vals == expected, name
        assert requires_grad == t.requires_grad, name
    assert got["col"][6] == got["base"][6] == got["t"][6]  # one shared storage
    assert got["__other__"] == ["OrderedDict", "{'a': [1, 's', None, (2.5, b'b')], "
                                "'d': torch.float16, 's': torch.Size([1, 2])}"]
