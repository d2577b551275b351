"""Names programs import or call (issue 12): the legacy tensor types and ``Tensor.type``.

Expected values are PyTorch 2.13's answers on its CPU build.
"""

from __future__ import annotations

import pickle

import pytest

import torch
from torch._core import registry

# With plait-backend-cuda installed, torch.cuda is that backend's module.
without_cuda_backend = pytest.mark.skipif(
    "cuda" in registry.installed(),
    reason="plait-backend-cuda is installed: torch.cuda is its module, not the CPU build's answers")

LEGACY = {
    "FloatTensor": torch.float32, "DoubleTensor": torch.float64, "HalfTensor": torch.float16,
    "BFloat16Tensor": torch.bfloat16, "LongTensor": torch.int64, "IntTensor": torch.int32,
    "ShortTensor": torch.int16, "CharTensor": torch.int8, "ByteTensor": torch.uint8,
    "BoolTensor": torch.bool,
}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_type_names_its_dtype(name: str) -> None:
    cls = getattr(torch, name)
    assert cls.dtype is LEGACY[name]
    assert cls.__module__ == "torch" and cls.__name__ == name
    assert type(cls).__name__ == "tensortype"
    assert cls.is_sparse is False and cls.is_cuda is False and cls.layout is torch.strided
    assert not issubclass(cls, torch.Tensor)
    assert pickle.loads(pickle.dumps(cls)) is cls
    assert repr(cls) == f"<class 'torch.{name}'>"
    assert torch.typename(cls) == f"torch.{name}"


def test_complex_and_unsigned_types_are_not_legacy_names() -> None:
    assert not hasattr(torch, "ComplexFloatTensor")
    assert not hasattr(torch, "UInt16Tensor")


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_isinstance_is_by_dtype_on_the_cpu(name: str) -> None:
    cls = getattr(torch, name)
    t = torch.zeros(2, dtype=LEGACY[name])
    assert isinstance(t, cls)
    other = torch.float64 if LEGACY[name] is not torch.float64 else torch.float32
    assert not isinstance(torch.zeros(2, dtype=other), cls)
    assert not isinstance(torch.zeros(2, dtype=LEGACY[name], device="meta"), cls)
    assert not isinstance([0, 0], cls)


def test_a_parameter_is_a_float_tensor() -> None:
    assert isinstance(torch.nn.Parameter(torch.zeros(2)), torch.FloatTensor)


def test_constructor_from_a_size_is_uninitialised_of_that_shape() -> None:
    t = torch.FloatTensor(2, 3)
    assert type(t) is torch.Tensor
    assert t.dtype is torch.float32 and t.shape == (2, 3) and t.stride() == (3, 1)
    assert not t.requires_grad
    assert torch.DoubleTensor(torch.Size([4, 1])).shape == (4, 1)
    assert torch.ByteTensor(3).dtype is torch.uint8
    empty = torch.LongTensor()
    assert empty.shape == (0,) and empty.dtype is torch.int64


def test_constructor_from_data() -> None:
    t = torch.LongTensor([1, 2])
    assert t.dtype is torch.int64 and t.tolist() == [1, 2]
    assert torch.FloatTensor((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, not a size
    assert torch.LongTensor([1.5, 2.7]).tolist() == [1, 2]
    assert torch.BoolTensor([True, False]).tolist() == [True, False]
    assert torch.FloatTensor([[1, 2], [3, 4]]).shape == (2, 2)


def test_constructor_from_a_tensor_aliases_it() -> None:
    t = torch.ones(2)
    u = torch.FloatTensor(t)
    assert u is not t
    u[0] = 5
    assert t.tolist() == [5.0, 1.0]
    leaf = torch.ones(2, requires_grad=True)
    alias = torch.FloatTensor(leaf)
    assert alias.requires_grad and alias.grad_fn is not None


def test_constructor_errors() -> None:
    with pytest.raises(TypeError, match="expected"):
        torch.FloatTensor(torch.ones(2, dtype=torch.float64))
    with pytest.raises(TypeError):
        torch.FloatTensor([1, 2], dtype=torch.float64)
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu"):
        torch.FloatTensor(2, device="meta")
    with pytest.raises(TypeError, match="invalid data type 'str'"):
        torch.FloatTensor("abc")
    with pytest.raises(TypeError):
        torch.LongTensor(2, 3.0)
    assert torch.FloatTensor(3, device="cpu").shape == (3,)


@pytest.mark.parametrize(("dtype", "name"), [
    (torch.float32, "torch.FloatTensor"), (torch.float64, "torch.DoubleTensor"),
    (torch.int64, "torch.LongTensor"), (torch.int32, "torch.IntTensor"),
    (torch.bool, "torch.BoolTensor"), (torch.uint8, "torch.ByteTensor"),
    (torch.int8, "torch.CharTensor"), (torch.float16, "torch.HalfTensor"),
    (torch.bfloat16, "torch.BFloat16Tensor"), (torch.complex64, "torch.ComplexFloatTensor"),
    (torch.complex128, "torch.ComplexDoubleTensor"), (torch.uint16, "torch.UInt16Tensor"),
])
def test_type_names_the_legacy_type(dtype: torch.dtype, name: str) -> None:
    assert torch.zeros(2, dtype=dtype).type() == name
    assert torch.typename(torch.zeros(2, dtype=dtype)) == name


def test_type_names_the_device_off_the_cpu() -> None:
    assert torch.zeros(2, device="meta").type() == "torch.meta.FloatTensor"


def test_type_converts() -> None:
    x = torch.zeros(2)
    assert x.type("torch.LongTensor").dtype is torch.int64
    assert x.type(torch.LongTensor).dtype is torch.int64
    assert x.type("torch.IntTensor").dtype is torch.int32
    assert x.type(torch.float64).dtype is torch.float64
    assert x.type("torch.FloatTensor") is x and x.type(torch.float32) is x
    assert x.type(torch.Tensor) is x
    leaf = torch.ones(2, requires_grad=True)
    converted = leaf.type(torch.DoubleTensor)
    converted.sum().backward()
    assert leaf.grad.tolist() == [1.0, 1.0]


def test_type_rejects_unknown_names() -> None:
    x = torch.zeros(2)
    for bad in ("torch.Foo", "float64", "torch.float64"):
        with pytest.raises(ValueError, match=f"invalid type: '{bad}'"):
            x.type(bad)
    with pytest.raises(TypeError, match="dtype must be a type, str, or dtype object"):
        x.type(5)


@without_cuda_backend
def test_cuda_legacy_types_exist_without_cuda() -> None:
    cls = torch.cuda.FloatTensor
    assert cls.__module__ == "torch.cuda" and cls.dtype is torch.float32 and cls.is_cuda
    assert repr(cls) == "<class 'torch.cuda.FloatTensor'>"
    assert not isinstance(torch.zeros(2), cls)
    with pytest.raises(TypeError, match="Torch not compiled with CUDA enabled"):
        cls(2)
    with pytest.raises(RuntimeError):
        torch.zeros(2).type("torch.cuda.FloatTensor")
