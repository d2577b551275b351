"""Names programs import or call (issue 12): the legacy tensor types and ``Tensor.type``,
``torch.backends``, ``torch.accelerator``, ``torch.random``, ``torch.types``, ``torch.storage``.

Expected values are PyTorch 2.13's answers on its CPU build.
"""

from __future__ import annotations

import pickle

import pytest
from surface_support import run_cpu_only, without_cuda_backend

import torch
from torch._core import registry

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
    for scalar, kind in ((3.5, "float"), (True, "bool"), (None, "NoneType")):
        with pytest.raises(TypeError, match=rf"data must be a sequence \(got {kind}\)"):
            torch.FloatTensor(scalar)
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


# -- torch.backends ------------------------------------------------------------------------


def test_backends_cpu_names_a_capability() -> None:
    import torch.backends.cpu

    assert torch.backends.cpu.get_cpu_capability() in {"DEFAULT", "AVX2", "AVX512"}


def test_backends_cpu_agrees_with_the_cpu_flags() -> None:
    import pathlib
    import platform

    from torch.backends import cpu

    info = pathlib.Path("/proc/cpuinfo")
    if platform.machine() != "x86_64" or not info.exists():
        pytest.skip("reads the x86 flags of /proc/cpuinfo")
    flags = set(next(line for line in info.read_text().splitlines()
                     if line.startswith("flags")).split(":", 1)[1].split())
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        assert cpu.get_cpu_capability() == "AVX512"
    elif {"avx2", "fma"} <= flags:
        assert cpu.get_cpu_capability() == "AVX2"
    else:
        assert cpu.get_cpu_capability() == "DEFAULT"


def test_backends_mkldnn_switches_and_flags() -> None:
    import torch.backends.mkldnn as mkldnn

    assert mkldnn.is_available() is False  # Plait is not built on oneDNN
    assert mkldnn.enabled is True and mkldnn.deterministic is False
    with mkldnn.flags(enabled=False, deterministic=True):
        assert mkldnn.enabled is False and mkldnn.deterministic is True
    assert mkldnn.enabled is True and mkldnn.deterministic is False
    with pytest.raises(KeyError), mkldnn.flags(enabled=False):
        raise KeyError("restored on error too")
    assert mkldnn.enabled is True


def test_backends_opt_einsum_follows_the_package() -> None:
    import importlib.util

    import torch.backends.opt_einsum as opt_einsum

    installed = importlib.util.find_spec("opt_einsum") is not None
    assert opt_einsum.is_available() is installed
    assert opt_einsum.enabled is installed
    assert opt_einsum.strategy == ("auto" if installed else None)
    assert (opt_einsum.get_opt_einsum() is None) is (not installed)


def test_backends_cudnn_switches_and_flags() -> None:
    cudnn = torch.backends.cudnn
    assert cudnn.enabled is True and cudnn.benchmark is False and cudnn.deterministic is False
    assert cudnn.allow_tf32 is True and cudnn.benchmark_limit == 10
    with cudnn.flags(enabled=False, benchmark=True):
        assert cudnn.enabled is False and cudnn.benchmark is True
    assert cudnn.enabled is True and cudnn.benchmark is False
    cudnn.benchmark = True  # programs set it at start-up
    try:
        assert torch.backends.cudnn.benchmark is True
    finally:
        cudnn.benchmark = False


@without_cuda_backend
def test_backends_cuda_switches() -> None:
    cuda = torch.backends.cuda
    assert cuda.is_built() is False
    assert cuda.matmul.allow_fp16_reduced_precision_reduction is True
    saved = torch.get_float32_matmul_precision()
    try:
        cuda.matmul.allow_tf32 = True
        assert torch.get_float32_matmul_precision() == "high" and cuda.matmul.allow_tf32
        cuda.matmul.allow_tf32 = False
        assert torch.get_float32_matmul_precision() == "highest"
    finally:
        torch.set_float32_matmul_precision(saved)
    with pytest.raises(AttributeError, match="Unknown attribute"):
        cuda.matmul.no_such_switch  # noqa: B018
    assert cuda.flash_sdp_enabled() and cuda.mem_efficient_sdp_enabled()
    with pytest.warns(FutureWarning, match="sdp_kernel"), \
            cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
        assert not cuda.flash_sdp_enabled() and not cuda.mem_efficient_sdp_enabled()
        assert cuda.math_sdp_enabled()
    assert cuda.flash_sdp_enabled() and cuda.mem_efficient_sdp_enabled()
    cuda.enable_flash_sdp(False)
    try:
        assert cuda.flash_sdp_enabled() is False
    finally:
        cuda.enable_flash_sdp(True)


# -- torch.accelerator, torch.random, torch.types, torch.storage --------------------------


def test_accelerator_without_one_answers_as_the_cpu_build() -> None:
    out = run_cpu_only("""
import torch, warnings
a = torch.accelerator
print(a.is_available(), a.current_accelerator(), a.current_accelerator(True), a.device_count())
for call in (a.current_device_index, a.synchronize, lambda: a.set_device_index(0)):
    try:
        call()
    except RuntimeError as e:
        print(e)
with a.device_index(None):
    print("none selects nothing")
""")
    lines = out.splitlines()
    assert lines[0] == "False None None 0"
    assert lines[1:4] == ["Cannot access accelerator device when none is available."] * 3
    assert lines[4] == "none selects nothing"


def test_accelerator_asks_the_registry() -> None:
    # the toy device plugin (tests/plugins) is the accelerator of the test environment
    if "toy" not in registry.installed():
        pytest.skip("the toy device plugin is not installed")
    a = torch.accelerator
    assert a.is_available() is True
    assert a.current_accelerator() == torch.device("toy")
    assert a.device_count() == 2
    before = a.current_device_index()
    with a.device_index(1):
        assert a.current_device_index() == 1
    assert a.current_device_index() == before
    a.synchronize()
    with pytest.warns(FutureWarning, match="current_device_index"):
        assert a.current_device_idx() == before
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        a.set_device_index("meta")


def test_random_module() -> None:
    import torch.random as random

    assert random.manual_seed is torch.manual_seed and random.default_generator is not None
    gen = random.manual_seed(7)
    assert isinstance(gen, torch.Generator) and random.initial_seed() == 7
    state = random.get_rng_state()
    first = torch.rand(3)
    random.set_rng_state(state)
    assert torch.equal(torch.rand(3), first)
    assert isinstance(random.seed(), int)


def test_fork_rng_restores_the_cpu_generator() -> None:
    torch.manual_seed(0)
    expected = torch.rand(4)
    torch.manual_seed(0)
    with torch.random.fork_rng(devices=[]):
        inside = torch.rand(4)
        torch.rand(10)
    assert torch.equal(inside, expected)
    assert torch.equal(torch.rand(4), expected)
    torch.manual_seed(0)
    with torch.random.fork_rng(enabled=False):
        torch.rand(4)
    assert not torch.equal(torch.rand(4), expected)


def test_types_aliases() -> None:
    import torch.types as types

    assert types._dtype is torch.dtype and types._device is torch.device
    assert types._int is int and types._float is float and types._bool is bool
    assert types._layout is torch.layout
    assert isinstance(3, types.Number) and isinstance(2.5, types.Number)
    assert set(types._size.__args__) == {torch.Size, list[int], tuple[int, ...]}
    assert isinstance("cpu", types.Device) and isinstance(None, types.Device)
    assert types.py_sym_types == (torch.SymInt, torch.SymFloat, torch.SymBool)
    assert types.Storage is torch.UntypedStorage


def test_types_import_leaves_numpy_unloaded() -> None:
    out = run_cpu_only("import sys, torch, torch.types, torch.random, torch.accelerator; "
                       "print('numpy' in sys.modules)")
    assert out == "False"


def test_storage_module() -> None:
    import torch.storage

    assert torch.storage.UntypedStorage is torch.UntypedStorage
    assert torch.storage.TypedStorage is torch.TypedStorage
    assert isinstance(torch.ones(2).untyped_storage(), torch.storage.UntypedStorage)


def test_backends_mkl_and_openmp_are_not_built_in() -> None:
    import torch.backends.mkl as mkl
    import torch.backends.openmp as openmp

    assert mkl.is_available() is False and openmp.is_available() is False
    assert torch.backends.mkl is mkl and torch.backends.openmp is openmp
    with mkl.verbose(mkl.VERBOSE_ON):
        assert torch.ones(2).sum().item() == 2.0
    assert (mkl.VERBOSE_OFF, mkl.VERBOSE_ON) == (0, 1)
