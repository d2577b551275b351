"""Reference kernels of the unary, binary, compare and ternary groups.

Every kernel follows the primitive conventions of :mod:`torch._core.prims`: the output is
preallocated, inputs already have the output's dtype (compare/logical kernels: a common dtype,
output bool; ``where``: a bool condition) and the output's shape (stride-0 broadcast).
float16 and bfloat16 compute in float32; the special functions numpy lacks (erf, erfc, erfinv,
lgamma, digamma) compute in float64. Integer arithmetic wraps, as in PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._core import dtype as _dtype, op_tables as _op_tables
from .._core.tensor import Tensor
from .common import bf16_to_f32, load, np_view, store

Kernel = Callable[..., None]


def _is_int(t: Tensor) -> bool:
    return t._dtype._category <= _dtype.INT


def _values(t: Tensor) -> np.ndarray:
    """The values a kernel computes with: half types widen to float32."""
    return load(t, widen_half=True)


# -- special functions numpy does not have (float64) ----------------------------------------


def _vectorised(fn: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    ufunc = np.frompyfunc(fn, 1, 1)

    def apply(x: np.ndarray) -> np.ndarray:
        return np.asarray(ufunc(np.asarray(x, np.float64)), dtype=np.float64)

    return apply


def _lgamma_scalar(x: float) -> float:
    if math.isnan(x):
        return x
    if math.isinf(x) or (x <= 0 and x == math.floor(x)):
        return math.inf  # the poles at 0, -1, -2, ...
    return math.lgamma(x)


erf64 = _vectorised(math.erf)
erfc64 = _vectorised(math.erfc)
lgamma64 = _vectorised(_lgamma_scalar)

# Bernoulli numbers B2k / (2k) for the asymptotic series of digamma.
_DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def digamma64(x: np.ndarray) -> np.ndarray:
    """psi(x): reflection for x < 0, recurrence up to x >= 10, then the asymptotic series."""
    x = np.array(x, np.float64)
    result = np.zeros_like(x)
    with np.errstate(all="ignore"):
        # digamma(+-0) = -+inf and NaN at the negative integers, as in PyTorch
        zero = x == 0
        pole = (x < 0) & (x == np.floor(x))
        neg = (x < 0) & ~pole
        # psi(x) = psi(1 - x) - pi / tan(pi x)
        result[neg] -= np.pi / np.tan(np.pi * x[neg])
        x = np.where(neg, 1 - x, x)
        small = np.isfinite(x) & (x < 10) & ~zero & ~pole
        while small.any():
            result[small] -= 1 / x[small]
            x = np.where(small, x + 1, x)
            small &= x < 10
        inv2 = 1 / (x * x)
        series = np.zeros_like(x)
        for coef in reversed(_DIGAMMA_SERIES):
            series = (series + coef) * inv2
        result += np.log(x) - 0.5 / x - series
        result = np.where(np.isposinf(x), np.inf, result)
        result[zero] = np.where(np.signbit(x[zero]), np.inf, -np.inf)
        result[pole] = np.nan
    return result


def erfinv64(y: np.ndarray) -> np.ndarray:
    """erf^-1(y): Giles' single-precision approximation refined by Newton steps on erf."""
    y = np.array(y, np.float64)
    with np.errstate(all="ignore"):
        w = -np.log((1 - y) * (1 + y))
        central = w < 5
        wc = w - 2.5
        p_c = np.polyval([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                          0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
                          1.50140941], wc)
        wt = np.sqrt(w) - 3
        p_t = np.polyval([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                          0.00573950773, -0.0076224613, 0.00943887047, 1.00167406,
                          2.83297682], wt)
        x = np.where(central, p_c, p_t) * y
        for _ in range(3):
            err = erf64(x) - y
            step = err / (2 / math.sqrt(math.pi) * np.exp(-x * x))
            x = np.where(np.isfinite(step), x - step, x)
        x = np.where(y == 1, np.inf, x)
        x = np.where(y == -1, -np.inf, x)
        x = np.where(np.abs(y) > 1, np.nan, x)
    return x


# -- unary -------------------------------------------------------------------------------


def unary(fn: Callable[[np.ndarray], Any], *, f64: bool = False, ints: Any = None) -> Kernel:
    """A unary kernel: ``fn`` over the input's values (in float64 when ``f64``); integer and
    bool inputs use ``ints`` instead when given (``"copy"`` copies them unchanged)."""

    def kernel(out: Tensor, a: Tensor) -> None:
        x = _values(a)
        if _is_int(a) and ints is not None:
            if ints == "copy":
                store(out, x)
                return
            with np.errstate(all="ignore"):
                store(out, ints(x))
            return
        if f64:
            x = x.astype(np.float64)
        with np.errstate(all="ignore"):
            store(out, fn(x))

    kernel.__name__ = getattr(fn, "__name__", "unary")
    return kernel


def _sign(x: np.ndarray) -> np.ndarray:
    # (0 < x) - (x < 0): sign(NaN) and sign(-0.0) are 0, as in PyTorch
    if x.dtype == np.bool_:
        return x
    if x.dtype.kind == "c":  # sgn: z / |z|, and 0 at 0
        with np.errstate(all="ignore"):
            return np.where(x == 0, 0, x / np.abs(x)).astype(x.dtype)
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def _abs(x: np.ndarray) -> np.ndarray:
    return np.abs(x)


def _bitwise_not(x: np.ndarray) -> np.ndarray:
    return np.invert(x)


def _isnan(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "biu":
        return np.zeros(x.shape, np.bool_)
    return np.isnan(x)


def _logical_not(x: np.ndarray) -> np.ndarray:
    return x == 0


def _sigmoid(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c":
        return 1 / (1 + np.exp(-x))
    # e = e^-|x| never overflows: 1 / (1 + e) above 0, e / (1 + e) below
    e = np.exp(-np.abs(x))
    return np.where(x < 0, e, 1.0) / (1 + e)


def _wide_dtype(x: np.ndarray) -> np.dtype:
    """Where a floating function computes ``x``: complex in complex128, the rest in float64."""
    return np.dtype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _floating(fn: Callable[[np.ndarray], Any]) -> Callable[[np.ndarray], Any]:
    """Floating functions compute in float64 (complex in complex128) and round once on
    store, which gives the correctly rounded float32 (and half, complex64) results PyTorch's
    vectorised math gives, and a reference no worse than a backend's single-precision math
    where a function is ill-conditioned (complex pow near large exponents, sigmoid near its
    poles); integer inputs (seen only when a backend tests a primitive directly) compute
    there too and truncate back, so the kernel never fails on a dtype."""

    def apply(x: np.ndarray) -> Any:
        return fn(x.astype(_wide_dtype(x)))

    return apply


def _wide(fn: Callable[[np.ndarray, np.ndarray], Any]) -> Callable[[np.ndarray, np.ndarray], Any]:
    """The binary form of :func:`_floating`."""

    def apply(a: np.ndarray, b: np.ndarray) -> Any:
        wide = _wide_dtype(a)
        return fn(a.astype(wide), b.astype(wide))

    apply.__name__ = getattr(fn, "__name__", "binary")
    return apply


_UNARY_KERNELS: dict[str, Kernel] = {
    "neg": unary(np.negative, ints=np.negative),
    "abs": unary(_abs, ints=_abs),
    "sign": unary(_sign, ints=_sign),
    "floor": unary(np.floor, ints="copy"),
    "ceil": unary(np.ceil, ints="copy"),
    "round": unary(np.rint, ints="copy"),  # half to even, like nearbyint
    "trunc": unary(np.trunc, ints="copy"),
    "bitwise_not": unary(_bitwise_not, ints=_bitwise_not),
    "logical_not": unary(_logical_not, ints=_logical_not),
    "isnan": unary(_isnan, ints=_isnan),
    "erf": unary(erf64, f64=True),
    "erfc": unary(erfc64, f64=True),
    "erfinv": unary(erfinv64, f64=True),
    "lgamma": unary(lgamma64, f64=True),
    "digamma": unary(digamma64, f64=True),
    "rsqrt": unary(_floating(lambda x: 1 / np.sqrt(x))),
    "sigmoid": unary(_floating(_sigmoid)),
    "reciprocal": unary(_floating(lambda x: 1 / x)),
}
# The floating functions whose table row names a numpy function ("np.<name>"): that function
# in float64, rounded once on store.
for _row in _op_tables.POINTWISE:
    if _row.ref.startswith("np."):
        _UNARY_KERNELS[_row.prim] = unary(_floating(getattr(np, _row.ref[3:])))
        _UNARY_KERNELS[_row.prim].__name__ = _row.prim


# -- binary ------------------------------------------------------------------------------


def binary(fn: Callable[[np.ndarray, np.ndarray], Any]) -> Kernel:
    """A kernel applying ``fn`` to both inputs' values (half types in float32)."""

    def kernel(out: Tensor, a: Tensor, b: Tensor) -> None:
        with np.errstate(all="ignore"):  # integer overflow wraps, as in PyTorch
            store(out, fn(_values(a), _values(b)))

    kernel.__name__ = getattr(fn, "__name__", "binary")
    return kernel


def _ufunc_kernel(ufunc: np.ufunc) -> Kernel:
    """A kernel writing straight into ``out`` (no temporary) where numpy has the dtype."""

    def kernel(out: Tensor, a: Tensor, b: Tensor) -> None:
        if out._dtype in (_dtype.bfloat16, _dtype.float16):
            store(out, ufunc(_values(a), _values(b)))
        else:
            with np.errstate(all="ignore"):
                ufunc(np_view(a), np_view(b), out=np_view(out))

    kernel.__name__ = ufunc.__name__
    return kernel


def _check_int_divisor(b: np.ndarray) -> None:
    if b.dtype.kind in "biu" and (b == 0).any():
        raise RuntimeError("ZeroDivisionError")


def _sub(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:  # the public layer refuses bool; a backend test may not
        return np.logical_xor(a, b)
    return np.subtract(a, b)


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind not in "biu":
        return _wide(np.power)(a, b)
    # Integers: repeated squaring wraps like C; a negative exponent gives 1 / a**|b|
    # truncated, i.e. 1 for a == 1, +-1 for a == -1 and 0 otherwise.
    kind = a.dtype
    if kind == np.bool_:
        a, b = a.astype(np.uint8), b.astype(np.uint8)
    result = np.power(a, np.where(b < 0, 0, b).astype(a.dtype))
    if b.dtype.kind == "i":
        neg = b < 0
        odd = (b % 2) != 0
        inverse = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(a.dtype)
        result = np.where(neg, inverse, result)
    return result.astype(kind)


def _remainder(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "biu":
        _check_int_divisor(b)
        return np.remainder(a, b)
    # Python's modulo: the sign of the divisor (fmod corrected by one divisor)
    mod = np.fmod(a, b)
    fix = (mod != 0) & ((b < 0) != (mod < 0))
    return np.where(fix, mod + b, mod)


def _fmod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _check_int_divisor(b)
    return np.fmod(a, b)


def _floor_divide_float(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Python's float floor division, exact where ``floor(a / b)`` is not."""
    mod = np.fmod(a, b)
    div = (a - mod) / b
    div = np.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    floored = np.floor(div)
    floored = np.where(div - floored > 0.5, floored + 1, floored)
    floored = np.where(div == 0, np.copysign(np.zeros_like(div), a / b), floored)
    return np.where(b == 0, a / b, floored)


def _div(a: np.ndarray, b: np.ndarray, rounding_mode: str | None) -> np.ndarray:
    if a.dtype.kind in "biu":
        if a.dtype == np.bool_:
            a, b = a.astype(np.uint8), b.astype(np.uint8)
        _check_int_divisor(b)
        floor = np.floor_divide(a, b)
        if rounding_mode == "floor":
            return floor
        # truncation: one up from the floor when the exact quotient is negative and inexact
        inexact = np.remainder(a, b) != 0
        negative = (a < 0) != (b < 0)
        return np.where(inexact & negative, floor + 1, floor).astype(a.dtype)
    if rounding_mode is None:
        return a / b
    if rounding_mode == "trunc":
        return np.trunc(a / b)
    if rounding_mode == "floor":
        return _floor_divide_float(a, b)
    raise ValueError(f"div: unknown rounding_mode {rounding_mode!r}")


def div(out: Tensor, a: Tensor, b: Tensor, rounding_mode: str | None = None) -> None:
    with np.errstate(all="ignore"):
        store(out, _div(_values(a), _values(b), rounding_mode))


def _bits(dt: np.dtype) -> int:
    return dt.itemsize * 8


def _left_shift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:
        a, b = a.astype(np.uint8), b.astype(np.uint8)
    width = _bits(a.dtype)
    # shifts by a negative amount or by the width or more give 0; the shift itself is done
    # unsigned so that it wraps
    unsigned = a.astype(np.dtype(f"u{a.dtype.itemsize}"))
    bad = (b.astype(np.int64) < 0) | (b.astype(np.int64) >= width)
    safe = np.where(bad, 0, b).astype(unsigned.dtype)
    shifted = np.left_shift(unsigned, safe).astype(a.dtype)
    return np.where(bad, np.zeros_like(a), shifted)


def _right_shift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:
        a, b = a.astype(np.uint8), b.astype(np.uint8)
    signed = a.dtype.kind == "i"
    limit = _bits(a.dtype) - (1 if signed else 0)
    # out-of-range shifts keep only the sign: 0 or -1 (0 for unsigned)
    bad = (b.astype(np.int64) < 0) | (b.astype(np.int64) >= limit)
    safe = np.where(bad, 0, b).astype(a.dtype)
    shifted = np.right_shift(a, safe)
    fill = np.right_shift(a, limit) if signed else np.zeros_like(a)
    return np.where(bad, fill, shifted).astype(a.dtype)


def _nextafter_bf16(a_bits: np.ndarray, b_bits: np.ndarray) -> np.ndarray:
    """nextafter on bfloat16 bit patterns (sign-magnitude ordering of the 16 bits)."""
    a, b = bf16_to_f32(a_bits), bf16_to_f32(b_bits)
    bits = a_bits.astype(np.int32)
    towards_b = np.where((a < b) == (a > 0), bits + 1, bits - 1)
    smallest = np.where(b < 0, 0x8001, 0x0001)
    result = np.where(a == 0, smallest, towards_b)
    result = np.where(a == b, b_bits.astype(np.int32), result)
    result = np.where(np.isnan(a) | np.isnan(b), 0x7FC0, result)
    return result.astype(np.uint16)


def nextafter(out: Tensor, a: Tensor, b: Tensor) -> None:
    # the step is one unit in the dtype's own precision: no widening
    if out._dtype is _dtype.bfloat16:
        np_view(out)[...] = _nextafter_bf16(np_view(a), np_view(b))
    else:
        np.nextafter(np_view(a), np_view(b), out=np_view(out))


def _sigmoid_backward(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    # d sigmoid = y (1 - y); complex gradients take the conjugate derivative (PyTorch's rule)
    return g * np.conj((1 - y) * y)


def _tanh_backward(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    # d tanh = 1 - y^2, as (1 - y)(1 + y): no cancellation near |y| = 1 (one factor is exact)
    return g * np.conj((1 - y) * (1 + y))


_BINARY_KERNELS: dict[str, Kernel] = {
    "add": _ufunc_kernel(np.add),
    "mul": _ufunc_kernel(np.multiply),
    "sub": binary(_sub),
    "pow": binary(_pow),
    "maximum": _ufunc_kernel(np.maximum),
    "minimum": _ufunc_kernel(np.minimum),
    "fmax": _ufunc_kernel(np.fmax),
    "fmin": _ufunc_kernel(np.fmin),
    "atan2": binary(_wide(np.arctan2)),
    "hypot": binary(_wide(np.hypot)),
    "copysign": binary(np.copysign),
    "nextafter": nextafter,
    "remainder": binary(_remainder),
    "fmod": binary(_fmod),
    "bitwise_and": _ufunc_kernel(np.bitwise_and),
    "bitwise_or": _ufunc_kernel(np.bitwise_or),
    "bitwise_xor": _ufunc_kernel(np.bitwise_xor),
    "bitwise_left_shift": binary(_left_shift),
    "bitwise_right_shift": binary(_right_shift),
    "div": div,
    "sigmoid_backward": binary(_wide(_sigmoid_backward)),
    "tanh_backward": binary(_wide(_tanh_backward)),
}


# -- compare (write bool) ----------------------------------------------------------------


def compare(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Kernel:
    """A kernel writing ``fn(a, b)`` (bool) into a bool ``out``."""

    def kernel(out: Tensor, a: Tensor, b: Tensor) -> None:
        with np.errstate(all="ignore"):
            store(out, fn(load(a), load(b)))

    kernel.__name__ = getattr(fn, "__name__", "compare")
    return kernel


_COMPARE_KERNELS: dict[str, Kernel] = {
    "eq": compare(np.equal),
    "ne": compare(np.not_equal),
    "lt": compare(np.less),
    "le": compare(np.less_equal),
    "gt": compare(np.greater),
    "ge": compare(np.greater_equal),
    "logical_and": compare(lambda a, b: (a != 0) & (b != 0)),
    "logical_or": compare(lambda a, b: (a != 0) | (b != 0)),
    "logical_xor": compare(lambda a, b: (a != 0) ^ (b != 0)),
}


# -- ternary -----------------------------------------------------------------------------


def where(out: Tensor, condition: Tensor, a: Tensor, b: Tensor) -> None:
    # a pure selection: raw storage values (bfloat16 bits included) need no conversion
    np_view(out)[...] = np.where(np_view(condition).astype(np.bool_), np_view(a), np_view(b))


KERNELS: dict[str, Kernel] = {
    **_UNARY_KERNELS,
    **_BINARY_KERNELS,
    **_COMPARE_KERNELS,
    "where": where,
}

__all__ = ["KERNELS", "digamma64", "erf64", "erfc64", "erfinv64", "lgamma64"]
