"""Shared fixtures: running Python in a fresh process with a chosen environment; the
dispatcher's plans switched off."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest


def run_python(code: str, env: dict[str, str] | None = None, extra_path: str | None = None,
               check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter of this environment."""
    full_env = {k: v for k, v in os.environ.items() if k != "TORCH_DEVICE_BACKEND_AUTOLOAD"}
    full_env.update(env or {})
    if extra_path:
        full_env["PYTHONPATH"] = os.pathsep.join(
            p for p in (extra_path, full_env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env,
                          capture_output=True, text=True, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"subprocess failed ({proc.returncode}):\n{proc.stdout}\n"
                             f"{proc.stderr}")
    return proc


def run_json(code: str, **kwargs: Any) -> Any:
    """Run ``code``, which must print one JSON document as its last line; return it."""
    proc = run_python(code, **kwargs)
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def broken_plugin_site() -> str:
    """A folder holding the installed plait-broken-device plugin (nox puts it there)."""
    site = os.environ.get("PLAIT_BROKEN_PLUGIN_SITE")
    if not site or not os.path.isdir(site):
        pytest.skip("PLAIT_BROKEN_PLUGIN_SITE is not set: run the suite with `nox -s tests`, "
                    "which installs the failing test plugin there")
    return site


def row_ids(rows: list[Any]) -> list[str]:
    """Test ids for op-database rows: the row's name, numbered from the second row that shares
    it (``"sum"``, ``"sum#2"``)."""
    seen: dict[str, int] = {}
    out = []
    for row in rows:
        seen[row.name] = seen.get(row.name, 0) + 1
        out.append(row.name if seen[row.name] == 1 else f"{row.name}#{seen[row.name]}")
    return out


@pytest.fixture
def no_plans(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A switch: ``no_plans()`` is a context in which every call takes the dispatcher's
    generic path (the reference the plan tests compare with)."""
    from torch._core import dispatch

    @contextlib.contextmanager
    def off() -> Any:
        with monkeypatch.context() as m:
            m.setattr(dispatch, "plan_call", dispatch._no_plan)
            yield

    return off


@pytest.fixture(scope="module")
def xpu_all_devices() -> Any:
    """Count CPU OpenCL devices (PoCL) as xpu devices for a test module, and put the default
    back after it (``pytestmark = pytest.mark.usefixtures("xpu_all_devices")``)."""
    from plait_backend_xpu import device_module

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PLAIT_XPU_DEVICE_TYPE", "all")
        device_module.refresh()
        yield
    device_module.refresh()
