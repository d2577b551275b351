"""``torch.optim``: Adamax, NAdam, RAdam, RMSprop, Adagrad, Adadelta, ASGD, Rprop and LBFGS.

Each optimizer runs 20 steps on a small non-convex problem and is compared with a numpy
re-implementation of the update rule PyTorch documents; the state keys and dtypes follow
PyTorch's (``state_dict`` interchange), state_dict round trips resume exactly, and invalid
hyperparameters raise PyTorch's ``ValueError`` messages. LBFGS with the strong-Wolfe line
search is checked against values printed by real PyTorch 2.13 for the same problem.
"""

from __future__ import annotations

import copy
import math
import re

import numpy as np
import pytest

import torch
from torch import optim

STEPS = 20
A = np.array([[1.0, 0.5, -0.3], [2.0, -1.0, 0.25]])
C = np.array([[0.3, -0.2, 0.1], [-0.5, 0.4, 0.05]])
P0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.2, -0.7]])
F32 = np.float32


def grad_np(p: np.ndarray) -> np.ndarray:
    """Gradient of :func:`loss_fn`: a quadratic plus a sine, so gradients change sign."""
    return A * p + C + np.cos(p)


def loss_fn(p: torch.Tensor) -> torch.Tensor:
    return (0.5 * torch.tensor(A) * p * p + torch.tensor(C) * p + torch.sin(p)).sum()


def run_torch(name: str, steps: int = STEPS, **kwargs: object
              ) -> tuple[np.ndarray, optim.Optimizer, torch.Tensor]:
    p = torch.tensor(P0.copy(), requires_grad=True)
    opt = getattr(optim, name)([p], **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(p).backward()
        opt.step()
    return p.detach().numpy(), opt, p


def _grad(p: np.ndarray, maximize: bool, wd: float) -> np.ndarray:
    g = grad_np(p)
    g = -g if maximize else g
    return g + wd * p


# --------------------------------------------------------------------------- numpy references


def adamax_np(lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
              weight_decay: float = 0.0, maximize: bool = False) -> np.ndarray:
    b1, b2 = betas
    p = P0.copy()
    m, u = np.zeros_like(p), np.zeros_like(p)
    for t in range(1, STEPS + 1):
        g = _grad(p, maximize, weight_decay)
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        p = p - lr / (1 - b1 ** t) * m / u
    return p


def nadam_np(lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
             weight_decay: float = 0.0, momentum_decay: float = 4e-3,
             decoupled_weight_decay: bool = False, maximize: bool = False) -> np.ndarray:
    b1, b2 = betas
    p = P0.copy()
    m, v = np.zeros_like(p), np.zeros_like(p)
    prod = F32(1.0)  # PyTorch keeps the running product as a float32 tensor
    for t in range(1, STEPS + 1):
        g = grad_np(p)
        g = -g if maximize else g
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        prod = prod * F32(mu)  # a float32 tensor times a scalar: float32 arithmetic
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        denom = np.sqrt(v / (1 - b2 ** t)) + eps
        p = (p - lr * (1 - mu) / (1 - float(prod)) * g / denom
             - lr * mu_next / (1 - float(prod) * mu_next) * m / denom)
    return p


def radam_np(lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
             weight_decay: float = 0.0, decoupled_weight_decay: bool = False,
             maximize: bool = False) -> np.ndarray:
    b1, b2 = betas
    p = P0.copy()
    m, v = np.zeros_like(p), np.zeros_like(p)
    rho_inf = 2 / (1 - b2) - 1
    for t in range(1, STEPS + 1):
        g = grad_np(p)
        g = -g if maximize else g
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1 ** t)
        rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
        if rho_t > 5:
            r = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                          / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            p = p - lr * m_hat * r * math.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
        else:
            p = p - lr * m_hat
    return p


def rmsprop_np(lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
               weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False,
               maximize: bool = False) -> np.ndarray:
    p = P0.copy()
    v, ga, buf = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for _ in range(STEPS):
        g = _grad(p, maximize, weight_decay)
        v = alpha * v + (1 - alpha) * g * g
        if centered:
            ga = alpha * ga + (1 - alpha) * g
            avg = np.sqrt(v - ga * ga) + eps
        else:
            avg = np.sqrt(v) + eps
        if momentum > 0:
            buf = momentum * buf + g / avg
            p = p - lr * buf
        else:
            p = p - lr * g / avg
    return p


def adagrad_np(lr: float = 1e-2, lr_decay: float = 0.0, weight_decay: float = 0.0,
               initial_accumulator_value: float = 0.0, eps: float = 1e-10,
               maximize: bool = False) -> np.ndarray:
    p = P0.copy()
    s = np.full_like(p, initial_accumulator_value)
    for t in range(1, STEPS + 1):
        g = _grad(p, maximize, weight_decay)
        s = s + g * g
        p = p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s) + eps)
    return p


def adadelta_np(lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                weight_decay: float = 0.0, maximize: bool = False) -> np.ndarray:
    p = P0.copy()
    v, u = np.zeros_like(p), np.zeros_like(p)
    for _ in range(STEPS):
        g = _grad(p, maximize, weight_decay)
        v = rho * v + (1 - rho) * g * g
        dx = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        u = rho * u + (1 - rho) * dx * dx
        p = p - lr * dx
    return p


def asgd_np(lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
            weight_decay: float = 0.0, maximize: bool = False
            ) -> tuple[np.ndarray, np.ndarray]:
    p = P0.copy()
    ax = np.zeros_like(p)
    eta, mu = F32(lr), F32(1.0)  # float32 0-d tensors in PyTorch's state
    for t in range(1, STEPS + 1):
        g = _grad(p, maximize, weight_decay)
        p = p * (1 - lambd * float(eta)) - float(eta) * g
        ax = p.copy() if mu == 1 else ax + float(mu) * (p - ax)
        eta = F32(lr / (1 + lambd * lr * t) ** alpha)
        mu = F32(1 / max(1, t - t0))
    return p, ax


def rprop_np(lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
             step_sizes: tuple[float, float] = (1e-6, 50), maximize: bool = False
             ) -> np.ndarray:
    p = P0.copy()
    prev, size = np.zeros_like(p), np.full_like(p, lr)
    for _ in range(STEPS):
        g = _grad(p, maximize, 0.0)
        s = np.sign(g * prev)
        size = np.clip(size * np.where(s > 0, etas[1], np.where(s < 0, etas[0], 1.0)),
                       *step_sizes)
        g = np.where(s < 0, 0.0, g)
        p = p - np.sign(g) * size
        prev = g
    return p


CASES = [
    ("Adamax", adamax_np, {}),
    ("Adamax", adamax_np, {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-3}),
    ("Adamax", adamax_np, {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
    ("NAdam", nadam_np, {"lr": 0.05}),
    ("NAdam", nadam_np, {"lr": 0.05, "betas": (0.8, 0.9), "momentum_decay": 0.05}),
    ("NAdam", nadam_np, {"lr": 0.05, "weight_decay": 0.1}),
    ("NAdam", nadam_np, {"lr": 0.05, "weight_decay": 0.2, "decoupled_weight_decay": True,
                         "maximize": True}),
    ("RAdam", radam_np, {"lr": 0.05}),
    ("RAdam", radam_np, {"lr": 0.05, "betas": (0.9, 0.8)}),  # rectified from step 6 on
    ("RAdam", radam_np, {"lr": 0.05, "betas": (0.9, 0.8), "weight_decay": 0.1}),
    ("RAdam", radam_np, {"lr": 0.05, "betas": (0.9, 0.8), "weight_decay": 0.2,
                         "decoupled_weight_decay": True, "maximize": True}),
    ("RMSprop", rmsprop_np, {}),
    ("RMSprop", rmsprop_np, {"lr": 0.02, "alpha": 0.9, "eps": 1e-4, "weight_decay": 0.1}),
    ("RMSprop", rmsprop_np, {"lr": 0.02, "centered": True}),
    ("RMSprop", rmsprop_np, {"lr": 0.02, "momentum": 0.7}),
    ("RMSprop", rmsprop_np, {"lr": 0.01, "momentum": 0.5, "centered": True,
                             "weight_decay": 0.05, "maximize": True}),
    ("Adagrad", adagrad_np, {}),
    ("Adagrad", adagrad_np, {"lr": 0.1, "lr_decay": 0.05}),
    ("Adagrad", adagrad_np, {"lr": 0.1, "initial_accumulator_value": 0.3, "eps": 1e-3,
                             "weight_decay": 0.1, "maximize": True}),
    ("Adadelta", adadelta_np, {}),
    ("Adadelta", adadelta_np, {"lr": 0.5, "rho": 0.6, "eps": 1e-4}),
    ("Adadelta", adadelta_np, {"weight_decay": 0.1, "maximize": True}),
    ("ASGD", lambda **k: asgd_np(**k)[0], {}),
    ("ASGD", lambda **k: asgd_np(**k)[0], {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 5,
                                           "weight_decay": 0.1}),
    ("ASGD", lambda **k: asgd_np(**k)[0], {"lr": 0.05, "t0": 3, "maximize": True}),
    ("Rprop", rprop_np, {}),
    ("Rprop", rprop_np, {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (0.01, 0.2)}),
    ("Rprop", rprop_np, {"lr": 0.05, "maximize": True}),
]


@pytest.mark.parametrize(("name", "ref", "kwargs"), CASES,
                         ids=[f"{n}-{','.join(k) or 'default'}" for n, _, k in CASES])
def test_trajectory(name: str, ref: object, kwargs: dict) -> None:
    got, _, _ = run_torch(name, **kwargs)
    np.testing.assert_allclose(got, ref(**kwargs), rtol=1e-10, atol=1e-12)  # type: ignore[operator]


def test_asgd_average() -> None:
    kwargs = {"lr": 0.05, "t0": 5}
    _, opt, p = run_torch("ASGD", **kwargs)
    np.testing.assert_allclose(opt.state[p]["ax"].numpy(), asgd_np(**kwargs)[1], rtol=1e-10,
                               atol=1e-12)


STATE_LAYOUT = {
    "Adamax": ({}, {"step", "exp_avg", "exp_inf"}),
    "NAdam": ({}, {"step", "mu_product", "exp_avg", "exp_avg_sq"}),
    "RAdam": ({}, {"step", "exp_avg", "exp_avg_sq"}),
    "RMSprop": ({"momentum": 0.9, "centered": True},
                {"step", "square_avg", "momentum_buffer", "grad_avg"}),
    "Adagrad": ({}, {"step", "sum"}),
    "Adadelta": ({}, {"step", "square_avg", "acc_delta"}),
    "ASGD": ({}, {"step", "eta", "mu", "ax"}),
    "Rprop": ({}, {"step", "prev", "step_size"}),
}
SCALAR_STATE = {"step", "mu_product", "eta", "mu"}


@pytest.mark.parametrize("name", sorted(STATE_LAYOUT))
def test_state_layout_matches_pytorch(name: str) -> None:
    kwargs, keys = STATE_LAYOUT[name]
    _, opt, p = run_torch(name, steps=3, **kwargs)
    state = opt.state_dict()["state"][0]
    assert set(state) == keys
    for key, value in state.items():
        if key in SCALAR_STATE:
            assert value.dtype == torch.float32 and value.dim() == 0, key
        else:
            assert value.dtype == torch.float64 and value.shape == p.shape, key
    assert float(state["step"]) == 3.0


def test_rmsprop_plain_state_has_no_optional_buffers() -> None:
    _, opt, p = run_torch("RMSprop", steps=1)
    assert set(opt.state[p]) == {"step", "square_avg"}


def test_adagrad_state_exists_before_first_step() -> None:
    p = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    opt = optim.Adagrad([p], initial_accumulator_value=0.5)
    assert float(opt.state[p]["step"]) == 0.0
    np.testing.assert_array_equal(opt.state[p]["sum"].numpy(), [0.5, 0.5, 0.5])


@pytest.mark.parametrize(("name", "kwargs"), [
    ("Adamax", {"lr": 0.05}), ("NAdam", {"lr": 0.05}), ("RAdam", {"lr": 0.05}),
    ("RMSprop", {"momentum": 0.9, "centered": True}), ("Adagrad", {"lr_decay": 0.1}),
    ("Adadelta", {}), ("ASGD", {"t0": 4}), ("Rprop", {})])
def test_state_dict_round_trip_resumes_exactly(name: str, kwargs: dict) -> None:
    straight, _, _ = run_torch(name, **kwargs)
    half, opt, p = run_torch(name, steps=STEPS // 2, **kwargs)
    q = torch.tensor(half.copy(), requires_grad=True)
    fresh = getattr(optim, name)([q], **kwargs)
    fresh.load_state_dict(opt.state_dict())
    assert fresh.state[q].keys() == opt.state[p].keys()
    for _ in range(STEPS - STEPS // 2):
        fresh.zero_grad()
        loss_fn(q).backward()
        fresh.step()
    scalars = [k for k in fresh.state[q] if k in SCALAR_STATE and k != "step"]
    # As in PyTorch, loading casts the float32 scalars (mu_product, eta, mu) to the
    # parameter's dtype; NAdam's running product then multiplies in float64.
    assert all(fresh.state[q][k].dtype == torch.float64 for k in scalars)
    if name == "NAdam":
        np.testing.assert_allclose(q.detach().numpy(), straight, rtol=1e-6, atol=1e-9)
    else:
        np.testing.assert_array_equal(q.detach().numpy(), straight)


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad",
                                  "Adadelta", "ASGD", "Rprop"])
def test_float32_parameters(name: str) -> None:
    p = torch.tensor(P0.astype(np.float32), requires_grad=True)
    opt = getattr(optim, name)([p], lr=0.01)
    for _ in range(5):
        opt.zero_grad()
        loss_fn(p.double()).backward()
        opt.step()
    assert p.dtype == torch.float32
    assert all(v.dtype == torch.float32 for v in opt.state[p].values())
    assert np.isfinite(p.detach().numpy()).all()
    assert not np.array_equal(p.detach().numpy(), P0.astype(np.float32))


def test_parameters_without_grad_are_skipped() -> None:
    a = torch.ones(2, dtype=torch.float64, requires_grad=True)
    b = torch.ones(2, dtype=torch.float64, requires_grad=True)
    opt = optim.NAdam([a, b], lr=0.1)
    (a * a).sum().backward()
    opt.step()
    assert b.grad is None and len(opt.state[b]) == 0
    np.testing.assert_array_equal(b.detach().numpy(), [1.0, 1.0])
    assert (a.detach().numpy() < 1.0).all()


def test_closure_result_is_returned() -> None:
    p = torch.tensor(P0.copy(), requires_grad=True)
    opt = optim.RMSprop([p])

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = loss_fn(p)
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == pytest.approx(float(loss_fn(torch.tensor(P0))))


@pytest.mark.parametrize(("name", "kwargs", "message"), [
    ("Adamax", {"lr": -1}, "Invalid learning rate: -1"),
    ("Adamax", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
    ("NAdam", {"betas": (0.9, 1.0)}, "Invalid beta parameter at index 1: 1.0"),
    ("NAdam", {"momentum_decay": -1}, "Invalid momentum_decay value: -1"),
    ("RAdam", {"eps": -1}, "Invalid epsilon value: -1"),
    ("RAdam", {"weight_decay": -1}, "Invalid weight_decay value: -1"),
    ("RMSprop", {"alpha": -1}, "Invalid alpha value: -1"),
    ("RMSprop", {"momentum": -1}, "Invalid momentum value: -1"),
    ("Adagrad", {"lr_decay": -1}, "Invalid lr_decay value: -1"),
    ("Adagrad", {"initial_accumulator_value": -1},
     "Invalid initial_accumulator_value value: -1"),
    ("Adadelta", {"rho": 2}, "Invalid rho value: 2"),
    ("ASGD", {"lr": -1}, "Invalid learning rate: -1"),
    ("ASGD", {"weight_decay": -1}, "Invalid weight_decay value: -1"),
    ("Rprop", {"etas": (2, 0.5)}, "Invalid eta values: 2, 0.5"),
    ("LBFGS", {"lr": -1}, "Invalid learning rate: -1"),
])
def test_invalid_hyperparameters(name: str, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        getattr(optim, name)([torch.ones(1, requires_grad=True)], **kwargs)


@pytest.mark.parametrize(("name", "defaults"), [
    ("Adamax", {"lr": 2e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0}),
    ("NAdam", {"lr": 2e-3, "momentum_decay": 4e-3, "decoupled_weight_decay": False}),
    ("RAdam", {"lr": 1e-3, "decoupled_weight_decay": False}),
    ("RMSprop", {"lr": 1e-2, "alpha": 0.99, "eps": 1e-8, "momentum": 0, "centered": False}),
    ("Adagrad", {"lr": 1e-2, "lr_decay": 0, "initial_accumulator_value": 0, "eps": 1e-10}),
    ("Adadelta", {"lr": 1.0, "rho": 0.9, "eps": 1e-6}),
    ("ASGD", {"lr": 1e-2, "lambd": 1e-4, "alpha": 0.75, "t0": 1e6}),
    ("Rprop", {"lr": 1e-2, "etas": (0.5, 1.2), "step_sizes": (1e-6, 50)}),
    ("LBFGS", {"lr": 1, "max_iter": 20, "max_eval": 25, "tolerance_grad": 1e-7,
               "tolerance_change": 1e-9, "history_size": 100, "line_search_fn": None}),
])
def test_defaults_match_pytorch(name: str, defaults: dict) -> None:
    opt = getattr(optim, name)([torch.ones(1, requires_grad=True)])
    for key, value in defaults.items():
        assert opt.defaults[key] == value, key


def test_repr_lists_group_options() -> None:
    opt = optim.NAdam([torch.ones(1, requires_grad=True)])
    assert repr(opt) == "\n".join([
        "NAdam (", "Parameter Group 0", "    betas: (0.9, 0.999)", "    capturable: False",
        "    decoupled_weight_decay: False", "    differentiable: False", "    eps: 1e-08",
        "    foreach: None", "    lr: 0.002", "    maximize: False",
        "    momentum_decay: 0.004", "    weight_decay: 0", ")"])


# --------------------------------------------------------------------------- LBFGS


def lbfgs_np(lr: float, max_iter: int, history_size: int, calls: int,
             tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9) -> np.ndarray:
    """L-BFGS without line search: two-loop recursion over the stored curvature pairs,
    step ``lr`` (scaled by ``min(1, 1/|g|_1)`` on the very first iteration), at most
    ``max_iter * 5 // 4`` loss evaluations per call."""
    x = P0.reshape(-1).copy()
    max_eval = max_iter * 5 // 4

    def grad(v: np.ndarray) -> np.ndarray:
        return grad_np(v.reshape(P0.shape)).reshape(-1)

    def loss(v: np.ndarray) -> float:
        w = v.reshape(P0.shape)
        return float((0.5 * A * w * w + C * w + np.sin(w)).sum())

    dirs: list[np.ndarray] = []
    stps: list[np.ndarray] = []
    h_diag, total_iter = 1.0, 0
    d = t = prev_g = None
    for _ in range(calls):
        g, f = grad(x), loss(x)
        evals = 1
        if np.abs(g).max() <= tolerance_grad:
            continue
        for n_iter in range(1, max_iter + 1):
            total_iter += 1
            if total_iter == 1:
                d = -g
            else:
                y, s = g - prev_g, d * t
                if y @ s > 1e-10:
                    if len(dirs) == history_size:
                        dirs.pop(0)
                        stps.pop(0)
                    dirs.append(y)
                    stps.append(s)
                    h_diag = (y @ s) / (y @ y)
                q = -g
                al = []
                for y_i, s_i in zip(reversed(dirs), reversed(stps)):
                    a = (s_i @ q) / (y_i @ s_i)
                    al.append(a)
                    q = q - a * y_i
                r = q * h_diag
                for (y_i, s_i), a in zip(zip(dirs, stps), reversed(al)):
                    r = r + s_i * (a - (y_i @ r) / (y_i @ s_i))
                d = r
            prev_g, prev_f = g, f
            t = min(1.0, 1.0 / np.abs(g).sum()) * lr if total_iter == 1 else lr
            if g @ d > -tolerance_change:
                break
            x = x + t * d
            if n_iter == max_iter:
                break
            g, f = grad(x), loss(x)
            evals += 1
            if (evals >= max_eval or np.abs(g).max() <= tolerance_grad
                    or np.abs(d * t).max() <= tolerance_change
                    or abs(f - prev_f) < tolerance_change):
                break
    return x.reshape(P0.shape)


def run_lbfgs(p: torch.Tensor, calls: int, loss: object, **kwargs: object) -> list[float]:
    opt = optim.LBFGS([p], **kwargs)

    def closure() -> torch.Tensor:
        opt.zero_grad()
        value = loss(p)  # type: ignore[operator]
        value.backward()
        return value

    return [float(opt.step(closure)) for _ in range(calls)]


@pytest.mark.parametrize(("lr", "max_iter", "history_size"),
                         [(0.1, 20, 100), (0.2, 5, 3), (0.05, 3, 1)])
def test_lbfgs_without_line_search(lr: float, max_iter: int, history_size: int) -> None:
    p = torch.tensor(P0.copy(), requires_grad=True)
    run_lbfgs(p, 3, loss_fn, lr=lr, max_iter=max_iter, history_size=history_size)
    expected = lbfgs_np(lr, max_iter, history_size, calls=3)
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-9, atol=1e-11)


def rosenbrock(x: torch.Tensor) -> torch.Tensor:
    return ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()


# Printed by real PyTorch 2.13 for the same runs: per step() call (returned loss,
# state["func_evals"], state["n_iter"]), then the parameters after four calls.
LBFGS_PYTORCH = [
    ({"line_search_fn": "strong_wolfe"},
     [(446.2, 24, 20), (4.3857978434, 46, 39), (3.9308394344, 47, 40),
      (3.9308394344, 48, 41)],
     [-0.96205308, 0.93574272, 0.88071963, 0.77788789, 0.60510892]),
    ({"line_search_fn": "strong_wolfe", "history_size": 3, "max_iter": 4},
     [(446.2, 5, 4), (23.026221077, 10, 6), (5.3942623837, 15, 10), (4.6444839011, 20, 14)],
     [-0.65922392, 0.43924582, 0.20486737, 0.04486258, -0.00407597]),
    ({"lr": 0.1, "max_iter": 6},
     [(446.2, 6, 6), (158.8682234201, 12, 12), (84.6145318055, 18, 18),
      (16.4962177703, 24, 24)],
     [-0.62019028, 0.35290222, 0.07709541, -0.10575698, 0.08807021]),
]


@pytest.mark.parametrize(("kwargs", "calls", "final"), LBFGS_PYTORCH,
                         ids=["wolfe", "wolfe-short-history", "fixed-step"])
def test_lbfgs_matches_pytorch_on_rosenbrock(kwargs: dict, calls: list, final: list) -> None:
    x = torch.tensor([-1.2, 1.0, 0.5, -0.3, 2.0], dtype=torch.float64, requires_grad=True)
    opt = optim.LBFGS([x], **kwargs)

    def closure() -> torch.Tensor:
        opt.zero_grad()
        value = rosenbrock(x)
        value.backward()
        return value

    for loss, evals, n_iter in calls:
        assert float(opt.step(closure)) == pytest.approx(loss, rel=1e-8)
        assert opt.state[x]["func_evals"] == evals
        assert opt.state[x]["n_iter"] == n_iter
    np.testing.assert_allclose(x.detach().numpy(), final, atol=1e-7)


def test_lbfgs_strong_wolfe_converges() -> None:
    x = torch.tensor([-1.2, 1.0, 0.5, -0.3, 2.0], dtype=torch.float64, requires_grad=True)
    run_lbfgs(x, 5, rosenbrock, lr=0.3, max_iter=30, tolerance_change=1e-12,
              line_search_fn="strong_wolfe")
    np.testing.assert_allclose(x.detach().numpy(), np.ones(5), atol=1e-4)


def test_lbfgs_several_parameters_and_state() -> None:
    a = torch.tensor([3.0, -2.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([[1.5]], dtype=torch.float64, requires_grad=True)

    def loss(_: object) -> torch.Tensor:
        return ((a - 1) ** 2).sum() + 4 * ((b + 2) ** 2).sum()

    opt = optim.LBFGS([a, b], line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        value = loss(None)
        value.backward()
        return value

    opt.step(closure)
    # Values printed by real PyTorch 2.13 for the same run (6 iterations).
    np.testing.assert_allclose(a.detach().numpy(), [0.9999974015338327, 1.0000038976992511],
                               rtol=1e-9)
    np.testing.assert_allclose(b.detach().numpy(), [[-2.000009295404135]], rtol=1e-9)
    assert opt.state[a]["n_iter"] == 6
    assert {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag",
            "prev_flat_grad", "prev_loss"} <= set(opt.state[a])
    assert len(opt.state[b]) == 0  # all state lives with the first parameter


def test_lbfgs_errors() -> None:
    a = torch.ones(1, requires_grad=True)
    b = torch.ones(1, requires_grad=True)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    opt = optim.LBFGS([a], line_search_fn="armijo")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        value = (a * a).sum()
        value.backward()
        return value

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


# --------------------------------------------------------------------------- swa_utils


def _linear_bn_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                               torch.nn.Linear(4, 2)).double()


def _set_weights(model: torch.nn.Module, k: int) -> list[np.ndarray]:
    """Deterministic weights for snapshot ``k``; returns them as numpy arrays."""
    out = []
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.arange(p.numel(), dtype=torch.float64).reshape(p.shape) * (k + 1) + i)
            out.append(p.detach().numpy().copy())
        model[1].running_mean.fill_(float(k))
    return out


@pytest.mark.parametrize("mode", ["swa", "ema-multi", "ema-per-tensor"])
def test_averaged_model(mode: str) -> None:
    from torch.optim import swa_utils

    model = _linear_bn_model()
    kwargs: dict = {"swa": {}, "ema-multi": {"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.9)},
                    "ema-per-tensor": {"avg_fn": swa_utils.get_ema_avg_fn(0.8)}}[mode]
    avg = swa_utils.AveragedModel(model, **kwargs)
    snapshots = []
    for k in range(4):
        snapshots.append(_set_weights(model, k))
        avg.update_parameters(model)
    decay = {"ema-multi": 0.9, "ema-per-tensor": 0.8}.get(mode)
    for i, got in enumerate(avg.module.parameters()):
        if decay is None:
            want = np.mean([s[i] for s in snapshots], axis=0)
        else:
            want = snapshots[0][i]
            for s in snapshots[1:]:
                want = decay * want + (1 - decay) * s[i]
        np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12)
    assert int(avg.n_averaged) == 4 and avg.n_averaged.dtype == torch.int64
    # Buffers are copied from the latest model unless use_buffers=True.
    np.testing.assert_array_equal(avg.module[1].running_mean.numpy(), np.full(4, 3.0))
    x = torch.ones(5, 3, dtype=torch.float64)
    avg.eval()
    model.eval()
    assert avg(x).shape == (5, 2)


def test_averaged_model_use_buffers_and_errors() -> None:
    from torch.optim import swa_utils

    model = _linear_bn_model()
    avg = swa_utils.AveragedModel(model, use_buffers=True)
    for k in range(3):
        _set_weights(model, k)
        avg.update_parameters(model)
    np.testing.assert_allclose(avg.module[1].running_mean.numpy(), np.full(4, 1.0))
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa_utils.AveragedModel(model, avg_fn=swa_utils.get_swa_avg_fn(),
                                multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
    with pytest.raises(ValueError, match=r"Invalid decay value 1\.5 provided"):
        swa_utils.get_ema_avg_fn(1.5)


def test_update_bn_recomputes_statistics() -> None:
    from torch.optim import swa_utils

    model = _linear_bn_model()
    model.eval()
    x = torch.arange(24, dtype=torch.float64).reshape(8, 3) / 10
    swa_utils.update_bn([(x[:4], None), (x[4:],)], model)
    bn = model[1]
    with torch.no_grad():
        h = model[0](x).numpy()
    # momentum=None during the pass: the running stats average the two batches equally.
    halves = [h[:4], h[4:]]
    np.testing.assert_allclose(bn.running_mean.numpy(),
                               np.mean([b.mean(0) for b in halves], axis=0), rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(),
                               np.mean([b.var(0, ddof=1) for b in halves], axis=0), rtol=1e-12)
    assert not model.training and bn.momentum == 0.1 and int(bn.num_batches_tracked) == 2


def test_lbfgs_resumes_from_state_with_tensor_scalars() -> None:
    """PyTorch keeps ``t``, ``H_diag`` and ``ro`` as 0-d tensors; such a state must load."""
    def fresh() -> tuple[torch.Tensor, optim.LBFGS, object]:
        x = torch.tensor([-1.2, 1.0, 0.5], dtype=torch.float64, requires_grad=True)
        opt = optim.LBFGS([x], max_iter=4)

        def closure() -> torch.Tensor:
            opt.zero_grad()
            value = rosenbrock(x)
            value.backward()
            return value

        return x, opt, closure

    x, opt, closure = fresh()
    for _ in range(3):
        opt.step(closure)  # type: ignore[arg-type]
    y, other, other_closure = fresh()
    other.step(other_closure)  # type: ignore[arg-type]
    saved = copy.deepcopy(opt.state_dict())  # as torch.save/torch.load would: no aliasing
    state = saved["state"][0]
    state["t"] = torch.tensor(state["t"], dtype=torch.float64)
    state["H_diag"] = torch.tensor(state["H_diag"], dtype=torch.float64)
    state["ro"] = [torch.tensor(r, dtype=torch.float64) for r in state["ro"]]
    with torch.no_grad():
        y.copy_(x)
    other.load_state_dict(saved)
    opt.step(closure)  # type: ignore[arg-type]
    other.step(other_closure)  # type: ignore[arg-type]
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), rtol=1e-12)


# ---------------------------------------------------------------- Adafactor and SparseAdam


def _adafactor_np(p: np.ndarray, grads: list[np.ndarray], lr: float, tau: float, eps1: float,
                  eps2: float, d: float, wd: float) -> np.ndarray:
    """Adafactor as PyTorch's documentation writes the algorithm (factored for ndim >= 2)."""
    p = p.copy()
    row = np.zeros(p.shape[:-1] + (1,)) if p.ndim > 1 else None
    col = np.zeros(p.shape[:-2] + (1, p.shape[-1])) if p.ndim > 1 else None
    var = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        one_minus_beta2 = t ** tau
        rho = min(lr, 1 / math.sqrt(t))
        alpha = max(eps2, np.sqrt(np.mean(p * p))) * rho
        p = p * (1 - lr * wd)
        if p.ndim > 1:
            row = row + one_minus_beta2 * ((g * g).mean(-1, keepdims=True) - row)
            col = col + one_minus_beta2 * ((g * g).mean(-2, keepdims=True) - col)
            v = row * col / np.maximum(row.mean(-2, keepdims=True), eps1)
        else:
            var = var + one_minus_beta2 * (g * g - var)
            v = var
        u = g / np.sqrt(np.maximum(v, eps1 * eps1))
        p = p - alpha * u / max(1.0, np.sqrt(np.mean(u * u)) / d)
    return p


@pytest.mark.parametrize("shape", [(5,), (4, 3), (2, 3, 4)])
@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.3, "weight_decay": 0.1, "d": 1.5},
                                    {"beta2_decay": -0.5, "eps": (1e-20, 1e-2),
                                     "maximize": True}])
def test_adafactor_matches_numpy(shape: tuple[int, ...], kwargs: dict) -> None:
    rng = np.random.default_rng(len(shape))
    p0 = rng.standard_normal(shape)
    grads = [rng.standard_normal(shape) for _ in range(6)]
    p = torch.nn.Parameter(torch.tensor(p0))
    opt = optim.Adafactor([p], **kwargs)
    for g in grads:
        p.grad = torch.tensor(g)
        opt.step()
    eps1, eps2 = kwargs.get("eps", (None, 1e-3))
    sign = -1.0 if kwargs.get("maximize") else 1.0
    ref = _adafactor_np(p0, [sign * g for g in grads], kwargs.get("lr", 1e-2),
                        kwargs.get("beta2_decay", -0.8),
                        np.finfo(np.float64).eps if eps1 is None else eps1, eps2,
                        kwargs.get("d", 1.0), kwargs.get("weight_decay", 0.0))
    np.testing.assert_allclose(p.detach().numpy(), ref, rtol=1e-10, atol=1e-12)
    state = opt.state[p]
    assert float(state["step"]) == 6.0
    if len(shape) > 1:
        assert set(state) == {"step", "row_var", "col_var"}
        assert tuple(state["row_var"].shape) == shape[:-1] + (1,)
        assert tuple(state["col_var"].shape) == shape[:-2] + (1, shape[-1])
    else:
        assert set(state) == {"step", "variance"}


def test_adafactor_float32_uses_float32_epsilon() -> None:
    p0 = np.array([[0.0, 0.0], [0.0, 0.0]], dtype=F32)
    g = np.array([[1e-3, 0.0], [0.0, 2e-3]], dtype=F32)
    p = torch.nn.Parameter(torch.tensor(p0))
    opt = optim.Adafactor([p])
    p.grad = torch.tensor(g)
    opt.step()
    ref = _adafactor_np(p0.astype(np.float64), [g.astype(np.float64)], 1e-2, -0.8,
                        float(np.finfo(F32).eps), 1e-3, 1.0, 0.0)
    np.testing.assert_allclose(p.detach().numpy(), ref, rtol=1e-5, atol=1e-9)


def test_adafactor_defaults_and_errors() -> None:
    p = torch.nn.Parameter(torch.zeros(2))
    assert optim.Adafactor([p]).defaults == {
        "lr": 0.01, "beta2_decay": -0.8, "eps": (None, 0.001), "d": 1.0, "weight_decay": 0.0,
        "foreach": None, "maximize": False}
    cases = [({"lr": -1}, "Learning rate should be >= 0 but is: -1"),
             ({"beta2_decay": 0.1}, "beta2_decay should be <= 0 but is: 0.1"),
             ({"eps": (-1, 1e-3)}, "epsilon1 should be >= 0 but is: -1"),
             ({"eps": (None, -1)}, "epsilon2 should be >= 0 but is: -1"),
             ({"d": 0.5}, "Clipping threshold d should be >= 1 but is: 0.5"),
             ({"weight_decay": -1}, "weight_decay should be >= 0 but is: -1")]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            optim.Adafactor([p], **kwargs)


def _sparse_adam_np(p: np.ndarray, rows_and_grads: list[tuple[list[int], np.ndarray]],
                    lr: float, b1: float, b2: float, eps: float) -> np.ndarray:
    """Lazy Adam: only the rows a gradient touches move (the step counts every call)."""
    p, m, v = p.copy(), np.zeros_like(p), np.zeros_like(p)
    for t, (rows, g) in enumerate(rows_and_grads, start=1):
        dense = np.zeros_like(p)
        np.add.at(dense, rows, g)
        touched = sorted(set(rows))
        gv = dense[touched]
        m[touched] = b1 * m[touched] + (1 - b1) * gv
        v[touched] = b2 * v[touched] + (1 - b2) * gv * gv
        size = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        p[touched] = p[touched] - size * m[touched] / (np.sqrt(v[touched]) + eps)
    return p


@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.05, "betas": (0.5, 0.9), "eps": 1e-6}])
def test_sparse_adam_matches_numpy_with_embedding(kwargs: dict) -> None:
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((6, 3))
    emb = torch.nn.Embedding(6, 3, sparse=True, dtype=torch.float64)
    with torch.no_grad():
        emb.weight.copy_(torch.tensor(w0))
    opt = optim.SparseAdam(emb.parameters(), **kwargs)
    batches = [[1, 3, 1], [0, 5], [3, 3, 2]]
    history = []
    for rows in batches:
        coef = rng.standard_normal((len(rows), 3))
        opt.zero_grad()
        (emb(torch.tensor(rows)) * torch.tensor(coef)).sum().backward()
        assert emb.weight.grad.is_sparse
        opt.step()
        history.append((rows, coef))
    ref = _sparse_adam_np(w0, history, kwargs.get("lr", 1e-3), *kwargs.get("betas", (0.9, 0.999)),
                          kwargs.get("eps", 1e-8))
    np.testing.assert_allclose(emb.weight.detach().numpy(), ref, rtol=1e-12, atol=1e-14)
    # row 4 was never looked up: untouched value and zero moments
    np.testing.assert_array_equal(emb.weight.detach().numpy()[4], w0[4])
    assert opt.state[emb.weight]["step"] == 3
    assert float(opt.state[emb.weight]["exp_avg"][4].abs().sum()) == 0.0


def test_sparse_adam_errors_and_defaults() -> None:
    p = torch.nn.Parameter(torch.zeros(2, 3))
    assert optim.SparseAdam([p]).defaults == {"lr": 0.001, "betas": (0.9, 0.999), "eps": 1e-08,
                                              "maximize": False}
    for kwargs, message in [({"lr": -1}, "Invalid learning rate: -1"),
                            ({"eps": -1}, "Invalid epsilon value: -1"),
                            ({"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
                            ({"betas": (0.9, 1.0)}, "Invalid beta parameter at index 1: 1.0")]:
        with pytest.raises(ValueError, match=re.escape(message)):
            optim.SparseAdam([p], **kwargs)
    p.grad = torch.ones(2, 3)
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        optim.SparseAdam([p]).step()


def test_sparse_adam_maximize_moves_uphill() -> None:
    emb = torch.nn.Embedding(3, 2, sparse=True)
    before = emb.weight.detach().clone()
    opt = optim.SparseAdam(emb.parameters(), lr=0.1, maximize=True)
    emb(torch.tensor([2])).sum().backward()
    opt.step()
    # gradient +1 on row 2: maximizing moves it up by lr (first Adam step is lr * sign)
    np.testing.assert_allclose((emb.weight.detach() - before).numpy()[2], [0.1, 0.1], rtol=1e-4)
    assert float((emb.weight.detach() - before)[:2].abs().sum()) == 0.0


# ---------------------------------------------------------------------------------- Muon


def _muon_np(p: np.ndarray, grads: list[np.ndarray], lr: float, wd: float, momentum: float,
             nesterov: bool, ratio: float) -> np.ndarray:
    """Muon with the Newton-Schulz iteration in float64 (PyTorch runs it in bfloat16)."""
    a, b, c = 3.4445, -4.775, 2.0315
    p, buf = p.copy(), np.zeros_like(p)
    for g in grads:
        buf = buf + (1 - momentum) * (g - buf)
        x = g + momentum * (buf - g) if nesterov else buf
        tall = x.shape[0] > x.shape[1]
        x = x.T if tall else x
        x = x / max(np.linalg.norm(x), 1e-7)
        for _ in range(5):
            gram = x @ x.T
            x = a * x + (b * gram + c * gram @ gram) @ x
        x = x.T if tall else x
        p = p * (1 - lr * wd) - lr * ratio * x
    return p


@pytest.mark.parametrize("shape,kwargs,ratio", [
    ((4, 3), {}, math.sqrt(4 / 3)),
    ((3, 5), {"nesterov": False, "lr": 0.02, "weight_decay": 0.0}, 1.0),
    ((3, 5), {"adjust_lr_fn": "match_rms_adamw", "lr": 0.01}, 0.2 * math.sqrt(5)),
])
def test_muon_matches_numpy_up_to_bfloat16(shape: tuple[int, int], kwargs: dict,
                                            ratio: float) -> None:
    rng = np.random.default_rng(7)
    p0 = rng.standard_normal(shape)
    grads = [rng.standard_normal(shape) for _ in range(3)]
    p = torch.nn.Parameter(torch.tensor(p0, dtype=torch.float32))
    opt = optim.Muon([p], **kwargs)
    for g in grads:
        p.grad = torch.tensor(g, dtype=torch.float32)
        opt.step()
    ref = _muon_np(p0, grads, kwargs.get("lr", 1e-3), kwargs.get("weight_decay", 0.1),
                   0.95, kwargs.get("nesterov", True), ratio)
    # bfloat16 keeps 8 bits: the orthogonalised update is good to about 5e-2 of its size
    moved = np.abs(ref - p0).max()
    np.testing.assert_allclose(p.detach().numpy(), ref, atol=0.1 * moved)
    assert set(opt.state[p]) == {"momentum_buffer"}


def test_muon_matches_values_printed_by_pytorch() -> None:
    p = torch.nn.Parameter(torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.2, -0.7]]))
    opt = optim.Muon([p], lr=0.05)
    for g in (C, A):
        p.grad = torch.tensor(g, dtype=torch.float32)
        opt.step()
    printed = [[0.44687286019325256, -1.0232053995132446, 1.9561407566070557],
               [1.4803427457809448, 0.20358897745609283, -0.7270843982696533]]
    np.testing.assert_allclose(p.detach().numpy(), printed, rtol=1e-6)
    q = torch.nn.Parameter(torch.tensor([[0.5, -1.0], [2.0, 1.5], [0.2, -0.7]]))
    opt = optim.Muon([q], lr=0.05, nesterov=False, weight_decay=0.0)
    for g in ([[0.3, -0.2], [0.1, -0.5], [0.4, 0.05]], [[1.0, 0.5], [-0.3, 2.0], [-1.0, 0.25]]):
        q.grad = torch.tensor(g)
        opt.step()
    printed = [[0.40599125623703003, -0.9902522563934326], [1.9930031299591064,
               1.4949766397476196], [0.1873219758272171, -0.7140982747077942]]
    np.testing.assert_allclose(q.detach().numpy(), printed, rtol=1e-6)


def test_muon_defaults_and_errors() -> None:
    p = torch.nn.Parameter(torch.zeros(2, 2))
    assert optim.Muon([p]).defaults == {
        "lr": 1e-3, "weight_decay": 0.1, "momentum": 0.95, "nesterov": True,
        "ns_coefficients": (3.4445, -4.775, 2.0315), "eps": 1e-7, "ns_steps": 5,
        "adjust_lr_fn": None}
    for kwargs, message in [({"lr": -1}, "Learning rate should be >= 0 but is: -1"),
                            ({"momentum": -1}, "momentum should be >= 0 but is: -1"),
                            ({"weight_decay": -1}, "weight decay should be >= 0 but is: -1"),
                            ({"adjust_lr_fn": "x"},
                             "Adjust learning rate function x is not supported")]:
        with pytest.raises(ValueError, match=re.escape(message)):
            optim.Muon([p], **kwargs)
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        optim.Muon([torch.nn.Parameter(torch.zeros(3))])
