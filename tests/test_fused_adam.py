"""The fused Adam/AdamW steps (``torch._fused_adam_``, ``torch._fused_adamw_``): trajectories
against a plain numpy implementation of torch.optim.Adam's single-tensor math, PyTorch's checks,
and the native CPU kernel against core's composite."""

from __future__ import annotations

import math

import numpy as np
import pytest

import torch
from torch._core import dispatch as _dispatch
from torch._fused import adam as _fused_adam

torch.ones(1) + 1  # the first op registers the backend's kernels (fused ones included)


def fused_registered() -> bool:
    op = _dispatch.get("aten::_fused_adam_")
    return op is not None and op.has_kernel("CPU")


# -- numpy reference ----------------------------------------------------------------------


def np_step(p, g, m, v, vmax, step, *, lr, beta1, beta2, weight_decay, eps, amsgrad,
            maximize, decoupled, grad_scale=None):
    """One step of torch.optim.Adam's single-tensor path, in the arrays' dtype."""
    dt = p.dtype.type
    if grad_scale is not None:
        g = g / dt(grad_scale)
    gs = g
    if maximize:
        gs = -gs
    if weight_decay:
        if decoupled:
            p = p * dt(1 - lr * weight_decay)
        else:
            gs = gs + p * dt(weight_decay)
    m = m + dt(1 - beta1) * (gs - m)
    v = v * dt(beta2) + dt(1 - beta2) * gs * gs
    bias_correction1 = 1 - beta1 ** step
    bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
    if amsgrad:
        vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax) / dt(bias_correction2_sqrt) + dt(eps)
    else:
        denom = np.sqrt(v) / dt(bias_correction2_sqrt) + dt(eps)
    p = p + dt(-lr / bias_correction1) * (m / denom)
    return p, g, m, v, vmax


CONFIGS = [
    dict(amsgrad=False, maximize=False, weight_decay=0.0),
    dict(amsgrad=True, maximize=False, weight_decay=0.0),
    dict(amsgrad=False, maximize=True, weight_decay=0.1),
    dict(amsgrad=True, maximize=True, weight_decay=0.05),
]
SHAPES = [(3, 4), (7,), (0,), (), (300, 129)]
TOL = {np.float64: dict(atol=1e-13, rtol=1e-12), np.float32: dict(atol=1e-6, rtol=1e-5)}


def _state(rng, dtype, shapes, amsgrad):
    arrays = {
        "params": [rng.standard_normal(s).astype(dtype) for s in shapes],
        "grads": [rng.standard_normal(s).astype(dtype) for s in shapes],
        "exp_avgs": [np.zeros(s, dtype) for s in shapes],
        "exp_avg_sqs": [np.zeros(s, dtype) for s in shapes],
        "max_exp_avg_sqs": [np.zeros(s, dtype) for s in shapes] if amsgrad else [],
    }
    tensors = {k: [torch.tensor(a) for a in v] for k, v in arrays.items()}
    return arrays, tensors


@pytest.mark.parametrize("decoupled", [False, True], ids=["adam", "adamw"])
@pytest.mark.parametrize("config", CONFIGS, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_trajectory_matches_numpy(dtype, config, decoupled):
    rng = np.random.default_rng(0)
    arrays, tensors = _state(rng, dtype, SHAPES, config["amsgrad"])
    steps = [torch.tensor(0.0) for _ in SHAPES]
    fn = torch._fused_adamw_ if decoupled else torch._fused_adam_
    hyper = dict(lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, **config)
    for step in range(1, 6):
        new_grads = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
        for i, g in enumerate(new_grads):
            arrays["grads"][i] = g
            tensors["grads"][i].copy_(torch.tensor(g))
            steps[i].add_(1)
        fn(tensors["params"], tensors["grads"], tensors["exp_avgs"], tensors["exp_avg_sqs"],
           tensors["max_exp_avg_sqs"], steps, **hyper)
        for i in range(len(SHAPES)):
            vmax = arrays["max_exp_avg_sqs"][i] if config["amsgrad"] else None
            p, _, m, v, vmax = np_step(arrays["params"][i], arrays["grads"][i],
                                       arrays["exp_avgs"][i], arrays["exp_avg_sqs"][i], vmax,
                                       step, decoupled=decoupled, **hyper)
            arrays["params"][i], arrays["exp_avgs"][i], arrays["exp_avg_sqs"][i] = p, m, v
            if config["amsgrad"]:
                arrays["max_exp_avg_sqs"][i] = vmax
    for name in ("params", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs"):
        for got, want in zip(tensors[name], arrays[name]):
            np.testing.assert_allclose(got.numpy(), want, err_msg=name, **TOL[dtype])
    assert [s.item() for s in steps] == [5.0] * len(SHAPES)  # the kernel leaves steps alone


@pytest.mark.parametrize("decoupled", [False, True], ids=["adam", "adamw"])
def test_tensor_lr_grad_scale_and_found_inf(decoupled):
    rng = np.random.default_rng(1)
    arrays, tensors = _state(rng, np.float64, [(5, 3)], amsgrad=False)
    fn = torch._fused_adamw_ if decoupled else torch._fused_adam_
    hyper = dict(beta1=0.8, beta2=0.99, weight_decay=0.2, eps=1e-6, amsgrad=False,
                 maximize=False)
    args = (tensors["params"], tensors["grads"], tensors["exp_avgs"], tensors["exp_avg_sqs"],
            [], [torch.tensor(1.0)])
    before = [t.clone() for t in tensors["params"] + tensors["grads"]]
    fn(*args, lr=torch.tensor(0.05), grad_scale=torch.tensor(4.0),
       found_inf=torch.tensor(1.0), **hyper)
    for got, want in zip(tensors["params"] + tensors["grads"], before):
        torch.testing.assert_close(got, want, atol=0, rtol=0)  # found_inf skips the step
    fn(*args, lr=torch.tensor(0.05), grad_scale=torch.tensor(4.0),
       found_inf=torch.tensor(0.0), **hyper)
    p, g, m, v, _ = np_step(arrays["params"][0], arrays["grads"][0], arrays["exp_avgs"][0],
                            arrays["exp_avg_sqs"][0], None, 1.0,
                            lr=torch.tensor(0.05).item(),  # the float32 value of the tensor
                            decoupled=decoupled, grad_scale=4.0, **hyper)
    np.testing.assert_allclose(tensors["params"][0].numpy(), p, rtol=1e-12)
    np.testing.assert_allclose(tensors["grads"][0].numpy(), g, rtol=1e-15)  # unscaled
    np.testing.assert_allclose(tensors["exp_avgs"][0].numpy(), m, rtol=1e-12)
    np.testing.assert_allclose(tensors["exp_avg_sqs"][0].numpy(), v, rtol=1e-12)


def test_lerp_weight_at_least_half():
    # beta1 <= 0.5 takes torch.lerp's other formula
    rng = np.random.default_rng(2)
    arrays, tensors = _state(rng, np.float64, [(64,)], amsgrad=False)
    hyper = dict(lr=0.1, beta1=0.3, beta2=0.9, weight_decay=0.0, eps=1e-8, amsgrad=False,
                 maximize=False)
    torch._fused_adam_(tensors["params"], tensors["grads"], tensors["exp_avgs"],
                       tensors["exp_avg_sqs"], [], [torch.tensor(1.0)], **hyper)
    g, m = arrays["grads"][0], arrays["exp_avgs"][0]
    want_m = g - (g - m) * 0.3
    np.testing.assert_allclose(tensors["exp_avgs"][0].numpy(), want_m, rtol=1e-15)


def test_no_autograd_recording():
    p = torch.randn(4, 3).requires_grad_()
    g = torch.randn(4, 3)
    torch._fused_adam_([p], [g], [torch.zeros(4, 3)], [torch.zeros(4, 3)], [],
                       [torch.tensor(1.0)], lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0,
                       eps=1e-8, amsgrad=False, maximize=False)
    assert p.requires_grad and p.grad_fn is None and p.is_leaf


# -- PyTorch's checks ---------------------------------------------------------------------


def _call(params=None, grads=None, m=None, v=None, vmax=(), steps=None, **kwargs):
    n = 2
    params = params if params is not None else [torch.randn(3) for _ in range(n)]
    hyper = dict(lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False,
                 maximize=False)
    hyper.update(kwargs)
    torch._fused_adam_(params, grads if grads is not None else [torch.randn(3)] * n,
                       m if m is not None else [torch.zeros(3) for _ in range(n)],
                       v if v is not None else [torch.zeros(3) for _ in range(n)],
                       list(vmax), steps if steps is not None else [torch.tensor(1.0)] * n,
                       **hyper)


@pytest.mark.parametrize("call, error, match", [
    (lambda: _call(vmax=[torch.zeros(3)] * 2), RuntimeError, "max_exp_avg_sqs.empty"),
    (lambda: _call(amsgrad=True), RuntimeError, "max_exp_avg_sqs.size"),
    (lambda: _call(v=[torch.zeros(3)]), RuntimeError, "exp_avg_sqs.size"),
    (lambda: _call(grads=[torch.randn(3, dtype=torch.float64)] * 2), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: _call(params=[torch.ones(3, dtype=torch.int32)] * 2), NotImplementedError,
     "not implemented for 'Int'"),
    (lambda: _call(grad_scale=torch.tensor(2.0, dtype=torch.float64)), RuntimeError,
     "expected scalar type Float"),
    (lambda: _call(steps=[torch.tensor([1.0, 2.0])] * 2), RuntimeError, "2 elements"),
    (lambda: _call(grads=[torch.randn(2)] * 2), RuntimeError, "shape"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- native kernel vs composite -----------------------------------------------------------


def _run_both(make, dtype, decoupled, **hyper):
    """The public function (native kernel where registered) and the composite on copies of
    the same state; returns both states."""
    states = []
    for fn in ((torch._fused_adamw_ if decoupled else torch._fused_adam_),
               (_fused_adam.adamw_composite if decoupled else _fused_adam.adam_composite)):
        state = make()
        with torch.no_grad():
            fn(*state, **hyper)
        states.append(state)
    return states


@pytest.mark.skipif(not fused_registered(), reason="no fused CPU Adam kernel")
@pytest.mark.parametrize("decoupled", [False, True], ids=["adam", "adamw"])
@pytest.mark.parametrize("config", CONFIGS, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_native_matches_composite(dtype, config, decoupled):
    shapes = [(0,), (1,), (7,), (33, 31), (70001,), (), (4, 5)]

    def make():
        gen = torch.Generator().manual_seed(3)
        params = [torch.randn(*s, generator=gen).to(dtype) for s in shapes]
        grads = [torch.randn(*s, generator=gen).to(dtype) for s in shapes]
        m = [(0.1 * torch.randn(*s, generator=gen)).to(dtype) for s in shapes]
        v = [torch.rand(*s, generator=gen).to(dtype) for s in shapes]
        vmax = [torch.rand(*s, generator=gen).to(dtype) for s in shapes] \
            if config["amsgrad"] else []
        steps = [torch.tensor(float(i + 1)) for i in range(len(shapes))]
        # a non-contiguous parameter row takes the composite inside the native wrapper
        params[3] = torch.randn(31, 33, generator=gen).to(dtype).t()
        return params, grads, m, v, vmax, steps

    native, composite = _run_both(make, dtype, decoupled, lr=0.01, beta1=0.9, beta2=0.99,
                                  eps=1e-8, grad_scale=torch.tensor(2.0), **config)
    tol = {torch.float32: dict(atol=1e-6, rtol=1e-6), torch.float64: dict(atol=1e-14,
                                                                          rtol=1e-14),
           torch.float16: dict(atol=1e-3, rtol=1e-3), torch.bfloat16: dict(atol=1e-2,
                                                                           rtol=1e-2)}[dtype]
    for got_list, want_list in zip(native[:5], composite[:5]):
        for got, want in zip(got_list, want_list):
            assert got.dtype == dtype
            torch.testing.assert_close(got, want, **tol)


@pytest.mark.skipif(not fused_registered(), reason="no fused CPU Adam kernel")
def test_native_mixed_dtypes_and_thread_independence():
    def make():
        gen = torch.Generator().manual_seed(4)
        dts = [torch.float32, torch.float64, torch.float32, torch.float16]
        params = [torch.randn(50000, generator=gen).to(d) for d in dts]
        grads = [torch.randn(50000, generator=gen).to(d) for d in dts]
        return (params, grads, [torch.zeros_like(p) for p in params],
                [torch.zeros_like(p) for p in params], [], [torch.tensor(2.0)] * len(dts))

    hyper = dict(lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.01, eps=1e-8, amsgrad=False,
                 maximize=False)
    native, composite = _run_both(make, None, True, **hyper)
    for got, want in zip(native[0], composite[0]):
        torch.testing.assert_close(got, want, atol=1e-3 if got.dtype == torch.float16 else 1e-6,
                                   rtol=1e-5)
    threads = torch.get_num_threads()
    try:
        results = []
        for n in (1, 2):
            torch.set_num_threads(n)
            state = make()
            torch._fused_adamw_(*state, **hyper)
            results.append(state[0])
    finally:
        torch.set_num_threads(threads)
    for a, b in zip(*results):
        torch.testing.assert_close(a, b, atol=0, rtol=0)


def test_composite_runs_without_backend_kernel():
    # the composite itself (the reference every backend falls back to) on one tensor
    p, g = torch.tensor([1.0, -2.0]), torch.tensor([0.5, 0.25])
    m, v = torch.zeros(2), torch.zeros(2)
    _fused_adam.adam_composite([p], [g], [m], [v], [], [torch.tensor(1.0)], lr=0.1, beta1=0.9,
                               beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False,
                               maximize=False)
    # the first Adam step moves each parameter by about lr against the gradient's sign
    torch.testing.assert_close(p, torch.tensor([0.9, -2.1]), atol=1e-6, rtol=0)


@pytest.mark.parametrize("decoupled", [False, True], ids=["adam", "adamw"])
def test_shared_memory_takes_the_sequential_path(decoupled):
    # a tensor listed twice, and two views of one buffer: updated one after the other
    def make():
        gen = torch.Generator().manual_seed(5)
        base = torch.randn(40000, generator=gen)
        p = torch.randn(30000, generator=gen)
        params = [p, p, base[:25000], base[15000:]]
        grads = [torch.randn(t.shape, generator=gen) for t in params]
        m = [torch.zeros(t.shape) for t in params]
        v = [torch.zeros(t.shape) for t in params]
        return params, grads, m, v, [], [torch.tensor(1.0)] * 4

    native, composite = _run_both(make, None, decoupled, lr=0.1, beta1=0.9, beta2=0.999,
                                  weight_decay=0.1, eps=1e-8, amsgrad=False, maximize=False)
    for got, want in zip(native[0], composite[0]):
        torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-6)


# -- the native kernel's per-row reads ----------------------------------------------------


def test_overlap_test_matches_pairwise_comparison():
    from plait_backend_cpu.kernels.optim import _overlap

    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 7))
        starts = [int(s) for s in rng.integers(0, 40, n)]
        ends = [s + int(w) for s, w in zip(starts, rng.integers(1, 12, n))]
        pairwise = any(starts[a] < ends[b] and starts[b] < ends[a]
                       for a in range(n) for b in range(a + 1, n))
        assert _overlap(starts, ends) == pairwise, (starts, ends)
    assert not _overlap([0, 8], [8, 16])  # touching spans share no byte
    assert _overlap([0, 7], [8, 16])


def test_rows_give_each_contiguous_host_row_its_addresses():
    from torch.backends import contract

    base = torch.zeros(4, 3)
    params = [torch.zeros(5), base[:, 0], torch.zeros(2, 3)[1]]  # contiguous, strided, offset
    grads = [torch.ones(5), torch.ones(4), torch.ones(3)]
    m = [torch.zeros(5), torch.zeros(4), torch.zeros(3)]
    v = [torch.zeros(5), torch.zeros(4), torch.zeros(3)]
    rate, rows = contract.check_fused_adam_rows("_fused_adam_", params, grads, m, v, [],
                                                [torch.tensor(1.0)] * 3, False,
                                                torch.tensor(0.5), None, None)
    assert rate == 0.5
    assert [count for count, _ in rows] == [5, 4, 3]
    assert rows[0][1] == tuple(t.data_ptr() for t in (params[0], grads[0], m[0], v[0]))
    assert rows[1][1] is None  # a column of a (4, 3) matrix is not contiguous
    assert rows[2][1][0] == params[2].data_ptr() != params[2].untyped_storage().data_ptr()


@pytest.mark.skipif(not fused_registered(), reason="no fused CPU Adam kernel")
def test_native_reads_step_counts_of_every_dtype_and_offset():
    # step counts as PyTorch may hold them after loading older state: float64, an integer,
    # a one-element 1-D tensor, and a 0-d view into a larger buffer (a storage offset)
    counts = torch.tensor([0.0, 3.0, 0.0])

    def make():
        gen = torch.Generator().manual_seed(9)
        params = [torch.randn(6, generator=gen) for _ in range(5)]
        grads = [torch.randn(6, generator=gen) for _ in range(5)]
        steps = [torch.tensor(2.0, dtype=torch.float64), torch.tensor(4), torch.tensor([5.0]),
                 counts[1], torch.tensor(1.0)]
        return (params, grads, [torch.zeros(6) for _ in range(5)],
                [torch.zeros(6) for _ in range(5)], [], steps)

    state = make()
    torch._fused_adam_(*state, lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8,
                       amsgrad=False, maximize=False)
    for p, g, step, p0 in zip(state[0], state[1], (2, 4, 5, 3, 1), make()[0]):
        want, *_ = np_step(p0.numpy(), g.numpy(), np.zeros(6, np.float32),
                           np.zeros(6, np.float32), None, step, lr=0.1, beta1=0.9,
                           beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False,
                           maximize=False, decoupled=False)
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(not fused_registered(), reason="no fused CPU Adam kernel")
def test_strided_row_sharing_a_native_rows_memory_keeps_list_order():
    # the strided column goes to the composite; it shares the matrix's memory, so the matrix
    # (native) must not be updated ahead of it: both take the sequential path, in list order
    def make():
        gen = torch.Generator().manual_seed(6)
        base = torch.randn(64, 8, generator=gen)
        params = [base[:, 2], base]
        grads = [torch.randn(t.shape, generator=gen) for t in params]
        return (params, grads, [torch.zeros(t.shape) for t in params],
                [torch.zeros(t.shape) for t in params], [], [torch.tensor(1.0)] * 2)

    native, composite = _run_both(make, None, False, lr=0.1, beta1=0.9, beta2=0.999,
                                  weight_decay=0.1, eps=1e-8, amsgrad=False, maximize=False)
    torch.testing.assert_close(native[0][1], composite[0][1], atol=1e-6, rtol=1e-6)
