"""Module, optimizer and scheduler parity: run the same layers, training loops and checkpoint
hand-overs under whichever ``torch`` this interpreter imports, and pickle what came out.

``python benchmarks/parity/nn_collect.py OUT.pickle [--save-dir D] [--load-dir D]``.
Every number comes from numpy with fixed seeds, so both libraries see identical weights,
inputs and targets: a module's parameters and buffers are overwritten through
``load_state_dict`` before its forward, and the backward seeds are fixed weights.
"""

from __future__ import annotations

import argparse
import pathlib
import pickle
import sys
import traceback
import zlib
from typing import Any

import numpy as np

import torch
import torch.nn as nn

# name -> (constructor, input shapes, integer-input spec or None, mode)
# Inputs are float64 normals unless the spec says ("int", high) for class indices/tokens.
MODULES: dict[str, tuple[str, list[Any], str]] = {
    "Linear": ("nn.Linear(5, 3)", [(4, 5)], "train"),
    "Bilinear": ("nn.Bilinear(3, 4, 2)", [(5, 3), (5, 4)], "train"),
    "Conv1d": ("nn.Conv1d(2, 3, 3, padding=1)", [(2, 2, 7)], "train"),
    "Conv2d": ("nn.Conv2d(2, 4, 3, stride=2, padding=1)", [(2, 2, 7, 6)], "train"),
    "Conv2d_same_reflect": ("nn.Conv2d(2, 3, 3, padding='same', padding_mode='reflect')",
                            [(1, 2, 5, 5)], "train"),
    "Conv2d_groups_dilation": ("nn.Conv2d(4, 4, 3, groups=2, dilation=2)", [(1, 4, 7, 7)],
                               "train"),
    "Conv3d": ("nn.Conv3d(1, 2, 2)", [(1, 1, 3, 4, 4)], "train"),
    "ConvTranspose2d": ("nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)",
                        [(1, 2, 4, 4)], "train"),
    "MaxPool2d": ("nn.MaxPool2d(3, stride=2, padding=1)", [(2, 3, 7, 7)], "train"),
    "MaxPool2d_ceil": ("nn.MaxPool2d(2, ceil_mode=True)", [(1, 2, 5, 5)], "train"),
    "AvgPool2d": ("nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)",
                  [(2, 3, 7, 7)], "train"),
    "AdaptiveAvgPool2d": ("nn.AdaptiveAvgPool2d((3, 2))", [(2, 3, 7, 5)], "train"),
    "BatchNorm1d_train": ("nn.BatchNorm1d(4)", [(6, 4)], "train"),
    "BatchNorm2d_train": ("nn.BatchNorm2d(3)", [(4, 3, 5, 5)], "train"),
    "BatchNorm2d_eval": ("nn.BatchNorm2d(3)", [(4, 3, 5, 5)], "eval"),
    "LayerNorm": ("nn.LayerNorm([4, 5])", [(3, 4, 5)], "train"),
    "GroupNorm": ("nn.GroupNorm(2, 4)", [(3, 4, 5)], "train"),
    "ReLU": ("nn.ReLU()", [(4, 6)], "train"),
    "LeakyReLU": ("nn.LeakyReLU(0.2)", [(4, 6)], "train"),
    "GELU": ("nn.GELU()", [(4, 6)], "train"),
    "GELU_tanh": ("nn.GELU(approximate='tanh')", [(4, 6)], "train"),
    "SiLU": ("nn.SiLU()", [(4, 6)], "train"),
    "ELU": ("nn.ELU()", [(4, 6)], "train"),
    "Softplus": ("nn.Softplus(beta=2.0)", [(4, 6)], "train"),
    "Softmax": ("nn.Softmax(dim=1)", [(4, 6)], "train"),
    "LogSoftmax": ("nn.LogSoftmax(dim=-1)", [(4, 6)], "train"),
    "Tanh": ("nn.Tanh()", [(4, 6)], "train"),
    "Sigmoid": ("nn.Sigmoid()", [(4, 6)], "train"),
    "Hardswish": ("nn.Hardswish()", [(4, 6)], "train"),
    "Mish": ("nn.Mish()", [(4, 6)], "train"),
    "PReLU": ("nn.PReLU(3)", [(2, 3, 4)], "train"),
    "Flatten": ("nn.Flatten()", [(2, 3, 4)], "train"),
    "Embedding": ("nn.Embedding(10, 4, padding_idx=0)", [("int", (3, 5), 10)], "train"),
    "Sequential_MLP": ("nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))",
                       [(5, 6)], "train"),
    "CNN": ("nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), "
            "nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 5))", [(3, 1, 6, 6)], "train"),
    "LSTM": ("nn.LSTM(4, 5, num_layers=2, batch_first=True)", [(2, 6, 4)], "train"),
    "LSTM_bidirectional": ("nn.LSTM(3, 4, bidirectional=True)", [(5, 2, 3)], "train"),
    "GRU": ("nn.GRU(4, 5)", [(6, 2, 4)], "train"),
    "RNN": ("nn.RNN(3, 4, nonlinearity='relu')", [(5, 2, 3)], "train"),
    "MultiheadAttention": ("nn.MultiheadAttention(8, 2, batch_first=True)",
                           [(2, 5, 8), (2, 5, 8), (2, 5, 8)], "train"),
    "TransformerEncoderLayer": ("nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, "
                                "dropout=0.0, batch_first=True)", [(2, 5, 8)], "train"),
}

# Losses: (constructor, input shape, target spec, needs grad of input)
LOSSES: dict[str, tuple[str, tuple[int, ...], Any]] = {
    "MSELoss": ("nn.MSELoss()", (4, 3), ("float", (4, 3))),
    "L1Loss": ("nn.L1Loss(reduction='sum')", (4, 3), ("float", (4, 3))),
    "SmoothL1Loss": ("nn.SmoothL1Loss(beta=0.5)", (4, 3), ("float", (4, 3))),
    "HuberLoss": ("nn.HuberLoss(delta=0.7)", (4, 3), ("float", (4, 3))),
    "CrossEntropyLoss": ("nn.CrossEntropyLoss()", (5, 4), ("int", (5,), 4)),
    "CrossEntropyLoss_smoothing": ("nn.CrossEntropyLoss(label_smoothing=0.1)", (5, 4),
                                   ("int", (5,), 4)),
    "NLLLoss": ("nn.NLLLoss(reduction='sum')", (5, 4), ("int", (5,), 4)),
    "BCEWithLogitsLoss": ("nn.BCEWithLogitsLoss()", (4, 3), ("prob", (4, 3))),
    "KLDivLoss": ("nn.KLDivLoss(reduction='batchmean')", (4, 3), ("float", (4, 3))),
}

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
        a = t.detach().cpu().numpy()
        return ("tensor", str(a.dtype), a.shape, a.tolist())
    if isinstance(t, (tuple, list)):
        return tuple(_encode(x) for x in t)
    return ("value", repr(t))


def _failure() -> dict[str, Any]:
    exc = sys.exc_info()[1]
    return {"status": "raised", "error": f"{type(exc).__name__}: {exc}",
            "trace": traceback.format_exc(limit=3)}


def _tensors_of(value: Any) -> list[Any]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors_of(v)]
    return []


def _set_weights(module: Any, rng: np.random.Generator) -> None:
    state = module.state_dict()
    new = {}
    for key, value in state.items():
        if value.dtype.is_floating_point:
            data = rng.normal(0, 0.5, tuple(value.shape))
            if key.endswith("running_var"):
                data = np.abs(data) + 0.5
            new[key] = torch.tensor(data, dtype=torch.float64)
        else:
            new[key] = value
    module.load_state_dict(new)


def run_module(name: str, spec: tuple[str, list[Any], str]) -> dict[str, Any]:
    expr, shapes, mode = spec
    rng = _rng(name)
    try:
        module = eval(expr, {"nn": nn, "torch": torch}).double()
    except Exception:
        return {**_failure(), "status": "unavailable"}
    try:
        _set_weights(module, rng)
        module.train(mode == "train")
        inputs = []
        for s in shapes:
            if s[0] == "int":
                inputs.append(torch.tensor(rng.integers(0, s[2], s[1]), dtype=torch.int64))
            else:
                inputs.append(torch.tensor(rng.normal(size=s), dtype=torch.float64,
                                           requires_grad=True))
        out = module(*inputs)
        outs = [o for o in _tensors_of(out) if o.dtype.is_floating_point and o.requires_grad]
        total = sum((o * torch.tensor(rng.normal(size=tuple(o.shape)))).sum() for o in outs)
        total.backward()
        grads = {f"input{i}": x.grad for i, x in enumerate(inputs) if x.grad is not None}
        grads.update({k: p.grad for k, p in module.named_parameters() if p.grad is not None})
        buffers = {k: b for k, b in module.named_buffers() if b.dtype.is_floating_point}
        return {"status": "ok", "output": _encode(out),
                "grads": {k: _encode(v) for k, v in grads.items()},
                "buffers": {k: _encode(v) for k, v in buffers.items()}}
    except Exception:
        return _failure()


def run_loss(name: str, spec: tuple[str, tuple[int, ...], Any]) -> dict[str, Any]:
    expr, shape, target = spec
    rng = _rng(name)
    try:
        loss_fn = eval(expr, {"nn": nn, "torch": torch})
    except Exception:
        return {**_failure(), "status": "unavailable"}
    try:
        leaf = torch.tensor(rng.normal(size=shape), dtype=torch.float64, requires_grad=True)
        x = torch.log_softmax(leaf, -1) if name == "KLDivLoss" else leaf
        if target[0] == "int":
            y = torch.tensor(rng.integers(0, target[2], target[1]), dtype=torch.int64)
        elif target[0] == "prob":
            y = torch.tensor(rng.uniform(size=target[1]), dtype=torch.float64)
        else:
            y = torch.tensor(rng.normal(size=target[1]), dtype=torch.float64)
            if name == "KLDivLoss":
                y = torch.softmax(y, -1)
        out = loss_fn(x, y)
        out.backward()
        return {"status": "ok", "output": _encode(out), "grads": {"input": _encode(leaf.grad)}}
    except Exception:
        return _failure()


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
    args = parser.parse_args()
    torch.manual_seed(0)
    runs = {name: (expr, None) for name, expr in OPTIMIZERS.items()}
    runs.update({f"SGD+{name}": (OPTIMIZERS["SGD_momentum_nesterov"], sexpr)
                 for name, sexpr in SCHEDULERS.items()})
    result: dict[str, Any] = {"modules": {}, "losses": {}, "optimizers": {}, "resumed": {}}
    if args.load_dir is None or args.save_dir is not None:
        result["modules"] = {n: run_module(n, s) for n, s in MODULES.items()}
        result["losses"] = {n: run_loss(n, s) for n, s in LOSSES.items()}
        for name, (expr, sexpr) in runs.items():
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
