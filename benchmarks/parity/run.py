"""Parity with real PyTorch: the op database, printing and checkpoints, compared.

``python benchmarks/parity/run.py --reference-python /path/to/venv-with-torch/bin/python``
(``nox -s parity`` does this). Runs ``collect.py`` under this interpreter's torch (Plait) and
under the reference interpreter's (PyTorch 2.13), compares what came out with Plait's
``torch.testing.assert_close`` semantics, prints a coverage table and a last line
``N passed, M failed``, writes ``benchmarks/results/parity.md`` and exits non-zero on any
mismatch.

What counts as a match, per sample of an op row and dtype: both raise an exception of the same
built-in category (``TypeError``, ``RuntimeError``, ``IndexError``...), or both return results
of the same structure whose tensors agree in dtype, shape (strides too for ``view`` rows) and
values within the row's tolerances (``assert_close``'s defaults when the row gives none); rows
marked ``random`` compare dtype and shape only. Printing samples compare ``repr()`` exactly.
The checkpoint round trip saves with each library and loads with the other. The meta-device and
fake-tensor sections (``layout_collect.py``, ``layout_compare.py``) run every sample on meta
inputs and under ``FakeTensorMode`` and compare result layouts (no values). The ``compat``
section (``compat_compare.py``) calls every public name of ``compat_table.txt`` in both, prints
its own summary line (``N of M names exist, K agree``) and writes ``benchmarks/results/
compat.md``; it is a measure of the surface and does not count towards the pass/fail total.
``--sections`` runs a subset while working on one part.
"""

from __future__ import annotations

import argparse
import datetime
import pathlib
import pickle
import platform
import subprocess
import sys
import tempfile
from collections import defaultdict
from typing import Any

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"
sys.path.insert(0, str(HERE))

import collect  # noqa: E402  (beside this file)
import compat_compare  # noqa: E402
import layout_compare  # noqa: E402
import nn_compare  # noqa: E402

MAX_DETAILS = 60
SECTIONS = (*collect.SECTIONS, "nn", "compat")  # the checkpoint round trip always runs


def run_collect(python: str, label: str, out: pathlib.Path, *extra: str) -> dict[str, Any]:
    cmd = [python, str(HERE / "collect.py"), str(out), "--library", label, *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"collecting under {label} ({python}) failed:\n{proc.stdout}\n"
                         f"{proc.stderr}")
    with open(out, "rb") as f:
        return pickle.load(f)


# -- comparing ---------------------------------------------------------------------------------

_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5),
               "complex128": (1e-7, 1e-7)}


def _values(record: dict[str, Any]) -> np.ndarray:
    dtype, shape, data = record["values"]
    return np.array(data, dtype=np.dtype(dtype)).reshape(shape)


def compare_results(mine: Any, ref: Any, tol: tuple[float, float] | None, random: bool,
                    where: str = "result") -> str | None:
    """Why two encoded results differ, or None when they match."""
    from torch.testing import assert_close

    if mine["kind"] != ref["kind"]:
        return f"{where}: {_kind(mine)} != {_kind(ref)} (Plait != PyTorch)"
    kind = ref["kind"]
    if kind in ("tuple", "list"):
        if len(mine["items"]) != len(ref["items"]):
            return f"{where}: {len(mine['items'])} items != {len(ref['items'])}"
        for i, (a, b) in enumerate(zip(mine["items"], ref["items"])):
            why = compare_results(a, b, tol, random, f"{where}[{i}]")
            if why:
                return why
        return None
    if kind == "dict":
        if sorted(mine["items"]) != sorted(ref["items"]):
            return f"{where}: keys {sorted(mine['items'])} != {sorted(ref['items'])}"
        for key in ref["items"]:
            why = compare_results(mine["items"][key], ref["items"][key], tol, random,
                                  f"{where}[{key!r}]")
            if why:
                return why
        return None
    if kind == "scalar":
        if mine["type"] != ref["type"]:
            return f"{where}: a {mine['type']} != a {ref['type']}"
        if random:
            return None
        a, b = mine["value"], ref["value"]
        if isinstance(b, (int, float, complex)) and not isinstance(b, bool):
            try:
                assert_close(a, b, equal_nan=True, check_dtype=False)
            except (AssertionError, TypeError) as exc:
                return f"{where}: {a!r} != {b!r}: {exc}"
        elif a != b:  # bools, None, dtypes (by name), sizes
            return f"{where}: {a!r} != {b!r}"
        return None
    if kind == "other":
        if mine["type"] != ref["type"] or (not random and mine["repr"] != ref["repr"]):
            return f"{where}: {mine['type']} {mine['repr']} != {ref['type']} {ref['repr']}"
        return None
    # tensors
    for attr in ("dtype", "shape", "stride"):
        if attr in ref and mine.get(attr) != ref[attr]:
            return f"{where}: {attr} {mine.get(attr)} != {ref[attr]}"
    if random or "values" not in ref or "values" not in mine:
        return None
    if isinstance(tol, dict):  # per-dtype overrides of the row (OpInfo.dtype_tol)
        tol = tol.get(ref["dtype"], tol.get(None))
    rtol, atol = tol if tol is not None else _TOLERANCES.get(ref["dtype"], (0.0, 0.0))
    try:
        assert_close(_values(mine), _values(ref), rtol=rtol, atol=atol, equal_nan=True,
                     check_dtype=False)
    except AssertionError as exc:
        return f"{where}: values differ (Plait vs PyTorch): {exc}"
    return None


def _kind(record: dict[str, Any]) -> str:
    return record.get("type", record["kind"])


def compare_outcomes(mine: dict[str, Any] | None, ref: dict[str, Any] | None,
                     row: Any) -> str | None:
    if mine is None or ref is None:
        side = "Plait" if mine is None else "PyTorch"
        return f"no outcome under {side} (its sample list is shorter)"
    if mine["status"] == "raised" and ref["status"] == "raised":
        if mine["category"] == ref["category"]:
            return None
        return (f"both raised, differently: Plait {mine['type']}: {mine['message']} / "
                f"PyTorch {ref['type']}: {ref['message']}")
    if mine["status"] != "ok":
        return f"Plait raised {mine['type']}: {mine['message']}"
    if ref["status"] != "ok":
        return f"PyTorch raised {ref['type']}: {ref['message']}, Plait returned {mine['repr']}"
    tol: Any = None
    if row is not None and (row.atol is not None or row.rtol is not None):
        tol = (row.rtol or 0.0, row.atol or 0.0)
    if row is not None and getattr(row, "dtype_tol", ()):
        tol = {None: tol, **{dt: (rtol, atol) for dt, atol, rtol in row.dtype_tol}}
    return compare_results(mine["result"], ref["result"], tol, bool(row and row.random))


def row_table(opdb: Any) -> dict[str, Any]:
    rows, seen = {}, defaultdict(int)
    for row in opdb.load():
        seen[row.name] += 1
        rows[row.name if seen[row.name] == 1 else f"{row.name}#{seen[row.name]}"] = row
    return rows


def compare_ops(mine: dict[Any, Any], ref: dict[Any, Any], rows: dict[str, Any]
                ) -> tuple[dict[str, list[int]], list[tuple[str, str, str, str]]]:
    """Per op [samples, passed, failed], and the mismatches (op, dtype, sample, why)."""
    table: dict[str, list[int]] = {}
    failures = []
    order = {name: i for i, name in enumerate(rows)}
    for key in sorted(set(mine) | set(ref), key=lambda k: (order.get(k[0], len(order)), k)):
        op, dtype, _ = key
        why = compare_outcomes(mine.get(key), ref.get(key), rows.get(op))
        counts = table.setdefault(op, [0, 0, 0])
        counts[0] += 1
        counts[1 if why is None else 2] += 1
        if why is not None:
            name = (mine.get(key) or ref.get(key) or {}).get("name", "?")
            failures.append((op, dtype, name, why))
    return table, failures


def compare_printing(mine: dict[str, Any], ref: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(expression, status, detail) for every printing sample."""
    out = []
    for expr in ref:
        a, b = mine.get(expr, {"status": "missing"}), ref[expr]
        if a["status"] == "unavailable":
            out.append((expr, "not available", "Plait lacks what the expression needs"))
        elif a["status"] != "ok" or b["status"] != "ok":
            detail = a.get("message") or b.get("message") or ""
            out.append((expr, "failed", f"Plait: {a['status']}, PyTorch: {b['status']}: "
                                        f"{detail}"))
        elif a["repr"] != b["repr"]:
            out.append((expr, "failed", f"Plait:\n{a['repr']}\nPyTorch:\n{b['repr']}"))
        else:
            out.append((expr, "passed", ""))
    return out


def compare_checkpoints(mine: dict[str, Any], ref: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(direction, status, detail) for the two directions of the round trip."""
    if mine["status"] == "unavailable":
        return [("Plait <-> PyTorch", "not available", "Plait has no torch.save/torch.load")]
    out = []
    for direction, loader, saver in (("PyTorch saves, Plait loads", mine, ref),
                                     ("Plait saves, PyTorch loads", ref, mine)):
        if "save_error" in saver:
            out.append((direction, "failed", "save: " + saver["save_error"]))
        elif "load_error" in loader or "loaded" not in loader:
            out.append((direction, "failed", "load: " + loader.get("load_error", "nothing")))
        else:
            why = compare_results(loader["loaded"], saver["expected"], None, False, "checkpoint")
            out.append((direction, "passed" if why is None else "failed", why or ""))
    return out


# -- reporting ---------------------------------------------------------------------------------


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_report(path: pathlib.Path, mine: dict[str, Any], ref: dict[str, Any],
                 table: dict[str, list[int]], failures: list[Any], printing: list[Any],
                 checkpoints: list[Any], totals: tuple[int, int],
                 grads: tuple[dict[str, list[int]], list[Any], dict[str, Any]],
                 nn_lines: list[str] = (),
                 layouts: dict[str, tuple[dict[str, list[int]], list[Any]]] | None = None
                 ) -> None:
    passed, failed = totals
    grad_table, grad_failures, grad_ops = grads
    lines = [
        "# Parity with PyTorch",
        "",
        f"Generated by `nox -s parity` on {datetime.date.today()} ({platform.machine()}, "
        f"Python {platform.python_version()}): Plait {mine['version']} against PyTorch "
        f"{ref['version']}. Collection took {mine['seconds']:.1f} s under Plait and "
        f"{ref['seconds']:.1f} s under PyTorch.",
        "",
        "## Summary",
        "",
        "| part | passed | failed |",
        "|---|---|---|",
        f"| op database ({len(table)} rows) | {sum(c[1] for c in table.values())} | "
        f"{sum(c[2] for c in table.values())} |",
        f"| printing ({len(printing)} samples, "
        f"{sum(s == 'not available' for _, s, _ in printing)} not available) | "
        f"{sum(s == 'passed' for _, s, _ in printing)} | "
        f"{sum(s == 'failed' for _, s, _ in printing)} |",
        f"| checkpoint round trip | {sum(s == 'passed' for _, s, _ in checkpoints)} | "
        f"{sum(s == 'failed' for _, s, _ in checkpoints)} |",
        f"| gradients (float64 samples; {len(grad_ops)} ops differentiable in PyTorch) | "
        f"{sum(c[1] for c in grad_table.values())} | {sum(c[2] for c in grad_table.values())} |",
        *(f"| op database on {layout_compare.SECTIONS[section]} ({len(t)} rows) | "
          f"{sum(c[1] for c in t.values())} | {len(f)} |"
          for section, (t, f) in (layouts or {}).items()),
        f"| **total** | **{passed}** | **{failed}** |",
        "",
        "A sample passes when both libraries raise the same kind of error, or return results of "
        "the same structure, dtypes and shapes (strides for view ops) with values within the "
        "row's tolerances (random ops: dtype and shape only).",
        "",
        "## Per op",
        "",
        "| op | samples | passed | failed |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{op}` | {c[0]} | {c[1]} | {c[2]} |" for op, c in table.items()]
    lines += ["", f"## First mismatches ({min(len(failures), MAX_DETAILS)} of {len(failures)})",
              ""]
    if failures:
        lines += ["| op | dtype | sample | what differs |", "|---|---|---|---|"]
        lines += [f"| `{op}` | {dt} | {_md_escape(name)} | {_md_escape(why)} |"
                  for op, dt, name, why in failures[:MAX_DETAILS]]
    else:
        lines.append("None.")
    lines += ["", "## Gradients", "",
              "Gradients of a fixed weighted sum of each float64 sample's floating outputs with "
              "respect to its floating tensor arguments; both libraries raising (an op PyTorch "
              "does not differentiate) counts as a match.", "",
              "| op | samples | passed | failed |", "|---|---|---|---|"]
    lines += [f"| `{op}` | {c[0]} | {c[1]} | {c[2]} |" for op, c in grad_table.items()
              if op in grad_ops]
    lines += ["", "Not compared (PyTorch's own backward fails on these valid samples):", ""]
    lines += [f"- `{op}` / {name}: {why}"
              for (op, name), why in collect.GRAD_NOT_COMPARABLE.items()]
    if grad_failures:
        lines += ["", f"First gradient mismatches ({min(len(grad_failures), MAX_DETAILS)} of "
                  f"{len(grad_failures)}):", "", "| op | dtype | sample | what differs |",
                  "|---|---|---|---|"]
        lines += [f"| `{op}` | {dt} | {_md_escape(name)} | {_md_escape(why)} |"
                  for op, dt, name, why in grad_failures[:MAX_DETAILS]]
    lines += ["", "## Printing", "", "| expression | result |", "|---|---|"]
    lines += [f"| `{expr}` | {status} |" for expr, status, _ in printing]
    bad = [(e, d) for e, s, d in printing if s == "failed"]
    for expr, detail in bad:
        lines += ["", f"`{expr}`:", "", "```", detail, "```"]
    lines += ["", "## Checkpoint round trip", "", "| direction | result | detail |",
              "|---|---|---|"]
    lines += [f"| {d} | {s} | {_md_escape(x)} |" for d, s, x in checkpoints]
    for section, (layout_table, layout_failures) in (layouts or {}).items():
        lines += layout_compare.report(section, layout_table, layout_failures)
    lines += list(nn_lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reference-python", required=True,
                        help="an interpreter with real PyTorch 2.13 and numpy")
    parser.add_argument("--report", type=pathlib.Path, default=RESULTS / "parity.md")
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"comma-separated parts to run ({', '.join(SECTIONS)}; default all): "
                        "a shorter run while working on one part")
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    if sections - set(SECTIONS):
        parser.error(f"unknown sections {sorted(sections - set(SECTIONS))}")
    only = ("--sections", ",".join(s for s in collect.SECTIONS if s in sections))

    with tempfile.TemporaryDirectory(prefix="parity-") as tmp:
        work = pathlib.Path(tmp)
        # PyTorch saves a checkpoint; Plait saves one and loads PyTorch's; a short second run
        # of PyTorch loads Plait's.
        ref = run_collect(args.reference_python, "pytorch", work / "ref.pickle",
                          "--save-checkpoint", str(work / "ref.pt"), *only)
        mine = run_collect(sys.executable, "plait", work / "mine.pickle",
                           "--save-checkpoint", str(work / "mine.pt"),
                           "--load-checkpoint", str(work / "ref.pt"), *only)
        if (work / "mine.pt").exists():
            again = run_collect(args.reference_python, "pytorch", work / "ref2.pickle",
                                "--checkpoint-only", "--load-checkpoint", str(work / "mine.pt"))
            ref["checkpoint"].update(
                {k: v for k, v in again["checkpoint"].items() if k in ("loaded", "load_error")})
        nn_rows = nn_compare.run(args.reference_python, work) if "nn" in sections else []
        compat = (compat_compare.run(args.reference_python, work, compare_results)
                  if "compat" in sections else None)

    rows = row_table(collect.load_opdb())
    table, failures = compare_ops(mine.get("ops", {}), ref.get("ops", {}), rows)
    grad_table, grad_failures = compare_ops(mine.get("grads", {}), ref.get("grads", {}), rows)
    printing = compare_printing(mine.get("printing", {}), ref.get("printing", {}))
    layouts = {section: layout_compare.compare(mine[section], ref[section], rows, section)
               for section in layout_compare.SECTIONS if section in mine and section in ref}
    checkpoints = compare_checkpoints(mine["checkpoint"], ref["checkpoint"])
    passed = failed = 0

    width = max([len(op) for op in table] + [2])
    print(f"{'op':<{width}}  samples  passed  failed")
    for op, (n, ok, bad) in table.items():
        print(f"{op:<{width}}  {n:>7}  {ok:>6}  {bad:>6}")
    for op, dtype, name, why in failures[:20]:
        print(f"MISMATCH {op} [{dtype}] {name!r}: {why.splitlines()[0]}")
    grad_ops = {op: c for op, c in grad_table.items()
                if any(not ref["grads"][k].get("status") == "raised"
                       for k in ref.get("grads", {}) if k[0] == op)}
    print(f"gradients: {sum(c[1] for c in grad_table.values())} samples passed, "
          f"{sum(c[2] for c in grad_table.values())} failed, over {len(grad_ops)} "
          "differentiable ops")
    for op, dtype, name, why in grad_failures[:20]:
        print(f"GRAD MISMATCH {op} [{dtype}] {name!r}: {why.splitlines()[0]}")
    for expr, status, detail in printing:
        if status != "passed":
            print(f"printing {status}: {expr}" + (f"\n{detail}" if status == "failed" else ""))
    for direction, status, detail in checkpoints:
        print(f"checkpoint {direction}: {status}" + (f": {detail}" if detail else ""))
    for section, (layout_table, layout_failures) in layouts.items():
        title = layout_compare.SECTIONS[section]
        print(f"{title}: {sum(c[1] for c in layout_table.values())} samples passed, "
              f"{len(layout_failures)} failed")
        for category, n, ops in layout_compare.categories(layout_failures):
            print(f"  {title} MISMATCH {category}: {n} samples: {' '.join(ops)}")
        passed += sum(c[1] for c in layout_table.values())
        failed += len(layout_failures)

    passed += (sum(c[1] for c in table.values()) + sum(s == "passed" for _, s, _ in printing)
              + sum(s == "passed" for _, s, _ in checkpoints)
              + sum(c[1] for c in grad_table.values()))
    failed += (sum(c[2] for c in table.values()) + sum(s == "failed" for _, s, _ in printing)
              + sum(s == "failed" for _, s, _ in checkpoints)
              + sum(c[2] for c in grad_table.values()))
    for kind, name, status, detail in nn_rows:
        if status != "passed":
            print(f"nn {status}: {kind} {name}" + (f": {detail}" if detail else ""))
    passed += sum(status == "passed" for _, _, status, _ in nn_rows)
    failed += sum(status == "failed" for _, _, status, _ in nn_rows)
    unavailable = sum(status == "unavailable" for _, _, status, _ in nn_rows)
    print(f"nn: {sum(s == 'passed' for _, _, s, _ in nn_rows)} passed, "
          f"{sum(s == 'failed' for _, _, s, _ in nn_rows)} failed, {unavailable} not yet in "
          "Plait")
    write_report(args.report, mine, ref, table, failures, printing, checkpoints,
                 (passed, failed), (grad_table, grad_failures, grad_ops),
                 nn_compare.report(nn_rows) if nn_rows else [], layouts)
    if compat is not None:  # a measure of the surface, outside the pass/fail total
        judged, compat_mine, compat_ref = compat
        compat_compare.print_summary(judged, compat_ref["version"])
        compat_report = args.report.parent / compat_compare.REPORT.name
        compat_report.write_text(
            "\n".join(compat_compare.report_lines(judged, compat_mine, compat_ref)) + "\n")
        print(f"compat report: {compat_report}")
    print(f"report: {args.report}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
