"""dtypes: names, sizes, categories, aliases, pickling, and PyTorch's type promotion.

The expected promotion table is written out by hand from PyTorch's documented semantics
(categories bool < integer < floating < complex; uint8 with int8 meets at int16; float16 with
bfloat16 meets at float32; complex64 with float64 widens to complex128), never computed by the
code under test.
"""

from __future__ import annotations

import copy
import pickle
import threading

import pytest

import torch

# name, itemsize, is_floating_point, is_complex, is_signed
DTYPES = [
    ("bool", 1, False, False, False),
    ("uint8", 1, False, False, False),
    ("int8", 1, False, False, True),
    ("int16", 2, False, False, True),
    ("int32", 4, False, False, True),
    ("int64", 8, False, False, True),
    ("float16", 2, True, False, True),
    ("bfloat16", 2, True, False, True),
    ("float32", 4, True, False, True),
    ("float64", 8, True, False, True),
    ("complex64", 8, False, True, True),
    ("complex128", 16, False, True, True),
]
NAMES = [row[0] for row in DTYPES]


@pytest.fixture
def default_float64():
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(torch.float32)


# -- the dtype objects -----------------------------------------------------------------------


@pytest.mark.parametrize("name, itemsize, floating, is_complex, signed", DTYPES)
def test_dtype_attributes(name, itemsize, floating, is_complex, signed):
    dt = getattr(torch, name)
    assert isinstance(dt, torch.dtype)
    assert repr(dt) == f"torch.{name}"
    assert str(dt) == f"torch.{name}"
    assert dt.itemsize == itemsize
    assert dt.is_floating_point is floating
    assert dt.is_complex is is_complex
    assert dt.is_signed is signed


def test_twelve_distinct_dtypes():
    dts = [getattr(torch, name) for name in NAMES]
    assert len(set(dts)) == 12
    assert len({repr(d) for d in dts}) == 12


@pytest.mark.parametrize("alias, name", [
    ("float", "float32"), ("double", "float64"), ("half", "float16"), ("long", "int64"),
    ("int", "int32"), ("short", "int16"), ("cfloat", "complex64"), ("cdouble", "complex128"),
])
def test_aliases_are_the_same_objects(alias, name):
    assert getattr(torch, alias) is getattr(torch, name)


def test_torch_bool_is_the_dtype_not_the_builtin():
    assert torch.bool is not bool
    assert isinstance(torch.bool, torch.dtype)
    assert repr(torch.bool) == "torch.bool"


def test_dtype_class_lives_in_torch():
    assert torch.dtype.__module__ == "torch"
    assert type(torch.float32) is torch.dtype


@pytest.mark.parametrize("name", NAMES)
def test_pickle_returns_the_singleton(name):
    dt = getattr(torch, name)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(dt, protocol=protocol)) is dt
    assert copy.copy(dt) is dt
    assert copy.deepcopy(dt) is dt


def test_dtypes_are_hashable_and_usable_as_keys():
    table = {getattr(torch, name): name for name in NAMES}
    assert table[torch.float] == "float32"
    assert table[torch.long] == "int64"


def test_to_real_and_to_complex():
    assert torch.complex64.to_real() is torch.float32
    assert torch.complex128.to_real() is torch.float64
    assert torch.float32.to_real() is torch.float32
    assert torch.float64.to_complex() is torch.complex128
    assert torch.float32.to_complex() is torch.complex64
    assert torch.complex128.to_complex() is torch.complex128


@pytest.mark.parametrize("name, itemsize", [(row[0], row[1]) for row in DTYPES])
def test_tensor_element_size_follows_dtype(name, itemsize):
    t = torch.empty(3, dtype=getattr(torch, name))
    assert t.element_size() == itemsize
    assert t.itemsize == itemsize
    assert t.nbytes == 3 * itemsize
    assert t.dtype is getattr(torch, name)


# -- promote_types ---------------------------------------------------------------------------

# PyTorch's promotion lattice, written by hand: row/column order as ABBR.
ABBR = ["b1", "u1", "i1", "i2", "i4", "i8", "f2", "bf", "f4", "f8", "c8", "c16"]
PROMOTION_TABLE = """
      b1  u1  i1  i2  i4  i8  f2  bf  f4  f8  c8  c16
b1    b1  u1  i1  i2  i4  i8  f2  bf  f4  f8  c8  c16
u1    u1  u1  i2  i2  i4  i8  f2  bf  f4  f8  c8  c16
i1    i1  i2  i1  i2  i4  i8  f2  bf  f4  f8  c8  c16
i2    i2  i2  i2  i2  i4  i8  f2  bf  f4  f8  c8  c16
i4    i4  i4  i4  i4  i4  i8  f2  bf  f4  f8  c8  c16
i8    i8  i8  i8  i8  i8  i8  f2  bf  f4  f8  c8  c16
f2    f2  f2  f2  f2  f2  f2  f2  f4  f4  f8  c8  c16
bf    bf  bf  bf  bf  bf  bf  f4  bf  f4  f8  c8  c16
f4    f4  f4  f4  f4  f4  f4  f4  f4  f4  f8  c8  c16
f8    f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  c16 c16
c8    c8  c8  c8  c8  c8  c8  c8  c8  c8  c16 c8  c16
c16   c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16
"""
BY_ABBR = dict(zip(ABBR, NAMES))


def _table() -> list[tuple[str, str, str]]:
    rows = [line.split() for line in PROMOTION_TABLE.strip().splitlines()]
    header, body = rows[0], rows[1:]
    assert header == ABBR
    cases = []
    for row in body:
        for col, result in zip(header, row[1:]):
            cases.append((BY_ABBR[row[0]], BY_ABBR[col], BY_ABBR[result]))
    return cases


PROMOTIONS = _table()


def test_table_is_complete_and_symmetric():
    assert len(PROMOTIONS) == 144
    lookup = {(a, b): r for a, b, r in PROMOTIONS}
    for (a, b), r in lookup.items():
        assert lookup[(b, a)] == r


@pytest.mark.parametrize("a, b, expected", PROMOTIONS)
def test_promote_types(a, b, expected):
    assert torch.promote_types(getattr(torch, a), getattr(torch, b)) is getattr(torch, expected)


# -- result_type -----------------------------------------------------------------------------


def _dim(name: str) -> torch.Tensor:
    """A dimensioned tensor of dtype ``name``."""
    return torch.zeros(2, dtype=getattr(torch, name))


def _zero(name: str) -> torch.Tensor:
    """A 0-d tensor of dtype ``name``."""
    return torch.zeros((), dtype=getattr(torch, name))


@pytest.mark.parametrize("a, b, expected", PROMOTIONS)
def test_result_type_of_two_dimensioned_tensors_is_promote_types(a, b, expected):
    assert torch.result_type(_dim(a), _dim(b)) is getattr(torch, expected)


@pytest.mark.parametrize("a, b, expected", PROMOTIONS)
def test_result_type_of_two_zero_dim_tensors_is_promote_types(a, b, expected):
    assert torch.result_type(_zero(a), _zero(b)) is getattr(torch, expected)


@pytest.mark.parametrize("operands, expected", [
    # Python scalars do not raise the dtype within the tensor's category.
    ((lambda: _dim("int32"), 2.5), torch.float32),
    ((lambda: _dim("int32"), 2), torch.int32),
    ((lambda: _dim("uint8"), 1000), torch.uint8),
    ((lambda: _dim("int8"), -1), torch.int8),
    ((lambda: _dim("float16"), 1.0), torch.float16),
    ((lambda: _dim("bfloat16"), 1.0), torch.bfloat16),
    ((lambda: _dim("float16"), 1), torch.float16),
    ((lambda: _dim("float64"), 1.0), torch.float64),
    ((lambda: _dim("bool"), 1), torch.int64),
    ((lambda: _dim("bool"), 1.5), torch.float32),
    ((lambda: _dim("bool"), True), torch.bool),
    ((lambda: _dim("int64"), True), torch.int64),
    ((lambda: _dim("float32"), 1j), torch.complex64),
    ((lambda: _dim("float64"), 1j), torch.complex128),
    ((lambda: _dim("int32"), 1j), torch.complex64),
    ((lambda: _dim("complex64"), 2.0), torch.complex64),
    # 0-d tensors do not raise the dtype within the category either...
    ((lambda: _dim("int32"), lambda: _zero("int64")), torch.int32),
    ((lambda: _dim("uint8"), lambda: _zero("int8")), torch.uint8),
    ((lambda: _dim("float16"), lambda: _zero("float64")), torch.float16),
    ((lambda: _dim("float32"), lambda: _zero("complex128")), torch.complex64),
    # ... but a higher category wins, keeping its own dtype (not the default)
    ((lambda: _dim("int32"), lambda: _zero("float32")), torch.float32),
    ((lambda: _dim("int32"), lambda: _zero("float64")), torch.float64),
    ((lambda: _dim("int64"), lambda: _zero("float16")), torch.float16),
    ((lambda: _dim("bool"), lambda: _zero("int8")), torch.int8),
    ((lambda: _dim("bool"), lambda: _zero("uint8")), torch.uint8),
    # 0-d tensors beat Python scalars within a category
    ((lambda: _zero("int32"), 1), torch.int32),
    ((lambda: _zero("float16"), 1.0), torch.float16),
    ((lambda: _zero("int32"), 2.5), torch.float32),
    ((lambda: _zero("bool"), 1), torch.int64),
    ((lambda: _zero("int8"), lambda: _zero("int16")), torch.int16),
    # Several operands of each class
    ((lambda: _dim("int8"), lambda: _dim("int16"), 1.0), torch.float32),
    ((lambda: _dim("int8"), lambda: _zero("float64"), 1j), torch.complex128),
])
def test_result_type_mixed(operands, expected):
    args = [op() if callable(op) else op for op in operands]
    assert torch.result_type(*args) is expected


def test_result_type_python_float_follows_default_dtype(default_float64):
    assert torch.result_type(_dim("int32"), 2.5) is torch.float64
    assert torch.result_type(_dim("float32"), 2.5) is torch.float32
    assert torch.result_type(_dim("int32"), 1j) is torch.complex128


def test_result_type_rejects_non_numbers():
    with pytest.raises(TypeError):
        torch.result_type(_dim("int32"), "2")


@pytest.mark.parametrize("a, b, expected", [
    (lambda: _dim("int32"), 2.5, torch.float32),
    (lambda: _dim("float16"), 1.0, torch.float16),
    (lambda: _dim("bool"), 1, torch.int64),
    (lambda: _dim("int32"), lambda: _zero("int64"), torch.int32),
    (lambda: _dim("int32"), lambda: _zero("float32"), torch.float32),
    (lambda: _dim("uint8"), lambda: _dim("int8"), torch.int16),
    (lambda: _dim("float16"), lambda: _dim("bfloat16"), torch.float32),
    (lambda: _dim("complex64"), lambda: _dim("float64"), torch.complex128),
])
def test_arithmetic_result_dtype_follows_result_type(a, b, expected):
    x = a()
    y = b() if callable(b) else b
    assert (x + y).dtype is expected
    assert (x * y).dtype is expected


def test_default_dtype_is_process_wide():
    seen = {}

    def probe():
        seen["dtype"] = torch.get_default_dtype()
        seen["float"] = torch.tensor(1.5).dtype

    torch.set_default_dtype(torch.float64)
    try:
        assert torch.tensor(1.5).dtype is torch.float64
        worker = threading.Thread(target=probe)
        worker.start()
        worker.join()
    finally:
        torch.set_default_dtype(torch.float32)
    # PyTorch keeps the default dtype in one global: the worker sees the main thread's setting
    assert seen == {"dtype": torch.float64, "float": torch.float64}


@pytest.mark.parametrize("bad", [torch.int64, torch.complex64, torch.bool])
def test_set_default_dtype_rejects_non_floating(bad):
    with pytest.raises(TypeError):
        torch.set_default_dtype(bad)
    assert torch.get_default_dtype() is torch.float32
