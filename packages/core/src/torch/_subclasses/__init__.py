"""``torch._subclasses``: Tensor subclasses core ships (fake tensors, for tracing)."""

from .fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensor,
    FakeTensorMode,
    UnsupportedFakeTensorException,
)

__all__ = ["DataDependentOutputException", "DynamicOutputShapeException", "FakeTensor",
           "FakeTensorMode", "UnsupportedFakeTensorException"]
