"""The parity run's meta-device and fake-tensor sections (``benchmarks/parity/layout_*.py``):
their verdicts on hand-made records, and the meta inputs they build under Plait."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from typing import Any

import pytest

import torch

FOLDER = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "parity"


def _load(name: str) -> Any:
    if not (FOLDER / f"{name}.py").exists():
        pytest.skip("benchmarks/parity is not in this checkout")
    spec = importlib.util.spec_from_file_location(f"parity_{name}", FOLDER / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(FOLDER))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(FOLDER))
    return module


@pytest.fixture(scope="module")
def compare() -> Any:
    return _load("layout_compare")


@pytest.fixture(scope="module")
def collect() -> Any:
    return _load("layout_collect")


def _tensor(shape: tuple[int, ...], stride: tuple[int, ...], offset: int = 0,
            dtype: str = "float32", device: str = "meta") -> dict[str, Any]:
    return {"kind": "tensor", "dtype": dtype, "shape": shape, "stride": stride,
            "offset": offset, "device": device}


def _ok(result: dict[str, Any], real: dict[str, Any] | None = None) -> dict[str, Any]:
    real = real if real is not None else dict(result, device="cpu")
    return {"status": "ok", "result": result, "real": real}


def _raised(kind: str, category: str | None = None,
            real: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"status": "raised", "type": kind, "category": category or kind, "message": "m",
            "real": real if real is not None else _tensor((2,), (1,), device="cpu")}


def test_layouts_must_agree_field_by_field(compare: Any) -> None:
    cmp = compare.compare_outcome
    base = _tensor((2, 3), (3, 1))
    assert cmp(_ok(base), _ok(base), False, "meta") is None
    for field, value in (("dtype", "float64"), ("shape", (3, 2)), ("stride", (1, 2)),
                         ("offset", 4), ("device", "cpu")):
        got = cmp(_ok(dict(base, **{field: value})), _ok(base), False, "meta")
        assert got is not None and got[0] == field, (field, got)
    tup = {"kind": "tuple", "items": [base, base]}
    assert cmp(_ok(tup), _ok({"kind": "tuple", "items": [base]}), False, "meta")[0] == (
        "result structure")


def test_only_significant_strides_count(compare: Any) -> None:
    cmp = compare.compare_outcome
    # a dimension of length one, or an empty tensor, has no stride that matters
    assert cmp(_ok(_tensor((1, 5), (6, 1))), _ok(_tensor((1, 5), (5, 1))), False, "m") is None
    assert cmp(_ok(_tensor((0, 3), (3, 1))), _ok(_tensor((0, 3), (1, 0))), False, "m") is None
    assert cmp(_ok(_tensor((2, 5), (6, 1))), _ok(_tensor((2, 5), (5, 1))), False, "m")


def test_errors_and_pytorch_gaps(compare: Any) -> None:
    cmp = compare.compare_outcome
    base = _tensor((2,), (1,))
    assert cmp(_raised("IndexError"), _raised("IndexError"), False, "meta") is None
    assert "both raised" in cmp(_raised("NotImplementedError"), _raised("RuntimeError"),
                                False, "meta")[0]
    assert cmp(_raised("TypeError"), _ok(base), False, "meta")[0] == "Plait raised TypeError"
    # PyTorch has no meta/fake kernel: any Plait error matches
    assert cmp(_raised("RuntimeError"), _raised("DynamicOutputShapeException", "RuntimeError"),
               False, "fake") is None
    assert cmp(_raised("ValueError"), _raised("NotImplementedError"), False, "meta") is None
    # ...and so does a result with the layout of PyTorch's real run, not another one
    gap = _raised("NotImplementedError", real=_tensor((2,), (1,), device="cpu"))
    assert cmp(_ok(base), gap, False, "meta") is None
    wrong = cmp(_ok(_tensor((3,), (1,))), gap, False, "meta")
    assert wrong is not None and "CPU run" in wrong[1]
    # a Plait error that PyTorch's real computation raises too (its meta kernel is looser)
    looser = _ok(base, real={"kind": "raised", "type": "NotImplementedError",
                             "category": "NotImplementedError"})
    assert cmp(_raised("NotImplementedError"), looser, False, "meta") is None
    assert cmp(_raised("TypeError"), looser, False, "meta") is not None


def test_report_groups_mismatches_by_category(compare: Any) -> None:
    rows = {"exp": None, "sin": None}
    mine = {("exp", "float32", 0): _ok(_tensor((2, 3), (3, 1))),
            ("sin", "float32", 0): _ok(_tensor((2, 3), (3, 1))),
            ("sin", "float32", 1): _raised("TypeError")}
    ref = {key: _ok(_tensor((2, 3), (1, 2))) for key in mine}
    table, failures = compare.compare(mine, ref, rows, "meta")
    assert table == {"exp": [1, 0, 1], "sin": [2, 0, 2]}
    assert compare.categories(failures) == [("stride", 2, ["exp", "sin"]),
                                            ("Plait raised TypeError", 1, ["sin"])]
    text = "\n".join(compare.report("meta", table, failures))
    assert "| stride | 2 | `exp`, `sin` |" in text


def test_meta_inputs_keep_strides_and_offset(collect: Any) -> None:
    real = torch.arange(24.0).reshape(4, 6)[1:, ::2]
    meta = collect.meta_copy(real)
    assert meta.device.type == "meta"
    assert (tuple(meta.shape), meta.stride(), meta.storage_offset()) == ((3, 3), (6, 2), 6)
    empty = collect.meta_copy(torch.zeros(0, 3))
    assert tuple(empty.shape) == (0, 3) and empty.device.type == "meta"
    encoded = collect.encode_layout((meta, 2, torch.float16))
    assert encoded["items"][0] == _tensor((3, 3), (6, 2), 6)
    assert encoded["items"][1:] == [{"kind": "scalar", "type": "int", "value": 2},
                                    {"kind": "scalar", "type": "dtype",
                                     "value": "torch.float16"}]
