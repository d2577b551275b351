"""The core's layers (docs/architecture.md, "Layers"): a lower layer never imports an upper one,
not even inside a function; what it needs from above is installed into it
(``torch._core.upcalls``). The devices core serves itself are plugins like any other."""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

import torch
from torch._core import registry, upcalls

SRC = pathlib.Path(torch.__file__).parent.parent

# Bottom to top. A module belongs to the layer of its longest matching prefix.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("torch._core", "torch.backends.hookspecs", "torch.backends._backend_info")),
    ("reference backend", ("torch._refs",)),
    ("op library", ("torch._aten",)),
    ("fused composites", ("torch._fused",)),
    ("autograd", ("torch.autograd",)),
    # torch.* itself; and torch.autograd's user tools, which live where PyTorch keeps them
    # (torch.autograd.gradcheck/functional/forward_ad) and are written on the public API like
    # any program.
    ("facade", ("torch", "torch.autograd.gradcheck", "torch.autograd.functional",
                "torch.autograd.profiler", "torch.autograd.forward_ad")),
    ("testing", ("torch.testing",)),
)
LAYER_NAMES = [name for name, _ in LAYERS]
# The one kind of edge that points up: the torch.autograd package re-exports its user tools
# under PyTorch's names (torch.autograd.gradcheck is the function, imported when the package is).
REEXPORTS = frozenset({("torch.autograd", "torch.autograd.gradcheck"),
                       ("torch.autograd", "torch.autograd.functional"),
                       ("torch.autograd", "torch.autograd.forward_ad")})


def layer_of(module: str) -> int:
    best, best_len = -1, -1
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = rank, len(prefix)
    return best


def core_modules() -> list[tuple[pathlib.Path, str, bool]]:
    found = []
    for path in sorted((SRC / "torch").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found.append((path, ".".join(parts), is_package))
    return found


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of import nodes under ``if TYPE_CHECKING:`` (never executed)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skipped


def imported_modules(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, module) for every torch module ``source`` imports: at the top, inside functions,
    relatively, or through ``importlib.import_module("...")`` with a constant name."""
    tree = ast.parse(source)
    skipped = _type_checking_only(tree)
    package = module.split(".") if is_package else module.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                is_module = (SRC / pathlib.Path(*sub.split("."))).with_suffix(".py").exists() or (
                    SRC / pathlib.Path(*sub.split("."))).is_dir()
                found.append((node.lineno, sub if is_module else target))
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"):
            found.append((node.lineno, node.args[0].value))
    return [(line, m) for line, m in found if m == "torch" or m.startswith("torch.")]


def upward_imports() -> list[str]:
    bad = []
    for path, module, is_package in core_modules():
        own = layer_of(module)
        for line, target in imported_modules(path.read_text(), module, is_package):
            theirs = layer_of(target)
            if theirs > own and (module, target) not in REEXPORTS:
                bad.append(f"{module}:{line} ({LAYER_NAMES[own]}) imports {target} "
                           f"({LAYER_NAMES[theirs]})")
    return bad


def test_no_layer_imports_a_layer_above_it():
    assert upward_imports() == []


def test_every_layer_has_modules():
    ranks = {layer_of(module) for _, module, _ in core_modules()}
    assert ranks == set(range(len(LAYERS)))


def test_the_scan_sees_every_kind_of_import():
    source = textwrap.dedent("""
        import torch
        from typing import TYPE_CHECKING
        from .. import _functions
        from ..autograd import grad_mode
        from .dtype import float32
        if TYPE_CHECKING:
            from torch.library import Library
        def f():
            import torch._aten.elementwise
            return importlib.import_module("torch.serialization")
    """)
    assert imported_modules(source, "torch._core.example", False) == [
        (2, "torch"), (4, "torch._functions"), (5, "torch.autograd.grad_mode"),
        (6, "torch._core.dtype"), (10, "torch._aten.elementwise"), (11, "torch.serialization"),
    ]


def test_the_rule_catches_an_upward_import(tmp_path, monkeypatch):
    fake_src = tmp_path / "torch" / "_core"
    fake_src.mkdir(parents=True)
    (fake_src / "bad.py").write_text("def f():\n    from .. import _functions\n")
    (fake_src.parent / "_functions.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path)
    assert upward_imports() == [
        "torch._core.bad:2 (core) imports torch._functions (facade)"]


def test_every_upcall_slot_is_installed_by_its_owner():
    code = textwrap.dedent("""
        import importlib, torch
        from torch._core import upcalls
        for owner, _ in upcalls.SLOTS.values():
            importlib.import_module(owner)
        assert upcalls.missing() == [], upcalls.missing()
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_an_upcall_loads_its_owner_on_first_use():
    code = textwrap.dedent("""
        import pickle, sys, torch
        t = torch.ones(2)
        assert "torch.serialization" not in sys.modules
        s = pickle.loads(pickle.dumps(t.untyped_storage()))  # reduce_storage: serialization's
        assert "torch.serialization" in sys.modules and s.nbytes() == 8
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_an_unknown_upcall_slot_is_refused():
    with pytest.raises(KeyError, match="no upcall slot named tensor_rpr"):
        upcalls.install(tensor_rpr=repr)


def test_core_serves_cpu_and_meta_through_plugins():
    meta = registry.runtime("meta")
    assert meta.plugin is not None and meta.plugin.distribution == "plait-core"
    assert meta.dispatch_key == "Meta"
    code = textwrap.dedent("""
        import torch
        from torch._core import registry
        rt = registry.runtime("cpu")
        assert rt.plugin.distribution == "plait-core", rt.plugin
        assert torch.ones(3).add(1).tolist() == [2.0, 2.0, 2.0]
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False, env={**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_a_builtin_plugin_takes_the_same_path_as_an_installed_one():
    calls = []

    def info(device_type):
        calls.append("info")
        return torch.backends.hookspecs.BackendInfo("layerdev", "plait-core", capabilities={"x"})

    plugin = SimpleNamespace(
        torch_backend_info=info,
        torch_backend_allocator=lambda device_type: calls.append("allocator") or object(),
        torch_backend_copy=lambda device_type: calls.append("copy") or object(),
        torch_backend_register_kernels=lambda device_type, lib: calls.append(("kernels", lib.ns)),
    )
    registry.add_builtin("layerdev", plugin)
    try:
        assert registry.capabilities("layerdev") == frozenset({"x"})
        rt = registry.runtime("layerdev")
        assert rt.dispatch_key == "LAYERDEV" and rt.plugin.module is plugin
        assert calls == ["info", "allocator", "copy", ("kernels", "prims")]
    finally:
        registry._builtins.pop("layerdev", None)
        registry._runtimes.pop("layerdev", None)
