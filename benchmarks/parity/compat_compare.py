"""The compatibility report: every row of ``compat_table.txt`` under Plait and PyTorch, judged.

``run.py`` runs it as the ``compat`` section of ``nox -s parity``; alone it is
``python benchmarks/parity/compat_compare.py --reference-python /path/to/torch-venv/bin/python``
(``--only TEXT`` keeps the rows whose call form contains TEXT). Each row gets one status:

- ``missing``: the public name does not resolve under Plait;
- ``raises``: it resolves, but the call form raises where PyTorch returns;
- ``exists``: it runs, but the result differs from PyTorch's (structure, type, dtype, shape or
  values beyond the tolerances below; for rows where PyTorch raises, a different outcome);
- ``agrees``: the same structure, types, dtypes, shapes and values within tolerance (``random``
  rows: no values), or both raise the same kind of built-in error.

Rows PyTorch itself cannot resolve are reported as broken rows of the table. The report does not
fail the parity session: missing names are expected while the surface grows; it is a measure.
"""

from __future__ import annotations

import argparse
import datetime
import pathlib
import pickle
import platform
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from typing import Any

import compat_cases  # beside this file

HERE = pathlib.Path(__file__).resolve().parent
REPORT = HERE.parent / "results" / "compat.md"
STATUSES = ("agrees", "exists", "raises", "missing")
# Looser than the op database's: the rows measure whether a call form means the same, and
# several go through different algorithms (SVD-based norms, RNN recurrences, LBFGS) in the two.
TOLERANCES: dict[str | None, tuple[float, float] | None] = {
    None: None, "float16": (1e-2, 1e-3), "bfloat16": (2e-2, 1e-2), "float32": (1e-4, 1e-5),
    "complex64": (1e-4, 1e-5), "float64": (1e-6, 1e-8), "complex128": (1e-6, 1e-8)}

Compare = Callable[..., "str | None"]


def collect(python: str, out: pathlib.Path, only: str = "") -> dict[str, Any]:
    """Run ``compat_collect.py`` under ``python``; what it pickled."""
    proc = subprocess.run([python, str(HERE / "compat_collect.py"), str(out), "--only", only],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"compat_collect under {python} failed:\n{proc.stdout}\n{proc.stderr}")
    with open(out, "rb") as f:
        return pickle.load(f)


def _error(record: dict[str, Any]) -> str:
    return f"{record['type']}: {record['message']}".splitlines()[0]


def classify(mine: dict[str, Any], ref: dict[str, Any], random: bool,
             compare: Compare) -> tuple[str, str]:
    """(status, detail) of one row from the two libraries' records; ``compare`` is
    ``run.compare_results`` (why two encoded results differ, or None)."""
    if not ref["exists"]:
        return "broken", "PyTorch does not have this name"
    if not mine["exists"]:
        return "missing", ""
    if ref["status"] != "ok":
        if mine["status"] == "raised" and mine["category"] == ref["category"]:
            return "agrees", f"both raise {ref['category']}"
        plait = _error(mine) if mine["status"] != "ok" else f"returns {mine['repr']}"
        return "exists", f"PyTorch raises {_error(ref)}; Plait {plait}"
    if mine["status"] != "ok":
        return "raises", _error(mine)
    why = compare(mine["result"], ref["result"], TOLERANCES, random)
    if why is None:
        return "agrees", ""
    # assert_close's first line and its greatest differences say how far apart the two are
    lines = why.splitlines()
    return "exists", " ".join([lines[0], *(ln.strip() for ln in lines if "Greatest" in ln)])


def judge(rows: list[Any], mine: dict[str, Any], ref: dict[str, Any], compare: Compare
          ) -> list[tuple[Any, str, str]]:
    """(row, status, detail) for every row of ``rows`` both libraries collected, in order."""
    return [(row, *classify(mine["rows"][row.id], ref["rows"][row.id], row.random, compare))
            for row in rows if row.id in mine["rows"] and row.id in ref["rows"]]


def summary(judged: list[tuple[Any, str, str]], ref_version: str) -> str:
    counts = Counter(status for _, status, _ in judged)
    total = len(judged) - counts["broken"]
    exist = total - counts["missing"]
    names = len({row.name for row, status, _ in judged if status != "broken"})
    line = (f"compat: {exist} of {total} names exist, {counts['agrees']} agree with PyTorch "
            f"{ref_version.split('+')[0]} ({counts['exists']} differ, {counts['raises']} "
            f"raise, {counts['missing']} missing; {total} call forms of {names} public names)")
    if counts["broken"]:
        line += f"; {counts['broken']} broken rows"
    return line


def by_group(judged: list[tuple[Any, str, str]]) -> dict[str, Counter]:
    groups: dict[str, Counter] = {}
    for row, status, _ in judged:
        groups.setdefault(row.group, Counter())[status] += 1
    return groups


def error_kinds(judged: list[tuple[Any, str, str]], top: int = 15) -> list[tuple[int, str]]:
    """The most common reasons of rows that raise under Plait, numbers and quoted names
    folded together, so one missing piece shows up as one line."""
    kinds = Counter(re.sub(r"'[^']*'|\d+", "…", detail)[:110]
                    for _, status, detail in judged if status == "raises")
    return [(n, kind) for kind, n in kinds.most_common(top)]


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:300]


def report_lines(judged: list[tuple[Any, str, str]], mine: dict[str, Any],
                 ref: dict[str, Any]) -> list[str]:
    """The markdown of ``benchmarks/results/compat.md``."""
    lines = [
        "# Compatibility with PyTorch: the public surface real programs use",
        "",
        f"Generated by `nox -s parity` (section `compat`) on {datetime.date.today()} "
        f"({platform.machine()}, Python {platform.python_version()}): Plait {mine['version']} "
        f"against PyTorch {ref['version']}; {mine['seconds']:.1f} s under Plait, "
        f"{ref['seconds']:.1f} s under PyTorch. The rows are `benchmarks/parity/compat_table.txt`"
        ": one call form each, with fixed inputs.",
        "",
        f"**{summary(judged, ref['version'])}**",
        "",
        "A row is *missing* when its public name does not resolve under Plait, *raises* when "
        "the call form raises where PyTorch returns, *exists* when it runs but its result "
        "differs (structure, type, dtype, shape, or values beyond rtol 1e-4 / atol 1e-5 for "
        "float32 and 1e-6 / 1e-8 for float64; rows marked random compare no values), and "
        "*agrees* otherwise (including both raising the same kind of error).",
        "",
        "## By area",
        "",
        "| area | rows | agrees | exists (differs) | raises | missing |",
        "|---|---|---|---|---|---|",
    ]
    for group, counts in by_group(judged).items():
        lines.append(f"| {group} | {sum(counts.values())} | "
                     + " | ".join(str(counts[s]) for s in STATUSES) + " |")
    kinds = error_kinds(judged)
    if kinds:
        lines += ["", "## Most common errors of the rows that raise", "",
                  "| rows | error |", "|---|---|"]
        lines += [f"| {n} | `{_md(kind)}` |" for n, kind in kinds]
    bad = [(row, status, detail) for row, status, detail in judged if status != "agrees"]
    lines += ["", f"## Rows that do not agree ({len(bad)})", ""]
    group = None
    for row, status, detail in bad:
        if row.group != group:
            group = row.group
            lines += ["", f"### {group}", "", "| status | name | call form | detail |",
                      "|---|---|---|---|"]
        lines.append(f"| {status} | `{row.name}` | `{_md(row.expr)}` | {_md(detail)} |")
    return lines


def print_summary(judged: list[tuple[Any, str, str]], ref_version: str,
                  limit: int = 40) -> None:
    """The per-name failures (the first ``limit`` of each status) and the summary line."""
    for status in ("broken", "missing", "raises", "exists"):
        rows = [(row, detail) for row, s, detail in judged if s == status]
        for row, detail in rows[:limit]:
            print(f"compat {status}: {row.name}: {row.expr}" + (f": {detail}" if detail else ""))
        if len(rows) > limit:
            print(f"compat {status}: ... and {len(rows) - limit} more (see the report)")
    print(summary(judged, ref_version))


def run(reference_python: str, work: pathlib.Path, compare: Compare, only: str = ""
        ) -> tuple[list[tuple[Any, str, str]], dict[str, Any], dict[str, Any]]:
    """Collect under both libraries and judge every row."""
    ref = collect(reference_python, work / "compat-ref.pickle", only)
    mine = collect(sys.executable, work / "compat-mine.pickle", only)
    return judge(compat_cases.rows(), mine, ref, compare), mine, ref


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference-python", required=True)
    parser.add_argument("--report", type=pathlib.Path, default=REPORT)
    parser.add_argument("--only", default="", help="rows whose call form contains this text")
    args = parser.parse_args()
    import run as parity  # the op database's result comparison (run.py imports this module)

    with tempfile.TemporaryDirectory(prefix="compat-") as tmp:
        judged, mine, ref = run(args.reference_python, pathlib.Path(tmp),
                                parity.compare_results, args.only)
    print_summary(judged, ref["version"])
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text("\n".join(report_lines(judged, mine, ref)) + "\n")
    print(f"report: {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
