"""Op database rows: creation (factories, ranges, triangles, numpy bridges) and random
numbers. Random rows are marked ``random=True``: Plait's Philox streams differ from PyTorch's
generator, so only shapes, dtypes and determinism under a seed are compared."""

from __future__ import annotations

import numpy as np

from . import ALL, FLOATS, INTS, OpInfo, SampleInput

NUMERIC = FLOATS + INTS
NUMPY_DTYPES = tuple(d for d in ALL if d != "bfloat16")


def _dt(torch, dtype):
    return getattr(torch, dtype)


# -- factories and ranges --------------------------------------------------------------------


def arange_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    yield SampleInput(5, (), {"dtype": dt}, name="end")
    yield SampleInput(2, (9,), {"dtype": dt}, name="start end")
    yield SampleInput(0, (10, 3), {"dtype": dt}, name="int step")
    yield SampleInput(20, (2, -3), {"dtype": dt}, name="negative step")
    yield SampleInput(0, (5.5, 1.5), {"dtype": dt}, name="float step")
    yield SampleInput(1.5, (7,), {"dtype": dt}, name="float start")
    yield SampleInput(3, (3,), {"dtype": dt}, name="empty")
    yield SampleInput(0, (1, 0.1), name="default dtype")
    yield SampleInput(7, name="inferred int64")


def range_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    yield SampleInput(0, (3,), {"dtype": dt}, name="inclusive")
    yield SampleInput(1, (10, 2), {"dtype": dt}, name="step")
    yield SampleInput(9, (1, -2), {"dtype": dt}, name="negative step")


def linspace_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    yield SampleInput(0, (10, 5), {"dtype": dt}, name="up")
    yield SampleInput(3, (1, 4), {"dtype": dt}, name="down")
    yield SampleInput(-2, (7, 6), {"dtype": dt}, name="odd count")
    yield SampleInput(0, (1, 1), {"dtype": dt}, name="one step")
    yield SampleInput(0, (1, 0), {"dtype": dt}, name="no steps")
    yield SampleInput(0.0, (1.0, 11), name="default dtype")


def logspace_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    yield SampleInput(0, (2, 3), {"dtype": dt}, name="base 10")
    yield SampleInput(0, (4, 5), {"base": 2.0, "dtype": dt}, name="base 2")
    yield SampleInput(1, (0, 4), {"base": 3, "dtype": dt}, name="down")
    yield SampleInput(0, (1, 0), {"dtype": dt}, name="no steps")


def eye_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    yield SampleInput(3, (), {"dtype": dt}, name="square")
    yield SampleInput(2, (4,), {"dtype": dt}, name="wide")
    yield SampleInput(4, (2,), {"dtype": dt}, name="tall")
    yield SampleInput(0, (), {"dtype": dt}, name="empty")


def filled_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    yield SampleInput((2, 3), (), {"dtype": dt}, name="tuple")
    yield SampleInput(4, (2,), {"dtype": dt}, name="varargs")
    yield SampleInput((), (), {"dtype": dt}, name="0-d")
    yield SampleInput((0, 3), (), {"dtype": dt}, name="zero-size")
    yield SampleInput(torch.Size([3]), (), {"dtype": dt}, name="torch.Size")


def full_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    yield SampleInput((2, 3), (1,), {"dtype": dt}, name="int fill")
    yield SampleInput((), (True,), {"dtype": dt}, name="0-d bool fill")
    yield SampleInput((0, 2), (3,), {"dtype": dt}, name="zero-size")
    if dtype in FLOATS:
        yield SampleInput((4,), (1.5,), {"dtype": dt}, name="float fill")
    yield SampleInput((2,), (2.5,), name="inferred float")
    yield SampleInput((2,), (7,), name="inferred int64")


def like_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), name="same dtype")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), name="noncontiguous")
    yield SampleInput(make((), dtype), name="0-d")
    yield SampleInput(make((0, 2), dtype), name="zero-size")
    yield SampleInput(make((2,), dtype), (), {"dtype": torch.float64}, name="dtype kwarg")


def full_like_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), (1,), name="int fill")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (0,), name="noncontiguous")
    yield SampleInput(make((), dtype), (1,), {"dtype": torch.float32}, name="dtype kwarg")


def scalar_tensor_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    yield SampleInput(3, (), {"dtype": dt}, name="int")
    yield SampleInput(True, (), {"dtype": dt}, name="bool")
    if dtype in FLOATS:
        yield SampleInput(2.5, (), {"dtype": dt}, name="float")
    yield SampleInput(4, name="default dtype")


# -- triangles -------------------------------------------------------------------------------


def triangle_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), name="wide")
    yield SampleInput(make((4, 3), dtype), (1,), name="tall diagonal 1")
    yield SampleInput(make((3, 3), dtype), (-1,), name="diagonal -1")
    yield SampleInput(make((3, 3), dtype), (), {"diagonal": 5}, name="diagonal past the end")
    yield SampleInput(make((3, 3), dtype), (-5,), name="diagonal before the start")
    yield SampleInput(make((2, 3, 3), dtype), name="batched")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), name="noncontiguous")
    yield SampleInput(make((4, 3), dtype).t(), name="transposed")
    yield SampleInput(make((0, 3), dtype), name="zero-size")
    yield SampleInput(make((1, 1), dtype), name="1x1")


def triangle_indices_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    yield SampleInput(3, (3,), {"dtype": dt}, name="square")
    yield SampleInput(3, (4, 1), {"dtype": dt}, name="wide offset 1")
    yield SampleInput(4, (3, -1), {"dtype": dt}, name="tall offset -1")
    yield SampleInput(0, (3,), {"dtype": dt}, name="no rows")
    yield SampleInput(3, (3, -5), {"dtype": dt}, name="offset outside")


# -- complex ---------------------------------------------------------------------------------


def complex_samples(torch, dtype, make):
    yield SampleInput(make((3,), dtype), (make((3,), dtype),), name="same shape")
    yield SampleInput(make((2, 1), dtype), (make((3,), dtype),), name="broadcast")
    yield SampleInput(make((), dtype), (make((2,), dtype),), name="0-d part")
    yield SampleInput(make((2, 3), dtype, noncontiguous=True), (make((2, 3), dtype),),
                      name="noncontiguous")
    yield SampleInput(make((0, 2), dtype), (make((0, 2), dtype),), name="zero-size")


def polar_samples(torch, dtype, make):
    yield SampleInput(make((4,), dtype, 0.0, 3.0), (make((4,), dtype),), name="same shape")
    yield SampleInput(make((2, 1), dtype, 0.0, 3.0), (make((3,), dtype),), name="broadcast")
    yield SampleInput(make((0,), dtype), (make((0,), dtype),), name="zero-size")


# -- bridges -----------------------------------------------------------------------------------


def _np_values(make, shape, dtype):
    values = make.array(shape, dtype, low=0)
    return values.astype(np.dtype(dtype))


def from_numpy_samples(torch, dtype, make):
    yield SampleInput(_np_values(make, (2, 3), dtype), name="matrix")
    yield SampleInput(_np_values(make, (3, 4), dtype)[:, ::2], name="strided")
    yield SampleInput(_np_values(make, (3, 2), dtype).T, name="transposed")
    yield SampleInput(_np_values(make, (), dtype), name="0-d")
    yield SampleInput(_np_values(make, (0, 3), dtype), name="zero-size")


def as_tensor_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    yield SampleInput(make.array((2, 3), dtype, low=0).tolist(), (), {"dtype": dt},
                      name="nested list")
    yield SampleInput(_np_values(make, (3,), "float64"), (), {"dtype": dt}, name="numpy cast")
    yield SampleInput(make((2, 2), dtype), name="tensor")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (), {"dtype": torch.float64},
                      name="noncontiguous tensor cast")
    yield SampleInput(3, (), {"dtype": dt}, name="number")


def asarray_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    yield SampleInput(make.array((2, 3), dtype, low=0).tolist(), (), {"dtype": dt},
                      name="nested list")
    yield SampleInput(make((2, 2), dtype), (), {"copy": True}, name="tensor copy")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), name="noncontiguous tensor")
    yield SampleInput(make((2,), dtype), (), {"dtype": torch.float64}, name="tensor cast")
    yield SampleInput(2, (), {"dtype": dt}, name="number")


# -- random ----------------------------------------------------------------------------------


def rand_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    yield SampleInput(64, (), {"dtype": dt}, name="1-d")
    yield SampleInput(8, (16,), {"dtype": dt}, name="varargs")
    yield SampleInput((4, 5), (), {"dtype": dt}, name="tuple")
    yield SampleInput((), (), {"dtype": dt}, name="0-d")
    yield SampleInput((0, 3), (), {"dtype": dt}, name="zero-size")


def random_like_samples(torch, dtype, make):
    yield SampleInput(make((8, 16), dtype), name="matrix")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), name="noncontiguous")
    yield SampleInput(make((), dtype), name="0-d")
    yield SampleInput(make((0, 3), dtype), name="zero-size")


def randint_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    high = 2 if dtype == "bool" else 100
    yield SampleInput(high, ((64,),), {"dtype": dt}, name="high size")
    if dtype != "bool":
        yield SampleInput(3, (10, (8, 8)), {"dtype": dt}, name="low high size")
        yield SampleInput(0, (7, ()), {"dtype": dt}, name="0-d")
    yield SampleInput(high, ((0, 2),), {"dtype": dt}, name="zero-size")
    if dtype == "int64":
        yield SampleInput(-(2**40), (2**40, (16,)), name="wide range")


def randint_like_samples(torch, dtype, make):
    high = 2 if dtype == "bool" else 10
    yield SampleInput(make((8, 8), dtype), (high,), name="high")
    if dtype != "bool":
        yield SampleInput(make((3, 4), dtype, noncontiguous=True), (2, 9), name="low high")
    yield SampleInput(make((), dtype), (high,), name="0-d")


def randperm_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    yield SampleInput(10, (), {"dtype": dt}, name="ten")
    yield SampleInput(1, (), {"dtype": dt}, name="one")
    yield SampleInput(0, (), {"dtype": dt}, name="empty")
    yield SampleInput(100, name="default int64")


def normal_samples(torch, dtype, make):
    dt = _dt(torch, dtype)
    std = make((4, 5), dtype, 0.5, 2.0)
    yield SampleInput(make((4, 5), dtype), (std,), name="tensor mean tensor std")
    yield SampleInput(make((4, 1), dtype), (make((5,), dtype, 0.5, 2.0),),
                      name="broadcast")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (2.0,), name="tensor mean")
    yield SampleInput(1.0, (make((6,), dtype, 0.5, 2.0),), name="tensor std")
    yield SampleInput(0.5, (2.0, (3, 7)), {"dtype": dt}, name="numbers and size")
    yield SampleInput(make((0, 2), dtype), (1.0,), name="zero-size")


def bernoulli_samples(torch, dtype, make):
    yield SampleInput(make((8, 8), dtype, 0.0, 1.0), name="probabilities")
    yield SampleInput(make((3, 4), dtype, 0.0, 1.0, noncontiguous=True), name="noncontiguous")
    yield SampleInput(make((16,), dtype), (0.3,), name="p number")
    yield SampleInput(make((), dtype, 0.0, 1.0), name="0-d")
    yield SampleInput(make((0, 2), dtype, 0.0, 1.0), name="zero-size")


def multinomial_samples(torch, dtype, make):
    weights = make((6,), dtype, 0.5, 2.0)
    yield SampleInput(weights, (3,), name="without replacement")
    yield SampleInput(weights, (20, True), name="with replacement")
    yield SampleInput(make((3, 5), dtype, 0.5, 2.0), (5,), name="rows, all categories")
    yield SampleInput(make((3, 10), dtype, 0.5, 2.0, noncontiguous=True), (4,),
                      {"replacement": True}, name="noncontiguous rows")


def inplace_sampler_samples(torch, dtype, make, args=(), kwargs=None):
    kwargs = kwargs or {}
    yield SampleInput(make((8, 16), dtype), args, kwargs, name="matrix")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), args, kwargs,
                      name="noncontiguous")
    yield SampleInput(make((), dtype), args, kwargs, name="0-d")
    yield SampleInput(make((0, 3), dtype), args, kwargs, name="zero-size")


def _sampler(args=(), kwargs=None):
    def samples(torch, dtype, make):
        yield from inplace_sampler_samples(torch, dtype, make, args, kwargs)

    return samples


def random_method_samples(torch, dtype, make):
    yield from inplace_sampler_samples(torch, dtype, make)
    high = 2 if dtype == "bool" else 50
    yield SampleInput(make((8, 8), dtype), (high,), name="to")
    if dtype != "bool":
        yield SampleInput(make((8, 8), dtype), (3, high), name="from to")


def poisson_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype, 0, 20), name="rates")
    yield SampleInput(torch.zeros(3, dtype=getattr(torch, dtype)), name="zero rates")
    yield SampleInput(make((0, 2), dtype, 0, 1), name="empty")


OPS: list[OpInfo] = [
    OpInfo("arange", arange_samples, dtypes=NUMERIC, supports_out=True, atol=1e-3, rtol=1e-3),
    OpInfo("range", range_samples, dtypes=NUMERIC, supports_out=True),
    OpInfo("linspace", linspace_samples, dtypes=NUMERIC, supports_out=True, atol=1e-2,
           rtol=1e-3),
    OpInfo("logspace", logspace_samples, dtypes=NUMERIC, supports_out=True, atol=1e-2,
           rtol=1e-2),
    OpInfo("eye", eye_samples, dtypes=ALL, supports_out=True),
    OpInfo("zeros", filled_samples, dtypes=ALL, supports_out=True),
    OpInfo("ones", filled_samples, dtypes=ALL, supports_out=True),
    OpInfo("full", full_samples, dtypes=ALL, supports_out=True),
    OpInfo("zeros_like", like_samples, dtypes=ALL),
    OpInfo("ones_like", like_samples, dtypes=ALL),
    OpInfo("full_like", full_like_samples, dtypes=ALL),
    OpInfo("scalar_tensor", scalar_tensor_samples, dtypes=ALL),
    OpInfo("tril", triangle_samples, dtypes=ALL, method="tril", inplace="tril_",
           supports_out=True),
    OpInfo("triu", triangle_samples, dtypes=ALL, method="triu", inplace="triu_",
           supports_out=True),
    OpInfo("tril_indices", triangle_indices_samples, dtypes=("int64", "int32")),
    OpInfo("triu_indices", triangle_indices_samples, dtypes=("int64", "int32")),
    OpInfo("complex", complex_samples, dtypes=("float32", "float64"), supports_out=True,
           differentiable=True),
    OpInfo("polar", polar_samples, dtypes=("float32", "float64"), supports_out=True,
           atol=1e-5, rtol=1e-5, differentiable=True),
    OpInfo("from_numpy", from_numpy_samples, dtypes=NUMPY_DTYPES),
    OpInfo("as_tensor", as_tensor_samples, dtypes=ALL),
    OpInfo("asarray", asarray_samples, dtypes=ALL),
    # random: values differ from PyTorch's generator by design
    OpInfo("rand", rand_samples, supports_out=True, random=True),
    OpInfo("randn", rand_samples, supports_out=True, random=True),
    OpInfo("rand_like", random_like_samples, random=True),
    OpInfo("randn_like", random_like_samples, random=True),
    OpInfo("poisson", poisson_samples, dtypes=("float32", "float64"), random=True),
    OpInfo("randint", randint_samples, dtypes=ALL, supports_out=True, random=True),
    OpInfo("randint_like", randint_like_samples, dtypes=ALL, random=True),
    OpInfo("randperm", randperm_samples, dtypes=("int64", "int32", "float32", "float64"),
           supports_out=True, random=True),
    OpInfo("normal", normal_samples, supports_out=True, random=True),
    OpInfo("bernoulli", bernoulli_samples, method="bernoulli", supports_out=True, random=True),
    OpInfo("multinomial", multinomial_samples, dtypes=("float32", "float64"),
           method="multinomial", supports_out=True, random=True),
    OpInfo("Tensor.uniform_", _sampler((-2.0, 3.0)), function=False, method="uniform_",
           random=True),
    OpInfo("Tensor.normal_", _sampler((1.0, 2.0)), function=False, method="normal_",
           random=True),
    OpInfo("Tensor.random_", random_method_samples, dtypes=ALL, function=False,
           method="random_", random=True),
    OpInfo("Tensor.exponential_", _sampler((2.0,)), function=False, method="exponential_",
           random=True),
    OpInfo("Tensor.geometric_", _sampler((0.3,)), dtypes=NUMERIC, function=False,
           method="geometric_", random=True),
    OpInfo("Tensor.log_normal_", _sampler((), {"mean": 0.5, "std": 0.5}), function=False,
           method="log_normal_", random=True),
    OpInfo("Tensor.cauchy_", _sampler((1.0, 0.5)), function=False, method="cauchy_",
           random=True),
    OpInfo("Tensor.bernoulli_", _sampler((0.25,)), dtypes=ALL, function=False,
           method="bernoulli_", random=True),
]
