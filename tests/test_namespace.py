"""The ``torch`` package spans distributions (docs/architecture.md).

plait-core owns ``torch/__init__.py`` (and ``torch/utils/__init__.py``); plait-nn adds
``torch.nn``, ``torch.optim`` and ``torch.utils.data``, plait-compile adds ``torch.fx`` and
``torch._dynamo``. These tests prove that the subpackages import from their own distributions,
that those hold no ``torch/__init__.py``, that a missing distribution is named in the import
error, and, for the nox run with ``PLAIT_EXPECT_INSTALL=editable``, that all of it holds for
editable installs too.

:func:`hermetic_site` builds an environment holding only chosen distributions, for tests that
need one without plait-nn or plait-compile (``tests/test_compile_facade.py`` uses it too).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

import torch

# module -> the distribution that must provide it
PROVIDERS = {
    "torch.nn": "plait-nn",
    "torch.optim": "plait-nn",
    "torch.utils.data": "plait-nn",
    "torch.func": "plait-nn",
    "torch.fx": "plait-compile",
    "torch._dynamo": "plait-compile",
}
CORE = "plait-core"
DISTRIBUTIONS = (CORE, "plait-nn", "plait-compile")
INSTALL_MODES = ("wheel", "editable")


# --- where a distribution's files are -----------------------------------------------------------


def is_editable(distribution: metadata.Distribution) -> bool:
    """Whether the distribution is an editable install (PEP 610 ``direct_url.json``)."""
    direct_url = distribution.read_text("direct_url.json")
    if not direct_url:
        return False
    return bool(json.loads(direct_url).get("dir_info", {}).get("editable", False))


def install_mode(name: str) -> str:
    """``"editable"``, ``"wheel"`` or ``"missing"`` for the distribution ``name``."""
    try:
        distribution = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return "missing"
    return "editable" if is_editable(distribution) else "wheel"


def editable_roots(distribution: metadata.Distribution) -> list[Path]:
    """The directories an editable install puts on ``sys.path`` (its ``.pth`` lines).

    hatchling's default editable mode writes a ``.pth`` file listing the source directories
    (``packages/nn/src``). A ``.pth`` that only holds ``import`` hooks (``dev-mode-exact``, which
    PACKAGING.md rules out) gives no roots, and the tests that need them fail saying so.
    """
    roots = []
    for file in distribution.files or []:
        if file.suffix != ".pth":
            continue
        for line in file.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith(("#", "import ", "import\t")):
                roots.append(Path(line).resolve())
    if is_editable(distribution) and not roots:
        pytest.fail(f"{distribution.name} is editable but its .pth files name no directory")
    return roots


def shipped_files(distribution: metadata.Distribution) -> set[str]:
    """Paths, relative to the import root, of the distribution's files (``torch/nn/...``).

    A wheel install lists them in ``RECORD``; an editable install ships the ``.py`` files under
    its source roots.
    """
    shipped = {file.as_posix() for file in distribution.files or []}
    for root in editable_roots(distribution):
        shipped |= {path.relative_to(root).as_posix() for path in root.rglob("*.py")}
    return shipped


def provides(distribution: metadata.Distribution, file: str | os.PathLike[str]) -> bool:
    """Whether ``file`` (a module's ``__file__``) was installed by ``distribution``."""
    target = Path(file).resolve()
    if is_editable(distribution):
        return any(target.is_relative_to(root) for root in editable_roots(distribution))
    return any(
        Path(distribution.locate_file(entry)).resolve() == target
        for entry in distribution.files or []
    )


# --- hermetic environments -----------------------------------------------------------------------

# environment variables that would put other directories on sys.path
_PATH_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONSTARTUP")

_PROBE = """
import importlib, json, sys
results = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ImportError as error:
        results[name] = {"type": type(error).__name__, "name": error.name, "message": str(error)}
    else:
        results[name] = None
print(json.dumps(results))
"""


@dataclass(frozen=True)
class HermeticSite:
    """A stand-in ``site-packages`` that holds only some installed distributions.

    ``directory`` mirrors the chosen distributions' files as symlinks; ``pythonpath`` is that
    directory plus the source roots of those installed editable (``python -S`` skips ``.pth``
    files). :meth:`run` starts this interpreter with ``-S`` and that ``PYTHONPATH`` only.
    """

    directory: Path
    pythonpath: tuple[Path, ...]

    def run(self, code: str, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``python -S -c code *args`` in the hermetic environment."""
        env = {key: value for key, value in os.environ.items() if key not in _PATH_VARIABLES}
        env["PYTHONPATH"] = os.pathsep.join(str(path) for path in self.pythonpath)
        return subprocess.run(
            [sys.executable, "-S", "-c", code, *args],
            cwd=self.directory.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def run_json(self, code: str, *args: str) -> object:
        """Run ``code``, which prints one JSON document as its last line, and return it."""
        result = self.run(code, *args)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.splitlines()[-1])

    def try_imports(self, *modules: str) -> dict[str, dict[str, str] | None]:
        """Import each module in one fresh interpreter: ``None`` or the ImportError's fields."""
        return self.run_json(_PROBE, *modules)  # type: ignore[return-value]


def with_requirements(*names: str) -> list[str]:
    """``names`` and every installed distribution they require, recursively.

    Requirements behind an extra are left out; other markers are not evaluated, a requirement
    that is not installed is skipped (its marker excluded it, or the environment is broken and
    the hermetic subprocess will say so).
    """
    found: dict[str, None] = {}
    pending = list(names)
    while pending:
        name = pending.pop()
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        key = distribution.metadata["Name"].lower().replace("_", "-")
        if key in found:
            continue
        found[key] = None
        for requirement in distribution.requires or []:
            if re.search(r"\bextra\s*==", requirement):
                continue
            pending.append(re.match(r"[A-Za-z0-9._-]+", requirement).group(0))
    return list(found)


def hermetic_site(tmp_path: Path, dists: Iterable[str]) -> HermeticSite:
    """Build an environment under ``tmp_path`` that holds only the distributions ``dists``.

    Each file of each distribution (as its ``RECORD`` lists it) is symlinked into
    ``tmp_path / "site"``, file by file, because a wheel install merges plait-core's, plait-nn's
    and plait-compile's files into one ``site-packages/torch`` directory. Editable installs
    contribute their dist-info and put their source roots on ``pythonpath``. Pass every
    dependency too; :func:`with_requirements` computes them.

    :param tmp_path: a fresh directory (pytest's ``tmp_path``).
    :param dists: distribution names, such as ``with_requirements("plait-core")``.
    :returns: the environment; :meth:`HermeticSite.run` runs code in it.
    """
    site = tmp_path / "site"
    site.mkdir()
    pythonpath = [site]
    for name in dists:
        distribution = metadata.distribution(name)
        for entry in distribution.files or []:
            if entry.parts[0] == ".." or entry.is_absolute() or entry.suffix in (".pth", ".pyc"):
                continue  # scripts outside site-packages, editable hooks, bytecode
            source = Path(distribution.locate_file(entry))
            if not source.is_file():
                continue
            link = site / entry
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.exists():
                link.symlink_to(source)
        pythonpath += editable_roots(distribution)
    return HermeticSite(site, tuple(pythonpath))


@pytest.fixture
def core_only_site(tmp_path: Path) -> HermeticSite:
    """plait-core and its requirements, without plait-nn and plait-compile."""
    return hermetic_site(tmp_path, with_requirements(CORE))


# --- the namespace -------------------------------------------------------------------------------


@pytest.mark.parametrize(("module_name", "distribution_name"), PROVIDERS.items())
def test_subpackage_comes_from_its_own_distribution(
    module_name: str, distribution_name: str
) -> None:
    module = importlib.import_module(module_name)
    owner = metadata.distribution(distribution_name)
    core = metadata.distribution(CORE)
    assert provides(owner, module.__file__), (module.__file__, distribution_name)
    assert not provides(core, module.__file__)
    assert provides(core, torch.__file__)
    assert not provides(owner, torch.__file__)


@pytest.mark.parametrize("distribution_name", sorted(set(PROVIDERS.values())))
def test_subpackage_distribution_holds_no_torch_init(distribution_name: str) -> None:
    shipped = shipped_files(metadata.distribution(distribution_name))
    assert "torch/__init__.py" not in shipped
    assert "torch/utils/__init__.py" not in shipped
    for module, owner in PROVIDERS.items():
        if owner == distribution_name:
            assert module.replace(".", "/") + "/__init__.py" in shipped


def test_core_holds_the_namespace_roots() -> None:
    shipped = shipped_files(metadata.distribution(CORE))
    assert {"torch/__init__.py", "torch/utils/__init__.py"} <= shipped
    assert not any(file.startswith(("torch/nn/", "torch/fx/")) for file in shipped)


def test_subpackages_are_attributes_without_an_import() -> None:
    code = (
        "import sys, torch\n"
        "assert torch.nn.__name__ == 'torch.nn'\n"
        "assert torch.optim.__name__ == 'torch.optim'\n"
        "assert torch.utils.data.__name__ == 'torch.utils.data'\n"
        "assert torch.fx.__name__ == 'torch.fx'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_missing_submodule_of_an_installed_subpackage_is_an_ordinary_error() -> None:
    with pytest.raises(ModuleNotFoundError) as info:
        importlib.import_module("torch.nn.no_such_module")
    assert info.value.name == "torch.nn.no_such_module"
    assert "not installed" not in str(info.value)


def test_missing_distribution_finder_is_installed_once() -> None:
    from torch._subpackages import MissingDistributionFinder, install_missing_distribution_finder

    finder = install_missing_distribution_finder()
    assert install_missing_distribution_finder() is finder
    assert sum(isinstance(entry, MissingDistributionFinder) for entry in sys.meta_path) == 1


# --- missing distributions (hermetic subprocesses) -----------------------------------------------


def test_missing_distribution_is_named_in_the_import_error(core_only_site: HermeticSite) -> None:
    results = core_only_site.try_imports("torch", *PROVIDERS)
    assert results.pop("torch") is None
    for module, distribution_name in PROVIDERS.items():
        error = results[module]
        assert error is not None, f"{module} imported without {distribution_name}"
        assert error["type"] == "ModuleNotFoundError"
        assert error["name"] == module
        assert error["message"] == (
            f"{module} is provided by the {distribution_name} distribution, which is not "
            f"installed: pip install {distribution_name}"
        )


def test_missing_distribution_is_named_on_attribute_access(core_only_site: HermeticSite) -> None:
    code = (
        "import json, torch\n"
        "try:\n"
        "    torch.nn\n"
        "except ModuleNotFoundError as error:\n"
        "    print(json.dumps(str(error)))\n"
    )
    assert "pip install plait-nn" in core_only_site.run_json(code)


def test_installed_distribution_without_its_files_is_reported(
    core_only_site: HermeticSite,
) -> None:
    # plait-nn's metadata without its torch/nn files: an install that does not line up
    distribution = metadata.distribution("plait-nn")
    for entry in distribution.files or []:
        if entry.parts[0].endswith(".dist-info"):
            link = core_only_site.directory / entry
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(Path(distribution.locate_file(entry)))
    error = core_only_site.try_imports("torch.nn")["torch.nn"]
    assert error is not None
    assert error["type"] == "ModuleNotFoundError"
    assert (
        f"plait-nn {distribution.version} is installed but torch.nn was not found"
        in (error["message"])
    )
    assert "pip install --force-reinstall plait-core plait-nn" in error["message"]


def test_hermetic_site_holds_exactly_the_chosen_distributions(tmp_path: Path) -> None:
    site = hermetic_site(tmp_path, with_requirements("plait-nn"))
    results = site.try_imports("torch.nn", "torch.optim", "torch.utils.data", "torch.fx")
    assert results["torch.nn"] is None
    assert results["torch.optim"] is None
    assert results["torch.utils.data"] is None
    assert "pip install plait-compile" in results["torch.fx"]["message"]


# --- install modes -------------------------------------------------------------------------------


def test_install_mode_is_the_expected_one() -> None:
    modes = {name: install_mode(name) for name in DISTRIBUTIONS}
    expected = os.environ.get("PLAIT_EXPECT_INSTALL")
    if expected is None:
        pytest.skip(f"PLAIT_EXPECT_INSTALL is not set; installed as {modes}")
    assert expected in INSTALL_MODES, f"PLAIT_EXPECT_INSTALL={expected!r}, not in {INSTALL_MODES}"
    assert modes == dict.fromkeys(DISTRIBUTIONS, expected)


@pytest.mark.skipif(
    any(install_mode(name) != "editable" for name in DISTRIBUTIONS),
    reason="plait-core, plait-nn and plait-compile are not all installed editable",
)
def test_namespace_spans_editable_installs() -> None:
    core_roots = editable_roots(metadata.distribution(CORE))
    assert any(Path(torch.__file__).resolve().is_relative_to(root) for root in core_roots)
    torch_path = {Path(entry).resolve() for entry in torch.__path__}
    utils_path = {
        Path(entry).resolve() for entry in importlib.import_module("torch.utils").__path__
    }
    for module_name, distribution_name in PROVIDERS.items():
        roots = editable_roots(metadata.distribution(distribution_name))
        assert {root / "torch" for root in roots} <= torch_path
        module = importlib.import_module(module_name)
        assert any(Path(module.__file__).resolve().is_relative_to(root) for root in roots)
        if module_name.startswith("torch.utils."):
            assert {root / "torch" / "utils" for root in roots} <= utils_path
