"""The op database on the ``meta`` device and under ``FakeTensorMode``, in whichever library
this interpreter imports as ``torch``: what each sample's result looks like (dtype, shape,
strides, storage offset, device) without its values.

``collect.py`` calls :func:`collect_layouts` under both libraries;
``layout_compare.py`` compares what they recorded. Only PyTorch's public API is used, so the
same code runs under Plait and under real PyTorch.

Meta inputs keep the real inputs' strides and storage offsets (a strided view of a meta
buffer), so layout-following results (elementwise ops on transposed inputs, views with an
offset) are checked too. Fake inputs come from ``FakeTensorMode.from_tensor`` of the real
inputs (one mode per op-database row), which keeps layout and aliasing; the op runs inside the
mode, so factories called by the op make fake tensors as well. Each sample also records the
real (CPU) result's layout, which the comparison uses to tell a meta-kernel slip from a layout
rule shared with the real kernel.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch

REPR_LIMIT = 400


def _short(text: str) -> str:
    return text if len(text) <= REPR_LIMIT else text[: REPR_LIMIT - 3] + "..."


def encode_layout(value: Any) -> Any:
    """A library-free description of a result's structure and tensor metadata (no values:
    meta and fake tensors have none). Reads only metadata, so it is safe on fake tensors
    outside their mode."""
    if isinstance(value, torch.Tensor):
        return {"kind": "tensor", "dtype": str(value.dtype).removeprefix("torch."),
                "shape": tuple(int(s) for s in value.shape),
                "stride": tuple(int(s) for s in value.stride()),
                "offset": int(value.storage_offset()), "device": value.device.type}
    if isinstance(value, torch.Size):
        return {"kind": "scalar", "type": "Size", "value": tuple(int(s) for s in value)}
    if isinstance(value, (tuple, list)):
        return {"kind": type(value).__name__ if type(value) in (tuple, list) else "tuple",
                "items": [encode_layout(x) for x in value]}
    if isinstance(value, dict):
        return {"kind": "dict", "items": {str(k): encode_layout(v) for k, v in value.items()}}
    if isinstance(value, torch.dtype):
        return {"kind": "scalar", "type": "dtype", "value": str(value)}
    if isinstance(value, (bool, int, float, complex)) or value is None:
        return {"kind": "scalar", "type": type(value).__name__, "value": value}
    return {"kind": "other", "type": type(value).__name__, "repr": _short(repr(value))}


def _category(exc: BaseException) -> str:
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return "Exception"


def _outcome(fn: Callable[[], Any]) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = fn()
        except Exception as exc:  # recorded: compared with the other library's outcome
            return {"status": "raised", "type": type(exc).__name__,
                    "category": _category(exc), "message": _short(str(exc))}
        try:
            return {"status": "ok", "result": encode_layout(result)}
        except Exception as exc:  # metadata that cannot even be read is a failure
            return {"status": "unreadable", "type": type(exc).__name__,
                    "category": _category(exc), "message": _short(str(exc))}


def meta_copy(t: Any) -> Any:
    """A meta tensor with ``t``'s dtype, shape, strides, storage offset and requires_grad:
    a view of a meta buffer just large enough to hold it."""
    extent = t.storage_offset()
    if t.numel():
        extent += 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
    buffer = torch.empty(extent, dtype=t.dtype, device="meta")
    out = buffer.as_strided(tuple(t.shape), tuple(t.stride()), t.storage_offset())
    if t.requires_grad:
        out.requires_grad_(True)
    return out


def _samples(opdb: Any) -> Iterator[tuple[Any, str, str, int, Any]]:
    """(row, row id, dtype, index, sample) for every sample; a failing sample maker yields
    index -1 and the exception instead of a sample."""
    seen: dict[str, int] = {}
    for row in opdb.load():
        seen[row.name] = seen.get(row.name, 0) + 1
        row_id = row.name if seen[row.name] == 1 else f"{row.name}#{seen[row.name]}"
        for dtype in row.dtypes:
            try:
                samples = list(opdb.samples(row, torch, dtype))
            except Exception as exc:  # the op section reports this; recorded here too
                yield row, row_id, dtype, -1, exc
                continue
            for i, sample in enumerate(samples):
                yield row, row_id, dtype, i, sample


def _run(opdb: Any, row: Any, sample: Any) -> Any:
    if row.random:
        torch.manual_seed(0)
    return opdb.call(torch, row, sample)


def _real_layout(opdb: Any, row: Any, sample: Any) -> Any:
    out = _outcome(lambda: _run(opdb, row, sample))
    if out["status"] == "ok":
        return out["result"]
    return {"kind": "raised", "type": out["type"], "category": out["category"]}


def _fake_mode() -> Any:
    from torch._subclasses import FakeTensorMode

    return FakeTensorMode()


def _run_meta(opdb: Any, row: Any, sample: Any) -> dict[str, Any]:
    try:
        on_meta = opdb.map_sample(torch, sample, meta_copy)
    except Exception as exc:  # the library cannot even build the meta inputs
        return {"status": "raised", "type": type(exc).__name__, "category": _category(exc),
                "message": _short(f"making the meta inputs: {exc}")}
    return _outcome(lambda: _run(opdb, row, on_meta))


def _run_fake(opdb: Any, row: Any, sample: Any, mode: Any) -> Any:
    fake = opdb.map_sample(torch, sample, mode.from_tensor)
    with mode:
        return _run(opdb, row, fake)


def collect_layouts(opdb: Any, sections: tuple[str, ...] = ("meta", "fake")
                    ) -> dict[str, dict[tuple[str, str, int], dict[str, Any]]]:
    """For each of ``sections`` ("meta", "fake"): (row id, dtype, sample index) -> outcome,
    with the real result's layout under ``"real"``. The meta section skips samples without
    tensor arguments (factories: nothing to move) and rows marked ``supports_meta=False``
    (a sparse input's meta copy would be a dense tensor); the fake section runs them inside its
    mode (one ``FakeTensorMode`` per op-database row)."""
    records: dict[str, dict[tuple[str, str, int], dict[str, Any]]] = {s: {} for s in sections}
    missing = None
    if "fake" in sections:
        try:
            _fake_mode()
        except Exception as exc:  # no FakeTensorMode in this library: every sample says so
            missing = {"status": "raised", "type": type(exc).__name__,
                       "category": _category(exc), "message": _short(f"no FakeTensorMode: {exc}")}
    mode, mode_row = None, None
    for row, row_id, dtype, i, sample in _samples(opdb):
        if i < 0:
            for section in sections:
                records[section][(row_id, dtype, i)] = {
                    "status": "raised", "type": type(sample).__name__,
                    "category": _category(sample), "name": "<samples>",
                    "message": _short(f"making the samples: {sample}")}
            continue
        real = _real_layout(opdb, row, sample)
        meta_rows = row.supports_meta is not False  # False: the row says it is not tried
        if "meta" in sections and meta_rows and opdb.has_tensors(torch, sample):
            out = _run_meta(opdb, row, sample)
            records["meta"][(row_id, dtype, i)] = {**out, "name": sample.name, "real": real}
        if "fake" in sections:
            if missing is None and mode_row != row_id:
                # one mode per row: its caches serve the row's samples (a fresh mode per
                # sample makes PyTorch's run three times slower), rows stay independent
                mode, mode_row = _fake_mode(), row_id
            out = dict(missing) if missing else _outcome(
                lambda s=sample, r=row, m=mode: _run_fake(opdb, r, s, m))
            records["fake"][(row_id, dtype, i)] = {**out, "name": sample.name, "real": real}
    return records
