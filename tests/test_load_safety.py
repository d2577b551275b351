"""torch.load of crafted and damaged files: what a checkpoint can and cannot do.

The rules under test (packages/core/README.md, "Safe loading"): a checkpoint restores a tensor's
Python attributes but never its internal fields; every tensor it describes lies inside the
storage it views (checked with or without weights_only); storages come only from the archive's
records; the weights-only machine calls, builds and fills only what is safe; a bad file fails
with pickle.UnpicklingError or RuntimeError (EOFError for an empty file), never anything else and
never a crash.

Crafted files are assembled here by hand, opcode by opcode (protocol 2, as torch.save writes),
so each test states exactly what the file asks for. The fuzz tests mutate real checkpoints (the
files real PyTorch 2.13 wrote under tests/data/serialization/ and files Plait writes) and build
random pickles over the allowlisted globals; every object that loads is checked and run through
arithmetic. In-bounds checks in this file are the test's own arithmetic, not the loader's.
"""

from __future__ import annotations

import copy
import io
import os
import pathlib
import pickle
import random
import struct
import subprocess
import sys
import tempfile
import textwrap
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import torch

DATA = pathlib.Path(__file__).parent / "data" / "serialization"
FUZZ = settings(derandomize=True, deadline=None, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
LOAD_ERRORS = (pickle.UnpicklingError, RuntimeError)

# -- a protocol-2 pickle assembler -------------------------------------------------------------

MARK, TUPLE, REDUCE, BUILD, NEWOBJ, BINPERSID = b"(", b"t", b"R", b"b", b"\x81", b"Q"
EMPTY_DICT, EMPTY_LIST, SETITEMS, APPENDS, STOP = b"}", b"]", b"u", b"e", b"."


def glob(full_name: str) -> bytes:
    module, name = full_name.rsplit(".", 1)
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def prim(value) -> bytes:
    """The opcodes that push ``value`` (an int, float, str, bool or None)."""
    return pickle.dumps(value, protocol=2)[2:-1]


def tup(*items: bytes) -> bytes:
    return MARK + b"".join(items) + TUPLE


def lst(*items: bytes) -> bytes:
    return EMPTY_LIST + MARK + b"".join(items) + APPENDS


def dct(*pairs: tuple[bytes, bytes]) -> bytes:
    return EMPTY_DICT + MARK + b"".join(k + v for k, v in pairs) + SETITEMS


def call(func: str | bytes, *args: bytes) -> bytes:
    return (glob(func) if isinstance(func, str) else func) + tup(*args) + REDUCE


def build(obj: bytes, state: bytes) -> bytes:
    return obj + state + BUILD


def pid(storage_type: str, key: str, numel: int, location: str = "cpu") -> bytes:
    return tup(prim("storage"), glob(storage_type), prim(key), prim(location),
               prim(numel)) + BINPERSID


def ints(*values: int) -> bytes:
    return tup(*(prim(v) for v in values))


def v2(storage: bytes, offset: int | bytes, size, stride, requires_grad: bool = False) -> bytes:
    offset_b = offset if isinstance(offset, bytes) else prim(offset)
    return call("torch._utils._rebuild_tensor_v2", storage, offset_b, ints(*size), ints(*stride),
                prim(requires_grad), call("collections.OrderedDict"))


def program(expr: bytes) -> bytes:
    return b"\x80\x02" + expr + STOP


def archive(pkl: bytes, records: dict[str, bytes] | None = None) -> bytes:
    """A checkpoint as torch.save lays it out, holding ``pkl`` and these storage records."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as out:
        out.writestr("archive/data.pkl", pkl)
        out.writestr("archive/byteorder", "little")
        for key, data in (records or {}).items():
            out.writestr(f"archive/data/{key}", data)
        out.writestr("archive/version", "3\n")
    return buf.getvalue()


FOUR_FLOATS = struct.pack("<4f", 1.0, 2.0, 3.0, 4.0)


def load(pkl: bytes, records: dict[str, bytes] | None = None, **kwargs):
    return torch.load(io.BytesIO(archive(pkl, records)), **kwargs)


# -- the test's own view of "inside its storage" -------------------------------------------------


def assert_in_bounds(t: torch.Tensor) -> None:
    storage = t.untyped_storage()
    nbytes, itemsize = storage.nbytes(), t.element_size()
    shape, strides, offset = tuple(t.shape), tuple(t.stride()), t.storage_offset()
    assert len(shape) == len(strides)
    assert all(isinstance(v, int) and v >= 0 for v in (*shape, *strides, offset))
    if all(n > 0 for n in shape):
        last = offset + sum((n - 1) * s for n, s in zip(shape, strides))
        assert (last + 1) * itemsize <= nbytes, (shape, strides, offset, nbytes)
    else:
        assert offset * itemsize <= nbytes
    if t.device.type == "cpu" and nbytes:
        start = storage.data_ptr()
        assert start <= t.data_ptr() <= start + nbytes


def tensors_in(obj) -> list[torch.Tensor]:
    """Every tensor reachable from ``obj`` through containers (iteratively: a crafted object
    may be nested deeper than the recursion limit, or contain itself)."""
    found, seen, todo = [], set(), [obj]
    while todo and len(seen) < 20000:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, torch.Tensor):
            found.append(item)
            if item.grad is not None:
                todo.append(item.grad)
            todo.extend(v for v in vars(item).values())
        elif isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            todo.extend(item)
        elif isinstance(item, torch.TypedStorage):
            assert item.nbytes() == item.untyped_storage().nbytes()
    return found


def exercise(obj) -> None:
    """Check every tensor in ``obj`` and run it through arithmetic: an op may refuse with a
    RuntimeError (an in-place write to an expanded tensor, a leaf that needs grad...), never
    crash, and its result is inside its storage too."""
    for t in tensors_in(obj):
        assert_in_bounds(t)
        if t.numel() > 4096 or t.device.type not in ("cpu", "meta"):
            continue
        for op in (lambda x: x + 1, lambda x: x.sum(), lambda x: x.clone(),
                   lambda x: x.fill_(1)):
            try:
                out = op(t)
            except RuntimeError:
                continue
            assert_in_bounds(out)
        assert_in_bounds(t)


def load_and_exercise(data: bytes, weights_only: bool = True):
    """Load ``data``: a documented error, or an object whose tensors pass :func:`exercise`.

    With ``weights_only=False`` the file runs whatever it names, and an error is whatever the
    callee raised (as in PyTorch); only the tensors that do load are checked."""
    try:
        obj = torch.load(io.BytesIO(data), weights_only=weights_only)
    except LOAD_ERRORS:
        return None
    except EOFError:
        assert data == b""  # only an empty file is "ran out of input"
        return None
    except Exception:
        if weights_only:
            raise
        return None
    exercise(obj)
    return obj


ITEMSIZES = {torch.bool: 1, torch.uint8: 1, torch.int8: 1, torch.int16: 2, torch.int32: 4,
             torch.int64: 8, torch.uint16: 2, torch.uint32: 4, torch.uint64: 8,
             torch.float16: 2, torch.bfloat16: 2, torch.float32: 4, torch.float64: 8,
             torch.complex64: 8, torch.complex128: 16}


def assert_torch_intact() -> None:
    """Nothing a file did changed torch's own objects (dtypes, storage classes, Size)."""
    for dt, size in ITEMSIZES.items():
        assert dt.itemsize == size, dt
    assert torch.FloatStorage(wrap_storage=torch.UntypedStorage(8),
                              dtype=torch.float32).size() == 2
    assert torch.Size([2, 3]) == (2, 3) and len(torch.Size([2, 3])) == 2
    assert torch.arange(4.0).reshape(2, 2).sum().item() == 6.0


# -- the example and internal fields -----------------------------------------------------


def test_saved_internal_fields_do_not_come_back():
    t = torch.ones(4)
    vars(t).update(_shape=(64,), _stride=(1,), note="kept")
    buf = io.BytesIO()
    torch.save(t, buf)
    assert b"_shape" not in zipfile.ZipFile(buf).read("archive/data.pkl")
    buf.seek(0)
    back = torch.load(buf)
    assert tuple(back.shape) == (4,) and back.stride() == (1,) and back.note == "kept"
    back.fill_(2.0)
    assert back.tolist() == [2.0] * 4
    assert_in_bounds(back)


INTERNAL = ["_shape", "_stride", "_offset", "_storage", "_dtype", "_device", "_base",
            "_interned_layout", "data", "grad", "requires_grad", "grad_fn", "shape", "__class__",
            "__dict__", "add"]
CORE_KEYS = ["_inference", "_output_nr", "_grad_accumulator", "_leaf_hooks", "_retains_grad"]


def _plain_tensor() -> bytes:
    return v2(pid("torch.FloatStorage", "0", 4), 0, (4,), (1,))


@pytest.mark.parametrize("name", INTERNAL)
@pytest.mark.parametrize("route", ["rebuild_from_type", "build_dict", "build_slots",
                                   "parameter_with_state"])
def test_checkpoint_cannot_set_internal_fields(name, route):
    value = ints(64)
    state = dct((prim(name), value))
    tensor = _plain_tensor()
    if route == "rebuild_from_type":
        pkl = call("torch._tensor._rebuild_from_type_v2", glob("torch._utils._rebuild_tensor_v2"),
                   glob("torch.Tensor"), tup(pid("torch.FloatStorage", "0", 4), prim(0),
                                             ints(4), ints(1), prim(False),
                                             call("collections.OrderedDict")), state)
    elif route == "build_dict":
        pkl = build(tensor, state)
    elif route == "build_slots":
        pkl = build(tensor, tup(prim(None), state))
    else:
        pkl = call("torch._utils._rebuild_parameter_with_state", tensor, prim(True),
                   call("collections.OrderedDict"), state)
    for weights_only in (True, False):
        with pytest.raises(pickle.UnpicklingError, match=f"sets '{name}' on a tensor"):
            load(program(pkl), {"0": FOUR_FLOATS}, weights_only=weights_only)


@pytest.mark.parametrize("name", CORE_KEYS)
def test_core_bookkeeping_keys_are_skipped(name):
    # what core keeps in a tensor's __dict__ is never saved, and skipped if a file has it
    t = torch.tensor([1.0, 2.0])
    vars(t)[name] = 0
    assert name.encode() not in zipfile.ZipFile(io.BytesIO(_save_bytes(t))).read(
        "archive/data.pkl")
    for weights_only in (True, False):
        back = load(program(build(_plain_tensor(), dct((prim(name), prim(0)),
                                                          (prim("note"), prim(1))))),
                    {"0": FOUR_FLOATS}, weights_only=weights_only)
        assert name not in vars(back) and back.note == 1
        exercise(back)


def test_user_attributes_are_restored():
    t = torch.tensor([1.0, 2.0])
    t.note, t._private = "kept", {"a": 1}
    back = load_and_exercise(_save_bytes([t]))[0]
    assert (back.note, back._private) == ("kept", {"a": 1})
    crafted = load(program(build(_plain_tensor(), dct((prim("tag"), prim(7))))),
                   {"0": FOUR_FLOATS})
    assert crafted.tag == 7 and crafted.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_parameter_attributes_are_restored():
    nn = pytest.importorskip("torch.nn")
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    p.tag = "w"
    back = load_and_exercise(_save_bytes(p))
    assert isinstance(back, nn.Parameter) and back.requires_grad and back.tag == "w"


def _save_bytes(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


# -- what the weights-only machine refuses -------------------------------------------------------


@pytest.mark.parametrize("target", [
    glob("torch.float32"), glob("torch.FloatStorage"), glob("torch.Size"),
    glob("torch.UntypedStorage"), glob("_codecs.encode"), glob("torch._utils._rebuild_tensor_v2"),
    call("torch.device", prim("cpu")), call("torch.Size", ints(1, 2)),
    pid("torch.FloatStorage", "0", 4), call("builtins.set", lst(prim(1))),
])
@pytest.mark.parametrize("state", [
    tup(prim(None), dct((prim("itemsize"), prim(64)))),
    tup(prim(None), dct((prim("_dtype"), glob("torch.float64")))),
    dct((prim("x"), prim(1))),
])
def test_build_is_refused_on_everything_but_tensors_and_dicts(target, state):
    with pytest.raises(pickle.UnpicklingError, match="Can only build"):
        load(program(build(target, state)), {"0": FOUR_FLOATS})
    assert_torch_intact()


@pytest.mark.parametrize("expr", [
    call("torch.UntypedStorage", prim(64)),
    call("torch.storage.UntypedStorage", prim(64)),
    call("torch.FloatStorage", prim(4)),
    call("torch.TypedStorage"),
    call("torch.Tensor", prim(16)),
    glob("torch.UntypedStorage") + tup(prim(64)) + NEWOBJ,
    glob("torch.Tensor") + tup() + NEWOBJ,
], ids=["UntypedStorage", "storage.UntypedStorage", "FloatStorage", "TypedStorage", "Tensor",
        "newobj-storage", "newobj-Tensor"])
def test_storages_and_tensors_cannot_be_constructed(expr):
    # a storage holds the bytes of an archive record, never uninitialised memory of any size
    with pytest.raises(pickle.UnpicklingError, match="not allowed"):
        load(program(expr))


@pytest.mark.parametrize("pkl", [
    b"\x80\x02cbuiltins\nlist\n(tb.",  # unknown global
    b"\x80\x02(i__main__\nX\n.",  # INST
    b"\x80\x02(ccollections\nOrderedDict\no.",  # OBJ
    b"\x80\x02\x82\x01.",  # EXT1
    b"\x80\x02R.",  # REDUCE on an empty stack
    b"\x80\x02h\x07.",  # BINGET of nothing
    b"\x80\x02K\x01K\x02a.",  # APPEND to an int
    b"\x80\x05\x96" + struct.pack("<Q", 2**40) + b"ab.",  # a 1 TiB bytearray of 3 bytes
], ids=["global", "inst", "obj", "ext1", "empty-reduce", "binget", "append-int", "bytearray8"])
def test_malformed_or_unsafe_opcodes_are_pickle_errors(pkl):
    with pytest.raises(pickle.UnpicklingError):
        load(pkl)


def test_containers_only_fill_containers():
    appended = _plain_tensor() + MARK + prim(1) + APPENDS
    with pytest.raises(pickle.UnpicklingError, match="append to a list"):
        load(program(appended), {"0": FOUR_FLOATS})
    set_item = _plain_tensor() + prim(0) + prim(9.0) + b"s"
    with pytest.raises(pickle.UnpicklingError, match="set items of a dict"):
        load(program(set_item), {"0": FOUR_FLOATS})


# -- every tensor is checked against its storage -------------------------------------------------

BAD_LAYOUTS = [
    (0, (5,), (1,)),  # one element past the end
    (4, (1,), (1,)),  # starts at the end
    (0, (2, 2), (3, 1)),  # the last element at index 4
    (5, (0,), (1,)),  # empty, but offset past the end
    (-1, (1,), (1,)),
    (0, (-1,), (1,)),
    (0, (2,), (-1,)),
    (0, (2**62, 2**62), (0, 0)),  # more elements than int64 counts
    (0, (2,), (2**63,)),
    (True, (1,), (1,)),
    (0, (1, 2), (1,)),
]
GOOD_LAYOUTS = [(0, (4,), (1,)), (3, (1,), (1,)), (4, (0,), (1,)), (0, (1000, 4), (0, 1)),
                (0, (2, 2), (1, 2)), (1, (), ())]


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("layout", BAD_LAYOUTS, ids=str)
def test_out_of_bounds_layouts_are_refused(layout, weights_only):
    offset, size, stride = layout
    pkl = program(v2(pid("torch.FloatStorage", "0", 4), prim(offset), size, stride))
    with pytest.raises(RuntimeError, match=r"out of bounds|invalid tensor layout"):
        load(pkl, {"0": FOUR_FLOATS}, weights_only=weights_only)


@pytest.mark.parametrize("layout", GOOD_LAYOUTS, ids=str)
def test_in_bounds_layouts_load(layout):
    offset, size, stride = layout
    t = load(program(v2(pid("torch.FloatStorage", "0", 4), offset, size, stride)),
             {"0": FOUR_FLOATS})
    assert (t.storage_offset(), tuple(t.shape), t.stride()) == layout
    exercise(t)


def test_v3_and_meta_layouts_are_checked():
    def v3(dtype: str, size) -> bytes:
        return program(call("torch._utils._rebuild_tensor_v3",
                            pid("torch.storage.UntypedStorage", "0", 8), prim(0), ints(*size),
                            ints(1), prim(False), call("collections.OrderedDict"), glob(dtype)))

    records = {"0": bytes(range(8))}
    assert load(v3("torch.uint16", (4,)), records).tolist() == [256, 770, 1284, 1798]
    with pytest.raises(RuntimeError, match="out of bounds"):
        load(v3("torch.uint16", (5,)), records)
    with pytest.raises(RuntimeError, match="out of bounds"):
        load(v3("torch.float64", (2,)), records)  # the dtype's own size counts
    meta = program(call("torch._utils._rebuild_meta_tensor_no_storage", glob("torch.float32"),
                        ints(-1), ints(1), prim(False)))
    with pytest.raises(RuntimeError, match="invalid tensor layout"):
        load(meta)


def test_storages_come_from_records_with_their_bytes():
    one = program(v2(pid("torch.FloatStorage", "0", 100), 0, (100,), (1,)))
    with pytest.raises(RuntimeError, match="holds 16 bytes"):
        load(one, {"0": FOUR_FLOATS})
    with pytest.raises(RuntimeError, match="missing"):
        load(one, {})
    # the same record named again as a wider storage is still its 4 bytes
    both = program(lst(v2(pid("torch.ByteStorage", "0", 4), 0, (4,), (1,)),
                       v2(pid("torch.DoubleStorage", "0", 100), 0, (1,), (1,))))
    with pytest.raises(RuntimeError, match="out of bounds"):
        load(both, {"0": FOUR_FLOATS[:4]})


def test_plain_pickle_of_a_storage_goes_through_the_loader():
    storage = torch.tensor([1.0, 2.0]).untyped_storage()
    for back in (pickle.loads(pickle.dumps(storage)), copy.deepcopy(storage)):
        assert type(back) is type(storage) and back is not storage
        assert back.tolist() == storage.tolist()


# -- fuzzing ------------------------------------------------------------------------------------


def _seed_archives() -> list[bytes]:
    """Real checkpoints: PyTorch's files, and Plait's with views, subclasses and attributes."""
    seeds = [(DATA / name).read_bytes() for name in ("dtypes.pt", "module.pt", "unsigned.pt",
                                                     "meta.pt")]
    base = torch.arange(12.0).reshape(3, 4)
    tagged = torch.tensor([1, 2], dtype=torch.int16)
    tagged.tag = "t"
    seeds.append(_save_bytes({"base": base, "col": base[:, 1], "t": base.t(), "tail": base[1:, 2:],
                              "tagged": tagged, "u16": torch.tensor([5, 6], dtype=torch.uint16),
                              "exp": torch.tensor([1.0]).expand(3, 2), "grad": base.clone()
                              .requires_grad_(), "meta": torch.empty(2, 2, device="meta")}))
    return seeds


SEEDS = _seed_archives()


def _split(seed: bytes) -> tuple[str, bytes, dict[str, bytes]]:
    src = zipfile.ZipFile(io.BytesIO(seed))
    prefix = next(n for n in src.namelist() if n.endswith("data.pkl"))[: -len("data.pkl")]
    records = {n[len(prefix) + 5:]: src.read(n) for n in src.namelist()
               if n.startswith(prefix + "data/")}
    return prefix, src.read(prefix + "data.pkl"), records


SPLIT = [_split(s) for s in SEEDS]
PICKLE_MUTATIONS = ("set", "insert", "delete", "int", "dup")


def mutate_pickle(pkl: bytes, edits) -> bytes:
    data = bytearray(pkl)
    for kind, where, value in edits:
        at = where % max(len(data), 1)
        if kind == "set" and data:
            data[at] = value
        elif kind == "insert":
            data.insert(at, value)
        elif kind == "delete":
            del data[at : at + 1 + value % 8]
        elif kind == "int":  # a BININT1 argument: sizes, strides, offsets, numels, flags
            spots = [i + 1 for i, b in enumerate(data[:-1]) if b == ord("K")]
            if spots:
                data[spots[where % len(spots)]] = value
        elif kind == "dup":
            data[at:at] = data[at : at + 1 + value % 16]
    return bytes(data)


def repack(prefix: str, pkl: bytes, records: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as out:
        out.writestr(prefix + "data.pkl", pkl)
        for key, data in records.items():
            out.writestr(f"{prefix}data/{key}", data)
    return buf.getvalue()


pickle_edits = st.lists(st.tuples(st.sampled_from(PICKLE_MUTATIONS), st.integers(0, 2**20),
                                  st.integers(0, 255)), min_size=1, max_size=4)


@settings(FUZZ, max_examples=1500)
@given(seed=st.integers(0, len(SEEDS) - 1), edits=pickle_edits)
def test_fuzz_mutated_pickles_of_real_checkpoints(seed, edits):
    prefix, pkl, records = SPLIT[seed]
    data = repack(prefix, mutate_pickle(pkl, edits), records)
    load_and_exercise(data)
    try:  # reads the opcodes only: a list of names, or the same documented errors
        names = torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))
    except LOAD_ERRORS:
        return
    assert all(isinstance(name, str) for name in names)


ALLOWED_GLOBALS = [
    "torch._utils._rebuild_tensor", "torch._utils._rebuild_tensor_v2",
    "torch._utils._rebuild_tensor_v3", "torch._utils._rebuild_parameter",
    "torch._utils._rebuild_parameter_with_state", "torch._utils._rebuild_meta_tensor_no_storage",
    "torch._tensor._rebuild_from_type_v2", "torch.nn.parameter.Parameter",
    "collections.OrderedDict", "collections.Counter", "builtins.set", "builtins.complex",
    "builtins.bytearray", "_codecs.encode", "torch.Size", "torch.device", "torch.Tensor",
    "torch.UntypedStorage", "torch.storage.UntypedStorage", "torch.TypedStorage",
    "torch.FloatStorage", "torch.ByteStorage", "torch.DoubleStorage", "torch.BoolStorage",
    "torch.float32", "torch.uint16", "torch.uint64", "torch.bool", "torch.complex64",
    "torch.serialization._get_layout", "torch.strided",
    "builtins.eval", "os.system", "builtins.getattr",  # refused
]
STORAGE_TYPES = ["torch.FloatStorage", "torch.ByteStorage", "torch.DoubleStorage",
                 "torch.BoolStorage", "torch.storage.UntypedStorage", "torch.float32",
                 "collections.OrderedDict"]
FUZZ_RECORDS = {"0": bytes(range(16)), "1": bytes(range(64)), "2": b""}

some_ints = st.one_of(st.integers(-2, 20), st.sampled_from([64, 255, 2**31, 2**62, 2**63 - 1,
                                                            2**63, 2**64, -(2**63)]))
layout_ints = st.integers(0, 7).flatmap(lambda k: some_ints if k == 0 else st.integers(0, 5))
small_shapes = st.lists(layout_ints, max_size=4).map(lambda xs: ints(*xs))
# (size, stride): mostly of one length, sometimes not
layouts = st.one_of(
    st.lists(st.tuples(layout_ints, layout_ints), max_size=4)
    .map(lambda dims: (ints(*(d[0] for d in dims)), ints(*(d[1] for d in dims)))),
    st.tuples(small_shapes, small_shapes))
# storages that match FUZZ_RECORDS (most), and anything at all
_VALID_STORAGES = (
    st.sampled_from([("torch.ByteStorage", "0", 16, "cpu"), ("torch.FloatStorage", "0", 4, "cpu"),
                     ("torch.DoubleStorage", "1", 8, "cpu"), ("torch.FloatStorage", "1", 16, "cpu"),
                     ("torch.storage.UntypedStorage", "1", 64, "cpu"),
                     ("torch.BoolStorage", "2", 0, "cpu"), ("torch.FloatStorage", "0", 4, "meta")])
    .map(lambda args: pid(*args)))
_ANY_STORAGES = st.builds(pid, st.sampled_from(STORAGE_TYPES),
                          st.sampled_from(["0", "1", "2", "9"]), some_ints,
                          st.sampled_from(["cpu", "meta", "bogus:3"]))
storages = st.integers(0, 4).flatmap(lambda k: _ANY_STORAGES if k == 0 else _VALID_STORAGES)
rebuilds = st.one_of(
    st.builds(lambda s, off, lay, rg: call(
        "torch._utils._rebuild_tensor_v2", s, prim(off), *lay, prim(rg),
        call("collections.OrderedDict")),
        storages, layout_ints, layouts, st.booleans()),
    st.builds(lambda s, off, lay, dt: call(
        "torch._utils._rebuild_tensor_v3", s, prim(off), *lay, prim(False),
        call("collections.OrderedDict"), glob(dt)),
        storages, layout_ints, layouts,
        st.sampled_from(["torch.uint16", "torch.uint64", "torch.bool", "torch.complex64",
                         "torch.float32", "torch.Size"])))
leaves = st.one_of(
    some_ints.map(prim), st.sampled_from([None, True, False, 1.5, "cpu", "_shape", "note", "x"])
    .map(prim), st.sampled_from(ALLOWED_GLOBALS).map(glob), storages, rebuilds)
SOUP = [MARK, TUPLE, REDUCE, BUILD, NEWOBJ, BINPERSID, EMPTY_DICT, EMPTY_LIST, SETITEMS, APPENDS,
        b"a", b"s", b"0", b"2", b"1", b"\x85", b"\x86", b"\x87", b"h\x00", b"h\x01", b"q\x01",
        b"\x88", b"\x89", b"N", b"\x82\x01", b"\x92"]


def _expressions(children, *, trusted: bool = False):
    """Containers, calls, and (for the weights-only machine) BUILD, NEWOBJ and raw opcodes.

    ``trusted``: programs for ``weights_only=False``, which runs what a file says (a BUILD on a
    dtype changes it for the whole process, as PyTorch's would): only calls and containers, so
    what is under test is that every rebuild function checks its tensor."""
    plain = [
        st.lists(children, max_size=4).map(lambda xs: tup(*xs)),
        st.lists(children, max_size=3).map(lambda xs: lst(*xs)),
        st.lists(st.tuples(children, children), max_size=3).map(lambda ps: dct(*ps)),
        st.tuples(st.sampled_from(TRUSTED_GLOBALS if trusted else ALLOWED_GLOBALS),
                  st.lists(children, max_size=7)).map(lambda fa: call(fa[0], *fa[1])),
    ]
    if trusted:
        return st.one_of(*plain)
    return st.one_of(
        *plain,
        st.tuples(children, children).map(lambda oa: build(*oa)),
        st.tuples(st.sampled_from(ALLOWED_GLOBALS), st.lists(children, max_size=3))
        .map(lambda fa: glob(fa[0]) + tup(*fa[1]) + NEWOBJ),
        st.tuples(children, st.lists(st.sampled_from(SOUP), max_size=3))
        .map(lambda es: es[0] + b"".join(es[1])),
    )


TRUSTED_GLOBALS = [name for name in ALLOWED_GLOBALS if name.startswith(("torch._", "collections"))]
trusted_leaves = st.one_of(some_ints.map(prim), st.sampled_from(TRUSTED_GLOBALS).map(glob),
                           storages, rebuilds)
# checkpoint-shaped programs: a dict of tensors, some wrapped as parameters, subclasses or with
# a state (user attributes, internal fields, junk) to restore
states = st.lists(st.tuples(st.sampled_from(["note", "_private", "_shape", "_storage", "data",
                                             "__class__", "grad", "_offset"]).map(prim),
                            st.one_of(layout_ints.map(prim), small_shapes, storages)),
                  max_size=2).map(lambda pairs: dct(*pairs))
tensor_exprs = st.one_of(
    rebuilds,
    rebuilds.map(lambda r: call("torch._utils._rebuild_parameter", r, prim(True),
                                call("collections.OrderedDict"))),
    st.tuples(rebuilds, states).map(lambda rs: build(*rs)),
    st.tuples(rebuilds, states).map(lambda rs: build(rs[0], tup(prim(None), rs[1]))),
    st.tuples(storages, layout_ints, layouts, states).map(lambda a: call(
        "torch._tensor._rebuild_from_type_v2", glob("torch._utils._rebuild_tensor"),
        glob("torch.Tensor"), tup(a[0], prim(a[1]), *a[2]), a[3])),
)
checkpoints = st.lists(tensor_exprs, min_size=1, max_size=5).map(
    lambda ts: dct(*((prim(str(i)), t) for i, t in enumerate(ts))))
programs = st.one_of(
    st.tuples(checkpoints, st.booleans()),
    st.tuples(st.recursive(leaves, _expressions, max_leaves=12), st.just(True)),
    st.tuples(st.recursive(trusted_leaves, lambda c: _expressions(c, trusted=True),
                           max_leaves=12), st.just(False)))


@settings(FUZZ, max_examples=900)
@given(case=programs)
def test_fuzz_crafted_pickles_over_the_allowlist(case):
    expr, weights_only = case
    load_and_exercise(archive(program(expr), FUZZ_RECORDS), weights_only=weights_only)
    assert_torch_intact()


ZIP_MUTATIONS = ("flip", "truncate", "u32", "central", "local", "name")
_CENTRAL_FIELDS = (16, 20, 24, 28, 42)  # crc, compressed size, size, name length, header offset
_LOCAL_FIELDS = (14, 18, 22, 26)  # crc, compressed size, size, name length


def mutate_zip(data: bytes, edits) -> bytes:
    buf = bytearray(data)
    for kind, where, value in edits:
        if not buf:
            break
        at = where % len(buf)
        word = [0, 1, 7, 2**31 - 1, 2**32 - 1, len(buf), value][where % 7]
        if kind == "flip":
            buf[at] ^= 1 << (value % 8)
        elif kind == "truncate":
            del buf[at:]
        elif kind == "u32" and at + 4 <= len(buf):
            buf[at : at + 4] = struct.pack("<I", word)
        elif kind in ("central", "local", "name"):
            magic = b"PK\x01\x02" if kind == "central" else b"PK\x03\x04"
            spots = [i for i in range(len(buf) - 46) if buf[i : i + 4] == magic]
            if not spots:
                continue
            start = spots[value % len(spots)]
            if kind == "name":
                buf[start + 30 + where % 8] ^= 0x20  # a byte of the record's name
                continue
            fields = _CENTRAL_FIELDS if kind == "central" else _LOCAL_FIELDS
            field = start + fields[where % len(fields)]
            width = 2 if field - start in (26, 28) else 4
            buf[field : field + width] = word.to_bytes(8, "little")[:width]
    return bytes(buf)


_mmap_dir = tempfile.TemporaryDirectory()
_mmap_count = iter(range(10**9))


@settings(FUZZ, max_examples=1000)
@given(seed=st.integers(0, len(SEEDS) - 1),
       edits=st.lists(st.tuples(st.sampled_from(ZIP_MUTATIONS), st.integers(0, 2**20),
                                st.integers(0, 255)), min_size=1, max_size=3),
       mmap=st.sampled_from([False, False, False, True]))
def test_fuzz_damaged_archives(seed, edits, mmap):
    data = mutate_zip(SEEDS[seed], edits)
    if not mmap:
        load_and_exercise(data)
        return
    # a fresh file each time: a mapped file must never be rewritten under a live mapping
    path = os.path.join(_mmap_dir.name, f"{next(_mmap_count)}.pt")
    with open(path, "wb") as fh:
        fh.write(data)
    try:
        exercise(torch.load(path, mmap=True))
    except LOAD_ERRORS:
        pass
    except EOFError:
        assert data == b""


def smoke(cases: int) -> int:
    """A short fuzz run without hypothesis (the subprocess test's body)."""
    rng = random.Random(1234)
    for _ in range(cases):
        seed = rng.randrange(len(SEEDS))
        prefix, pkl, records = SPLIT[seed]
        edits = [(rng.choice(PICKLE_MUTATIONS), rng.randrange(2**20), rng.randrange(256))
                 for _ in range(rng.randint(1, 3))]
        load_and_exercise(repack(prefix, mutate_pickle(pkl, edits), records))
        edits = [(rng.choice(ZIP_MUTATIONS), rng.randrange(2**20), rng.randrange(256))
                 for _ in range(rng.randint(1, 2))]
        load_and_exercise(mutate_zip(SEEDS[seed], edits))
    return cases


def test_fuzz_smoke_in_a_subprocess():
    # the in-process fuzz tests would take pytest down with them on a crash; here a crash is a
    # return code (a signal: negative) that this test reports
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
        import test_load_safety
        print("ok", test_load_safety.smoke(200))
    """)
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", script],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    assert proc.stdout.strip().splitlines()[-1] == "ok 200"
