"""Wrappers of the native Philox kernels: the primitive random_bits_, and fused samplers that
override core's composite aten ops ``rand``, ``randn``, ``uniform_``, ``normal_``,
``bernoulli_.float`` and ``bernoulli.p`` under the CPU key.

A fused sampler takes the same Philox counters from the generator as the composite and makes
the same values from them, bit for bit (core's torch/_random_ops.py is the spec: float64
values from two words, the others from one; normals by Box-Muller on open uniforms in the
compute dtype, float64 for float64 and float32 otherwise). Whatever it does not take (another
dtype, a size or argument the composite must check or reject) it declines, and the composite
runs, raising PyTorch's errors.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import UNKNOWN_DTYPE, Kernel, floating_codes
from .reduce import pointers

_MASK64 = (1 << 64) - 1
# Significand bits (implicit bit included) of the floating dtypes, by name.
_SIGNIFICAND_BITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """``random_bits_`` (``out, seed, offset``) and the fused samplers (``"aten::randn"``...)."""
    int64 = native.DTYPES.index("int64")

    def random_bits_(out: Any, seed: int, offset: int) -> None:
        (out_ptr,) = pointers("random_bits_", out)
        # seed and offset are unsigned 64-bit values, as the reference reads them. Any layout
        # runs natively (element i of the row-major order gets word i). Left to the reference
        # (never from core, which allocates a fresh int64 output): another dtype, an output
        # with repeated elements (stride 0, where the last write wins), more than 64 dims.
        native_ok = dtype_codes.get(out.dtype, UNKNOWN_DTYPE) == int64 and native.random_bits(
            tuple(out.shape), out_ptr, out.stride(), int(seed) & _MASK64, int(offset) & _MASK64
        )
        if not native_ok:
            reference("random_bits_")(out, seed, offset)

    kernels: dict[str, Kernel] = {"random_bits_": random_bits_}
    kernels.update(_samplers(native, dtype_codes))
    return kernels


def _counters(n_values: int, bits: int) -> int:
    """Philox counters for ``n_values`` values of ``bits`` bits: a word each up to 32 bits,
    two above, four words a counter (the composite's _top_bits)."""
    return (n_values * (2 if bits > 32 else 1) + 3) // 4


def _samplers(native: ModuleType, dtype_codes: Mapping[Any, int]) -> dict[str, Kernel]:
    """The fused samplers, keyed by aten op."""
    from torch.backends import contract

    Decline = contract.Decline
    reserve = contract.reserve_counters
    empty = contract.empty
    codes = floating_codes(native, dtype_codes)
    # dtype -> (code, its significand bits, those of its compute dtype)
    info = {dt: (code, _SIGNIFICAND_BITS[native.DTYPES[code]],
                 53 if native.DTYPES[code] == "float64" else 24)
            for dt, code in codes.items()}

    def numel_of(size: Any) -> int:
        """The element count of a factory's ``size``; declines a size the composite must check
        (not a sequence of non-negative ints)."""
        n = 1
        for s in size:
            if type(s) is not int or s < 0:
                raise Decline
            n *= s
        return n

    def fill(out: Any, run: Callable[[int], bool], contiguous: bool) -> None:
        """Run ``run(address)`` into ``out`` (through a contiguous scratch tensor when
        ``out`` is not ``contiguous``: the composite writes values in row-major order)."""
        target = out if contiguous else empty(tuple(out.shape), out.dtype, out.device)
        if not run(contract.data_ptr(target)):
            raise RuntimeError("plait-backend-cpu: a fused sampler refused a floating dtype")
        if target is not out:
            contract.primitive("copy_")(out, target)

    def writable(out: Any, contiguous: bool) -> bool:
        """False for an output with a zero stride (repeated elements: the composite refuses
        the write, after taking its counters)."""
        return contiguous or 0 not in out.stride()

    def uniform_into(out: Any, entry: tuple[int, int, int], generator: Any, unit: bool,
                     low: float, high: float, contiguous: bool) -> Any:
        code, bits, compute_bits = entry
        n = out.numel()
        if not unit:
            bits = compute_bits
        seed, offset = reserve(generator, out.device, _counters(n, bits) if n else 0)
        if n:
            fill(out, lambda ptr: native.random_uniform(code, n, ptr, seed, offset, unit,
                                                        high - low, low), contiguous)
        return out

    def normal_into(out: Any, entry: tuple[int, int, int], generator: Any, mean: float,
                    std: float, contiguous: bool) -> Any:
        code, _bits, compute_bits = entry
        n = out.numel()
        half = (n + 1) // 2
        seed, offset = reserve(generator, out.device,
                               _counters(2 * half, compute_bits - 1) if n else 0)
        if n:
            fill(out, lambda ptr: native.random_normal(code, n, ptr, seed, offset, mean, std,
                                                       std != 1.0, mean != 0.0), contiguous)
        return out

    def bernoulli_into(out: Any, entry: tuple[int, int, int], generator: Any, p: float,
                       contiguous: bool) -> Any:
        code, _bits, compute_bits = entry
        n = out.numel()
        seed, offset = reserve(generator, out.device, _counters(n, compute_bits) if n else 0)
        if n:
            fill(out, lambda ptr: native.random_bernoulli(code, n, ptr, seed, offset, p),
                 contiguous)
        return out

    def factory_output(size: Any, dtype: Any, device: Any) -> tuple[Any, tuple[int, int, int]]:
        """A new output of ``rand``/``randn`` and its dtype's entry; other dtypes decline."""
        entry = info.get(dtype)
        if entry is None:
            raise Decline
        numel_of(size)
        return empty(tuple(size), dtype, "cpu" if device is None else device), entry

    @contract.may_decline
    def rand(size: Any, *, generator: Any = None, dtype: Any = None, layout: Any = None,
             device: Any = None, pin_memory: Any = None) -> Any:
        out, entry = factory_output(size, dtype, device)
        return uniform_into(out, entry, generator, True, 0.0, 1.0, True)

    @contract.may_decline
    def randn(size: Any, *, generator: Any = None, dtype: Any = None, layout: Any = None,
              device: Any = None, pin_memory: Any = None) -> Any:
        out, entry = factory_output(size, dtype, device)
        return normal_into(out, entry, generator, 0.0, 1.0, True)

    @contract.may_decline
    def uniform_(self: Any, from_: float = 0.0, to: float = 1.0, *, generator: Any = None,
                 **kwargs: Any) -> Any:
        if "from" in kwargs:  # the schema's name, a Python keyword
            from_ = kwargs.pop("from")
        entry = info.get(self.dtype)
        contiguous = self.is_contiguous()
        low, high = float(from_), float(to)
        # inf, nan and from > to are the composite's errors to raise
        if (entry is None or kwargs or not -math.inf < low <= high < math.inf
                or not writable(self, contiguous)):
            raise Decline
        out = uniform_into(self, entry, generator, low == 0.0 and high == 1.0, low, high,
                           contiguous)
        contract.bump_version(self)  # an in-place write, as PyTorch counts it
        return out

    @contract.may_decline
    def normal_(self: Any, mean: float = 0.0, std: float = 1.0, *,
                generator: Any = None) -> Any:
        entry = info.get(self.dtype)
        mean, std = float(mean), float(std)
        contiguous = self.is_contiguous()
        if entry is None or not std >= 0.0 or not writable(self, contiguous):
            raise Decline
        out = normal_into(self, entry, generator, mean, std, contiguous)
        contract.bump_version(self)
        return out

    @contract.may_decline
    def bernoulli_float(self: Any, p: float = 0.5, *, generator: Any = None) -> Any:
        entry = info.get(self.dtype)
        p = float(p)
        contiguous = self.is_contiguous()
        if entry is None or not 0.0 <= p <= 1.0 or not writable(self, contiguous):
            raise Decline
        out = bernoulli_into(self, entry, generator, p, contiguous)
        contract.bump_version(self)
        return out

    @contract.may_decline
    def bernoulli_p(self: Any, p: float, *, generator: Any = None) -> Any:
        entry = info.get(self.dtype)
        p = float(p)
        if entry is None or not 0.0 <= p <= 1.0:
            raise Decline
        out = empty(tuple(self.shape), self.dtype, self.device)
        return bernoulli_into(out, entry, generator, p, True)

    return {
        "aten::rand": rand,
        "aten::rand.generator": rand,
        "aten::randn": randn,
        "aten::randn.generator": randn,
        "aten::uniform_": uniform_,
        "aten::normal_": normal_,
        "aten::bernoulli_.float": bernoulli_float,
        "aten::bernoulli.p": bernoulli_p,
    }
