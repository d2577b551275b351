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
