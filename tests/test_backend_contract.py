"""The public backend contract (torch.backends.contract) and what core does for every plugin
device: backends import no private core name, declining kernels, memory and allocation,
torch.<device> entry points served by core, generators, device methods, index checks."""

from __future__ import annotations

import ast
import json
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import run_json, run_python

import torch
from torch.backends import contract

ROOT = Path(__file__).resolve().parent.parent
BACKEND_SOURCES = sorted(
    [*ROOT.glob("packages/backend-*/src/**/*.py"), *ROOT.glob("tests/plugins/*/src/**/*.py")]
)


# -- no private core name in any backend ------------------------------------------------------


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(source: str) -> list[str]:
    """Private core names ``source`` uses: ``torch._x`` modules (imported or reached as an
    attribute) and ``_private`` attributes of names bound to torch modules or their members."""
    tree = ast.parse(source)
    torch_names: set[str] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "torch":
                    torch_names.add(alias.asname or parts[0])
                    found += [f"import {alias.name}" for p in parts if _is_private(p)][:1]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] != "torch":
                continue
            if any(_is_private(p) for p in parts):
                found.append(f"from {node.module} import ...")
            for alias in node.names:
                if _is_private(alias.name):
                    found.append(f"from {node.module} import {alias.name}")
                torch_names.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in torch_names:
                found.append(f"{ast.unparse(node)} (line {node.lineno})")
    return found


def test_the_scan_finds_every_kind_of_private_use():
    source = textwrap.dedent("""
        import torch._refs
        from torch import _dispatch
        from torch._core.alloc import new_tensor
        from torch.backends import _registry
        import torch
        from torch.backends import contract
        x = torch._C
        y = contract._core("x")
        z = torch.backends._registry
        ok = torch.float32, contract.reference, self._own, torch.__version__
    """)
    assert sorted(private_uses(source)) == sorted([
        "import torch._refs", "from torch import _dispatch", "from torch._core.alloc import ...",
        "from torch.backends import _registry", "torch._C (line 8)",
        "contract._core (line 9)", "torch.backends._registry (line 10)",
    ])


def test_the_scan_sees_every_in_tree_backend_and_the_toy_plugin():
    names = {p.parts[p.parts.index("src") + 1] for p in BACKEND_SOURCES}
    assert {"plait_backend_cpu", "plait_backend_cuda", "plait_backend_mps", "plait_backend_xpu",
            "plait_toy_device"} <= names


@pytest.mark.parametrize("path", BACKEND_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_backends_import_no_private_core_name(path):
    assert private_uses(path.read_text(encoding="utf-8")) == []


def test_the_contract_exports_what_it_documents():
    for name in contract.__all__:
        assert getattr(contract, name) is not None, name
    assert torch.backends.contract is contract
    assert contract.Decline.__module__ == "torch.backends.contract"


# -- primitives, reference kernels, composites -------------------------------------------------


def test_primitives_and_their_schemas():
    assert "add" in contract.PRIMITIVES and contract.PRIMITIVES["add"] == "binary"
    assert contract.schema("add") == "add(Tensor(a!) out, Tensor a, Tensor b) -> ()"
    with pytest.raises(KeyError):
        contract.schema("not_a_primitive")
    out = torch.empty(3)
    contract.primitive("fill_")(out, 2.5)
    assert out.tolist() == [2.5, 2.5, 2.5]


def test_reference_kernel_writes_into_its_output():
    a, b, out = torch.tensor([1.0, 2.0]), torch.tensor([10.0, 20.0]), torch.empty(2)
    contract.reference("add")(out, a, b)
    assert out.tolist() == [11.0, 22.0]
    with pytest.raises(KeyError):
        contract.reference("nope")


def test_composite_is_the_ops_backend_independent_kernel():
    x = torch.tensor([[1.0, 2.0, 3.0]])
    got = contract.composite("aten::_softmax")(x, 1, False)
    e = np.exp([1.0, 2.0, 3.0])
    np.testing.assert_allclose(got.numpy()[0], e / e.sum(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="not defined by core"):
        contract.composite("aten::no_such_op")


# -- declining -------------------------------------------------------------------------------


@pytest.fixture
def scratch_op():
    """``contract_test::twice`` with a composite kernel, and a Library for CPU overrides."""
    lib = torch.library.Library("contract_test", "FRAGMENT")
    if not hasattr(torch.ops.contract_test, "twice"):
        lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CompositeExplicitAutograd")
    yield lib
    lib._destroy()


def test_declined_call_runs_the_composite(scratch_op):
    calls = []

    @contract.may_decline
    def twice_cpu(x):
        if x.dtype == torch.float64:
            raise contract.Decline
        calls.append(x.dtype)
        return x * 3  # distinguishable from the composite's result

    scratch_op.impl("twice", twice_cpu, "CPU")
    assert torch.ops.contract_test.twice(torch.ones(2)).tolist() == [3.0, 3.0]
    assert torch.ops.contract_test.twice(torch.ones(2, dtype=torch.float64)).tolist() == [2.0, 2.0]
    assert calls == [torch.float32]


def test_declined_primitive_runs_the_kernel_it_overrode():
    lib = torch.library.Library("prims", "IMPL", "CPU")
    seen = []

    @contract.may_decline
    def neg(out, a):
        seen.append(a.dtype)
        raise contract.Decline

    try:
        lib.impl("neg", neg)
        a = torch.tensor([1.0, -2.0])
        assert torch.neg(a).tolist() == [-1.0, 2.0]
        assert seen == [torch.float32]
    finally:
        lib._destroy()
    assert (-torch.tensor([3.0])).tolist() == [-3.0]


def test_an_unmarked_kernel_is_registered_as_it_is(scratch_op):
    def plain(x):
        raise contract.Decline

    scratch_op.impl("twice", plain, "CPU")
    with pytest.raises(contract.Decline):
        torch.ops.contract_test.twice(torch.ones(1))


# -- memory, allocation, dtypes ----------------------------------------------------------------


def test_data_ptr_and_memory_count_the_storage_offset():
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    row = base[2]
    assert contract.data_ptr(row) == contract.data_ptr(base) + 8 * 4
    handle, offset = contract.memory(row)
    assert offset == 32
    assert handle is contract.memory(base)[0]


def test_empty_allocates_a_contiguous_output_on_any_device():
    t = contract.empty([2, 3], torch.int16, "cpu")
    assert t.shape == (2, 3) and t.dtype == torch.int16 and t.stride() == (3, 1)
    toy = contract.empty((4,), torch.float32, "toy:1")
    assert toy.device == torch.device("toy", 1)


def test_dtype_codes_follow_a_native_librarys_order():
    assert contract.dtype("bfloat16") is torch.bfloat16
    assert contract.dtype_codes(["int64", "quint4", "float32"]) == {torch.int64: 0,
                                                                    torch.float32: 2}
    assert set(contract.DTYPE_NAMES) >= {"bool", "float16", "complex128"}


# -- the toy plugin, through the contract --------------------------------------------------------


def test_toy_kernels_decline_bfloat16_to_the_cpu_fallback():
    from plait_toy_device import _runtime

    a = torch.tensor([1.0, 2.0], device="toy")
    before = _runtime.CALLS["add"]
    assert (a + a).tolist() == [2.0, 4.0]
    assert _runtime.CALLS["add"] == before + 1
    b = a.to(torch.bfloat16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fallback's one-time warning
        c = b + b
    assert c.device.type == "toy" and c.dtype == torch.bfloat16 and c.tolist() == [2.0, 4.0]
    assert _runtime.CALLS["add"] == before + 1  # declined: the toy kernel did not add


# -- torch.<device>: synchronize, generators, index checks -------------------------------------


def test_synchronize_checks_the_index_then_calls_the_hook():
    from plait_toy_device import _runtime

    n = len(_runtime.SYNCS)
    torch.toy.synchronize()
    torch.toy.synchronize("toy:1")
    assert _runtime.SYNCS[n:] == [0, 1]
    with pytest.raises(RuntimeError, match="index 2"):
        torch.toy.synchronize(2)
    assert _runtime.SYNCS[n:] == [0, 1]  # the backend never saw index 2


def test_indices_are_checked_before_the_allocator_sees_them():
    from plait_toy_device import _runtime

    n = len(_runtime.ALLOCATIONS)
    with pytest.raises(RuntimeError, match="Invalid device index 2 for device type 'toy'"):
        torch.zeros(2, device="toy:2")
    with pytest.raises(RuntimeError, match="Invalid device index 5"):
        torch.UntypedStorage(4, device="toy:5")
    assert _runtime.ALLOCATIONS[n:] == []


def test_device_generators_are_cores_and_public():
    g = torch.Generator(device="toy")
    assert g.device == torch.device("toy", 0)
    torch.toy.manual_seed(1234)
    assert torch.toy.initial_seed() == 1234
    state = torch.toy.get_rng_state()
    assert state.dtype == torch.uint8 and bytes(state[:8].tolist()) == (1234).to_bytes(8, "little")
    torch.toy.manual_seed_all(77)
    assert [int.from_bytes(bytes(s[:8].tolist()), "little")
            for s in torch.toy.get_rng_state_all()] == [77, 77]
    torch.manual_seed(5)
    assert torch.toy.initial_seed() == 5


def test_manual_seed_reaches_devices_whose_module_was_never_touched():
    out = run_json("""
        import json, sys, torch
        torch.manual_seed(99)
        untouched = "plait_toy_device.device_module" not in sys.modules
        print(json.dumps([untouched, torch.toy.initial_seed(), torch.xpu.initial_seed()]))
    """)
    assert out == [True, 99, 99]


def test_tensor_and_module_methods_for_plugin_devices():
    t = torch.tensor([1.0, 2.0])
    moved = t.toy(1)
    assert moved.device == torch.device("toy", 1) and moved.is_toy and not t.is_toy
    assert t.toy().device == torch.device("toy", 0)
    assert moved.toy(1) is moved
    with pytest.raises(RuntimeError, match="must be toy device"):
        t.toy("cpu")
    assert t.is_xpu is False and t.is_mps is False
    lin = torch.nn.Linear(2, 2).toy()
    assert lin.weight.device.type == "toy" and isinstance(lin.weight, torch.nn.Parameter)


def test_skipped_plugins_device_module_raises_the_devices_error():
    out = run_json("""
        import json, torch
        res = {"available": torch.toy.is_available(), "count": torch.toy.device_count()}
        for name, call in (("current", lambda: torch.toy.current_device()),
                           ("sync", lambda: torch.toy.synchronize()),
                           ("other", lambda: torch.toy.memory_stats()),
                           ("tensor", lambda: torch.empty(1, device="toy")),
                           ("method", lambda: torch.ones(1).toy())):
            try:
                call()
                res[name] = None
            except RuntimeError as e:
                res[name] = str(e)
        print(json.dumps(res))
    """, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "cpu"})
    assert out["available"] is False and out["count"] == 0
    assert out["tensor"] and "TORCH_DEVICE_BACKEND_AUTOLOAD" in out["tensor"]
    for name in ("current", "sync", "other", "method"):
        assert out[name] == out["tensor"], name


def test_unknown_autoload_name_warns():
    proc = run_python("""
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import torch
        print([str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)])
    """, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "cpu,toyy"})
    assert "'toyy'" in proc.stdout and "no installed backend plugin" in proc.stdout
    quiet = run_python("""
        import warnings
        warnings.simplefilter("error")
        import torch
    """, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "cpu,toy"})
    assert quiet.returncode == 0


HOST_PLUGIN = '''
import numpy as np
import pluggy

hookimpl = pluggy.HookimplMarker("torch")


class Allocator:
    def allocate(self, nbytes, device_index):
        return np.zeros(nbytes, np.uint8)

    def data_ptr(self, handle):
        return handle.ctypes.data

    def host_buffer(self, handle):
        return handle


@hookimpl
def torch_backend_info(device_type):
    from torch.backends.hookspecs import BackendInfo

    return BackendInfo(device_type="hostdev", distribution="hostdev",
                       capabilities={"host_accessible", "float64"})


@hookimpl
def torch_backend_allocator(device_type):
    return Allocator()
'''


def test_host_accessible_device_reaches_the_host_beside_the_cpu_backend(tmp_path):
    info = tmp_path / "hostdev-0.1.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text("[torch.backends]\nhostdev = hostdev_plugin\n")
    (tmp_path / "hostdev_plugin.py").write_text(HOST_PLUGIN)
    out = run_json("""
        import json, warnings, torch
        warnings.simplefilter("ignore")
        t = torch.tensor([1.0, 2.0, 3.0]).to("hostdev")
        print(json.dumps([t.device.type, t.cpu().tolist(), t.cpu().numpy().tolist(),
                          (t * 2).cpu().tolist()]))
    """, extra_path=str(tmp_path))
    assert out == ["hostdev", [1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]


def test_hookspec_docstrings_name_things_that_exist():
    from torch.backends import hookspecs

    text = json.dumps([hookspecs.__doc__] + [getattr(hookspecs, n).__doc__ or ""
                                             for n in dir(hookspecs)
                                             if n.startswith("torch_backend_")])
    assert "torch._core.prims" not in text and "_register_device_module" not in text
    assert "DESIGN.md" not in text
    assert "contract.schema" in text and "may_decline" in text


def test_failed_plugins_device_module_raises_the_devices_error(tmp_path):
    info = tmp_path / "crashdev-0.1.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text("[torch.backends]\ncrashdev = crashdev_plugin\n")
    (tmp_path / "crashdev_plugin.py").write_text("raise ImportError('libcrash.so.1')\n")
    out = run_json("""
        import json, warnings
        warnings.simplefilter("ignore")
        import torch
        res = {"available": torch.crashdev.is_available()}
        for name, call in (("sync", lambda: torch.crashdev.synchronize()),
                           ("seed_state", lambda: torch.crashdev.get_rng_state()),
                           ("tensor", lambda: torch.empty(1, device="crashdev"))):
            try:
                call()
                res[name] = None
            except RuntimeError as e:
                res[name] = str(e)
        print(json.dumps(res))
    """, extra_path=str(tmp_path))
    assert out["available"] is False
    assert "failed to load" in out["tensor"] and "libcrash.so.1" in out["tensor"]
    assert out["sync"] == out["seed_state"] == out["tensor"]
