"""Autograd tools: gradcheck/gradgradcheck, torch.autograd.functional, anomaly mode and
torch.utils.checkpoint. Gradients are compared with a central-difference helper written here
(independent of the gradcheck under test), expected values and messages with PyTorch 2.13's."""

from __future__ import annotations

import warnings

import pytest

import torch
import torch.autograd.functional as F
from torch.autograd import anomaly_mode
from torch.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from torch.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

f64 = torch.float64


def numeric_jacobian(fn, x, eps=1e-6):
    """d fn(x) / d x by central differences, shape ``fn(x).shape + x.shape``."""
    x = x.detach()
    flat = x.reshape(-1)
    cols = []
    for k in range(flat.numel()):
        step = torch.zeros(flat.numel(), dtype=x.dtype)
        step[k] = eps
        hi = fn((flat + step).reshape(x.shape)).detach()
        lo = fn((flat - step).reshape(x.shape)).detach()
        cols.append(((hi - lo) / (2 * eps)).reshape(-1))
    out_shape = tuple(fn(x).shape)
    return torch.stack(cols, 1).reshape(out_shape + tuple(x.shape))


def diag(v):
    return torch.eye(v.numel(), dtype=v.dtype) * v


def rand(*shape, requires_grad=False):
    return torch.randn(*shape, dtype=f64).requires_grad_(requires_grad)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


# -- custom Functions with known-wrong derivatives --------------------------------------------


class WrongScale(torch.autograd.Function):
    """y = 2 x, but backward claims 3."""

    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


class IgnoresGradOutput(torch.autograd.Function):
    """y = sum(x); backward returns ones whatever the output gradient is."""

    @staticmethod
    def forward(ctx, a):
        return a.sum()

    @staticmethod
    def backward(ctx, g):
        return torch.ones(3, dtype=f64)


class Nondeterministic(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 1

    @staticmethod
    def backward(ctx, g):
        return g * (1 + 1e-8 * torch.rand(g.shape, dtype=f64))


class SquareFirstOrderOnly(torch.autograd.Function):
    """y = x**2 with a backward that detaches x: right first, wrong second derivative."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * 2 * a.detach()


# -- gradcheck ------------------------------------------------------------------------------


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_passes_on_correct_gradients(fast_mode):
    x, y = rand(3, 4, requires_grad=True), rand(4, requires_grad=True)
    assert gradcheck(lambda a, b: (a * b).sin(), (x, y), fast_mode=fast_mode)
    # several outputs, a non-tensor argument, an input that needs no grad
    z = rand(4)
    assert gradcheck(lambda a, k, c: (a.exp() * k, (a * c).sum()), (x, 2.0, z),
                     fast_mode=fast_mode)
    assert gradcheck(lambda a: a.tanh(), rand(5, requires_grad=True), fast_mode=fast_mode)


def test_gradcheck_jacobian_mismatch_message():
    x = torch.tensor([0.5, -1.0], dtype=f64, requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongScale.apply, (x,))
    msg = str(info.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "\nanalytical:" in msg
    # rows are input elements, columns output elements, as PyTorch prints them
    numerical = msg.split("numerical:")[1].split("\nanalytical:")[0]
    assert "[[2.0000, 0.0000]," in numerical
    assert "[[3., 0.]," in msg.split("analytical:")[1]
    assert isinstance(info.value, RuntimeError)


def test_gradcheck_fast_mode_failure_reports_slow_jacobians():
    x = rand(2, requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongScale.apply, (x,), fast_mode=True)
    msg = str(info.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "Below, we recompute numerical and analytical jacobians in slow mode" in msg
    assert "The max per-element difference (slow mode) is: 1.0" in msg


def test_gradcheck_raise_exception_false_returns_false():
    x = rand(2, requires_grad=True)
    assert gradcheck(WrongScale.apply, (x,), raise_exception=False) is False
    assert gradcheck(WrongScale.apply, (x,), raise_exception=False, fast_mode=True) is False
    assert gradcheck(lambda a: a * 2, (x,), raise_exception=False) is True


def test_gradcheck_index_counts_only_inputs_that_require_grad():
    a, b = rand(2), rand(2, requires_grad=True)

    def fn(p, q):
        return p + WrongScale.apply(q)

    with pytest.raises(GradcheckError, match="output 0 with respect to input 0,"):
        gradcheck(fn, (a, b))


def test_gradcheck_backward_not_multiplied_by_grad_output():
    x = rand(3, requires_grad=True)
    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(IgnoresGradOutput.apply, (x,))


def test_gradcheck_nondeterministic_backward_and_nondet_tol():
    x = rand(3, requires_grad=True)
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(Nondeterministic.apply, (x,))
    assert gradcheck(Nondeterministic.apply, (x,), nondet_tol=1e-6)


def test_gradcheck_input_checks():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2, (rand(2),))
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double"):
        gradcheck(lambda a: a * 2, (torch.randn(2, requires_grad=True),),
                  raise_exception=False)
    expanded = rand(1).expand(3).detach().requires_grad_()
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(lambda a: a * 2, (expanded,))
    with pytest.raises(NotImplementedError, match="check_batched_grad"):
        gradcheck(lambda a: a * 2, (rand(2, requires_grad=True),), check_batched_grad=True)
    with pytest.raises(AssertionError):
        gradcheck(lambda a: a, (rand(2, requires_grad=True),), check_backward_ad=False)


def test_gradcheck_outputs_without_grad():
    x = rand(3, requires_grad=True)
    # piecewise constant: numerically zero, and no output requires grad
    assert gradcheck(lambda a: (a > 0).to(f64), (x,))
    assert gradcheck(lambda a: (a > 0).to(f64), (x,), fast_mode=True)
    # a detached output that does depend on the input is an error
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda a: a.detach() * 2, (x,))


def test_gradcheck_tuple_and_list_inputs_and_single_tensor():
    x = rand(2, 2, requires_grad=True)
    assert gradcheck(lambda a: a @ a, x)
    assert gradcheck(lambda a, b: a * b, [x, rand(2, 2, requires_grad=True)])


def test_gradcheck_does_not_touch_the_callers_rng_or_inputs():
    x = rand(3, requires_grad=True)
    before = x.detach().clone()
    state = torch.get_rng_state()
    gradcheck(torch.sin, (x,), fast_mode=True)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(x.detach(), before) and x.grad is None


def test_gradgradcheck_passes_and_detects_wrong_double_backward():
    x, y = rand(3, requires_grad=True), rand(3, requires_grad=True)
    assert gradgradcheck(lambda a, b: (a * b).sin() * a, (x, y))
    assert gradgradcheck(lambda a, b: (a * b).sin() * a, (x, y), fast_mode=True)
    assert gradgradcheck(lambda a: a.exp(), (x,), grad_outputs=(rand(3, requires_grad=True),))
    # the first derivative is right ...
    assert gradcheck(SquareFirstOrderOnly.apply, (x,))
    # ... the second is not (d/dx of 2 g x is 2 g, but the detached x drops it)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to"):
        gradgradcheck(SquareFirstOrderOnly.apply, (x,))
    assert gradgradcheck(SquareFirstOrderOnly.apply, (x,), raise_exception=False) is False


# -- torch.autograd.functional --------------------------------------------------------------


def test_jacobian_matches_finite_differences_and_shapes():
    x = rand(2, 3)
    jac = F.jacobian(lambda a: a.sin() * a.sum(), x)
    assert jac.shape == (2, 3, 2, 3)
    expected = numeric_jacobian(lambda a: a.sin() * a.sum(), x)
    assert torch.allclose(jac, expected, atol=1e-7)
    assert not jac.requires_grad


def test_jacobian_tuple_structure():
    x, y = rand(3), rand(2)

    def fn(a, b):
        return a.exp() * b.sum(), (b * b).sum()

    jac = F.jacobian(fn, (x, y))
    assert isinstance(jac, tuple) and len(jac) == 2 and len(jac[0]) == 2
    assert jac[0][0].shape == (3, 3) and jac[0][1].shape == (3, 2)
    assert jac[1][0].shape == (3,) and jac[1][1].shape == (2,)
    assert torch.allclose(jac[0][1], numeric_jacobian(lambda b: x.exp() * b.sum(), y))
    assert torch.allclose(jac[1][1], 2 * y)
    assert torch.equal(jac[1][0], torch.zeros(3, dtype=f64))  # independent: zeros
    # tuple of inputs, single output: one level
    single = F.jacobian(lambda a, b: a * b.sum(), (x, y))
    assert isinstance(single, tuple) and single[0].shape == (3, 3)


def test_jacobian_strict_and_strategy():
    x, y = rand(3), rand(2)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                                           "independent of input 1"):
        F.jacobian(lambda a, b: a * 2, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not "
                                           "require gradients"):
        F.jacobian(lambda a: torch.ones(2, dtype=f64), x, strict=True)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(lambda a: a, x, strategy="forward-mode")
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor "
                                        "or a tuple of Tensors but the value at index 1"):
        F.jacobian(lambda a, b: a, (x, 3))
    assert torch.allclose(F.jacobian(lambda a: 2 * a, x, vectorize=True),
                          2 * torch.eye(3, dtype=f64))


def test_jacobian_create_graph_gives_second_derivatives():
    x = rand(3, requires_grad=True)
    jac = F.jacobian(lambda a: a.sin() * a, x, create_graph=True)
    assert jac.requires_grad
    (second,) = torch.autograd.grad(jac.sum(), x)

    def first_row_sums(a):
        return F.jacobian(lambda b: b.sin() * b, a).sum()

    expected = numeric_jacobian(first_row_sums, x.detach())
    assert torch.allclose(second, expected, atol=1e-6)


def test_hessian():
    x = rand(3)
    hess = F.hessian(lambda a: (a ** 3).sum(), x)
    assert torch.allclose(hess, diag(6 * x))
    y = rand(3)
    hess = F.hessian(lambda a, b: (a * b * a).sum(), (x, y))
    assert torch.allclose(hess[0][0], diag(2 * y))
    assert torch.allclose(hess[0][1], diag(2 * x))
    assert torch.allclose(hess[1][0], diag(2 * x))
    assert torch.allclose(hess[1][1], torch.zeros(3, 3, dtype=f64))
    with pytest.raises(RuntimeError, match="should contain a single element"):
        F.hessian(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match="should return a single Tensor"):
        F.hessian(lambda a: (a.sum(), a.sum()), x)


def test_vjp_and_jvp():
    x, v_in, v_out = rand(3), rand(3), rand(2)

    def fn(a):
        return torch.stack([(a * a).sum(), a.sin().sum()])

    jac = numeric_jacobian(fn, x)
    out, vjp = F.vjp(fn, x, v_out)
    assert torch.allclose(out, fn(x))
    assert torch.allclose(vjp, v_out @ jac, atol=1e-7)
    out, jvp = F.jvp(fn, x, v_in)
    assert torch.allclose(jvp, jac @ v_in, atol=1e-7)
    assert not jvp.requires_grad and not out.requires_grad
    # tuples in and out
    out, jvps = F.jvp(lambda a, b: (a * b, a.exp()), (x, x), (v_in, v_in))
    assert isinstance(jvps, tuple)
    assert torch.allclose(jvps[0], 2 * x * v_in) and torch.allclose(jvps[1], x.exp() * v_in)
    # v may be omitted for one-element outputs (vjp) and inputs (jvp)
    _, g = F.vjp(lambda a: (a * a).sum(), x)
    assert torch.allclose(g, 2 * x)
    _, d = F.jvp(lambda a: a * torch.arange(3, dtype=f64), torch.tensor([2.0], dtype=f64))
    assert torch.allclose(d, torch.arange(3, dtype=f64))


def test_vjp_jvp_errors():
    x = rand(3)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided "
                                           "function returns a single Tensor with a single"):
        F.vjp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the input to the "
                                           "user-provided function is a single Tensor"):
        F.jvp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be torch.Size\(\[3\]\) "
                                           r"but got torch.Size\(\[2\]\)"):
        F.vjp(lambda a: a * 2, x, rand(2))
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2 but got 1"):
        F.jvp(lambda a, b: a * b, (x, x), (x,))
    with pytest.raises(RuntimeError, match="The output of the user-provided function is "
                                           "independent of input 1"):
        F.vjp(lambda a, b: a * 2, (x, x), x, strict=True)


def test_jvp_create_graph_is_differentiable():
    x, v = rand(3, requires_grad=True), rand(3)
    _, jvp = F.jvp(lambda a: a.sin() * a, x, v, create_graph=True)
    assert jvp.requires_grad
    (grad,) = torch.autograd.grad(jvp.sum(), x)
    expected = numeric_jacobian(lambda a: F.jvp(lambda b: b.sin() * b, a, v)[1].sum(), x)
    assert torch.allclose(grad, expected, atol=1e-6)


def test_hvp_and_vhp():
    x, y, v = rand(3), rand(3), rand(3)

    def fn(a):
        return (a.sin() * a * a).sum()

    hess = F.hessian(fn, x)
    out, hvp = F.hvp(fn, x, v)
    assert torch.allclose(out, fn(x))
    assert torch.allclose(hvp, hess @ v)
    _, vhp = F.vhp(fn, x, v)
    assert torch.allclose(vhp, v @ hess)
    _, (h0, h1) = F.hvp(lambda a, b: (a * a * b).sum(), (x, y), (v, v))
    assert torch.allclose(h0, 2 * y * v + 2 * x * v)
    assert torch.allclose(h1, 2 * x * v)
    with pytest.raises(RuntimeError, match="The function given to hvp should return a single"):
        F.hvp(lambda a: (a.sum(), a.sum()), x, v)
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to vhp "
                                           "should contain a single element"):
        F.vhp(lambda a: a * a, x, v)


def test_functional_leaves_inputs_alone():
    x = rand(3, requires_grad=True)
    F.jacobian(torch.sin, x)
    F.vjp(torch.sin, x, rand(3))
    assert x.grad is None and x.requires_grad and x.is_leaf


# -- anomaly mode -----------------------------------------------------------------------------


@pytest.fixture
def anomaly_off():
    yield
    anomaly_mode.set_anomaly_enabled(False, True)


def test_set_detect_anomaly_as_function_and_context(anomaly_off):
    assert not anomaly_mode.is_anomaly_enabled()
    anomaly_mode.set_detect_anomaly(True)
    assert anomaly_mode.is_anomaly_enabled() and anomaly_mode.is_anomaly_check_nan_enabled()
    anomaly_mode.set_detect_anomaly(False)
    assert not anomaly_mode.is_anomaly_enabled()
    with anomaly_mode.set_detect_anomaly(True, check_nan=False):
        assert anomaly_mode.is_anomaly_enabled()
        assert not anomaly_mode.is_anomaly_check_nan_enabled()
    assert not anomaly_mode.is_anomaly_enabled() and anomaly_mode.is_anomaly_check_nan_enabled()


def test_detect_anomaly_reports_nan_with_forward_traceback(anomaly_off):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with anomaly_mode.detect_anomaly():
            assert anomaly_mode.is_anomaly_enabled()
            x = torch.tensor([0.0, 1.0], requires_grad=True)
            y = x.sqrt() * 0  # the line the warning must point at
            with pytest.raises(RuntimeError) as info:
                y.sum().backward()
        assert not anomaly_mode.is_anomaly_enabled()
    assert str(info.value) == "Function 'SqrtBackward0' returned nan values in its 0th output."
    messages = [str(w.message) for w in caught]
    assert messages[0] == ("Anomaly Detection has been enabled. This mode will increase the "
                           "runtime and should only be enabled for debugging.")
    trace = [m for m in messages if m.startswith("Error detected in SqrtBackward0. Traceback of "
                                                 "forward call that caused the error:\n")]
    assert trace and "y = x.sqrt() * 0  # the line the warning must point at" in trace[0]
    assert __file__ in trace[0]


def test_detect_anomaly_without_nan_check_and_when_off(anomaly_off):
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        manager = anomaly_mode.detect_anomaly(check_nan=False)
    with manager:
        (x.sqrt() * 0).sum().backward()  # nan gradient, no error
    assert torch.isnan(x.grad).any()
    x.grad = None
    (x.sqrt() * 0).sum().backward()  # anomaly mode off: no error either
    assert torch.isnan(x.grad).any()


def test_detect_anomaly_decorator(anomaly_off):
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        @anomaly_mode.detect_anomaly()
        def run():
            assert anomaly_mode.is_anomaly_enabled()
            x = torch.tensor([0.0], requires_grad=True)
            x.sqrt().sum().backward()  # grad inf, not nan: fine
            return x.grad

    assert not anomaly_mode.is_anomaly_enabled()
    assert torch.isinf(run()).all()
    assert not anomaly_mode.is_anomaly_enabled()


def test_anomaly_nan_in_custom_function_backward(anomaly_off):
    class NanBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with anomaly_mode.detect_anomaly():
            with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
                NanBackward.apply(x).sum().backward()


# -- checkpoint -------------------------------------------------------------------------------


def _dropout_block(weight):
    calls = []

    def block(a):
        calls.append(1)
        h = (a @ weight).tanh()
        keep = (torch.rand(h.shape) > 0.5).to(h.dtype)
        return (h * keep * 2).sin()

    return block, calls


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_matches_plain_forward_and_backward(use_reentrant):
    weight = rand(4, 4, requires_grad=True)
    x = rand(3, 4, requires_grad=True)
    block, calls = _dropout_block(weight)

    state = torch.get_rng_state()
    plain = block(x)
    plain.sum().backward()
    expected = (x.grad.clone(), weight.grad.clone())
    x.grad = weight.grad = None

    torch.set_rng_state(state)
    calls.clear()
    out = checkpoint(block, x, use_reentrant=use_reentrant)
    assert torch.equal(out, plain)
    assert len(calls) == 1  # forward only, so far
    after_forward = torch.get_rng_state()
    out.sum().backward()
    assert len(calls) == 2  # recomputed in backward
    # the recomputation draws the forward's random numbers, and leaves the stream alone
    assert torch.allclose(x.grad, expected[0]) and torch.allclose(weight.grad, expected[1])
    assert torch.equal(torch.get_rng_state(), after_forward)


def test_checkpoint_keeps_no_activations():
    weight = rand(4, 4, requires_grad=True)
    packed = []

    def pack(t):
        packed.append(t)
        return t

    block, _ = _dropout_block(weight)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        block(rand(3, 4, requires_grad=True))
    assert packed  # the plain forward saves activations
    packed.clear()
    x = rand(3, 4, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        checkpoint(block, x, use_reentrant=False)
    # checkpoint's own hooks took every activation; at most the input itself is kept
    assert all(p is x for p in packed)


def test_checkpoint_input_modified_in_place_is_an_error():
    x = rand(3, requires_grad=True)
    y = x * 1
    out = checkpoint(torch.sin, y, use_reentrant=False)
    with torch.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_checkpoint_with_autograd_grad_kwargs_and_params_only():
    weight = rand(3, requires_grad=True)
    x = rand(3)  # needs no grad: the parameter alone must still get its gradient

    def fn(a, scale=1.0):
        return (a * weight).exp() * scale

    out = checkpoint(fn, x, use_reentrant=False, scale=2.0)
    (g,) = torch.autograd.grad(out.sum(), weight)
    assert torch.allclose(g, 2 * x * (x * weight).exp())


def test_checkpoint_without_preserved_rng_state_recomputes_with_new_numbers():
    x = rand(1000, requires_grad=True)
    out = checkpoint(lambda a: a * torch.rand(1000, dtype=f64), x, use_reentrant=False,
                     preserve_rng_state=False)
    factor = out.detach() / x.detach()
    out.sum().backward()
    assert not torch.allclose(x.grad, factor)


def test_checkpoint_use_reentrant_flag():
    x = rand(3, requires_grad=True)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed "
                                         "explicitly"):
        out = checkpoint(torch.sin, x)
    out.sum().backward()
    assert torch.allclose(x.grad, x.detach().cos())
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda a, scale: a * scale, x, use_reentrant=True, scale=2.0)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(torch.sin, x, use_reentrant=True, debug=True)


def test_checkpoint_detects_a_different_recomputation():
    x = rand(4, requires_grad=True)
    calls = []

    def changes_shape(a):
        calls.append(1)
        n = 4 if len(calls) == 1 else 2
        return (a[:n].exp() * a[:n]).sum()

    out = checkpoint(changes_shape, x, use_reentrant=False)
    with pytest.raises(CheckpointError):
        out.backward()


def test_checkpoint_sequential():
    weights = [rand(4, 4, requires_grad=True) for _ in range(4)]
    layers = [lambda a, w=w: (a @ w).tanh() for w in weights]
    x = rand(2, 4, requires_grad=True)

    plain = x
    for layer in layers:
        plain = layer(plain)
    expected = torch.autograd.grad(plain.sum(), [x, *weights])

    out = checkpoint_sequential(layers, 2, x, use_reentrant=False)
    assert torch.allclose(out, plain)
    got = torch.autograd.grad(out.sum(), [x, *weights])
    for g, e in zip(got, expected):
        assert torch.allclose(g, e)
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter"):
        checkpoint_sequential(layers, 2, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint_sequential(layers, 2, x, use_reentrant=False, foo=1)


def test_checkpoint_helpers_libraries_import():
    """torch.utils.checkpoint's helpers (sentence-transformers' GradCache imports
    get_device_states/set_device_states): no accelerator tensors give no states; detach_variable
    keeps requires_grad and refuses a non-tuple; check_backward_validity warns."""
    import warnings

    from torch.utils.checkpoint import (
        DefaultDeviceType,
        check_backward_validity,
        detach_variable,
        get_device_states,
        set_device_states,
    )

    assert get_device_states(torch.ones(2), [torch.zeros(1)], {"a": 1}) == ([], [])
    set_device_states([], [])  # nothing to restore
    x = torch.ones(2, requires_grad=True)
    detached, number = detach_variable((x, 3))
    assert detached.requires_grad and detached.grad_fn is None and detached is not x
    assert number == 3
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported"):
        detach_variable([x])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_backward_validity([torch.ones(1)])
        check_backward_validity([x])
    assert [str(w.message) for w in caught] == [
        "None of the inputs have requires_grad=True. Gradients will be None"]
    assert DefaultDeviceType.get_device_type() == "cuda"
