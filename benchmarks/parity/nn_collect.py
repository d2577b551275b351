"""Module, optimizer and scheduler parity: run the same layers, training loops and checkpoint
hand-overs under whichever ``torch`` this interpreter imports, and pickle what came out.

``python benchmarks/parity/nn_collect.py OUT.pickle [--save-dir D] [--load-dir D]``.
Every number comes from numpy with fixed seeds, so both libraries see identical weights,
inputs and targets: a module's parameters and buffers are overwritten through
``load_state_dict`` before its forward, and the backward seeds are fixed weights.
"""

from __future__ import annotations

import argparse
import inspect
import pathlib
import pickle
import re
import sys
import traceback
import warnings
import zlib
from collections import OrderedDict
from typing import Any

import numpy as np
from nn_cases import ERRORS, FUNCTIONS, LOSSES, MODULES

import torch
import torch.nn as nn
import torch.nn.functional as F

OPTIMIZERS: dict[str, str] = {
    "SGD": "torch.optim.SGD(params, lr=0.1)",
    "SGD_momentum_nesterov": "torch.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True, "
                             "weight_decay=0.01)",
    "Adam": "torch.optim.Adam(params, lr=0.05)",
    "Adam_amsgrad": "torch.optim.Adam(params, lr=0.05, amsgrad=True, weight_decay=0.1)",
    "AdamW": "torch.optim.AdamW(params, lr=0.05, weight_decay=0.1)",
    "Adamax": "torch.optim.Adamax(params, lr=0.05)",
    "NAdam": "torch.optim.NAdam(params, lr=0.05)",
    "RAdam": "torch.optim.RAdam(params, lr=0.05)",
    "RMSprop": "torch.optim.RMSprop(params, lr=0.01, momentum=0.5, centered=True)",
    "Adagrad": "torch.optim.Adagrad(params, lr=0.1)",
    "Adadelta": "torch.optim.Adadelta(params, lr=1.0)",
    "ASGD": "torch.optim.ASGD(params, lr=0.05)",
    "Rprop": "torch.optim.Rprop(params, lr=0.05)",
}

SCHEDULERS: dict[str, str] = {
    "StepLR": "torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)",
    "MultiStepLR": "torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[3, 8], gamma=0.3)",
    "ExponentialLR": "torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)",
    "CosineAnnealingLR": "torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)",
    "CosineAnnealingWarmRestarts": "torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, "
                                   "T_0=4, T_mult=2)",
    "LinearLR": "torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.2, total_iters=6)",
    "ConstantLR": "torch.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=4)",
    "PolynomialLR": "torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=8, power=2.0)",
    "LambdaLR": "torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.95 ** e)",
    "OneCycleLR": "torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=20)",
    "CyclicLR": "torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, "
                "step_size_up=4, cycle_momentum=False)",
    "ReduceLROnPlateau": "torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, "
                         "factor=0.5)",
}
STEPS = 20


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def _encode(t: Any) -> Any:
    if isinstance(t, torch.Tensor):
        t = t.detach().cpu()
        if t.dtype == torch.bfloat16:  # numpy has no bfloat16: values via float32 (exact)
            return ("tensor", "bfloat16", tuple(t.shape), t.float().numpy().tolist())
        a = t.numpy()
        return ("tensor", str(a.dtype), a.shape, a.tolist())
    if isinstance(t, (tuple, list)):
        return tuple(_encode(x) for x in t)
    return ("value", repr(t))


def _failure() -> dict[str, Any]:
    exc = sys.exc_info()[1]
    return {"status": "raised", "error": f"{type(exc).__name__}: {exc}",
            "error_type": type(exc).__name__,
            "trace": traceback.format_exc(limit=3)}


def _tensors_of(value: Any) -> list[Any]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors_of(v)]
    return []


def _set_weights(module: Any, rng: np.random.Generator, dtype: Any = torch.float64) -> None:
    state = module.state_dict()
    new = {}
    for key, value in state.items():
        if value.dtype.is_floating_point:
            data = rng.normal(0, 0.5, tuple(value.shape))
            if key.endswith("running_var"):
                data = np.abs(data) + 0.5
            new[key] = torch.tensor(data, dtype=dtype)
        else:
            new[key] = value
    module.load_state_dict(new)


class _Inputs:
    """The input makers of ``nn_cases`` over one seeded generator; remembers the leaves."""

    def __init__(self, rng: np.random.Generator, dtype: Any = torch.float64) -> None:
        self.rng = rng
        self.dtype = dtype
        self.leaves: list[Any] = []

    def _leaf(self, data: np.ndarray) -> Any:
        t = torch.tensor(data, dtype=self.dtype, requires_grad=True)
        self.leaves.append(t)
        return t

    def env(self) -> dict[str, Any]:
        rng, dtype = self.rng, self.dtype

        def R(*shape: int) -> Any:
            return self._leaf(rng.normal(size=shape))

        def RA(*shape: int) -> Any:
            return self._leaf(np.abs(rng.normal(size=shape)) + 0.5)

        def RU(*shape: int, lo: float = 0.05, hi: float = 0.95) -> Any:
            return self._leaf(rng.uniform(lo, hi, size=shape))

        def RT(values: Any) -> Any:
            return self._leaf(np.array(values, dtype=float))

        def N(*shape: int) -> Any:
            return torch.tensor(rng.normal(size=shape), dtype=dtype)

        def U(*shape: int) -> Any:
            return torch.tensor(rng.uniform(0.05, 0.95, size=shape), dtype=dtype)

        def P(*shape: int) -> Any:
            e = np.exp(rng.normal(size=shape))
            return torch.tensor(e / e.sum(-1, keepdims=True), dtype=dtype)

        def S(*shape: int) -> Any:
            return torch.tensor(np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0),
                                dtype=dtype)

        def I(high: int, *shape: int) -> Any:  # noqa: E743
            return torch.tensor(rng.integers(0, high, shape), dtype=torch.int64)

        def B(*shape: int) -> Any:
            return torch.tensor(rng.uniform(size=shape) < 0.3)

        def T(values: Any) -> Any:
            return torch.tensor(values)

        return {"R": R, "RA": RA, "RU": RU, "RT": RT, "N": N, "U": U, "P": P, "S": S, "I": I,
                "B": B, "T": T, "DT": dtype, "torch": torch, "nn": nn, "F": F,
                "OrderedDict": OrderedDict}


def run_case(name: str, spec: tuple[str | None, str, str], dtype: Any = torch.float64
             ) -> dict[str, Any]:
    """Build the module (weights from the case's generator), call it, backprop fixed seeds.

    Records the output, the gradients of every leaf input and parameter, every buffer and
    parameter after the forward (running statistics, max_norm renormalisation), the
    state-dict layout and the module's repr.
    """
    ctor, call, mode = spec
    rng = _rng(name)
    inputs = _Inputs(rng, dtype)
    env = inputs.env()
    module = None
    try:
        if ctor is not None:
            module = eval(ctor, env).to(dtype)
    except Exception:
        return {**_failure(), "status": "unavailable"}
    try:
        if module is not None:
            if "Lazy" in ctor:
                # Lazy modules take their shapes from a first call; then seed the weights.
                with torch.no_grad():
                    eval(call, {**_Inputs(_rng("lazy:" + name), dtype).env(), "m": module})
            _set_weights(module, rng, dtype)
            module.train(mode == "train")
            env["m"] = module
        out = eval(call, env)
        outs = [o for o in _tensors_of(out) if o.dtype.is_floating_point and o.requires_grad]
        if outs:
            total = sum((o * torch.tensor(rng.normal(size=tuple(o.shape)), dtype=o.dtype)).sum()
                        for o in outs)
            total.backward()
        grads = {f"input{i}": x.grad for i, x in enumerate(inputs.leaves) if x.grad is not None}
        record: dict[str, Any] = {"status": "ok", "output": _encode(out)}
        if module is not None:
            grads.update({k: p.grad for k, p in module.named_parameters()
                          if p.grad is not None})
            record["buffers"] = {k: _encode(b) for k, b in module.named_buffers()}
            record["params_after"] = {k: _encode(p) for k, p in module.named_parameters()}
            record["repr"] = repr(module)
            record["state_dict"] = ("value", repr([(k, tuple(v.shape))
                                                   for k, v in module.state_dict().items()]))
        record["grads"] = {k: _encode(v) for k, v in grads.items()}
        return record
    except Exception:
        return _failure()


def run_gradgrad(name: str, spec: tuple[str | None, str, str]) -> dict[str, Any]:
    """Double backward (as a gradient penalty uses it): the first gradients of the case's
    weighted output sum with ``create_graph=True``, then the gradients of a fixed weighted
    sum of those with respect to the same inputs and parameters (unused ones read as 0)."""
    ctor, call, mode = spec
    rng = _rng(name)
    inputs = _Inputs(rng)
    env = inputs.env()
    module = None
    try:
        if ctor is not None:
            module = eval(ctor, env).double()
    except Exception:
        return {**_failure(), "status": "unavailable"}
    try:
        if module is not None:
            if "Lazy" in ctor:
                with torch.no_grad():
                    eval(call, {**_Inputs(_rng("lazy:" + name)).env(), "m": module})
            _set_weights(module, rng)
            module.train(mode == "train")
            env["m"] = module
        out = eval(call, env)
        outs = [o for o in _tensors_of(out) if o.dtype.is_floating_point and o.requires_grad]
        named = [(f"input{i}", x) for i, x in enumerate(inputs.leaves)]
        if module is not None:
            named += [(k, p) for k, p in module.named_parameters() if p.requires_grad]
        if not outs or not named:
            return {"status": "ok", "output": ("value", "no gradient"), "grads": {}}
        total = sum((o * torch.tensor(rng.normal(size=tuple(o.shape)))).sum() for o in outs)
        targets = [t for _, t in named]
        firsts = torch.autograd.grad(total, targets, create_graph=True, allow_unused=True)
        seeds = [torch.tensor(rng.normal(size=tuple(t.shape))) for t in targets]
        second = None
        for g, seed in zip(firsts, seeds):
            if g is not None and g.requires_grad:
                term = (g * seed).sum()
                second = term if second is None else second + term
        seconds = (torch.autograd.grad(second, targets, allow_unused=True)
                   if second is not None else [None] * len(targets))

        def dense(g: Any, t: Any) -> Any:
            return torch.zeros_like(t) if g is None else g

        return {"status": "ok",
                "output": tuple(_encode(dense(g, t).detach()) for g, t in zip(firsts, targets)),
                "grads": {k: _encode(dense(g, t)) for (k, t), g in zip(named, seconds)}}
    except Exception:
        return _failure()


def _default(value: Any) -> str:
    if value is inspect.Parameter.empty:
        return "-"
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__  # functions as defaults (activation=F.relu): their name
    return repr(value)


def signature(obj: Any) -> str | None:
    """Parameter names, kinds and defaults (not annotations) of ``obj``; None for builtins
    without a signature."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return repr([(p.name, p.kind.name, _default(p.default)) for p in sig.parameters.values()])


def signatures() -> dict[str, str | None]:
    """``nn.X.__init__``, ``nn.X.forward`` and ``F.f`` of every class and function the cases
    call."""
    exprs = [e for table in (MODULES, LOSSES, FUNCTIONS, ERRORS) for case in table.values()
             for e in case[:2] if e]
    out: dict[str, str | None] = {}
    for name in sorted({m for e in exprs for m in re.findall(r"\bnn\.([A-Z]\w*)\(", e)}):
        cls = getattr(nn, name, None)
        for method in ("__init__", "forward"):
            if cls is None:
                out[f"nn.{name}.{method}"] = "missing"
            elif hasattr(cls, method):
                out[f"nn.{name}.{method}"] = signature(getattr(cls, method))
    for name in sorted({f for e in exprs for f in re.findall(r"\bF\.(\w+)\(", e)}):
        fn = getattr(F, name, None)
        out[f"F.{name}"] = signature(fn) if fn is not None else "missing"
    return out


def _problem(name: str) -> tuple[list[Any], Any]:
    """Parameters and a loss closure: a small least-squares fit with a non-quadratic term."""
    rng = _rng("problem:" + name)
    w = torch.tensor(rng.normal(size=(3, 4)), dtype=torch.float64, requires_grad=True)
    b = torch.tensor(rng.normal(size=(4,)), dtype=torch.float64, requires_grad=True)
    x = torch.tensor(rng.normal(size=(8, 3)), dtype=torch.float64)
    y = torch.tensor(rng.normal(size=(8, 4)), dtype=torch.float64)

    def loss_fn() -> Any:
        pred = x @ w + b
        return ((pred - y) ** 2).mean() + 0.1 * (w**4).sum() / 12

    return [w, b], loss_fn


def _train(opt: Any, sched: Any, params: list[Any], loss_fn: Any, steps: int,
           record: list[Any]) -> None:
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        if sched is not None:
            if type(sched).__name__ == "ReduceLROnPlateau":
                sched.step(loss.item())
            else:
                sched.step()
        record.append({"params": [_encode(p) for p in params],
                       "lr": [g["lr"] for g in opt.param_groups]})


def run_optimizer(name: str, expr: str, sched_expr: str | None = None,
                  save: pathlib.Path | None = None) -> dict[str, Any]:
    params, loss_fn = _problem(name)
    env = {"torch": torch, "params": params}
    try:
        opt = eval(expr, env)
        sched = eval(sched_expr, {**env, "opt": opt}) if sched_expr else None
    except Exception:
        return {**_failure(), "status": "unavailable"}
    try:
        record: list[Any] = []
        _train(opt, sched, params, loss_fn, STEPS // 2, record)
        if save is not None:
            torch.save({"params": [p.detach() for p in params], "optimizer": opt.state_dict(),
                        "scheduler": sched.state_dict() if sched is not None else None},
                       save)
        _train(opt, sched, params, loss_fn, STEPS - STEPS // 2, record)
        return {"status": "ok", "trajectory": record}
    except Exception:
        return _failure()


def resume(name: str, expr: str, sched_expr: str | None, path: pathlib.Path) -> dict[str, Any]:
    """Load the other library's mid-training checkpoint and train the second half."""
    params, loss_fn = _problem(name)
    env = {"torch": torch, "params": params}
    try:
        opt = eval(expr, env)
        sched = eval(sched_expr, {**env, "opt": opt}) if sched_expr else None
        state = torch.load(path, weights_only=True)
        with torch.no_grad():
            for p, saved in zip(params, state["params"]):
                p.copy_(saved)
        opt.load_state_dict(state["optimizer"])
        if sched is not None:
            sched.load_state_dict(state["scheduler"])
        record: list[Any] = []
        _train(opt, sched, params, loss_fn, STEPS - STEPS // 2, record)
        return {"status": "ok", "trajectory": record}
    except Exception:
        return _failure()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--save-dir", type=pathlib.Path)
    parser.add_argument("--load-dir", type=pathlib.Path)
    parser.add_argument("--only", metavar="REGEX",
                        help="run only the module/loss/function cases whose name matches "
                             "(and no optimizers)")
    args = parser.parse_args()
    torch.manual_seed(0)
    warnings.simplefilter("ignore")  # deprecation and shape warnings are not compared
    runs = {name: (expr, None) for name, expr in OPTIMIZERS.items()}
    runs.update({f"SGD+{name}": (OPTIMIZERS["SGD_momentum_nesterov"], sexpr)
                 for name, sexpr in SCHEDULERS.items()})
    result: dict[str, Any] = {"modules": {}, "losses": {}, "functions": {}, "optimizers": {},
                              "resumed": {}}
    if args.load_dir is None or args.save_dir is not None:
        def wanted(name: str) -> bool:
            return args.only is None or re.search(args.only, name) is not None

        for kind, cases in (("modules", MODULES), ("losses", LOSSES), ("functions", FUNCTIONS)):
            result[kind] = {n: run_case(n, s) for n, s in cases.items() if wanted(n)}
            # float32 too: the same numbers, looser tolerance; catches dtype promotion slips
            result[kind + "_f32"] = {n: run_case(n, s, torch.float32)
                                     for n, s in cases.items() if wanted(n)}
        result["errors"] = {n: run_case(n, s) for n, s in ERRORS.items() if wanted(n)}
        result["signatures"] = signatures()
        for kind, cases in (("modules", MODULES), ("losses", LOSSES), ("functions", FUNCTIONS)):
            result[kind + "_gg"] = {n: run_gradgrad(n, s) for n, s in cases.items()
                                    if wanted(n) and not n.startswith("large_")}
        for name, (expr, sexpr) in runs.items() if args.only is None else ():
            save = args.save_dir / f"{name}.pt" if args.save_dir else None
            result["optimizers"][name] = run_optimizer(name, expr, sexpr, save)
    if args.load_dir is not None:
        for name, (expr, sexpr) in runs.items():
            path = args.load_dir / f"{name}.pt"
            if path.exists():
                result["resumed"][name] = resume(name, expr, sexpr, path)
    with open(args.out, "wb") as f:
        pickle.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
