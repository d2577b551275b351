"""Small torch.* composites and Tensor queries the compatibility report found missing: cov,
corrcoef, trapezoid/trapz/cumulative_trapezoid, vander, block_diag, cartesian_prod, combinations,
heaviside, renorm; torch.is_complex/detach, Tensor.is_signed/get_device/is_same_size/type_as/
cfloat/cdouble/is_quantized/is_mkldnn and ``element in tensor``. Expected values are written out
by hand or from the defining formulas; behaviour checked against PyTorch 2.13."""

from __future__ import annotations

import math

import pytest

import torch


def _flat(values: list) -> list:
    return [v for row in values for v in _flat(row)] if isinstance(values, list) else [values]


def close(t: torch.Tensor, expected: list, **kw) -> None:
    assert list(t.shape) == list(torch.tensor(expected).shape), t
    assert _flat(t.tolist()) == pytest.approx(_flat(expected), **kw), t


def test_cov_and_corrcoef():
    x = torch.tensor([[1.0, 2.0, 4.0], [3.0, 1.0, 0.0]])
    # row means 7/3 and 4/3; unbiased: sum of products of deviations / 2
    d0 = [v - 7 / 3 for v in (1, 2, 4)]
    d1 = [v - 4 / 3 for v in (3, 1, 0)]
    c01 = sum(a * b for a, b in zip(d0, d1)) / 2
    c00, c11 = sum(a * a for a in d0) / 2, sum(b * b for b in d1) / 2
    close(torch.cov(x), [[c00, c01], [c01, c11]], rel=1e-6)
    ml = 2 / 3  # correction=0 divides by the 3 observations, not 2
    close(x.cov(correction=0), [[c00 * ml, c01 * ml], [c01 * ml, c11 * ml]], rel=1e-6)
    one = torch.cov(torch.tensor([1, 2, 4]))
    assert one.dim() == 0 and one.dtype == torch.float32 and one.item() == pytest.approx(c00)
    r = torch.corrcoef(x)
    close(r, [[1.0, c01 / math.sqrt(c00 * c11)], [c01 / math.sqrt(c00 * c11), 1.0]], rel=1e-6)
    assert torch.corrcoef(torch.tensor([1.0, 2.0, 4.0])).item() == 1.0
    # frequency weights repeat observations: weight 2 on the middle one = the column twice
    repeated = torch.tensor([[1.0, 2.0, 2.0, 4.0], [3.0, 1.0, 1.0, 0.0]])
    weighted = torch.cov(x, fweights=torch.tensor([1, 2, 1]))
    assert torch.allclose(weighted, torch.cov(repeated))
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert math.isinf(torch.cov(torch.tensor([[1.0, 2.0]]), correction=5).item())
    with pytest.raises(RuntimeError, match="two or fewer dimensions"):
        torch.cov(torch.zeros(2, 2, 2))


def test_cov_gradient():
    x = torch.tensor([[1.0, 2.0, 4.0], [3.0, 1.0, 0.5]], dtype=torch.float64,
                     requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: torch.cov(t), (x,))
    assert torch.autograd.gradcheck(lambda t: torch.corrcoef(t), (x,))


def test_trapezoid_family():
    y = torch.tensor([1.0, 2.0, 4.0])
    assert torch.trapezoid(y).item() == 4.5  # (1+2)/2 + (2+4)/2
    assert torch.trapezoid(y, dx=2).item() == 9.0
    assert torch.trapezoid(y, torch.tensor([0.0, 1.0, 3.0])).item() == 7.5  # 1.5 + 3 * 2
    assert torch.trapz(y, dx=0.5).item() == 2.25
    close(torch.cumulative_trapezoid(y), [1.5, 4.5])
    ints = torch.trapezoid(torch.tensor([1, 2, 4]))
    assert ints.dtype == torch.float32 and ints.item() == 4.5
    grid = torch.tensor([[1.0, 2.0], [4.0, 1.0]])
    close(torch.trapezoid(grid, dim=0), [2.5, 1.5])
    close(torch.trapezoid(torch.tensor([[1.0, 2.0, 4.0], [1.0, 1.0, 1.0]]),
                          torch.tensor([0.0, 1.0, 3.0])), [7.5, 3.0])
    assert torch.trapezoid(torch.tensor([])).item() == 0.0
    leaf = y.double().requires_grad_()
    torch.trapezoid(leaf).backward()
    close(leaf.grad, [0.5, 1.0, 0.5])


def test_vander_block_diag_cartesian_prod_combinations():
    close(torch.vander(torch.tensor([1, 2, 3])), [[1, 1, 1], [4, 2, 1], [9, 3, 1]])
    close(torch.vander(torch.tensor([2.0, 3.0]), N=4, increasing=True),
          [[1, 2, 4, 8], [1, 3, 9, 27]])
    assert torch.vander(torch.tensor([True, False])).dtype == torch.int64
    assert torch.vander(torch.tensor([1.0, 2.0]), N=0).shape == (2, 0)

    blocks = torch.block_diag(torch.tensor(2), torch.tensor([1, 2]), torch.ones(2, 2))
    close(blocks, [[2, 0, 0, 0, 0], [0, 1, 2, 0, 0], [0, 0, 0, 1, 1], [0, 0, 0, 1, 1]])
    assert blocks.dtype == torch.float32 and torch.block_diag().shape == (1, 0)

    close(torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4, 5])),
          [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]])
    assert torch.cartesian_prod(torch.tensor([1, 2])).tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.cartesian_prod(torch.tensor([1]), torch.tensor([1.0]))

    close(torch.combinations(torch.tensor([1, 2, 3])), [[1, 2], [1, 3], [2, 3]])
    close(torch.combinations(torch.tensor([1, 2, 3]), with_replacement=True),
          [[1, 1], [1, 2], [1, 3], [2, 2], [2, 3], [3, 3]])
    assert torch.combinations(torch.tensor([1, 2]), r=3).shape == (0, 3)
    assert torch.combinations(torch.tensor([1, 2, 3]), r=0).shape == (0,)


def test_heaviside_and_renorm():
    x = torch.tensor([-1.0, 0.0, 2.0])
    close(torch.heaviside(x, torch.tensor([0.5])), [0.0, 0.5, 1.0])
    close(x.heaviside(torch.tensor(3.0)), [0.0, 3.0, 1.0])
    with pytest.raises(RuntimeError, match="different dtypes"):
        torch.heaviside(x, torch.tensor([1]))
    rows = torch.tensor([[3.0, 4.0], [0.3, 0.4]])  # row norms 5 and 0.5
    scale = 1.0 / (5.0 + 1e-7)
    close(torch.renorm(rows, 2, 0, 1.0), [[3 * scale, 4 * scale], [0.3, 0.4]], rel=1e-6)
    close(rows.renorm(1, 1, 3.0), [[3.0 * 3 / (3.3 + 1e-7), 4.0 * 3 / (4.4 + 1e-7)],
                                   [0.3 * 3 / (3.3 + 1e-7), 0.4 * 3 / (4.4 + 1e-7)]], rel=1e-6)


def test_tensor_queries_and_casts():
    x = torch.tensor([1.0, 2.0])
    assert torch.is_complex(torch.tensor([1j])) and not torch.is_complex(x)
    leaf = x.clone().requires_grad_()
    assert not torch.detach(leaf).requires_grad
    assert x.get_device() == -1
    assert torch.tensor([1, 2]).is_signed() and x.is_signed()
    assert not torch.tensor([1], dtype=torch.uint8).is_signed()
    assert not torch.tensor([True]).is_signed()
    assert x.is_same_size(torch.ones(2)) and not x.is_same_size(torch.ones(1, 2))
    assert x.type_as(x) is x and x.type_as(torch.tensor([1])).dtype == torch.int64
    assert x.cfloat().dtype == torch.complex64 and x.cdouble().dtype == torch.complex128
    assert x.is_quantized is False and x.is_mkldnn is False
    grid = torch.tensor([[0.5, 1.0], [2.0, 3.0]])
    assert 0.5 in grid and 3 in grid and 4 not in grid
    assert torch.tensor(2.0) in grid
    with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
        _ = "a" in grid


def test_isreal_of_complex_looks_at_the_imaginary_part():
    z = torch.tensor([1 + 2j, 0.25j, 2 + 0j, -3 + 0j])
    assert torch.isreal(z).tolist() == [False, False, True, True]
    assert torch.isreal(torch.tensor([1.0, float("nan")])).tolist() == [True, True]


def test_layout_queries_and_in_place_helpers():
    x = torch.ones(2, 3)
    assert x.dim_order() == (0, 1) and x.t().dim_order() == (1, 0)
    images = torch.ones(2, 3, 4, 5).to(memory_format=torch.channels_last)
    assert images.dim_order() == (0, 2, 3, 1)
    assert x.is_set_to(x) and not x.is_set_to(x.view(3, 2)) and not x.is_set_to(x.clone())
    assert x.is_pinned() is False
    assert torch.zeros(4).resize_as_(torch.ones(2, 2)).shape == (2, 2)
    y = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert y.apply_(lambda v: v * 2 + 1) is y and y.tolist() == [[3.0, 5.0], [7.0, 9.0]]
    column = y[:, 1]  # a strided view: the function reaches the viewed elements only
    column.apply_(lambda v: -v)
    assert y.tolist() == [[3.0, -5.0], [7.0, -9.0]]
    assert torch.tensor([1, 2]).apply_(lambda v: v * 3).tolist() == [3, 6]


def test_conjugate_transposes():
    z = torch.tensor([[1 + 2j, 3j], [2.0 + 0j, -1j]])
    assert z.H.tolist() == [[1 - 2j, 2 - 0j], [-3j, 1j]]
    assert torch.ones(2, 3).H.shape == (3, 2) and torch.ones(2, 3, 4).mH.shape == (2, 4, 3)
    batch = torch.stack([z, 2 * z])
    assert batch.mH[1].tolist() == (2 * z).H.tolist()
    assert torch.tensor(3.0).H.item() == 3.0
    with pytest.raises(RuntimeError, match=r"consider using tensor\.mH"):
        _ = torch.ones(2, 3, 4).H
    with pytest.raises(RuntimeError, match="matrices or batches of matrices"):
        _ = torch.ones(3).mH



def test_concatenate_takes_numpys_axis():
    x = torch.ones(2, 2)
    assert torch.concatenate([x, x], axis=1).shape == (2, 4)
    assert torch.concat((x, x), axis=0).shape == (4, 2)
    assert torch.concatenate([x, x], dim=1).shape == (2, 4)


def test_histogram():
    x = torch.tensor([1.0, 2.0, 1.0, 4.0, 2.5, 0.0])
    hist, edges = torch.histogram(x, bins=4)  # edges 0, 1, 2, 3, 4; the last bin is closed
    assert hist.tolist() == [1, 2, 2, 1] and edges.tolist() == [0, 1, 2, 3, 4]
    hist, edges = torch.histogram(x, bins=3, range=(1.0, 3.0))  # 0 and 4 are outside
    assert hist.tolist() == [2, 1, 1]
    close(edges, [1.0, 5 / 3, 7 / 3, 3.0])
    assert torch.histogram(x, bins=torch.tensor([0.0, 1.0, 2.5, 4.0])).hist.tolist() == [1, 3, 2]
    weighted = torch.histogram(x, bins=2, weight=torch.arange(6.0), density=True).hist
    close(weighted, [7 / 15 / 2, 8 / 15 / 2])  # weights 0+1+2+5 and 3+4 over 15, width 2
    same = torch.histogram(torch.tensor([2.0, 2.0]), bins=2)
    assert same.bin_edges.tolist() == [1.5, 2.0, 2.5] and same.hist.tolist() == [0, 2]
    assert x.histogram(2).hist.tolist() == [3, 3]
    with pytest.raises(NotImplementedError, match="'Long'"):
        torch.histogram(torch.tensor([1, 2]), 2)


def test_distance_functions_in_torch_namespace():
    x = torch.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, -1.0]])
    y = torch.tensor([[1.0, 0.0, 0.0], [2.0, 2.0, 2.0]])
    close(torch.cosine_similarity(x, y), [1 / math.sqrt(14), 0.0], rel=1e-6)
    close(torch.pairwise_distance(x, y, eps=0.0), [math.sqrt(13), math.sqrt(14)], rel=1e-6)
    close(torch.pdist(x), [math.sqrt(1 + 1 + 16)], rel=1e-6)
    assert torch.pdist(torch.ones(1, 3)).shape == (0,)
    import torch.nn.functional as F

    assert torch.equal(F.cosine_similarity(x, y), torch.cosine_similarity(x, y))
