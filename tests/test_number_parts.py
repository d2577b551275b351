"""torch.addr, gcd/lcm and frexp/ldexp (composites added after the compatibility report found
them missing): values written out by hand or from their definitions; PyTorch 2.13 gives the
same (checked when written)."""

from __future__ import annotations

import math

import pytest

import torch


def test_addr():
    m, v1, v2 = torch.ones(2, 3), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0, -1.0])
    assert torch.addr(m, v1, v2).tolist() == [[2, 1, 0], [3, 1, -1]]
    assert torch.addr(m, v1, v2, beta=0.5, alpha=2).tolist() == [[2.5, 0.5, -1.5],
                                                                 [4.5, 0.5, -3.5]]
    assert torch.addr(torch.ones(3), v1, v2).shape == (2, 3)  # input broadcasts
    nan = torch.full((2, 3), math.nan)
    assert torch.addr(nan, v1, v2, beta=0).tolist() == [[1, 0, -1], [2, 0, -2]]
    ints = torch.addr(torch.ones(2, 3, dtype=torch.int64), torch.tensor([1, 2]),
                      torch.tensor([1, 0, -1]))
    assert ints.dtype == torch.int64 and ints.tolist() == [[2, 1, 0], [3, 1, -1]]
    flags = torch.addr(torch.zeros(2, 3, dtype=torch.bool), torch.tensor([True, False]),
                       torch.tensor([True, False, True]))
    assert flags.tolist() == [[True, False, True], [False, False, False]]
    x = torch.ones(2, 3)
    assert x.addr_(v1, v2) is x and x.tolist() == [[2, 1, 0], [3, 1, -1]]
    leaf = v1.double().requires_grad_()
    torch.addr(torch.zeros(2, 3, dtype=torch.float64), leaf, v2.double()).sum().backward()
    assert leaf.grad.tolist() == [0.0, 0.0]  # d/dv1 of sum(v1 v2^T) = sum(v2) = 0


def test_gcd_lcm():
    a = torch.tensor([12, -18, 0, 7, 21])
    b = torch.tensor([18, 12, 0, 0, -14])
    assert torch.gcd(a, b).tolist() == [math.gcd(p, q) for p, q in zip(a.tolist(), b.tolist())]
    assert torch.lcm(a, b).tolist() == [abs(p * q) // math.gcd(p, q) if p and q else 0
                                        for p, q in zip(a.tolist(), b.tolist())]
    small = torch.gcd(a.to(torch.int8), b.to(torch.int8))
    assert small.dtype == torch.int8 and small.tolist() == [6, 6, 0, 7, 7]
    assert torch.gcd(torch.tensor([12]), torch.tensor([[18], [4]])).tolist() == [[6], [4]]
    assert torch.tensor([12]).gcd(torch.tensor([8])).tolist() == [4]
    with pytest.raises(NotImplementedError, match="'Float'"):
        torch.gcd(torch.tensor([1.0]), torch.tensor([2.0]))


def test_frexp_ldexp():
    values = [0.0, -0.0, 1.0, 3.5, -0.3, 1e-40, 1e300]
    mantissa, exponent = torch.frexp(torch.tensor(values, dtype=torch.float64))
    assert exponent.dtype == torch.int32
    assert list(zip(mantissa.tolist(), exponent.tolist())) == [math.frexp(v) for v in values]
    tiny = torch.tensor([2.0 ** -1074, 1e-310], dtype=torch.float64)  # subnormals
    assert list(zip(*[t.tolist() for t in torch.frexp(tiny)])) == [
        math.frexp(v) for v in tiny.tolist()]
    m32, e32 = torch.frexp(torch.tensor([1e-40, 6.0]))  # a float32 subnormal
    assert m32.dtype == torch.float32 and e32.tolist() == [-132, 3]
    special = torch.frexp(torch.tensor([math.inf, math.nan]))
    assert special.mantissa[0].item() == math.inf and math.isnan(special.mantissa[1].item())
    assert special.exponent.tolist() == [0, 0]
    with pytest.raises(RuntimeError, match="floating-point"):
        torch.frexp(torch.tensor([2]))
    assert torch.ldexp(torch.tensor([1.0, 2.0]), torch.tensor([3, -1])).tolist() == [8.0, 1.0]
    assert torch.ldexp(torch.tensor([1, 2]), torch.tensor([3, -1])).dtype == torch.float32
    back = torch.ldexp(mantissa, exponent)
    assert back.tolist() == values
