"""torch.nn.utils.parametrize, parametrizations (weight_norm, spectral_norm, orthogonal), the
hook-based weight_norm / spectral_norm, and functional_call (stateless and torch.func).

Values are checked against numpy formulas, gradients against finite differences, and the
reprs, state-dict keys and error messages against strings printed by PyTorch 2.13.
"""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from collections import OrderedDict

import numpy as np
import pytest
from numgrad import F64, check_grad

import torch
import torch.nn as nn
from torch.func import functional_call
from torch.nn.utils import parametrizations as P, parametrize, stateless

# -- helpers --------------------------------------------------------------------------------


class Sym(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT


class Skew(nn.Module):
    def forward(self, X):
        return X - X.mT

    def right_inverse(self, X):
        return X


class Double(nn.Module):
    def forward(self, X):
        return X * 2

    def right_inverse(self, X):
        return X / 2


class Halves(nn.Module):
    """Two originals: weight = a + b."""

    def forward(self, a, b):
        return a + b

    def right_inverse(self, X):
        return (X / 2, X / 2)


class Lambda(nn.Module):
    def __init__(self, fwd, inverse=None):
        super().__init__()
        self.fwd = fwd
        if inverse is not None:
            self.right_inverse = inverse

    def forward(self, *xs):
        return self.fwd(*xs)


def linear(in_features=3, out_features=4, dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    return nn.Linear(in_features, out_features, dtype=dtype)


def lit(text):
    """A ``match=`` pattern for an exact message."""
    return re.escape(text)


def arr(t):
    return t.detach().numpy().astype(np.float64)


def fit(module, steps=40, lr=0.1):
    """A short regression training loop; returns the first and last loss."""
    gen = torch.Generator().manual_seed(3)
    dtype = module.bias.dtype
    x = torch.randn(16, module.in_features, generator=gen, dtype=dtype)
    target = torch.randn(16, module.out_features, generator=gen, dtype=dtype) * 0.1
    opt = torch.optim.SGD(module.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((module(x) - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses[0], losses[-1]


# -- parametrize ----------------------------------------------------------------------------

REPR_SYM = """ParametrizedLinear(
  in_features=4, out_features=4, bias=True
  (parametrizations): ModuleDict(
    (weight): ParametrizationList(
      (0): Sym()
    )
  )
)"""

REPR_SYM_SKEW = """ParametrizedLinear(
  in_features=4, out_features=4, bias=True
  (parametrizations): ModuleDict(
    (weight): ParametrizationList(
      (0): Sym()
      (1): Skew()
    )
  )
)"""


def test_register_makes_a_parametrized_class_with_pytorch_keys_and_repr():
    m = linear(4, 4)
    w0 = m.weight
    assert parametrize.register_parametrization(m, "weight", Sym()) is m
    cls = type(m)
    assert cls.__name__ == "ParametrizedLinear"
    assert cls.__module__ == "torch.nn.utils.parametrize"
    assert cls.__mro__[1] is nn.Linear
    assert type(nn.Linear(2, 2)) is nn.Linear  # other instances keep their class
    assert repr(m) == REPR_SYM
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    assert isinstance(m.parametrizations, nn.ModuleDict)
    assert isinstance(m.parametrizations.weight, parametrize.ParametrizationList)
    assert m.parametrizations.weight.original is w0  # the same parameter object
    assert "weight" not in m._parameters and "weight" not in m.__dict__
    assert isinstance(type(m).__dict__["weight"], property)
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert not parametrize.is_parametrized(nn.Linear(2, 2))
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    assert parametrize.type_before_parametrizations(nn.ReLU()) is nn.ReLU

    X = arr(w0)
    np.testing.assert_allclose(arr(m.weight), np.triu(X) + np.triu(X, 1).T)
    parametrize.register_parametrization(m, "weight", Skew())
    assert repr(m) == REPR_SYM_SKEW
    S = np.triu(X) + np.triu(X, 1).T
    np.testing.assert_allclose(arr(m.weight), S - S.T, atol=1e-7)
    pl = m.parametrizations.weight
    assert len(pl) == 2 and pl.is_tensor and pl.ntensors == 1 and pl.unsafe is False
    assert repr(pl) == "ParametrizationList(\n  (0): Sym()\n  (1): Skew()\n)"


def test_forward_and_gradient_through_a_parametrization():
    m = linear(4, 4, dtype=F64)
    parametrize.register_parametrization(m, "weight", Sym())
    x = torch.randn(5, 4, dtype=F64)
    W = arr(m.parametrizations.weight.original)
    S = np.triu(W) + np.triu(W, 1).T
    np.testing.assert_allclose(arr(m(x)), arr(x) @ S.T + arr(m.bias), rtol=1e-12)
    m(x).sum().backward()
    assert m.parametrizations.weight.original.grad is not None

    def f(original):
        return functional_call(m, {"parametrizations.weight.original": original}, (x,))

    check_grad(f, torch.randn(4, 4, dtype=F64))


def test_assignment_goes_through_right_inverse():
    m = linear()
    w0 = m.weight.detach().clone()
    parametrize.register_parametrization(m, "weight", Double())
    original = m.parametrizations.weight.original
    np.testing.assert_allclose(arr(original), arr(w0) / 2)  # right_inverse at registration
    np.testing.assert_allclose(arr(m.weight), arr(w0))
    version = original._version
    m.weight = torch.ones(4, 3)
    assert m.parametrizations.weight.original is original  # same object, new values
    assert original._version > version
    np.testing.assert_allclose(arr(original), 0.5)
    np.testing.assert_allclose(arr(m.weight), 1.0)
    with pytest.raises(ValueError, match=lit("The tensor returned by `right_inverse` has dtype "
                       "torch.float64 while `original` has dtype torch.float32")):
        m.weight = torch.ones(4, 3, dtype=torch.float64)
    with pytest.raises(KeyError, match=lit("attribute 'weight' already exists")):
        m.weight = nn.Parameter(torch.ones(4, 3))
    with pytest.raises(AttributeError):
        del m.weight

    # an appended parametrization is not inverted at registration, but is on assignment
    parametrize.register_parametrization(m, "weight", Double())
    np.testing.assert_allclose(arr(original), 0.5)
    np.testing.assert_allclose(arr(m.weight), 2.0)
    m.weight = torch.full((4, 3), 8.0)
    np.testing.assert_allclose(arr(original), 2.0)

    m = linear()
    parametrize.register_parametrization(m, "weight", Lambda(lambda x: x))
    with pytest.raises(RuntimeError, match=lit("parametrization Lambda does not implement "
                       "right_inverse.")):
        m.weight = torch.zeros(4, 3)


def test_right_inverse_returning_several_tensors():
    m = linear()
    w0 = m.weight.detach().clone()
    parametrize.register_parametrization(m, "weight", Halves())
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == {
        "bias": (4,), "parametrizations.weight.original0": (4, 3),
        "parametrizations.weight.original1": (4, 3)}
    pl = m.parametrizations.weight
    assert not pl.is_tensor and pl.ntensors == 2
    assert isinstance(pl.original0, nn.Parameter) and pl.original0.requires_grad
    np.testing.assert_allclose(arr(m.weight), arr(w0), rtol=1e-6)
    p0 = pl.original0
    m.weight = torch.ones(4, 3)
    assert pl.original0 is p0
    np.testing.assert_allclose(arr(p0), 0.5)
    with pytest.raises(ValueError, match=lit("Tensor 0 returned by `right_inverse` has dtype "
                       "torch.float64 while `original0` has dtype torch.float32")):
        m.weight = torch.ones(4, 3, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"Cannot leave unparametrized \(`leave_parametrized="
                       r"False`\) a tensor that is parametrized in terms of a sequence of "
                       "tensors."):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear
    assert isinstance(m.weight, nn.Parameter) and m.weight is not p0
    np.testing.assert_allclose(arr(m.weight), 1.0)


def test_registration_errors_match_pytorch():
    with pytest.raises(ValueError, match=r"Module 'Linear\(in_features=3, out_features=4, "
                       r"bias=True\)' does not have a parameter, a buffer, or a parametrized "
                       "element with name 'foo'"):
        parametrize.register_parametrization(linear(), "foo", Sym())
    with pytest.raises(ValueError, match=r"may not change the shape of the tensor, unless "
                       r"`unsafe` flag is enabled.\nunparametrized shape: torch.Size\(\[4, 3\]\)"
                       r"\nparametrized shape: torch.Size\(\[2, 3\]\)"):
        parametrize.register_parametrization(linear(), "weight", Lambda(lambda x: x[:2]))
    with pytest.raises(ValueError, match=lit("may not change the dtype of the tensor, unless "
                       "`unsafe` flag is enabled.\nunparametrized dtype: torch.float32\n"
                       "parametrized dtype: torch.float64")):
        parametrize.register_parametrization(linear(), "weight", Lambda(lambda x: x.double()))
    with pytest.raises(ValueError, match=lit("A parametrization must return a tensor. Got int.")):
        parametrize.register_parametrization(linear(), "weight", Lambda(lambda x: 1))
    with pytest.raises(ValueError, match=r"'right_inverse' must return a Tensor or a Sequence "
                       r"of tensors \(list, tuple...\). Got int"):
        parametrize.register_parametrization(linear(), "weight",
                                             Lambda(lambda x: x, lambda x: 3))
    with pytest.raises(ValueError, match=lit("Got element 1 of the sequence with type int.")):
        parametrize.register_parametrization(linear(), "weight",
                                             Lambda(lambda a, b: a, lambda x: (x, 3)))
    with pytest.raises(ValueError, match=lit("When `right_inverse` outputs one tensor, it may not "
                       "change the dtype.\noriginal.dtype: torch.float32\n"
                       "right_inverse(original).dtype: torch.float64")):
        parametrize.register_parametrization(
            linear(), "weight", Lambda(lambda x: x.float(), lambda x: x.double()))
    # a list is a sequence too; right_inverse may change the shape
    parametrize.register_parametrization(linear(), "weight",
                                         Lambda(lambda a, b: a, lambda x: [x, x]))
    parametrize.register_parametrization(
        linear(), "weight", Lambda(lambda x: x[:4], lambda x: torch.cat([x, x])))
    with pytest.raises(ValueError, match=lit("does not have a parametrization on weight")):
        parametrize.remove_parametrizations(linear(), "weight")

    m = linear()
    parametrize.register_parametrization(m, "weight", Double())
    with pytest.raises(ValueError, match=r"unless the `unsafe` flag is enabled.\n"
                       r"module.weight.shape: torch.Size\(\[4, 3\]\)\n"
                       r"parametrization\(module.weight\).shape: torch.Size\(\[2, 3\]\)"):
        parametrize.register_parametrization(m, "weight", Lambda(lambda x: x[:2]))
    with pytest.raises(ValueError, match=r"module.weight.dtype: torch.float32\n"
                       r"parametrization\(module.weight\).dtype: torch.float64"):
        parametrize.register_parametrization(m, "weight", Lambda(lambda x: x.double()))
    with pytest.raises(ValueError, match=lit("The tensor returned by parametrization.right_inverse "
                       "must have the same shape as module.weight")):
        parametrize.register_parametrization(m, "weight",
                                             Lambda(lambda x: x, lambda x: x[:2]))
    with pytest.raises(ValueError, match=lit("parametrization.right_inverse must return a tensor. "
                       "Got: int")):
        parametrize.register_parametrization(m, "weight", Lambda(lambda x: x, lambda x: 1))
    assert len(m.parametrizations.weight) == 1  # nothing was appended
    # unsafe skips the checks and is remembered
    parametrize.register_parametrization(m, "weight", Lambda(lambda x: x[:2]), unsafe=True)
    assert m.parametrizations.weight.unsafe is True
    assert m.weight.shape == (2, 3)


def test_remove_parametrizations():
    m = linear()
    w0 = m.weight
    values = arr(w0)
    parametrize.register_parametrization(m, "weight", Double())
    parametrize.register_parametrization(m, "bias", Lambda(lambda x: x))
    parametrize.remove_parametrizations(m, "weight")
    assert type(m).__name__ == "ParametrizedLinear"  # bias is still parametrized
    assert m.weight is w0
    np.testing.assert_allclose(arr(m.weight), values, rtol=1e-6)
    parametrize.remove_parametrizations(m, "bias")
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert repr(m) == "Linear(in_features=3, out_features=4, bias=True)"
    assert list(m.state_dict()) == ["weight", "bias"]

    m = linear()
    w0 = m.weight
    values = arr(w0)
    parametrize.register_parametrization(m, "weight", Double())
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert m.weight is w0
    np.testing.assert_allclose(arr(m.weight), values / 2, rtol=1e-6)  # the original
    assert list(m.state_dict()) == ["bias", "weight"]  # re-registered last, as PyTorch

    m = linear()
    parametrize.register_parametrization(m, "weight", Lambda(lambda x: x[:2]), unsafe=True)
    parametrize.remove_parametrizations(m, "weight")
    assert m.weight.shape == (2, 3) and isinstance(m.weight, nn.Parameter)


def test_parametrized_buffers():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("b", torch.ones(3))
            self.register_buffer("nb", torch.ones(3), persistent=False)

    m = M()
    parametrize.register_parametrization(m, "nb", Double())
    assert list(m.state_dict()) == ["b", "parametrizations.nb.original"]  # now persistent
    parametrize.register_parametrization(m, "b", Halves())
    assert [n for n, _ in m.named_buffers()] == [
        "parametrizations.nb.original", "parametrizations.b.original0",
        "parametrizations.b.original1"]
    assert not m.parametrizations.b.original0.requires_grad
    np.testing.assert_allclose(arr(m.b), 1.0)
    parametrize.remove_parametrizations(m, "nb")
    parametrize.remove_parametrizations(m, "b")
    assert list(m.state_dict()) == ["nb", "b"]
    assert type(m.b) is torch.Tensor and not m._non_persistent_buffers_set

    bn = nn.BatchNorm1d(3)
    parametrize.register_parametrization(bn, "running_mean", Lambda(lambda x: x))
    assert list(bn.state_dict()) == ["weight", "bias", "running_var", "num_batches_tracked",
                                     "parametrizations.running_mean.original"]


def test_cached():
    calls = []

    def fwd(x):
        calls.append(1)
        return x * 2

    m = linear()
    parametrize.register_parametrization(m, "weight", Lambda(fwd))
    calls.clear()
    with parametrize.cached():
        a = m.weight
        assert m.weight is a
        with parametrize.cached():
            assert m.weight is a
        assert m.weight is a
    assert len(calls) == 1
    assert m.weight is not m.weight
    assert len(calls) == 3


def test_train_eval_reaches_parametrizations():
    m = linear()
    m.eval()
    p = Double()
    parametrize.register_parametrization(m, "weight", p)
    assert p.training is False  # takes the module's mode at registration
    m.train()
    assert p.training is True


def test_transfer_parametrizations_and_params():
    src = linear()
    parametrize.register_parametrization(src, "weight", Double())
    dst = nn.Linear(3, 4)
    assert parametrize.transfer_parametrizations_and_params(src, dst) is dst
    assert type(dst).__name__ == "ParametrizedLinear"
    assert dst.parametrizations.weight.original is src.parametrizations.weight.original
    assert dst.parametrizations.weight[0] is src.parametrizations.weight[0]
    np.testing.assert_allclose(arr(dst.weight), arr(src.weight))
    assert dst.bias is not src.bias
    plain = nn.Linear(3, 4)
    assert parametrize.transfer_parametrizations_and_params(nn.Linear(3, 4), plain) is plain
    assert type(plain) is nn.Linear
    with pytest.raises(KeyError):
        parametrize.transfer_parametrizations_and_params(src, nn.Linear(3, 4), "bias")

    src = linear()
    parametrize.register_parametrization(src, "weight", Halves())
    dst = nn.Linear(3, 4)
    parametrize.transfer_parametrizations_and_params(src, dst, "weight")
    assert dst.parametrizations.weight.original1 is src.parametrizations.weight.original1


def test_deepcopy_keeps_the_class_and_pickle_is_refused():
    m = linear()
    parametrize.register_parametrization(m, "weight", Double())
    c = copy.deepcopy(m)
    assert type(c) is type(m)
    assert c.parametrizations.weight.original is not m.parametrizations.weight.original
    np.testing.assert_allclose(arr(c.weight), arr(m.weight))
    with torch.no_grad():
        c.parametrizations.weight.original.zero_()
    assert float(m.weight.abs().sum()) > 0
    with pytest.raises(RuntimeError, match=lit("Serialization of parametrized modules is only "
                                                "supported through state_dict()")):
        pickle.dumps(m)


def test_state_dict_round_trip_and_dtype_conversion():
    a, b = linear(seed=1), linear(seed=2)
    for m in (a, b):
        parametrize.register_parametrization(m, "weight", Double())
    assert repr(b.load_state_dict(a.state_dict())) == "<All keys matched successfully>"
    np.testing.assert_allclose(arr(b.weight), arr(a.weight))
    a.double()
    assert a.weight.dtype == torch.float64
    assert a.parametrizations.weight.original.dtype == torch.float64


def test_training_loop_through_a_parametrization():
    m = linear(4, 4)
    parametrize.register_parametrization(m, "weight", Sym())
    first, last = fit(m)
    assert last < 0.5 * first
    W = arr(m.weight)
    np.testing.assert_allclose(W, W.T, rtol=1e-6)


# -- parametrizations.weight_norm -------------------------------------------------------------

REPR_WN = """ParametrizedLinear(
  in_features=3, out_features=4, bias=True
  (parametrizations): ModuleDict(
    (weight): ParametrizationList(
      (0): _WeightNorm()
    )
  )
)"""


def np_norm_except_dim(v, dim):
    if dim is None or dim == -1:
        return np.linalg.norm(v)
    dim %= v.ndim
    axes = tuple(d for d in range(v.ndim) if d != dim)
    return np.sqrt((v ** 2).sum(axis=axes, keepdims=True)) if axes else np.abs(v)


@pytest.mark.parametrize("shape,dim,g_shape", [
    ((4, 3), 0, (4, 1)), ((4, 3), 1, (1, 3)), ((4, 3), None, ()), ((4, 3), -1, ()),
    ((4, 3), -2, (4, 1)), ((3, 2, 3, 3), 2, (1, 1, 3, 1)), ((3, 2, 3, 3), -3, (1, 2, 1, 1)),
    ((5,), 0, (5,)),
])
def test_weight_norm_keys_shapes_and_values(shape, dim, g_shape):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(*shape))

    torch.manual_seed(0)
    m = M()
    w0 = arr(m.weight)
    P.weight_norm(m, dim=dim)
    sd = m.state_dict()
    assert list(sd) == ["parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert tuple(sd["parametrizations.weight.original0"].shape) == g_shape
    np.testing.assert_allclose(arr(sd["parametrizations.weight.original0"]),
                               np_norm_except_dim(w0, dim), rtol=1e-6)
    np.testing.assert_allclose(arr(m.weight), w0, rtol=1e-5, atol=1e-7)
    g = np.full(g_shape, 2.0)
    with torch.no_grad():
        m.parametrizations.weight.original0.fill_(2.0)
    np.testing.assert_allclose(arr(m.weight), g * w0 / np_norm_except_dim(w0, dim), rtol=1e-5)


def test_weight_norm_module_gradient_and_errors():
    m = P.weight_norm(linear())
    assert repr(m) == REPR_WN
    assert m.parametrizations.weight.unsafe is True
    x = torch.randn(2, 3, dtype=F64)
    m.double()

    def f(g, v):
        return functional_call(m, {"parametrizations.weight.original0": g,
                                   "parametrizations.weight.original1": v}, (x,))

    check_grad(f, torch.rand(4, 1, dtype=F64) + 0.5, torch.randn(4, 3, dtype=F64))
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                       r"\[-2, 1\], but got 2\)"):
        P.weight_norm(linear(), dim=2)
    with pytest.raises(ValueError, match=lit("does not have a parameter, a buffer, or a "
                       "parametrized element with name 'foo'")):
        P.weight_norm(linear(), name="foo")


def test_weight_norm_loads_the_old_weight_g_weight_v_format():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = torch.nn.utils.weight_norm(linear(seed=5))
    new = P.weight_norm(linear(seed=6))
    assert list(old.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert repr(new.load_state_dict(old.state_dict())) == "<All keys matched successfully>"
    old(torch.zeros(1, 3))  # the hook refreshes old.weight
    np.testing.assert_allclose(arr(new.weight), arr(old.weight), rtol=1e-6)


def test_weight_norm_training_loop():
    m = P.weight_norm(linear())
    first, last = fit(m)
    assert last < 0.5 * first
    g = arr(m.parametrizations.weight.original0)
    np.testing.assert_allclose(np.linalg.norm(arr(m.weight), axis=1, keepdims=True), g,
                               rtol=1e-5)


# -- parametrizations.spectral_norm ---------------------------------------------------------


def np_normalize(x, eps=1e-12):
    return x / max(np.linalg.norm(x), eps)


def test_spectral_norm_keys_and_power_iteration():
    m = P.spectral_norm(linear(5, 4))
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == {
        "bias": (4,), "parametrizations.weight.original": (4, 5),
        "parametrizations.weight.0._u": (4,), "parametrizations.weight.0._v": (5,)}
    assert repr(m.parametrizations.weight[0]) == "_SpectralNorm()"
    sn = m.parametrizations.weight[0]
    W = arr(m.parametrizations.weight.original)
    u, v = sn._u, sn._v
    # 15 iterations at registration already give sigma
    sigma = np.linalg.svd(W, compute_uv=False)[0]
    assert abs(arr(u) @ W @ arr(v) - sigma) < 1e-4 * sigma

    # one training forward: u <- normalize(W v), v <- normalize(W^T u), then W / (u.W v)
    u0, v0 = np.ones(4) / 2, np.array([1.0, 0, 0, 0, 0])
    with torch.no_grad():
        u.copy_(torch.tensor(u0))
        v.copy_(torch.tensor(v0))
    w = arr(m.weight)
    u1 = np_normalize(W @ v0)
    v1 = np_normalize(W.T @ u1)
    assert sn._u is u and sn._v is v  # updated in place: the state dict holds them
    np.testing.assert_allclose(arr(u), u1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(v), v1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w, W / (u1 @ W @ v1), rtol=1e-5)

    m.eval()  # no power iteration
    w_eval = arr(m.weight)
    np.testing.assert_allclose(arr(u), u1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w_eval, w, rtol=1e-6)

    m.train()
    for _ in range(50):
        m.weight  # noqa: B018 (each read is a power-iteration step)
    assert abs(np.linalg.svd(arr(m.weight), compute_uv=False)[0] - 1) < 1e-4


def test_spectral_norm_conv_dims_errors_and_1d():
    conv = P.spectral_norm(nn.Conv2d(3, 4, 3))
    assert {k: tuple(v.shape) for k, v in conv.state_dict().items()
            if "._" in k} == {"parametrizations.weight.0._u": (4,),
                              "parametrizations.weight.0._v": (27,)}
    tconv = P.spectral_norm(nn.ConvTranspose2d(3, 4, 3))  # dim=1 by default
    assert tconv.parametrizations.weight[0]._u.shape == (4,)
    assert tconv.parametrizations.weight[0]._v.shape == (27,)
    W = arr(tconv.parametrizations.weight.original)  # (3, 4, 3, 3)
    mat = np.moveaxis(W, 1, 0).reshape(4, -1)
    tconv.eval()
    sn = tconv.parametrizations.weight[0]
    np.testing.assert_allclose(arr(tconv.weight), W / (arr(sn._u) @ mat @ arr(sn._v)),
                               rtol=1e-5)

    class B(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.tensor([3.0, 4.0]))

    b = P.spectral_norm(B())
    np.testing.assert_allclose(arr(b.weight), [0.6, 0.8], rtol=1e-6)
    assert list(b.state_dict()) == ["parametrizations.weight.original"]

    with pytest.raises(ValueError, match=lit("Expected n_power_iterations to be positive, but got "
                       "n_power_iterations=0")):
        P.spectral_norm(linear(), n_power_iterations=0)
    with pytest.raises(ValueError, match=r"Module 'Linear\(in_features=3, out_features=4, "
                       r"bias=True\)' has no parameter or buffer with name 'foo'"):
        P.spectral_norm(linear(), name="foo")
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                       r"\[-2, 1\] but got 2\)"):
        P.spectral_norm(linear(), dim=2)


def test_spectral_norm_gradient_and_training_loop():
    m = P.spectral_norm(linear(dtype=F64)).eval()  # fixed u, v: a smooth function of W
    x = torch.randn(2, 3, dtype=F64)
    check_grad(lambda w: functional_call(m, {"parametrizations.weight.original": w}, (x,)),
               torch.randn(4, 3, dtype=F64))
    m = P.spectral_norm(linear())
    first, last = fit(m, lr=0.5)
    assert last < first
    assert abs(np.linalg.svd(arr(m.weight), compute_uv=False)[0] - 1) < 0.05


# -- parametrizations.orthogonal ------------------------------------------------------------


def np_expm_skew(A):
    """exp of a real skew-symmetric matrix through its eigendecomposition."""
    lam, V = np.linalg.eig(A)
    return (V @ np.diag(np.exp(lam)) @ np.linalg.inv(V)).real


def np_householder(A):
    m, n = A.shape
    Q = np.eye(m)
    for i in range(n):
        v = np.zeros(m)
        v[i] = 1.0
        v[i + 1:] = A[i + 1:, i]
        tau = 2.0 / (1.0 + (A[i + 1:, i] ** 2).sum())
        Q = Q @ (np.eye(m) - tau * np.outer(v, v))
    return Q[:, :n] * np.diag(A).astype(np.int64)


def np_make_orthogonal(W):
    Q, R = np.linalg.qr(W)
    return Q * np.sign(np.diag(R))


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_maps(orthogonal_map):
    rng = np.random.default_rng(0)
    W = rng.standard_normal((4, 4))
    m = nn.Linear(4, 4, dtype=F64)
    with torch.no_grad():
        m.weight.copy_(torch.tensor(W))
    P.orthogonal(m, orthogonal_map=orthogonal_map)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original",
                                    "parametrizations.weight.0.base"]
    # registering keeps the orthogonalised weight: base is Q of QR(W) with R's diagonal > 0
    base = np_make_orthogonal(W)
    np.testing.assert_allclose(arr(m.weight), base, atol=1e-10)
    np.testing.assert_allclose(arr(m.parametrizations.weight[0].base), base, atol=1e-10)

    X = rng.standard_normal((4, 4)) * 0.3
    if orthogonal_map == "householder":
        # the diagonal holds the column signs (truncated to integers: keep clear of them)
        np.fill_diagonal(X, [1.5, -1.5, 1.5, 1.5])
    with torch.no_grad():
        m.parametrizations.weight.original.copy_(torch.tensor(X))
    L = np.tril(X)
    A = L - L.T
    if orthogonal_map == "matrix_exp":
        want = np_expm_skew(A)
    elif orthogonal_map == "cayley":
        want = np.linalg.solve(np.eye(4) - A / 2, np.eye(4) + A / 2)
    else:
        want = np_householder(X)
    np.testing.assert_allclose(arr(m.weight), base @ want, atol=1e-10)
    Q = arr(m.weight)
    np.testing.assert_allclose(Q.T @ Q, np.eye(4), atol=1e-10)

    def f(x):
        return functional_call(m, {"parametrizations.weight.original": x},
                               (torch.eye(4, dtype=F64),))

    check_grad(f, torch.tensor(X))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_orthogonal_rectangular_and_assignment(shape):
    rng = np.random.default_rng(1)
    W = rng.standard_normal(shape)
    m = nn.Linear(shape[1], shape[0], dtype=F64)
    with torch.no_grad():
        m.weight.copy_(torch.tensor(W))
    P.orthogonal(m)  # householder for non-square
    assert m.parametrizations.weight[0].orthogonal_map == "householder"
    tall = W if shape[0] > shape[1] else W.T
    want = np_make_orthogonal(tall)
    got = arr(m.weight)
    np.testing.assert_allclose(got if shape[0] > shape[1] else got.T, want, atol=1e-10)
    Q = np.linalg.qr(rng.standard_normal((5, 3)))[0]
    m.weight = torch.tensor(Q if shape[0] > shape[1] else Q.T)
    got = arr(m.weight)
    np.testing.assert_allclose(got if shape[0] > shape[1] else got.T, Q, atol=1e-10)

    m = nn.Linear(shape[1], shape[0], dtype=F64)
    with torch.no_grad():
        m.weight.copy_(torch.tensor(W))
    P.orthogonal(m, use_trivialization=False)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    got = arr(m.weight)
    np.testing.assert_allclose(got if shape[0] > shape[1] else got.T, want, atol=1e-10)
    first, last = fit(m, lr=0.2)
    assert last < first
    Q = arr(m.weight)
    Q = Q if shape[0] > shape[1] else Q.T
    np.testing.assert_allclose(Q.T @ Q, np.eye(3), atol=1e-10)


def test_orthogonal_errors():
    m = nn.Linear(4, 4)
    P.orthogonal(m, orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match=lit("It is not possible to assign to the matrix "
                       "exponential or the Cayley parametrizations when "
                       "use_trivialization=False.")):
        m.weight = torch.eye(4)
    with pytest.raises(ValueError, match=lit('orthogonal_map has to be one of "matrix_exp", '
                       '"cayley", "householder". Got: foo')):
        P.orthogonal(nn.Linear(4, 4), orthogonal_map="foo")
    with pytest.raises(ValueError, match=lit("Expected a matrix or batch of matrices. Got a tensor "
                       "of 1 dimensions.")):
        P.orthogonal(nn.BatchNorm1d(4))
    with pytest.raises(ValueError, match=lit("has no parameter or buffer with name 'bar'")):
        P.orthogonal(nn.Linear(4, 4), name="bar")


# -- hook-based weight_norm / spectral_norm -------------------------------------------------


def test_old_weight_norm():
    m = linear()
    w0 = arr(m.weight)
    with pytest.warns(FutureWarning, match=lit("`torch.nn.utils.weight_norm` is deprecated in "
                      "favor of `torch.nn.utils.parametrizations.weight_norm`.")):
        assert torch.nn.utils.weight_norm(m) is m
    assert type(m) is nn.Linear
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == {
        "bias": (4,), "weight_g": (4, 1), "weight_v": (4, 3)}
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_g", "weight_v"]
    assert "weight" in m.__dict__ and m.weight.grad_fn is not None
    hook = next(iter(m._forward_pre_hooks.values()))
    assert type(hook).__name__ == "WeightNorm" and hook.name == "weight" and hook.dim == 0
    np.testing.assert_allclose(arr(m.weight), w0, rtol=1e-6)
    with torch.no_grad():
        m.weight_g.fill_(3.0)
    m(torch.zeros(1, 3))  # the pre-hook recomputes the weight
    np.testing.assert_allclose(arr(m.weight),
                               3 * w0 / np.linalg.norm(w0, axis=1, keepdims=True), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(RuntimeError, match=lit("Cannot register two weight_norm hooks on the "
                           "same parameter weight")):
            torch.nn.utils.weight_norm(m)
        first, last = fit(m)
        assert last < 0.5 * first
        for dim, g_shape in ((None, ()), (-1, ()), (1, (1, 3)), (-2, (4, 1))):
            assert torch.nn.utils.weight_norm(linear(), dim=dim).weight_g.shape == g_shape
        assert torch.nn.utils.weight_norm(nn.Conv2d(2, 3, 3), dim=2).weight_g.shape == (
            1, 1, 3, 1)
    value = arr(m.weight_g * m.weight_v / m.weight_v.norm(dim=1, keepdim=True))
    assert torch.nn.utils.remove_weight_norm(m) is m
    assert list(m.state_dict()) == ["bias", "weight"]
    assert isinstance(m.weight, nn.Parameter) and not m._forward_pre_hooks
    np.testing.assert_allclose(arr(m.weight), value, rtol=1e-6)
    with pytest.raises(ValueError, match=r"weight_norm of 'weight' not found in Linear\("):
        torch.nn.utils.remove_weight_norm(m)


def test_old_spectral_norm():
    m = linear(5, 4)
    W = arr(m.weight)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecation warning for this one
        torch.nn.utils.spectral_norm(m)
    assert type(m) is nn.Linear and repr(m) == "Linear(in_features=5, out_features=4, bias=True)"
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == {
        "bias": (4,), "weight_orig": (4, 5), "weight_u": (4,), "weight_v": (5,)}
    assert [n for n, _ in m.named_buffers()] == ["weight_u", "weight_v"]
    assert m.state_dict()._metadata[""] == {"version": 1, "spectral_norm": {"weight.version": 1}}
    seq = nn.Sequential(torch.nn.utils.spectral_norm(linear()))
    assert seq.state_dict()._metadata == OrderedDict([
        ("", {"version": 1}), ("0", {"version": 1, "spectral_norm": {"weight.version": 1}})])
    hook = next(iter(m._forward_pre_hooks.values()))
    assert (type(hook).__name__, hook.name, hook.dim, hook.n_power_iterations, hook.eps) == (
        "SpectralNorm", "weight", 0, 1, 1e-12)
    np.testing.assert_allclose(arr(m.weight), W)  # no iteration before the first forward
    assert not m.weight.requires_grad

    # a training forward: v <- normalize(W^T u), then u <- normalize(W v)
    u0 = arr(m.weight_u)
    m(torch.zeros(1, 5))
    v1 = np_normalize(W.T @ u0)
    u1 = np_normalize(W @ v1)
    np.testing.assert_allclose(arr(m.weight_v), v1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(m.weight_u), u1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(m.weight), W / (u1 @ W @ v1), rtol=1e-5)
    assert m.weight.grad_fn is not None
    m.eval()
    u_eval = m.weight_u.clone()
    m(torch.zeros(1, 5))
    assert torch.equal(u_eval, m.weight_u)

    with pytest.raises(RuntimeError, match=lit("Cannot register two spectral_norm hooks on the "
                                                "same parameter weight")):
        torch.nn.utils.spectral_norm(m)
    with pytest.raises(ValueError, match=lit("Expected n_power_iterations to be positive")):
        torch.nn.utils.spectral_norm(linear(), n_power_iterations=0)
    with pytest.raises(KeyError, match=lit("foo")):
        torch.nn.utils.spectral_norm(linear(), name="foo")
    t = torch.nn.utils.spectral_norm(nn.ConvTranspose2d(3, 4, 3))
    assert next(iter(t._forward_pre_hooks.values())).dim == 1
    assert (t.weight_u.shape, t.weight_v.shape) == ((4,), (27,))

    expected = arr(m.weight)
    assert torch.nn.utils.remove_spectral_norm(m) is m
    assert list(m.state_dict()) == ["bias", "weight"]
    assert not m._forward_pre_hooks and not m._state_dict_hooks
    assert not m._load_state_dict_pre_hooks
    np.testing.assert_allclose(arr(m.weight), expected, rtol=1e-6)
    with pytest.raises(ValueError, match=r"spectral_norm of 'weight' not found in Linear\("):
        torch.nn.utils.remove_spectral_norm(m)


def test_old_spectral_norm_loading_and_training():
    src = torch.nn.utils.spectral_norm(linear(seed=1))
    src(torch.zeros(1, 3))
    dst = torch.nn.utils.spectral_norm(linear(seed=2))
    plain = dict(src.state_dict())  # no metadata: taken as the current format
    assert repr(dst.load_state_dict(plain)) == "<All keys matched successfully>"
    assert torch.equal(dst.weight_v, src.weight_v)

    # version 0: weight_orig, weight and weight_u, without weight_v
    src.eval()
    src(torch.zeros(1, 3))
    sd0 = OrderedDict(bias=src.bias.detach(), weight_orig=src.weight_orig.detach(),
                      weight=src.weight.detach(), weight_u=src.weight_u.clone())
    sd0._metadata = OrderedDict({"": {"version": 1, "spectral_norm": {"weight.version": 0}}})
    dst = torch.nn.utils.spectral_norm(linear(seed=3)).eval()
    assert repr(dst.load_state_dict(sd0)) == "<All keys matched successfully>"
    dst(torch.zeros(1, 3))
    np.testing.assert_allclose(arr(dst.weight), arr(src.weight), rtol=1e-4, atol=1e-6)

    m = torch.nn.utils.spectral_norm(linear())
    first, last = fit(m, lr=0.5)
    assert last < first


# -- functional_call ------------------------------------------------------------------------


def test_functional_call_swaps_and_restores():
    m = linear(3, 2)
    w0, b0 = m.weight, m.bias
    x = torch.randn(5, 3)
    W = torch.ones(2, 3)
    out = functional_call(m, {"weight": W}, (x,))
    np.testing.assert_allclose(arr(out), arr(x) @ arr(W).T + arr(b0), rtol=1e-6)
    assert m.weight is w0 and m.bias is b0
    out = functional_call(m, {"weight": W}, x)  # a single argument need not be a tuple
    assert out.shape == (5, 2)
    # extra names are set for the call and removed afterwards
    functional_call(m, {"weight": W, "extra": W}, (x,))
    assert not hasattr(m, "extra")

    Wg = torch.ones(2, 3, requires_grad=True)
    functional_call(m, {"weight": Wg}, (x,)).sum().backward()
    np.testing.assert_allclose(arr(Wg.grad), np.tile(arr(x).sum(0), (2, 1)), rtol=1e-5)
    assert m.weight.grad is None

    class K(nn.Module):
        def __init__(self):
            super().__init__()
            self.p = nn.Parameter(torch.ones(1))

        def forward(self, x, y=1):
            return self.p * x * y

    assert float(functional_call(K(), {"p": torch.full((1,), 2.0)}, args=torch.ones(1),
                                 kwargs={"y": 3})) == 6.0

    class Bad(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(2))

        def forward(self, x):
            raise ValueError("boom")

    bad = Bad()
    w0 = bad.w
    with pytest.raises(ValueError, match=lit("boom")):
        functional_call(bad, {"w": torch.zeros(2)}, (x,))
    assert bad.w is w0


def test_functional_call_strict_ties_and_errors():
    m = linear(3, 2)
    x = torch.randn(5, 3)
    W = torch.ones(2, 3)
    with pytest.raises(RuntimeError, match=lit("Error(s) in reparametrizing for Linear:\n\t"
                                                "Unexpected key(s): 'foo'.\n\t"
                                                "Missing key(s): 'bias'.")):
        functional_call(m, {"weight": W, "foo": W}, (x,), strict=True)
    functional_call(m, {"weight": W, "bias": torch.zeros(2)}, (x,), strict=True)
    with pytest.raises(TypeError, match=lit("3.0 is not an instance of torch.Tensor")):
        functional_call(m, {"weight": 3.0}, (x,))
    with pytest.raises(AttributeError, match=lit("Linear has no attribute `foo`")):
        functional_call(m, {"foo.bar": W}, (x,))

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False)
            self.b = nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight
            self.register_buffer("buf", torch.ones(2))

        def forward(self, x):
            return self.a(x) + self.b(x)

    t = Tied()
    x2 = torch.randn(1, 2)
    eye = torch.eye(2)
    np.testing.assert_allclose(arr(functional_call(t, {"a.weight": eye}, (x2,))), 2 * arr(x2))
    np.testing.assert_allclose(
        arr(functional_call(t, {"a.weight": eye}, (x2,), tie_weights=False)),
        arr(x2) + arr(x2) @ arr(t.a.weight).T, rtol=1e-6)
    assert t.b.weight is t.a.weight
    with pytest.raises(ValueError, match=r"functional_call got multiple values for keys "
                       r"\['a.weight', 'b.weight'\], which are tied. Consider using "
                       "tie_weights=False"):
        functional_call(t, {"a.weight": eye, "b.weight": torch.eye(2)}, (x2,))
    functional_call(t, {"a.weight": eye, "b.weight": eye}, (x2,))  # the same tensor is fine
    with pytest.raises(RuntimeError, match=lit("Missing key(s): 'buf'.")):
        functional_call(t, {"a.weight": eye}, (x2,), strict=True)

    # sequences of dicts (torch.func only)
    out = functional_call(m, ({"weight": W}, {"bias": torch.zeros(2)}), (x,))
    np.testing.assert_allclose(arr(out), arr(x) @ arr(W).T, rtol=1e-6)
    with pytest.raises(ValueError, match=r"\['weight'\] appeared in multiple dictionaries; "
                       "behavior of functional call is ambiguous"):
        functional_call(m, [{"weight": W}, {"weight": W}], (x,))
    with pytest.raises(ValueError, match=lit("Expected parameter_and_buffer_dicts to be a dict, or "
                       "a list/tuple of dicts, but got <class 'int'>")):
        functional_call(m, 3, (x,))


def test_functional_call_buffers_and_parametrized_modules():
    bn = nn.BatchNorm1d(2)
    rm = torch.zeros(2)
    data = torch.randn(8, 2) + 5
    functional_call(bn, {"running_mean": rm}, (data,))
    np.testing.assert_allclose(arr(rm), 0.1 * arr(data).mean(0), rtol=1e-5)
    np.testing.assert_allclose(arr(bn.running_mean), 0.0)  # the module's own is untouched
    assert int(bn.num_batches_tracked) == 1

    m = linear(3, 2)
    parametrize.register_parametrization(m, "weight", Double())
    x = torch.randn(5, 3)
    W = torch.ones(2, 3)
    original = arr(m.parametrizations.weight.original)
    out = functional_call(m, {"weight": W}, (x,))  # through right_inverse and back
    np.testing.assert_allclose(arr(out), arr(x) @ arr(W).T + arr(m.bias), rtol=1e-6)
    np.testing.assert_allclose(arr(m.parametrizations.weight.original), original, rtol=1e-6)
    out = functional_call(m, {"parametrizations.weight.original": W}, (x,))
    np.testing.assert_allclose(arr(out), arr(x) @ (2 * arr(W)).T + arr(m.bias), rtol=1e-6)


def test_stateless_functional_call_is_deprecated():
    m = linear(3, 2)
    x = torch.randn(5, 3)
    with pytest.warns(FutureWarning, match=lit("`torch.nn.utils.stateless.functional_call` is "
                      "deprecated as of PyTorch 2.0")):
        out = stateless.functional_call(m, {"weight": torch.zeros(2, 3)}, (x,))
    np.testing.assert_allclose(arr(out), np.tile(arr(m.bias), (5, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        functional_call(m, {}, (x,))  # torch.func's does not warn


def test_exports():
    assert torch.nn.utils.weight_norm.__module__ == "torch.nn.utils.weight_norm"
    assert torch.nn.utils.spectral_norm.__module__ == "torch.nn.utils.spectral_norm"
    assert P.__all__ == ["orthogonal", "spectral_norm", "weight_norm"]
    assert parametrize.__all__ == [
        "cached", "ParametrizationList", "register_parametrization", "is_parametrized",
        "remove_parametrizations", "type_before_parametrizations",
        "transfer_parametrizations_and_params"]
    assert stateless.__all__ == ["functional_call"]
    for name in ("parametrizations", "parametrize", "stateless", "weight_norm",
                 "remove_weight_norm", "spectral_norm", "remove_spectral_norm"):
        assert name in torch.nn.utils.__all__
