"""``torch.PyTorchFileReader`` / ``torch.PyTorchFileWriter``: the record-level view of the zip
archives ``torch.save`` writes (``<archive>/data.pkl``, ``<archive>/data/0``, ...).

Libraries that load checkpoints lazily (record by record, without unpickling everything) use
these; record names are given without the archive's folder, as in PyTorch.
"""

from __future__ import annotations

import os
import uuid
import zipfile
from typing import IO, Any

from ._core import dtype as _dtype
from ._core.tensor import Tensor

__all__ = ["PyTorchFileReader", "PyTorchFileWriter"]


class PyTorchFileReader:
    """Read the records of a checkpoint archive: ``PyTorchFileReader(path_or_binary_file)``."""

    def __init__(self, file: str | os.PathLike[str] | IO[bytes]) -> None:
        from .serialization import _archive_prefix, _open_zip

        self._handle = open(file, "rb") if isinstance(file, (str, os.PathLike)) else file
        self._archive = _open_zip(self._handle)
        self._prefix = _archive_prefix(self._archive)

    def get_record(self, name: str) -> bytes:
        """The bytes of record ``name`` (e.g. ``"data.pkl"``, ``"data/0"``)."""
        from .serialization import _read_record

        return _read_record(self._archive, self._prefix + name)

    def has_record(self, name: str) -> bool:
        return (self._prefix + name) in self._archive.NameToInfo

    def get_all_records(self) -> list[str]:
        """Every record's name, without the archive's folder."""
        return [n[len(self._prefix):] for n in self._archive.namelist()
                if n.startswith(self._prefix)]

    def get_record_offset(self, name: str) -> int:
        """Where record ``name``'s bytes start in the file."""
        from .serialization import _record_offset

        return _record_offset(self._handle, self._archive.getinfo(self._prefix + name))

    def get_storage_from_record(self, name: str, numel: int, dtype: Any) -> Tensor:
        """Record ``name`` as a 1-d tensor of ``numel`` elements of ``dtype`` (bytes when
        ``dtype`` is not a torch dtype, as for an untyped storage)."""
        import torch

        if not isinstance(dtype, _dtype.dtype):
            dtype = torch.uint8
        data = self.get_record(name)
        if len(data) < numel * dtype.itemsize:
            raise RuntimeError(f"record {name} holds {len(data)} bytes, fewer than {numel} "
                               f"elements of {dtype}")
        raw = torch.frombuffer(bytearray(data[:numel * dtype.itemsize]), dtype=torch.uint8)
        return raw.view(dtype)

    def serialization_id(self) -> str:
        return self.get_record(".data/serialization_id").decode() \
            if self.has_record(".data/serialization_id") else ""


class PyTorchFileWriter:
    """Write records into a new checkpoint archive: ``PyTorchFileWriter(path_or_binary_file)``;
    :meth:`write_end_of_file` finishes it."""

    def __init__(self, file: str | os.PathLike[str] | IO[bytes]) -> None:
        from .serialization import _archive_name

        self._own = isinstance(file, (str, os.PathLike))
        self._handle = open(file, "wb") if self._own else file
        self._archive = zipfile.ZipFile(self._handle, "w", zipfile.ZIP_STORED)
        self._name = _archive_name(file)
        self._written: list[str] = []
        self._id = f"{uuid.uuid4().int:040d}"[:40]

    def archive_name(self) -> str:
        return self._name

    def serialization_id(self) -> str:
        return self._id

    def write_record(self, name: str, data: Any, size: int) -> None:
        """Write ``size`` bytes of ``data`` (bytes, a buffer or a tensor) as record ``name``."""
        from .serialization import _write_aligned

        if isinstance(data, Tensor):
            data = data.contiguous().view(-1).view(_dtype.uint8).numpy().tobytes()
        view = memoryview(data).cast("B")[:size]
        _write_aligned(self._archive, f"{self._name}/{name}", view)
        self._written.append(name)

    def get_all_written_records(self) -> set[str]:
        return set(self._written)

    def set_min_version(self, version: int) -> None:
        """Accepted for PyTorch's API; the archive's version record is written at the end."""

    def write_end_of_file(self) -> None:
        """Write the version and id records and close the archive."""
        from .serialization import FILE_FORMAT_VERSION

        for name, value in (("version", FILE_FORMAT_VERSION + "\n"),
                            (".data/serialization_id", self._id)):
            if name not in self._written:
                self.write_record(name, value.encode(), len(value.encode()))
        self._archive.close()
        if self._own:
            self._handle.close()

    def __repr__(self) -> str:
        return f"PyTorchFileWriter({self._name!r})"

