"""The op database (docs/architecture.md): one row per public op, with sample inputs, dtypes and
tolerances. It drives the reference tests, the backend conformance suite, gradchecks and the
parity run against real PyTorch.

Rows live in one module per area (``elementwise.py``, ``reductions.py``...), each defining
``OPS: list[OpInfo]``. They use only PyTorch's public API and numpy, so the very same files run
under real PyTorch in the parity session: sample inputs are made from a seeded numpy generator
and ``torch.tensor``, and are therefore identical under both libraries.

A sample function has the signature ``samples(torch, dtype, make)`` and yields
:class:`SampleInput`: ``torch`` is the library under test, ``dtype`` one of the row's dtypes,
``make`` a :class:`Maker` bound to a fresh seeded generator.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

AREAS = ("foundation", "elementwise", "reductions", "shape", "indexing", "creation", "linalg",
         "conv", "attention", "norm", "special", "sparse", "spectral", "nn_aten")

FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("int64", "int32", "int16", "int8", "uint8")
ALL = FLOATS + INTS + ("bool",)


@dataclass(frozen=True)
class SampleInput:
    """One call: ``op(input, *args, **kwargs)``."""

    input: Any
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    name: str = ""


@dataclass(frozen=True)
class OpInfo:
    """A public op and how to test it.

    :param name: the public name: ``torch.<name>`` (dots allowed: ``"linalg.solve"``).
    :param samples: ``samples(torch, dtype, make) -> iterable of SampleInput``.
    :param dtypes: dtype names the op supports (``torch.<name>`` in either library).
    :param function: whether ``torch.<name>`` exists.
    :param method: the Tensor method name, if the op has one.
    :param inplace: the in-place Tensor method name, if any (``"add_"``).
    :param supports_out: whether the function takes ``out=``.
    :param atol, rtol: tolerances for floating results (``None``: assert_close's defaults).
    :param dtype_tol: per-dtype ``(dtype, atol, rtol)`` tolerances for the parity run.
    :param differentiable: whether gradients are checked (the autograd issue).
    :param view: whether the result is a view (parity then compares strides too).
    :param random: the result depends on the RNG (parity compares statistics, not values).
    :param gradcheck_wrapper: maps the input before the op in gradient checks (a symmetrizing
        wrapper for ops that require symmetric input, as PyTorch's OpInfos do).
    :param layout_dependent: the result depends on the inputs' strides, not only their values
        (``as_strided``, ``stride``): the non-contiguous-inputs check does not apply.
    :param supports_meta: whether the op runs on the meta device: ``True`` must work,
        ``False`` is not tried, ``None`` (unknown) is tried and skipped when it raises.
    """

    name: str
    samples: Callable[[Any, str, Maker], Iterable[SampleInput]]
    dtypes: tuple[str, ...] = FLOATS
    function: bool = True
    method: str | None = None
    inplace: str | None = None
    supports_out: bool = False
    atol: float | None = None
    rtol: float | None = None
    # (dtype name, atol, rtol) overrides for results of that dtype when compared with PyTorch
    # (parity): half-precision results of reduction-heavy ops may differ by an ulp between two
    # correct implementations that round intermediates differently.
    dtype_tol: tuple[tuple[str, float, float], ...] = ()
    differentiable: bool = False
    view: bool = False
    random: bool = False
    layout_dependent: bool = False
    supports_meta: bool | None = None
    # Applied to the (first) input before the op when gradients are checked by finite
    # differences: ops that read one triangle of a symmetric input need it symmetrized.
    gradcheck_wrapper: Callable[[Any], Any] | None = None


class Maker:
    """Deterministic sample tensors: the same values under Plait and real PyTorch."""

    def __init__(self, torch: Any, seed: int) -> None:
        self.torch = torch
        self.rng = np.random.default_rng(seed)

    def array(self, shape: tuple[int, ...], dtype: str, low: float | None = None,
              high: float | None = None) -> np.ndarray:
        """Values for ``dtype``: integers in [low, high), floats uniform in [low, high)."""
        if dtype == "bool":
            return self.rng.integers(0, 2, shape).astype(bool)
        if dtype in INTS:
            # integers in [low, high): fractional limits round up, and the range keeps at
            # least one value (uint8 clamps at 0)
            lo = math.ceil(low) if low is not None else -9
            if dtype == "uint8":
                lo = max(lo, 0)
            hi = max(math.ceil(high) if high is not None else 10, lo + 1)
            return self.rng.integers(lo, hi, shape).astype(np.int64)
        lo = -5.0 if low is None else low
        hi = 5.0 if high is None else high
        values = self.rng.uniform(lo, hi, shape)
        if dtype in ("float16", "bfloat16"):
            # representable in both half types, so rounding the input cannot differ
            values = np.round(values * 8) / 8
        return values

    def __call__(self, shape: tuple[int, ...], dtype: str, low: float | None = None,
                 high: float | None = None, noncontiguous: bool = False) -> Any:
        """A tensor of ``shape``; ``noncontiguous`` makes it a strided view of a larger one."""
        torch = self.torch
        dt = getattr(torch, dtype)
        if noncontiguous and shape:
            big = self.array(tuple(shape[:-1]) + (shape[-1] * 2,), dtype, low, high)
            return _from_nested(torch, big, dt)[..., ::2]
        return _from_nested(torch, self.array(shape, dtype, low, high), dt)


def _from_nested(torch: Any, values: np.ndarray, dt: Any) -> Any:
    # torch.tensor([]) is 1-d: a zero-size array keeps its shape through a reshape
    return torch.tensor(values.tolist(), dtype=dt).reshape(values.shape)


def load() -> list[OpInfo]:
    """Every row, from every area module, in order."""
    rows: list[OpInfo] = []
    for area in AREAS:
        module = importlib.import_module(f"{__name__}.{area}")
        rows.extend(module.OPS)
    return rows


def resolve(torch: Any, name: str) -> Any:
    """``torch.<name>`` with dots (``linalg.solve``)."""
    obj = torch
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def samples(op: OpInfo, torch: Any, dtype: str, seed: int = 0) -> Iterator[SampleInput]:
    """The samples of ``op`` for ``dtype`` under ``torch`` (deterministic in ``seed``)."""
    yield from op.samples(torch, dtype, Maker(torch, seed))


# ---------------------------------------------------------------------------------------------
# Running rows: shared by tests/test_opdb.py (Plait alone) and benchmarks/parity (both libraries),
# so public API only.


def call(torch: Any, op: OpInfo, sample: SampleInput, **extra: Any) -> Any:
    """Run ``sample`` through the op's function (its method when it has no function)."""
    kwargs = {**sample.kwargs, **extra}
    if op.function:
        return resolve(torch, op.name)(sample.input, *sample.args, **kwargs)
    return getattr(sample.input, op.method)(*sample.args, **kwargs)


def call_method(op: OpInfo, sample: SampleInput, input: Any = None) -> Any:
    """Run ``sample`` through the Tensor method ``op.method`` (on ``input`` if given)."""
    target = sample.input if input is None else input
    return getattr(target, op.method)(*sample.args, **sample.kwargs)


def call_inplace(op: OpInfo, sample: SampleInput, input: Any) -> Any:
    """Run ``sample`` through the in-place method ``op.inplace`` on ``input``."""
    return getattr(input, op.inplace)(*sample.args, **sample.kwargs)


def map_tensors(torch: Any, obj: Any, fn: Callable[[Any], Any]) -> Any:
    """``obj`` with ``fn`` applied to every tensor in it (through tuples, lists and dicts)."""
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if type(obj) is tuple:  # torch.Size and named tuples hold no tensors to map
        return tuple(map_tensors(torch, x, fn) for x in obj)
    if isinstance(obj, list):
        return [map_tensors(torch, x, fn) for x in obj]
    if isinstance(obj, dict):
        return {k: map_tensors(torch, v, fn) for k, v in obj.items()}
    return obj


def map_sample(torch: Any, sample: SampleInput, fn: Callable[[Any], Any]) -> SampleInput:
    """A copy of ``sample`` with ``fn`` applied to each of its tensors."""
    return SampleInput(map_tensors(torch, sample.input, fn),
                       map_tensors(torch, sample.args, fn),
                       map_tensors(torch, sample.kwargs, fn), sample.name)


def has_tensors(torch: Any, sample: SampleInput) -> bool:
    """Whether any tensor appears in ``sample``."""
    found = []
    map_tensors(torch, (sample.input, sample.args, sample.kwargs), found.append)
    return bool(found)


def leaves(result: Any) -> list[Any]:
    """The tensors and scalars of a result, flattened through tuples (named ones too) and
    lists, in order."""
    if isinstance(result, (tuple, list)) and not isinstance(result, str):
        return [leaf for x in result for leaf in leaves(x)]
    return [result]


def exception_category(exc: BaseException) -> str:
    """The built-in exception class an exception is (``torch.linalg.LinAlgError`` is a
    ``RuntimeError``): what two libraries are compared on."""
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return "Exception"
