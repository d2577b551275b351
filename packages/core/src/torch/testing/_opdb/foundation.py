"""Op database rows: the foundation's ops (add, mul, sum). The pattern every area follows."""

from __future__ import annotations

from . import ALL, OpInfo, SampleInput

SHAPES = [(), (5,), (3, 4), (2, 0, 3)]


def binary_samples(torch, dtype, make):
    for shape in SHAPES:
        yield SampleInput(make(shape, dtype), (make(shape, dtype),), name=f"same {shape}")
    yield SampleInput(make((3, 4), dtype), (make((4,), dtype),), name="broadcast")
    yield SampleInput(make((3, 4), dtype, noncontiguous=True), (make((3, 4), dtype),),
                      name="noncontiguous")
    yield SampleInput(make((2, 3), dtype), (2,), name="python int")
    yield SampleInput(make((3,), dtype), (make((), dtype),), name="0-d other")


def sum_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), name="all")
    yield SampleInput(make((3, 4), dtype), (1,), name="dim 1")
    yield SampleInput(make((2, 3, 4), dtype), ((0, 2),), {"keepdim": True}, name="dims keepdim")
    yield SampleInput(make((0, 3), dtype), (0,), name="empty")
    yield SampleInput(make((), dtype), name="0-d")


OPS: list[OpInfo] = [
    OpInfo("add", binary_samples, dtypes=ALL, method="add", inplace="add_", supports_out=True),
    OpInfo("mul", binary_samples, dtypes=ALL, method="mul", inplace="mul_", supports_out=True),
    OpInfo("sum", sum_samples, dtypes=ALL, method="sum"),
]
