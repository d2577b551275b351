"""The op tables (torch/_core/op_tables.py: pointwise ops, reductions and scans): every row is
complete and consistent, the layers built from them follow them, and the native CPU backend's op
list is a subset of them (names and the dtypes its kernels run)."""

from __future__ import annotations

import numpy as np
import pytest

import torch
from torch import _refs
from torch._aten import elementwise as aten_elementwise
from torch._core import dispatch as _dispatch, dtype as _dtype, op_tables, prims
from torch._refs import elementwise as refs_elementwise
from torch.autograd import _formulas
from torch.autograd._formulas import elementwise as elementwise_formulas
from torch.testing import _opdb
from torch.testing._conformance import samples as conformance_samples
from torch.testing._opdb import elementwise as opdb_elementwise

ROWS = op_tables.POINTWISE
ARITY = {"unary": 1, "binary": 2, "compare": 2, "ternary": 3}
NAMED_DOMAINS = (op_tables.ANY, op_tables.WRAP, op_tables.SHIFT, op_tables.BOOL)


def row_id(row: op_tables.Pointwise) -> str:
    return row.name


# -- every row is complete ------------------------------------------------------------------


@pytest.mark.parametrize("row", ROWS, ids=row_id)
def test_row_names_a_primitive_of_its_group(row: op_tables.Pointwise) -> None:
    assert row.kind in op_tables.KINDS
    assert row.prim in prims.PRIMITIVES, row.prim
    assert prims.PRIMITIVES[row.prim][0] == row.kind


@pytest.mark.parametrize("row", ROWS, ids=row_id)
def test_row_has_a_reference_kernel(row: op_tables.Pointwise) -> None:
    assert row.prim in _refs.CPU_KERNELS
    if row.ref == op_tables.HAND:
        assert row.prim in refs_elementwise.KERNELS
    else:
        prefix, _, function = row.ref.partition(".")
        assert prefix == "np" and callable(getattr(np, function, None)), row.ref
        assert refs_elementwise.KERNELS[row.prim].__name__ == row.prim


@pytest.mark.parametrize("row", ROWS, ids=row_id)
def test_row_has_an_operator_and_a_derivative_or_says_it_has_none(
        row: op_tables.Pointwise) -> None:
    qualname = f"aten::{row.aten}"
    assert _dispatch.get(qualname) is not None, qualname
    formulas = _formulas.load()
    assert row.grad, "a row must say how it differentiates"
    assert qualname in formulas, qualname
    rule = formulas[qualname]
    if row.grad == op_tables.NONE:
        assert rule is elementwise_formulas._not_differentiable
    else:
        assert rule is not elementwise_formulas._not_differentiable
    if row.grad not in (op_tables.NONE, op_tables.ZERO, op_tables.RULE):
        assert row.kind == "unary", "expressions are written in x, y and g"
        assert elementwise_formulas.UNARY[row.aten].__name__ == f"d_{row.name}"


@pytest.mark.parametrize("row", ROWS, ids=row_id)
def test_row_has_a_domain_and_dtypes(row: op_tables.Pointwise) -> None:
    assert len(row.domain) == ARITY[row.kind]
    for entry in row.domain:
        if isinstance(entry, tuple):
            low, high, *flags = entry
            assert low < high and set(flags) <= {op_tables.NONZERO}, entry
        else:
            assert entry in NAMED_DOMAINS, entry
    assert row.dtypes and set(row.dtypes) <= set(op_tables.EVERY)
    assert row.promotion in op_tables.PROMOTIONS
    assert row.promotion in aten_elementwise.RULES


def test_names_are_unique_and_aliases_do_not_collide() -> None:
    names = [name for row in ROWS for name in (row.name, *row.aliases)]
    assert len(names) == len(set(names))


# -- the promotion rules as data agree with the op library's rules ----------------------------


@pytest.mark.parametrize("rule", sorted(op_tables.PROMOTIONS))
def test_promotion_data_agrees_with_the_rule_that_raises(rule: str) -> None:
    data = op_tables.PROMOTIONS[rule]
    check = aten_elementwise.RULES[rule]
    default = torch.get_default_dtype()
    for name in op_tables.EVERY:
        dt = _dtype.DTYPES[name]
        if name in data.refuses:
            with pytest.raises((RuntimeError, NotImplementedError)):
                check(dt, "op")
            continue
        compute, out = check(dt, "op")
        floats_it = data.integers_to_float and name in op_tables.INTS + ("bool",)
        assert compute is (default if floats_it else dt), (rule, name)
        if rule == "magnitude":  # abs: a complex number's magnitude is real
            assert out is compute.to_real(), (rule, name)
            continue
        assert out is (_dtype.bool_ if rule in ("to_bool", "ordered") else compute), (rule, name)


def _operand(name: str) -> torch.Tensor:
    return torch.ones(3, dtype=getattr(torch, name))


@pytest.mark.parametrize("row", [r for r in ROWS if r.generate], ids=row_id)
def test_public_op_accepts_exactly_the_dtypes_the_table_derives(
        row: op_tables.Pointwise) -> None:
    fn = getattr(torch, row.name)
    accepted = op_tables.public_dtypes(row, op_tables.ALL)
    for name in op_tables.ALL:
        args = (_operand(name),) * ARITY[row.kind]
        if name in accepted:
            fn(*args)
        else:
            with pytest.raises((RuntimeError, NotImplementedError)):
                fn(*args)


# -- the layers built from the table follow it ------------------------------------------------


def test_op_library_builds_the_generated_rows() -> None:
    generated = {r.name for r in ROWS if r.generate}
    built = {u.name for u in aten_elementwise.UNARY} | {b.name for b in aten_elementwise.BINARY}
    assert built == generated
    for row in ROWS:
        if not row.public:  # an aten operator only (sigmoid_backward), as in PyTorch
            assert not hasattr(torch, row.name), row.name
            assert callable(getattr(torch.ops.aten, row.name)), row.name
            continue
        for name in (row.name, *row.aliases):
            assert callable(getattr(torch, name)), name
            assert hasattr(torch.Tensor, name) or name == "where", name
        if row.generate and row.inplace:
            assert hasattr(torch.Tensor, f"{row.name}_"), row.name


def test_primitive_table_holds_the_rows_primitives() -> None:
    for kind in ("unary", "binary", "compare", "ternary"):
        in_table = [name for name, (group, _) in prims.PRIMITIVES.items() if group == kind]
        assert in_table == op_tables.primitives(kind)


def test_conformance_samples_take_the_rows_dtypes() -> None:
    for row in ROWS:
        assert conformance_samples.SAMPLES[row.prim].dtypes == \
            op_tables.primitive_dtypes(row.prim)


def test_op_database_rows_take_the_table_dtypes() -> None:
    by_name: dict[str, list[_opdb.OpInfo]] = {}
    for info in opdb_elementwise.OPS:
        by_name.setdefault(info.name, []).append(info)
    for row in ROWS:
        if not row.generate:
            continue
        expected = opdb_elementwise._DTYPES.get(row.name) or op_tables.public_dtypes(
            row, _opdb.ALL)
        for name in (row.name, *row.aliases):
            assert name in by_name, name
            assert by_name[name][0].dtypes == expected, name
            assert by_name[name][0].supports_out == row.out, name


@pytest.mark.parametrize("row", [r for r in ROWS if r.generate and r.kind == "unary"
                                 and isinstance(r.domain[0], tuple)], ids=row_id)
def test_op_database_samples_lie_in_the_row_domain(row: op_tables.Pointwise) -> None:
    """The sample domain is one place: the op database draws from the row's interval (the
    conformance suite's makers too: the next test)."""
    low, high = row.domain[0][:2]
    info = next(i for i in opdb_elementwise.OPS if i.name == row.name)
    make = _opdb.Maker(torch, seed=0)
    for sample in info.samples(torch, "float64", make):
        if sample.name == "specials":
            continue
        values = sample.input.double()
        if values.numel():
            assert low <= values.min().item() and values.max().item() <= high, sample.name


def test_conformance_makers_draw_from_the_row_domain() -> None:
    gen = conformance_samples.Gen(0)
    for row in ROWS:
        for entry in row.domain:
            if not isinstance(entry, tuple):
                continue
            low, high = entry[:2]
            maker = conformance_samples._maker(entry)
            values = maker(gen, (200,), _dtype.float64)[len(conformance_samples.SPECIALS):]
            assert low <= values.min() and values.max() <= high, (row.name, entry)
            if op_tables.NONZERO in entry:
                assert (values != 0).all()


# -- the native CPU backend's op list is a subset of the table ----------------------------------

try:
    from plait_backend_cpu import _C as native_module
except ImportError:  # plait-backend-cpu is not installed: the table's own tests still run
    native_module = None

# _C's rounding modes of div are kernels of the div primitive, not primitives of their own.
NATIVE_PRIMITIVE = {"div_trunc": "div", "div_floor": "div"}
NUMPY_STORAGE = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
                 "int32": np.int32, "int64": np.int64, "float32": np.float32,
                 "float64": np.float64, "float16": np.float16, "bfloat16": np.uint16}
BOOL_OUT_UNARY = ("isnan", "logical_not")


def native_ops() -> list[tuple[str, str]]:
    if native_module is None:
        return []
    ops = [(name, "unary") for name in native_module.UNARY_OPS]
    ops += [(name, "binary") for name in native_module.BINARY_OPS]
    ops += [(name, "compare") for name in native_module.COMPARE_OPS]
    return ops


def native_runs(name: str, group: str, dtype: str) -> bool:
    """Whether ``_C.<name>`` computes ``dtype`` itself (it returns False for a dtype it leaves
    to the reference kernel)."""
    code = native_module.DTYPES.index(dtype)
    a, b = np.ones(4, NUMPY_STORAGE[dtype]), np.ones(4, NUMPY_STORAGE[dtype])
    writes_bool = group == "compare" or name in BOOL_OUT_UNARY
    out = np.zeros(4, np.bool_ if writes_bool else NUMPY_STORAGE[dtype])
    fn = getattr(native_module, name)
    if group == "unary":
        out_code = native_module.DTYPES.index("bool") if writes_bool else code
        return bool(fn(out_code, code, (4,), out.ctypes.data, (1,), a.ctypes.data, (1,)))
    return bool(fn(code, (4,), out.ctypes.data, (1,), a.ctypes.data, (1,), b.ctypes.data,
                   (1,)))


@pytest.mark.parametrize(("name", "group"), native_ops(), ids=[n for n, _ in native_ops()])
def test_native_op_is_a_table_primitive_with_the_table_dtypes(name: str, group: str) -> None:
    prim = NATIVE_PRIMITIVE.get(name, name)
    rows = [r for r in ROWS if r.prim == prim]
    assert rows, f"_C.{name} has no row in the op table"
    assert rows[0].kind == group
    runs = [dt for dt in native_module.DTYPES if native_runs(name, group, dt)]
    assert runs, f"_C.{name} runs no dtype"
    extra = set(runs) - set(op_tables.primitive_dtypes(prim))
    assert not extra, f"_C.{name} runs {sorted(extra)}, which the table does not list"


def test_registered_cpu_kernels_are_table_primitives() -> None:
    pytest.importorskip("plait_backend_cpu._C", reason="plait-backend-cpu is not installed")
    from plait_backend_cpu import plugin
    from plait_backend_cpu.kernels import elementwise as cpu_elementwise

    from torch.backends import contract

    module = plugin.native()
    kernels = cpu_elementwise.make_kernels(module, contract.dtype_codes(module.DTYPES),
                                           contract.reference)
    memory = {name for name, (group, _) in prims.PRIMITIVES.items() if group == "memory"}
    table = {r.prim for r in ROWS}
    assert set(kernels) - memory <= table
    assert set(kernels) - memory == table  # and the native backend covers every row


# -- reductions and scans ------------------------------------------------------------------------

REDUCTIONS = op_tables.REDUCTIONS


def reduction_id(row: op_tables.Reduction) -> str:
    return row.name


@pytest.mark.parametrize("row", REDUCTIONS, ids=reduction_id)
def test_reduction_row_is_complete(row: op_tables.Reduction) -> None:
    from torch._aten import reductions  # noqa: F401  (defines the operators)
    from torch.autograd._formulas import reductions as reduction_formulas

    group, schema = prims.PRIMITIVES[row.prim]
    assert group == row.kind
    assert ("int[] dims" in schema) == (row.over == op_tables.OVER_DIMS), schema
    assert row.ref == op_tables.HAND and row.prim in _refs.CPU_KERNELS
    qualname = f"aten::{row.aten}"
    assert _dispatch.get(qualname) is not None, qualname
    rule = _formulas.load()[qualname]
    assert (rule is reduction_formulas._nothing) == (row.grad == op_tables.NONE), qualname
    assert row.promotion in op_tables.REDUCTION_PROMOTIONS
    assert len(row.domain) == 1 and (row.domain[0] == op_tables.ANY
                                     or row.domain[0][0] < row.domain[0][1])
    assert row.dtypes and set(row.dtypes) <= set(op_tables.EVERY)
    assert conformance_samples.SAMPLES[row.prim].dtypes == row.dtypes


def _reduced(row: op_tables.Reduction, x: torch.Tensor) -> torch.Tensor:
    result = getattr(torch, row.name)(x, 0) if row.over == op_tables.OVER_DIM else \
        getattr(torch, row.name)(x)
    return result[0] if isinstance(result, tuple) else result


@pytest.mark.parametrize("row", REDUCTIONS, ids=reduction_id)
def test_reduction_result_dtype_follows_its_promotion(row: op_tables.Reduction) -> None:
    for name in ("int8", "bool", "float16", "float64"):
        dt = getattr(torch, name)
        expected = {
            "accumulate": torch.int64 if name in ("int8", "bool") else dt,
            "same": dt,
            "to_bool": torch.bool,
            "index": torch.int64,
        }[row.promotion]
        assert _reduced(row, torch.ones(2, 3, dtype=dt)).dtype == expected, name


NATIVE_REDUCTIONS = [] if native_module is None else [
    *native_module.REDUCE_OPS, "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin"]


def native_reduction_runs(name: str, dtype: str) -> bool:
    """Whether ``_C.<name>`` reduces (or scans) ``dtype`` itself, into an output of the
    primitive's dtype (the input's; bool for any/all; int64 indices)."""
    code = native_module.DTYPES.index(dtype)
    storage = NUMPY_STORAGE[dtype]
    a = np.ones((2, 3), storage)
    fn = getattr(native_module, name)
    if name in native_module.REDUCE_OPS:
        writes_bool = name in ("any", "all")
        out = np.zeros((1, 3), np.bool_ if writes_bool else storage)
        out_code = native_module.DTYPES.index("bool") if writes_bool else code
        return bool(fn(out_code, code, (2, 3), out.ctypes.data, (3, 1), a.ctypes.data, (3, 1),
                       1))
    if name in ("argmax", "argmin"):
        out = np.zeros((1, 3), np.int64)
        return bool(fn(code, (2, 3), out.ctypes.data, (3, 1), a.ctypes.data, (3, 1), 0))
    if name in ("cumsum", "cumprod"):
        out = np.zeros((2, 3), storage)
        return bool(fn(code, (2, 3), out.ctypes.data, (3, 1), a.ctypes.data, (3, 1), 0))
    values, indices = np.zeros((2, 3), storage), np.zeros((2, 3), np.int64)
    return bool(fn(code, (2, 3), values.ctypes.data, (3, 1), indices.ctypes.data, (3, 1),
                   a.ctypes.data, (3, 1), 0))


@pytest.mark.parametrize("name", NATIVE_REDUCTIONS)
def test_native_reduction_is_a_table_row_with_the_table_dtypes(name: str) -> None:
    rows = [r for r in REDUCTIONS if r.prim == name]
    assert rows, f"_C.{name} has no row in the op table"
    runs = [dt for dt in native_module.DTYPES if native_reduction_runs(name, dt)]
    assert runs, f"_C.{name} runs no dtype"
    extra = set(runs) - set(rows[0].dtypes)
    assert not extra, f"_C.{name} runs {sorted(extra)}, which the table does not list"


def test_registered_cpu_reduction_kernels_are_table_rows() -> None:
    pytest.importorskip("plait_backend_cpu._C", reason="plait-backend-cpu is not installed")
    from plait_backend_cpu import plugin
    from plait_backend_cpu.kernels import reduce as cpu_reduce, scan as cpu_scan

    from torch.backends import contract

    module = plugin.native()
    codes = contract.dtype_codes(module.DTYPES)
    kernels = {**cpu_reduce.make_kernels(module, codes, contract.reference),
               **cpu_scan.make_kernels(module, codes, contract.reference)}
    # (the aten operators the backend plans on these native reductions, "aten::amax" and the
    # like, are composites it serves, not primitives: the table lists primitives)
    primitives = {name for name in kernels if "::" not in name}
    assert primitives == {r.prim for r in REDUCTIONS}


@pytest.mark.parametrize("name", ["div", "remainder", "fmod"])
def test_op_database_division_samples_lie_in_the_row_domain(name: str) -> None:
    (low, high), (divisor_low, divisor_high, flag) = op_tables.BY_NAME[name].domain
    assert flag == op_tables.NONZERO
    info = next(i for i in opdb_elementwise.OPS if i.name == name)
    make = _opdb.Maker(torch, seed=0)
    for sample in info.samples(torch, "float64", make):
        dividend, divisor = sample.input, sample.args[0]
        if isinstance(dividend, torch.Tensor) and dividend.numel():
            assert low <= dividend.min().item() and dividend.max().item() <= high, sample.name
        if isinstance(divisor, torch.Tensor) and divisor.numel():
            assert divisor_low <= divisor.min().item() <= divisor.max().item() <= divisor_high
            assert bool((divisor != 0).all()), sample.name
