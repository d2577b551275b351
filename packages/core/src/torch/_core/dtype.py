"""dtypes: the scalar types, their names, sizes and PyTorch's promotion lattice.

``uint16``/``uint32``/``uint64`` are PyTorch's "barebones" unsigned types: storage dtypes that
checkpoints and ``from_numpy`` carry, with limited op support and no promotion with other
integer types (as in PyTorch)."""

from __future__ import annotations

# Categories order the promotion lattice: bool < integer < floating < complex.
BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type (``torch.float32``...). Instances are singletons."""

    __slots__ = (
        "_category",
        "_name",
        "_np",
        "_real",
        "_signed",
        "itemsize",
    )

    def __init__(self, name: str, itemsize: int, category: int, np_name: str, signed: bool):
        self._name = name
        self.itemsize = itemsize
        self._category = category
        # numpy has no bfloat16: its bits are stored as uint16 and converted by the kernels.
        self._np = np_name
        self._signed = signed
        self._real = self

    @property
    def is_floating_point(self) -> bool:
        return self._category == FLOAT

    @property
    def is_complex(self) -> bool:
        return self._category == COMPLEX

    @property
    def is_signed(self) -> bool:
        return self._signed

    def to_real(self) -> dtype:
        """The real counterpart of a complex dtype (``complex64 -> float32``); else itself."""
        return self._real

    def to_complex(self) -> dtype:
        """The complex counterpart of a floating dtype (``float64 -> complex128``)."""
        if self._category == COMPLEX:
            return self
        return _TO_COMPLEX.get(self, complex64)

    def __repr__(self) -> str:
        return "torch." + self._name

    def __reduce__(self) -> str:
        # Pickled as the module attribute ``torch.<name>``, so unpickling returns the singleton.
        return self._name


dtype.__module__ = "torch"

# name, itemsize, category, numpy storage dtype, signed
_TABLE = [
    ("bool", 1, BOOL, "bool", False),
    ("uint8", 1, INT, "uint8", False),
    ("int8", 1, INT, "int8", True),
    ("int16", 2, INT, "int16", True),
    ("int32", 4, INT, "int32", True),
    ("int64", 8, INT, "int64", True),
    ("uint16", 2, INT, "uint16", False),
    ("uint32", 4, INT, "uint32", False),
    ("uint64", 8, INT, "uint64", False),
    ("float16", 2, FLOAT, "float16", True),
    ("bfloat16", 2, FLOAT, "uint16", True),
    ("float32", 4, FLOAT, "float32", True),
    ("float64", 8, FLOAT, "float64", True),
    ("complex64", 8, COMPLEX, "complex64", True),
    ("complex128", 16, COMPLEX, "complex128", True),
]

DTYPES: dict[str, dtype] = {row[0]: dtype(*row) for row in _TABLE}
bool_ = DTYPES["bool"]
uint8 = DTYPES["uint8"]
int8 = DTYPES["int8"]
int16 = DTYPES["int16"]
int32 = DTYPES["int32"]
int64 = DTYPES["int64"]
uint16 = DTYPES["uint16"]
uint32 = DTYPES["uint32"]
uint64 = DTYPES["uint64"]
float16 = DTYPES["float16"]
bfloat16 = DTYPES["bfloat16"]
float32 = DTYPES["float32"]
float64 = DTYPES["float64"]
complex64 = DTYPES["complex64"]
complex128 = DTYPES["complex128"]
complex64._real = float32
complex128._real = float64

# Python's scalar types stand for these wherever a dtype is taken, as in PyTorch
# (torch.zeros(2, dtype=bool), x.to(float), torch.as_tensor(order, dtype=int))
PYTHON_TYPES: dict[type, dtype] = {bool: bool_, int: int64, float: float64,
                                   complex: complex128}
_TO_COMPLEX = {float64: complex128, float32: complex64, float16: complex64, bfloat16: complex64}

# PyTorch's float8, float4 and sub-byte integer types, by name only: programs and libraries
# refer to them at import (transformers' FP8 cache names torch.float8_e4m3fn in a class body),
# but no op, conversion or printing supports them yet, so they stay out of DTYPES (the dtypes
# ops and kernels serve).
# name, itemsize, category, signed (as PyTorch reports them)
_NAMED_ONLY_TABLE = [
    *((name, 1, FLOAT, True) for name in (
        "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn_x2")),
    ("float8_e8m0fnu", 1, FLOAT, False),
    *((f"int{bits}", 1, INT, True) for bits in range(1, 8)),
    *((f"uint{bits}", 1, INT, False) for bits in range(1, 8)),
    # complex32 (chalf): kornia lists it beside the other complex dtypes
    ("complex32", 4, COMPLEX, True),
    # the quantized integer and raw-bits types of PyTorch's quantization and custom kernels
    ("qint8", 1, INT, True), ("quint8", 1, INT, False), ("qint32", 4, INT, True),
    ("quint4x2", 1, INT, False), ("quint2x4", 1, INT, False),
    ("bits1x8", 1, INT, False), ("bits2x4", 1, INT, False), ("bits4x2", 1, INT, False),
    ("bits8", 1, INT, False), ("bits16", 2, INT, False),
]
NAMED_ONLY: dict[str, dtype] = {
    name: dtype(name, itemsize, category, "", signed)
    for name, itemsize, category, signed in _NAMED_ONLY_TABLE
}
NAMED_ONLY["complex32"]._real = float16

# PyTorch's alternative names: torch.float, torch.long, torch.cfloat...
ALIASES: dict[str, dtype] = {
    "float": float32,
    "double": float64,
    "half": float16,
    "cfloat": complex64,
    "cdouble": complex128,
    "chalf": NAMED_ONLY["complex32"],
    "short": int16,
    "int": int32,
    "long": int64,
}

# Within a category, the smallest dtype that holds both (uint8/int8 meet at int16;
# float16/bfloat16 meet at float32).
_RANK = {
    uint8: 0,
    int8: 0,
    int16: 1,
    int32: 2,
    int64: 3,
    float16: 0,
    bfloat16: 0,
    float32: 1,
    float64: 2,
    complex64: 1,
    complex128: 2,
}
# The barebones unsigned types promote only with themselves and with floating types.
_BAREBONES_UNSIGNED = frozenset((uint16, uint32, uint64))
_SPECIAL = {
    frozenset((uint8, int8)): int16,
    frozenset((float16, bfloat16)): float32,
}


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` can be cast to without losing category."""
    if a is b:
        return a
    if a in _BAREBONES_UNSIGNED or b in _BAREBONES_UNSIGNED:
        return _promote_barebones(a, b)
    special = _SPECIAL.get(frozenset((a, b)))
    if special is not None:
        return special
    ca, cb = a._category, b._category
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if hi._category == COMPLEX and lo._category == FLOAT:
            # complex64 with float64 widens to complex128
            return complex128 if (lo is float64 or hi is complex128) else complex64
        return hi
    if ca == BOOL:
        return a
    return a if _RANK[a] >= _RANK[b] else b


def _promote_barebones(a: dtype, b: dtype) -> dtype:
    if a._category == FLOAT:
        return a
    if b._category == FLOAT:
        return b
    raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, "
                       f"attempted to promote {a!r} and {b!r}")


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether a result of dtype ``from_`` may be written into an output of dtype ``to``
    (``out=`` and in-place ops): any narrowing within a category is allowed, a step down to a
    lower category (float -> int, complex -> float, int -> bool) is not."""
    return to._category >= from_._category


def combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """Combine the result of a higher-priority operand class (dimensioned tensors) with a lower
    one (zero-dim tensors, then Python scalars): the lower class only matters when its category
    is above the higher's."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._category == COMPLEX:
        return higher
    if lower._category == COMPLEX:
        return higher.to_complex() if higher._category == FLOAT else lower
    if higher._category == FLOAT:
        return higher
    if higher._category == BOOL or lower._category >= FLOAT:
        return promote_types(higher, lower)
    return higher
