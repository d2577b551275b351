"""``torch.optim``: SGD, Adam and AdamW trajectories against numpy re-implementations of the
algorithms PyTorch documents, and the ``Optimizer`` base (groups, state_dict round trips,
zero_grad, hooks, PyTorch's errors)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import torch
from torch.optim import SGD, Adam, AdamW, Optimizer

STEPS = 20
A = np.array([[1.0, 0.5, -0.3], [2.0, -1.0, 0.25]])
C = np.array([[0.3, -0.2, 0.1], [-0.5, 0.4, 0.05]])
P0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.2, -0.7]])


def grad_np(p: np.ndarray) -> np.ndarray:
    """Gradient of the loss below: a quadratic plus a sine, so gradients change sign."""
    return A * p + C + np.cos(p)


def loss_fn(p: torch.Tensor) -> torch.Tensor:
    return (0.5 * torch.tensor(A) * p * p + torch.tensor(C) * p + torch.sin(p)).sum()


def run_torch(make: type[Optimizer], **kwargs: object) -> np.ndarray:
    p = torch.tensor(P0.copy(), requires_grad=True)
    opt = make([p], **kwargs)
    for _ in range(STEPS):
        opt.zero_grad()
        loss_fn(p).backward()
        opt.step()
    return p.detach().numpy()


def sgd_np(lr: float, momentum: float = 0.0, dampening: float = 0.0,
           weight_decay: float = 0.0, nesterov: bool = False, maximize: bool = False
           ) -> np.ndarray:
    p, buf = P0.copy(), None
    for _ in range(STEPS):
        g = grad_np(p)
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def adam_np(lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
            weight_decay: float = 0.0, amsgrad: bool = False, maximize: bool = False,
            decoupled: bool = False) -> np.ndarray:
    b1, b2 = betas
    p = P0.copy()
    m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for t in range(1, STEPS + 1):
        g = grad_np(p)
        g = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax if amsgrad else v) / math.sqrt(1 - b2 ** t) + eps
        p = p - lr / (1 - b1 ** t) * m / denom
    return p


SGD_CASES = [
    {"lr": 0.1},
    {"lr": 0.05, "momentum": 0.9},
    {"lr": 0.05, "momentum": 0.9, "dampening": 0.3},
    {"lr": 0.05, "momentum": 0.8, "nesterov": True},
    {"lr": 0.1, "weight_decay": 0.2},
    {"lr": 0.02, "momentum": 0.5, "weight_decay": 0.1, "maximize": True},
]


@pytest.mark.parametrize("kwargs", SGD_CASES, ids=lambda k: ",".join(k))
def test_sgd_trajectory(kwargs: dict) -> None:
    np.testing.assert_allclose(run_torch(SGD, **kwargs), sgd_np(**kwargs), rtol=1e-12,
                               atol=1e-12)


ADAM_CASES = [
    {"lr": 0.05},
    {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6},
    {"lr": 0.05, "amsgrad": True},
    {"lr": 0.05, "weight_decay": 0.1},
    {"lr": 0.05, "maximize": True, "amsgrad": True, "weight_decay": 0.05},
]


@pytest.mark.parametrize("fused", [False, None])
@pytest.mark.parametrize("kwargs", ADAM_CASES, ids=lambda k: ",".join(k))
def test_adam_trajectory(kwargs: dict, fused: bool | None) -> None:
    np.testing.assert_allclose(run_torch(Adam, fused=fused, **kwargs), adam_np(**kwargs),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fused", [False, None])
@pytest.mark.parametrize("kwargs", [{"lr": 0.05}, {"lr": 0.05, "weight_decay": 0.3},
                                    {"lr": 0.05, "amsgrad": True, "maximize": True}],
                         ids=lambda k: ",".join(k))
def test_adamw_trajectory(kwargs: dict, fused: bool | None) -> None:
    expected = adam_np(decoupled=True, **{"weight_decay": 1e-2, **kwargs})
    np.testing.assert_allclose(run_torch(AdamW, fused=fused, **kwargs), expected, rtol=1e-10,
                               atol=1e-12)


def test_adam_decoupled_flag_equals_adamw() -> None:
    a = run_torch(Adam, lr=0.05, weight_decay=0.2, decoupled_weight_decay=True)
    np.testing.assert_allclose(a, run_torch(AdamW, lr=0.05, weight_decay=0.2), rtol=1e-14)


@pytest.mark.parametrize("fused", [False, None])
def test_adam_float32(fused: bool | None) -> None:
    p = torch.tensor(P0.astype(np.float32), requires_grad=True)
    opt = Adam([p], lr=0.05, fused=fused)
    for _ in range(STEPS):
        opt.zero_grad()
        loss_fn(p.double()).backward()
        opt.step()
    assert p.dtype == torch.float32
    assert opt.state[p]["exp_avg"].dtype == torch.float32
    np.testing.assert_allclose(p.detach().numpy(), adam_np(lr=0.05), rtol=2e-5, atol=2e-5)


# --------------------------------------------------------------------------- Optimizer base


def params(*shapes: tuple[int, ...]) -> list[torch.Tensor]:
    return [torch.ones(s, dtype=torch.float64, requires_grad=True) for s in shapes]


def test_param_groups_take_defaults_and_own_options() -> None:
    a, b, c = params((2,), (3,), (1,))
    opt = SGD([{"params": [a, b]}, {"params": c, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert all(g["momentum"] == 0.9 for g in opt.param_groups)
    assert opt.param_groups[1]["params"] == [c]
    for p in (a, b, c):
        p.grad = torch.ones_like(p)
    opt.step()
    np.testing.assert_allclose(a.detach().numpy(), [0.9, 0.9])
    np.testing.assert_allclose(c.detach().numpy(), [0.5])
    d = params((2,))[0]
    opt.add_param_group({"params": [d], "momentum": 0.0})
    assert opt.param_groups[2]["lr"] == 0.1 and opt.param_groups[2]["momentum"] == 0.0


def test_parameters_without_grad_are_skipped() -> None:
    a, b = params((2,), (2,))
    opt = Adam([a, b], lr=0.1)
    a.grad = torch.ones_like(a)
    opt.step()
    assert b not in opt.state
    np.testing.assert_array_equal(b.detach().numpy(), [1.0, 1.0])
    assert float(opt.state[a]["step"]) == 1.0


def test_named_parameters() -> None:
    a, b = params((2,), (3,))
    opt = SGD([("w", a), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["params"] == [a, b]
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]


def test_zero_grad() -> None:
    a, b = params((2,), (2,))
    opt = SGD([a, b], lr=0.1)
    a.grad = torch.ones_like(a)
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, 0.0])
    assert b.grad is None
    opt.zero_grad()
    assert a.grad is None


def test_closure_is_called_with_grad_enabled_and_returned() -> None:
    (p,) = params((3,))
    opt = SGD([p], lr=0.1)

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with torch.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 3.0
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 0.8, 0.8])


def test_step_runs_without_recording() -> None:
    (p,) = params((3,))
    opt = Adam([p], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    assert p.grad_fn is None and p.requires_grad
    assert opt.state[p]["exp_avg"].grad_fn is None


def trained(make: type[Optimizer], steps: int, **kwargs: object
            ) -> tuple[torch.Tensor, Optimizer]:
    p = torch.tensor(P0.copy(), requires_grad=True)
    opt = make([p], **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(p).backward()
        opt.step()
    return p, opt


@pytest.mark.parametrize(("make", "kwargs"), [
    (SGD, {"lr": 0.05, "momentum": 0.9}),
    (Adam, {"lr": 0.05, "amsgrad": True}),
    (AdamW, {"lr": 0.05}),
])
def test_state_dict_layout_and_round_trip(make: type[Optimizer], kwargs: dict) -> None:
    p, opt = trained(make, 5, **kwargs)
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert sd["param_groups"][0]["params"] == [0]
    assert set(sd["state"]) == {0}
    assert sd["param_groups"][0]["lr"] == 0.05
    if make is SGD:
        assert set(sd["state"][0]) == {"momentum_buffer"}
    else:
        assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"} - (
            set() if kwargs.get("amsgrad") else {"max_exp_avg_sq"})
        assert sd["state"][0]["step"].dtype == torch.float32
        assert float(sd["state"][0]["step"]) == 5.0
    saved = copy.deepcopy(sd)
    # a second optimizer over a copy of the parameter, loaded from the state dict, follows
    # the same trajectory as the original
    q = torch.tensor(p.detach().numpy().copy(), requires_grad=True)
    other = make([q], lr=1.0)
    other.load_state_dict(saved)
    assert other.param_groups[0]["lr"] == 0.05
    assert other.param_groups[0]["params"] == [q]
    for _ in range(5):
        for x, o in ((p, opt), (q, other)):
            o.zero_grad()
            loss_fn(x).backward()
            o.step()
    np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-14)


def test_load_state_dict_casts_to_the_parameter_dtype() -> None:
    _, opt = trained(Adam, 2, lr=0.05)
    sd = opt.state_dict()
    q = torch.zeros(2, 3, dtype=torch.float32, requires_grad=True)
    other = Adam([q])
    other.load_state_dict(sd)
    assert other.state[q]["exp_avg"].dtype == torch.float32
    assert other.state[q]["step"].dtype == torch.float32
    # the loaded state is not the saved tensors themselves
    other.state[q]["exp_avg"].zero_()
    assert np.abs(sd["state"][0]["exp_avg"].numpy()).sum() > 0


def test_multi_group_ids() -> None:
    a, b, c = params((1,), (2,), (3,))
    opt = SGD([{"params": [a]}, {"params": [b, c], "lr": 0.2}], lr=0.1, momentum=0.5)
    for p in (a, b, c):
        p.grad = torch.ones_like(p)
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1, 2]]
    assert tuple(sd["state"][2]["momentum_buffer"].shape) == (3,)


def test_load_state_dict_errors() -> None:
    (p,) = params((2,))
    opt = SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict({"state": {}, "param_groups": [{"params": [0, 1], "lr": 0.1}]})


@pytest.mark.parametrize(("make", "kwargs", "message"), [
    (SGD, {"lr": -1.0}, "Invalid learning rate: -1.0"),
    (SGD, {"momentum": -0.5}, "Invalid momentum value: -0.5"),
    (SGD, {"weight_decay": -1}, "Invalid weight_decay value: -1"),
    (SGD, {"nesterov": True}, "Nesterov momentum requires a momentum and zero dampening"),
    (SGD, {"nesterov": True, "momentum": 0.9, "dampening": 0.1}, "Nesterov momentum"),
    (Adam, {"lr": -1e-3}, "Invalid learning rate: -0.001"),
    (Adam, {"eps": -1.0}, "Invalid epsilon value: -1.0"),
    (Adam, {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
    (Adam, {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1: -0.1"),
    (AdamW, {"weight_decay": -0.1}, "Invalid weight_decay value: -0.1"),
])
def test_hyperparameter_errors(make: type[Optimizer], kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make(params((2,)), **kwargs)


def test_param_errors() -> None:
    (p,) = params((2,))
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        SGD(p)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        SGD([])
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        SGD([p * 2])
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
        SGD([1.0])
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter"):
        SGD([{"params": [p]}, {"params": [p]}])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        SGD([p, p])
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        Adam([p], fused=True, foreach=True)


def test_required_default() -> None:
    from torch.optim.optimizer import required

    class Plain(Optimizer):
        def __init__(self, params: list[torch.Tensor], lr: object = required) -> None:
            super().__init__(params, {"lr": lr})

        def step(self, closure: object = None) -> None:
            return None

    (p,) = params((2,))
    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        Plain([p])
    assert Plain([p], lr=0.1).param_groups[0]["lr"] == 0.1


def test_step_hooks() -> None:
    from torch.optim.optimizer import (
        register_optimizer_step_post_hook,
        register_optimizer_step_pre_hook,
    )

    (p,) = params((2,))
    opt = SGD([p], lr=0.1)
    calls: list[str] = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    post = opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))
    glob = register_optimizer_step_pre_hook(lambda o, args, kwargs: calls.append("global"))
    try:
        p.grad = torch.ones_like(p)
        opt.step()
        assert calls == ["global", "pre", "post"]
    finally:
        glob.remove()
    pre.remove()
    post.remove()
    opt.step()
    assert calls == ["global", "pre", "post"]
    with register_optimizer_step_post_hook(lambda o, a, k: calls.append("gpost")):
        opt.step()
    assert calls[-1] == "gpost"


def test_pre_hook_can_replace_arguments() -> None:
    (p,) = params((2,))
    opt = SGD([p], lr=0.1)
    seen: list[object] = []

    def closure() -> float:
        seen.append("closure")
        return 7.0

    opt.register_step_pre_hook(lambda o, args, kwargs: ((), {"closure": closure}))
    assert opt.step() == 7.0
    assert seen == ["closure"]


def test_repr() -> None:
    text = repr(Adam(params((2,)), lr=0.01))
    assert text.startswith("Adam (\nParameter Group 0\n    amsgrad: False\n")
    assert "    lr: 0.01\n" in text and text.endswith(")")


def test_sgd_momentum_buffer_is_its_own_copy_of_the_first_gradient() -> None:
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    p.grad = torch.tensor([0.5, -1.0])
    opt = SGD([p], lr=0.1, momentum=0.9)
    opt.step()
    buf = opt.state[p]["momentum_buffer"]
    p.grad.mul_(100.0)  # (zero_grad(set_to_none=False) and accumulation write grads in place)
    assert buf.tolist() == [0.5, -1.0] and not buf.requires_grad
    opt.step()  # buf = 0.9 * buf + g; p -= 0.1 * buf
    np.testing.assert_allclose(buf.numpy(), [0.9 * 0.5 + 50.0, 0.9 * -1.0 - 100.0], rtol=1e-6)
    np.testing.assert_allclose(p.detach().numpy(),
                               [1.0 - 0.05 - 0.1 * 50.45, 2.0 + 0.1 - 0.1 * -100.9], rtol=1e-6)


def _adam_pairs_np(p: np.ndarray, grads: list[np.ndarray], lr: float, amsgrad: bool
                   ) -> np.ndarray:
    """Adam over the reals of a complex parameter, each real and imaginary part its own
    element (how PyTorch documents complex parameters: as view_as_real pairs)."""
    b1, b2, eps = 0.9, 0.999, 1e-8
    m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax if amsgrad else v) / math.sqrt(1 - b2 ** t) + eps
        p = p - lr / (1 - b1 ** t) * m / denom
    return p


@pytest.mark.parametrize("options", [{}, {"foreach": True}, {"fused": False},
                                     {"amsgrad": True}], ids=str)
def test_adam_complex_parameter_updates_real_and_imaginary_parts_apart(options: dict) -> None:
    p = torch.tensor([1 + 2j, -0.5 + 0.25j], dtype=torch.complex128, requires_grad=True)
    grads = [np.array([[0.3, -0.7], [0.2, 0.1]]), np.array([[-0.1, 0.4], [0.5, 0.0]])]
    opt = Adam([p], lr=0.1, **options)
    for g in grads:
        p.grad = torch.complex(torch.tensor(g[:, 0]), torch.tensor(g[:, 1]))
        opt.step()
    want = _adam_pairs_np(np.array([[1.0, 2.0], [-0.5, 0.25]]), grads, 0.1,
                          options.get("amsgrad", False))
    np.testing.assert_allclose(torch.view_as_real(p.detach()).numpy(), want, rtol=1e-12)
    assert opt.state[p]["exp_avg"].dtype == torch.complex128
    assert opt.state[p]["step"].item() == 2.0


def test_adam_refuses_sparse_gradients_and_fused_complex() -> None:
    emb = torch.nn.Embedding(4, 2, sparse=True)
    emb(torch.tensor([1])).sum().backward()
    with pytest.raises(RuntimeError, match="Adam does not support sparse gradients"):
        Adam(emb.parameters()).step()
    p = torch.tensor([1 + 2j], requires_grad=True)
    p.grad = torch.tensor([0.5 + 0.5j])
    with pytest.raises(RuntimeError, match="`fused=True` requires all the params to be floating"):
        Adam([p], fused=True).step()
