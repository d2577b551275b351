"""The lazy batch/instance norms (their features from the first input) and ``NLLLoss2d``,
as PyTorch 2.13 has them (reprs and keys printed by PyTorch)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import torch
import torch.nn as nn


@pytest.mark.parametrize("lazy, eager, shape", [
    (nn.LazyBatchNorm1d, nn.BatchNorm1d, (5, 3)),
    (nn.LazyBatchNorm2d, nn.BatchNorm2d, (4, 3, 2, 2)),
    (nn.LazyBatchNorm3d, nn.BatchNorm3d, (2, 3, 2, 2, 2)),
    (nn.LazyInstanceNorm1d, nn.InstanceNorm1d, (2, 3, 6)),
    (nn.LazyInstanceNorm2d, nn.InstanceNorm2d, (2, 3, 3, 3)),
    (nn.LazyInstanceNorm3d, nn.InstanceNorm3d, (2, 3, 2, 2, 2)),
])
def test_lazy_norm_becomes_the_eager_norm_with_the_same_results(lazy, eager, shape):
    m = lazy()
    assert repr(m) == (f"{lazy.__name__}(0, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                       "track_running_stats=True)")
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                    "num_batches_tracked"]
    assert m.has_uninitialized_params()
    x = torch.tensor(np.random.default_rng(0).normal(size=shape))
    ref = eager(3, affine=True, track_running_stats=True).double()
    got = m.double()(x)
    assert type(m) is eager and repr(m) == repr(ref)
    np.testing.assert_allclose(got.detach().numpy(), ref(x).detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(m.running_mean.numpy(), ref.running_mean.numpy(), rtol=1e-12)
    assert m.num_batches_tracked.item() == ref.num_batches_tracked.item()
    assert m.weight.dtype == torch.float64
    got.sum().backward()
    assert m.weight.grad.shape == (3,)
    pickle.loads(pickle.dumps(m))  # a materialized module pickles


def test_lazy_norm_options_and_errors():
    m = nn.LazyBatchNorm2d(bias=False, track_running_stats=False)
    assert list(m.state_dict()) == ["weight"]
    m(torch.ones(2, 4, 3, 3))
    assert m.weight.shape == (4,) and m.bias is None and m.running_mean is None
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.LazyBatchNorm2d()(torch.ones(3, 4))
    # an unbatched instance-norm input has its channels first
    i = nn.LazyInstanceNorm1d()
    i(torch.ones(5, 7))
    assert i.num_features == 5 and i.running_var.shape == (5,)
    with pytest.raises(RuntimeError, match="cannot be pickled before it is materialized"):
        pickle.dumps(nn.LazyBatchNorm1d())


def test_nll_loss_2d_is_the_deprecated_nll_loss():
    with pytest.warns(FutureWarning, match="NLLLoss2d` has been deprecated"):
        m = nn.NLLLoss2d(ignore_index=1)
    assert isinstance(m, nn.NLLLoss) and repr(m) == "NLLLoss2d()"
    x = torch.log_softmax(torch.tensor(np.random.default_rng(1).normal(size=(2, 3, 4, 4))), 1)
    t = torch.tensor(np.random.default_rng(2).integers(0, 3, (2, 4, 4)))
    assert m(x, t).item() == nn.NLLLoss(ignore_index=1)(x, t).item()
