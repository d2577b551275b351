"""Read and write `safetensors <https://huggingface.co/docs/safetensors>`_ files.

The same functions, with the same semantics, as ``safetensors.torch``: ``save``/``load`` for
bytes, ``save_file``/``load_file`` for files, ``save_model``/``load_model`` for modules whose
state dict has tied (shared) tensors. Files are interchangeable with PyTorch's and numpy's
(``safetensors.numpy.load_file`` reads what ``save_file`` writes, except ``bfloat16``, which
numpy has no type for).

The encoding is the ``safetensors`` package's own (``serialize``/``deserialize``, the layer
its numpy and torch front ends share), so the format stays the package's business. The package
is optional: it is imported on first use, and a missing one raises ``ModuleNotFoundError``
saying ``pip install safetensors``.

(``safetensors.torch`` itself also runs on Plait unchanged; these helpers exist so that Plait
does not depend on the package's torch front end, and so that the dtype table is Plait's.)
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from types import ModuleType
from typing import Any

import torch
from torch import Tensor

__all__ = ["load", "load_file", "load_model", "save", "save_file", "save_model"]

# Plait dtype -> the safetensors header code. The package names dtypes by their PyTorch name
# when it builds a TensorSpec (str(dtype) without "torch."), and by this code in the header.
_CODES: dict[torch.dtype, str] = {
    torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
    torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
    torch.uint8: "U8", torch.bool: "BOOL", torch.complex64: "C64",
}
_DTYPES: dict[str, torch.dtype] = {code: dt for dt, code in _CODES.items()}

_SHARED_DOC = "https://huggingface.co/docs/safetensors/torch_shared_tensors"


def _package() -> ModuleType:
    """The ``safetensors`` package, imported on first use (it is an optional dependency)."""
    try:
        import safetensors
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(
            "torch.utils.safetensors needs the 'safetensors' package: pip install safetensors"
        ) from err
    return safetensors


# --------------------------------------------------------------------------- shared memory


def _byte_span(t: Tensor) -> tuple[int, int]:
    """The half-open byte range [start, stop) that ``t``'s elements occupy (strides >= 0)."""
    start = t.data_ptr()
    last = sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
    return start, start + (last + 1) * t.element_size()


def _storage_key(t: Tensor) -> tuple[str, int] | None:
    """What identifies ``t``'s memory block, or None when it has none to share (meta tensors,
    empty storages)."""
    storage = t.untyped_storage()
    if t.device.type == "meta" or storage.data_ptr() == 0 or storage.nbytes() == 0:
        return None
    return str(t.device), storage.data_ptr()


def _shared_groups(tensors: dict[str, Tensor]) -> list[set[str]]:
    """Sets of names whose tensors overlap in memory. Views of one storage that touch
    disjoint bytes (the halves of a split) do not count as shared."""
    by_storage: dict[tuple[str, int], list[str]] = defaultdict(list)
    for name, t in tensors.items():
        key = _storage_key(t)
        if key is not None and t.numel():
            by_storage[key].append(name)
    groups: list[set[str]] = []
    for names in by_storage.values():
        spans = sorted((*_byte_span(tensors[n]), n) for n in names)
        group, group_stop = {spans[0][2]}, spans[0][1]
        for start, stop, name in spans[1:]:
            if start < group_stop:
                group.add(name)
                group_stop = max(group_stop, stop)
            else:
                groups.append(group)
                group, group_stop = {name}, stop
        groups.append(group)
    return sorted((g for g in groups if len(g) > 1), key=sorted)


def _is_complete(t: Tensor) -> bool:
    """Whether ``t`` covers its whole storage (only such a tensor can stand for the others)."""
    storage = t.untyped_storage()
    return (t.data_ptr() == storage.data_ptr()
            and t.numel() * t.element_size() == storage.nbytes())


def _names_to_drop(state_dict: dict[str, Tensor],
                   preferred: Any = ()) -> dict[str, list[str]]:
    """For each group of tensors sharing memory: the name to keep (a complete tensor, one
    of ``preferred`` when possible, else the first by name) -> the names it stands for."""
    preferred = set(preferred)
    drops: dict[str, list[str]] = {}
    for group in _shared_groups(state_dict):
        complete = sorted(n for n in group if _is_complete(state_dict[n]))
        if not complete:
            raise RuntimeError(
                f"Error while trying to find names to remove to save state dict, but found no "
                f"suitable name to keep for saving amongst: {group}. None is covering the "
                f"entire storage. Refusing to save/load the model since you could be storing "
                f"much more memory than needed. Please refer to {_SHARED_DOC} for more "
                f"information.")
        keep = next((n for n in complete if n in preferred), complete[0])
        drops[keep] = sorted(group - {keep})
    return drops


# --------------------------------------------------------------------------- encoding


def _check_metadata(metadata: Any) -> None:
    if metadata is None:
        return
    if not isinstance(metadata, dict):
        raise TypeError(f"metadata must be a dict of str to str, but got "
                        f"{type(metadata).__name__}")
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"metadata must be a dict of str to str, but got the entry "
                            f"{key!r}: {value!r}")


def _check_tensors(tensors: Any) -> None:
    """``safetensors.torch``'s checks before writing: a dict of dense, contiguous tensors of
    which no two share memory."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, but got {name!r}")
        if not isinstance(t, Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected torch.Tensor but received "
                             f"{type(t)}")
        if t.layout != torch.strided:
            raise ValueError(f"You are trying to save a sparse tensor: `{name}` which this "
                             f"library does not support. You can make it a dense tensor before "
                             f"saving with `.to_dense()` but be aware this might make a much "
                             f"larger file than needed.")
        if t.dtype not in _CODES:
            raise TypeError(f"safetensors cannot store tensor `{name}` of dtype {t.dtype}; "
                            f"supported: {', '.join(str(d) for d in _CODES)}")
    shared = _shared_groups(tensors)
    if shared:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and "
            f"potential differences when loading them again: {shared}. A potential way to "
            f"correctly save your model is to use `save_model`. More information at "
            f"{_SHARED_DOC}")
    for name, t in tensors.items():
        # an empty tensor has no layout to lose (PyTorch calls every one contiguous)
        if t.numel() and not t.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not "
                f"allowed. It either means you are trying to save tensors which are reference "
                f"of each other in which case it's recommended to save only the full tensors, "
                f"and reslice at load time, or simply call `.contiguous()` on your tensor to "
                f"pack it before saving.")


def _specs(tensors: dict[str, Tensor], keep_alive: list[Any]) -> dict[str, Any]:
    """The package's ``TensorSpec`` of each tensor: dtype name, shape, and the address and
    length of its little-endian bytes (held in ``keep_alive`` while the package reads them)."""
    pkg = _package()
    specs = {}
    for name, t in tensors.items():
        t = t.detach().cpu()
        # numpy has no bfloat16: its bits travel as int16, which has the same width
        arr = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy()
        if sys.byteorder == "big":
            arr = arr.byteswap()
        keep_alive.append(arr)
        specs[name] = pkg.TensorSpec(dtype=str(t.dtype).removeprefix("torch."),
                                     shape=list(t.shape), data_ptr=arr.ctypes.data,
                                     data_len=arr.nbytes)
    return specs


def _tensors(entries: Any) -> dict[str, Tensor]:
    """Tensors from ``deserialize``'s ``(name, {dtype, shape, data})`` list, in name order."""
    out = {}
    for name, view in sorted(entries, key=lambda e: e[0]):
        dtype = _DTYPES.get(view["dtype"])
        if dtype is None:
            raise TypeError(f"tensor `{name}` has safetensors dtype {view['dtype']}, which has "
                            f"no Plait dtype (supported: {', '.join(_DTYPES)})")
        data = view["data"]  # a fresh bytearray: writable, so the tensor can own it
        if not len(data):
            out[name] = torch.empty(view["shape"], dtype=dtype)
            continue
        t = torch.frombuffer(data, dtype=dtype).reshape(view["shape"])
        out[name] = _to_native(t) if sys.byteorder == "big" else t
    return out


def _to_native(t: Tensor) -> Tensor:
    """``t``'s little-endian file bytes swapped to big-endian host order."""
    if t.dtype == torch.bfloat16:
        return _to_native(t.view(torch.int16)).view(torch.bfloat16)
    return torch.from_numpy(t.numpy().byteswap())


# --------------------------------------------------------------------------- public API


def save(tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors encoding of ``tensors`` (contiguous, not sharing memory).

    :param tensors: name -> tensor; any device, any dtype but ``complex128``.
    :param metadata: free text header entries (str -> str), ignored by loading.
    :returns: the bytes of a safetensors file.
    """
    _check_tensors(tensors)
    _check_metadata(metadata)
    keep_alive: list[Any] = []
    return bytes(_package().serialize(_specs(tensors, keep_alive), metadata=metadata))


def save_file(tensors: dict[str, Tensor], filename: str | os.PathLike,
              metadata: dict[str, str] | None = None) -> None:
    """Write ``tensors`` (contiguous, not sharing memory) to ``filename`` as safetensors.

    :param tensors: name -> tensor; any device, any dtype but ``complex128``.
    :param filename: the file to write (replaced if it exists).
    :param metadata: free text header entries (str -> str), ignored by loading.
    """
    _check_tensors(tensors)
    _check_metadata(metadata)
    keep_alive: list[Any] = []
    _package().serialize_file(_specs(tensors, keep_alive), os.fspath(filename),
                              metadata=metadata)


def load(data: bytes) -> dict[str, Tensor]:
    """The tensors (on the CPU) of the safetensors bytes ``data``.

    :param data: the content of a safetensors file.
    :returns: name -> tensor, in name order; each owns its memory.
    """
    if not isinstance(data, bytes):
        data = bytes(data)  # the package reads only ``bytes``
    return _tensors(_package().deserialize(data))


def load_file(filename: str | os.PathLike, device: str | int | torch.device = "cpu"
              ) -> dict[str, Tensor]:
    """The tensors of the safetensors file ``filename``, moved to ``device``.

    :param filename: the file to read.
    :param device: where the tensors go (``"cpu"``, ``"cuda:0"``, ``0``...).
    :returns: name -> tensor, in name order.
    """
    pkg = _package()
    with open(filename, "rb") as f:
        tensors = _tensors(pkg.deserialize(f.read()))
    if isinstance(device, int):
        device = torch.device("cuda", device)
    if torch.device(device).type != "cpu":
        tensors = {name: t.to(device) for name, t in tensors.items()}
    return tensors


def save_model(model: torch.nn.Module, filename: str | os.PathLike,
               metadata: dict[str, str] | None = None, force_contiguous: bool = True) -> None:
    """Write ``model.state_dict()`` to ``filename``, storing tied tensors once.

    Of each group of state-dict entries that share memory, one (a tensor covering its whole
    storage, first by name) is written and the others are recorded in the metadata as
    ``dropped name -> kept name``; ``load_model`` ties them back through the model.

    :param model: the module to save.
    :param filename: the file to write.
    :param metadata: extra header entries (str -> str); not modified.
    :param force_contiguous: save a contiguous copy of non-contiguous entries (else such an
        entry raises ``ValueError``).
    """
    state_dict = dict(model.state_dict())
    metadata = dict(metadata) if metadata is not None else None
    for kept, dropped in _names_to_drop(state_dict).items():
        for name in dropped:
            metadata = metadata if metadata is not None else {}
            metadata.setdefault(name, kept)  # never override the caller's own entry
            del state_dict[name]
    if force_contiguous:
        state_dict = {name: t.contiguous() for name, t in state_dict.items()}
    try:
        save_file(state_dict, filename, metadata=metadata)
    except ValueError as err:
        raise ValueError(f"{err} Or use save_model(..., force_contiguous=True), read the docs "
                         f"for potential caveats.") from err


def load_model(model: torch.nn.Module, filename: str | os.PathLike, strict: bool = True,
               device: str | int | torch.device = "cpu") -> tuple[list[str], list[str]]:
    """Load the safetensors file ``filename`` into ``model``, tied tensors included.

    :param model: the module to fill.
    :param filename: a file written by ``save_model`` (or any state-dict file).
    :param strict: raise ``RuntimeError`` on missing or unexpected names.
    :param device: where the loaded tensors are put before copying into the model.
    :returns: ``(missing, unexpected)``: model names the file did not fill, and file names the
        model has no place for (as lists, in name order).
    """
    state_dict = load_file(filename, device=device)
    drops = _names_to_drop(model.state_dict(), preferred=state_dict.keys())
    missing_keys, unexpected_keys = model.load_state_dict(state_dict, strict=False)
    missing, unexpected = set(missing_keys), set(unexpected_keys)
    for dropped in drops.values():
        for name in dropped:
            # a tied name is filled through the name kept for it; if the file has it too,
            # that copy is not used
            if name in missing:
                missing.discard(name)
            else:
                unexpected.add(name)
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {type(model).__name__}:"
        if missing:
            error += ("\n    Missing key(s) in state_dict: "
                      + ", ".join(f'"{k}"' for k in sorted(missing)))
        if unexpected:
            error += ("\n    Unexpected key(s) in state_dict: "
                      + ", ".join(f'"{k}"' for k in sorted(unexpected)))
        raise RuntimeError(error)
    return sorted(missing), sorted(unexpected)
