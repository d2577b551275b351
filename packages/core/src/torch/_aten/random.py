"""Random creation and in-place sampling on the Philox generator: rand, randn, randint,
randperm, normal, bernoulli, multinomial and the ``Tensor.*_`` samplers.

Every op is composite: it reserves Philox counters from a generator (``torch._core.generators``),
asks the ``random_bits_`` primitive for 32-bit words, and turns them into values with ordinary
primitives (shifts, casts, ``log``, ``cos``...). So a backend that implements the primitives gives
the same numbers as the CPU for the same seed (docs/architecture.md).

How words become numbers (the spec every backend follows by construction):

- ``[0, 1)`` in a float dtype with ``p`` significand bits (float64 53, float32 24, float16 11,
  bfloat16 8): the top ``p`` bits of one word (two words, ``hi * 2**21 + lo >> 11``, for
  float64), times ``2**-p``. Exact, never 1.
- ``(0, 1)`` for transforms that take logs: the top ``q - 1`` bits plus one half, times
  ``2**-(q - 1)``, in the compute dtype (float64 for float64 results, else float32 with
  ``q`` = 53 or 24). Exact, never 0 or 1.
- normals: Box-Muller on pairs of open uniforms, ``sqrt(-2 log u1)`` times ``cos`` for the first
  half of the elements and ``sin`` for the second half.
- integers in ``[low, high)``: a 32-bit word (a 63-bit value from two words when the range
  exceeds ``2**32``) modulo the range, plus ``low``.
"""

from __future__ import annotations

import math
from typing import Any

from .._core import config as _config, dispatch as _dispatch, dtype as _dtype, storage as _storage
from .._core.alloc import (
    PRIMS,
    check_dtype,
    check_shape,
    device_of,
    finish_factory,
    new_tensor,
    scalar_tensor as _scalar,
)
from .._core.device import device as _device
from .._core.generators import Generator, default_generator_for
from .._core.promotion import broadcast_shapes
from .._core.tensor import Size, Tensor, _shape_arg, contiguous_strides
from .convert import copy_, scalar_type_name, to_dtype, write_out
from .elementwise import wide_float
from .factories import not_differentiable

__all__ = ["bernoulli", "multinomial", "normal", "rand", "rand_like", "randint",
           "randint_like", "randn", "randn_like", "randperm"]

_SIGNIFICAND_BITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}
_TWO_PI = 2.0 * math.pi
# The C++ names PyTorch's bound checks print.
_CTYPE = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short",
          "int32": "int", "int64": "long int", "float16": "c10::Half",
          "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}


# -- generators and words ------------------------------------------------------------------


def _generator(generator: Generator | None, dev: _device) -> Generator:
    if generator is None:
        return default_generator_for(dev)
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a torch.Generator, not {type(generator).__name__}")
    if dev.type != "meta" and generator.device.type != dev.type:
        raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator


def _words(n: int, gen: Generator, dev: _device) -> Tensor:
    """``n`` random 32-bit words as an int64 tensor of shape ``(n,)``."""
    out = new_tensor((n,), _dtype.int64, dev)
    if n and dev.type != "meta":
        seed, offset = gen._reserve((n + 3) // 4)
        PRIMS.random_bits_(out, seed, offset)
    return out


def _view(t: Tensor, shape: tuple[int, ...], stride: tuple[int, ...], offset: int = 0
          ) -> Tensor:
    """A view of ``t``'s memory made here, below the dispatcher: these kernels slice and reshape
    their own fresh scratch tensors at every step, where a view operator would cost a
    dispatch each."""
    base = t._base if t._base is not None else t
    return Tensor._make(t._storage, shape, stride, t._offset + offset, t._dtype, t._device,
                        t._vc, base)


def _shaped(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Contiguous ``t`` seen with ``shape`` (as many elements)."""
    return _view(t, tuple(shape), contiguous_strides(tuple(shape)))


def _part(t: Tensor, start: int, stop: int) -> Tensor:
    """Elements ``start:stop`` of a contiguous 1-d ``t``."""
    return _view(t, (stop - start,), (1,), start)


def _const(value: Any, like: Tensor) -> Tensor:
    """``value`` as a tensor of ``like``'s dtype and device, broadcast to its shape."""
    return _scalar(value, like._dtype, like._device).expand(like._shape)


def _apply(prim: str, a: Tensor, b: Any = None, dt: _dtype.dtype | None = None) -> Tensor:
    """A new tensor holding primitive ``prim`` of ``a`` (and ``b``, a tensor or a number)."""
    out = new_tensor(a._shape, dt or a._dtype, a._device)
    if b is None:
        getattr(PRIMS, prim)(out, a)
    else:
        getattr(PRIMS, prim)(out, a, b if isinstance(b, Tensor) else _const(b, a))
    return out


def _cast(t: Tensor, dt: _dtype.dtype) -> Tensor:
    return to_dtype(t, dt)


def _top_bits(n: int, bits: int, gen: Generator, dev: _device) -> Tensor:
    """``n`` random non-negative int64 values of ``bits`` bits each (``bits`` <= 63): the top
    bits of one word, or ``w0 * 2**(bits - 32) + (w1 >> (64 - bits))`` from two."""
    if n == 0:
        return new_tensor((0,), _dtype.int64, dev)
    if bits <= 32:
        w = _words(n, gen, dev)
        return w if bits == 32 else _apply("bitwise_right_shift", w, 32 - bits)
    pairs = _words(2 * n, gen, dev)  # (2n,): word 2i is the high half of value i
    hi = _apply("mul", _view(pairs, (n,), (2,)), 1 << (bits - 32))
    return _apply("add", hi, _apply("bitwise_right_shift", _view(pairs, (n,), (2,), 1),
                                     64 - bits))


def _uniform01(shape: tuple[int, ...], dt: _dtype.dtype, gen: Generator, dev: _device) -> Tensor:
    """Uniform values in ``[0, 1)`` of float dtype ``dt`` (exact multiples of ``2**-p``)."""
    p = _SIGNIFICAND_BITS[dt._name]
    m = _top_bits(_numel(shape), p, gen, dev)
    # shaped before the multiply, so that the result is a fresh tensor of its own layout
    # (the hot path's tiers serve those: torch._core.fast)
    return _apply("mul", _shaped(_cast(m, dt), shape), 2.0 ** -p)


def _compute_dtype(dt: _dtype.dtype) -> _dtype.dtype:
    return _dtype.float64 if dt in (_dtype.float64, _dtype.complex128) else _dtype.float32


def _uniform_open(n: int, ct: _dtype.dtype, gen: Generator, dev: _device) -> Tensor:
    """``n`` uniform values in the open interval ``(0, 1)`` of compute dtype ``ct``."""
    q = _SIGNIFICAND_BITS[ct._name] - 1
    m = _top_bits(n, q, gen, dev)
    return _apply("mul", _apply("add", _cast(m, ct), 0.5), 2.0 ** -q)


def _standard_normal(n: int, ct: _dtype.dtype, gen: Generator, dev: _device) -> Tensor:
    """``n`` standard normal values in compute dtype ``ct`` (Box-Muller), shape ``(n,)``."""
    half = (n + 1) // 2
    u = _uniform_open(2 * half, ct, gen, dev)
    u1, u2 = _part(u, 0, half), _part(u, half, 2 * half)
    radius = _apply("sqrt", _apply("mul", _apply("log", u1), -2.0))  # (half,)
    theta = _apply("mul", u2, _TWO_PI)
    z = new_tensor((2 * half,), ct, dev)
    PRIMS.mul(_part(z, 0, half), radius, _apply("cos", theta))
    PRIMS.mul(_part(z, half, 2 * half), radius, _apply("sin", theta))
    return _part(z, 0, n)


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# -- filling a tensor ----------------------------------------------------------------------


def _fill_uniform(shape: tuple[int, ...], dt: _dtype.dtype, dev: _device, gen: Generator,
                  low: float = 0.0, high: float = 1.0) -> Tensor:
    """A new tensor of uniform values in ``[low, high)`` (complex: both parts)."""
    if dt.is_complex:
        real = _fill_uniform(shape + (2,), _dtype.float64 if dt is _dtype.complex128
                             else _dtype.float32, dev, gen, low, high)
        return _from_real_pairs(real, dt)
    if low == 0.0 and high == 1.0:
        return _uniform01(shape, dt, gen, dev)
    ct = _compute_dtype(dt)
    u = _uniform01(shape, ct, gen, dev)
    return _cast(_apply("add", _apply("mul", u, high - low), low), dt)


def _fill_normal(shape: tuple[int, ...], dt: _dtype.dtype, dev: _device, gen: Generator,
                 mean: float = 0.0, std: float = 1.0) -> Tensor:
    """A new tensor of normal values of ``mean`` and ``std``."""
    if dt.is_complex:  # real and imaginary parts each with variance 1/2
        real_dt = _dtype.float64 if dt is _dtype.complex128 else _dtype.float32
        real = _fill_normal(shape + (2,), real_dt, dev, gen, 0.0, std * math.sqrt(0.5))
        return _apply("add", _from_real_pairs(real, dt), complex(mean)) if mean else \
            _from_real_pairs(real, dt)
    ct = _compute_dtype(dt)
    z = _shaped(_standard_normal(_numel(shape), ct, gen, dev), shape)
    if std != 1.0:
        z = _apply("mul", z, std)
    if mean != 0.0:
        z = _apply("add", z, mean)
    z = _cast(z, dt)
    if z._base is not None:  # still the view of Box-Muller's buffer: a tensor of its own
        own = new_tensor(z._shape, z._dtype, z._device)
        PRIMS.copy_(own, z)
        z = own
    return z


def _from_real_pairs(real: Tensor, dt: _dtype.dtype) -> Tensor:
    """A complex tensor of ``dt`` from a real tensor whose last dim of 2 holds (re, im)."""
    from .creation import view_as_real_storage

    out = new_tensor(real._shape[:-1], dt, real._device)
    PRIMS.copy_(view_as_real_storage(out), real)
    return out


def _randint_values(shape: tuple[int, ...], low: int, high: int, gen: Generator,
                    dev: _device) -> Tensor:
    """Integers in ``[low, high)`` as int64: a random word modulo the range, plus ``low``."""
    span = high - low
    n = _numel(shape)
    bits = 32 if span <= 1 << 32 else 63
    r = _top_bits(n, bits, gen, dev)
    if span < 1 << 63:
        r = _apply("remainder", r, span)
    if low:
        r = _apply("add", r, low)
    return _shaped(r, shape)


def _check_int_bounds(low: int, high: int, dt: _dtype.dtype) -> None:
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    if dt._category <= _dtype.INT:
        lo, hi = _int_range(dt)
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {_CTYPE[dt._name]}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {_CTYPE[dt._name]}")


def _int_range(dt: _dtype.dtype) -> tuple[int, int]:
    if dt is _dtype.bool_:
        return 0, 1
    bits = dt.itemsize * 8
    if dt is _dtype.uint8:
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _require_float(dt: _dtype.dtype, kernel: str) -> None:
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{scalar_type_name(dt)}'")


def _factory_dtype(dtype: Any) -> _dtype.dtype:
    return check_dtype(dtype) or _config.get_default_dtype()


def _size(size: tuple[Any, ...], kw_size: Any) -> tuple[int, ...]:
    if kw_size is not None:
        if size:
            raise TypeError("size given both positionally and as a keyword")
        size = (kw_size,)
    shape = _shape_arg(size)
    check_shape(shape)
    return shape


def _finish(t: Tensor, out: Tensor | None, requires_grad: bool) -> Tensor:
    return finish_factory(write_out(out, t), requires_grad)


# -- the aten operators: factories ----------------------------------------------------------
#
# Each kernel is the op's whole semantics on any device. On ``meta`` no counter is reserved
# (``_words``), the primitives write nothing and the checks that need values pass (``_all``),
# so the kernel is also the op's meta function. ``out=`` and ``requires_grad`` belong to the
# Python functions, as in PyTorch.


def _check_floating(dt: _dtype.dtype, kernel: str) -> None:
    if not (dt.is_floating_point or dt.is_complex):
        _require_float(dt, kernel)


def _rand_kernel(size: Any, *, generator: Generator | None = None,
                 dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
                 pin_memory: Any = None) -> Tensor:
    shape = _size((size,), None)
    dt = _factory_dtype(dtype)
    _check_floating(dt, "check_uniform_bounds")
    dev = device_of(device)
    return _fill_uniform(shape, dt, dev, _generator(generator, dev))


def _randn_kernel(size: Any, *, generator: Generator | None = None,
                  dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
                  pin_memory: Any = None) -> Tensor:
    shape = _size((size,), None)
    dt = _factory_dtype(dtype)
    _check_floating(dt, "normal_kernel_cpu")
    dev = device_of(device)
    return _fill_normal(shape, dt, dev, _generator(generator, dev))


def _randint_kernel(low: int, high: int, size: Any, *, generator: Generator | None = None,
                    dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
                    pin_memory: Any = None) -> Tensor:
    shape = _size((size,), None)
    dt = check_dtype(dtype) or _dtype.int64
    _check_int_bounds(low, high, dt)
    dev = device_of(device)
    return _cast(_randint_values(shape, low, high, _generator(generator, dev), dev), dt)


def _rand_like_kernel(self: Tensor, *, generator: Generator | None = None,
                      dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
                      pin_memory: Any = None, memory_format: Any = None) -> Tensor:
    dt, dev = _like(self, dtype, device)
    _check_floating(dt, "check_uniform_bounds")
    return _fill_uniform(tuple(self._shape), dt, dev, _generator(generator, dev))


def _randn_like_kernel(self: Tensor, *, generator: Generator | None = None,
                       dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
                       pin_memory: Any = None, memory_format: Any = None) -> Tensor:
    dt, dev = _like(self, dtype, device)
    _check_floating(dt, "normal_kernel_cpu")
    return _fill_normal(tuple(self._shape), dt, dev, _generator(generator, dev))


def _randint_like_kernel(self: Tensor, low: int, high: int, *,
                         generator: Generator | None = None, dtype: _dtype.dtype | None = None,
                         layout: Any = None, device: Any = None, pin_memory: Any = None,
                         memory_format: Any = None) -> Tensor:
    dt, dev = _like(self, dtype, device)
    _check_int_bounds(low, high, dt)
    return _cast(_randint_values(tuple(self._shape), low, high, _generator(generator, dev), dev),
                 dt)


def _randperm_kernel(n: int, *, generator: Generator | None = None,
                     dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
                     pin_memory: Any = None) -> Tensor:
    check_shape((n,))
    dt = check_dtype(dtype) or _dtype.int64
    if dt is _dtype.bool_ or dt.is_complex:
        raise NotImplementedError(f'"randperm" not implemented for \'{scalar_type_name(dt)}\'')
    if dt._category <= _dtype.INT and n > _int_range(dt)[1] + 1:
        raise RuntimeError(f"value cannot be converted to type {dt._name} without overflow")
    dev = device_of(device)
    keys = _top_bits(n, 63, _generator(generator, dev), dev)
    values = new_tensor((n,), _dtype.int64, dev)
    order = new_tensor((n,), _dtype.int64, dev)
    if n:
        PRIMS.sort(values, order, keys, 0, False, True)
    return _cast(order, dt)


def _like(input: Tensor, dtype: Any, device: Any) -> tuple[_dtype.dtype, _device]:
    if not isinstance(input, Tensor):
        raise TypeError(f"argument 'input' must be Tensor, not {type(input).__name__}")
    dt = check_dtype(dtype) or input._dtype
    dev = input._device if device is None else _storage._normalise(device)
    return dt, dev


# -- the Python functions: factories -------------------------------------------------------


def _factory_device(device: Any, out: Tensor | None) -> _device:
    return device_of(device if device is not None or out is None else out._device)


def rand(*size: Any, generator: Generator | None = None, out: Tensor | None = None,
         dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
         requires_grad: bool = False, pin_memory: bool = False, **kwargs: Any) -> Tensor:
    """Uniform random values in ``[0, 1)`` of ``size``."""
    shape = _size(size, kwargs.pop("size", None))
    _no_extra("rand", kwargs)
    dt = _factory_dtype(dtype if dtype is not None or out is None else out._dtype)
    dev = _factory_device(device, out)
    if generator is None:
        t = _RAND(shape, dtype=dt, device=dev)
    else:
        t = ATEN["rand.generator"](shape, generator=generator, dtype=dt, device=dev)
    return _finish(t, out, requires_grad)


def randn(*size: Any, generator: Generator | None = None, out: Tensor | None = None,
          dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False, pin_memory: bool = False, **kwargs: Any) -> Tensor:
    """Standard normal random values of ``size`` (complex dtypes: each part has variance
    1/2)."""
    shape = _size(size, kwargs.pop("size", None))
    _no_extra("randn", kwargs)
    dt = _factory_dtype(dtype if dtype is not None or out is None else out._dtype)
    dev = _factory_device(device, out)
    if generator is None:
        t = _RANDN(shape, dtype=dt, device=dev)
    else:
        t = ATEN["randn.generator"](shape, generator=generator, dtype=dt, device=dev)
    return _finish(t, out, requires_grad)


def _like_options(generator: Any, dtype: Any, device: Any) -> dict[str, Any]:
    """The keyword arguments of a random ``*_like`` operator call (only those given)."""
    options: dict[str, Any] = {}
    if generator is not None:
        options["generator"] = generator
    if dtype is not None:
        options["dtype"] = check_dtype(dtype)
    if device is not None:
        options["device"] = _storage._normalise(device)
    return options


def rand_like(input: Tensor, *, generator: Generator | None = None,
              dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Uniform random values in ``[0, 1)`` shaped like ``input``."""
    _like(input, dtype, device)
    op = ATEN["rand_like"] if generator is None else ATEN["rand_like.generator"]
    return finish_factory(op(input, **_like_options(generator, dtype, device)), requires_grad)


def randn_like(input: Tensor, *, generator: Generator | None = None,
               dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Standard normal random values shaped like ``input``."""
    _like(input, dtype, device)
    op = ATEN["randn_like"] if generator is None else ATEN["randn_like.generator"]
    return finish_factory(op(input, **_like_options(generator, dtype, device)), requires_grad)


def _int_arg(value: Any, name: str) -> int:
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    try:
        return int(value.__index__())
    except AttributeError:
        raise TypeError(f"randint(): argument '{name}' must be int, not "
                        f"{type(value).__name__}") from None


def randint(*args: Any, size: Any = None, low: Any = None, high: Any = None,
            generator: Generator | None = None, out: Tensor | None = None,
            dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
            requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Random integers in ``[low, high)`` of ``size``: ``randint(high, size)`` or
    ``randint(low, high, size)``; int64 unless ``dtype`` says otherwise."""
    rest = list(args)
    if size is None and rest and isinstance(rest[-1], (tuple, list, Size)):
        size = rest.pop()
    if len(rest) == 2 and low is None and high is None:
        low, high = rest
    elif len(rest) == 1:
        if high is None:
            high = rest[0]
        elif low is None:
            low = rest[0]
        else:
            raise TypeError("randint() received an invalid combination of arguments")
    elif rest:
        raise TypeError("randint() received an invalid combination of arguments")
    if high is None or size is None:
        raise TypeError("randint() received an invalid combination of arguments - expected "
                        "(high, size) or (low, high, size)")
    lo, hi = _int_arg(0 if low is None else low, "low"), _int_arg(high, "high")
    shape = _size((), size)
    dt = check_dtype(dtype) or (out._dtype if out is not None else _dtype.int64)
    dev = _factory_device(device, out)
    if generator is None:
        t = ATEN["randint.low"](lo, hi, shape, dtype=dt, device=dev)
    else:
        t = ATEN["randint.low_generator"](lo, hi, shape, generator=generator, dtype=dt,
                                          device=dev)
    return _finish(t, out, requires_grad)


def randint_like(input: Tensor, low: Any = 0, high: Any = None, *,
                 generator: Generator | None = None, dtype: _dtype.dtype | None = None,
                 layout: Any = None, device: Any = None, requires_grad: bool = False,
                 memory_format: Any = None) -> Tensor:
    """Random integers in ``[low, high)`` shaped like ``input`` (``randint_like(x, high)``
    or ``randint_like(x, low, high)``)."""
    if high is None:
        low, high = 0, low
    _like(input, dtype, device)
    lo, hi = _int_arg(low, "low"), _int_arg(high, "high")
    op = (ATEN["randint_like.low_dtype"] if generator is None
          else ATEN["randint_like.low_generator_dtype"])
    t = op(input, lo, hi, **_like_options(generator, dtype, device))
    return finish_factory(t, requires_grad)


def randperm(n: int, *, generator: Generator | None = None, out: Tensor | None = None,
             dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1``: the order that sorts ``n`` random 63-bit
    keys."""
    n = _int_arg(n, "n")
    dt = check_dtype(dtype) or (out._dtype if out is not None else _dtype.int64)
    dev = _factory_device(device, out)
    if generator is None:
        t = ATEN["randperm"](n, dtype=dt, device=dev)
    else:
        t = ATEN["randperm.generator"](n, generator=generator, dtype=dt, device=dev)
    return _finish(t, out, requires_grad)


# -- normal, bernoulli, multinomial -----------------------------------------------------


def _check_std(std: float) -> None:
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")


def _fmt(x: float) -> str:
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def _all(mask: Tensor) -> bool:
    """Whether every element of a bool tensor is true (on ``meta``, which has no values:
    yes, as PyTorch's meta kernels skip the checks that need values)."""
    if mask.numel() == 0 or mask._device.type == "meta":
        return True
    res = new_tensor((1,) * mask.ndim, _dtype.bool_, mask._device)
    PRIMS.all(res, mask, list(range(mask.ndim)))
    return bool(res.item())


def _all_nonnegative(t: Tensor) -> bool:
    return _all(_apply("ge", t, 0.0, _dtype.bool_))


def _normal_float_float_kernel(mean: float, std: float, size: Any, *,
                               generator: Generator | None = None,
                               dtype: _dtype.dtype | None = None, layout: Any = None,
                               device: Any = None, pin_memory: Any = None) -> Tensor:
    _check_std(float(std))
    shape = _size((size,), None)
    dt = _factory_dtype(dtype)
    _require_float(dt, "normal_kernel_cpu")
    dev = device_of(device)
    return _fill_normal(shape, dt, dev, _generator(generator, dev), float(mean), float(std))


def _normal_kernel(mean: Any, std: Any = 1.0, *, generator: Generator | None = None) -> Tensor:
    """``normal.Tensor_Tensor``, ``.Tensor_float`` and ``.float_Tensor``: standard normals of
    the broadcast shape, times ``std``, plus ``mean``; the dtype of the tensor ``mean``, else
    of ``std``."""
    from .arith import add, mul

    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    ref = mean if mean_t else std
    dt = ref._dtype
    _require_float(dt, "normal_kernel_cpu")
    if std_t:
        if not _all_nonnegative(std):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        std = to_dtype(std, dt)
    else:
        _check_std(float(std))
    shape = broadcast_shapes(mean._shape if mean_t else (), std._shape if std_t else ())
    dev = ref._device
    z = _fill_normal(tuple(shape), dt, dev, _generator(generator, dev))
    return add(mul(z, std), mean)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *,
           generator: Generator | None = None, out: Tensor | None = None,
           dtype: _dtype.dtype | None = None, layout: Any = None, device: Any = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Normal random values: ``normal(mean, std)`` with tensor ``mean`` and/or ``std``
    (broadcast; the result has ``mean``'s dtype, else ``std``'s), or
    ``normal(mean, std, size)`` with numbers."""
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mean_t and not std_t:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got "
                            f"({type(mean).__name__}, {type(std).__name__}), but expected a "
                            "Tensor mean or std, or a size")
        dt = _factory_dtype(dtype if dtype is not None or out is None else out._dtype)
        t = ATEN["normal.float_float"](float(mean), float(std), _size((), size),
                                       generator=generator, dtype=dt,
                                       device=_factory_device(device, out))
        return _finish(t, out, requires_grad)
    if size is not None:
        raise TypeError("normal(): size is only accepted with a number mean and std")
    if mean_t and std_t:
        op = ATEN["normal.Tensor_Tensor"]
    elif mean_t:
        op, std = ATEN["normal.Tensor_float"], float(std)
    else:
        op, mean = ATEN["normal.float_Tensor"], float(mean)
    return write_out(out, op(mean, std, generator=generator))


def _bernoulli_kernel(self: Tensor, *, generator: Generator | None = None) -> Tensor:
    _require_float(self._dtype, "bernoulli_tensor_cpu_p_")
    result = new_tensor(self._shape, self._dtype, self._device)
    return _bernoulli_into(result, self, generator)


def _bernoulli_p_kernel(self: Tensor, p: float, *, generator: Generator | None = None
                        ) -> Tensor:
    result = new_tensor(self._shape, self._dtype, self._device)
    return _bernoulli_into(result, float(p), generator)


def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None,
              out: Tensor | None = None) -> Tensor:
    """0/1 draws with probabilities ``input`` (or the number ``p``), in ``input``'s dtype."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if p is None:
        result = ATEN["bernoulli"](input, generator=generator)
    else:
        result = ATEN["bernoulli.p"](input, float(p), generator=generator)
    return write_out(out, result)


def _bernoulli_into(self: Tensor, p: Any, generator: Generator | None) -> Tensor:
    dev = self._device
    gen = _generator(generator, dev)
    if isinstance(p, Tensor):
        ct = _compute_dtype(p._dtype)
        probs = to_dtype(p, ct)
        if not _all(_apply("logical_and", _apply("ge", probs, 0.0, _dtype.bool_),
                           _apply("le", probs, 1.0, _dtype.bool_), _dtype.bool_)):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        probs = probs.expand(self._shape)
    else:
        if not 0.0 <= p <= 1.0:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        ct = _compute_dtype(self._dtype)
        probs = p
    u = _uniform01(tuple(self._shape), ct, gen, dev)
    copy_(self, _apply("lt", u, probs, _dtype.bool_))
    return self


def _multinomial_kernel(self: Tensor, num_samples: int, replacement: bool = False, *,
                        generator: Generator | None = None) -> Tensor:
    """Without replacement it keeps the ``num_samples`` largest ``w / E`` with
    ``E ~ Exp(1)``, which draws categories one by one proportionally to the weights left."""
    input = self
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{scalar_type_name(input._dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = input._shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    rows = input.reshape(-1, n)  # (r, n)
    r = rows._shape[0]
    dev = input._device
    gen = _generator(generator, dev)
    ct = _compute_dtype(input._dtype)
    wide = wide_float(dev)  # float64, or float32 on a device without double precision
    w = to_dtype(rows, wide)
    if not _all(_apply("logical_and", _apply("ge", w, 0.0, _dtype.bool_),
                       _apply("lt", w, math.inf, _dtype.bool_), _dtype.bool_)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    total = new_tensor((r, 1), wide, dev)
    PRIMS.sum(total, w, [1])
    if not _all(_apply("gt", total, 0.0, _dtype.bool_)):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    result = new_tensor((r, num_samples), _dtype.int64, dev)
    if replacement:
        cdf = new_tensor((r, n), wide, dev)
        PRIMS.cumsum(cdf, w, 1)
        u = _uniform01((r, num_samples), wide, gen, dev)
        targets = _apply("mul", u, total.expand(r, num_samples))
        PRIMS.searchsorted(result, cdf, targets, True)
        result = _apply("minimum", result, n - 1)
    else:
        e = _shaped(_apply("neg", _apply("log", _uniform_open(r * n, ct, gen, dev))), (r, n))
        keys = _apply("div", to_dtype(w, ct), e)
        values = new_tensor((r, num_samples), ct, dev)
        PRIMS.topk(values, result, keys, num_samples, 1, True, True)
    if input.ndim == 1:
        result = _shaped(result, (num_samples,))
    return result


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None, out: Tensor | None = None) -> Tensor:
    """Category indices drawn from the rows of ``input`` (non-negative weights, 1-d or 2-d),
    with or without replacement."""
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if isinstance(num_samples, Tensor):  # a 0-d integer tensor, as PyTorch's parser reads an int
        num_samples = num_samples.__index__()
    return write_out(out, ATEN["multinomial"](input, num_samples, replacement,
                                              generator=generator))


# -- in-place samplers: kernels ------------------------------------------------------------


def _fill_from(self: Tensor, values: Tensor) -> Tensor:
    """Write ``values`` into ``self`` (any strides; casting to its dtype); returns ``self``."""
    return copy_(self, values)


def _uniform_kernel(self: Tensor, from_: float = 0.0, to: float = 1.0, *,
                    generator: Generator | None = None, **kwargs: Any) -> Tensor:
    if "from" in kwargs:  # the schema's name, a Python keyword
        from_ = kwargs.pop("from")
    _no_extra("uniform_", kwargs)
    dt = self._dtype
    _check_floating(dt, "check_uniform_bounds")
    from_, to = float(from_), float(to)
    for name, v in (("from", from_), ("to", to)):
        if math.isinf(v) or math.isnan(v):
            raise RuntimeError(f"{name} is out of bounds for {_CTYPE.get(dt._name, dt._name)}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_fmt(from_)} > to={_fmt(to)}")
    dev = self._device
    values = _fill_uniform(tuple(self._shape), dt, dev, _generator(generator, dev), from_, to)
    return _fill_from(self, values)


def _normal__kernel(self: Tensor, mean: float = 0.0, std: float = 1.0, *,
                    generator: Generator | None = None) -> Tensor:
    if not self._dtype.is_complex:
        _require_float(self._dtype, "normal_kernel_cpu")
    _check_std(float(std))
    dev = self._device
    values = _fill_normal(tuple(self._shape), self._dtype, dev, _generator(generator, dev),
                          float(mean), float(std))
    return _fill_from(self, values)


def _random_top(dt: _dtype.dtype) -> int:
    """The largest value ``random_()`` draws: ``2**p`` for floats with ``p`` significand
    bits, the maximum for integers."""
    if dt.is_complex:
        raise NotImplementedError(f'"random_" not implemented for \'{scalar_type_name(dt)}\'')
    return (1 << _SIGNIFICAND_BITS[dt._name]) if dt.is_floating_point else _int_range(dt)[1]


def _random_fill(self: Tensor, low: int, high: int, generator: Generator | None) -> Tensor:
    _check_int_bounds(low, high, self._dtype)
    dev = self._device
    values = _randint_values(tuple(self._shape), low, high, _generator(generator, dev), dev)
    return _fill_from(self, values)


def _random_from_kernel(self: Tensor, from_: int, to: int | None, *,
                        generator: Generator | None = None) -> Tensor:
    top = _random_top(self._dtype)
    return _random_fill(self, from_, top + 1 if to is None else to, generator)


def _random_to_kernel(self: Tensor, to: int, *, generator: Generator | None = None) -> Tensor:
    _random_top(self._dtype)
    return _random_fill(self, 0, to, generator)


def _random_kernel(self: Tensor, *, generator: Generator | None = None) -> Tensor:
    return _random_fill(self, 0, _random_top(self._dtype) + 1, generator)


def _exponential_kernel(self: Tensor, lambd: float = 1.0, *,
                        generator: Generator | None = None) -> Tensor:
    if not self._dtype.is_floating_point:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{scalar_type_name(self._dtype)}")
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    dev = self._device
    ct = _compute_dtype(self._dtype)
    u = _uniform_open(self.numel(), ct, _generator(generator, dev), dev)
    values = _shaped(_apply("mul", _apply("log", u), -1.0 / float(lambd)), self._shape)
    return _fill_from(self, values)


def _geometric_kernel(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    if not 0.0 < p < 1.0:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    dev = self._device
    u = _uniform_open(self.numel(), wide_float(dev), _generator(generator, dev), dev)
    trials = _apply("ceil", _apply("div", _apply("log", u), math.log1p(-p)))
    return _fill_from(self, _shaped(trials, self._shape))


def _log_normal_kernel(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                       generator: Generator | None = None) -> Tensor:
    _require_float(self._dtype, "log_normal_cpu")
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    dev = self._device
    ct = _compute_dtype(self._dtype)
    z = _fill_normal(tuple(self._shape), ct, dev, _generator(generator, dev), float(mean),
                     float(std))
    return _fill_from(self, _apply("exp", z))


def _cauchy_kernel(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
                   generator: Generator | None = None) -> Tensor:
    if not self._dtype.is_floating_point:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{_CTYPE.get(self._dtype._name, self._dtype._name)}")
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    dev = self._device
    ct = _compute_dtype(self._dtype)
    u = _uniform_open(self.numel(), ct, _generator(generator, dev), dev)
    t = _apply("tan", _apply("mul", _apply("add", u, -0.5), math.pi))
    values = _apply("add", _apply("mul", t, float(sigma)), float(median))
    return _fill_from(self, _shaped(values, self._shape))


def _bernoulli__kernel(self: Tensor, p: Any = 0.5, *,
                       generator: Generator | None = None) -> Tensor:
    return _bernoulli_into(self, p if isinstance(p, Tensor) else float(p), generator)


def _define_aten() -> dict[str, _dispatch.Operator]:
    options = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, " \
              "bool? pin_memory=None"
    long_options = options.replace("dtype=None", "dtype=long")
    like = f"{options}, MemoryFormat? memory_format=None"
    gen = "Generator? generator=None"
    table = {
        "rand": (f"rand(SymInt[] size, *, {options}) -> Tensor", _rand_kernel),
        "rand.generator": (f"rand.generator(SymInt[] size, *, Generator? generator, {options}) "
                           "-> Tensor", _rand_kernel),
        "randn": (f"randn(SymInt[] size, *, {options}) -> Tensor", _randn_kernel),
        "randn.generator": (f"randn.generator(SymInt[] size, *, Generator? generator, "
                            f"{options}) -> Tensor", _randn_kernel),
        "randint.low": (f"randint.low(SymInt low, SymInt high, SymInt[] size, *, "
                        f"{long_options}) -> Tensor", _randint_kernel),
        "randint.low_generator": ("randint.low_generator(SymInt low, SymInt high, "
                                  f"SymInt[] size, *, Generator? generator, {long_options}) -> "
                                  "Tensor", _randint_kernel),
        "rand_like": (f"rand_like(Tensor self, *, {like}) -> Tensor", _rand_like_kernel),
        "rand_like.generator": (f"rand_like.generator(Tensor self, *, Generator? generator, "
                                f"{like}) -> Tensor", _rand_like_kernel),
        "randn_like": (f"randn_like(Tensor self, *, {like}) -> Tensor", _randn_like_kernel),
        "randn_like.generator": (f"randn_like.generator(Tensor self, *, Generator? generator, "
                                 f"{like}) -> Tensor", _randn_like_kernel),
        "randint_like.low_dtype": ("randint_like.low_dtype(Tensor self, SymInt low, "
                                   f"SymInt high, *, {like}) -> Tensor", _randint_like_kernel),
        "randint_like.low_generator_dtype": (
            "randint_like.low_generator_dtype(Tensor self, SymInt low, SymInt high, *, "
            f"Generator? generator, {like}) -> Tensor", _randint_like_kernel),
        "randperm": (f"randperm(SymInt n, *, {long_options}) -> Tensor", _randperm_kernel),
        "randperm.generator": (f"randperm.generator(SymInt n, *, Generator? generator, "
                               f"{long_options}) -> Tensor", _randperm_kernel),
        "normal.float_float": (f"normal.float_float(float mean, float std, SymInt[] size, *, "
                               f"{gen}, {options}) -> Tensor", _normal_float_float_kernel),
        "normal.Tensor_Tensor": (f"normal.Tensor_Tensor(Tensor mean, Tensor std, *, {gen}) -> "
                                 "Tensor", _normal_kernel),
        "normal.Tensor_float": (f"normal.Tensor_float(Tensor mean, float std=1, *, {gen}) -> "
                                "Tensor", _normal_kernel),
        "normal.float_Tensor": (f"normal.float_Tensor(float mean, Tensor std, *, {gen}) -> "
                                "Tensor", _normal_kernel),
        "bernoulli": (f"bernoulli(Tensor self, *, {gen}) -> Tensor", _bernoulli_kernel),
        "bernoulli.p": (f"bernoulli.p(Tensor self, float p, *, {gen}) -> Tensor",
                        _bernoulli_p_kernel),
        "multinomial": (f"multinomial(Tensor self, int num_samples, bool replacement=False, *, "
                        f"{gen}) -> Tensor", _multinomial_kernel),
        "uniform_": (f"uniform_(Tensor(a!) self, float from=0, float to=1, *, {gen}) -> "
                     "Tensor(a!)", _uniform_kernel),
        "normal_": (f"normal_(Tensor(a!) self, float mean=0, float std=1, *, {gen}) -> "
                    "Tensor(a!)", _normal__kernel),
        "random_.from": (f"random_.from(Tensor(a!) self, int from, int? to, *, {gen}) -> "
                         "Tensor(a!)", _random_from_kernel),
        "random_.to": (f"random_.to(Tensor(a!) self, int to, *, {gen}) -> Tensor(a!)",
                       _random_to_kernel),
        "random_": (f"random_(Tensor(a!) self, *, {gen}) -> Tensor(a!)", _random_kernel),
        "exponential_": (f"exponential_(Tensor(a!) self, float lambd=1, *, {gen}) -> "
                         "Tensor(a!)", _exponential_kernel),
        "geometric_": (f"geometric_(Tensor(a!) self, float p, *, {gen}) -> Tensor(a!)",
                       _geometric_kernel),
        "log_normal_": (f"log_normal_(Tensor(a!) self, float mean=1, float std=2, *, {gen}) -> "
                        "Tensor(a!)", _log_normal_kernel),
        "cauchy_": (f"cauchy_(Tensor(a!) self, float median=0, float sigma=1, *, {gen}) -> "
                    "Tensor(a!)", _cauchy_kernel),
        "bernoulli_.float": (f"bernoulli_.float(Tensor(a!) self, float p=0.5, *, {gen}) -> "
                             "Tensor(a!)", _bernoulli__kernel),
        "bernoulli_.Tensor": (f"bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, {gen}) -> "
                              "Tensor(a!)", _bernoulli__kernel),
    }
    ops = _dispatch.define_aten(table)
    # Results that never require grad, whatever the input (PyTorch: not differentiable).
    for name in ("rand_like", "rand_like.generator", "randn_like", "randn_like.generator",
                 "randint_like.low_dtype", "randint_like.low_generator_dtype", "multinomial"):
        not_differentiable(ops[name])
    return ops


ATEN = _define_aten()
_RAND = ATEN["rand"]
_RANDN = ATEN["randn"]


# -- in-place samplers (Tensor methods) ----------------------------------------------------


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *,
             generator: Generator | None = None, **kwargs: Any) -> Tensor:
    """Fill with uniform values in ``[from, to)``. In place."""
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    _no_extra("uniform_", kwargs)
    return ATEN["uniform_"](self, from_, to, generator=generator)


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """Fill with normal values of ``mean`` and ``std``. In place."""
    return ATEN["normal_"](self, mean, std, generator=generator)


def random_(self: Tensor, *args: Any, generator: Generator | None = None,
            **kwargs: Any) -> Tensor:
    """Fill with integers: ``random_()`` over ``[0, 2**p]`` for floats with ``p`` significand
    bits (``[0, max]`` for integers), ``random_(to)`` over ``[0, to)``, ``random_(from, to)``
    over ``[from, to)`` (``to=None``: up to the dtype's maximum). In place."""
    if len(args) > 2 or set(kwargs) - {"from", "to"}:
        raise TypeError("random_() received an invalid combination of arguments - expected "
                        "(), (to), or (from, to)")
    if len(args) == 2 or "from" in kwargs:
        low = _int_arg(args[0] if args else kwargs["from"], "from")
        high_arg = args[1] if len(args) == 2 else kwargs.get("to")
        high = None if high_arg is None else _int_arg(high_arg, "to")
        return ATEN["random_.from"](self, low, high, generator=generator)
    if args or "to" in kwargs:
        high = _int_arg(args[0] if args else kwargs["to"], "to")
        return ATEN["random_.to"](self, high, generator=generator)
    return ATEN["random_"](self, generator=generator)


def exponential_(self: Tensor, lambd: float = 1.0, *,
                 generator: Generator | None = None) -> Tensor:
    """Fill with exponential values of rate ``lambd``: ``-log(u) / lambd``. In place."""
    return ATEN["exponential_"](self, lambd, generator=generator)


def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Fill with the number of Bernoulli(``p``) trials up to the first success (>= 1):
    ``ceil(log(u) / log(1 - p))``. In place."""
    return ATEN["geometric_"](self, p, generator=generator)


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Generator | None = None) -> Tensor:
    """Fill with ``exp(N(mean, std))``. In place."""
    return ATEN["log_normal_"](self, mean, std, generator=generator)


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """Fill with Cauchy values: ``median + sigma * tan(pi * (u - 1/2))``. In place."""
    return ATEN["cauchy_"](self, median, sigma, generator=generator)


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Fill with 0/1 draws of probability ``p`` (a number or a tensor broadcast to
    ``self``). In place."""
    if isinstance(p, Tensor):
        return ATEN["bernoulli_.Tensor"](self, p, generator=generator)
    return ATEN["bernoulli_.float"](self, float(p), generator=generator)


def _bernoulli_method(self: Tensor, p: Any = None, *,
                      generator: Generator | None = None) -> Tensor:
    return bernoulli(self, p, generator=generator)


def _multinomial_method(self: Tensor, num_samples: int, replacement: bool = False, *,
                        generator: Generator | None = None) -> Tensor:
    return multinomial(self, num_samples, replacement, generator=generator)


def _no_extra(name: str, kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{sorted(kwargs)[0]}'")


METHODS: dict[str, Any] = {
    "uniform_": uniform_,
    "normal_": normal_,
    "random_": random_,
    "exponential_": exponential_,
    "geometric_": geometric_,
    "log_normal_": log_normal_,
    "cauchy_": cauchy_,
    "bernoulli_": bernoulli_,
    "bernoulli": _bernoulli_method,
    "multinomial": _multinomial_method,
}
