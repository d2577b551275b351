"""torch.func: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian against torch.autograd
(and formulas written here), their compositions with each other and with vmap, and the module
helpers functional_call, stack_module_state and functionalize."""

from __future__ import annotations

import pytest

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import functional as AF
from torch.func import (
    debug_unwrap,
    functional_call,
    functionalize,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    replace_all_batch_norm_modules_,
    stack_module_state,
    vjp,
    vmap,
)

D = torch.float64


def f(x):
    return (x.sin() * x).sum()


def df(x):  # d/dx sum(x sin x)
    return x.cos() * x + x.sin()


def g(x):  # a vector function: R^3 -> R^3
    return x.sin() * x.sum()


x3 = torch.tensor([0.3, -1.2, 2.0], dtype=D)


def test_grad_matches_the_formula_and_returns_plain_tensors():
    out = grad(f)(x3)
    assert torch.allclose(out, df(x3))
    assert not out.requires_grad and out.grad_fn is None


def test_grad_argnums_has_aux_and_pytrees():
    def h(a, b, c):
        return (a * b).sum() + c["w"].pow(2).sum(), {"note": a.sum()}

    a, b = torch.randn(3, dtype=D), torch.randn(3, dtype=D)
    c = {"w": torch.randn(2, dtype=D)}
    (ga, gc), aux = grad(h, argnums=(0, 2), has_aux=True)(a, b, c)
    assert torch.allclose(ga, b) and torch.allclose(gc["w"], 2 * c["w"])
    assert torch.allclose(aux["note"], a.sum())
    (ga2, (value, aux2)) = grad_and_value(h, has_aux=True)(a, b, c)
    assert torch.allclose(ga2, b) and torch.allclose(aux2["note"], a.sum())
    assert torch.allclose(value, (a * b).sum() + c["w"].pow(2).sum())
    assert grad(lambda a, b: (a * b).sum(), argnums=-1)(a, b).equal(a)


def test_grad_of_an_unused_input_is_zero():
    assert torch.equal(grad(lambda a, b: a.sum(), argnums=1)(x3, x3), torch.zeros(3, dtype=D))


def test_grad_errors():
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        grad(torch.sin)(x3)
    with pytest.raises(RuntimeError, match="to return a scalar Tensor, got type"):
        grad(lambda x: 3.0)(x3)
    with pytest.raises(RuntimeError, match="should be a tuple: \\(output, aux\\)"):
        grad(f, has_aux=True)(x3)
    with pytest.raises(RuntimeError, match="Got argnums=2, but only 1 positional inputs"):
        grad(f, argnums=2)(x3)
    with pytest.raises(RuntimeError, match="argnums must be int or Tuple"):
        grad(f, argnums=[0])(x3)


def test_grad_composes_with_regular_autograd():
    x = x3.clone().requires_grad_()
    out = grad(f)(x)
    assert out.requires_grad
    out.sum().backward()
    # d/dx of (x cos x + sin x) = 2 cos x - x sin x
    assert torch.allclose(x.grad, 2 * x3.cos() - x3 * x3.sin())


def test_vjp_and_jvp():
    out, vjp_fn = vjp(g, x3)
    assert torch.allclose(out, g(x3)) and not out.requires_grad
    v = torch.tensor([1.0, 2.0, -1.0], dtype=D)
    (got,) = vjp_fn(v)
    assert torch.allclose(got, AF.vjp(g, x3, v)[1])
    out, jv = jvp(g, (x3,), (v,))
    assert torch.allclose(out, g(x3)) and torch.allclose(jv, AF.jvp(g, x3, v)[1])
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        jvp(g, x3, (v,))
    with pytest.raises(RuntimeError, match="same python structure"):
        jvp(g, (x3,), v)
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        vjp_fn((v, v))


def test_linearize_gives_jvps_at_the_primal():
    v = torch.tensor([1.0, 2.0, -1.0], dtype=D)
    out, jvp_fn = linearize(g, x3)
    assert torch.allclose(out, g(x3))
    assert torch.allclose(jvp_fn(v), AF.jvp(g, x3, v)[1])
    assert torch.allclose(jvp_fn(2 * v), 2 * AF.jvp(g, x3, v)[1])


def test_vjp_with_several_primals_and_outputs():
    a, b = torch.randn(2, 3, dtype=D), torch.randn(3, dtype=D)
    (o1, o2), vjp_fn = vjp(lambda a, b: (a @ b, (a * b).sum()), a, b)
    assert torch.allclose(o1, a @ b) and torch.allclose(o2, (a * b).sum())
    ga, gb = vjp_fn((torch.ones(2, dtype=D), torch.tensor(2.0, dtype=D)))
    # d(sum(a@b) + 2 sum(a*b)): da = 1 b^T + 2 b, db = a^T 1 + 2 sum_rows(a)
    assert torch.allclose(ga, b.expand(2, 3) + 2 * b)
    assert torch.allclose(gb, a.sum(0) * 3)


def test_jacobians_and_hessian():
    expected = AF.jacobian(g, x3)
    assert torch.allclose(jacrev(g)(x3), expected)
    assert torch.allclose(jacfwd(g)(x3), expected)
    assert torch.allclose(hessian(f)(x3), AF.hessian(f, x3))
    # hessian of sum(x sin x) is diagonal: 2 cos x - x sin x
    assert torch.allclose(hessian(f)(x3), torch.diag(2 * x3.cos() - x3 * x3.sin()))
    a, b = torch.randn(2, 3, dtype=D), torch.randn(3, dtype=D)
    ja, jb = jacrev(lambda a, b: a @ b, argnums=(0, 1))(a, b)
    assert ja.shape == (2, 2, 3) and jb.shape == (2, 3)
    assert torch.allclose(jb, a)
    assert torch.allclose(ja, torch.eye(2, dtype=D)[:, :, None] * b)
    m = torch.randn(2, 3, dtype=D)
    assert jacrev(lambda m: m.exp())(m).shape == (2, 3, 2, 3)
    assert torch.allclose(jacrev(g, chunk_size=2)(x3), expected)


def test_compositions():
    xs = torch.randn(5, 3, dtype=D)
    assert torch.allclose(vmap(grad(f))(xs), df(xs))
    assert torch.allclose(jacrev(jacrev(f))(x3), AF.hessian(f, x3))
    assert torch.allclose(vmap(jacrev(g))(xs), torch.stack([AF.jacobian(g, r) for r in xs]))
    assert torch.allclose(vmap(hessian(f))(xs), torch.stack([AF.hessian(f, r) for r in xs]))
    # grad of grad: d2/dx2 sin x = -sin x
    assert torch.allclose(grad(grad(torch.sin))(torch.tensor(0.7, dtype=D)),
                          -torch.tensor(0.7, dtype=D).sin())
    # grad through vmap: d/dx sum_i f(x_i)
    assert torch.allclose(grad(lambda x: vmap(f)(x).sum())(xs), df(xs))
    # vmap of vjp, as jacrev uses it, against the Jacobian rows
    _, vjp_fn = vjp(g, x3)
    rows = vmap(vjp_fn)(torch.eye(3, dtype=D))[0]
    assert torch.allclose(rows, AF.jacobian(g, x3))


def test_nested_levels_keep_their_own_gradients():
    xs = torch.randn(4, 3, dtype=D)
    cube = lambda x: (x ** 3).sum()  # noqa: E731
    # grad around vmap around grad: d/dx sum(3 x^2) = 6 x
    assert torch.allclose(grad(lambda t: vmap(grad(cube))(t).sum())(xs), 6 * xs)
    assert torch.allclose(vmap(jacrev(jacrev(cube)))(xs),
                          torch.stack([torch.diag(6 * r) for r in xs]))

    def half_constant(x):
        with torch.no_grad():
            y = x * 2  # a constant for the gradient
        return (y * x).sum()

    assert torch.allclose(grad(lambda t: vmap(half_constant)(t).sum())(xs), 2 * xs)


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))


def test_per_sample_gradients_equal_a_loop_of_backward():
    model = _mlp()
    x, y = torch.randn(7, 4), torch.randn(7, 2)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xi, yi):
        return F.mse_loss(functional_call(model, p, (xi,)), yi)

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    for i in range(7):
        model.zero_grad()
        F.mse_loss(model(x[i]), y[i]).backward()
        for name, p in model.named_parameters():
            assert torch.allclose(per_sample[name][i], p.grad, atol=1e-6)


def test_stack_module_state_ensembles_with_vmap():
    models = [_mlp() for _ in range(3)]
    for i, m in enumerate(models):
        with torch.no_grad():
            for p in m.parameters():
                p.add_(i)
    params, buffers = stack_module_state(models)
    assert params["0.weight"].shape == (3, 6, 4) and params["0.weight"].requires_grad
    assert params["0.weight"].is_leaf and buffers == {}
    x = torch.randn(5, 4)
    base = _mlp()

    def call(p, b, x):
        return functional_call(base, (p, b), (x,))

    out = vmap(call, in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(models):
        assert torch.allclose(out[i], m(x), atol=1e-6)
    with pytest.raises(RuntimeError, match="Expected at least one model"):
        stack_module_state([])
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        stack_module_state([_mlp(), _mlp().eval()])


def test_batch_norm_under_vmap_uses_batch_statistics():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
    assert replace_all_batch_norm_modules_(model) is model
    assert model[1].running_mean is None and not model[1].track_running_stats
    x = torch.randn(3, 4, 1, 6, 6)
    got = vmap(model)(x)
    for i in range(3):  # each sample's own batch statistics
        assert torch.allclose(got[i], model(x[i]), atol=1e-6)


def test_debug_unwrap_shows_the_physical_tensor():
    x = torch.randn(3, 2)
    seen = []
    vmap(lambda t: seen.append(debug_unwrap(t)) or t)(x)
    assert torch.equal(seen[0], x)
    assert debug_unwrap(x) is x


def test_functionalize_is_the_function_itself():
    def h(x):
        y = x.clone()
        y.add_(1)
        return y

    assert torch.equal(functionalize(h)(x3), x3 + 1)
    with pytest.raises(RuntimeError, match="invalid argument for remove"):
        functionalize(h, remove="views")


def test_torch_func_names():
    import torch.func as tf

    assert tf.vmap is torch.vmap
    for name in ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
                 "functional_call", "stack_module_state", "functionalize", "vmap", "linearize",
                 "replace_all_batch_norm_modules_", "debug_unwrap"):
        assert callable(getattr(tf, name))
