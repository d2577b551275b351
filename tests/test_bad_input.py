"""Input that PyTorch refuses (or handles in a particular way) and that Plait used to accept or
mishandle: writes into broadcast tensors, ordering complex numbers, bool and overflowing sizes,
tensors of more than 64 dims, pooling windows with a zero stride, softmax of +inf, DataLoader
workers that die or fail, and the forms a size may take. Every expectation is PyTorch 2.13's
behaviour, written out by hand from runs of it."""

from __future__ import annotations

import math
import os
import time
import warnings
from typing import Any

import pytest

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

OVERLAP = "more than one element of the written-to tensor refers to a single memory location"


def broadcast() -> torch.Tensor:
    """A (2, 3) tensor whose rows are one row of memory (stride 0 along dim 0)."""
    return torch.zeros(3).expand(2, 3)


def _setitem(t: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    t[index] = value
    return t


# -- writes into a tensor whose elements share memory -------------------------------------------

REFUSED_WRITES = {
    "add_": lambda t: t.add_(1),
    "mul_": lambda t: t.mul_(2),
    "exp_": lambda t: t.exp_(),
    "clamp_": lambda t: t.clamp_(0, 1),
    "relu_": lambda t: torch.relu_(t),
    "div_ trunc": lambda t: t.div_(2, rounding_mode="trunc"),
    "addcmul_": lambda t: t.addcmul_(torch.ones(2, 3), torch.ones(2, 3)),
    "lerp_": lambda t: t.lerp_(torch.ones(2, 3), 0.5),
    "+=": lambda t: t.__iadd__(1),
    "copy_": lambda t: t.copy_(torch.ones(2, 3)),
    "copy_ of a 0-d tensor": lambda t: t.copy_(torch.tensor(1.0)),
    "fill_ with a tensor": lambda t: t.fill_(torch.tensor(3.0)),
    "out=": lambda t: torch.add(torch.ones(2, 3), 1, out=t),
    "neg out=": lambda t: torch.neg(torch.ones(2, 3), out=t),
    "mm out=": lambda t: torch.mm(torch.ones(2, 2), torch.ones(2, 3), out=t),
    "cumsum out=": lambda t: torch.cumsum(torch.ones(2, 3), 1, out=t),
    "uniform_": lambda t: t.uniform_(),
    "normal_": lambda t: t.normal_(),
    "bernoulli_": lambda t: t.bernoulli_(),
    "random_": lambda t: t.random_(0, 3),
    "exponential_": lambda t: t.exponential_(),
    "scatter_": lambda t: t.scatter_(1, torch.tensor([[0]]), 1.0),
    "scatter_add_": lambda t: t.scatter_add_(1, torch.tensor([[0]]), torch.ones(1, 1)),
    "index_add_": lambda t: t.index_add_(0, torch.tensor([0]), torch.ones(1, 3)),
    "index_copy_": lambda t: t.index_copy_(0, torch.tensor([0]), torch.ones(1, 3)),
    "put_": lambda t: t.put_(torch.tensor([0]), torch.ones(1)),
    "setitem, tensor value": lambda t: _setitem(t, slice(None), torch.ones(3)),
    "setitem, number into a broadcast column": lambda t: _setitem(t, (slice(None), 0), 1.0),
    "setitem, number into all": lambda t: _setitem(t, slice(None), 1.0),
}


@pytest.mark.parametrize("write", REFUSED_WRITES.values(), ids=REFUSED_WRITES.keys())
def test_writes_into_a_broadcast_tensor_are_refused(write):
    with pytest.raises(RuntimeError, match=OVERLAP):
        write(broadcast())


def test_a_write_into_a_broadcast_tensor_that_requires_grad_is_refused():
    leaf = torch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=OVERLAP):
        leaf.clone().expand(2, 3).add_(1)


def test_the_writes_pytorch_allows_into_a_broadcast_tensor():
    # a fill writes one value: the order of the writes cannot matter
    assert broadcast().fill_(2.0).tolist() == [[2.0] * 3] * 2
    assert broadcast().zero_().tolist() == [[0.0] * 3] * 2
    # a row of a broadcast tensor is an ordinary view
    assert _setitem(broadcast(), 0, torch.ones(3)).tolist() == [[1.0] * 3] * 2
    assert broadcast().index_fill_(1, torch.tensor([0]), 1.0).tolist() == [[1.0, 0, 0]] * 2
    with pytest.warns(UserWarning, match="masked_fill_ on expanded tensors is deprecated"):
        filled = broadcast().masked_fill_(torch.ones(2, 3, dtype=torch.bool), 1.0)
    assert filled.tolist() == [[1.0] * 3] * 2
    # a size-1 or empty broadcast dim holds no element twice
    assert torch.zeros(3).expand(1, 3).add_(1).tolist() == [[1.0] * 3]
    assert torch.zeros(1).expand(0, 3).add_(1).shape == (0, 3)
    # reading from a broadcast tensor is fine
    assert torch.zeros(2, 3).copy_(torch.ones(3).expand(2, 3)).tolist() == [[1.0] * 3] * 2
    assert torch.zeros(2, 3).add_(torch.ones(3).expand(2, 3)).tolist() == [[1.0] * 3] * 2


# -- complex numbers have no order ----------------------------------------------------------------

A = torch.tensor([1 + 2j, 3 + 0j])
B = torch.tensor([2 + 0j, 1 + 1j])

COMPLEX_REFUSED = {
    "lt": (lambda: torch.lt(A, B), NotImplementedError, '"lt_cpu" not implemented'),
    "<": (lambda: A < B, NotImplementedError, '"lt_cpu" not implemented'),
    "ge with a number": (lambda: A >= 1, NotImplementedError, '"ge_cpu" not implemented'),
    "maximum": (lambda: torch.maximum(A, B), RuntimeError, "maximum not implemented for complex"),
    "fmin": (lambda: torch.fmin(A, B), RuntimeError, "fmin not implemented for complex"),
    "max of two": (lambda: torch.max(A, B), RuntimeError, "maximum not implemented for complex"),
    "max()": (lambda: A.max(), NotImplementedError, '"max_all" not implemented'),
    "max(dim)": (lambda: A.max(0), RuntimeError, r"max\(\): does not support complex input"),
    "amin": (lambda: A.amin(), NotImplementedError, '"min_values_cpu" not implemented'),
    "argmax": (lambda: A.argmax(), RuntimeError, r"argmax\(\): does not support complex"),
    "aminmax": (lambda: torch.aminmax(A), NotImplementedError, '"aminmax_cpu"'),
    "sort": (lambda: A.sort(), RuntimeError, "Sort does not support complex dtypes"),
    "argsort": (lambda: A.argsort(), RuntimeError, "Sort does not support complex dtypes"),
    "topk": (lambda: A.topk(1), RuntimeError, "topk does not support complex dtypes"),
    "kthvalue": (lambda: A.kthvalue(1), NotImplementedError, '"kthvalue_cpu"'),
    "median": (lambda: A.median(), NotImplementedError, '"median_cpu"'),
    "mode": (lambda: A.mode(), NotImplementedError, '"mode_cpu"'),
    "cummax": (lambda: A.cummax(0), NotImplementedError, '"cummax_cpu"'),
    "searchsorted": (lambda: torch.searchsorted(A, B), NotImplementedError,
                     '"searchsorted_out_cpu"'),
    "unique": (lambda: torch.unique(A), NotImplementedError, '"unique" not implemented'),
    "clamp": (lambda: A.clamp(0, 1), NotImplementedError, "clamp is not supported for complex"),
    "clamp_min": (lambda: torch.clamp_min(A, 0), NotImplementedError, r"(?i)complex"),
    "sign": (lambda: A.sign(), NotImplementedError, "torch.sign is not intended to support"),
    "floor": (lambda: A.floor(), NotImplementedError, "floor is not supported for complex"),
    "trunc": (lambda: A.trunc(), NotImplementedError, "trunc is not supported for complex"),
}


@pytest.mark.parametrize("call, error, message", COMPLEX_REFUSED.values(),
                         ids=COMPLEX_REFUSED.keys())
def test_ordering_complex_numbers_is_refused(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_complex_equality_and_closeness_still_work():
    assert (A == A.clone()).tolist() == [True, True]
    assert torch.isclose(A, torch.tensor([1 + 2.000001j, 3 + 1j])).tolist() == [True, False]
    assert torch.allclose(A, A.clone())
    unit = torch.sgn(torch.tensor([3 + 4j, 0j], dtype=torch.complex128))
    assert unit.tolist() == [pytest.approx(0.6 + 0.8j), 0j]


# -- sizes: bools, overflow, memory ------------------------------------------------------------

@pytest.mark.parametrize("make", [lambda: torch.empty(True), lambda: torch.zeros(False),
                                  lambda: torch.ones((True, 2)), lambda: torch.zeros(2).view(True),
                                  lambda: torch.zeros(2).new_zeros(True)])
def test_a_bool_is_not_a_size(make):
    with pytest.raises(TypeError, match="bool"):
        make()


@pytest.mark.parametrize("make", [
    lambda: torch.empty(2**62),
    lambda: torch.zeros(2**62),
    lambda: torch.full((2**62,), 1.0),
    lambda: torch.randn(2**62),
    lambda: torch.empty(2**61, dtype=torch.float64),
    lambda: torch.empty(2**31, 2**31, 4),
    lambda: torch.empty(2**62, 2**62, 0),  # the product overflows before the zero, in PyTorch too
    lambda: torch.zeros(1).new_empty(2**62),
    lambda: torch.zeros(1).expand(2**62).clone(),
])
def test_sizes_whose_bytes_overflow_are_a_runtime_error(make):
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        make()


def test_an_allocation_beyond_memory_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="can't allocate memory"):
        torch.empty(2**60, dtype=torch.uint8)


def test_huge_shapes_without_memory_are_fine():
    assert torch.empty(0, 2**62).shape == (0, 2**62)
    assert torch.zeros(1).expand(2**62).shape == (2**62,)


# -- more than 64 dims (numpy's limit; PyTorch has none) ---------------------------------------

def test_tensors_of_more_than_64_dims():
    ones = [1] * 63
    assert torch.zeros([1] * 65).dim() == 65
    assert torch.ones([1] * 200).sum().item() == 1.0
    x = torch.arange(6.0).reshape([2, *ones, 3])  # 65 dims
    y = x * 2 + 1
    assert y.dim() == 65
    assert y.reshape(6).tolist() == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]
    assert y.sum(dim=0).reshape(-1).tolist() == [8.0, 12.0, 16.0]
    assert y.amax(dim=(0, 5)).reshape(-1).tolist() == [7.0, 9.0, 11.0]
    assert not bool((y > 3).all())
    assert y.sum().item() == 36.0
    z = torch.empty([1] * 70)
    z.fill_(3.0)
    assert (z + z).reshape(()).item() == 6.0


# -- pooling windows ----------------------------------------------------------------------------

X1, X2, X3 = torch.randn(1, 2, 8), torch.randn(1, 2, 8, 8), torch.randn(1, 2, 4, 4, 4)

POOLING_REFUSED = {
    "max_pool1d stride 0": (lambda: F.max_pool1d(X1, 2, stride=0), "stride"),
    "max_pool2d stride 0": (lambda: F.max_pool2d(X2, 2, stride=0), "stride should not be zero"),
    "max_pool2d stride (1, 0)": (lambda: F.max_pool2d(X2, 2, stride=(1, 0)),
                                 "stride should not be zero"),
    "max_pool3d stride 0": (lambda: F.max_pool3d(X3, 2, stride=0), "stride should not be zero"),
    "avg_pool1d stride 0": (lambda: F.avg_pool1d(X1, 2, stride=0), "stride should not be zero"),
    "avg_pool2d stride 0": (lambda: F.avg_pool2d(X2, 2, stride=0), "stride should not be zero"),
    "avg_pool3d stride 0": (lambda: F.avg_pool3d(X3, 2, stride=0), "stride should not be zero"),
    "lp_pool2d stride 0": (lambda: F.lp_pool2d(X2, 2, 2, stride=0), "stride should not be zero"),
    "MaxPool2d stride 0": (lambda: torch.nn.MaxPool2d(2, stride=0)(X2),
                           "stride should not be zero"),
    "max_pool2d kernel 0": (lambda: F.max_pool2d(X2, 0, stride=1),
                            "kernel size should be greater than zero, but got kH: 0 kW: 0"),
    "max_pool2d stride -1": (lambda: F.max_pool2d(X2, 2, stride=-1),
                             "stride should be greater than zero, but got dH: -1 dW: -1"),
    "max_pool3d dilation 0": (lambda: F.max_pool3d(X3, 2, dilation=0),
                              "dilation should be greater than zero, but got dilationT: 0"),
    "avg_pool2d padding -1": (lambda: F.avg_pool2d(X2, 2, padding=-1),
                              "pad must be non-negative, but got pad: -1"),
    "max_pool2d padding 2": (lambda: F.max_pool2d(X2, 2, padding=2),
                             "pad should be at most half of effective kernel size"),
    "avg_pool2d kernel 10": (lambda: F.avg_pool2d(X2, 10), r"Given input size: \(2x8x8\). "
                             r"Calculated output size: \(2x0x0\). Output size is too small"),
    "avg_pool2d divisor 0": (lambda: F.avg_pool2d(X2, 2, divisor_override=0),
                             "divisor must be not zero"),
    "adaptive_avg_pool2d -1": (lambda: F.adaptive_avg_pool2d(X2, -1),
                               r"elements of output_size must be greater than or equal to 0 but "
                               r"received \{-1, -1\}"),
    "unfold stride 0": (lambda: F.unfold(X2, 2, stride=0), "stride should be greater than zero, "
                        "but got stride_height: 0 stride_width: 0"),
    "fold stride 0": (lambda: F.fold(torch.randn(1, 8, 9), (4, 4), 2, stride=0),
                      "stride should be greater than zero"),
}


@pytest.mark.parametrize("call, message", POOLING_REFUSED.values(), ids=POOLING_REFUSED.keys())
def test_bad_pooling_windows_are_runtime_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_adaptive_pooling_to_size_zero_is_empty():
    x = torch.randn(1, 2, 4, 4, requires_grad=True)
    assert F.adaptive_avg_pool2d(x, 0).shape == (1, 2, 0, 0)
    assert F.adaptive_max_pool2d(x, (0, 2)).shape == (1, 2, 0, 2)
    values, indices = F.adaptive_max_pool1d(x[0], 0, return_indices=True)
    assert values.shape == indices.shape == (2, 4, 0) and indices.dtype == torch.int64


# -- softmax of infinities ---------------------------------------------------------------------

NAN = math.nan
SOFTMAX_ROWS = [  # input, softmax, log_softmax (PyTorch 2.13)
    ([math.inf, 1.0, 2.0], [NAN, NAN, NAN], [NAN, NAN, NAN]),
    ([math.inf, math.inf, 1.0], [NAN, NAN, NAN], [NAN, NAN, NAN]),
    ([math.inf, -math.inf], [NAN, NAN], [NAN, NAN]),
    ([-math.inf, -math.inf], [NAN, NAN], [NAN, NAN]),
    ([-math.inf, 0.0], [0.0, 1.0], [-math.inf, 0.0]),
    ([NAN, 1.0], [NAN, NAN], [NAN, NAN]),
]


def _same_values(actual: torch.Tensor, expected: list[float]) -> None:
    got = actual.tolist()
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert (math.isnan(g) and math.isnan(e)) or g == pytest.approx(e), (got, expected)


def _composite(name: str) -> Any:
    return torch._core.dispatch.get(f"aten::{name}").kernels["CompositeExplicitAutograd"]


@pytest.mark.parametrize("row, soft, log", SOFTMAX_ROWS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_softmax_of_infinities_the_composite(row, soft, log, dtype):
    x = torch.tensor(row, dtype=dtype)
    _same_values(_composite("_softmax")(x, 0, False), soft)
    _same_values(_composite("_log_softmax")(x, 0, False), log)


@pytest.mark.parametrize("row, soft, log", SOFTMAX_ROWS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
def test_softmax_of_infinities_the_public_functions(row, soft, log, dtype):
    # the installed CPU backend's fused kernel on the CPU; rows and columns take two loops
    x = torch.tensor(row, dtype=dtype)
    _same_values(F.softmax(x, 0).float(), soft)
    _same_values(F.log_softmax(x, 0).float(), log)
    columns = torch.stack([x, x], 1)  # softmax along dim 0 of a (n, 2) tensor: strided
    _same_values(F.softmax(columns, 0)[:, 1].float(), soft)
    _same_values(torch.softmax(x.requires_grad_(dtype != torch.bfloat16), 0).detach().float(),
                 soft)


# -- DataLoader workers that die or fail ---------------------------------------------------------

class DiesAtOne(Dataset):
    """Item 1 kills its worker process."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, i: int) -> int:
        if i == 1:
            os._exit(3)
        return i


class FailsAfterASlowFirst(Dataset):
    """Item 0 is slow, item 1 raises at once: its error must wait for item 0's batch."""

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> int:
        if i == 0:
            time.sleep(0.5)
        if i == 1:
            raise KeyError("item one")
        return i


def test_a_dead_worker_is_reported_even_with_a_timeout():
    # with the old wait, a timeout turned this into "timed out after 20 seconds"
    loader = DataLoader(DiesAtOne(), batch_size=1, num_workers=2, timeout=20)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           r"unexpectedly"):
        list(loader)


def test_a_worker_error_comes_at_its_batchs_turn():
    got = []
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1"):
        for batch in DataLoader(FailsAfterASlowFirst(), batch_size=1, num_workers=2):
            got.append(batch.tolist())
    assert got == [[0]]


# -- the forms a size takes ----------------------------------------------------------------------

X = torch.zeros(2, 3)
FLAT = torch.zeros(6)

# name, call taking the size's arguments, the size, the resulting shape
SIZE_TAKERS = [
    ("new_zeros", lambda *a, **k: X.new_zeros(*a, **k), (2, 2), (2, 2)),
    ("new_ones", lambda *a, **k: X.new_ones(*a, **k), (2, 2), (2, 2)),
    ("new_empty", lambda *a, **k: X.new_empty(*a, **k), (2, 2), (2, 2)),
    ("view", lambda *a, **k: FLAT.view(*a, **k), (3, 2), (3, 2)),
    ("reshape", lambda *a, **k: FLAT.reshape(*a, **k), (3, 2), (3, 2)),
    ("expand", lambda *a, **k: torch.zeros(1, 3).expand(*a, **k), (2, 3), (2, 3)),
    ("repeat", lambda *a, **k: X.repeat(*a, **k), (2, 1), (4, 3)),
    ("permute", lambda *a, **k: X.permute(*a, **k), (1, 0), (3, 2)),
    ("tile", lambda *a, **k: X.tile(*a, **k), (2, 1), (4, 3)),
    ("flip", lambda *a, **k: X.flip(*a, **k), (0, 1), (2, 3)),
    ("broadcast_to", lambda *a, **k: torch.zeros(3).broadcast_to(*a, **k), (2, 3), (2, 3)),
    ("sum_to_size", lambda *a, **k: X.sum_to_size(*a, **k), (1, 3), (1, 3)),
    ("resize_", lambda *a, **k: torch.zeros(4).resize_(*a, **k), (2, 2), (2, 2)),
    ("Tensor.new", lambda *a, **k: X.new(*a, **k), (2, 2), (2, 2)),
    ("torch.Tensor", lambda *a, **k: torch.Tensor(*a, **k), (2, 3), (2, 3)),
    ("torch.zeros", torch.zeros, (2, 3), (2, 3)),
    ("torch.ones", torch.ones, (2, 3), (2, 3)),
    ("torch.empty", torch.empty, (2, 3), (2, 3)),
    ("torch.rand", torch.rand, (2, 3), (2, 3)),
    ("torch.randn", torch.randn, (2, 3), (2, 3)),
]
# Which forms PyTorch takes: f(2, 3), f((2, 3)), f([2, 3]), f(torch.Size([2, 3])), and the
# keyword (None: PyTorch has none). A tuple or list given to the legacy constructors is data.
KEYWORDS = {"reshape": "shape", "permute": "dims", "repeat": "repeats", "tile": "dims",
            "flip": None}
DATA_FOR_A_SEQUENCE = {"Tensor.new", "torch.Tensor"}


def _forms(name: str, size: tuple[int, ...]) -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    keyword = KEYWORDS.get(name, "size")
    forms = [("varargs", size, {}), ("Size", (torch.Size(size),), {})]
    if name not in DATA_FOR_A_SEQUENCE:
        forms += [("tuple", (tuple(size),), {}), ("list", (list(size),), {})]
    if keyword is not None:
        forms.append((f"{keyword}=", (), {keyword: tuple(size)}))
    return forms


@pytest.mark.parametrize("name, call, size, shape", SIZE_TAKERS, ids=[r[0] for r in SIZE_TAKERS])
def test_a_size_taking_call_accepts_each_form(name, call, size, shape):
    for form, args, kwargs in _forms(name, size):
        assert tuple(call(*args, **kwargs).shape) == shape, form


def test_a_sequence_given_to_the_legacy_constructors_is_data():
    assert X.new((2, 2)).tolist() == [2.0, 2.0]
    assert torch.Tensor([2, 3]).tolist() == [2.0, 3.0]
    assert torch.Tensor().shape == (0,)
    assert torch.zeros(2, dtype=torch.int64).new(3).dtype == torch.int64


def test_the_functions_whose_size_is_one_argument():
    # torch.reshape/permute/tile/broadcast_to and new_full take the size as one argument only
    assert torch.reshape(FLAT, (3, 2)).shape == (3, 2)
    assert torch.permute(X, [1, 0]).shape == (3, 2)
    assert X.new_full((2, 2), 1.0).tolist() == [[1.0, 1.0]] * 2
    assert X.new_full(size=(2, 2), fill_value=1.0).shape == (2, 2)
    assert torch.randint(0, 5, (2, 2)).shape == torch.randint(5, size=(2, 2)).shape == (2, 2)
    assert FLAT.unflatten(0, torch.Size([2, 3])).shape == (2, 3)
    assert X.new_empty_strided((2, 2), (1, 2)).stride() == (1, 2)


def test_a_size_given_twice_is_refused():
    with pytest.raises(TypeError, match="multiple values for argument 'size'"):
        FLAT.view(3, 2, size=(6,))
    with pytest.raises(TypeError, match="multiple values for argument 'repeats'"):
        X.repeat(2, 1, repeats=(1,))


def test_resize_keeps_the_data_and_grows_the_storage_in_place():
    x = torch.arange(4.0)
    tail = x[1:]
    x.resize_(2, 3)
    assert x.stride() == (3, 1) and x[0].tolist() == [0.0, 1.0, 2.0]
    assert tail.tolist() == [1.0, 2.0, 3.0]  # a view of the storage that grew
    assert x.resize_(1).tolist() == [0.0]
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        torch.zeros(2, requires_grad=True).resize_(3)


def test_sum_to_size_refuses_a_size_it_cannot_reach():
    assert X.sum_to_size(3).shape == (3,)
    with pytest.raises(RuntimeError, match=r"size \{\[1, 4\]\} is not expandable to size "
                                           r"\{\[2, 3\]\}"):
        X.sum_to_size(1, 4)


def test_the_warning_free_paths_stay_warning_free():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.zeros(2, 3).add_(1)
        torch.zeros(2, 3).masked_fill_(torch.ones(2, 3, dtype=torch.bool), 1.0)


# -- requires_grad is for floating and complex tensors ---------------------------------------------

@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool], ids=str)
def test_only_floating_and_complex_tensors_can_require_grad(dtype):
    t = torch.zeros(2, dtype=dtype)
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype "
                                           "can require gradients"):
        t.requires_grad = True
    with pytest.raises(RuntimeError, match=r"(?i)only Tensors of floating point"):
        torch.nn.Parameter(torch.zeros(2, dtype=dtype))
    t.requires_grad = False  # allowed, as in PyTorch
    assert not t.requires_grad
    assert not torch.nn.Parameter(t, requires_grad=False).requires_grad


def test_requires_grad_as_an_attribute():
    for dtype in (torch.float16, torch.float64, torch.complex64):
        t = torch.zeros(2, dtype=dtype)
        t.requires_grad = True
        assert t.requires_grad and t.is_leaf
    with pytest.raises(RuntimeError, match="requires_grad must be a bool"):
        torch.zeros(2).requires_grad = 1
    computed = torch.zeros(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        computed.requires_grad = False


def test_full_takes_its_size_as_one_sequence():
    with pytest.raises(TypeError, match=r"full\(\): argument 'size' \(position 1\) must be "
                                        r"tuple of ints, not int"):
        torch.full(2, 3.0)
    assert torch.full((2,), 3.0).tolist() == [3.0, 3.0]
    assert torch.full([1, 2], 1).tolist() == [[1, 1]]


# In-place ops whose operand shares part of the memory they write: PyTorch refuses them (the
# result would depend on the order of the writes). Each case's outcome was checked with
# PyTorch 2.13: "refused" raises, "allowed" gives the values computed here by hand.
PARTIAL_OVERLAP = {
    "shifted add_": (lambda b: b[1:5].add_(b[:4]), None),
    "broadcast view add_": (lambda b: b.view(2, 4).add_(b[:4]), None),
    "same block transposed add_": (
        lambda b: b.view(2, 2, 2).add_(b.view(2, 2, 2).transpose(0, 2)), None),
    "shifted pow_": (lambda b: b[1:5].pow_(b[:4]), None),
    "shifted clamp_": (lambda b: b[1:5].clamp_(b[:4]), None),
    "shifted copy_": (lambda b: b[1:5].copy_(b[:4]), None),
    "disjoint halves mul_": (lambda b: b[:4].mul_(b[4:]), [0.0, 5, 12, 21, 4, 5, 6, 7]),
    "strided columns add_": (lambda b: b.view(2, 4)[:, :2].add_(b.view(2, 4)[:, 1:3]),
                             [1.0, 3, 2, 3, 9, 11, 6, 7]),
    "itself sub_": (lambda b: b[:4].sub_(b[:4]), [0.0, 0, 0, 0, 4, 5, 6, 7]),
    "itself copy_": (lambda b: b[:4].copy_(b[:4]), [0.0, 1, 2, 3, 4, 5, 6, 7]),
}


@pytest.mark.parametrize("case", sorted(PARTIAL_OVERLAP))
def test_in_place_ops_refuse_an_operand_that_partly_overlaps_the_output(case):
    call, expected = PARTIAL_OVERLAP[case]
    for _ in range(2):  # a second call takes the planned paths
        base = torch.arange(8.0)
        if expected is None:
            with pytest.raises(RuntimeError, match="refer to a single memory location"):
                call(base)
            assert base.tolist() == list(range(8))  # nothing was written
        else:
            call(base)
            assert base.tolist() == expected
