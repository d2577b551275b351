"""torch.autograd.forward_ad: dual tensors whose tangents are Jacobian-vector products, checked
against central finite differences in float64 and against analytic derivatives."""

import pytest

import torch
import torch.autograd.forward_ad as fwAD
import torch.nn.functional as F

DT = torch.float64


def _fd_jvp(fn, primals, tangents, eps=1e-6):
    """(fn(p + eps t) - fn(p - eps t)) / (2 eps), with no autograd involved."""
    with torch.no_grad():
        plus = fn(*[p + eps * t for p, t in zip(primals, tangents)])
        minus = fn(*[p - eps * t for p, t in zip(primals, tangents)])
    return (plus - minus) / (2 * eps)


def _dual_jvp(fn, primals, tangents):
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(primals, tangents)]
        out = fn(*duals)
        primal_out, tangent_out = fwAD.unpack_dual(out)
    assert tangent_out is not None
    return primal_out, tangent_out


W = torch.randn(5, 4, dtype=DT, generator=torch.Generator().manual_seed(1))
B = torch.randn(5, dtype=DT, generator=torch.Generator().manual_seed(2))
CASES = {
    "elementwise": (lambda x: x.sin() * x.exp() + x.tanh() / (1 + x * x), 1),
    "pow_sqrt_log": (lambda x: (x * x + 1).sqrt().log() ** 3, 1),
    "operators": (lambda x: 3.0 - x * 2 + x / 4 - (-x), 1),
    "binary": (lambda x, y: torch.maximum(x, y) * torch.sigmoid(y) + x * y, 2),
    "matmul": (lambda x, y: x @ y.T, 2),
    "linear": (lambda x: F.linear(x, W, B), 1),
    "linear_weight": (lambda w: F.linear(torch.ones(3, 4, dtype=DT), w), None),
    "softmax": (lambda x: F.softmax(x, dim=-1), 1),
    "log_softmax": (lambda x: F.log_softmax(x, dim=0), 1),
    "layer_norm": (lambda x: F.layer_norm(x, (4,)), 1),
    "sum_mean": (lambda x: x.sum(0) * x.mean() + x.sum(dim=1, keepdim=True), 1),
    "views": (lambda x: x.reshape(2, 6).t().unsqueeze(0).flatten() * x.view(-1), 1),
    "indexing": (lambda x: x[1:, ::2] + x[torch.tensor([0, 2]), 1:3] * x[0, 0], 1),
    "cat_stack": (lambda x, y: torch.cat([x, y.exp()], 0) * torch.stack([x, y]).sum(0).sum(), 2),
    "relu_gelu": (lambda x: F.relu(x) + F.gelu(x), 1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tangent_matches_finite_differences(name):
    fn, n_inputs = CASES[name]
    gen = torch.Generator().manual_seed(hash(name) % 1000)
    shape = (5, 4) if n_inputs is None else (3, 4)
    count = 1 if n_inputs is None else n_inputs
    primals = [torch.randn(shape, dtype=DT, generator=gen) for _ in range(count)]
    tangents = [torch.randn(shape, dtype=DT, generator=gen) for _ in range(count)]
    primal_out, tangent_out = _dual_jvp(fn, primals, tangents)
    with torch.no_grad():
        assert torch.allclose(primal_out, fn(*primals))
    expected = _fd_jvp(fn, primals, tangents)
    assert tangent_out.shape == expected.shape
    assert torch.allclose(tangent_out, expected, rtol=1e-5, atol=1e-7), name


def test_analytic_derivatives():
    x = torch.tensor([0.5, -1.0, 2.0], dtype=DT)
    t = torch.tensor([1.0, 2.0, -0.5], dtype=DT)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        unpacked = fwAD.unpack_dual(d.exp() * d)
        dot = fwAD.unpack_dual((d * d).sum())
    assert isinstance(unpacked, fwAD.UnpackedDualTensor)
    assert unpacked.primal is unpacked[0] and unpacked.tangent is unpacked[1]
    # d/dx (x e^x) = (1 + x) e^x
    assert torch.allclose(unpacked.tangent, (1 + x) * x.exp() * t)
    # d/dx sum(x^2) = 2 <x, t>
    assert torch.allclose(dot.tangent, 2 * (x * t).sum())


def test_module_forward_keeps_reverse_mode():
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 3).double()
    x = torch.randn(2, 4, dtype=DT)
    t = torch.randn(2, 4, dtype=DT)
    with fwAD.dual_level():
        out = lin(fwAD.make_dual(x, t))
        tangent = fwAD.unpack_dual(out).tangent
        assert out.requires_grad  # the weights require grad
    assert torch.allclose(tangent, t @ lin.weight.detach().T)
    out.sum().backward()
    assert torch.allclose(lin.weight.grad, torch.ones(2, 3, dtype=DT).T @ x)


def test_plain_tensors_and_outside_level():
    x = torch.ones(3, dtype=DT)
    with fwAD.dual_level() as level:
        assert level == 0
        assert fwAD.unpack_dual(x).tangent is None
        plain = x * 2
        assert fwAD.unpack_dual(plain).tangent is None
        d = fwAD.make_dual(x, torch.ones(3, dtype=DT))
        assert not d.requires_grad and not (d * 3).requires_grad
        assert fwAD.unpack_dual(d.argmax()).tangent is None  # integer output
    # tangents go with the level
    assert fwAD.unpack_dual(d).tangent is None
    assert torch.equal(fwAD.unpack_dual(d).primal, x)


def test_errors():
    x = torch.ones(3, dtype=DT)
    with pytest.raises(RuntimeError, match="dual_level"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="size"):
            fwAD.make_dual(x, torch.ones(4, dtype=DT))
        with pytest.raises(ValueError, match="floating"):
            fwAD.make_dual(torch.ones(3, dtype=torch.int64), x)
        d = fwAD.make_dual(x, x)
        with pytest.raises(NotImplementedError, match="mul_"):
            d.mul_(2)
        with pytest.raises(NotImplementedError, match="in-place"):
            torch.zeros(3, dtype=DT).copy_(d)
        with pytest.raises(NotImplementedError, match="setitem"):
            torch.zeros(4, dtype=DT)[1:] = d  # would leave a value without its tangent
        # marking a dual tensor is not an in-place computation
        assert d.requires_grad_().requires_grad and d.size() == (3,) and len(d) == 3
    # the level was exited by the with statement despite the errors inside
    lvl = fwAD.enter_dual_level()
    fwAD.exit_dual_level(level=lvl)


def test_dual_level_decorator():
    @fwAD.dual_level()
    def tangent_of_square(x, t):
        return fwAD.unpack_dual(fwAD.make_dual(x, t) ** 2).tangent

    x = torch.tensor([3.0], dtype=DT)
    assert torch.allclose(tangent_of_square(x, torch.ones(1, dtype=DT)), 2 * x)


def test_reverse_over_forward_gives_hessian_vector_product():
    # tangent of sum(x^3) along v is <3 x^2, v>; its gradient in x is 6 x v
    x = torch.tensor([0.5, -1.5, 2.0], dtype=DT, requires_grad=True)
    v = torch.tensor([1.0, 0.5, -2.0], dtype=DT)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual((fwAD.make_dual(x, v) ** 3).sum()).tangent
    assert torch.allclose(tangent, (3 * x.detach() ** 2 * v).sum())
    tangent.backward()
    assert torch.allclose(x.grad, 6 * x.detach() * v)


def test_no_grad_region_still_propagates_tangents():
    x = torch.tensor([1.0, 2.0], dtype=DT)
    with fwAD.dual_level(), torch.no_grad():
        out = fwAD.make_dual(x, torch.ones(2, dtype=DT)).exp()
        tangent = fwAD.unpack_dual(out).tangent
    assert torch.allclose(tangent, x.exp())


class _NumpySquare(torch.autograd.Function):
    """A forward that leaves torch (numpy), so only its backward knows the derivative."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return torch.from_numpy(a.detach().numpy() ** 2)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return 2 * a * grad


class _OnceDoubled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        return grad * 2


def test_custom_function_is_one_operation():
    x = torch.tensor([1.0, 3.0], dtype=DT)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, torch.ones(2, dtype=DT))
        tangent = fwAD.unpack_dual(_NumpySquare.apply(d) + d).tangent
        with pytest.raises(NotImplementedError, match="_OnceDoubled"):
            _OnceDoubled.apply(d)
    # d/dx (x^2 + x) = 2x + 1
    assert torch.allclose(tangent, 2 * x + 1)
    # outside a level the Function is untouched
    assert torch.equal(_NumpySquare.apply(x), x * x)
