"""Compare what ``nn_collect.py`` recorded under Plait and under PyTorch (modules, losses,
optimizer and scheduler trajectories, checkpoints resumed across the two)."""

from __future__ import annotations

import pathlib
import pickle
import subprocess
import sys
from typing import Any

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
RTOL, ATOL = 1e-6, 1e-9  # float64 throughout; trajectories accumulate rounding over 20 steps
HALF = 10  # nn_collect.STEPS // 2: where the checkpoints are taken


def collect(python: str, out: pathlib.Path, *extra: str) -> dict[str, Any]:
    proc = subprocess.run([python, str(HERE / "nn_collect.py"), str(out), *extra],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"nn_collect under {python} failed:\n{proc.stdout}\n{proc.stderr}")
    with open(out, "rb") as f:
        return pickle.load(f)


def _same(a: Any, b: Any, where: str) -> str | None:
    if isinstance(a, tuple) and a and a[0] == "tensor":
        if not (isinstance(b, tuple) and b and b[0] == "tensor"):
            return f"{where}: tensor vs {b!r:.60}"
        if a[1] != b[1] or tuple(a[2]) != tuple(b[2]):
            return f"{where}: {a[1]}{list(a[2])} vs {b[1]}{list(b[2])}"
        x, y = np.array(a[3], dtype=float), np.array(b[3], dtype=float)
        if not np.allclose(x, y, rtol=RTOL, atol=ATOL, equal_nan=True):
            err = np.nanmax(np.abs(x - y)) if x.size else 0.0
            return f"{where}: values differ (max abs diff {err:.3g})"
        return None
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and not (
            a and a[0] == "value"):
        for i, (p, q) in enumerate(zip(a, b)):
            why = _same(p, q, f"{where}[{i}]")
            if why:
                return why
        return None
    return None if a == b else f"{where}: {a!r:.60} vs {b!r:.60}"


def _compare_record(mine: dict[str, Any], ref: dict[str, Any]) -> tuple[str, str]:
    """(status, detail) of one module/loss: passed, failed or unavailable."""
    if mine["status"] == "unavailable":
        return "unavailable", mine["error"]
    if ref["status"] != "ok" or mine["status"] != "ok":
        if ref["status"] == mine["status"] == "raised":
            return "passed", "both raise"
        return "failed", f"Plait {mine.get('error', 'ok')} / PyTorch {ref.get('error', 'ok')}"
    for part in ("output",):
        why = _same(mine[part], ref[part], part)
        if why:
            return "failed", why
    for part in ("grads", "buffers"):
        a, b = mine.get(part, {}), ref.get(part, {})
        if set(a) != set(b):
            return "failed", f"{part}: keys {sorted(a)} vs {sorted(b)}"
        for key in a:
            why = _same(a[key], b[key], f"{part}[{key}]")
            if why:
                return "failed", why
    return "passed", ""


def _compare_trajectory(mine: dict[str, Any], ref: dict[str, Any],
                        offset: int = 0) -> tuple[str, str]:
    if mine["status"] == "unavailable":
        return "unavailable", mine["error"]
    if mine["status"] != "ok" or ref["status"] != "ok":
        return "failed", f"Plait {mine.get('error', 'ok')} / PyTorch {ref.get('error', 'ok')}"
    steps = ref["trajectory"][offset:]
    if len(mine["trajectory"]) != len(steps):
        return "failed", f"{len(mine['trajectory'])} steps vs {len(steps)}"
    for i, (a, b) in enumerate(zip(mine["trajectory"], steps)):
        if not np.allclose(a["lr"], b["lr"], rtol=1e-9, atol=0):
            return "failed", f"step {i + offset + 1}: lr {a['lr']} vs {b['lr']}"
        for j, (p, q) in enumerate(zip(a["params"], b["params"])):
            why = _same(p, q, f"step {i + offset + 1} param {j}")
            if why:
                return "failed", why
    return "passed", ""


def compare(mine: dict[str, Any], ref: dict[str, Any], ref_resumed: dict[str, Any]
            ) -> list[tuple[str, str, str, str]]:
    """Rows (kind, name, status, detail)."""
    rows = []
    for kind in ("modules", "losses"):
        for name, record in ref[kind].items():
            status, detail = _compare_record(mine[kind][name], record)
            rows.append((kind[:-1], name, status, detail))
    for name, record in ref["optimizers"].items():
        status, detail = _compare_trajectory(mine["optimizers"][name], record)
        kind = "scheduler" if "+" in name else "optimizer"
        rows.append((kind, name, status, detail))
    half = HALF
    for name, record in ref["optimizers"].items():
        # Plait resumed from PyTorch's mid-training checkpoint, against PyTorch's own run.
        got = mine["resumed"].get(name)
        if got is not None:
            status, detail = _compare_trajectory(got, record, offset=half)
            rows.append(("checkpoint PyTorch -> Plait", name, status, detail))
        # PyTorch resumed from Plait's checkpoint, against PyTorch's own run.
        got = ref_resumed.get(name)
        if got is not None:
            if mine["optimizers"][name]["status"] == "unavailable":
                continue
            status, detail = _compare_trajectory(
                {**got, "status": got["status"]}, record, offset=half)
            rows.append(("checkpoint Plait -> PyTorch", name, status, detail))
    return rows


def run(reference_python: str, work: pathlib.Path) -> list[tuple[str, str, str, str]]:
    """Collect under both libraries (with checkpoints crossing) and compare."""
    ref = collect(reference_python, work / "ref_nn.pickle", "--save-dir", str(_dir(work, "r")))
    mine = collect(sys.executable, work / "mine_nn.pickle", "--save-dir", str(_dir(work, "m")),
                   "--load-dir", str(work / "r"))
    again = collect(reference_python, work / "ref_nn2.pickle", "--load-dir", str(work / "m"))
    return compare(mine, ref, again["resumed"])


def _dir(work: pathlib.Path, name: str) -> pathlib.Path:
    path = work / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def report(rows: list[tuple[str, str, str, str]]) -> list[str]:
    """Markdown lines for parity.md."""
    counts: dict[str, list[int]] = {}
    for kind, _, status, _ in rows:
        c = counts.setdefault(kind, [0, 0, 0])
        c[("passed", "failed", "unavailable").index(status)] += 1
    lines = ["", "## Modules, losses, optimizers, schedulers, checkpoints", "",
             "Each module runs in float64 with weights, buffers, inputs and backward seeds from "
             "numpy (identical on both sides); outputs, input and parameter gradients and "
             "floating buffers are compared (rtol 1e-6). Optimizers and schedulers run 20 steps "
             "of one small problem; every step's parameters and learning rates are compared. "
             "Checkpoints: each library saves model, optimizer and scheduler state after 10 "
             "steps, the other loads it and trains the last 10, compared with PyTorch's own "
             "run. *Unavailable*: the layer or optimizer does not exist in Plait yet.", "",
             "| kind | passed | failed | unavailable |", "|---|---|---|---|"]
    lines += [f"| {k} | {c[0]} | {c[1]} | {c[2]} |" for k, c in counts.items()]
    bad = [r for r in rows if r[2] != "passed"]
    if bad:
        lines += ["", "| kind | name | status | detail |", "|---|---|---|---|"]
        lines += [f"| {k} | `{n}` | {s} | {d.replace('|', '/')[:200]} |" for k, n, s, d in bad]
    return lines
