"""Compare what ``nn_collect.py`` recorded under Plait and under PyTorch (modules, losses,
optimizer and scheduler trajectories, checkpoints resumed across the two)."""

from __future__ import annotations

import ast
import pathlib
import pickle
import re
import subprocess
import sys
from typing import Any

import numpy as np
from nn_cases import ERRORS, FUNCTIONS, GG_NOT_COMPARED, GRAD_NOT_COMPARED, LOSSES, MODULES

HERE = pathlib.Path(__file__).resolve().parent
RTOL, ATOL = 1e-6, 1e-9  # float64 throughout; trajectories accumulate rounding over 20 steps
# (rtol, atol, scale): |a - b| <= atol + scale * max|b| + rtol * |b|, elementwise. The
# float32 re-runs get an atol that scales with the tensor's largest magnitude: their rounding
# differences (long sums in a different order) are of the same size as PyTorch's own float32
# error against its float64 result.
F64_TOL = (RTOL, ATOL, 0.0)
F32_TOL = (1e-4, 1e-5, 2e-4)
GG_TOL = (1e-5, 1e-8, 0.0)  # second derivatives (float64)
HALF_TOL = {"float16": (2e-3, 1e-3, 2e-3), "bfloat16": (1.6e-2, 1e-2, 1.6e-2)}
HALF = 10  # nn_collect.STEPS // 2: where the checkpoints are taken


def collect(python: str, out: pathlib.Path, *extra: str) -> dict[str, Any]:
    proc = subprocess.run([python, str(HERE / "nn_collect.py"), str(out), *extra],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"nn_collect under {python} failed:\n{proc.stdout}\n{proc.stderr}")
    with open(out, "rb") as f:
        return pickle.load(f)


def _same(a: Any, b: Any, where: str, tol: tuple[float, float, float] = F64_TOL
          ) -> str | None:
    if isinstance(a, tuple) and a and a[0] == "tensor":
        if not (isinstance(b, tuple) and b and b[0] == "tensor"):
            return f"{where}: tensor vs {b!r:.60}"
        if a[1] != b[1] or tuple(a[2]) != tuple(b[2]):
            return f"{where}: {a[1]}{list(a[2])} vs {b[1]}{list(b[2])}"
        x, y = np.array(a[3], dtype=float), np.array(b[3], dtype=float)
        finite = np.abs(y[np.isfinite(y)])
        if a[1] in HALF_TOL:  # half-precision results: about one rounding step apart
            tol = tuple(max(t, h) for t, h in zip(tol, HALF_TOL[a[1]]))
        atol = tol[1] + tol[2] * (finite.max() if finite.size else 0.0)
        if not np.allclose(x, y, rtol=tol[0], atol=atol, equal_nan=True):
            nan = np.isnan(x) != np.isnan(y)
            if nan.any():
                return f"{where}: NaN at {int(nan.sum())} place(s) in one library only"
            diff = np.abs(x - y)[~np.isnan(x)]
            return f"{where}: values differ (max abs diff {diff.max() if diff.size else 0:.3g})"
        return None
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and not (
            a and a[0] == "value"):
        for i, (p, q) in enumerate(zip(a, b)):
            why = _same(p, q, f"{where}[{i}]", tol)
            if why:
                return why
        return None
    return None if a == b else f"{where}: {a!r:.60} vs {b!r:.60}"


def _compare_record(mine: dict[str, Any], ref: dict[str, Any],
                    tol: tuple[float, float, float] = F64_TOL,
                    skip: tuple[str, ...] = ()) -> tuple[str, str]:
    """(status, detail) of one module/loss: passed, failed or unavailable; the parts named in
    ``skip`` are not compared."""
    if mine["status"] == "unavailable":
        return "unavailable", mine["error"]
    if ref["status"] != "ok" or mine["status"] != "ok":
        if ref["status"] == mine["status"] == "raised":
            return "passed", "both raise"
        return "failed", f"Plait {mine.get('error', 'ok')} / PyTorch {ref.get('error', 'ok')}"
    for part in ("state_dict", "output"):
        if part in ref:
            why = _same(mine.get(part), ref[part], part, tol)
            if why:
                return "failed", why
    for part in ("grads", "buffers", "params_after"):
        if part in skip:
            continue
        a, b = mine.get(part, {}), ref.get(part, {})
        if set(a) != set(b):
            return "failed", f"{part}: keys {sorted(a)} vs {sorted(b)}"
        for key in a:
            why = _same(a[key], b[key], f"{part}[{key}]", tol)
            if why:
                return "failed", why
    return "passed", ""


def _compare_error(mine: dict[str, Any], ref: dict[str, Any]) -> tuple[str, str]:
    """An invalid call: both must raise (at construction or call), with the same error type."""
    if ref["status"] == "ok" and mine["status"] == "ok":
        return _compare_record(mine, ref)
    if ref["status"] == "ok" or mine["status"] == "ok":
        return "failed", f"Plait {mine.get('error', 'ok')} / PyTorch {ref.get('error', 'ok')}"
    if mine["error_type"] != ref["error_type"]:
        return "failed", (f"error types differ: Plait {mine['error'][:120]} / PyTorch "
                          f"{ref['error'][:120]}")
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
    for kind, label in (("modules", "module"), ("losses", "loss"), ("functions", "function")):
        for suffix, tol in (("", F64_TOL), ("_f32", F32_TOL)):
            for name, record in ref.get(kind + suffix, {}).items():
                got = mine.get(kind + suffix, {}).get(name)
                where = label + (" (float32)" if suffix else "")
                if got is None:
                    rows.append((where, name, "failed", "not collected under Plait"))
                    continue
                skip = ("grads",) if name in GRAD_NOT_COMPARED else ()
                status, detail = _compare_record(got, record, tol, skip)
                rows.append((where, name, status, detail))
    for kind, label in (("modules", "module"), ("losses", "loss"), ("functions", "function")):
        for name, record in ref.get(kind + "_gg", {}).items():
            got = mine.get(kind + "_gg", {}).get(name)
            where = label + " (double backward)"
            if got is None:
                rows.append((where, name, "failed", "not collected under Plait"))
            elif name in GG_NOT_COMPARED:
                continue
            elif record["status"] == "ok" or got["status"] != "ok":
                # (PyTorch refusing a second derivative that Plait computes is not compared)
                rows.append((where, name, *_compare_record(got, record, GG_TOL)))
    for name, sig in ref.get("signatures", {}).items():
        got = mine.get("signatures", {}).get(name, "missing")
        if sig is None or got is None or all(
                kind.startswith("VAR_") or pname == "self"
                for pname, kind, _ in ast.literal_eval(sig)):
            continue  # no Python signature (C functions, boolean dispatch, Parameter.__new__)
        if got == "missing":
            rows.append(("signature", name, "unavailable", "not in Plait"))
            continue
        rows.append(("signature", name, "passed" if got == sig else "failed",
                     "" if got == sig else f"{got} vs {sig}"))
    for name, record in ref.get("errors", {}).items():
        got = mine.get("errors", {}).get(name)
        rows.append(("error", name, *_compare_error(got, record)) if got is not None else
                    ("error", name, "failed", "not collected under Plait"))
    for name, record in ref.get("modules", {}).items():
        got = mine.get("modules", {}).get(name, {})
        if "repr" in record and got.get("status") == "unavailable":
            rows.append(("module repr", name, "unavailable", got["error"]))
        elif "repr" in record and "repr" in got:
            same = got["repr"] == record["repr"]
            rows.append(("module repr", name, "passed" if same else "failed",
                         "" if same else f"{got['repr']!r} vs {record['repr']!r}"))
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


def coverage() -> tuple[list[str], list[str]]:
    """The distinct ``nn`` classes and ``nn.functional`` functions the cases call."""
    exprs = [e for table in (MODULES, LOSSES, FUNCTIONS, ERRORS) for case in table.values()
             for e in case[:2] if e]
    classes = sorted({m for e in exprs for m in re.findall(r"\bnn\.([A-Z]\w*)\(", e)})
    functions = sorted({f for e in exprs for f in re.findall(r"\bF\.(\w+)\(", e)})
    return classes, functions


def report(rows: list[tuple[str, str, str, str]]) -> list[str]:
    """Markdown lines for parity.md."""
    counts: dict[str, list[int]] = {}
    for kind, _, status, _ in rows:
        c = counts.setdefault(kind, [0, 0, 0])
        c[("passed", "failed", "unavailable").index(status)] += 1
    classes, functions = coverage()
    lines = ["", "## Modules, losses, functions, optimizers, schedulers, checkpoints", "",
             f"{len(MODULES)} module cases, {len(LOSSES)} loss cases (every loss with every "
             f"reduction, plus options), {len(FUNCTIONS)} `nn.functional` cases and "
             f"{len(ERRORS)} invalid calls (`benchmarks/parity/nn_cases.py`), over "
             f"{len(classes)} distinct `nn` classes and {len(functions)} distinct "
             "`nn.functional` functions. Each case runs in float64 with weights, buffers, "
             "inputs and backward seeds from numpy (identical on both sides); the state-dict "
             "layout, outputs, input and parameter gradients, and every buffer and parameter "
             "after the forward (running statistics, max_norm renormalisation) are compared "
             "(rtol 1e-6, atol 1e-9); both raising counts as a match. Each case runs again in "
             "float32 (rtol 1e-4, atol 1e-5 + 2e-4 x the tensor's largest magnitude: catches "
             "dtype slips, not rounding) and once more for second "
             "derivatives (the gradient of a weighted sum of the first gradients, taken with "
             "`create_graph=True`; rtol 1e-5); module reprs must be identical, and so must the "
             "parameter names, kinds and defaults of each class's `__init__` and `forward` "
             "and of each function (where PyTorch's has a Python signature); invalid calls "
             "must raise the same error type in both. Optimizers and schedulers run 20 steps "
             "of one small problem; every step's parameters and learning rates are compared. "
             "Checkpoints: each library saves model, optimizer and scheduler state after 10 "
             "steps, the other loads it and trains the last 10, compared with PyTorch's own "
             "run. *Unavailable*: the layer or optimizer does not exist in Plait yet.", "",
             "| kind | passed | failed | unavailable |", "|---|---|---|---|"]
    lines += [f"| {k} | {c[0]} | {c[1]} | {c[2]} |" for k, c in counts.items()]
    total = [sum(c[i] for c in counts.values()) for i in range(3)]
    lines.append(f"| **all** | **{total[0]}** | **{total[1]}** | **{total[2]}** |")
    bad = [r for r in rows if r[2] != "passed"]
    if bad:
        lines += ["", "| kind | name | status | detail |", "|---|---|---|---|"]
        lines += [f"| {k} | `{n}` | {s} | {d.replace('|', '/')[:200]} |" for k, n, s, d in bad]
    lines += ["", "First derivatives not compared (the outputs are):", ""]
    lines += [f"- `{name}`: {why}" for name, why in GRAD_NOT_COMPARED.items()]
    lines += ["", "Second derivatives not compared:", ""]
    lines += [f"- `{name}`: {why}" for name, why in GG_NOT_COMPARED.items()]
    lines += ["", "Classes covered: " + ", ".join(f"`{c}`" for c in classes) + ".", "",
              "Functions covered: " + ", ".join(f"`{f}`" for f in functions) + "."]
    return lines
