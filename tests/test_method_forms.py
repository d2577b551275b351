"""Tensor methods PyTorch has for functions Plait implements elsewhere (in-place forms, method
forms of torch functions, legacy methods), each against numpy or the function it names."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import torch


def test_in_place_forms_write_the_function_value_into_self():
    a = torch.tensor([0.0, 1.0, -2.0])
    assert a.heaviside_(torch.tensor([0.5])) is a and a.tolist() == [0.5, 1.0, 0.0]
    g = torch.tensor([1.0, 2.0])
    g.igamma_(torch.tensor([1.0, 1.0]))
    np.testing.assert_allclose(g.numpy(), [1 - math.exp(-1.0), 1 - 2 * math.exp(-1.0)], rtol=1e-5)
    c = torch.tensor([1.0, 2.0])
    c.igammac_(torch.tensor([1.0, 1.0]))
    np.testing.assert_allclose(c.numpy(), [math.exp(-1.0), 2 * math.exp(-1.0)], rtol=1e-5)
    p = torch.tensor([1.0, 2.0])
    p.polygamma_(1)  # trigamma: pi^2/6 and pi^2/6 - 1
    np.testing.assert_allclose(p.numpy(), [math.pi ** 2 / 6, math.pi ** 2 / 6 - 1], rtol=1e-5)
    m = torch.tensor([2.5])
    m.mvlgamma_(2)  # log(pi)/2 + lgamma(2.5) + lgamma(2)
    np.testing.assert_allclose(m.numpy(), [math.log(math.pi) / 2 + math.lgamma(2.5)], rtol=1e-5)
    r = torch.full((3, 2), 5.0)
    r.renorm_(2, 0, 1.0)
    np.testing.assert_allclose(np.linalg.norm(r.numpy(), axis=1), [1.0] * 3, rtol=1e-5)


def test_method_forms_of_functions():
    x = torch.tensor([[4.0, 1.0], [1.0, 3.0]])
    b = torch.tensor([[1.0], [2.0]])
    want = np.linalg.solve(x.numpy(), b.numpy())
    L = torch.linalg.cholesky(x)
    np.testing.assert_allclose(b.cholesky_solve(L).numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(L.cholesky_inverse().numpy(), np.linalg.inv(x.numpy()), rtol=1e-5)
    LU, pivots = torch.linalg.lu_factor(x)
    np.testing.assert_allclose(b.lu_solve(LU, pivots).numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(torch.lu_solve(b, LU, pivots).numpy(), want, rtol=1e-5)
    A = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    q = A.geqrf()
    np.testing.assert_allclose(np.abs(q[0].orgqr(q[1]).numpy()),
                               np.abs(np.linalg.qr(A.numpy())[0]), atol=1e-5)
    solved = torch.triu(x).triangular_solve(torch.triu(x))  # B.triangular_solve(A)
    np.testing.assert_allclose(solved[0].numpy(), np.eye(2), atol=1e-6)
    assert torch.tensor([-1.0, 0.2, 2.0]).hardshrink(0.5).tolist() == [-1.0, 0.0, 2.0]
    assert torch.tensor([-1.0, 2.0]).prelu(torch.tensor([0.25])).tolist() == [-0.25, 2.0]


def test_rms_norm_is_one_function_in_torch_and_functional():
    x = torch.tensor([[3.0, 4.0], [1.0, 1.0]])
    out = torch.rms_norm(x, [2], eps=0.0)
    rms = np.sqrt((x.numpy() ** 2).mean(1, keepdims=True))
    np.testing.assert_allclose(out.numpy(), x.numpy() / rms, rtol=1e-6)
    assert torch.nn.functional.rms_norm is torch.rms_norm
    half = torch.rms_norm(x.half(), 2, torch.tensor([2.0, 1.0]).half())
    assert half.dtype == torch.float16
    with pytest.raises(RuntimeError, match="normalized_shape"):
        torch.rms_norm(x, [3])


def test_legacy_methods():
    x = torch.arange(4.0).reshape(2, 2)
    assert x.const_data_ptr() == x.data_ptr()
    assert x.storage_type() is torch.FloatStorage
    assert torch.ones(1, dtype=torch.int64).storage_type() is torch.LongStorage
    assert not any((x.is_xla, x.is_ipu, x.is_maia, x.is_mtia, x.is_vulkan, x.is_distributed()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = x.resize(4)
        z = x.resize_as(torch.empty(4))
    assert len(caught) == 2 and "deprecated" in str(caught[0].message)
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0] and z.shape == (4,) and x.shape == (2, 2)
    loaded = x.module_load(torch.ones(2, 2))
    assert loaded is not x and x.tolist() == [[1.0, 1.0], [1.0, 1.0]] and not loaded.requires_grad
    other = torch.zeros(2, 2, requires_grad=True)
    assigned = x.module_load(other, assign=True)
    assert assigned is not other and not assigned.requires_grad and x.sum().item() == 4.0


def test_functions_written_in_others():
    x = torch.arange(1.0, 9.0)
    out, mask = torch.native_dropout(x, 0.25, True)
    assert mask.dtype == torch.bool and mask.shape == x.shape
    np.testing.assert_allclose(out.numpy(), np.where(mask.numpy(), x.numpy() / 0.75, 0.0),
                               rtol=1e-6)
    same, keep = torch.native_dropout(x, 0.25, False)
    assert torch.equal(same, x) and same is not x and bool(keep.all())
    e = torch.empty_permuted((2, 3, 4), (0, 2, 1))
    assert e.shape == (2, 3, 4) and e.stride() == (12, 1, 3)
    with pytest.raises(RuntimeError, match="physical_layout"):
        torch.empty_permuted((2, 3), (0, 0))
    base = torch.zeros(3, 3)
    scattered = torch.as_strided_scatter(base, torch.tensor([1.0, 2.0]), (2,), (4,), 0)
    assert scattered.tolist() == [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]]
    assert base.sum().item() == 0.0
    draws = torch.binomial(torch.full((2000,), 10.0), torch.full((2000,), 0.3),
                           generator=torch.Generator().manual_seed(3))
    assert draws.min().item() >= 0 and draws.max().item() <= 10
    assert abs(draws.mean().item() - 3.0) < 0.2  # mean n p; sd of the mean ~0.03
    assert torch.binomial(torch.tensor([4.0, 0.0]), torch.tensor([1.0, 0.5])).tolist() == \
        [4.0, 0.0]
    assert torch.sym_sqrt(9) == 3.0
