"""Run the op database, the printing samples and a checkpoint round trip under whichever
``torch`` this interpreter imports (Plait or real PyTorch), and pickle what came out.

``python benchmarks/parity/collect.py OUT.pickle [--save-checkpoint F] [--load-checkpoint F]``.
``run.py`` starts this once per library and compares the two pickles. Only PyTorch's public API
and numpy are used here, and the op database is imported by file path (real PyTorch has no
``torch.testing._opdb``), so both libraries run exactly the same code and samples.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import pickle
import sys
import time
import traceback
import warnings
from typing import Any

import layout_collect  # beside this file (the meta and fake-tensor sections)
import numpy as np

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
OPDB_DIR = ROOT / "packages" / "core" / "src" / "torch" / "testing" / "_opdb"
REPR_LIMIT = 400
SECTIONS = ("ops", "grads", "printing", "meta", "fake")

# Printing parity: expressions evaluated under both libraries, and the attributes each needs
# (missing ones make the sample "not available" rather than a mismatch).
PRINTING: list[tuple[str, tuple[str, ...]]] = [
    ("torch.tensor([1, 2, 3])", ()),
    ("torch.tensor([[1, -2], [300, 4]])", ()),
    ("torch.tensor([1.5, -2.25, 3.0])", ()),
    ("torch.tensor([0.1, 0.25, 100.0])", ()),
    ("torch.tensor([1e-5, 1.0, 1e5])", ()),
    ("torch.tensor([1e10, 1.0])", ()),
    ("torch.tensor([123456789.0, 1.0])", ()),
    ("torch.tensor([1e-10, 2e-10])", ()),
    ("torch.tensor([float('nan'), float('inf'), -float('inf'), 1.0])", ()),
    ("torch.tensor([True, False])", ()),
    ("torch.tensor([])", ()),
    ("torch.zeros(0, 3)", ()),
    ("torch.tensor(3.5)", ()),
    ("torch.tensor(7)", ()),
    ("torch.tensor(True)", ()),
    ("torch.ones(2000)", ()),
    ("torch.ones(40, 40)", ()),
    ("torch.full((3, 1001), 2.5)", ()),
    ("torch.tensor([1., 2.], dtype=torch.float16)", ()),
    ("torch.tensor([1.5, 2.], dtype=torch.bfloat16)", ()),
    ("torch.tensor([1.25, 2.], dtype=torch.float64)", ()),
    ("torch.tensor([1, 2], dtype=torch.int8)", ()),
    ("torch.tensor([1, 200], dtype=torch.uint8)", ()),
    ("torch.tensor([1, 2], dtype=torch.int32)", ()),
    ("torch.tensor([1, 2], dtype=torch.int16)", ()),
    ("torch.tensor([1., 2.], dtype=torch.float64).reshape(2, 1)", ()),
    ("torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)", ()),
    ("torch.zeros(2, 3, device='meta')", ()),
    ("torch.tensor([1+2j, -0.5j])", ()),
    ("torch.arange(12.).reshape(3, 4)[:, 1::2]", ("arange",)),
    ("torch.arange(2000).reshape(40, 50)", ("arange",)),
    ("torch.arange(-5., 5.) / 3", ("arange",)),
    ("torch.linspace(0, 1, 7)", ("linspace",)),
    ("torch.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))",
     ("sparse_coo_tensor",)),
    ("torch.sparse_coo_tensor([[0, 2]], [[1.5, 2.0], [3.0, 4.0]], (3, 2), dtype=torch.float64)",
     ("sparse_coo_tensor",)),
    ("torch.zeros(2, 3).to_sparse()", ()),
]


def load_opdb() -> Any:
    """The op database package, imported from its folder as the standalone package
    ``plait_opdb``."""
    spec = importlib.util.spec_from_file_location(
        "plait_opdb", OPDB_DIR / "__init__.py", submodule_search_locations=[str(OPDB_DIR)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["plait_opdb"] = module
    spec.loader.exec_module(module)
    return module


def _short(text: str) -> str:
    return text if len(text) <= REPR_LIMIT else text[: REPR_LIMIT - 3] + "..."


def encode(value: Any, strides: bool) -> Any:
    """A library-free description of a result: nested containers of leaves."""
    if isinstance(value, torch.Tensor):
        # PyTorch's ihfft and some gradients are lazily conjugated views: numpy() needs them
        # resolved (values unchanged)
        t = value.detach().resolve_conj()
        if t.is_sparse:  # a sparse gradient (sparse.mm's): compared as its dense values
            t = t.to_dense()
        record = {"kind": "tensor", "dtype": str(t.dtype).removeprefix("torch."),
                  "shape": tuple(t.shape), "device": t.device.type}
        if strides:
            record["stride"] = tuple(t.stride())
        if t.device.type != "meta":
            if getattr(t, "_is_zerotensor", lambda: False)():
                t = torch.zeros_like(t)  # PyTorch's symbolic zero gradients have no storage
            host = t.cpu()
            if host.dtype == torch.bfloat16:
                host = host.float()
            arr = np.array(host.numpy(), copy=True)
            record["values"] = (arr.dtype.str, arr.shape, arr.tolist())
        return record
    if isinstance(value, (tuple, list)) and not isinstance(value, torch.Size):
        return {"kind": type(value).__name__ if type(value) in (tuple, list) else "tuple",
                "items": [encode(x, strides) for x in value]}
    if isinstance(value, dict):
        return {"kind": "dict", "items": {str(k): encode(v, strides) for k, v in value.items()}}
    if isinstance(value, torch.Size):
        return {"kind": "scalar", "type": "Size", "value": tuple(value)}
    if isinstance(value, torch.dtype):
        return {"kind": "scalar", "type": "dtype", "value": str(value)}
    if isinstance(value, (bool, int, float, complex)) or value is None:
        return {"kind": "scalar", "type": type(value).__name__, "value": value}
    return {"kind": "other", "type": type(value).__name__, "repr": _short(repr(value))}


def _outcome(fn: Any, strides: bool) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = fn()
        except Exception as exc:  # recorded: both libraries raising alike is a pass
            return {"status": "raised", "type": type(exc).__name__,
                    "category": _category(exc), "message": _short(str(exc))}
        try:
            return {"status": "ok", "result": encode(result, strides),
                    "repr": _short(repr(result))}
        except Exception as exc:  # a result that cannot even be read back is a failure
            return {"status": "unreadable", "type": type(exc).__name__,
                    "category": _category(exc), "message": _short(str(exc))}


def _category(exc: BaseException) -> str:
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return "Exception"


def collect_ops(opdb: Any) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Every sample of every row for every dtype: (row id, dtype, sample index) -> outcome."""
    records: dict[tuple[str, str, int], dict[str, Any]] = {}
    seen: dict[str, int] = {}
    for row in opdb.load():
        seen[row.name] = seen.get(row.name, 0) + 1
        row_id = row.name if seen[row.name] == 1 else f"{row.name}#{seen[row.name]}"
        for dtype in row.dtypes:
            try:
                samples = list(opdb.samples(row, torch, dtype))
            except Exception as exc:  # the sample maker failed under this library
                records[(row_id, dtype, -1)] = {
                    "status": "raised", "type": type(exc).__name__, "category": _category(exc),
                    "message": _short(f"making the samples: {exc}"), "name": "<samples>"}
                continue
            for i, sample in enumerate(samples):
                if row.random:
                    torch.manual_seed(0)
                out = _outcome(lambda s=sample, r=row: opdb.call(torch, r, s), row.view)
                out["name"] = sample.name
                records[(row_id, dtype, i)] = out
    return records


def _lift(x: Any, leaves: list[Any]) -> Any:
    """Floating and complex tensors become fresh leaves that require grad (contiguous
    copies)."""
    if isinstance(x, torch.Tensor):
        if (x.dtype.is_floating_point or x.dtype.is_complex) and x.device.type != "meta":
            leaf = x.detach().clone().requires_grad_(True)
            leaves.append(leaf)
            return leaf
        return x
    if isinstance(x, (list, tuple)) and not isinstance(x, torch.Size):
        return type(x)(_lift(v, leaves) for v in x) if type(x) in (list, tuple) else x
    return x


def _differentiable_outputs(value: Any) -> list[Any]:
    if isinstance(value, torch.Tensor):
        return [value] if value.requires_grad else []
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _differentiable_outputs(v)]
    return []


def _weight(t: Any) -> Any:
    """Fixed, element-varying cotangent weights, the same in both libraries."""
    n = max(t.numel(), 1)
    values = np.linspace(0.5, 1.5, n)[: t.numel()].reshape(tuple(t.shape))
    return torch.tensor(values.tolist(), dtype=t.dtype).reshape(t.shape)


def grad_of(opdb: Any, row: Any, sample: Any) -> tuple[Any, ...]:
    """Gradients of a weighted sum of the op's floating outputs with respect to every floating
    tensor argument of the sample."""
    leaves: list[Any] = []
    lifted = opdb.SampleInput(_lift(sample.input, leaves),
                              tuple(_lift(a, leaves) for a in sample.args),
                              {k: _lift(v, leaves) for k, v in sample.kwargs.items()},
                              sample.name)
    outs = _differentiable_outputs(opdb.call(torch, row, lifted))
    if not leaves or not outs:
        raise RuntimeError("no differentiable input or output")
    # a complex output is weighted as its (real, imaginary) pairs: the sum stays real
    outs = [torch.view_as_real(o.resolve_conj()) if o.is_complex() else o for o in outs]
    total = sum((o * _weight(o)).sum() for o in outs)
    return torch.autograd.grad(total, leaves, allow_unused=True)


GRAD_DTYPES = ("float64",)
# Samples whose gradient PyTorch 2.13 itself cannot compute (its backward raises on a valid
# forward): nothing to compare against. Listed in the report.
GRAD_NOT_COMPARABLE = {
    ("narrow_copy", "negative start"): "PyTorch's backward raises a shape mismatch for a "
    "negative start",
    ("scatter", "larger src"): "PyTorch's backward rejects the gradient of a src larger "
    "than the index",
    ("index_fill", "tensor value negative"): "PyTorch's backward raises 'INDICES element is "
    "out of DATA bounds' for a negative index",
    **{("vander", name): "PyTorch 2.13's backward of vander raises 'one of the variables needed "
       "for gradient computation has been modified by an inplace operation'"
       for name in ("square", "N", "increasing")},
}


def collect_grads(opdb: Any) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Gradients for every non-random row's float64 samples (both raising counts as a match,
    so ops that are not differentiable in PyTorch must not be in Plait either)."""
    records: dict[tuple[str, str, int], dict[str, Any]] = {}
    seen: dict[str, int] = {}
    for row in opdb.load():
        seen[row.name] = seen.get(row.name, 0) + 1
        row_id = row.name if seen[row.name] == 1 else f"{row.name}#{seen[row.name]}"
        if row.random:
            continue
        for dtype in row.dtypes:
            if dtype not in GRAD_DTYPES:
                continue
            try:
                samples = list(opdb.samples(row, torch, dtype))
            except Exception:  # the forward records already report this
                continue
            for i, sample in enumerate(samples):
                if (row.name, sample.name) in GRAD_NOT_COMPARABLE:
                    continue
                out = _outcome(lambda s=sample, r=row: grad_of(opdb, r, s), False)
                out["name"] = sample.name
                records[(row_id, dtype, i)] = out
    return records


def collect_printing() -> dict[str, dict[str, Any]]:
    out = {}
    for expr, needs in PRINTING:
        if any(not hasattr(torch, name) for name in needs):
            out[expr] = {"status": "unavailable"}
            continue
        try:
            out[expr] = {"status": "ok", "repr": repr(eval(expr, {"torch": torch}))}
        except Exception as exc:  # recorded and reported
            out[expr] = {"status": "raised", "type": type(exc).__name__,
                         "message": _short(str(exc))}
    return out


def checkpoint_contents() -> dict[str, Any]:
    """What each library saves: every common dtype, a 0-d tensor and a strided view."""
    base = torch.tensor([[1.5, -2.0, 3.25], [4.0, 5.5, -6.75]])
    return {
        "float32": base,
        "float64": base.to(torch.float64),
        "float16": base.to(torch.float16),
        "bfloat16": base.to(torch.bfloat16),
        "int64": torch.tensor([1, -2, 3]),
        "int32": torch.tensor([7, 8], dtype=torch.int32),
        "uint8": torch.tensor([0, 255], dtype=torch.uint8),
        "bool": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5),
        "column": base[:, 1],
        "nested": {"step": 3, "list": [torch.tensor([1.0, 2.0])]},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--library", default="?", help="a label for the report")
    parser.add_argument("--checkpoint-only", action="store_true",
                        help="skip the op database and printing (every section)")
    parser.add_argument("--save-checkpoint", type=pathlib.Path)
    parser.add_argument("--load-checkpoint", type=pathlib.Path)
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"comma-separated op-database sections to run ({', '.join(SECTIONS)})")
    args = parser.parse_args()
    sections = tuple(args.sections.split(",")) if args.sections else ()
    started = time.perf_counter()
    result: dict[str, Any] = {"library": args.library,
                              "version": str(getattr(torch, "__version__", "?"))}
    if not args.checkpoint_only:
        opdb = load_opdb()
        if "ops" in sections:
            result["ops"] = collect_ops(opdb)
        if "grads" in sections:
            result["grads"] = collect_grads(opdb)
        if "printing" in sections:
            result["printing"] = collect_printing()
        # last: a library's fake-tensor mode left in a bad state cannot spoil the sections above
        result.update(layout_collect.collect_layouts(
            opdb, tuple(s for s in ("meta", "fake") if s in sections)))
    checkpoint: dict[str, Any] = {"expected": encode(checkpoint_contents(), True)}
    save, load = getattr(torch, "save", None), getattr(torch, "load", None)
    if save is None or load is None:
        checkpoint["status"] = "unavailable"
    else:
        checkpoint["status"] = "ok"
        if args.save_checkpoint:
            try:
                save(checkpoint_contents(), str(args.save_checkpoint))
            except Exception:  # reported as a failure of this library's save
                checkpoint["save_error"] = _short(traceback.format_exc(limit=3))
        if args.load_checkpoint and args.load_checkpoint.exists():
            try:
                loaded = load(str(args.load_checkpoint))
                checkpoint["loaded"] = encode(loaded, True)
            except Exception:  # reported as a failure of this library's load
                checkpoint["load_error"] = _short(traceback.format_exc(limit=3))
    result["checkpoint"] = checkpoint
    result["seconds"] = time.perf_counter() - started
    with open(args.out, "wb") as f:
        pickle.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
