"""``torch._subclasses``: Tensor subclasses core ships (fake tensors, for tracing)."""

from .fake_tensor import (
    DataDependentOutputException,
    FakeTensor,
    FakeTensorMode,
    UnsupportedFakeTensorException,
)

__all__ = ["DataDependentOutputException", "FakeTensor", "FakeTensorMode",
           "UnsupportedFakeTensorException"]
