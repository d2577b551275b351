"""``torch.compile``'s front door (docs/architecture.md): checks, decorator forms, hand-off.

Core validates the arguments and hands off to plait-compile's ``torch._dynamo.optimize``, which
runs the model eagerly until graph capture lands; without plait-compile, ``torch.compile``
names the distribution to install.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_namespace import HermeticSite, hermetic_site, with_requirements

import torch

MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
BACKENDS = ("eager", "aot_eager", "inductor")


def add_one(x: Any) -> Any:
    """Add one."""
    return x + 1


class Scale:
    """Shaped like an ``nn.Module``: callable, with ``forward``, counting its calls."""

    def __init__(self, factor: int) -> None:
        self.factor = factor
        self.calls = 0

    def forward(self, x: Any) -> Any:
        return x * self.factor

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.forward(*args, **kwargs)


# --- checks that come before anything else ---------------------------------------------------


def test_mode_and_options_together_is_an_error() -> None:
    message = (
        "Either mode or options can be specified, but both can't be specified at the same time."
    )
    with pytest.raises(RuntimeError, match=re.escape(message)):
        torch.compile(add_one, mode="max-autotune", options={"max_autotune": True})
    with pytest.raises(RuntimeError, match=re.escape(message)):
        torch.compile(mode="default", options={})


@pytest.mark.parametrize("decorator_form", [False, True])
def test_unknown_mode_lists_the_valid_ones(decorator_form: bool) -> None:
    with pytest.raises(RuntimeError, match=r"Unrecognized mode=fastest") as info:
        if decorator_form:
            torch.compile(mode="fastest")
        else:
            torch.compile(add_one, mode="fastest")
    for mode in MODES:
        assert mode in str(info.value)


@pytest.mark.parametrize("mode", [None, *MODES])
def test_valid_modes_are_accepted(mode: str | None) -> None:
    assert torch.compile(add_one, mode=mode)(1) == 2


@pytest.mark.parametrize("version", [(3, 9, 18, "final", 0), (3, 14, 0, "final", 0)])
def test_unsupported_python_is_an_error(
    monkeypatch: pytest.MonkeyPatch, version: tuple[int, int, int, str, int]
) -> None:
    monkeypatch.setattr(sys, "version_info", version)
    with pytest.raises(RuntimeError, match=rf"not supported on Python 3\.{version[1]}\b"):
        torch.compile(add_one)


def test_checks_run_even_when_disabled() -> None:
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        torch.compile(add_one, mode="fastest", disable=True)


# --- decorator forms and disable ---------------------------------------------------------------


def test_bare_decorator() -> None:
    @torch.compile
    def double(x: Any) -> Any:
        """Double x."""
        return 2 * x

    assert double(21) == 42
    assert double.__name__ == "double"
    assert double.__doc__ == "Double x."


def test_decorator_with_arguments() -> None:
    @torch.compile(backend="eager", fullgraph=True, dynamic=False)
    def double(x: Any) -> Any:
        return 2 * x

    assert double(21) == 42
    assert double.__name__ == "double"


def test_decorator_rejects_none() -> None:
    with pytest.raises(RuntimeError, match="Model can't be None"):
        torch.compile(backend="eager")(None)


def test_disable_returns_the_model_unchanged() -> None:
    module = Scale(2)
    assert torch.compile(add_one, disable=True) is add_one
    assert torch.compile(module, disable=True) is module
    assert torch.compile(disable=True)(add_one) is add_one


# --- the eager wrapper -------------------------------------------------------------------------


def test_compiled_function_runs_the_original() -> None:
    compiled = torch.compile(add_one)
    assert compiled is not add_one
    assert compiled(41) == 42
    assert compiled.__wrapped__ is add_one
    assert (compiled.__name__, compiled.__qualname__, compiled.__doc__) == (
        add_one.__name__,
        add_one.__qualname__,
        add_one.__doc__,
    )
    assert compiled(x=1) == 2


def test_compiled_function_on_tensors_matches_eager() -> None:
    def affine(x: torch.Tensor) -> torch.Tensor:
        return x * 2 + 1

    x = torch.tensor([[1.0, -2.0], [0.5, 3.0]])
    result = torch.compile(affine, backend="eager")(x)
    assert result.dtype == torch.float32
    assert result.tolist() == affine(x).tolist() == [[3.0, -3.0], [2.0, 7.0]]


def test_compiled_callable_object_is_wrapped_as_a_function() -> None:
    # Not an nn.Module: PyTorch wraps it as a function (tests/test_identity.py has modules).
    module = Scale(3)
    compiled = torch.compile(module)
    assert compiled._torchdynamo_orig_callable is module
    assert not hasattr(compiled, "_orig_mod")
    assert compiled(2) == 6
    assert module.calls == 1  # through the object's __call__, not only forward


@pytest.mark.parametrize("backend", BACKENDS)
def test_known_backends_are_accepted(backend: str) -> None:
    assert torch.compile(add_one, backend=backend)(1) == 2


def test_backend_callable_is_accepted() -> None:
    def my_backend(graph_module: Any, example_inputs: list[Any]) -> Any:
        return graph_module.forward

    assert torch.compile(add_one, backend=my_backend)(1) == 2


def test_unknown_backend_lists_the_valid_ones() -> None:
    with pytest.raises(RuntimeError, match=r"Invalid backend: 'tvmx'") as info:
        torch.compile(add_one, backend="tvmx")
    assert isinstance(info.value, torch._dynamo.InvalidBackend)
    for backend in BACKENDS:
        assert backend in str(info.value)
    assert set(BACKENDS) <= set(torch._dynamo.list_backends())


def test_non_callable_model_is_an_error() -> None:
    with pytest.raises(TypeError, match=r"expects a function or an nn\.Module"):
        torch.compile(42)


# --- plait-compile is loaded only when needed --------------------------------------------------


def test_import_torch_does_not_import_dynamo() -> None:
    code = (
        "import sys, torch\n"
        "assert 'torch._dynamo' not in sys.modules, 'import torch imported torch._dynamo'\n"
        "torch.compile(lambda x: x)\n"
        "assert 'torch._dynamo' in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.fixture
def site_without_compile(tmp_path: Path) -> HermeticSite:
    return hermetic_site(tmp_path, with_requirements("plait-core"))


def test_missing_plait_compile_is_named(site_without_compile: HermeticSite) -> None:
    code = (
        "import json, torch\n"
        "try:\n"
        "    torch.compile(lambda x: x)\n"
        "except ImportError as error:\n"
        "    cause = error.__cause__\n"
        "    print(json.dumps([type(error).__name__, str(error), type(cause).__name__,\n"
        "                      getattr(cause, 'name', None)]))\n"
    )
    kind, message, cause, cause_name = site_without_compile.run_json(code)
    assert kind == "ImportError"
    assert message == (
        "torch.compile needs the plait-compile distribution: pip install plait-compile"
    )
    assert (cause, cause_name) == ("ModuleNotFoundError", "torch._dynamo")


def test_without_plait_compile_checks_and_disable_still_work(
    site_without_compile: HermeticSite,
) -> None:
    code = (
        "import json, torch\n"
        "f = lambda x: x\n"
        "disabled = torch.compile(f, disable=True) is f\n"
        "try:\n"
        "    torch.compile(f, mode='fastest')\n"
        "except RuntimeError as error:\n"
        "    print(json.dumps([disabled, str(error)]))\n"
    )
    disabled, message = site_without_compile.run_json(code)
    assert disabled
    assert message.startswith("Unrecognized mode=fastest")
