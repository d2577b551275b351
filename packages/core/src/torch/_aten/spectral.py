"""Discrete Fourier transforms: the ops of ``torch.fft`` (the public namespace
:mod:`torch.fft` re-exports them behind the ``__torch_function__`` entry).

Three aten operators with PyTorch's schemas do every transform, each CompositeExplicitAutograd
over one primitive of the spectral group (``torch._core.prims``):

- ``aten::_fft_c2c``: complex to complex, forward or inverse;
- ``aten::_fft_r2c``: real to complex (forward), onesided or full;
- ``aten::_fft_c2r``: a onesided Hermitian spectrum back to a real signal (inverse).

``normalization`` is PyTorch's: 0 leaves the transform unscaled, 1 scales by 1/sqrt(n), 2 by
1/n. The public functions check their arguments as PyTorch does, promote integers to the
default float dtype and real inputs to complex where the transform needs it, trim or
zero-pad each transformed dim to the requested size (with differentiable operators), and
call one operator. ``hfft`` is the inverse real transform of the conjugate, ``ihfft`` the
conjugate of the real transform. Their derivatives are in ``autograd/_formulas/spectral.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._core import config as _config, dispatch as _dispatch, dtype as _dtype
from .._core.alloc import PRIMS, new_tensor
from .._core.tensor import Tensor, wrap_dim
from . import complex_views as _cv, creation as _creation, factories as _fac, shape as _shape
from .convert import scalar_type_name, to_dtype, write_out

__all__: list[str] = []  # the transforms are torch.fft.*, not torch.*

FFT_FUNCTIONS = (
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
    "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
    "rfftfreq", "fftshift", "ifftshift",
)

# norm argument -> normalization of a forward transform; an inverse one takes 2 - that
_FORWARD_NORMALIZATION = {None: 0, "backward": 0, "ortho": 1, "forward": 2}


# -- the operators --------------------------------------------------------------------------


def _dims(dim: Sequence[int], ndim: int) -> list[int]:
    return [wrap_dim(d, ndim) for d in dim]


def _require_complex(x: Tensor, op: str) -> None:
    if not x._dtype.is_complex:
        raise RuntimeError(f"{op} expects a complex input tensor, but got "
                           f"{scalar_type_name(x._dtype)}")


def _fft_out(shape: Sequence[int], dt: Any, x: Tensor, dims: Sequence[int],
             keep_last: bool) -> Tensor:
    """The result of a transform of ``x`` over ``dims``, laid out as PyTorch's CPU FFT lays it
    out: the batch dims outermost, then the transformed dims innermost, each group in ``x``'s
    memory order (largest stride first); a onesided transform's halved dim (``keep_last``)
    stays innermost."""
    movable = list(dims[:-1]) if keep_last else list(dims)
    signal = sorted(movable, key=lambda d: -x._stride[d]) + ([dims[-1]] if keep_last else [])
    batch = sorted((d for d in range(len(shape)) if d not in signal),
                   key=lambda d: -x._stride[d])
    order = batch + signal  # outermost to innermost
    buf = new_tensor(tuple(shape[d] for d in order), dt, x._device)
    if order == sorted(order):
        return buf
    inverse = [0] * len(order)
    for position, d in enumerate(order):
        inverse[d] = position
    return buf.permute(inverse)


def _c2c_kernel(self: Tensor, dim: Sequence[int], normalization: int,
                forward: bool) -> Tensor:
    _require_complex(self, "_fft_c2c")
    dims = _dims(dim, self.ndim)
    out = _fft_out(self._shape, self._dtype, self, dims, False)
    PRIMS.fft_c2c(out, self, dims, normalization, forward)
    return out


def _r2c_kernel(self: Tensor, dim: Sequence[int], normalization: int,
                onesided: bool) -> Tensor:
    if self._dtype.is_complex:
        raise RuntimeError(f"_fft_r2c expects a real input tensor, but got "
                           f"{scalar_type_name(self._dtype)}")
    dims = _dims(dim, self.ndim)
    shape = list(self._shape)
    if onesided:
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
    out = _fft_out(shape, self._dtype.to_complex(), self, dims, True)
    PRIMS.fft_r2c(out, self, dims, normalization, onesided)
    return out


def _c2r_kernel(self: Tensor, dim: Sequence[int], normalization: int,
                last_dim_size: int) -> Tensor:
    _require_complex(self, "_fft_c2r")
    dims = _dims(dim, self.ndim)
    # the primitive reads exactly n // 2 + 1 entries along the last transformed dim
    x = resize_dim(self, dims[-1], last_dim_size // 2 + 1)
    shape = list(x._shape)
    shape[dims[-1]] = last_dim_size
    out = _fft_out(shape, self._dtype.to_real(), x, dims, True)
    PRIMS.fft_c2r(out, x, dims, normalization)
    return out


ATEN = _dispatch.define_aten({
    "_fft_c2c": ("_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> "
                 "Tensor", _c2c_kernel),
    "_fft_r2c": ("_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor",
                 _r2c_kernel),
    "_fft_c2r": ("_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> "
                 "Tensor", _c2r_kernel),
})
fft_c2c, fft_r2c, fft_c2r = ATEN["_fft_c2c"], ATEN["_fft_r2c"], ATEN["_fft_c2r"]


# -- shared argument handling ---------------------------------------------------------------


def resize_dim(x: Tensor, dim: int, n: int) -> Tensor:
    """``x`` with ``n`` entries along ``dim``: its first ``n``, or all followed by zeros."""
    size = x._shape[dim]
    if n == size:
        return x
    if n < size:
        return x.narrow(dim, 0, n)
    pad = list(x._shape)
    pad[dim] = n - size
    return _shape.cat([x, _fac.zeros(pad, dtype=x._dtype, device=x._device)], dim)


def normalization(norm: str | None, forward: bool) -> int:
    """PyTorch's normalization code of ``norm`` for a forward or an inverse transform."""
    mode = _FORWARD_NORMALIZATION.get(norm) if isinstance(norm, (str, type(None))) else None
    if mode is None:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return mode if forward else 2 - mode


def promote(x: Any, fname: str, to_complex: bool) -> Tensor:
    """``x`` in the dtype a transform computes in: integers and bool take the default float
    dtype, complex results a complex dtype; the half types have no CPU transform in PyTorch."""
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    dt = x._dtype
    if dt._category <= _dtype.INT:
        dt = _config.get_default_dtype()
    elif dt in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError(f"Unsupported dtype {scalar_type_name(dt)}")
    if to_complex and not dt.is_complex:
        dt = dt.to_complex()
    return x if dt is x._dtype else to_dtype(x, dt)


def _require_real(x: Tensor, fname: str) -> None:
    if isinstance(x, Tensor) and x._dtype.is_complex:
        raise RuntimeError(f"{fname} expects a real input tensor, but got "
                           f"{scalar_type_name(x._dtype)}")


def _points(n: int) -> int:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _dim_1d(x: Tensor, dim: int) -> int:
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, x.ndim)


def _dims_nd(x: Tensor, s: Sequence[int] | None, dim: Sequence[int] | int | None
             ) -> tuple[list[int], list[int | None]]:
    """The transformed dims and their requested sizes (None: the input's), as PyTorch
    canonicalises ``s`` and ``dim`` of an N-d transform."""
    ndim = x.ndim
    if isinstance(dim, int):
        dim = [dim]
    if dim is not None:
        if ndim == 0 and len(dim):
            raise IndexError(f"Dimension specified as {dim[0]} but tensor has no dimensions")
        dims = [wrap_dim(d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        dims = list(range(ndim - len(s), ndim))
    else:
        dims = list(range(ndim))
    sizes: list[int | None] = [None] * len(dims)
    if s is not None:
        sizes = [None if int(n) == -1 else _points(int(n)) for n in s]
    return dims, sizes


def _resized(x: Tensor, dims: Sequence[int], sizes: Sequence[int | None]) -> Tensor:
    for d, n in zip(dims, sizes):
        if n is not None:
            x = resize_dim(x, d, n)
    return x


# -- the three kinds of transform -----------------------------------------------------------


def _c2c(fname: str, x: Any, dims: list[int], sizes: list[int | None], norm: str | None,
         forward: bool) -> Tensor:
    x = promote(x, fname, False)
    code = normalization(norm, forward)
    if dims and not x._dtype.is_complex:
        # a real signal: the full (two-sided) real transform, as PyTorch runs it, without a
        # complex copy of the input; the inverse transform is its conjugate
        # (PyTorch transforms a real input's dims as a complex one's: in memory order, so
        # the innermost of them is the one the real transform keeps last)
        x = _resized(x, dims, sizes)
        result = fft_r2c(x, sorted(dims, key=lambda d: -x._stride[d]), code, False)
        return result if forward else _cv.conj(result)
    x = _resized(promote(x, fname, True), dims, sizes)
    if not dims:  # nothing to transform: the promoted input
        return x
    return fft_c2c(x, dims, code, forward)


def _r2c(fname: str, x: Any, dims: list[int], sizes: list[int | None], norm: str | None,
         forward: bool) -> Tensor:
    """``rfft*`` (forward) and ``ihfft*`` (the conjugate of the forward real transform, with
    an inverse transform's scaling)."""
    _require_real(x, fname)
    x = _resized(promote(x, fname, False), dims, sizes)
    code = normalization(norm, forward)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    if forward:
        return fft_r2c(x, dims, code, True)
    # ihfft*: as PyTorch runs it, the onesided transform of the last dim, conjugated, then the
    # inverse complex transform of the others (so the result has PyTorch's memory layout)
    half = fft_r2c(x, dims[-1:], code, True)
    if len(dims) == 1:
        return _cv.conj(half)
    return fft_c2c(_cv.conj_physical(half), dims[:-1], code, False)


def _c2r(fname: str, x: Any, dims: list[int], sizes: list[int | None], norm: str | None,
         forward: bool) -> Tensor:
    """``irfft*`` (inverse) and ``hfft*`` (the inverse real transform of the conjugate, with
    a forward transform's scaling)."""
    x = promote(x, fname, True)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    last = sizes[-1]
    n = _points(2 * (x._shape[dims[-1]] - 1) if last is None else last)
    x = _resized(x, dims[:-1], sizes[:-1])
    code = normalization(norm, forward)
    if forward:
        x = _cv.conj(x)
    return fft_c2r(x, dims, code, n)


_KINDS = {"c2c": _c2c, "r2c": _r2c, "c2r": _c2r}


def _one_dim(fname: str, kind: str, forward: bool) -> Any:
    transform = _KINDS[kind]

    def fn(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
        if kind == "r2c":
            _require_real(input, fname)
        x = promote(input, fname, kind == "c2r")
        d = _dim_1d(x, dim)
        size = None if n is None else _points(int(n))
        return write_out(out, transform(fname, x, [d], [size], norm, forward))

    return fn


def _n_dims(fname: str, kind: str, forward: bool, default_dim: tuple[int, ...] | None) -> Any:
    transform = _KINDS[kind]

    def fn(input: Tensor, s: Sequence[int] | None = None, dim: Any = default_dim,
           norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
        if kind == "r2c":
            _require_real(input, fname)
        x = promote(input, fname, kind == "c2r")
        dims, sizes = _dims_nd(x, s, dim)
        return write_out(out, transform(fname, x, dims, sizes, norm, forward))

    return fn


# public name -> (kind, forward transform?, default dims of an N-d form; "1d" for the 1-d)
_TRANSFORMS: dict[str, tuple[str, bool, Any]] = {
    "fft": ("c2c", True, "1d"), "ifft": ("c2c", False, "1d"),
    "fft2": ("c2c", True, (-2, -1)), "ifft2": ("c2c", False, (-2, -1)),
    "fftn": ("c2c", True, None), "ifftn": ("c2c", False, None),
    "rfft": ("r2c", True, "1d"), "ihfft": ("r2c", False, "1d"),
    "rfft2": ("r2c", True, (-2, -1)), "ihfft2": ("r2c", False, (-2, -1)),
    "rfftn": ("r2c", True, None), "ihfftn": ("r2c", False, None),
    "irfft": ("c2r", False, "1d"), "hfft": ("c2r", True, "1d"),
    "irfft2": ("c2r", False, (-2, -1)), "hfft2": ("c2r", True, (-2, -1)),
    "irfftn": ("c2r", False, None), "hfftn": ("c2r", True, None),
}

_SUMMARIES = {
    "c2c": "discrete Fourier transform", "r2c": "Fourier transform of a real signal "
    "(onesided: the non-negative frequencies)", "c2r": "inverse of a onesided Hermitian "
    "spectrum (a real signal)",
}

TRANSFORMS: dict[str, Any] = {}
for _name, (_kind, _forward, _default) in _TRANSFORMS.items():
    _fn = (_one_dim(_name, _kind, _forward) if _default == "1d"
           else _n_dims(_name, _kind, _forward, _default))
    _fn.__name__ = _fn.__qualname__ = _name
    _fn.__module__ = "torch.fft"
    _direction = "forward" if _forward else "inverse"
    _fn.__doc__ = (f"``torch.fft.{_name}``: the {_direction} {_SUMMARIES[_kind]} (PyTorch's "
                   "arguments and normalization modes).")
    TRANSFORMS[_name] = _fn
del _name, _kind, _forward, _default, _fn, _direction


# -- frequencies and shifts -----------------------------------------------------------------


def _frequency_dtype(dtype: _dtype.dtype | None, fname: str) -> _dtype.dtype:
    dt = _config.get_default_dtype() if dtype is None else dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    return dt


def fftfreq(n: int, d: float = 1.0, *, dtype: _dtype.dtype | None = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
            out: Tensor | None = None) -> Tensor:
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    dt = _frequency_dtype(dtype, "fftfreq")
    real = dt.to_real() if dt.is_complex else dt
    ticks = _shape.cat([_creation.arange(0, (n + 1) // 2, dtype=real, device=device),
                        _creation.arange(-(n // 2), 0, dtype=real, device=device)])
    result = to_dtype(ticks * (1.0 / (n * d)), dt)
    return write_out(out, result.requires_grad_(requires_grad) if requires_grad else result)


def rfftfreq(n: int, d: float = 1.0, *, dtype: _dtype.dtype | None = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
             out: Tensor | None = None) -> Tensor:
    """The non-negative sample frequencies of an ``n``-point real transform:
    ``[0, 1, ..., n // 2] / (d * n)``."""
    dt = _frequency_dtype(dtype, "rfftfreq")
    real = dt.to_real() if dt.is_complex else dt
    ticks = _creation.arange(0, n // 2 + 1, dtype=real, device=device)
    result = to_dtype(ticks * (1.0 / (n * d)), dt)
    return write_out(out, result.requires_grad_(requires_grad) if requires_grad else result)


def _shift(input: Tensor, dim: Any, inverse: bool) -> Tensor:
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    sizes = [input._shape[wrap_dim(d, input.ndim)] for d in dims]
    if not dims:
        return input.clone()
    # the zero frequency moves to the centre (n // 2); the inverse moves it back
    shifts = [(n + 1) // 2 if inverse else n // 2 for n in sizes]
    return _shape.roll(input, shifts, dims)


def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """``input`` rolled so that the zero frequency sits in the middle of each of ``dim``
    (every dim by default)."""
    return _shift(input, dim, False)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The inverse of :func:`fftshift`."""
    return _shift(input, dim, True)
