"""``torch._dynamo.testing``: backends and helpers tests use to watch graph capture."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

__all__ = ["CompileCounter", "CompileCounterWithBackend", "EagerAndRecordGraphs", "rand_strided",
           "reset_rng_state", "same"]


class CompileCounter:
    """A backend that counts graphs (``frame_count``) and their ops (``op_count``) and runs
    each captured graph as it is."""

    def __init__(self) -> None:
        self.frame_count = 0
        self.op_count = 0

    def __call__(self, gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
        self.frame_count += 1
        self.op_count += sum(1 for n in gm.graph.nodes
                             if n.op in ("call_function", "call_method", "call_module"))
        return gm.forward

    def clear(self) -> None:
        """Back to zero."""
        self.frame_count = 0
        self.op_count = 0


class CompileCounterWithBackend(CompileCounter):
    """:class:`CompileCounter` that compiles with ``backend`` (a name or callable) and keeps
    the graphs in ``graphs``."""

    def __init__(self, backend: str | Callable[..., Any]) -> None:
        super().__init__()
        from torch._dynamo.backends.registry import resolve_backend

        self.backend = resolve_backend(backend)
        self.graphs: list[Any] = []

    def __call__(self, gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
        super().__call__(gm, example_inputs)
        self.graphs.append(gm)
        return self.backend(gm, example_inputs)


class EagerAndRecordGraphs:
    """A backend that keeps each captured GraphModule in ``graphs`` and runs it as it is."""

    def __init__(self) -> None:
        self.graphs: list[Any] = []

    def __call__(self, gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
        self.graphs.append(gm)
        return gm.forward


def same(ref: Any, res: Any, tol: float = 1e-4, equal_nan: bool = False) -> bool:
    """Whether two results (tensors, numbers, or lists/tuples/dicts of them) match."""
    if isinstance(ref, (list, tuple)):
        return (isinstance(res, (list, tuple)) and len(ref) == len(res)
                and all(same(a, b, tol, equal_nan) for a, b in zip(ref, res)))
    if isinstance(ref, dict):
        return (isinstance(res, dict) and ref.keys() == res.keys()
                and all(same(ref[k], res[k], tol, equal_nan) for k in ref))
    if isinstance(ref, torch.Tensor):
        if not isinstance(res, torch.Tensor) or ref.shape != res.shape:
            return False
        if ref.dtype.is_floating_point or ref.dtype.is_complex:
            return bool(torch.allclose(ref, res, rtol=tol, atol=tol, equal_nan=equal_nan))
        return bool(torch.equal(ref, res))
    if isinstance(ref, float):
        return abs(ref - res) <= tol * max(1.0, abs(ref))
    return ref == res


def rand_strided(size: Any, stride: Any, dtype: torch.dtype = torch.float32,
                 device: str | torch.device = "cpu", extra_size: int = 0) -> torch.Tensor:
    """A tensor of ``size`` and ``stride`` over a random buffer just large enough (plus
    ``extra_size`` elements): random normal floats, random small ints, random bools."""
    needed = 1 + sum((n - 1) * s for n, s in zip(size, stride)) + extra_size \
        if all(n > 0 for n in size) else 0
    if dtype.is_floating_point or dtype.is_complex:
        buffer = torch.randn(needed, dtype=dtype, device=device)
    elif dtype is torch.bool:
        buffer = torch.randint(0, 2, (needed,), device=device).to(torch.bool)
    else:
        buffer = torch.randint(0, 10, (needed,), dtype=dtype, device=device)
    return torch.as_strided(buffer, tuple(size), tuple(stride))


def reset_rng_state(use_xla: bool = False) -> None:
    """Seed torch, ``random`` and numpy with 1337, as PyTorch's tests do between runs."""
    import random

    import numpy as np

    torch.manual_seed(1337)
    random.seed(1337)
    np.random.seed(1337)
