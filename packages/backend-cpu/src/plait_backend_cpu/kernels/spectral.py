"""Wrappers of the native batched FFT: the ``fft_c2c``, ``fft_r2c`` and ``fft_c2r``
primitives on float32/float64 signals (complex64/complex128 spectra) whose transformed
lengths factor into 2, 3 and 5.

A transform over several dimensions runs one native pass per dimension, alternating between
the output and one scratch tensor so that the last pass writes the output; each pass scales
by its own dimension's share of the normalization. Anything else (half precision, another
length, input and output sharing memory) runs core's reference kernel, which the tests
compare with.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

from ._common import Kernel

# (real dtype name, complex dtype name) -> the native kernel's double_precision flag
_PRECISIONS = {("float32", "complex64"): False, ("float64", "complex128"): True}
_C2C, _R2C, _C2R = 0, 1, 2


def _scale(n: int, normalization: int) -> float:
    """One dimension's factor of the normalization: none, 1/sqrt(n) or 1/n."""
    return 1.0 if normalization == 0 else (1.0 / math.sqrt(n) if normalization == 1 else 1.0 / n)


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """The FFT primitives' native kernels, keyed by primitive name."""
    from torch.backends.contract import empty

    supported = native.fft_length_supported
    ok = native.FFT_OK

    def precision(real: Any, complex_: Any) -> bool | None:
        return _PRECISIONS.get((str(real).removeprefix("torch."),
                                str(complex_).removeprefix("torch.")))

    def one_pass(kind: int, double: bool, forward: bool, out: Any, a: Any, dim: int,
                 length: int, normalization: int) -> bool:
        """One native pass of ``a`` along ``dim`` into ``out``; False when it declined."""
        batch = [d for d in range(a.ndim) if d != dim]
        shape = [a.shape[d] for d in batch]
        if shape != [out.shape[d] for d in batch]:
            return False
        a_strides, out_strides = a.stride(), out.stride()
        return native.fft(
            kind, double, forward, length, a.shape[dim], out.shape[dim],
            _scale(length, normalization), a.data_ptr(), out.data_ptr(), a_strides[dim],
            out_strides[dim], shape, [a_strides[d] for d in batch],
            [out_strides[d] for d in batch]) == ok

    def run(out: Any, source: Any, steps: Sequence[tuple[int, int, int, bool]],
            scratch: Callable[[], Any], normalization: int, double: bool,
            through_out: bool) -> bool:
        """Runs ``steps`` — (kind, dim, length, forward) — from ``source``, the last pass into
        ``out``. The earlier passes write alternately into two buffers such that consecutive
        passes never share one: ``out`` and one scratch tensor when the intermediate spectra
        have ``out``'s shape and dtype (``through_out``), else two scratch tensors."""
        buffers: list[Any] = [out, None] if through_out else [None, None]
        targets = []
        for i in range(len(steps) - 1):
            slot = (len(steps) - 1 - i) % 2 if through_out else (len(steps) - 2 - i) % 2
            if buffers[slot] is None:
                buffers[slot] = scratch()
            targets.append(buffers[slot])
        targets.append(out)
        src = source
        for (kind, dim, length, forward), target in zip(steps, targets):
            if not one_pass(kind, double, forward, target, src, dim, length, normalization):
                return False
            src = target
        return True

    def fft_c2c(out: Any, a: Any, dims: Sequence[int], normalization: int,
                forward: bool) -> None:
        double = precision(a.dtype.to_real(), a.dtype) if a.dtype.is_complex else None
        steps = [(_C2C, d, a.shape[d], forward) for d in dims]
        if (double is None or out.dtype != a.dtype or out.numel() == 0
                or not all(supported(a.shape[d]) for d in dims)
                or not run(out, a, steps, lambda: empty(tuple(out.shape), out.dtype, out.device),
                           normalization, double, True)):
            reference("fft_c2c")(out, a, dims, normalization, forward)

    def fft_r2c(out: Any, a: Any, dims: Sequence[int], normalization: int,
                onesided: bool) -> None:
        double = precision(a.dtype, out.dtype)
        last = dims[-1]
        steps = [(_R2C, last, a.shape[last], True)]
        steps += [(_C2C, d, a.shape[d], True) for d in dims[:-1]]
        if (double is None or out.numel() == 0
                or not all(supported(a.shape[d]) for d in dims)
                or not run(out, a, steps, lambda: empty(tuple(out.shape), out.dtype, out.device),
                           normalization, double, True)):
            reference("fft_r2c")(out, a, dims, normalization, onesided)

    def fft_c2r(out: Any, a: Any, dims: Sequence[int], normalization: int) -> None:
        double = precision(out.dtype, a.dtype)
        last = dims[-1]
        steps = [(_C2C, d, a.shape[d], False) for d in dims[:-1]]
        steps.append((_C2R, last, out.shape[last], False))
        if (double is None or out.numel() == 0
                or not all(supported(out.shape[d]) for d in dims)
                or not run(out, a, steps, lambda: empty(tuple(a.shape), a.dtype, a.device),
                           normalization, double, False)):
            reference("fft_c2r")(out, a, dims, normalization)

    return {"fft_c2c": fft_c2c, "fft_r2c": fft_r2c, "fft_c2r": fft_c2r}
