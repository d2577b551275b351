"""Random numbers: the Philox4x32-10 primitive against its published test vectors, the
generator's state, and the samplers' ranges, dtypes and statistics.

Plait's streams differ from PyTorch's by design, so values are checked through properties:
determinism under a seed, restored states, supports and moments within a few standard errors
(sample sizes keep a false failure below one in a million)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import torch
from torch._refs.random import philox4x32

# Random123's kat_vectors, philox4x32 with 10 rounds: (counter words, key words) -> output.
PHILOX_KAT = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
     (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def bits(n: int, seed: int, offset: int) -> list[int]:
    out = torch.empty(n, dtype=torch.int64)
    torch.ops.prims.random_bits_(out, seed, offset)
    return out.tolist()


@pytest.mark.parametrize("counter, key, expected", PHILOX_KAT)
def test_philox_known_answers(counter, key, expected):
    got = philox4x32(np.array([counter], dtype=np.uint64), key)[0]
    assert [int(x) for x in got] == list(expected)


def test_random_bits_primitive_uses_offset_as_counter_and_seed_as_key():
    assert bits(4, 0, 0) == list(PHILOX_KAT[0][2])
    seed = 0x299F31D0A4093822  # key words (low, high) of the third vector
    counter = PHILOX_KAT[2][0]
    offset = counter[0] | counter[1] << 32
    # the primitive's counter has zero high words: compute that reference directly
    ref = philox4x32(np.array([(counter[0], counter[1], 0, 0)], dtype=np.uint64),
                     (seed & 0xFFFFFFFF, seed >> 32))[0]
    assert bits(4, seed, offset) == [int(x) for x in ref]


def test_random_bits_is_counter_based():
    whole = bits(40, 1234, 7)
    assert bits(12, 1234, 9) == whole[8:20]  # counters 9.. are elements 8.. of the stream
    assert bits(3, 1234, 7) == whole[:3]
    assert all(0 <= w < 2**32 for w in whole)
    assert len(set(whole)) == 40


def test_random_bits_writes_strided_outputs():
    wide = torch.zeros(4, 6, dtype=torch.int64)
    torch.ops.prims.random_bits_(wide[:, ::2], 5, 0)
    assert wide[:, ::2].reshape(-1).tolist() == bits(12, 5, 0)
    assert wide[:, 1::2].reshape(-1).tolist() == [0] * 12


def test_random_bits_counter_carries_past_64_bits():
    # counter 2**64 - 1 then 2**64: the second has word 2 set
    got = bits(8, 3, 2**64 - 1)
    ref = philox4x32(np.array([(0xFFFFFFFF, 0xFFFFFFFF, 0, 0), (0, 0, 1, 0)], np.uint64), (3, 0))
    assert got == [int(x) for x in ref.reshape(-1)]


# -- generators ------------------------------------------------------------------------------


def test_manual_seed_makes_streams_reproducible():
    torch.manual_seed(42)
    a = torch.rand(10)
    b = torch.randn(5)
    torch.manual_seed(42)
    assert torch.equal(torch.rand(10), a)
    assert torch.equal(torch.randn(5), b)
    torch.manual_seed(43)
    assert not torch.equal(torch.rand(10), a)


def test_generator_state_is_seed_and_offset():
    g = torch.Generator()
    assert g.device == torch.device("cpu")
    assert g.manual_seed(7) is g
    assert (g.initial_seed(), g.get_offset()) == (7, 0)
    torch.rand(10, generator=g)  # 10 float32 words -> 3 counters
    assert g.get_offset() == 3
    torch.rand(10, generator=g, dtype=torch.float64)  # two words each -> 5 counters
    assert g.get_offset() == 8
    state = g.get_state()
    assert state.dtype == torch.uint8 and state.shape == (16,)
    assert state.tolist() == list((7).to_bytes(8, "little") + (8).to_bytes(8, "little"))


def test_get_state_set_state_round_trip():
    g = torch.Generator().manual_seed(99)
    torch.randn(7, generator=g)
    state = g.get_state()
    first = torch.randn(20, generator=g)
    assert not torch.equal(torch.randn(20, generator=g), first)
    g.set_state(state)
    assert torch.equal(torch.randn(20, generator=g), first)
    other = torch.Generator().set_state(state)
    assert torch.equal(torch.randn(20, generator=other), first)
    clone = g.clone_state()
    assert torch.equal(torch.rand(3, generator=clone), torch.rand(3, generator=g))


def test_set_state_checks_its_argument():
    g = torch.Generator()
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state(torch.zeros(16))
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state([0] * 16)
    with pytest.raises(RuntimeError, match="size 16"):
        g.set_state(torch.zeros(3, dtype=torch.uint8))


def test_seed_range_and_types():
    g = torch.Generator()
    assert g.manual_seed(-1).initial_seed() == 2**64 - 1
    assert g.manual_seed(2**64 - 1).initial_seed() == 2**64 - 1
    with pytest.raises(ValueError, match="Overflow"):
        g.manual_seed(2**64)
    with pytest.raises(RuntimeError, match="expected a long"):
        g.manual_seed(1.5)
    with pytest.raises(RuntimeError, match="expected a long"):
        g.manual_seed(True)
    assert torch.manual_seed("5").initial_seed() == 5  # torch.manual_seed calls int() first
    s = torch.seed()
    assert isinstance(s, int) and torch.initial_seed() == s


def test_rng_state_functions_restore_the_default_stream():
    torch.manual_seed(3)
    state = torch.get_rng_state()
    a = torch.rand(6)
    torch.rand(100)
    torch.set_rng_state(state)
    assert torch.equal(torch.rand(6), a)
    with pytest.raises(TypeError):
        torch.set_rng_state(torch.zeros(16))


def test_explicit_generator_leaves_the_default_alone():
    torch.manual_seed(11)
    expected = torch.rand(5)
    torch.manual_seed(11)
    g = torch.Generator().manual_seed(11)
    from_g = torch.rand(5, generator=g)
    for op in (lambda: torch.randn(4, generator=g), lambda: torch.randint(9, (4,), generator=g),
               lambda: torch.randperm(6, generator=g),
               lambda: torch.empty(4).uniform_(generator=g),
               lambda: torch.multinomial(torch.ones(4), 2, generator=g),
               lambda: torch.bernoulli(torch.full((4,), 0.5), generator=g)):
        op()
    assert torch.equal(torch.rand(5), expected)
    assert torch.equal(from_g, expected)  # same seed, same stream


def test_generator_device_checks():
    with pytest.raises(RuntimeError, match="not an accelerator"):
        torch.Generator("meta")
    with pytest.raises(TypeError, match="Generator"):
        torch.rand(2, generator=123)


def test_lock_is_recreated_after_fork():
    from torch._core import generators as _random

    old = _random._lock
    _random._reinit_lock_after_fork()
    assert _random._lock is not old
    g = torch.Generator().manual_seed(1)
    assert g.get_offset() == 0


# -- uniform ---------------------------------------------------------------------------------

# significand bits of each float dtype: uniform values are multiples of 2**-p
SIGNIFICAND = {torch.float64: 53, torch.float32: 24, torch.float16: 11, torch.bfloat16: 8}


@pytest.mark.parametrize("dtype", list(SIGNIFICAND))
def test_rand_range_grid_and_moments(dtype):
    torch.manual_seed(0)
    x = torch.rand(20000, dtype=dtype)
    assert x.dtype == dtype and x.shape == (20000,)
    v = np.array(x.to(torch.float64).tolist())
    assert v.min() >= 0.0 and v.max() < 1.0
    p = SIGNIFICAND[dtype]
    assert np.all(v * 2.0**p == np.floor(v * 2.0**p))
    # mean 1/2, variance 1/12 (standard error of the mean ~0.002)
    assert abs(v.mean() - 0.5) < 0.011
    assert abs(v.var() - 1 / 12) < 0.005


def test_rand_shapes_and_errors():
    assert torch.rand(2, 3).shape == (2, 3)
    assert torch.rand((2, 3)).shape == (2, 3)
    assert torch.rand(size=(4,)).shape == (4,)
    assert torch.rand(()).shape == ()
    assert torch.rand(0, 3).shape == (0, 3)
    assert torch.rand(2, dtype=torch.complex64).dtype == torch.complex64
    assert torch.rand(2, requires_grad=True).requires_grad
    with pytest.raises(NotImplementedError, match="Long"):
        torch.rand(2, dtype=torch.int64)
    out = torch.empty(0)
    assert torch.rand(3, out=out) is out and out.shape == (3,)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_uniform_in_place(dtype):
    torch.manual_seed(1)
    base = torch.zeros(4, 10, dtype=dtype)
    view = base[:, ::2]
    assert view.uniform_(-2, 3) is view
    v = np.array(view.to(torch.float64).tolist())
    assert v.min() >= -2 and v.max() <= 3 and v.std() > 0.5
    assert base[:, 1::2].to(torch.float64).abs().sum().item() == 0  # untouched


def test_uniform_errors():
    with pytest.raises(RuntimeError, match="from=1 > to=0"):
        torch.zeros(3).uniform_(1, 0)
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.zeros(3).uniform_(0, float("inf"))
    with pytest.raises(NotImplementedError):
        torch.zeros(3, dtype=torch.int64).uniform_()


def test_rand_like():
    x = torch.zeros(3, 4, dtype=torch.float64)
    y = torch.rand_like(x)
    assert y.shape == (3, 4) and y.dtype == torch.float64
    assert torch.rand_like(x, dtype=torch.float16).dtype == torch.float16


# -- normal ----------------------------------------------------------------------------------


def _normal_cdf(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _ks_statistic(v: np.ndarray, cdf) -> float:
    v = np.sort(v)
    n = len(v)
    f = cdf(v)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_randn_is_standard_normal(dtype):
    torch.manual_seed(2)
    v = np.array(torch.randn(20000, dtype=dtype).tolist())
    assert abs(v.mean()) < 0.04 and abs(v.std() - 1) < 0.03
    # Kolmogorov-Smirnov: 1.95 / sqrt(n) is the 0.1% critical value
    assert _ks_statistic(v, _normal_cdf) < 1.95 / math.sqrt(len(v))


def test_randn_half_and_complex():
    torch.manual_seed(3)
    h = torch.randn(5000, dtype=torch.bfloat16)
    assert h.dtype == torch.bfloat16
    assert abs(np.array(h.float().tolist()).std() - 1) < 0.06
    c = torch.randn(10000, dtype=torch.complex64)
    parts = np.array(torch.view_as_real(c).tolist()) if hasattr(torch, "view_as_real") else \
        np.array([[z.real, z.imag] for z in c.tolist()])
    assert abs(parts.var(axis=0) - 0.5).max() < 0.04  # each part has variance 1/2


def test_normal_overloads():
    torch.manual_seed(4)
    mean = torch.tensor([[-10.0], [10.0]])  # (2, 1)
    std = torch.tensor([0.5, 1.0, 2.0])  # (3,)
    draws = np.array(torch.normal(mean.expand(400, 2, 1), std).tolist())  # (400, 2, 3)
    assert draws.shape == (400, 2, 3)
    assert np.allclose(draws.mean(axis=0), [[-10] * 3, [10] * 3], atol=0.4)
    assert np.allclose(draws.std(axis=0), [[0.5, 1, 2]] * 2, rtol=0.2)
    assert torch.normal(torch.zeros(2), 1.0).dtype == torch.float32
    assert torch.normal(torch.zeros(2), torch.ones(2, dtype=torch.float64)).dtype == \
        torch.float32
    assert torch.normal(0.0, torch.ones(2, dtype=torch.float64)).dtype == torch.float64
    x = torch.normal(3.0, 0.0, (2, 5))
    assert x.shape == (2, 5) and x.tolist() == [[3.0] * 5] * 2
    assert torch.normal(0.0, 1.0, size=(2,), dtype=torch.float64).dtype == torch.float64


def test_normal_errors():
    with pytest.raises(RuntimeError, match=r"std >= 0\.0"):
        torch.normal(torch.zeros(2), -1.0)
    with pytest.raises(RuntimeError, match="all elements of std"):
        torch.normal(torch.zeros(2), torch.tensor([1.0, -1.0]))
    with pytest.raises(RuntimeError, match="must match"):
        torch.normal(torch.zeros(4), torch.ones(3))
    with pytest.raises(TypeError):
        torch.normal(2.0, 3.0)
    with pytest.raises(NotImplementedError):
        torch.normal(torch.zeros(2, dtype=torch.int64), 1.0)
    with pytest.raises(RuntimeError, match=r"std >= 0\.0"):
        torch.zeros(3).normal_(0, -1)


def test_normal_in_place_and_log_normal():
    torch.manual_seed(5)
    v = np.array(torch.empty(20000, dtype=torch.float64).normal_(5.0, 2.0).tolist())
    assert abs(v.mean() - 5) < 0.06 and abs(v.std() - 2) < 0.05
    ln = np.array(torch.empty(20000, dtype=torch.float64).log_normal_(0.5, 0.25).tolist())
    assert ln.min() > 0
    assert abs(np.log(ln).mean() - 0.5) < 0.01 and abs(np.log(ln).std() - 0.25) < 0.01
    with pytest.raises(RuntimeError, match=r"std > 0\.0"):
        torch.zeros(3).log_normal_(0, 0)


# -- integers --------------------------------------------------------------------------------


def test_randint_range_dtype_and_uniformity():
    torch.manual_seed(6)
    x = torch.randint(3, 13, (30000,))
    assert x.dtype == torch.int64
    counts = np.bincount(np.array(x.tolist()) - 3, minlength=10)
    assert counts.sum() == 30000 and len(counts) == 10
    chi2 = ((counts - 3000) ** 2 / 3000).sum()
    assert chi2 < 35  # 9 degrees of freedom; 0.01% critical value ~33.7
    assert torch.randint(10, (3,)).shape == (3,)
    assert torch.randint(low=2, high=4, size=(50,)).tolist() != [2] * 50
    assert set(torch.randint(0, 2, (100,), dtype=torch.bool).tolist()) == {False, True}
    assert torch.randint(10, (3,), dtype=torch.float32).dtype == torch.float32


def test_randint_wide_ranges():
    torch.manual_seed(7)
    lo, hi = -(2**62), 2**62
    v = torch.randint(lo, hi, (2000,)).tolist()
    assert all(lo <= x < hi for x in v)
    assert sum(x < 0 for x in v) in range(850, 1151)  # both halves are used
    big = torch.randint(2**40, (1000,)).tolist()
    assert max(big) > 2**39 and min(big) >= 0


def test_randint_errors():
    with pytest.raises(RuntimeError, match="from=10 >= to=3"):
        torch.randint(10, 3, (3,))
    with pytest.raises(RuntimeError, match="out of bounds for unsigned char"):
        torch.randint(300, (3,), dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="from is out of bounds"):
        torch.randint(-5, 0, (3,), dtype=torch.uint8)
    with pytest.raises(TypeError):
        torch.randint(5)


def test_randint_like_and_random_():
    torch.manual_seed(8)
    x = torch.zeros(200)
    assert set(torch.randint_like(x, 5).tolist()) <= {0.0, 1.0, 2.0, 3.0, 4.0}
    assert set(torch.randint_like(x, 2, 4).tolist()) == {2.0, 3.0}
    assert set(torch.zeros(200).random_(5).tolist()) == {0.0, 1.0, 2.0, 3.0, 4.0}
    assert set(torch.zeros(200).random_(2, 5).tolist()) == {2.0, 3.0, 4.0}
    u8 = torch.zeros(2000, dtype=torch.uint8).random_()
    assert max(u8.tolist()) > 200  # [0, 255]
    f = torch.zeros(1000).random_().tolist()
    assert all(0 <= v <= 2**24 and v == int(v) for v in f) and max(f) > 2**20
    assert set(torch.zeros(100, dtype=torch.bool).random_().tolist()) == {False, True}
    with pytest.raises(RuntimeError, match="from=5 >= to=2"):
        torch.zeros(3).random_(5, 2)


def test_randperm():
    torch.manual_seed(9)
    p = torch.randperm(50)
    assert p.dtype == torch.int64 and sorted(p.tolist()) == list(range(50))
    assert p.tolist() != list(range(50))
    assert torch.randperm(0).shape == (0,)
    assert sorted(torch.randperm(5, dtype=torch.float32).tolist()) == [0.0, 1.0, 2.0, 3.0, 4.0]
    # every position sees every value about equally often
    firsts = np.bincount([torch.randperm(4)[0].item() for _ in range(200)], minlength=4)
    assert firsts.min() > 20
    with pytest.raises(RuntimeError):
        torch.randperm(-1)
    with pytest.raises(RuntimeError):
        torch.randperm(300, dtype=torch.uint8)
    with pytest.raises(NotImplementedError):
        torch.randperm(3, dtype=torch.bool)


# -- bernoulli, multinomial, other distributions ---------------------------------------------


def test_bernoulli():
    torch.manual_seed(10)
    p = torch.tensor([0.0, 1.0, 0.3]).expand(10000, 3)
    draws = np.array(torch.bernoulli(p).tolist())
    assert draws.dtype == float and set(np.unique(draws)) <= {0.0, 1.0}
    assert draws[:, 0].sum() == 0 and draws[:, 1].sum() == 10000
    assert abs(draws[:, 2].mean() - 0.3) < 0.02
    assert abs(torch.bernoulli(torch.zeros(10000), 0.8).mean().item() - 0.8) < 0.02
    ints = torch.zeros(1000, dtype=torch.int64).bernoulli_(0.5)
    assert ints.dtype == torch.int64 and set(ints.tolist()) == {0, 1}
    target = torch.zeros(3)
    assert target.bernoulli_(torch.tensor([0.0, 1.0, 1.0])).tolist() == [0.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="p_in >= 0"):
        torch.bernoulli(torch.full((3,), 2.0))
    with pytest.raises(RuntimeError, match=r"\[0, 1\]"):
        torch.zeros(3).bernoulli_(1.5)
    with pytest.raises(NotImplementedError):
        torch.bernoulli(torch.ones(3, dtype=torch.int64))


def test_multinomial_with_replacement_follows_the_weights():
    torch.manual_seed(12)
    w = torch.tensor([1.0, 0.0, 3.0, 6.0])
    draws = np.array(torch.multinomial(w, 20000, replacement=True).tolist())
    counts = np.bincount(draws, minlength=4)
    assert counts[1] == 0
    assert np.allclose(counts / 20000, [0.1, 0.0, 0.3, 0.6], atol=0.015)


def test_multinomial_without_replacement():
    torch.manual_seed(13)
    rows = torch.multinomial(torch.ones(3, 6), 6)
    assert rows.shape == (3, 6)
    assert all(sorted(r) == list(range(6)) for r in rows.tolist())
    # the first draw follows the weights; zero-weight categories come last
    w = torch.tensor([0.0, 1.0, 3.0])
    firsts = np.bincount(torch.multinomial(w.expand(2000, 3), 2)[:, 0].tolist(), minlength=3)
    assert firsts[0] == 0 and abs(firsts[2] / 2000 - 0.75) < 0.05
    assert torch.multinomial(torch.tensor([0.0, 1.0, 0.0]), 2)[0].item() == 1


def test_multinomial_errors():
    with pytest.raises(RuntimeError, match="without replacement"):
        torch.multinomial(torch.tensor([1.0, 1.0, 0.0]), 4)
    with pytest.raises(RuntimeError, match="element < 0"):
        torch.multinomial(torch.tensor([1.0, -1.0]), 1)
    with pytest.raises(RuntimeError, match="element < 0"):
        torch.multinomial(torch.tensor([1.0, float("nan")]), 1)
    with pytest.raises(RuntimeError, match="sum of probabilities"):
        torch.multinomial(torch.tensor([0.0, 0.0]), 1)
    with pytest.raises(RuntimeError, match="1 or 2 dim"):
        torch.multinomial(torch.ones(2, 2, 2), 1)
    with pytest.raises(RuntimeError, match="n_sample <= 0"):
        torch.multinomial(torch.ones(3), 0)
    with pytest.raises(RuntimeError, match="floating-point"):
        torch.multinomial(torch.ones(3, dtype=torch.int64), 1)


def test_exponential_geometric_cauchy():
    torch.manual_seed(14)
    e = np.array(torch.empty(20000, dtype=torch.float64).exponential_(4.0).tolist())
    assert e.min() > 0 and abs(e.mean() - 0.25) < 0.01
    g = np.array(torch.empty(20000).geometric_(0.25).tolist())
    assert g.min() >= 1 and np.all(g == np.floor(g)) and abs(g.mean() - 4) < 0.15
    gi = torch.zeros(10, dtype=torch.int64).geometric_(0.5)
    assert gi.dtype == torch.int64 and min(gi.tolist()) >= 1
    c = np.array(torch.empty(20001, dtype=torch.float64).cauchy_(2.0, 0.5).tolist())
    assert abs(np.median(c) - 2.0) < 0.03
    q1, q3 = np.percentile(c, [25, 75])  # quartiles of Cauchy(m, s) are m -/+ s
    assert abs(q1 - 1.5) < 0.04 and abs(q3 - 2.5) < 0.04
    with pytest.raises(RuntimeError, match=r"lambda > 0\.0"):
        torch.zeros(3).exponential_(0)
    with pytest.raises(RuntimeError, match=r"\(0, 1\)"):
        torch.zeros(3).geometric_(1)
    with pytest.raises(RuntimeError, match=r"sigma > 0\.0"):
        torch.zeros(3).cauchy_(0, -1)
    with pytest.raises(RuntimeError, match="continuous"):
        torch.zeros(3, dtype=torch.int64).exponential_()


@pytest.mark.parametrize("fill", [
    lambda x: x.uniform_(), lambda x: x.uniform_(-2.0, 3.0), lambda x: x.normal_(),
    lambda x: x.normal_(1.0, 2.0), lambda x: x.bernoulli_(0.3), lambda x: x.exponential_(),
    lambda x: x.random_(0, 5),
])
def test_in_place_samplers_bump_the_version_counter(fill):
    # autograd must see the write: a saved tensor overwritten by a sampler fails backward
    x = torch.empty(8)
    before = x._version
    fill(x)
    assert x._version == before + 1
    w = torch.ones(4, requires_grad=True)
    y = (w * w).sum()
    with torch.no_grad():
        fill(w)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
