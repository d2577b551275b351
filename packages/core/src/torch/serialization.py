"""``torch.save`` and ``torch.load`` in PyTorch's zip checkpoint format.

A checkpoint is an uncompressed zip archive whose records all live under one folder
``<archive>/``:

- ``data.pkl``: the saved object, pickled (protocol 2 by default). Every storage in it is a
  *persistent id* ``('storage', storage_type, key, location, numel)``, e.g.
  ``('storage', torch.FloatStorage, '0', 'cpu', 6)``, and each tensor is the call
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``;
  dtypes without a legacy storage class (``uint16``/``uint32``/``uint64``) are saved as PyTorch
  does, with ``torch.storage.UntypedStorage`` (numel in bytes) and
  ``_rebuild_tensor_v3(storage, offset, size, stride, requires_grad, hooks, dtype)``;
- ``data/<key>``: the bytes of storage ``key``, starting on a 64-byte boundary of the file (so a
  file can be memory-mapped and viewed in place);
- ``version`` (``3``), ``.format_version`` (``1``), ``.storage_alignment`` (``64``),
  ``byteorder`` (``little``), ``.data/serialization_id``.

Views of one storage are saved as one record and come back sharing one storage. Files written
here load in PyTorch, and PyTorch's files load here. By default ``torch.load`` reads with the
restricted unpickler of :mod:`torch._weights_only_unpickler`, which runs nothing a checkpoint
names unless it is on its allowlist.

Loading is safe against crafted files (the rules are in packages/core/README.md): every tensor
is checked against the storage it views (``torch._utils.check_layout``), a storage only comes
from an archive record and holds that record's bytes, internal tensor fields are never set from
a file, and a damaged archive raises RuntimeError (``PytorchStreamReader failed ...``), a
malformed or unsafe pickle :class:`pickle.UnpicklingError`.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import struct
import sys
import uuid
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import IO, Any, Union

import numpy as np

from . import _functions, _tensor, _utils, _weights_only_unpickler as _wo
from ._core import (
    dtype as _dtype,
    layout as _layout,
    registry as _registry,
    storage as _storage,
    upcalls,
)
from ._core.device import device as _device
from ._core.tensor import Tensor

__all__ = [
    "DEFAULT_PROTOCOL",
    "add_safe_globals",
    "clear_safe_globals",
    "default_restore_location",
    "get_safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "load",
    "location_tag",
    "safe_globals",
    "save",
]

DEFAULT_PROTOCOL = 2
FILE_FORMAT_VERSION = "3"  # the ``version`` record PyTorch writes
# PyTorch's public constants of this module, which libraries import (pyro: MAP_LOCATION)
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C  # the legacy (non-zip) format's first pickled value
PROTOCOL_VERSION = 1001
STORAGE_KEY_SEPARATOR = ","
# What ``load``'s ``map_location`` may be: a function of (storage, location), a device, a
# device name, or a mapping of location names
MAP_LOCATION = Callable[[Any, str], Any] | _device | str | dict[str, str] | None
# What ``save``/``load`` accept as a file: a path or a binary file object
FILE_LIKE = str | os.PathLike | IO[bytes]
_STORAGE_ALIGNMENT = 64
# PyTorch's pre-1.6 format starts with this pickled (protocol 2) magic number
_LEGACY_HEAD = pickle.dumps(MAGIC_NUMBER, protocol=2)[:-1]
_ZIP_MAGIC = b"PK\x03\x04"
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")  # a zip local file header, 30 bytes

FileLike = Union[str, "os.PathLike[str]", IO[bytes]]
MapLocation = str | _device | dict | Callable[[Any, str], Any] | None

del _functions  # imported for its side effect: loaded tensors need their methods bound


def _is_path(f: Any) -> bool:
    return isinstance(f, (str, os.PathLike))


# -- public helpers ------------------------------------------------------------------------


def location_tag(storage: Any) -> str:
    """The location string a checkpoint records for ``storage`` (``'cpu'``, ``'cuda:0'``)."""
    if isinstance(storage, _utils.TypedStorage):
        storage = storage.untyped_storage()
    return str(storage.device)


def default_restore_location(storage: Any, location: str) -> Any:
    """``storage`` (a CPU :class:`~torch.UntypedStorage` read from a checkpoint) moved to the
    device ``location`` names. A device whose backend is not available raises a RuntimeError
    that says to pass ``map_location``."""
    try:
        dev = _storage._normalise(_device(location))
        _registry.runtime(dev.type)  # the backend's own error when the device is not served
    except (RuntimeError, ValueError, TypeError) as err:
        raise RuntimeError(
            f"Attempting to deserialize object on device '{location}', which is not available "
            f"here: {err} If you are running on a machine without it, please use torch.load "
            f"with map_location=torch.device('cpu') to map your storages to the CPU.") from err
    return _storage_to(storage, dev)


def _storage_to(storage: Any, dev: _device) -> Any:
    if storage.device == dev:
        return storage
    nbytes = storage.nbytes()
    out = _storage.allocate(nbytes, dev)
    if nbytes and dev.type != "meta":
        _storage.write_bytes(out, 0, _storage.read_bytes(storage, 0, nbytes))
    return out


def _get_layout(name: str) -> Any:
    """The layout ``name`` names (``'torch.strided'``): how PyTorch pickles layouts."""
    short = name.removeprefix("torch.")
    value = getattr(_layout, short, None)
    if not isinstance(value, _layout.layout):
        raise RuntimeError(f"unknown layout in checkpoint: {_utils.shown(name)}")
    return value


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow ``torch.load(weights_only=True)`` to resolve these globals (classes, functions,
    or ``(object, "module.name")`` pairs for objects pickled under another name).

    Only allow what you trust: an allowed callable can be called with checkpoint-chosen
    arguments."""
    _wo.add_user_globals(list(safe_globals))


def get_safe_globals() -> list[Any]:
    """The globals added with :func:`add_safe_globals`."""
    return _wo.user_globals()


def clear_safe_globals() -> None:
    """Forget every global added with :func:`add_safe_globals`."""
    _wo.clear_user_globals()


@contextlib.contextmanager
def safe_globals(safe_globals: list[Any]) -> Iterator[None]:
    """A context (this thread only) in which ``torch.load(weights_only=True)`` also resolves
    ``safe_globals``."""
    _wo.push_context(list(safe_globals))
    try:
        yield
    finally:
        _wo.pop_context()


def get_unsafe_globals_in_checkpoint(f: FileLike) -> list[str]:
    """The globals a checkpoint names that ``weights_only=True`` would refuse, found by reading
    its pickle's opcodes (nothing is unpickled or run)."""
    import pickletools

    with _open_for_read(f) as fh:
        archive = _open_zip(fh)
        data = _read_record(archive, _archive_prefix(archive) + "data.pkl")
    try:
        return _globals_named(pickletools.genops(data))
    except (ValueError, TypeError, struct.error, UnicodeDecodeError) as err:
        raise pickle.UnpicklingError(f"the checkpoint's pickle is malformed: {err}") from err


def _globals_named(ops: Iterator[Any]) -> list[str]:
    found: list[str] = []
    strings: list[str] = []
    memo: dict[Any, Any] = {}
    for op, arg, _pos in ops:
        if op.name in ("GLOBAL", "INST"):
            module, name = arg.split(" ", 1)
            full = _wo.normalise_name(module, name)
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            full = _wo.normalise_name(strings[-2], strings[-1])
        else:
            if isinstance(arg, str) and "UNICODE" in op.name:
                strings.append(arg)
            elif op.name in ("BINPUT", "LONG_BINPUT", "PUT") and strings:
                memo[arg] = strings[-1]
            elif op.name in ("BINGET", "LONG_BINGET", "GET") and isinstance(memo.get(arg), str):
                strings.append(memo[arg])
            elif op.name == "MEMOIZE" and strings:
                memo[len(memo)] = strings[-1]
            continue
        if _wo.lookup(full) is None and full not in found:
            found.append(full)
    return found


# -- save ----------------------------------------------------------------------------------


class _StorageRef:
    """Stands for a tensor's storage in the pickle; the pickler turns it into a persistent id
    (``untyped``: named ``torch.storage.UntypedStorage`` with its size in bytes, as PyTorch
    saves the storage of a dtype that has no legacy storage class)."""

    __slots__ = ("dtype", "storage", "untyped")

    def __init__(self, storage: Any, dtype: _dtype.dtype, untyped: bool = False) -> None:
        self.storage = storage
        self.dtype = dtype
        self.untyped = untyped


def _parameter_class() -> Any:
    nn = sys.modules.get("torch.nn")  # a Parameter can only exist once torch.nn is imported
    return getattr(nn, "Parameter", None) if nn is not None else None


def _make_pickler(pickle_module: Any, buffer: IO[bytes], protocol: int,
                  records: dict[str, Any]) -> Any:
    """A ``pickle_module.Pickler`` that writes tensors as rebuild calls and storages as
    persistent ids, collecting each storage once in ``records`` (key -> storage)."""
    keys: dict[int, str] = {}  # id(storage) -> key
    storage_dtypes: dict[int, _dtype.dtype] = {}
    param_cls = _parameter_class()

    class _Pickler(pickle_module.Pickler):  # type: ignore[name-defined,misc]
        def persistent_id(self, obj: Any) -> Any:
            if isinstance(obj, _StorageRef) and obj.untyped:
                storage, dt = obj.storage, _dtype.uint8
                storage_type = _storage.UntypedStorage
            elif isinstance(obj, _StorageRef):
                storage, dt = obj.storage, obj.dtype
                storage_type = _utils.storage_type_of(dt)
            elif isinstance(obj, _utils.TypedStorage) and _utils.has_storage_type(obj.dtype):
                storage, dt = obj.untyped_storage(), obj.dtype
                storage_type = _utils.storage_type_of(dt)
            elif isinstance(obj, _utils.TypedStorage):  # uint16...: untyped, as PyTorch
                storage, dt = obj.untyped_storage(), _dtype.uint8
                storage_type = _storage.UntypedStorage
            elif isinstance(obj, _storage.UntypedStorage):
                # named as bytes (ByteStorage): PyTorch's weights-only reader refuses the name
                # torch.UntypedStorage, and loads a bare storage as uint8 elements either way
                storage, dt = obj, _dtype.uint8
                storage_type = _utils.storage_type_of(dt)
            else:
                return None
            sid = id(storage)
            if storage.device.type != "meta" and storage.nbytes():
                seen = storage_dtypes.setdefault(sid, dt)
                if seen is not dt:
                    raise RuntimeError("Cannot save multiple tensors or storages that view the "
                                       "same data as different types")
            key = keys.get(sid)
            if key is None:
                key = keys[sid] = str(len(keys))
                records[key] = storage
            return ("storage", storage_type, key, location_tag(storage),
                    storage.nbytes() // dt.itemsize)

        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, Tensor):
                return _reduce_tensor(obj, param_cls)
            if isinstance(obj, _layout.layout):
                return (_get_layout, (repr(obj),))
            return NotImplemented

    return _Pickler(buffer, protocol=protocol)


def _reduce_tensor(t: Tensor, param_cls: Any) -> tuple[Any, ...]:
    """How a tensor is pickled: the rebuild call and its arguments (PyTorch's form)."""
    cls = type(t)
    if t.is_quantized:  # PyTorch's form: the integers' storage under the quantized dtype
        ints = t._qdata  # type: ignore[attr-defined]
        return (_utils._rebuild_qtensor,
                (_StorageRef(ints._storage, t._dtype), *_utils._tensor_reduce_args(ints, None)[1:4],
                 t._quantizer_params(), bool(t.requires_grad), OrderedDict()))  # type: ignore
    if t.is_sparse:  # PyTorch's form: the layout and the parts (saved as dense tensors)
        return (_utils._rebuild_sparse_tensor,
                (t.layout, (t._indices(), t._values().detach(), t.size(), t.is_coalesced())))
    state = _utils.tensor_state(t)
    if param_cls is not None and cls is param_cls:
        data = Tensor._make(t._storage, t._shape, t._stride, t._offset, t._dtype, t._device)
        if state:
            return (_utils._rebuild_parameter_with_state,
                    (data, bool(t.requires_grad), OrderedDict(), state))
        return (_utils._rebuild_parameter, (data, bool(t.requires_grad), OrderedDict()))
    if t._device.type == "meta":
        args: tuple[Any, ...] = (t._dtype, tuple(int(s) for s in t._shape),
                                 tuple(int(s) for s in t._stride), bool(t.requires_grad))
        func: Any = _utils._rebuild_meta_tensor_no_storage
    elif _utils.has_storage_type(t._dtype):
        args = _utils._tensor_reduce_args(t, _StorageRef(t._storage, t._dtype))
        func = _utils._rebuild_tensor_v2
    else:
        ref = _StorageRef(t._storage, t._dtype, untyped=True)
        args = (*_utils._tensor_reduce_args(t, ref), t._dtype)
        func = _utils._rebuild_tensor_v3
    if cls is not Tensor or state:
        rebuild = _tensor._rebuild_from_type_v2
        return (rebuild, (func, cls, args, state))
    return (func, args)


def _archive_name(f: Any) -> str:
    if _is_path(f):
        return os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    return "archive"


def _write_aligned(archive: zipfile.ZipFile, name: str, data: Any) -> None:
    """Write one stored (uncompressed) record whose data starts on a 64-byte boundary: the
    local header's extra field is padded, as PyTorch's writer does."""
    view = memoryview(data).cast("B")
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = view.nbytes
    zip64 = view.nbytes * 1.05 > zipfile.ZIP64_LIMIT
    header_end = (archive.fp.tell() + _LOCAL_HEADER.size + len(name.encode())  # type: ignore
                  + 4 + (20 if zip64 else 0))
    pad = -header_end % _STORAGE_ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    with archive.open(info, "w", force_zip64=zip64) as dest:
        dest.write(view)


def _write_archive(out: IO[bytes], name: str, pickled: bytes, records: dict[str, Any],
                   byteorder: bool) -> None:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        _write_aligned(archive, f"{name}/data.pkl", pickled)
        _write_aligned(archive, f"{name}/.format_version", b"1")
        _write_aligned(archive, f"{name}/.storage_alignment", str(_STORAGE_ALIGNMENT).encode())
        if byteorder:
            _write_aligned(archive, f"{name}/byteorder", sys.byteorder.encode())
        for key, storage in records.items():
            nbytes = storage.nbytes() if storage.device.type != "meta" else 0
            raw = _storage.read_bytes(storage, 0, nbytes) if nbytes else b""
            _write_aligned(archive, f"{name}/data/{key}", raw)
        _write_aligned(archive, f"{name}/version", (FILE_FORMAT_VERSION + "\n").encode())
        _write_aligned(archive, f"{name}/.data/serialization_id",
                       f"{uuid.uuid4().int:040d}"[:40].encode())


def save(obj: object, f: FileLike, pickle_module: Any = pickle,
         pickle_protocol: int = DEFAULT_PROTOCOL, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` (tensors, and containers and Python values holding them) to ``f``, a path
    or a writable binary file object, in PyTorch's zip checkpoint format.

    Tensors that view one storage are saved once and share it again after loading.

    :param pickle_module: the module whose ``Pickler`` writes ``data.pkl``.
    :param pickle_protocol: the pickle protocol (2 by default, as PyTorch).
    """
    if not _use_new_zipfile_serialization:
        raise RuntimeError("torch.save(_use_new_zipfile_serialization=False): the legacy "
                           "(pre-1.6) checkpoint format is not supported by Plait; save "
                           "with the default zip format")
    if _is_path(f):
        parent = os.path.dirname(os.path.abspath(os.fspath(f)))
        if not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {parent} does not exist.")
    elif not hasattr(f, "write"):
        raise AttributeError(f"expected 'f' to be string, path, or a file-like object with a "
                             f"'write' attribute, got {type(f).__name__}")
    records: dict[str, Any] = {}
    buffer = io.BytesIO()
    _make_pickler(pickle_module, buffer, pickle_protocol, records).dump(obj)
    if _is_path(f):
        with open(f, "wb") as out:
            _write_archive(out, _archive_name(f), buffer.getvalue(), records,
                           not _disable_byteorder_record)
    else:
        _write_archive(f, "archive", buffer.getvalue(), records,  # type: ignore[arg-type]
                       not _disable_byteorder_record)


# -- load ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _open_for_read(f: FileLike) -> Iterator[IO[bytes]]:
    if _is_path(f):
        with open(f, "rb") as fh:
            yield fh
        return
    if not hasattr(f, "read"):
        raise AttributeError(f"expected 'f' to be string, path, or a file-like object with a "
                             f"'read' attribute, got {type(f).__name__}")
    seekable = getattr(f, "seekable", None)
    if seekable is not None and seekable() and hasattr(f, "seek"):
        yield f  # type: ignore[misc]
    else:
        yield io.BytesIO(f.read())  # type: ignore[union-attr]


def _open_zip(fh: IO[bytes]) -> zipfile.ZipFile:
    start = fh.tell()
    magic = fh.read(len(_ZIP_MAGIC))
    fh.seek(start)
    if magic != _ZIP_MAGIC:
        raise _not_a_zip(fh, start, magic)
    try:
        return zipfile.ZipFile(fh)
    except Exception as err:  # whatever zipfile raises on a damaged central directory
        raise RuntimeError(
            f"PytorchStreamReader failed reading zip archive: {err}. The checkpoint file is "
            f"probably corrupted (it was not saved completely, or was damaged in transfer)."
        ) from err


def _not_a_zip(fh: IO[bytes], start: int, magic: bytes) -> BaseException:
    if not magic:
        return EOFError("Ran out of input: the checkpoint file is empty")
    # Compare bytes rather than unpickle: nothing in an unknown file may run.
    fh.seek(start)
    head = fh.read(len(_LEGACY_HEAD))
    fh.seek(start)
    if head == _LEGACY_HEAD:
        return RuntimeError(
            "This checkpoint is in PyTorch's legacy (pre-1.6, non-zip) format, which Plait "
            "does not read. Re-save it with real PyTorch using torch.save (the default zip "
            "format), then load that file.")
    return RuntimeError(
        "Invalid checkpoint: the file is not a PyTorch zip archive (it does not start with a "
        "zip header). It may be corrupted, truncated, or not written by torch.save.")


# Compression a record may use: PyTorch writes stored records; its reader also inflates
# deflated ones. At most this many bytes come out of one compressed byte (deflate's limit), so a
# record's claimed size is checked before anything is allocated for it.
_COMPRESSIONS = {zipfile.ZIP_STORED: 1, zipfile.ZIP_DEFLATED: 1032}


def _corrupt(name: str, err: BaseException | str) -> RuntimeError:
    """PyTorch's error for a record that cannot be read (CRC mismatch, truncation...)."""
    return RuntimeError(f"PytorchStreamReader failed reading file {name}: invalid header or "
                        f"archive is corrupted ({err})")


def _read_record(archive: zipfile.ZipFile, name: str) -> bytes:
    """A small record's bytes (``data.pkl``, ``byteorder``), checked against its CRC."""
    try:
        return archive.read(name)
    except KeyError:
        raise RuntimeError(f"Invalid checkpoint: record {name} is missing") from None
    except Exception as err:  # BadZipFile (CRC), zlib.error, EOFError...: a damaged archive
        raise _corrupt(name, err) from err


def _archive_prefix(archive: zipfile.ZipFile) -> str:
    for name in archive.namelist():
        if name == "data.pkl" or name.endswith("/data.pkl"):
            return name[: -len("data.pkl")]
    raise RuntimeError("Invalid checkpoint: the zip archive has no data.pkl record (was it "
                       "written by torch.save?)")


def _record_offset(fh: IO[bytes], info: zipfile.ZipInfo) -> int:
    """Where a stored record's bytes start in the file (after its local header)."""
    fh.seek(info.header_offset)
    header = fh.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != _ZIP_MAGIC:
        raise RuntimeError(f"Invalid checkpoint: bad local header for record {info.filename}")
    fields = _LOCAL_HEADER.unpack(header)
    return info.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10]


class _Reader:
    """Reads storage records out of an open checkpoint, once per key."""

    def __init__(self, archive: zipfile.ZipFile, prefix: str, fh: IO[bytes],
                 mapped: np.ndarray | None, restore: Callable[[Any, str], Any]) -> None:
        self.archive = archive
        self.prefix = prefix
        self.fh = fh
        self.mapped = mapped
        self.restore = restore
        self.loaded: dict[str, Any] = {}
        fh.seek(0, os.SEEK_END)
        self.file_size = fh.tell()
        swap = False
        if prefix + "byteorder" in archive.namelist():
            order = _read_record(archive, prefix + "byteorder").decode("latin-1").strip()
            if order not in ("little", "big"):
                raise RuntimeError(f"Invalid checkpoint: unknown byteorder {_utils.shown(order)}")
            swap = order != sys.byteorder
        self.swap = swap

    def storage(self, key: str, nbytes: int, location: str, dt: _dtype.dtype) -> Any:
        cached = self.loaded.get(key)
        if cached is not None:
            return cached
        if location == "meta" or location.startswith("meta:"):  # saved without data
            untyped = _storage.allocate(nbytes, _storage._normalise("meta"))
        else:
            untyped = self.restore(self._read(key, nbytes, dt), location)
            if isinstance(untyped, _utils.TypedStorage):
                untyped = untyped.untyped_storage()
            if not isinstance(untyped, _storage.UntypedStorage):
                raise TypeError(f"map_location must return a storage (or None), got "
                                f"{type(untyped).__name__}")
        self.loaded[key] = untyped
        return untyped

    def _read(self, key: str, nbytes: int, dt: _dtype.dtype) -> Any:
        name = f"{self.prefix}data/{key}"
        try:
            info = self.archive.getinfo(name)
        except KeyError:
            raise RuntimeError(f"Invalid checkpoint: record {name} is missing") from None
        self._check_size(info, name, nbytes)
        if self.mapped is not None:
            if info.compress_type != zipfile.ZIP_STORED:
                raise RuntimeError(f"mmap=True needs uncompressed records; {name} is "
                                   f"compressed")
            start = _record_offset(self.fh, info)
            buf = self.mapped[start : start + nbytes]
            if buf.size != nbytes:
                raise _corrupt(name, "the record runs past the end of the file")
            if self.swap:
                buf = _swapped(np.array(buf), dt)  # a byte-swapped copy cannot be mapped
            return _storage.wrap_host(buf)
        out = _storage.allocate(nbytes, _storage._normalise("cpu"))
        if nbytes:
            try:
                with self.archive.open(info) as src:
                    got = src.readinto(memoryview(out._host))  # type: ignore[attr-defined]
                    if got == nbytes == info.file_size:
                        src.read(1)  # at the record's end: zipfile checks the CRC here
            except Exception as err:  # BadZipFile (CRC), zlib.error, EOFError...
                raise _corrupt(name, err) from err
            if got != nbytes:
                raise _corrupt(name, "the record is truncated")
            if self.swap:
                out._host[:] = _swapped(out._host, dt)
        return out

    def _check_size(self, info: zipfile.ZipInfo, name: str, nbytes: int) -> None:
        """Refuse a record too small for the storage the pickle asks for, or one whose sizes
        the archive cannot hold (before anything is allocated for it)."""
        if info.file_size < nbytes:
            raise RuntimeError(f"Invalid checkpoint: record {name} holds {info.file_size} "
                               f"bytes, but the checkpoint expects {nbytes}")
        ratio = _COMPRESSIONS.get(info.compress_type)
        if ratio is None:
            raise RuntimeError(f"Invalid checkpoint: record {name} uses an unsupported "
                               f"compression method ({info.compress_type})")
        if (info.header_offset + info.compress_size > self.file_size
                or info.file_size > info.compress_size * ratio):
            raise _corrupt(name, "its sizes do not fit the archive")


def _swapped(raw: np.ndarray, dt: _dtype.dtype) -> np.ndarray:
    """``raw`` bytes with each element's byte order reversed (complex: each half)."""
    size = dt.itemsize // 2 if dt.is_complex else dt.itemsize
    if size == 1:
        return raw
    return raw.view(f"u{size}").byteswap().view(np.uint8)


def _restorer(map_location: MapLocation) -> Callable[[Any, str], Any]:
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):
        return lambda storage, location: default_restore_location(
            storage, map_location.get(location, location))
    if isinstance(map_location, (str, bytes, _device)):
        target = map_location.decode() if isinstance(map_location, bytes) else str(map_location)
        return lambda storage, location: default_restore_location(storage, target)
    if not callable(map_location):
        raise TypeError(f"map_location must be None, a str, a torch.device, a dict or a "
                        f"callable, not {type(map_location).__name__}")

    def call(storage: Any, location: str) -> Any:
        result = map_location(storage, location)
        return default_restore_location(storage, location) if result is None else result

    return call


def _resolve_weights_only(weights_only: bool | None, pickle_module: Any) -> bool:
    if os.environ.get("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in ("1", "true", "y", "yes"):
        return True
    if weights_only is not None:
        return bool(weights_only)
    if os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in (
            "1", "true", "y", "yes"):
        # said at every load it changes, as PyTorch does: the file may run code when unpickled
        import warnings

        from ._core.config import external_stacklevel

        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the"
                      "`weights_only` argument was not explicitly passed to `torch.load`, forcing "
                      "weights_only=False.", UserWarning, stacklevel=external_stacklevel())
        return False
    return pickle_module is None


def load(f: FileLike, map_location: MapLocation = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Load an object saved with ``torch.save`` (by Plait or by PyTorch) from ``f``, a path or
    a readable binary file object.

    :param map_location: where storages go: ``None`` (where they were saved), a device or
        device string, a dict from saved location to location, or a callable
        ``(storage, location) -> storage or None``.
    :param weights_only: ``True`` (the default unless ``pickle_module`` is given) resolves only
        tensors, containers, primitive types and globals allowed with
        :func:`add_safe_globals`; anything else raises :class:`pickle.UnpicklingError` before it
        runs. ``False`` runs the full unpickler: only for files you trust.
    :param mmap: map the file instead of reading it; CPU storages then view the file's pages
        (copy-on-write). ``f`` must be a path.
    """
    weights_only = _resolve_weights_only(weights_only, pickle_module)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    pickle_module = pickle if pickle_module is None else pickle_module
    pickle_load_args.setdefault("encoding", "utf-8")
    if mmap and not _is_path(f):
        raise ValueError("f must be a file path in order to use the mmap argument")
    restore = _restorer(map_location)
    with _open_for_read(f) as fh:
        start = fh.tell()
        magic = fh.read(len(_ZIP_MAGIC))
        fh.seek(start)
        if magic != _ZIP_MAGIC and mmap:
            raise RuntimeError("mmap can only be used with files saved with "
                               "`torch.save(_use_new_zipfile_serialization=True)`, please "
                               "torch.save your checkpoint with this option in order to use "
                               "mmap.")
        archive = _open_zip(fh)
        with archive:
            prefix = _archive_prefix(archive)
            mapped = None
            if mmap and os.path.getsize(f) > 0:  # type: ignore[arg-type]
                mapped = np.memmap(f, dtype=np.uint8, mode="c")
            reader = _Reader(archive, prefix, fh, mapped, restore)
            data = _read_record(archive, prefix + "data.pkl")
            return _unpickle(data, reader, pickle_module, weights_only, pickle_load_args)


def _unpickle(data: bytes, reader: _Reader, pickle_module: Any, weights_only: bool,
              pickle_load_args: dict[str, Any]) -> Any:
    def persistent_load(saved_id: Any) -> Any:
        if not isinstance(saved_id, tuple) or len(saved_id) < 5:
            raise pickle.UnpicklingError(f"unknown persistent id in checkpoint: "
                                         f"{_utils.shown(saved_id)}")
        typename = saved_id[0].decode() if isinstance(saved_id[0], bytes) else saved_id[0]
        if typename != "storage":
            raise pickle.UnpicklingError(f"Unknown typename for persistent_load, expected "
                                         f"'storage' but got '{typename}'")
        storage_type, key, location, numel = saved_id[1:5]
        if (not isinstance(key, str) or not isinstance(location, str)
                or not isinstance(numel, int) or isinstance(numel, bool) or numel < 0):
            raise pickle.UnpicklingError(f"invalid storage persistent id: {_utils.shown(saved_id)}")
        dt = _utils.dtype_of_storage_type(storage_type)
        if numel * dt.itemsize >= _utils._INT64_LIMIT:
            raise RuntimeError(f"invalid storage size in checkpoint: {numel} elements")
        untyped = reader.storage(key, numel * dt.itemsize, location, dt)
        return _utils.TypedStorage(wrap_storage=untyped, dtype=dt)

    buffer = io.BytesIO(data)
    if weights_only:
        unpickler: Any = _wo.Unpickler(buffer, **pickle_load_args)
    else:
        unpickler = _full_unpickler(pickle_module)(buffer, **pickle_load_args)
    unpickler.persistent_load = persistent_load
    try:
        return unpickler.load()
    except (pickle.UnpicklingError, RuntimeError):
        raise
    except (EOFError, struct.error) as err:
        raise RuntimeError(f"Invalid checkpoint: data.pkl is truncated or corrupt ({err})") \
            from err
    except Exception as err:
        if not weights_only:
            raise
        # a malformed pickle (a bad stack, memo or argument) fails as a pickle error, whatever
        # Python error the machine met
        raise pickle.UnpicklingError(f"Weights only load failed: the checkpoint's pickle is "
                                     f"malformed ({type(err).__name__}: "
                                     f"{_describe(err)})") from err


def _describe(err: BaseException) -> str:
    try:
        text = str(err)
    except Exception:
        text = "?"
    return text if len(text) <= 200 else text[:200] + "..."


def _full_unpickler(pickle_module: Any) -> type:
    """``pickle_module.Unpickler`` that also finds the torch names checkpoints use (storage
    classes, rebuild functions) without relying on them being facade attributes."""

    class _Unpickler(pickle_module.Unpickler):  # type: ignore[name-defined,misc]
        def find_class(self, module: str, name: str) -> Any:
            if module.startswith("torch"):
                obj = _wo.lookup(f"{module}.{name}")
                if obj is not None:
                    return obj
            return super().find_class(module, name)

    return _Unpickler


def _reduce_storage(storage: Any) -> tuple[Any, ...]:
    """How plain pickle (copy, multiprocessing) writes an ``UntypedStorage``: as a ``torch.save``
    archive read back by the restricted loader, never its raw fields."""
    buffer = io.BytesIO()
    save(storage, buffer)
    return (_utils._storage_from_bytes, (buffer.getvalue(),))


upcalls.install(reduce_storage=_reduce_storage)
