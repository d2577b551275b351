"""``torch.testing.assert_close``: PyTorch's comparison of tensors, numpy arrays, Python
scalars and (nested) sequences and mappings of them, with its default tolerances per dtype and
its mismatch messages.

Values are compared on the host with numpy, in the inputs' common dtype (float16 in float16,
bfloat16 in float32 rounded back to bfloat16), so the reported differences read the same as
PyTorch's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._core import dtype as _dtype
from .._core.tensor import Tensor

__all__ = ["assert_close", "default_tolerances"]

# dtype name -> (rtol, atol); complex dtypes use their real part's, integers and bool compare
# exactly.
_TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def default_tolerances(*dtypes: _dtype.dtype) -> tuple[float, float]:
    """``(rtol, atol)`` for comparing values of ``dtypes``: the loosest of each dtype's
    defaults (exact, ``(0, 0)``, for integers and bool)."""
    rtol = atol = 0.0
    for dt in dtypes:
        r, a = _TOLERANCES.get(dt._name, (0.0, 0.0))
        rtol, atol = max(rtol, r), max(atol, a)
    return (rtol, atol) if rtol or atol else (0, 0)


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise and its default message."""

    def __init__(self, kind: type[Exception], message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.path: list[Any] = []


def _fail(message: str) -> _Mismatch:
    return _Mismatch(AssertionError, message)


# ---------------------------------------------------------------------------------------------
# inputs: what kind of pair is this?

def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, complex, np.number)) and not isinstance(x, (bool, np.bool_))


def _is_tensor_like(x: Any) -> bool:
    return isinstance(x, (Tensor, np.ndarray))


def _python_number(x: Any) -> int | float | complex:
    if isinstance(x, np.number):
        return x.item()
    return x


# ---------------------------------------------------------------------------------------------
# scalars


def _scalar_message(actual: Any, expected: Any, rtol: float, atol: float) -> str:
    a = int(actual) if isinstance(actual, bool) else actual
    e = int(expected) if isinstance(expected, bool) else expected
    abs_diff = abs(a - e)
    if abs(e) != 0:
        rel_diff = abs_diff / abs(e)
    else:
        rel_diff = math.inf if abs_diff != 0 else math.nan
    if isinstance(abs_diff, float) and math.isnan(abs_diff):
        rel_diff = math.nan
    exact = rtol == 0 and atol == 0
    abs_note = "" if exact else f" (up to {atol} allowed)"
    rel_note = "" if exact else f" (up to {rtol} allowed)"
    return (f"Scalars are not {'equal' if exact else 'close'}!\n\n"
            f"Expected {expected} but got {actual}.\n"
            f"Absolute difference: {abs_diff}{abs_note}\n"
            f"Relative difference: {rel_diff}{rel_note}")


def _scalars_close(a: Any, e: Any, rtol: float, atol: float, equal_nan: bool) -> bool:
    if a == e:
        return True
    a_nan = isinstance(a, (float, complex)) and (a != a)
    e_nan = isinstance(e, (float, complex)) and (e != e)
    if a_nan or e_nan:
        return equal_nan and a_nan and e_nan
    diff = abs(a - e)
    return math.isfinite(diff) and diff <= atol + rtol * abs(e)


def _compare_numbers(actual: Any, expected: Any, rtol: float | None, atol: float | None,
                     equal_nan: bool, check_dtype: bool) -> None:
    a, e = _python_number(actual), _python_number(expected)
    if check_dtype and type(a) is not type(e):
        raise _fail(f"The (d)types do not match: {type(a)} != {type(e)}.")
    if rtol is None:
        kinds = {type(a), type(e)}
        if complex in kinds:
            rtol, atol = default_tolerances(_dtype.complex128)
        elif float in kinds:
            rtol, atol = default_tolerances(_dtype.float64)
        else:
            rtol, atol = 0, 0
    if not _scalars_close(a, e, rtol, atol, equal_nan):
        raise _fail(_scalar_message(a, e, rtol, atol))


# ---------------------------------------------------------------------------------------------
# tensors and arrays


class _Values:
    """A tensor-like's metadata and host values (numpy, in a dtype numpy computes in)."""

    def __init__(self, x: Any) -> None:
        if isinstance(x, np.ndarray):
            self.dtype = _numpy_dtype(x.dtype)
            self.shape = tuple(x.shape)
            self.device = "cpu"
            self.layout = "torch.strided"
            self.stride = tuple(s // x.itemsize for s in x.strides)
            self.tensor = None
            self.meta = False
            self.host: np.ndarray | None = x
        else:
            self.dtype = x.dtype
            self.shape = tuple(x.shape)
            self.device = x.device
            self.layout = x.layout
            self.stride = tuple(x.stride())
            self.tensor = x
            self.meta = x.device.type == "meta"
            self.host = None

    def values(self, dt: _dtype.dtype) -> np.ndarray:
        """The values cast to ``dt`` (bfloat16 arrives as float32 rounded to bfloat16)."""
        if self.host is not None:
            arr = self.host
            if dt is not self.dtype:
                arr = arr.astype(_np_compute_dtype(dt))
            return arr
        t = self.tensor.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype is not dt:
            t = t.to(dt)
        if dt is _dtype.bfloat16:
            t = t.to(_dtype.float32)
        return np.asarray(t.numpy())


def _numpy_dtype(npdt: np.dtype) -> _dtype.dtype:
    try:
        return _dtype.DTYPES[np.dtype(npdt).name]
    except KeyError:
        raise TypeError(f"assert_close does not support numpy arrays of dtype {npdt}") from None


def _np_compute_dtype(dt: _dtype.dtype) -> np.dtype:
    return np.dtype("float32") if dt is _dtype.bfloat16 else np.dtype(dt._np)


def _round(values: np.ndarray, dt: _dtype.dtype) -> np.ndarray:
    """Round float32 results to bfloat16 (what PyTorch computes the differences in)."""
    if dt is not _dtype.bfloat16:
        return values
    bits = np.ascontiguousarray(values, np.float32).view(np.uint32)
    rounded = ((bits + (0x7FFF + ((bits >> 16) & 1))) >> 16).astype(np.uint32) << 16
    return np.where(np.isnan(values), values, rounded.view(np.float32))


def _close_mask(a: np.ndarray, e: np.ndarray, dt: _dtype.dtype, rtol: float, atol: float,
                equal_nan: bool) -> np.ndarray:
    if dt._category <= _dtype.INT:
        if rtol == 0 and atol == 0:
            return a == e
        a64, e64 = a.astype(np.float64), e.astype(np.float64)
        return np.abs(a64 - e64) <= atol + rtol * np.abs(e64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = a == e
        diff = np.abs(a - e)
        allowed = atol + rtol * np.abs(e)
        close |= np.isfinite(diff) & (diff <= allowed)
        if equal_nan:
            close |= np.isnan(a) & np.isnan(e)
    return close


def _greatest(values: np.ndarray) -> tuple[Any, tuple[int, ...]]:
    """The largest value (NaN wins, as in torch.max) and its index."""
    flat = values.reshape(-1)
    nans = np.flatnonzero(np.isnan(flat)) if flat.dtype.kind in "fc" else ()
    i = int(nans[0]) if len(nans) else int(np.argmax(flat))
    return flat[i].item(), tuple(int(j) for j in np.unravel_index(i, values.shape))


def _tensor_message(a: np.ndarray, e: np.ndarray, close: np.ndarray, dt: _dtype.dtype,
                    rtol: float, atol: float) -> str:
    total = close.size
    mismatched = int(total - np.count_nonzero(close))
    if dt._category <= _dtype.INT:
        # integer differences in int64 (no wrap-around), relative ones in the default float
        abs_diff = np.abs(a.astype(np.int64) - e.astype(np.int64))
        with np.errstate(divide="ignore", invalid="ignore"):
            rel_diff = abs_diff.astype(np.float32) / np.abs(e.astype(np.int64)).astype(
                np.float32)
    else:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            abs_diff = _round(np.abs(a - e), dt)
            rel_diff = _round(abs_diff / np.abs(e).astype(abs_diff.dtype), dt)
    abs_diff = np.where(close, np.zeros((), abs_diff.dtype), abs_diff)
    rel_diff = np.where(close, np.zeros((), rel_diff.dtype), rel_diff)
    max_abs, abs_at = _greatest(abs_diff)
    max_rel, rel_at = _greatest(rel_diff)
    exact = rtol == 0 and atol == 0
    abs_note = "" if exact else f" (up to {atol} allowed)"
    rel_note = "" if exact else f" (up to {rtol} allowed)"
    return (f"Tensor-likes are not {'equal' if exact else 'close'}!\n\n"
            f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})\n"
            f"Greatest absolute difference: {max_abs} at index {abs_at}{abs_note}\n"
            f"Greatest relative difference: {max_rel} at index {rel_at}{rel_note}")


def _attribute_mismatch(name: str, a: Any, e: Any) -> _Mismatch:
    return _fail(f"The values for attribute '{name}' do not match: {a} != {e}.")


def _compare_tensors(actual: Any, expected: Any, rtol: float | None, atol: float | None,
                     equal_nan: bool, check_device: bool, check_dtype: bool, check_layout: bool,
                     check_stride: bool) -> None:
    a, e = _Values(actual), _Values(expected)
    if a.shape != e.shape:
        from .._core.tensor import Size

        raise _attribute_mismatch("shape", repr(Size(a.shape)), repr(Size(e.shape)))
    # PyTorch's order: layout and strides before device and dtype
    if check_layout and a.layout != e.layout:
        raise _attribute_mismatch("layout", a.layout, e.layout)
    if check_stride and a.stride != e.stride:
        raise _attribute_mismatch("stride()", a.stride, e.stride)
    if check_device and a.device != e.device:
        raise _attribute_mismatch("device", a.device, e.device)
    if check_dtype and a.dtype is not e.dtype:
        raise _attribute_mismatch("dtype", a.dtype, e.dtype)
    if a.meta or e.meta:
        return  # meta tensors have no values to compare
    if rtol is None:
        rtol, atol = default_tolerances(a.dtype, e.dtype)
    dt = _dtype.promote_types(a.dtype, e.dtype)
    av, ev = a.values(dt), e.values(dt)
    if dt is _dtype.bool_:
        av, ev = av.astype(np.int64), ev.astype(np.int64)
    if not a.shape:
        # 0-d: compared and reported as Python scalars
        x, y = av.reshape(()).item(), ev.reshape(()).item()
        if dt is _dtype.bool_:
            x, y = bool(x), bool(y)
        if not _scalars_close(x, y, rtol, atol, equal_nan):
            raise _fail(_scalar_message(x, y, rtol, atol))
        return
    close = _close_mask(av, ev, dt, rtol, atol, equal_nan)
    if not close.all():
        raise _fail(_tensor_message(av, ev, close, dt, rtol, atol))


# ---------------------------------------------------------------------------------------------
# the walk over containers


def _item_path(path: list[Any]) -> str:
    return "".join(f"[{p!r}]" for p in path)


def _compare(actual: Any, expected: Any, options: dict[str, Any], allow_subclasses: bool) -> None:
    if actual is None or expected is None:
        if actual is not expected:
            raise _fail(f"None mismatch: {actual} is not {expected}")
        return
    if isinstance(actual, (bool, np.bool_)) and isinstance(expected, (bool, np.bool_)):
        if bool(actual) != bool(expected):
            raise _fail(f"Booleans mismatch: {bool(actual)} is not {bool(expected)}")
        return
    if _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, options["rtol"], options["atol"],
                         options["equal_nan"], options["check_dtype"])
        return
    if _is_tensor_like(actual) and _is_tensor_like(expected):
        same_kind = isinstance(actual, Tensor) == isinstance(expected, Tensor)
        if allow_subclasses:
            compatible = same_kind
        else:
            compatible = type(actual) is type(expected)
        if compatible:
            _compare_tensors(actual, expected, **options)
            return
    elif (isinstance(actual, Mapping) and isinstance(expected, Mapping)):
        missing = [k for k in expected if k not in actual]
        extra = [k for k in actual if k not in expected]
        if missing or extra:
            raise _fail("The keys of the mappings do not match:\n"
                        f"Missing keys in the actual mapping: {sorted(missing, key=repr)}\n"
                        f"Additional keys in the actual mapping: {sorted(extra, key=repr)}")
        for key in actual:
            _compare_child(actual[key], expected[key], key, options, allow_subclasses)
        return
    elif (isinstance(actual, Sequence) and isinstance(expected, Sequence)
          and not isinstance(actual, (str, bytes)) and not isinstance(expected, (str, bytes))):
        if len(actual) != len(expected):
            raise _fail(f"The length of the sequences mismatch: {len(actual)} != "
                        f"{len(expected)}")
        for i, (x, y) in enumerate(zip(actual, expected)):
            _compare_child(x, y, i, options, allow_subclasses)
        return
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                               f"{type(actual)} and {type(expected)}.")


def _compare_child(actual: Any, expected: Any, key: Any, options: dict[str, Any],
                   allow_subclasses: bool) -> None:
    try:
        _compare(actual, expected, options, allow_subclasses)
    except _Mismatch as m:
        m.path.insert(0, key)
        raise


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg: str | Callable[[str], str] | None = None
                 ) -> None:
    """Assert that ``actual`` and ``expected`` are close.

    Tensors (and numpy arrays) must agree in shape and, unless switched off, device, dtype,
    layout and strides; their values must satisfy ``|actual - expected| <= atol + rtol *
    |expected|`` elementwise (NaNs equal only with ``equal_nan``). Python scalars compare the
    same way, sequences and mappings element by element.

    Omitted ``rtol`` and ``atol`` default by dtype: float16 ``1e-3``/``1e-5``, bfloat16
    ``1.6e-2``/``1e-5``, float32 ``1.3e-6``/``1e-5``, float64 ``1e-7``/``1e-7``, complex like
    its real part, integers and bool exactly; with two dtypes the looser of the two.

    :param actual: the value under test.
    :param expected: the reference value.
    :param allow_subclasses: whether a tensor subclass may be compared with a tensor.
    :param rtol: relative tolerance (give ``atol`` too).
    :param atol: absolute tolerance (give ``rtol`` too).
    :param equal_nan: whether two NaNs count as equal.
    :param check_device: whether tensors must be on the same device.
    :param check_dtype: whether tensors (and scalars) must have the same dtype (type);
        otherwise values are compared in their promoted dtype.
    :param check_layout: whether tensors must have the same layout.
    :param check_stride: whether tensors must have the same strides.
    :param msg: replaces the default failure message; a callable receives the default message
        and returns the one to use.
    :raises ValueError: when only one of ``rtol`` and ``atol`` is given.
    :raises TypeError: when the inputs are of types that cannot be compared.
    :raises AssertionError: when the inputs are not close.
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'atol' if atol is None else 'rtol'}.")
    options = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan, "check_device": check_device,
               "check_dtype": check_dtype, "check_layout": check_layout,
               "check_stride": check_stride}
    try:
        _compare(actual, expected, options, allow_subclasses)
    except _Mismatch as m:
        message = m.message
        if m.path:
            message += f"\n\nThe failure occurred for item {_item_path(m.path)}"
        if m.kind is AssertionError and msg is not None:
            message = msg(message) if callable(msg) else msg
        raise m.kind(message) from None


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    """The deprecated ``torch.testing.assert_allclose``: :func:`assert_close` without the dtype
    check, numbers and sequences turned into tensors like ``actual`` first."""
    import warnings

    import torch

    warnings.warn("torch.testing.assert_allclose() is deprecated since 1.12 and will be removed "
                  "in a future release. Please use torch.testing.assert_close() instead.",
                  FutureWarning, stacklevel=2)
    if not isinstance(actual, torch.Tensor):
        actual = torch.tensor(actual)
    if not isinstance(expected, torch.Tensor):
        expected = torch.tensor(expected, dtype=actual.dtype)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
