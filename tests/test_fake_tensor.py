"""Fake tensors (``torch._subclasses``): metadata-only tensors on a stand-in device.

The op-database check runs every sample that succeeds on the CPU again on fake copies of its
inputs inside a ``FakeTensorMode`` and requires fake results with the real results' shapes,
dtypes, strides and device. Rows whose samples cannot run fake are listed in
``EXPECTED_FAILURES`` with the reason; a listed row whose samples all pass fails the test, so
the table only ever shrinks.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from conftest import row_ids

import torch
from torch._core.symbolic import ShapeEnv
from torch._subclasses import FakeTensor, FakeTensorMode
from torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    UnsupportedFakeTensorException,
)
from torch.testing import _opdb

ROWS = _opdb.load()

# Why a value-dependent result has no fake form (PyTorch's fake tensors raise here too).
DATA = "the output's size or value depends on the input's data"
ITEM = "the composite reads a value with item() (data the fake tensor does not hold)"

EXPECTED_FAILURES: dict[str, str] = {
    "Tensor.__getitem__": DATA + " (boolean masks)",
    "argwhere": DATA,
    "bincount": DATA,
    "equal": DATA + " (a Python bool)",
    "is_nonzero": DATA + " (a Python bool)",
    "masked_select": DATA,
    "nonzero": DATA,
    "tensor_split": DATA + " (sections given as a tensor)",
    "unique": DATA,
    "unique_consecutive": DATA,
    "allclose": DATA + " (a Python bool)",
    "repeat_interleave": DATA + " (repeats given as a tensor)",
    # PyTorch's istft checks the overlap-added window's minimum as a Python bool too
    "istft": ITEM + ": the window envelope's nonzero check",
}


def _quiet(fn: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()



@pytest.mark.parametrize("row", ROWS, ids=row_ids(ROWS))
def test_fake_run_matches_the_real_run(row: Any) -> None:
    checked = failed = 0
    for dtype in row.dtypes:
        for sample in _opdb.samples(row, torch, dtype):
            if not _opdb.has_tensors(torch, sample):
                continue
            try:
                expected = _quiet(lambda s=sample: _opdb.call(torch, row, s))
            except Exception:  # a sample the op refuses: nothing to compare the fake run with
                continue
            mode = FakeTensorMode()
            where = f"{row.name} [{dtype}] {sample.name!r}"
            try:
                fake_sample = _opdb.map_sample(torch, sample, mode.from_tensor)
                with mode:
                    got = _quiet(lambda s=fake_sample: _opdb.call(torch, row, s))
            except Exception as exc:
                assert row.name in EXPECTED_FAILURES, (
                    f"{where}: the fake run raised {type(exc).__name__}: {exc}")
                failed += 1
                continue
            got_leaves, exp_leaves = _opdb.leaves(got), _opdb.leaves(expected)
            assert len(got_leaves) == len(exp_leaves), where
            for i, (x, y) in enumerate(zip(got_leaves, exp_leaves)):
                if isinstance(y, torch.Tensor):
                    assert isinstance(x, FakeTensor), f"{where}, result {i}: {type(x).__name__}"
                    assert x.fake_mode is mode
                    assert (tuple(x.shape), x.dtype, x.device) == (
                        tuple(y.shape), y.dtype, y.device), (
                        f"{where}, result {i}: fake {tuple(x.shape)} {x.dtype} {x.device}, "
                        f"real {tuple(y.shape)} {y.dtype} {y.device}")
                    if not row.random:
                        assert x.stride() == y.stride(), (
                            f"{where}, result {i}: fake strides {x.stride()}, real {y.stride()}")
                    assert x.untyped_storage().device.type == "meta"
                else:
                    assert type(x) is type(y), f"{where}, result {i}"
            checked += 1
    if row.name in EXPECTED_FAILURES:
        assert failed, (f"{row.name} now runs fake in every sample: remove it from "
                        "EXPECTED_FAILURES")
    elif checked == 0:
        pytest.skip(f"{row.name}: no sample with tensors succeeds on the CPU")


def test_expected_failures_name_rows_of_the_database() -> None:
    names = {row.name for row in ROWS}
    assert set(EXPECTED_FAILURES) <= names, set(EXPECTED_FAILURES) - names


# -- the mode and the tensor ------------------------------------------------------------------


def test_from_tensor_keeps_metadata_and_holds_no_data() -> None:
    real = torch.arange(12.0).reshape(3, 4).t()
    mode = FakeTensorMode()
    fake = mode.from_tensor(real)
    assert isinstance(fake, FakeTensor) and fake.fake_mode is mode
    assert (fake.shape, fake.stride(), fake.dtype, fake.device) == (
        torch.Size([4, 3]), (1, 4), torch.float32, torch.device("cpu"))
    assert fake.untyped_storage().device.type == "meta"
    assert mode.from_tensor(real) is fake  # memoised per tensor
    with pytest.raises(DataDependentOutputException):
        fake.tolist()
    with mode, pytest.raises(DataDependentOutputException):
        fake.sum().item()


def test_ops_inside_the_mode_give_fake_tensors_on_the_real_device() -> None:
    mode = FakeTensorMode()
    x = mode.from_tensor(torch.ones(2, 3))
    with mode:
        y = x @ x.T
        z = torch.zeros(5, dtype=torch.int32)  # a factory inside the mode
        v = x.view(3, 2)
        same = x.add_(1)
        c = torch.tensor([1.0, 2.0])  # a constant made outside any op: lifted
    assert isinstance(y, FakeTensor) and y.shape == (2, 2) and y.device.type == "cpu"
    assert isinstance(z, FakeTensor) and z.dtype is torch.int32 and z.shape == (5,)
    assert isinstance(v, FakeTensor) and v.stride() == (2, 1)
    assert same is x
    assert isinstance(c, FakeTensor) and c.shape == (2,)
    assert "FakeTensor(..., size=(2, 2))" == repr(y)


def test_a_factory_device_and_to_report_the_requested_device() -> None:
    mode = FakeTensorMode()
    with mode:
        m = torch.empty(3, device="meta")
        x = torch.ones(2)
        y = x.to("meta")
    assert m.device.type == "meta" and x.device.type == "cpu" and y.device.type == "meta"
    assert all(isinstance(t, FakeTensor) for t in (m, x, y))


def test_real_inputs_are_refused_unless_allowed() -> None:
    real = torch.ones(2)
    mode = FakeTensorMode()
    fake = mode.from_tensor(torch.ones(2))
    with mode, pytest.raises(RuntimeError, match="real tensor reached FakeTensorMode"):
        fake + real
    lenient = FakeTensorMode(allow_non_fake_inputs=True)
    other = lenient.from_tensor(torch.ones(2))
    with lenient:
        out = other + real
    assert isinstance(out, FakeTensor) and out.shape == (2,)


def test_fake_tensors_go_through_autograd() -> None:
    mode = FakeTensorMode()
    w = mode.from_tensor(torch.ones(3, 2, requires_grad=True))
    x = mode.from_tensor(torch.ones(4, 3))
    with mode:
        loss = (x @ w).tanh().sum()
        loss.backward()
    assert loss.requires_grad and loss.grad_fn is not None
    assert isinstance(w.grad, FakeTensor) and w.grad.shape == (3, 2)


def test_symbolic_sizes_from_a_shape_env() -> None:
    env = ShapeEnv()
    mode = FakeTensorMode(shape_env=env)
    x = mode.from_tensor(torch.ones(4, 3))
    one = mode.from_tensor(torch.ones(1, 1))
    s0, s1 = x.shape
    assert isinstance(s0, torch.SymInt) and isinstance(s1, torch.SymInt)
    assert one.shape == (1, 1) and isinstance(one.shape[0], int)  # size 1 is specialised
    assert x.stride() == (s1, 1)
    with mode:
        y = torch.cat([x, x])
        z = (x * 2).sum(0)
        w = x + one  # broadcasting a size-1 dim
    assert (str(y.shape[0]), str(y.shape[1])) == ("s0 + s0", "s1")
    assert str(z.shape[0]) == "s1" and tuple(str(s) for s in w.shape) == ("s0", "s1")
    assert env.var_to_val == {"s0": 4, "s1": 3}


def test_static_shapes_false_makes_its_own_env() -> None:
    mode = FakeTensorMode(static_shapes=False)
    assert isinstance(mode.shape_env, ShapeEnv)
    assert isinstance(mode.from_tensor(torch.ones(5)).shape[0], torch.SymInt)
    assert FakeTensorMode().shape_env is None


def test_internal_allocations_inside_the_mode_are_fake() -> None:
    # composites allocate scratch tensors (index bounds, positions, comparisons): inside the
    # mode those are fake too, so no real tensor reaches the mode's operators
    mode = FakeTensorMode()
    x = mode.from_tensor(torch.randn(4, 3))
    with mode:
        idx = torch.tensor([3, 0, -1])
        results = [torch.take(x, idx), x.index_add(0, idx, torch.ones(3, 3)), torch.mode(x)[1],
                   torch.isclose(x, x), x.narrow_copy(0, 1, 2), x[True]]
    assert all(isinstance(r, FakeTensor) and r.fake_mode is mode for r in results)
    assert [tuple(r.shape) for r in results] == [(3,), (4, 3), (4,), (4, 3), (2, 3), (1, 4, 3)]
    assert torch.tensor([1.5]).item() == 1.5  # outside the mode: real again


def test_a_logging_mode_sees_internal_allocations() -> None:
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: list[str] = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = torch.arange(6.0).reshape(2, 3)
    with Log():
        out = torch.take(x, torch.tensor([5, 0]))
    assert out.tolist() == [5.0, 0.0]
    assert any("empty" in name for name in seen), seen


def test_values_of_fake_and_meta_tensors_raise_as_in_pytorch() -> None:
    meta = torch.ones(2, device="meta")
    for read in (lambda t: t[0].item(), lambda t: bool(t[0]), lambda t: t[0].is_nonzero(),
                 lambda t: torch.allclose(t, t)):
        with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
            read(meta)
    mode = FakeTensorMode()
    fake = mode.from_tensor(torch.ones(2))
    with mode:
        for read in (lambda t: t[0].item(), lambda t: bool(t[0]), lambda t: t[0].is_nonzero(),
                     lambda t: torch.allclose(t, t)):
            with pytest.raises(DataDependentOutputException):
                read(fake)


def _layout(t: torch.Tensor) -> tuple[Any, ...]:
    return tuple(t.shape), t.stride(), t.dtype


# Ops whose result layout PyTorch's meta kernels give although their values steer the
# computation: a tensor fill value, a tensor q, the data's range, a bool mask, the targets.
VALUE_STEERED = {
    "index_fill with a 0-d tensor value": lambda x: x.index_fill(0, torch.tensor([1]),
                                                                  torch.tensor(2.0)),
    "masked_fill with a 0-d tensor value": lambda x: x.masked_fill(x > 0, torch.tensor(2.0)),
    "quantile with a tensor q": lambda x: torch.quantile(x, torch.tensor([0.2, 0.5]), dim=1),
    "nanquantile with a tensor q": lambda x: torch.nanquantile(x, torch.tensor([0.5]), dim=0),
    "histc over the data's range": lambda x: torch.histc(x, bins=4),
    "index_put with a bool mask": lambda x: x.index_put((x > 0,), torch.tensor(1.0)),
    "masked_scatter": lambda x: x.masked_scatter(x > 0, torch.ones(2, 3)),
    "cross_entropy": lambda x: torch.nn.functional.cross_entropy(x, torch.tensor([0, 2])),
}


@pytest.mark.parametrize("name", list(VALUE_STEERED))
def test_value_steered_ops_give_the_real_layout_on_meta_and_fake(name: str) -> None:
    fn = VALUE_STEERED[name]
    real = fn(torch.randn(2, 3))
    with torch.device("meta"):
        on_meta = fn(torch.randn(2, 3))
    assert on_meta.device.type == "meta"
    mode = FakeTensorMode()
    x = mode.from_tensor(torch.randn(2, 3))
    with mode:
        fake = fn(x)
    assert isinstance(fake, FakeTensor) and fake.device.type == "cpu"
    assert _layout(on_meta) == _layout(fake) == _layout(real)


def test_data_dependent_sizes_on_meta_raise_as_in_pytorch() -> None:
    x = torch.randn(2, 3, device="meta")
    repeats = torch.tensor([1, 2], device="meta")
    with pytest.raises(RuntimeError, match="without output_size"):
        x.repeat_interleave(repeats, dim=0)
    assert tuple(x.repeat_interleave(repeats, dim=0, output_size=3).shape) == (3, 3)
    with pytest.raises(RuntimeError, match="to be on cpu, but it's on meta"):
        x.tensor_split(torch.tensor(2, device="meta"))


def test_a_0d_integer_tensor_index_selects_and_needs_its_value() -> None:
    x = torch.arange(12.0).reshape(3, 4)
    view = x[torch.tensor(1)]  # read as an int: a view, as PyTorch's select
    assert view.storage_offset() == 4 and view.data_ptr() == x.data_ptr() + 16
    assert x[torch.tensor(-1, dtype=torch.int32), [0, 3]].tolist() == [8.0, 11.0]
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        x.to("meta")[torch.tensor(1, device="meta")]
    mode = FakeTensorMode()
    fake = mode.from_tensor(x)
    index = mode.from_tensor(torch.tensor(1))
    with mode, pytest.raises(DataDependentOutputException):
        fake[index]


def test_data_dependent_sizes_under_a_fake_mode_raise_pytorchs_exception() -> None:
    from torch._subclasses import DynamicOutputShapeException

    mode = FakeTensorMode()
    x = mode.from_tensor(torch.randn(3, 4))
    with mode:
        for fn in (torch.nonzero, lambda t: torch.masked_select(t, t > 0),
                   lambda t: t[t > 0]):
            with pytest.raises(DynamicOutputShapeException):
                fn(x)
    with pytest.raises(NotImplementedError):  # on the meta device: PyTorch's meta error
        torch.nonzero(torch.randn(3, device="meta"))


def test_a_sparse_tensor_fakes_as_sparse_with_no_entries() -> None:
    real = torch.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]).to_sparse()
    hybrid = torch.arange(24.0).reshape(3, 4, 2).to_sparse(2)
    mode = FakeTensorMode()
    fake = mode.from_tensor(real)
    # as PyTorch's: sparse, on the real device, with no entries (so coalescing is exact)
    assert fake.layout == torch.sparse_coo and fake.device == real.device
    assert fake.shape == real.shape and fake._nnz() == 0 and fake.is_coalesced()
    assert mode.from_tensor(real) is fake
    with mode:
        product = torch.sparse.mm(fake, torch.ones(3, 5))
        partial = torch.sparse.sum(mode.from_tensor(hybrid), (0,))
        dense = fake.to_dense()
    assert isinstance(product, FakeTensor) and product.shape == (2, 5)
    assert product.stride() == torch.sparse.mm(real, torch.ones(3, 5)).stride()
    expected_partial = torch.sparse.sum(hybrid, (0,))
    assert partial.layout == torch.sparse_coo and partial.shape == expected_partial.shape
    assert isinstance(dense, FakeTensor) and dense.shape == (2, 3)
    with pytest.raises(UnsupportedFakeTensorException), mode:
        torch.sparse.mm(real, torch.ones(3, 5))
