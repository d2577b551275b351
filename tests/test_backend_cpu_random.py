"""The fused samplers of plait-backend-cpu (rand, randn, uniform_, normal_, bernoulli_.float,
bernoulli.p) against core's composite kernels: the same values bit for bit and the same
Philox counters taken from the generator, over dtypes, sizes, layouts, generators and threads."""

from __future__ import annotations

import pytest

pytest.importorskip("plait_backend_cpu._C")

from plait_backend_cpu import _C as C

import torch
import torch.nn.functional as F
from torch._core import dispatch as _dispatch
from torch.backends import contract

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
SHAPES = [(), (0,), (1,), (2,), (5,), (7, 3), (4, 0, 2), (1031,)]
# Integer views of the same width: comparing them compares bits (-0.0 and 0.0 differ).
_BITS = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
         torch.bfloat16: torch.int16}
FUSED = ["aten::rand", "aten::rand.generator", "aten::randn", "aten::randn.generator",
         "aten::uniform_", "aten::normal_", "aten::bernoulli_.float", "aten::bernoulli.p"]


def _bits(t: torch.Tensor) -> list:
    return t.contiguous().view(_BITS[t.dtype]).reshape(-1).tolist()


def _same_bits(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    assert _bits(got) == _bits(want)


def _composite(qualname: str):
    return contract.composite(qualname)


def _pair(seed: int) -> tuple[torch.Generator, torch.Generator]:
    return torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)


@pytest.fixture
def threads():
    before = C.get_num_threads()
    yield C.set_num_threads
    C.set_num_threads(before)


@pytest.mark.parametrize("qualname", FUSED)
def test_the_cpu_kernel_is_the_backends(qualname):
    torch.zeros(1)  # the backend registers its kernels on first use of the device
    kernel = _dispatch.get(qualname).kernels.get("CPU")
    assert kernel is not None
    assert kernel.__module__.startswith("plait_backend_cpu")


def test_reserve_counters_takes_them_from_the_generator_it_resolves():
    cpu = torch.device("cpu")
    g = torch.Generator().manual_seed(21)
    g.set_offset(10)
    assert contract.reserve_counters(g, cpu, 3) == (21, 10)
    assert g.get_offset() == 13
    torch.manual_seed(4)
    assert contract.reserve_counters(None, cpu, 0) == (4, 0)
    assert contract.reserve_counters(None, cpu, 2) == (4, 0)
    assert torch.default_generator.get_offset() == 2
    with pytest.raises(TypeError, match=r"must be a torch\.Generator"):
        contract.reserve_counters(3, cpu, 1)


# -- factories ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["rand", "randn"])
def test_factories_with_a_generator_match_the_composite(name, shape, dtype):
    g1, g2 = _pair(1234)
    g1.set_offset(5)
    g2.set_offset(5)
    got = getattr(torch, name)(*shape, generator=g1, dtype=dtype)
    want = _composite(f"aten::{name}.generator")(shape, generator=g2, dtype=dtype,
                                                 device=torch.device("cpu"))
    _same_bits(got, want)
    assert g1.get_offset() == g2.get_offset()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["rand", "randn"])
def test_consecutive_calls_on_the_default_generator_match_the_composite(name, dtype):
    sizes = [(3,), (1,), (6, 5), (), (9,)]
    torch.manual_seed(7)
    got = [getattr(torch, name)(*s, dtype=dtype) for s in sizes]
    offset = torch.default_generator.get_offset()
    torch.manual_seed(7)
    want = [_composite(f"aten::{name}")(s, dtype=dtype, device=torch.device("cpu"))
            for s in sizes]
    assert torch.default_generator.get_offset() == offset
    for a, b in zip(got, want):
        _same_bits(a, b)


def test_the_default_stream_is_unchanged():
    # the composite's values for these seeds, taken before the fused kernels existed
    torch.manual_seed(0)
    assert torch.randn(5).tolist() == [-1.0685278177261353, 0.49681147933006287,
                                       -0.5072932243347168, -0.8340282440185547,
                                       -0.08754009008407593]
    torch.manual_seed(0)
    assert torch.randn(3, dtype=torch.float64).tolist() == [
        1.3349257240379309, -0.2703378521708034, -0.2352192859097123]
    torch.manual_seed(0)
    assert torch.rand(3).tolist() == [0.3990464210510254, 0.8805201649665833,
                                      0.7357127666473389]
    assert torch.default_generator.get_offset() == 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", ["rand", "randn"])
def test_large_factories_do_not_depend_on_the_thread_count(threads, name, dtype):
    results = []
    for count in (1, 2):
        threads(count)
        results.append(getattr(torch, name)(70001, generator=torch.Generator().manual_seed(3),
                                            dtype=dtype))
    want = _composite(f"aten::{name}.generator")((70001,),
                                                 generator=torch.Generator().manual_seed(3),
                                                 dtype=dtype, device=torch.device("cpu"))
    for got in results:
        _same_bits(got, want)


@pytest.mark.parametrize("seed", [0, 1, 2**63 + 5, 2**64 - 1])
def test_seeds_and_a_wrapping_offset_match_the_composite(seed):
    g1, g2 = _pair(seed)
    g1.set_offset(2**64 - 3)  # the counter's low 64 bits wrap into a carry
    g2.set_offset(2**64 - 3)
    got = torch.randn(37, generator=g1, dtype=torch.float64)
    want = _composite("aten::randn.generator")((37,), generator=g2, dtype=torch.float64,
                                               device=torch.device("cpu"))
    _same_bits(got, want)
    assert g1.get_offset() == g2.get_offset()


# -- in-place samplers --------------------------------------------------------------------


def _layouts(shape: tuple[int, ...], dtype: torch.dtype):
    """Fresh outputs of ``shape``: contiguous, transposed, sliced."""
    yield torch.zeros(shape, dtype=dtype)
    if len(shape) == 2:
        yield torch.zeros(shape[::-1], dtype=dtype).t()
        yield torch.zeros(shape[0], shape[1] * 2, dtype=dtype)[:, ::2]


def _in_place_matches(qualname: str, method: str, args: tuple, shape: tuple[int, ...],
                      dtype: torch.dtype) -> None:
    for out, ref in zip(_layouts(shape, dtype), _layouts(shape, dtype)):
        g1, g2 = _pair(99)
        result = getattr(out, method)(*args, generator=g1)
        assert result is out
        _composite(qualname)(ref, *args, generator=g2)
        _same_bits(out, ref)
        assert g1.get_offset() == g2.get_offset()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (7, 3)])
@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-2.0, 3.5), (1e-3, 1.001), (4.0, 4.0)])
def test_uniform_matches_the_composite(dtype, shape, bounds):
    _in_place_matches("aten::uniform_", "uniform_", bounds, shape, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (7, 3)])
@pytest.mark.parametrize("moments", [(0.0, 1.0), (2.5, 0.3), (-1.0, 0.0), (0.0, 3.0),
                                     (1.0, 1.0)])
def test_normal_matches_the_composite(dtype, shape, moments):
    _in_place_matches("aten::normal_", "normal_", moments, shape, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (7, 3), (33, 31)])
@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_bernoulli_matches_the_composite(dtype, shape, p):
    _in_place_matches("aten::bernoulli_.float", "bernoulli_", (p,), shape, dtype)
    g1, g2 = _pair(5)
    x = torch.zeros(shape, dtype=dtype)
    _same_bits(torch.bernoulli(x, p, generator=g1),
               _composite("aten::bernoulli.p")(x, p, generator=g2))
    assert g1.get_offset() == g2.get_offset()


@pytest.mark.parametrize("method", ["uniform_", "normal_", "bernoulli_"])
def test_a_repeated_element_output_is_refused_as_the_composite_refuses_it(method):
    g1, g2 = _pair(11)
    with pytest.raises(RuntimeError, match="single memory location"):
        getattr(torch.zeros(1).expand(4), method)(generator=g1)
    with pytest.raises(RuntimeError, match="single memory location"):
        _composite(f"aten::{method}" + (".float" if method == "bernoulli_" else ""))(
            torch.zeros(1).expand(4), generator=g2)
    assert g1.get_offset() == g2.get_offset()


def test_dropout_draws_the_composites_mask():
    x = torch.randn(64, 64)
    torch.manual_seed(3)
    got = F.dropout(x, 0.1)
    torch.manual_seed(3)
    keep = torch.empty_like(x)
    _composite("aten::bernoulli_.float")(keep, 0.9)
    _same_bits(got, x * keep.div_(0.9))


# -- what the kernels leave to the composite still raises PyTorch's errors ------------------


def test_declined_cases_raise_the_composites_errors():
    t = torch.zeros(3)
    with pytest.raises(RuntimeError, match="from=2 > to=1"):
        t.uniform_(2.0, 1.0)
    with pytest.raises(RuntimeError, match="out of bounds"):
        t.uniform_(0.0, float("inf"))
    with pytest.raises(RuntimeError, match=r"std >= 0\.0"):
        t.normal_(0.0, -1.0)
    with pytest.raises(RuntimeError, match="p to be in"):
        t.bernoulli_(1.5)
    with pytest.raises(NotImplementedError):
        torch.randn(3, dtype=torch.int64)
    with pytest.raises(RuntimeError):
        torch.randn(-1)
    with pytest.raises(TypeError, match=r"torch\.Generator"):
        torch.rand(3, generator=object())


def test_integer_and_complex_outputs_are_left_to_the_composite():
    g1, g2 = _pair(8)
    got = torch.zeros(9, dtype=torch.int32).bernoulli_(0.4, generator=g1)
    want = _composite("aten::bernoulli_.float")(torch.zeros(9, dtype=torch.int32), 0.4,
                                                generator=g2)
    assert got.tolist() == want.tolist()
    g1, g2 = _pair(8)
    got = torch.randn(4, dtype=torch.complex64, generator=g1)
    want = _composite("aten::randn.generator")((4,), generator=g2, dtype=torch.complex64,
                                               device=torch.device("cpu"))
    assert got.tolist() == want.tolist()
