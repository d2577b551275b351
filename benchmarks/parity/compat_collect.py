"""Run the compatibility table (``compat_cases.py``) under whichever ``torch`` this interpreter
imports (Plait or real PyTorch), and pickle what every call form gave.

``python benchmarks/parity/compat_collect.py OUT.pickle [--only SUBSTRING]``. ``compat_compare``
starts this once per library. Per row it records whether the public name resolves (importing
submodules on the way, as ``import torch.x.y`` would) and, when it does, the outcome of the call
form evaluated in a fresh namespace of fixed inputs (``inputs()``): the same pure-Python values
in both libraries, so no random number generator is involved unless a row is marked random.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib
import io
import math
import pathlib
import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import collect  # beside this file: the result encoding the op-database parity uses
import compat_cases

import torch

ROOTS = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "Tensor": None}


def resolve(name: str) -> bool:
    """Whether the public ``name`` (``torch.fft.rfft``, ``Tensor.masked_fill``, ``nn.GRU``)
    exists, importing the submodules on its path the way ``import torch.a.b`` would."""
    head, *parts = name.split(".")
    obj: Any = torch.Tensor if head == "Tensor" else importlib.import_module(ROOTS[head])
    path = ROOTS[head] or ""
    for part in parts:
        path = f"{path}.{part}"
        try:
            obj = getattr(obj, part)
            continue
        except AttributeError:  # perhaps a submodule nobody imported yet
            pass
        except ImportError:  # a lazy attribute whose module is not there
            return False
        if not isinstance(obj, type(math)):
            return False
        try:
            obj = importlib.import_module(path)
        except ImportError:
            return False
    return True


# -- the fixed inputs every call form sees ---------------------------------------------------


def grid(*shape: int, phase: float = 0.3, scale: float = 1.0, shift: float = 0.0,
         dtype: Any = None) -> torch.Tensor:
    """Distinct, deterministic values in [shift - scale, shift + scale] of the given shape.

    Consecutive sines obey a linear recurrence, so a matrix made by ``grid`` has rank 2 at
    most: rows needing a well-posed linear-algebra problem use ``a`` or ``spd``."""
    count = math.prod(shape)
    values = [shift + scale * math.sin(1.7 * k + phase) for k in range(count)]
    # cloned: a fresh tensor that owns its storage, not a view of the flat one
    return torch.tensor(values, dtype=dtype or torch.float32).reshape(shape).clone()


def init(module: Any) -> Any:
    """``module`` with every parameter overwritten by fixed values (by sorted parameter name),
    so modules built by either library compute the same function."""
    with torch.no_grad():
        for k, (_, param) in enumerate(sorted(module.named_parameters())):
            param.copy_(grid(*param.shape, phase=0.5 * k + 0.2, scale=0.5, dtype=param.dtype))
    return module


def within(context: Any, fn: Callable[[], Any]) -> Any:
    """``fn()`` inside ``with context:`` (a call form is one expression)."""
    with context:
        return fn()


def roundtrip(obj: Any) -> Any:
    """``obj`` saved with ``torch.save`` into memory and loaded back with ``torch.load``."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=False)


def opt_step(make: Callable[[list[Any]], Any], steps: int = 3) -> Any:
    """A parameter after ``steps`` steps of the optimizer ``make([param])`` on sum(p**2 + p)."""
    param = torch.tensor([1.0, -2.0, 3.0, -0.5], dtype=torch.float64, requires_grad=True)
    optimizer = make([param])
    for _ in range(steps):
        optimizer.zero_grad()
        (param ** 2 + param).sum().backward()
        optimizer.step()
    return param.detach()


def lrs(make: Callable[[Any], Any], steps: int = 6) -> list[float]:
    """The learning rates a scheduler ``make(optimizer)`` sets over ``steps`` epochs
    (SGD, lr 0.1)."""
    param = torch.zeros(2, requires_grad=True)
    optimizer = torch.optim.SGD([param], lr=0.1, momentum=0.9)
    scheduler = make(optimizer)
    seen = []
    for _ in range(steps):
        optimizer.step()
        if isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
            scheduler.step(1.0)  # a loss that never improves
        else:
            scheduler.step()
        seen.append(round(optimizer.param_groups[0]["lr"], 12))
    return seen


def double_plus_one(t: Any) -> Any:
    """A plain function to trace (``torch.jit.trace`` needs one with a module)."""
    return t * 2 + 1


def square_function() -> Any:
    """A custom ``torch.autograd.Function`` (x**2 with a hand-written backward)."""

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: Any) -> Any:
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (t,) = ctx.saved_tensors
            return 2 * t * grad

    return Square


def inputs(tmp: pathlib.Path) -> dict[str, Any]:
    """A fresh namespace for one call form (rows may modify their inputs in place)."""
    x = grid(3, 4)
    a = grid(3, 3, phase=1.0, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64)
    return {
        "torch": torch, "nn": torch.nn, "F": torch.nn.functional, "math": math, "copy": copy,
        "pickle": pickle, "io": io, "np": importlib.import_module("numpy"), "tmp": str(tmp),
        "grid": grid, "init": init, "within": within, "roundtrip": roundtrip,
        "opt_step": opt_step, "lrs": lrs, "square_function": square_function,
        "double_plus_one": double_plus_one,
        "x": x,                                             # (3, 4) float32 in [-1, 1]
        "y": grid(3, 4, phase=1.1),                         # another (3, 4)
        "w": grid(4, 5, phase=2.0),                         # (4, 5): x @ w
        "v": grid(4, phase=0.9),                            # (4,)
        "p": grid(3, 4, shift=1.5),                         # positive (3, 4)
        "u": grid(3, 4, scale=0.4, shift=0.5),              # in (0, 1)
        "i": torch.tensor([[3, -1, 0, 2], [1, 4, -2, 5], [0, 2, 2, -3]]),  # int64
        "n": torch.tensor([[3, 1, 0, 2], [1, 4, 2, 5], [0, 2, 2, 3]]),     # non-negative int64
        "m": x > 0,                                         # bool (3, 4)
        "idx": torch.tensor([2, 0, 1]),
        "labels": torch.tensor([1, 0, 3]),                  # class indices for (3, 4) logits
        "s": torch.tensor(2.5),                             # 0-d
        "z": torch.tensor([1 + 2j, -0.5 + 1j, 3 - 1j, 0.25j]),  # complex64
        "sig": grid(16, phase=0.2, dtype=torch.float64),    # a signal for the FFTs
        "a": a,                                             # (3, 3) float64, well conditioned
        "spd": a @ a.T + torch.eye(3, dtype=torch.float64),  # symmetric positive definite
        "img": grid(2, 3, 6, 6, phase=0.4),                 # (N, C, H, W)
        "seq": grid(5, 2, 4, phase=0.6),                    # (T, N, F)
        "leaf": grid(3, 4, phase=0.7, dtype=torch.float64).requires_grad_(),
    }


def collect_rows(rows: list[compat_cases.Row]) -> dict[str, dict[str, Any]]:
    """Row id -> {"exists": bool, and when it exists the call's outcome}."""
    records: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="compat-") as tmp:
        for row in rows:
            record: dict[str, Any] = {"exists": resolve(row.name)}
            if record["exists"]:
                namespace = inputs(pathlib.Path(tmp))
                torch.manual_seed(0)
                record.update(collect._outcome(lambda r=row, ns=namespace: eval(r.expr, ns),
                                               False))
            records[row.id] = record
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--only", default="", help="rows whose id contains this text")
    args = parser.parse_args()
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # a row that prints must not garble output
        rows = collect_rows([r for r in compat_cases.rows() if args.only in r.id])
    result = {"version": str(getattr(torch, "__version__", "?")), "rows": rows,
              "seconds": time.perf_counter() - started}
    with open(args.out, "wb") as f:
        pickle.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
