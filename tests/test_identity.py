"""Being recognised as torch: ``torch.__version__``, ``torch.version``, ``torch.__config__``,
the ``torch`` distribution, and what ``torch.compile`` returns for a module (issue 12, items 2
and 5). Expected values are PyTorch 2.13's answers, checked by hand against it."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import tomllib
from packaging.version import Version

import torch
from torch import nn
from torch.torch_version import TorchVersion

ROOT = Path(__file__).resolve().parents[1]
TORCH_DIST = ROOT / "packages" / "core" / "dist-torch" / "pyproject.toml"

# -- torch.__version__ -------------------------------------------------------------------------


def test_version_is_the_api_level_with_plait_as_local_label() -> None:
    assert type(torch.__version__) is TorchVersion and isinstance(torch.__version__, str)
    assert torch.__version__ == "2.13.0+plait0.1.0"
    assert torch.__version__.split("+")[0] == "2.13.0"
    assert torch.version.__version__ == torch.__version__
    assert type(torch.version.__version__) is str  # as in PyTorch: only torch.__version__ is typed


@pytest.mark.parametrize(("expression", "expected"), [
    ('v >= "2.0"', True),
    ('v < (2, 14)', True),
    ('v >= (2, 13)', True),
    ('v > [2, 12, 9]', True),
    ('v > "2.13.0"', True),  # a local label sorts after the plain release
    ('v == (2, 13, 0)', False),
    ('v < "2.13.1"', True),
    ('v != "2.13.0"', True),
    ('"2.0" <= v', True),  # reflected: str's own comparison is not used
    ('(2, 0) <= v', True),
    ('v == "parrot"', False),  # not a version: plain string order
    ('v < "parrot"', True),
    ('v == None', False),
])
def test_version_compares_like_pytorchs(expression: str, expected: bool) -> None:
    assert eval(expression, {"v": torch.__version__}) is expected


@pytest.mark.parametrize("expression", ["v > 2", "v > 1.5", "TorchVersion('parrot') < (1,)"])
def test_version_compared_with_a_non_version_raises_type_error(expression: str) -> None:
    with pytest.raises(TypeError, match="not supported between instances of 'TorchVersion'"):
        eval(expression, {"v": torch.__version__, "TorchVersion": TorchVersion})


def test_equal_versions_spelled_differently() -> None:
    assert TorchVersion("2.13.0") == "2.13"
    assert TorchVersion("2.13.0") == (2, 13)
    assert TorchVersion("v2.13") == "2.13"
    assert TorchVersion("2.13.0-rc1") == "2.13.0rc1"
    # != is the negation of == here (PyTorch keeps str's !=, so "2.13.0" != "2.13" holds there).
    assert not TorchVersion("2.13.0") != "2.13"
    assert TorchVersion("2.13.0+plait0.1.0") != "2.13.0+plait0.1"  # local parts keep zeros


VERSIONS = [
    "2.13.0", "2.13", "2.13.0+cpu", "2.13.0+plait0.1.0", "2.13.0+plait0.2", "2.13.0+1",
    "2.13.0+abc", "2.13.0rc1", "2.13.0rc2", "2.13.0b2", "2.13.0a0", "2.13.0.dev20250101",
    "2.13.0rc1.dev3", "2.13.0.post1", "2.13.0.post1.dev2", "2.12.9", "2.14", "1!0.1", "0.1.0",
    "2.1.0-rc1", "2.1.0.post-2", "2.1.0alpha1", "2.1.0c1", "2.1.0preview3", "2.1.0-1",
    "10.0", "2.2", "2.10",
]


@pytest.mark.parametrize("left", VERSIONS)
def test_order_agrees_with_packaging(left: str) -> None:
    # packaging (which pytest depends on) is the PEP 440 reference; torch must not import it.
    for right in VERSIONS:
        for op in ("__lt__", "__le__", "__eq__", "__ge__", "__gt__"):
            expected = getattr(Version(left), op)(Version(right))
            assert getattr(TorchVersion(left), op)(right) is expected, (left, op, right)


def test_version_hashes_and_pickles_as_its_string() -> None:
    assert {torch.__version__: 1}["2.13.0+plait0.1.0"] == 1
    loaded = pickle.loads(pickle.dumps(torch.__version__))
    assert type(loaded) is TorchVersion and loaded == torch.__version__


def test_import_torch_imports_neither_packaging_nor_metadata() -> None:
    code = ("import sys, torch\n"
            "print(sorted(m for m in ('packaging', 'importlib.metadata') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT / "tests").stdout
    assert out.strip() == "[]"


# -- torch.version and torch.__config__ ----------------------------------------------------------


def test_torch_version_module() -> None:
    from torch.version import cuda, git_version

    assert (torch.version.hip, torch.version.debug) == (None, False)
    assert isinstance(git_version, str)
    if "cuda" not in torch._core.registry.installed():
        assert cuda is None  # PyTorch's CPU build
    else:  # a CUDA backend: the CUDA version it was built with, or None without the toolkit
        assert cuda is None or cuda.replace(".", "").isdigit()


def test_config_show_and_parallel_info() -> None:
    shown = torch.__config__.show()
    assert shown.startswith("PyTorch built with:\n  - ") and shown.endswith("\n")
    assert "TORCH_VERSION=2.13.0" in shown
    info = torch.__config__.parallel_info()
    assert info.startswith("ATen/Parallel:\n")
    assert f"at::get_num_threads() : {torch.get_num_threads()}\n" in info
    assert "OMP_NUM_THREADS : " in info


# -- the `torch` distribution -----------------------------------------------------------------


def _dist_project() -> dict:
    return tomllib.loads(TORCH_DIST.read_text())["project"]


def test_distribution_source_matches_the_package() -> None:
    project = _dist_project()
    assert project["name"] == "torch"
    assert project["version"] == torch.version.__version__
    plait = torch.version.__version__.split("+plait")[1]
    assert sorted(project["dependencies"]) == [
        f"plait-compile=={plait}", f"plait-core=={plait}", f"plait-nn=={plait}"]
    core = tomllib.loads((ROOT / "packages" / "core" / "pyproject.toml").read_text())
    assert core["project"]["version"] == plait


installed_by_nox = pytest.mark.skipif(
    not os.environ.get("PLAIT_EXPECT_INSTALL"),
    reason="the torch distribution is installed by the nox sessions (PLAIT_EXPECT_INSTALL); "
    "a development venv may lack it")


@installed_by_nox
def test_installed_distribution_answers_importlib_metadata() -> None:
    assert metadata.version("torch") == torch.__version__
    dist = metadata.distribution("torch")
    # Metadata only: no file of its own beside its .dist-info (plait-core owns torch/).
    own = [f for f in dist.files or () if ".dist-info/" not in str(f).replace("\\", "/")]
    assert own == []
    assert {r.split("==")[0] for r in dist.requires or ()} == {
        "plait-core", "plait-nn", "plait-compile"}


# -- torch.compile(module) ----------------------------------------------------------------------


def test_compiled_module_is_an_nn_module_around_the_original() -> None:
    from torch._dynamo.eval_frame import OptimizedModule

    model = nn.Linear(2, 3)
    compiled = torch.compile(model)
    assert type(compiled) is OptimizedModule and isinstance(compiled, nn.Module)
    assert compiled._orig_mod is model
    assert list(compiled.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert [name for name, _ in compiled.named_parameters()] == [
        "_orig_mod.weight", "_orig_mod.bias"]
    assert compiled.weight is model.weight
    assert repr(compiled) == (
        "OptimizedModule(\n  (_orig_mod): Linear(in_features=2, out_features=3, bias=True)\n)")
    x = torch.randn(4, 2)
    assert torch.equal(compiled(x), model(x))


def test_compiled_module_state_dict_round_trip_and_prefix_check() -> None:
    model = nn.Linear(2, 3)
    compiled = torch.compile(model)
    other = torch.compile(nn.Linear(2, 3))
    other.load_state_dict(compiled.state_dict())
    assert torch.equal(other._orig_mod.weight, model.weight)
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "_orig_mod.weight"'):
        compiled.load_state_dict(model.state_dict())


def test_compiled_module_forwards_training_and_attribute_writes() -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    compiled = torch.compile(model)
    compiled.eval()
    assert not model.training and not model[1].training and not compiled.training
    model.train()
    assert compiled.training
    compiled.tag = "x"
    assert model.tag == "x"
    assert len(compiled) == 2
    with pytest.raises(TypeError, match=r"Linear does not support len\(\)"):
        len(torch.compile(nn.Linear(1, 1)))


def test_compiled_module_pickles() -> None:
    compiled = torch.compile(nn.Linear(2, 3))
    loaded = pickle.loads(pickle.dumps(compiled))
    assert type(loaded) is type(compiled)
    assert torch.equal(loaded._orig_mod.weight, compiled._orig_mod.weight)


# -- names libraries use at import (what transformers needed), as PyTorch 2.13 answers -----------


def test_named_only_dtypes_and_float8_limits() -> None:
    assert repr(torch.float8_e4m3fn) == "torch.float8_e4m3fn" and repr(torch.uint4) == "torch.uint4"
    assert torch.float8_e5m2.is_floating_point and torch.float8_e5m2.itemsize == 1
    assert not torch.float8_e8m0fnu.is_signed and not torch.uint4.is_signed
    assert pickle.loads(pickle.dumps(torch.float8_e4m3fn)) is torch.float8_e4m3fn
    e4m3 = torch.finfo(torch.float8_e4m3fn)
    assert (e4m3.max, e4m3.min, e4m3.eps, e4m3.tiny, e4m3.bits) == (448.0, -448.0, 0.125,
                                                                     0.015625, 8)
    assert torch.finfo(torch.float8_e5m2).max == 57344.0
    assert torch.finfo(torch.float8_e4m3fnuz).max == 240.0
    assert torch.finfo(torch.float8_e8m0fnu).min == 2.0 ** -127
    with pytest.raises(TypeError, match="requires an integer input type"):
        torch.iinfo(torch.int4)
    # complex32 (kornia lists it) and the quantized/bits types exist by name too
    assert torch.chalf is torch.complex32 and torch.complex32.is_complex
    assert torch.complex32.to_real() is torch.float16 and torch.complex32.itemsize == 4
    assert torch.finfo(torch.complex32).bits == 16
    assert torch.qint8.is_signed and not torch.quint8.is_signed and torch.bits16.itemsize == 2
    # no tensor of them is made: a clear error instead of a failure in a later op
    for make in (lambda: torch.empty(2, dtype=torch.float8_e4m3fn),
                 lambda: torch.zeros(2, dtype=torch.complex32),
                 lambda: torch.ones(2).to(torch.qint8),
                 lambda: torch.ones(2, dtype=torch.uint8).view(torch.float8_e5m2)):
        with pytest.raises(NotImplementedError, match="not supported by Plait yet"):
            make()


def test_compiler_and_jit_answer_eagerly() -> None:
    def f(x: int) -> int:
        return x

    assert torch.compiler.is_compiling() is False and torch.compiler.is_exporting() is False
    assert torch.jit.is_scripting() is False and torch.jit.is_tracing() is False
    # as in PyTorch, disable wraps (a call of it breaks a graph being captured)
    assert torch.compiler.disable(f)(3) == 3 and torch.compiler.disable()(f).__wrapped__ is f
    assert torch.compiler.allow_in_graph(f) is f and torch.jit.ignore(f) is f
    assert torch.jit.ignore(drop=True)(f) is f and torch.jit.unused(f) is f
    assert torch._dynamo.assume_constant_result(f) is f
    assert "eager" in torch.compiler.list_backends()


def test_pytree_flatten_unflatten_and_paths() -> None:
    import collections

    import torch.utils._pytree as pytree

    tree = {"a": [1, (2, 3)], "b": collections.OrderedDict(x=4), "c": None}
    leaves, spec = pytree.tree_flatten(tree)
    assert leaves == [1, 2, 3, 4, None] and spec.num_leaves == 5
    rebuilt = pytree.tree_unflatten([x * 10 if isinstance(x, int) else x for x in leaves], spec)
    assert rebuilt == {"a": [10, (20, 30)], "b": collections.OrderedDict(x=40), "c": None}
    assert type(rebuilt["a"][1]) is tuple and type(rebuilt["b"]) is collections.OrderedDict
    pairs, _ = pytree.tree_flatten_with_path(tree)
    assert [(pytree.keystr(k), v) for k, v in pairs] == [
        ("['a'][0]", 1), ("['a'][1][0]", 2), ("['a'][1][1]", 3), ("['b']['x']", 4), ("['c']", None)]
    point = collections.namedtuple("point", "x y")
    assert pytree.tree_map(lambda v: v * 2, point(1, 2)) == point(2, 4)
    assert pytree.tree_map_only(int, lambda v: -v, [1, "s", 2.0]) == [-1, "s", 2.0]
    with pytest.raises(ValueError, match="already registered as pytree node"):
        pytree.register_pytree_node(list, pytree._list_flatten, lambda v, c: list(v))


def test_pytree_registered_class() -> None:
    import torch.utils._pytree as pytree

    class Box:
        def __init__(self, value: object) -> None:
            self.value = value

    pytree.register_pytree_node(Box, lambda b: ([b.value], None), lambda v, c: Box(next(iter(v))))
    assert pytree.tree_leaves([Box(5), Box([6, 7])]) == [5, 6, 7]
    out = pytree.tree_map(lambda v: v + 1, Box([1, 2]))
    assert type(out) is Box and out.value == [2, 3]


def test_library_register_autograd() -> None:
    @torch.library.custom_op("identity_test::square", mutates_args=())
    def square(x: torch.Tensor) -> torch.Tensor:
        return x * x

    def setup_context(ctx: object, inputs: tuple, output: torch.Tensor) -> None:
        ctx.save_for_backward(inputs[0])

    def backward(ctx: object, grad: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return 2 * x * grad

    torch.library.register_autograd("identity_test::square", backward,
                                    setup_context=setup_context)
    x = torch.tensor([1.0, -3.0], requires_grad=True)
    y = torch.ops.identity_test.square(x)
    y.sum().backward()
    assert y.tolist() == [1.0, 9.0] and x.grad.tolist() == [2.0, -6.0]


def test_sdpa_kernel_switches_and_restores() -> None:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    assert int(SDPBackend.MATH) == 0 and int(SDPBackend.FLASH_ATTENTION) == 1
    with sdpa_kernel(SDPBackend.MATH):
        assert torch.backends.cuda.math_sdp_enabled()
        assert not torch.backends.cuda.flash_sdp_enabled()
    assert torch.backends.cuda.flash_sdp_enabled()
    with pytest.raises(TypeError, match="SDPBackend"):
        with sdpa_kernel(["math"]):
            pass


def test_flex_attention_dense_matches_sdpa() -> None:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 6, 8) for _ in range(3))

    def causal(b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor,
               kv_idx: torch.Tensor) -> torch.Tensor:
        return q_idx >= kv_idx

    mask = create_block_mask(causal, None, None, 6, 6)
    assert mask.shape == (1, 1, 6, 6)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(flex_attention(q, k, v, block_mask=mask), expected)
    # a score_mod that adds nothing leaves plain attention
    plain = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s + 0 * i),
                               plain)


def test_distribution_constraints() -> None:
    c = torch.distributions.constraints
    assert repr(c.interval(0, 1)) == "Interval(lower_bound=0, upper_bound=1)"
    assert repr(c.real_vector) == "IndependentConstraint(Real(), 1)"
    assert repr(c.nonnegative_integer) == "IntegerGreaterThan(lower_bound=0)"
    assert (c.real.event_dim, c.simplex.event_dim, c.positive_definite.event_dim) == (0, 1, 2)
    assert c.positive_definite.check(torch.eye(2)).item() is True
    assert c.positive_definite.check(-torch.eye(2)).item() is False
    assert c.real_vector.check(torch.tensor([[1.0, float("nan")]])).tolist() == [False]
    assert c.integer_interval(0, 3).check(torch.tensor([1.0, 1.5, 4.0])).tolist() == [
        True, False, False]
    assert c.cat([c.positive, c.real], 0, [1, 2]).check(torch.tensor([-1.0, 2.0, 3.0])).tolist(
    ) == [False, True, True]
    assert c.is_dependent(c.dependent) and not c.is_dependent(c.real)


def test_isin_as_pytorch() -> None:
    assert torch.isin(torch.tensor([[1, 2], [3, 4]]), torch.tensor([2, 3])).tolist() == [
        [False, True], [True, False]]
    assert torch.isin(3, torch.tensor([1, 3])).item() is True
    assert torch.isin(torch.tensor([1.0, 2.0]), 2).tolist() == [False, True]
    assert torch.isin(torch.tensor([1, 2]), torch.tensor([2]), invert=True).tolist() == [
        True, False]
    assert torch.isin(torch.tensor([5, 0, 9, 3]), torch.tensor([9, 3, 3, 1])).tolist() == [
        False, False, True, True]
    assert torch.isin(torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan")])).tolist(
    ) == [False, False]
    assert torch.isin(torch.tensor([1, 2]), torch.tensor([], dtype=torch.int64)).tolist() == [
        False, False]


def test_storage_from_file_asarray_and_view_dtype_keyword(tmp_path: Path) -> None:
    path = tmp_path / "bytes.bin"
    path.write_bytes(bytes(range(16)))
    storage = torch.UntypedStorage.from_file(str(path), shared=False, nbytes=16)
    assert storage.nbytes() == 16 and list(storage)[:4] == [0, 1, 2, 3]
    assert storage.untyped() is storage
    piece = torch.asarray(storage[4:8], dtype=torch.uint8)
    assert piece.tolist() == [4, 5, 6, 7]
    assert piece.view(dtype=torch.int32).tolist() == [117835012]  # PyTorch 2.13's answer
    assert torch.asarray(storage[4:8], dtype=torch.int32).tolist() == [117835012]
    with pytest.raises(RuntimeError, match="is smaller than the required mapping size <32>"):
        torch.UntypedStorage.from_file(str(path), False, 32)
    shared = torch.UntypedStorage.from_file(str(path), shared=True, nbytes=16)
    shared[0] = 200
    del shared
    assert path.read_bytes()[0] == 200  # written through to the file
