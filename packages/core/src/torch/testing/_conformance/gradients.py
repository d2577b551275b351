"""Gradients on the backend's device: the op database's float64 samples through ``gradcheck``.

Bounded on purpose (one or two small samples per op, first derivatives only): the full
gradchecks, second derivatives included, run in the project's own test suite. A sample is
used only away from kinks (ties, bounds, jumps), where finite differences can judge.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

from ..._core.tensor import Tensor
from .. import _opdb

MAX_ELEMENTS = 24  # differentiable input elements per sample: finite differences stay cheap
# Samples where the true derivative and PyTorch's differ (the project's gradcheck test skips
# them for the same reasons).
SKIP = {("linalg.det", "singular"), ("det", "singular"), ("put", "overwrite"),
        ("mode", "default dim"), ("linalg.pinv", "rank 1"), ("linalg.pinv", "rtol"),
        ("linalg.pinv", "hermitian")}
# Arguments finite differences must not move (quantile's q selects the interpolation rank).
FIXED_ARGS = {"quantile": (0,), "nanquantile": (0,)}
# Ops whose first argument has no derivative in PyTorch (the rule raises for it): only the
# others are checked (without this every sample would raise and none be checked).
FIXED_INPUT = frozenset({"special.gammainc", "special.gammaincc", "special.zeta"})


def rows() -> list[_opdb.OpInfo]:
    """The rows whose gradients are checked: deterministic, with float64 (an op with no
    differentiable output in its samples is skipped when it runs)."""
    return [r for r in _opdb.load() if not r.random and "float64" in r.dtypes]


def _lift(x: Any, leaves: list[Tensor], device: Any) -> Any:
    """``x`` with every floating tensor replaced by a leaf slot (the others moved to
    ``device``)."""
    if isinstance(x, Tensor):
        if x.dtype.is_floating_point:
            leaves.append(x.detach().to(device))
            return ("leaf", len(leaves) - 1)
        return x.to(device)
    if type(x) in (list, tuple):
        return type(x)(_lift(v, leaves, device) for v in x)
    return x


def _rebuild(x: Any, leaves: tuple[Tensor, ...]) -> Any:
    if isinstance(x, tuple) and len(x) == 2 and x[0] == "leaf":
        return leaves[x[1]]
    if type(x) in (list, tuple):
        return type(x)(_rebuild(v, leaves) for v in x)
    return x


def _differentiable_outputs(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value] if value.requires_grad else []
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _differentiable_outputs(v)]
    return []


def _floating_outputs(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value] if value.dtype.is_floating_point else []
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _floating_outputs(v)]
    return []


def _function(row: _opdb.OpInfo, sample: _opdb.SampleInput, spec: Any,
              select: Callable[[Any], list[Tensor]]) -> Callable[..., tuple[Tensor, ...]]:
    import torch

    def fn(*inputs: Tensor) -> tuple[Tensor, ...]:
        first = _rebuild(spec[0], inputs)
        if row.gradcheck_wrapper is not None and isinstance(first, Tensor):
            first = row.gradcheck_wrapper(first)
        s = _opdb.SampleInput(first, _rebuild(spec[1], inputs),
                              {k: _rebuild(v, inputs) for k, v in spec[2].items()}, sample.name)
        return tuple(select(_opdb.call(torch, row, s)))

    return fn


def _smooth(fn: Callable[..., tuple[Tensor, ...]], leaves: list[Tensor]) -> bool:
    """Whether finite differences can judge ``fn`` at ``leaves``: finite outputs, and equal
    left and right difference quotients for every input element."""
    import torch

    h = 1e-5
    with torch.no_grad():
        base = [o.detach().clone() for o in fn(*leaves)]
        if not base or any(not bool(torch.isfinite(b).all()) for b in base):
            return False
        try:
            for k, t in enumerate(leaves):
                for j in range(t.numel()):
                    quotients = []
                    for step in (h, -h, h / 100):
                        moved = [x.contiguous().clone() for x in leaves]
                        moved[k].view(-1)[j] += step
                        quotients.append([(o - b) / step for o, b in zip(fn(*moved), base)])
                    # left and right quotients agree (no kink), and a finer step gives
                    # the same quotient (no jump)
                    for right, left, fine in zip(*quotients):
                        if right.shape != left.shape or not (
                                torch.allclose(right, left, rtol=1e-3, atol=1e-3, equal_nan=True)
                                and torch.allclose(right, fine, rtol=1e-2, atol=1e-2,
                                                   equal_nan=True)):
                            return False
        except (RuntimeError, ValueError, IndexError):
            return False
    return True


def gradient_samples(row: _opdb.OpInfo, device: Any
                     ) -> Iterator[tuple[str, Callable[..., Any], Callable[..., Any],
                                         list[Tensor]]]:
    """The small differentiable samples of ``row`` on ``device``: ``(name, fn, fn of every
    floating output, leaves)``. Callers filter warnings (a generator must not hold a
    ``catch_warnings`` across its yields)."""
    import torch

    for sample in _opdb.samples(row, torch, "float64"):
        if (row.name, sample.name) in SKIP:
            continue
        leaves: list[Tensor] = []
        fixed = FIXED_ARGS.get(row.name, ())
        try:
            first = sample.input
            spec = ((first.to(device) if isinstance(first, Tensor) else first)
                    if row.name in FIXED_INPUT else _lift(first, leaves, device),
                    tuple(a if i in fixed else _lift(a, leaves, device)
                          for i, a in enumerate(sample.args)),
                    {k: _lift(v, leaves, device) for k, v in sample.kwargs.items()})
        except (RuntimeError, TypeError):
            continue
        if not leaves or sum(t.numel() for t in leaves) > MAX_ELEMENTS:
            continue
        fn = _function(row, sample, spec, _differentiable_outputs)
        try:
            if not fn(*(t.clone().requires_grad_(True) for t in leaves)):
                continue
        except (RuntimeError, ValueError, TypeError, IndexError):
            continue  # a sample the op refuses (an error sample) says nothing about gradients
        yield sample.name, fn, _function(row, sample, spec, _floating_outputs), leaves


def check_gradients(row: _opdb.OpInfo, device: Any, limit: int = 1) -> int:
    """gradcheck ``row`` on ``device`` for up to ``limit`` samples; the number checked.

    A sample whose check fails counts as a failure only where finite differences can judge
    (away from kinks and jumps); checking smoothness only then keeps the passing case cheap.

    :raises AssertionError: when a gradient is wrong.
    """
    from ...autograd import gradcheck

    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the CPU fallback's, deprecations of sampled ops
        for name, fn, floating_fn, leaves in gradient_samples(row, device):
            if checked >= limit:
                break
            inputs = tuple(t.clone().requires_grad_(True) for t in leaves)
            try:
                gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4)
            except (RuntimeError, NotImplementedError) as exc:
                # no derivative documented in PyTorch either (scatter with reduce=, unique)
                if "derivative for" in str(exc) and "not implemented" in str(exc):
                    continue
                if not _smooth(floating_fn, leaves):
                    continue  # finite differences cannot judge here: try another sample
                raise AssertionError(f"{row.name} [{name}]: {exc}") from exc
            checked += 1
    return checked
