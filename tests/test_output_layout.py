"""The strides of elementwise ops' new outputs follow their inputs' layout, as in PyTorch.

Every expected stride tuple below was observed on PyTorch 2.x with the same call."""

import pytest

import torch


def seq(*shape):
    return torch.arange(float(torch.Size(shape).numel())).reshape(shape)


def transposed():  # (3, 4) with strides (1, 3)
    return seq(4, 3).t()


def channels_last():  # (2, 3, 4, 5) with strides (60, 1, 15, 3)
    return seq(2, 4, 5, 3).permute(0, 3, 1, 2)


CASES = {
    "unary transposed": (lambda: torch.exp(transposed()), (1, 3)),
    "neg transposed": (lambda: -transposed(), (1, 3)),
    "transposed + contiguous": (lambda: transposed() + seq(3, 4), (1, 3)),
    "contiguous + transposed": (lambda: seq(3, 4) + transposed(), (4, 1)),
    "transposed + number": (lambda: transposed() + 1, (1, 3)),
    "transposed + 0-d": (lambda: transposed() + torch.tensor(2.0), (1, 3)),
    "transposed + row": (lambda: transposed() + seq(4), (1, 3)),
    "row + transposed": (lambda: seq(4) + transposed(), (1, 3)),
    "transposed + column": (lambda: transposed() + seq(3, 1), (1, 3)),
    "column + row": (lambda: seq(3, 1) + seq(1, 4), (4, 1)),
    "channels_last unary": (lambda: torch.sin(channels_last()), (60, 1, 15, 3)),
    "channels_last + contiguous": (lambda: channels_last() + seq(2, 3, 4, 5), (60, 1, 15, 3)),
    "contiguous + channels_last": (lambda: seq(2, 3, 4, 5) + channels_last(), (60, 20, 5, 1)),
    "channels_last + bias": (lambda: channels_last() + seq(3, 1, 1), (60, 1, 15, 3)),
    "expanded column": (lambda: torch.exp(seq(3, 1).expand(3, 4)), (4, 1)),
    "expanded transposed": (lambda: torch.exp(seq(1, 3).expand(4, 3).t()), (4, 1)),
    "sliced (not dense)": (lambda: torch.exp(seq(4, 6)[:, ::2]), (3, 1)),
    "sliced transposed": (lambda: torch.exp(seq(6, 4)[::2].t()), (1, 4)),
    "dense with a free size-1 stride": (
        lambda: torch.exp(torch.as_strided(seq(20), (3, 1, 4), (1, 100, 3))), (1, 100, 3)),
    "contiguous with a free size-1 stride": (
        lambda: torch.exp(torch.as_strided(seq(20), (3, 1, 4), (4, 100, 1))), (4, 4, 1)),
    "permuted 3-d": (lambda: torch.exp(seq(2, 3, 4).permute(2, 0, 1)), (1, 12, 4)),
    "permuted + contiguous": (lambda: seq(2, 3, 4).permute(2, 0, 1) + seq(4, 2, 3), (1, 12, 4)),
    "broadcast batch": (lambda: transposed()[None] + seq(2, 1, 1), (12, 1, 3)),
    "batch + broadcast": (lambda: seq(2, 1, 1) + transposed()[None], (12, 1, 3)),
    "transposed + sliced": (lambda: transposed() + seq(3, 8)[:, ::2], (1, 3)),
    "comparison": (lambda: transposed() > 2, (1, 3)),
    "where": (lambda: torch.where(transposed() > 3, transposed(), seq(3, 4)), (1, 3)),
    "integer * float": (lambda: torch.arange(12).reshape(4, 3).t() * 2.5, (1, 3)),
    "sigmoid (a composite)": (lambda: torch.sigmoid(transposed()), (1, 3)),
    "clamp": (lambda: torch.clamp(transposed(), 1, 5), (1, 3)),
    "lerp (a composite)": (lambda: torch.lerp(transposed(), seq(3, 4), 0.75), (1, 3)),
    "lerp, contiguous start": (lambda: torch.lerp(seq(3, 4), transposed(), 0.75), (4, 1)),
    "lerp, tensor weight": (
        lambda: torch.lerp(seq(3, 4) + transposed(), transposed(), torch.full((4, 3), 0.3).t()),
        (4, 1)),
    "empty transposed": (lambda: torch.exp(torch.empty(0, 3).t()), (1, 1)),
    "empty permuted": (lambda: torch.exp(torch.empty(2, 0, 3).permute(2, 0, 1)), (2, 1, 1)),
    "in-place keeps self": (lambda: seq(3, 4).add_(transposed()), (4, 1)),
    "out= keeps out": (lambda: torch.add(transposed(), 1, out=torch.empty(3, 4)), (4, 1)),
}


# PyTorch's own meta kernels keep a size-1 dim's free stride only on real devices
META_CASES = [name for name in CASES if name != "dense with a free size-1 stride"]


@pytest.mark.parametrize(("name", "device"), [(name, "cpu") for name in CASES]
                         + [(name, "meta") for name in META_CASES])
def test_elementwise_output_strides(name, device):
    call, expected = CASES[name]
    if device == "meta":
        with torch.device("meta"):
            result = call()
        assert result.device.type == "meta"
    else:
        result = call()
    assert result.stride() == expected
    assert result.storage_offset() == 0


def test_values_are_unchanged_by_the_layout():
    a = transposed()
    assert (a + seq(3, 4)).tolist() == [[x + y for x, y in zip(r, s)]
                                        for r, s in zip(a.tolist(), seq(3, 4).tolist())]
    assert torch.exp(channels_last()).contiguous().tolist() == \
        torch.exp(channels_last().contiguous()).tolist()


def strided_columns():  # (4, 3) with strides (6, 2): not dense
    return seq(5, 6)[1:, 1::2]


SCATTER_CASES = {  # (call, strides, storage offset), as PyTorch returns them
    "select_scatter transposed": (
        lambda: torch.select_scatter(transposed(), torch.zeros(4), 0, 1), (1, 3), 0),
    "select_scatter strided": (
        lambda: torch.select_scatter(strided_columns(), torch.zeros(4), 1, 1), (6, 2), 7),
    "slice_scatter strided": (
        lambda: torch.slice_scatter(strided_columns(), torch.zeros(4, 1), 1, 0, 1), (6, 2), 7),
    "diagonal_scatter strided": (
        lambda: torch.diagonal_scatter(strided_columns(), torch.zeros(3)), (6, 2), 7),
    "select_scatter expanded": (
        lambda: torch.select_scatter(torch.zeros(3, 1).expand(3, 4), torch.ones(3), 1, 1),
        (4, 1), 0),
}


@pytest.mark.parametrize("name", list(SCATTER_CASES))
def test_scatter_ops_keep_the_input_layout(name):
    call, strides, offset = SCATTER_CASES[name]
    result = call()
    assert (result.stride(), result.storage_offset()) == (strides, offset)


def test_scatter_values_with_a_kept_layout():
    result = torch.select_scatter(strided_columns(), torch.zeros(4), 1, 1)
    assert result.tolist() == [[7.0, 0.0, 11.0], [13.0, 0.0, 17.0], [19.0, 0.0, 23.0],
                               [25.0, 0.0, 29.0]]
    expanded = torch.select_scatter(torch.zeros(3, 1).expand(3, 4), torch.ones(3), 1, 1)
    assert expanded.tolist() == [[0.0, 1.0, 0.0, 0.0]] * 3


@pytest.mark.parametrize("kernel", [3, 4])
def test_unbatched_same_conv1d_is_a_fresh_tensor(kernel):
    x, w = seq(2, 7), torch.ones(1, 2, kernel)
    result = torch.nn.functional.conv1d(x, w, padding="same")
    assert (tuple(result.shape), result.stride(), result.storage_offset()) == ((1, 7), (7, 1), 0)


def well_conditioned(*shape):
    return torch.eye(shape[-2], shape[-1]) * 4 + seq(*shape).remainder(3) * 0.25


SOLVE_CASES = {  # (A's shape, B's shape, the solution's strides), as PyTorch returns them
    "batch of vectors": ((4, 3, 3), (4, 3), (1, 4)),
    "two batch dims of vectors": ((2, 5, 3, 3), (2, 5, 3), (15, 1, 5)),
    "batched A, one vector": ((2, 5, 3, 3), (3,), (15, 1, 5)),
    "one vector": ((3, 3), (3,), (1,)),
    "batch of matrices": ((2, 3, 3), (2, 3, 4), (12, 1, 3)),
}


@pytest.mark.parametrize("name", list(SOLVE_CASES))
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_linalg_solve_layouts(name, device):
    a_shape, b_shape, strides = SOLVE_CASES[name]
    A, B = well_conditioned(*a_shape).to(device), seq(*b_shape).to(device)
    assert torch.linalg.solve(A, B).stride() == strides


LSTSQ_CASES = {  # the solution is the first n rows of a column-major max(m, n)-row array
    "tall": ((4, 3), (4, 2), (1, 4)),
    "batched tall": ((5, 4, 3), (5, 4, 2), (8, 1, 4)),
    "wide": ((2, 3), (2, 2), (1, 3)),
    "vector": ((4, 3), (4,), (1,)),
    "batched vectors": ((2, 4, 3), (2, 4), (4, 1)),
    "batched single column": ((2, 4, 3), (2, 4, 1), (4, 1, 4)),
}


@pytest.mark.parametrize("name", list(LSTSQ_CASES))
def test_linalg_lstsq_solution_layout(name):
    a_shape, b_shape, strides = LSTSQ_CASES[name]
    solution = torch.linalg.lstsq(well_conditioned(*a_shape), seq(*b_shape)).solution
    assert (solution.stride(), solution.storage_offset()) == (strides, 0)


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_einsum_with_a_lone_size_one_label(device):
    # the ellipsis dims: (2, 1) on the left, (4,) on the right; PyTorch contracts the size-1
    # one as the right's free dim, which its result's strides show
    a, b = seq(2, 1, 2, 3).to(device), seq(4, 3, 5).to(device)
    result = torch.einsum("...ij,...jk", a, b)
    assert (tuple(result.shape), result.stride()) == ((2, 4, 2, 5), (40, 5, 20, 1))
    if device == "cpu":
        assert result.tolist() == torch.matmul(a, b).tolist()
