"""Every op-database sample goes through the dispatcher, and the meta device computes its
metadata.

1. Under a logging dispatch mode, every sample's call reaches at least one ``aten::`` operator,
   and no tensor is made outside one (a tensor made while no aten operator runs is work the
   mode, fake tensors and the compiler would never see).
2. On the ``meta`` device, every sample gives the shape, dtype and strides of the real
   computation (inputs keep their strides and storage offsets on meta).

Rows of op families whose operators are still being written are listed below with the reason,
as strict expected failures: a row that starts passing fails the run until it leaves the list.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from conftest import row_ids

import torch
from torch._core import dispatch as _dispatch
from torch.testing import _opdb
from torch.testing._opdb import OpInfo

ROWS: list[OpInfo] = _opdb.load()

# Rows that only read metadata (dtypes, sizes): PyTorch answers them without a kernel too.
METADATA_ONLY = {"is_floating_point", "numel", "promote_types", "can_cast", "result_type",
                 "broadcast_shapes", "is_same_size"}

# Other families, not yet (neither views/conversions nor factories/random/linalg).
OTHERS_NOT_YET = {
    "equal": "tensors of different shapes are answered before aten::equal is called",
}
# Sparse COO tensors have no meta form yet (a meta tensor stands on a meta storage, which a
# sparse tensor has none of; PyTorch's meta device has sparse tensors).
_SPARSE_META = "sparse COO tensors on the meta device are not supported yet"
OTHERS_NOT_YET_ON_META: dict[str, str] = {
    "sparse.mm": _SPARSE_META, "sparse.addmm": _SPARSE_META, "sparse.sum": _SPARSE_META}

# Results whose size or value depends on the data: meta raises, as PyTorch's meta does. Their
# samples may raise on meta; the ones that run must still give the real metadata.
DATA_DEPENDENT = {
    "is_nonzero", "allclose", "equal", "unique", "unique_consecutive", "bincount",
    "tensor_split", "repeat_interleave", "Tensor.__getitem__", "masked_select", "nonzero",
    "argwhere", "istft",  # istft: the window envelope's nonzero check reads a value
}
# Host-computed LAPACK/binning ops that PyTorch's meta device does not run either (it raises
# NotImplementedError: no Meta kernel); the samples that run must still match.
NO_META_IN_PYTORCH = {"geqrf", "histogramdd"}



def _params(*expected_failures: dict[str, str]) -> list[Any]:
    params = []
    for row, rid in zip(ROWS, row_ids(ROWS)):
        reason = next((table[row.name] for table in expected_failures if row.name in table),
                      None)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(row, id=rid, marks=marks))
    return params


def _quiet(fn: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


# -- 1. a logging dispatch mode sees every call ------------------------------------------------


class LoggingMode:
    """Records the operators that reach the dispatcher's Python key and runs them (the
    dispatcher takes the mode off its stack while ``__torch_dispatch__`` runs)."""

    def __init__(self) -> None:
        self.aten: list[str] = []
        self.depth = 0  # aten operators running now
        self.strays: list[Any] = []  # tensors made while none ran

    @property
    def stray(self) -> int:
        return len(self.strays)

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        is_aten = func.namespace == "aten"
        if is_aten:
            self.aten.append(func.qualname)
            self.depth += 1
        if func.qualname == "aten::lift_fresh":
            # A tensor built from host data below the dispatcher (torch.tensor, from_numpy)
            # enters through lift_fresh, as in PyTorch: the mode sees it there.
            self.strays = [t for t in self.strays if t is not args[0]]
        try:
            return func(*args, **(kwargs or {}))
        finally:
            if is_aten:
                self.depth -= 1


def _under_mode(monkeypatch: pytest.MonkeyPatch, fn: Any) -> tuple[LoggingMode, Any, bool]:
    """Run ``fn`` under a LoggingMode that also counts tensors made outside an operator."""
    mode = LoggingMode()
    make = torch.Tensor._make.__func__
    active = [False]

    def counting_make(cls: type, *args: Any, **kwargs: Any) -> Any:
        t = make(cls, *args, **kwargs)
        if active[0] and mode.depth == 0:
            mode.strays.append(t)
        return t

    monkeypatch.setattr(torch.Tensor, "_make", classmethod(counting_make))
    _dispatch.push_mode(mode)
    active[0] = True
    try:
        result, raised = _quiet(fn), False
    except Exception as exc:  # an argument error before any op: compared by test_opdb
        result, raised = exc, True
    finally:
        active[0] = False
        _dispatch.pop_mode()
        monkeypatch.undo()
    return mode, result, raised


def _returns_its_inputs(sample: Any, result: Any) -> bool:
    """Whether every tensor of ``result`` is one of the sample's own tensors (``contiguous`` of
    a contiguous tensor, ``atleast_1d`` of a vector): no operator needs to run."""
    inputs: list[Any] = []
    _opdb.map_tensors(torch, (sample.input, sample.args, sample.kwargs), inputs.append)
    outs = [x for x in _opdb.leaves(result) if isinstance(x, torch.Tensor)]
    return bool(outs) and all(any(o is i for i in inputs) for o in outs)


@pytest.mark.parametrize("row", _params(OTHERS_NOT_YET))
def test_every_sample_reaches_an_aten_operator(row: OpInfo,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    ran = 0
    for dtype in row.dtypes:
        for sample in _opdb.samples(row, torch, dtype):
            if row.random:
                torch.manual_seed(0)
            mode, result, raised = _under_mode(
                monkeypatch, lambda s=sample: _opdb.call(torch, row, s))
            if raised:
                continue
            ran += 1
            where = f"{row.name} [{dtype}] {sample.name!r}"
            assert mode.stray == 0, (
                f"{where}: {mode.stray} tensor(s) made outside an aten operator (saw "
                f"{mode.aten})")
            if row.name in METADATA_ONLY or _returns_its_inputs(sample, result):
                continue
            assert mode.aten, f"{where}: no aten operator reached the dispatcher"
    assert ran, f"{row.name}: no sample ran"


# -- 2. the meta device gives the real metadata ------------------------------------------------


def _on_meta(t: Any) -> Any:
    """``t`` on meta with the same sizes, strides and storage offset over a storage of the same
    size (``t.to("meta")`` would make a strided input contiguous, as PyTorch's does)."""
    n = t.untyped_storage().nbytes() // t.element_size()
    return torch.empty(n, dtype=t.dtype, device="meta").as_strided(
        t.shape, t.stride(), t.storage_offset())


def _metadata(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return (tuple(x.shape), x.dtype, tuple(x.stride()))
    return type(x).__name__


@pytest.mark.parametrize("row", _params(OTHERS_NOT_YET_ON_META))
def test_meta_gives_the_real_metadata(row: OpInfo) -> None:
    compared = 0
    for dtype in row.dtypes:
        for sample in _opdb.samples(row, torch, dtype):
            if not _opdb.has_tensors(torch, sample):
                continue  # a factory: nothing to move to meta
            if row.random:
                torch.manual_seed(0)
            try:
                real = _quiet(lambda s=sample: _opdb.call(torch, row, s))
            except Exception:  # an argument error: test_opdb compares those
                continue
            meta = _opdb.map_sample(torch, sample, _on_meta)
            where = f"{row.name} [{dtype}] {sample.name!r} on meta"
            try:
                got = _quiet(lambda s=meta: _opdb.call(torch, row, s))
            except (NotImplementedError, RuntimeError):  # PyTorch's meta raises either
                if row.name in DATA_DEPENDENT or row.name in NO_META_IN_PYTORCH:
                    continue
                raise
            want, have = _opdb.leaves(real), _opdb.leaves(got)
            assert len(want) == len(have), f"{where}: {len(have)} results, not {len(want)}"
            for i, (w, h) in enumerate(zip(want, have)):
                if isinstance(w, torch.Tensor):
                    assert isinstance(h, torch.Tensor) and h.device.type == "meta", (
                        f"{where}, result {i}: {type(h).__name__} not on meta")
                    assert _metadata(h) == _metadata(w), (
                        f"{where}, result {i}: {_metadata(h)} on meta, {_metadata(w)} real")
            compared += 1
    if not compared and row.name not in DATA_DEPENDENT | NO_META_IN_PYTORCH:
        assert not any(_opdb.has_tensors(torch, s) for d in row.dtypes
                       for s in _opdb.samples(row, torch, d)), f"{row.name}: nothing compared"


# -- the harness catches what it is meant to catch ---------------------------------------------


def test_the_mode_sees_views_and_conversions(monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.ones(4, 4)
    calls = {
        "aten::t": lambda: x.t(),
        "aten::view": lambda: x.view(-1),
        "aten::select.int": lambda: x[0],
        "aten::slice.Tensor": lambda: x[1:3],
        "aten::transpose.int": lambda: x.transpose(0, 1),
        "aten::expand": lambda: x.expand(2, 4, 4),
        "aten::_to_copy": lambda: x.to(torch.float64),
        "aten::clone": lambda: x.clone(),
        "aten::detach": lambda: x.detach(),
        "aten::alias": lambda: x[...],
        "aten::split.Tensor": lambda: x.split(2),
        "aten::unbind.int": lambda: x.unbind(),
    }
    for qualname, fn in calls.items():
        mode, _, raised = _under_mode(monkeypatch, fn)
        assert not raised and qualname in mode.aten, (qualname, mode.aten)
        assert mode.stray == 0, qualname


def test_the_harness_counts_a_tensor_made_outside_an_operator(
        monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.ones(3)

    def sneaky() -> Any:
        return torch.Tensor._make(x._storage, x._shape, x._stride, 0, x._dtype, x._device)

    mode, _, _ = _under_mode(monkeypatch, sneaky)
    assert mode.stray == 1 and not mode.aten


def test_view_autograd_is_recorded_by_the_operator() -> None:
    x = torch.randn(3, 4, requires_grad=True)
    names = {
        "TBackward0": x.t(), "ViewBackward0": x.view(12),
        "TransposeBackward0": x.transpose(0, 1), "SelectBackward0": x[0],
        "SliceBackward0": x[1:], "ExpandBackward0": x.expand(2, 3, 4),
        "AliasBackward0": x[...], "PermuteBackward0": x.permute(1, 0),
        "UnsqueezeBackward0": x[None], "CloneBackward0": x.clone(),
    }
    for name, y in names.items():
        assert y.grad_fn is not None and y.grad_fn.name() == name
    y = x.t()[1:3, 0]  # (3,4) -> (4,3) -> rows 1..2, column 0 -> x[0, 1:3]
    y.sum().backward()
    expected = torch.zeros(3, 4)
    expected[0, 1:3] = 1
    assert torch.equal(x.grad, expected)


def test_views_on_meta_keep_strides_and_offsets() -> None:
    x = torch.empty(4, 6, device="meta")
    cases = [
        (x.t(), (6, 4), (1, 6), 0),
        (x[1], (6,), (1,), 6),
        (x[:, 2:5:2], (4, 2), (6, 2), 2),
        (x.unfold(1, 3, 2), (4, 2, 3), (6, 2, 1), 0),
        (x.diagonal(1), (4,), (7,), 1),
        (x[None, ..., 1], (1, 4), (24, 6), 1),
        (x.transpose(0, 1).expand(2, 6, 4), (2, 6, 4), (0, 1, 6), 0),
    ]
    for view, shape, stride, offset in cases:
        assert view.device.type == "meta"
        assert (tuple(view.shape), view.stride(), view.storage_offset()) == (
            shape, stride, offset)


def test_define_aten_refuses_a_second_core_kernel() -> None:
    def kernel(self: Any) -> Any:
        return self

    name = "_plait_test_twice"
    _dispatch.define_aten({name: (f"{name}(Tensor self) -> Tensor", kernel)})
    with pytest.raises(RuntimeError, match="already has a core kernel"):
        _dispatch.define_aten({name: (f"{name}(Tensor self) -> Tensor", kernel)})
