"""The facade's switches: defaults, determinism, precision, warnings, helpers."""

from __future__ import annotations

import pathlib
import re
import threading
import warnings

import pytest
from conftest import run_json

import torch


@pytest.fixture(autouse=True)
def _restore_switches():
    yield
    torch.set_default_dtype(torch.float32)
    torch.set_default_device(None)
    torch.use_deterministic_algorithms(False)
    torch.set_float32_matmul_precision("highest")
    torch.set_warn_always(False)


def test_default_dtype_drives_float_creation():
    assert torch.get_default_dtype() is torch.float32
    torch.set_default_dtype(torch.float64)
    assert torch.tensor(1.5).dtype is torch.float64
    assert torch.zeros(2).dtype is torch.float64
    assert torch.tensor(3).dtype is torch.int64
    assert (torch.tensor([1, 2]) + 0.5).dtype is torch.float64
    with pytest.raises(TypeError, match="floating-point"):
        torch.set_default_dtype(torch.int32)
    with pytest.raises(TypeError):
        torch.set_default_dtype("float64")


def test_default_device_is_thread_local_and_default_dtype_process_wide():
    torch.set_default_dtype(torch.float64)
    torch.set_default_device("meta")
    seen = {}

    def worker():
        seen["dtype"] = torch.get_default_dtype()
        seen["device"] = torch.get_default_device()
        torch.set_default_dtype(torch.float16)
        seen["tensor"] = torch.ones(1).dtype

    th = threading.Thread(target=worker)
    th.start()
    th.join()
    try:
        assert seen == {"dtype": torch.float64, "device": torch.device("cpu"),
                        "tensor": torch.float16}
        # the dtype is one global (as PyTorch's), the device per thread
        assert torch.get_default_dtype() is torch.float16
        assert torch.get_default_device() == torch.device("meta")
    finally:
        torch.set_default_dtype(torch.float32)
        torch.set_default_device(None)


def test_device_context_beats_default_device():
    torch.set_default_device("meta")
    assert torch.empty(2).device.type == "meta"
    with torch.device("cpu"):
        assert torch.empty(2).device.type == "cpu"
        assert torch.get_default_device() == torch.device("cpu")
        with torch.device("toy:1"):
            assert torch.ones(1).device == torch.device("toy", 1)
        assert torch.empty(2).device.type == "cpu"
    assert torch.empty(2).device.type == "meta"
    torch.set_default_device(None)
    assert torch.get_default_device() == torch.device("cpu")


def test_set_default_tensor_type_warns():
    with pytest.warns(UserWarning, match="deprecated"):
        torch.set_default_tensor_type("torch.DoubleTensor")
    assert torch.get_default_dtype() is torch.float64
    with pytest.warns(UserWarning), pytest.raises(TypeError):
        torch.set_default_tensor_type("torch.LongTensor")


def test_deterministic_switches():
    assert not torch.are_deterministic_algorithms_enabled()
    assert torch.get_deterministic_debug_mode() == 0
    torch.use_deterministic_algorithms(True)
    assert torch.are_deterministic_algorithms_enabled()
    assert not torch.is_deterministic_algorithms_warn_only_enabled()
    assert torch.get_deterministic_debug_mode() == 2
    with pytest.raises(RuntimeError, match="scatter_add does not have a deterministic"):
        torch._alert_not_deterministic("scatter_add")
    torch.use_deterministic_algorithms(True, warn_only=True)
    assert torch.get_deterministic_debug_mode() == 1
    with pytest.warns(UserWarning, match="index_put"):
        torch._alert_not_deterministic("index_put")
    for mode, expected in (("default", 0), ("warn", 1), ("error", 2), (0, 0), (2, 2)):
        torch.set_deterministic_debug_mode(mode)
        assert torch.get_deterministic_debug_mode() == expected
    torch.set_deterministic_debug_mode(0)
    torch._alert_not_deterministic("anything")  # off: silent
    with pytest.raises(RuntimeError, match="expected one of"):
        torch.set_deterministic_debug_mode("loud")
    with pytest.raises(RuntimeError, match="expected 0, 1, or 2"):
        torch.set_deterministic_debug_mode(3)
    with pytest.raises(TypeError):
        torch.use_deterministic_algorithms("yes")


def test_matmul_precision_warn_always_threads():
    for p in ("high", "medium", "highest"):
        torch.set_float32_matmul_precision(p)
        assert torch.get_float32_matmul_precision() == p
    with pytest.raises(RuntimeError, match="highest"):
        torch.set_float32_matmul_precision("low")
    torch.set_warn_always(True)
    assert torch.is_warn_always_enabled()
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    assert torch.get_num_threads() == 1
    torch.set_num_threads(n)
    with pytest.raises(RuntimeError):
        torch.set_num_threads(0)


def test_type_helpers():
    t = torch.ones(2)
    assert torch.is_tensor(t) and not torch.is_tensor([1.0])
    assert torch.is_storage(t.untyped_storage()) and not torch.is_storage(t)
    assert torch.typename(t) == "torch.FloatTensor"
    assert torch.typename(torch.ones(2, dtype=torch.int64)) == "torch.LongTensor"
    assert torch.typename(3) == "int"
    assert torch.typename(torch.device("cpu")) == "torch.device"
    assert torch.is_floating_point(t) and torch.numel(torch.ones(2, 3)) == 6


def test_manual_seed_wires_the_generator():
    g = torch.manual_seed(1234)
    assert isinstance(g, torch.Generator) and g is torch.default_generator
    assert torch.initial_seed() == 1234
    assert torch.Generator().manual_seed(7).initial_seed() == 7
    s = torch.seed()
    assert torch.initial_seed() == s
    with pytest.raises(ValueError, match="Overflow"):  # as PyTorch 2.13 raises
        torch.manual_seed(1 << 70)


def test_printoptions():
    torch.set_printoptions(precision=2)
    try:
        assert repr(torch.tensor([0.12345, 1.5])) == "tensor([0.12, 1.50])"
    finally:
        torch.set_printoptions(profile="default")
    assert repr(torch.tensor([0.12345, 1.5])) == "tensor([0.1235, 1.5000])"


def test_sym_helpers_exported():
    for name in ("SymInt", "SymFloat", "SymBool", "sym_int", "sym_float", "sym_max", "sym_min",
                 "sym_sum", "sym_not", "sym_ite"):
        assert hasattr(torch, name), name
    assert torch.sym_max(2, 5) == 5 and torch.sym_not(True) is False


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="no attribute 'definitely_not_here'"):
        torch.definitely_not_here  # noqa: B018


def test_import_leaves_no_numpy_and_reports_time():
    out = run_json("""
        import json, sys, torch
        print(json.dumps({"numpy": "numpy" in sys.modules, "t": torch._import_seconds}))
    """)
    assert out["numpy"] is False
    assert out["t"] > 0


# Standard-library modules (and pluggy) that together cost more to import than all of
# `import torch` does: the import path and every plugin's entry-point module avoid them.
HEAVY_AT_IMPORT = ("typing", "inspect", "dataclasses", "pkgutil", "re", "enum", "pluggy",
                   "importlib.metadata", "numpy")


def test_import_with_every_installed_plugin_loads_no_heavy_module():
    out = run_json(f"""
        import sys, torch
        heavy = [m for m in {HEAVY_AT_IMPORT!r} if m in sys.modules]
        import json  # (json imports re)
        from torch._core import registry
        print(json.dumps({{
            "heavy": heavy,
            "loaded": sorted(n for n, p in registry.installed().items() if p.status == "loaded"),
        }}))
    """)
    assert "toy" in out["loaded"]  # the test plugin (and any installed backend) autoloaded
    assert out["heavy"] == []


def test_hook_implementations_validate_against_the_specifications():
    # Plugins define their hooks as plain functions (no pluggy import); pluggy still checks
    # them against hookspecs: every in-tree plugin module that is installed here, and a
    # misspelt argument or hook name is refused.
    import importlib
    import types

    import pluggy

    from torch.backends import hookspecs

    checked = 0
    for name in ("plait_backend_cpu.plugin", "plait_backend_xpu.plugin",
                 "plait_backend_cuda.plugin", "plait_backend_mps.plugin",
                 "plait_toy_device.plugin"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue  # that backend is not installed in this environment
        hookspecs.check_plugin(module)
        checked += 1
    assert checked >= 1
    wrong_argument = types.ModuleType("wrong_argument")
    exec("def torch_backend_info(device_type, flavour): pass", wrong_argument.__dict__)
    with pytest.raises(pluggy.PluginValidationError, match="flavour"):
        hookspecs.check_plugin(wrong_argument)
    unknown_hook = types.ModuleType("unknown_hook")
    exec("def torch_backend_infos(device_type): pass", unknown_hook.__dict__)
    with pytest.raises(pluggy.PluginValidationError, match="torch_backend_infos"):
        hookspecs.check_plugin(unknown_hook)


SRC = pathlib.Path(__file__).resolve().parents[1] / "packages"
# Only the registry, the device modules and Tensor's is_<device> properties may name
# accelerator device types; everything else asks the registry (docs/backend-guide.md).
ALLOWED = {"_core/registry.py", "_device_modules.py", "_core/device.py", "_core/tensor.py",
           "backends/cudnn.py", "backends/mps.py", "backends/hookspecs.py"}
COMPARE = re.compile(r"""(==|!=|\bin\b)\s*\(?\s*["'](cuda|mps|xpu|hip)["']|"""
                     r"""["'](cuda|mps|xpu|hip)["']\s*(==|!=)""")


def test_no_device_type_string_comparisons_outside_the_registry():
    offenders = []
    for path in SRC.glob("*/src/**/*.py"):
        if "/".join(path.parts[-2:]) in ALLOWED or path.name in ALLOWED or "backend-" in str(path):
            continue  # a backend may of course name its own device type
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if COMPARE.search(line):
                offenders.append(f"{path.relative_to(SRC)}:{lineno}: {line.strip()}")
    assert offenders == []


def test_no_print_in_library_code():
    offenders = [str(p.relative_to(SRC)) for p in SRC.glob("*/src/**/*.py")
                 if re.search(r"^\s*print\(", p.read_text(), re.M) and p.name != "__main__.py"]
    assert offenders == []


def test_warnings_not_errors_on_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (torch.ones(2, 2) * 2 + 1).sum().item()


def test_pickle_and_deepcopy_of_tensors():
    import copy
    import pickle

    t = torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]).t()
    u = pickle.loads(pickle.dumps(t))
    assert u.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]] and u.stride() == (1, 3)
    g = torch.ones(2, requires_grad=True)
    d = copy.deepcopy(g)
    assert d is not g and d.requires_grad and d.tolist() == [1.0, 1.0]
    d.detach().fill_(3.0)
    assert g.tolist() == [1.0, 1.0]  # no shared storage
    pair = copy.deepcopy([t, t])
    assert pair[0] is pair[1]  # the memo keeps identities


def test_return_types_import_and_pickle():
    import pickle

    import torch.return_types as rt

    r = torch.tensor([[1.0, 5.0], [3.0, 2.0]]).max(1)
    assert isinstance(r, rt.max) and r.values.tolist() == [5.0, 3.0]
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is rt.max and back.indices.tolist() == [1, 0]
