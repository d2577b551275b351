"""Run the CPU workloads under Plait and real PyTorch in one go and write the comparison.

``python benchmarks/run.py --reference-python /path/to/venv-with-torch/bin/python [--quick]``
(``nox -s bench [-- --quick]`` does this). Each side runs ``workloads.py --serve`` in its own
process with 2 threads, and the two are asked for the workloads in turn, row by row, so both
sides of a row run under the same machine load; this script prints the table and writes
``benchmarks/results/cpu.md`` and the ratio chart ``benchmarks/results/cpu.png`` (when
matplotlib is installed). A workload whose result disagrees between the two (by checksum)
fails the run: a fast wrong answer is no answer.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
from typing import Any

HERE = pathlib.Path(__file__).parent
RESULTS = HERE / "results"
ROOT = HERE.parent

# Why a target is missed, filled in from profiles (workload name -> one line).
WHY: dict[str, str] = {
    "(2,4) + (4,) broadcast": "one native call, like `a + b`; 0.62-0.87 in the runs of this "
    "code, so a miss is run-to-run noise at 1.5 µs",
    "a + b, requires_grad inputs": "graph recording is Python (`_fast.py` tier 5, "
    "`autograd._nodes.binary_node`): 0.93-0.95 in the runs of this code, about 0.1 µs of margin",
    "sum 1e7 float32": "memory-bound (40 MB) and at parity on one thread (0.96 vs 0.97 ms); the "
    "same code measured 0.94 in the fresh-clone run before this one; the spread is the "
    "two-thread split of a 0.5 ms call (pool wake-up, fixed-block combine) on a shared 2-core VM",
    "amax 1e7 float32": "as for sum: memory-bound, at parity on one thread; 0.96-1.13 across "
    "runs",
    "sum (4096,1024) last dim": "native row kernel (one call per chunk of rows, hot-path tier); "
    "0.93-0.96 across runs, ~1.07 on one thread",
    "amax (4096,1024) last dim": "the 64-byte amax kernel measured 114 µs against PyTorch's "
    "146-177 µs in interleaved runs of the same build; 0.1 ms calls on a shared 2-core VM vary "
    "by ±20% between runs",
    "softmax (4096,1024) last dim": "fused kernel; 0.71-0.73 across runs",
    "layer_norm (4096,1024), weight+bias": "memory-bound fused kernel; 0.73-0.94 across runs",
    "matmul 256 float32": "OpenBLAS sgemm tiles are as fast; a fixed ~10 µs of tiling and "
    "dispatch per call is 5% of a 0.18 ms product",
    "conv2d (32,64,56,56) 64x3x3 pad 1, forward": "im2col + OpenBLAS GEMM against oneDNN; "
    "0.79-1.30 across runs (PyTorch's own time varied 36-60 ms)",
    "MLP 784-512-512-10 train step (batch 128, Adam)": "about 60 generic dispatcher calls at "
    "5-10 µs of Python each; 1.09-1.16 across runs",
    "CNN train step (batch 64, 1x28x28, Adam)": "direct convolution kernels for small channel "
    "counts and the cheaper generic path; 0.74-1.10 across runs",
}

# Caveats printed under the table, so a figure is never read for more than it is.
NOTES = {
    "a + b, requires_grad inputs": "records the graph (an AddBackward0 node) on both sides; "
    "Plait's recording is pure Python.",
    "MLP 784-512-512-10 train step (batch 128, Adam)": "forward, backward, `Adam.step()` "
    "(each side's default implementation) and `zero_grad()`; the same functional code on both.",
    "torch.sub(a, b) (4 floats)": "no hand-made tier serves it: the dispatcher's plan of the "
    "call signature (`torch._core.plan`), as for the three rows below.",
    "(4,4).t() + (4,4).t() transposed": "the result follows the inputs' transposed layout, as "
    "in PyTorch.",
    "LSTM-cell step, forward+backward (batch 16, 64 -> 128)": "`nn.LSTMCell`'s arithmetic in "
    "functional ops (two linears, chunk, sigmoid/tanh), then `autograd.grad` of the four "
    "parameters.",
    "nanoGPT train step (4 layers, 128 wide, block 64, batch 12, Adam)": "nanoGPT's model in "
    "functional form (`scaled_dot_product_attention`, GELU MLP, tied lm head) and Adam.",
}


class Worker:
    """``workloads.py --serve`` under one interpreter, with 2 threads; restarted if it dies."""

    def __init__(self, python: str, quick: bool) -> None:
        self.python, self.quick = python, quick
        self.proc: subprocess.Popen[str] | None = None
        self.info = self._start()

    def _start(self) -> dict[str, Any]:
        env = dict(os.environ, OMP_NUM_THREADS="2", MKL_NUM_THREADS="2")
        cmd = [self.python, str(HERE / "workloads.py"), "--serve",
               *(["--quick"] if self.quick else [])]
        # From the results folder, so that the checkout never shadows the interpreter's torch.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env, cwd=RESULTS)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line:
            raise SystemExit(f"{self.python} workloads.py --serve did not start "
                             f"(exit status {self.proc.wait()})")
        return json.loads(line)

    def run(self, name: str) -> dict[str, Any]:
        """The entry of one workload; a crash becomes an ``error`` entry (and a new worker)."""
        assert self.proc is not None and self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(name + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if line:
            return json.loads(line)
        status = self.proc.wait()
        self._start()
        return {"target": 0.0, "error": f"the worker process died (exit status {status})"}

    def close(self) -> None:
        if self.proc is not None and self.proc.stdin:
            self.proc.stdin.close()
            self.proc.wait()


def measure(reference: str, quick: bool, only: list[str]
            ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run every selected workload under Plait (this interpreter) and PyTorch (``reference``),
    alternating row by row (the order flips each row), so that both sides of a row see the
    same machine load. Returns the two sides' ``{**info, "results": {...}}``."""
    sides = {"plait": Worker(sys.executable, quick), "ref": Worker(reference, quick)}
    out = {key: {**w.info, "results": {}} for key, w in sides.items()}
    names = [n for n in sides["plait"].info["workloads"] if not only or any(o in n for o in only)]
    try:
        for i, name in enumerate(names):
            order = ("plait", "ref") if i % 2 == 0 else ("ref", "plait")
            for key in order:
                out[key]["results"][name] = sides[key].run(name)
            sys.stderr.write(f"  measured: {name}\n")
    finally:
        for worker in sides.values():
            worker.close()
    for entry in out["plait"]["results"].values():
        entry.setdefault("target", 0.0)
    out["plait"].update(load=load_average(), date=datetime.date.today().isoformat(),
                        commit=commit(), quick=quick)
    return out["plait"], out["ref"]


def fmt_time(seconds: float) -> str:
    """A duration with a unit that keeps 3 significant figures readable."""
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} µs"


def agree(p: dict[str, Any], r: dict[str, Any]) -> bool:
    """Whether the two checksums agree within the workload's tolerance."""
    tol = max(p.get("tol", 1e-4), r.get("tol", 1e-4))
    scale = max(p["scale"], r["scale"], 1e-30)
    return abs(p["checksum"] - r["checksum"]) <= tol * scale


def compare(plait: dict[str, Any], ref: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per workload: times, ratio, target, verdict."""
    rows = []
    for name, p in plait["results"].items():
        r = ref["results"].get(name, {})
        row: dict[str, Any] = {"name": name, "target": p["target"], "ratio": None,
                               "ref": r.get("time"), "plait": p.get("time"), "note": "",
                               "wrong": False}
        if "time" not in r:
            row["status"] = "PyTorch: " + r.get("error", r.get("missing", "not run"))
        elif "missing" in p:
            row["status"] = f"missing: {p['missing']}"
        elif "error" in p:
            row["status"] = f"error: {p['error']}"
        else:
            row["ratio"] = p["time"] / r["time"]
            if "checksum" in p and not agree(p, r):
                row["wrong"] = True
                row["status"] = (f"WRONG RESULT (checksum {p['checksum']:.6g} vs PyTorch "
                                 f"{r['checksum']:.6g})")
            elif row["ratio"] <= row["target"]:
                row["status"] = "yes"
            else:
                over = row["ratio"] / row["target"] - 1.0
                row["status"] = f"no: {over:.0%} over"
            if p.get("flops"):
                row["note"] = (f"{p['flops'] / r['time'] / 1e9:.1f} / "
                               f"{p['flops'] / p['time'] / 1e9:.1f} GFLOP/s")
            if "bare_python" in p:
                row["note"] = (f"bare interpreter start {fmt_time(r['bare_python'])} / "
                               f"{fmt_time(p['bare_python'])}")
            if p.get("note"):  # a workload's own figure (the compile rows: against eager)
                row["note"] = p["note"]
        rows.append(row)
    return rows


def machine(load: list[float] | None) -> str:
    """CPU model, cores, OS and the load average measured after the run."""
    model = platform.processor() or platform.machine()
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    # other work on the machine skews the figures: say how busy it was
    busy = (", load average {:.1f} / {:.1f} / {:.1f} (1 / 5 / 15 min) at the end".format(*load)
            if load else "")
    return (f"{model}, {os.cpu_count()} logical cores, {platform.system()} "
            f"{platform.release()}{busy}")


def load_average() -> list[float] | None:
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def busy_warning(load: list[float] | None) -> str:
    """A header line when the machine was busier than its cores (the figures are then noisy)."""
    cores = os.cpu_count() or 1
    # the 1-minute average: the 15-minute one still remembers what ran before the benchmark
    if not load or load[0] <= cores:
        return ""
    return (f"- **Warning: the machine was busy** (1-minute load average {load[0]:.1f} on "
            f"{cores} cores at the end of the run): the figures are noisy. Rerun `nox -s bench` "
            "on a quiet machine before reading the ratios as final.")


def commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, cwd=ROOT, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def why(row: dict[str, Any]) -> str:
    """The explanation of a missed target (empty when the target is met)."""
    return "" if row["status"] == "yes" else WHY.get(row["name"], "")


def render(plait: dict[str, Any], ref: dict[str, Any], rows: list[dict[str, Any]],
           quick: bool) -> str:
    """The markdown of ``cpu.md``."""
    ratio = (lambda x: "—" if x is None else f"{x:.2f}")  # noqa: E731
    t = (lambda x: "—" if x is None else fmt_time(x))  # noqa: E731
    table = ["| workload | PyTorch | Plait | ratio (Plait / PyTorch) | target | met? | note "
             "(PyTorch / Plait) | why |", "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        table.append(f"| {row['name']} | {t(row['ref'])} | {t(row['plait'])} | "
                     f"{ratio(row['ratio'])} | ≤ {row['target']:g} | {row['status']} | "
                     f"{row['note']} | {why(row)} |")
    met = sum(row["status"] == "yes" for row in rows)
    header = [
        "# CPU benchmarks: Plait vs PyTorch" + (" (QUICK SMOKE RUN: tiny sizes)" if quick else ""),
        "",
        f"- Date: {plait.get('date', datetime.date.today().isoformat())}; Plait commit "
        f"{plait.get('commit', commit())}",
        f"- Machine: {machine(plait.get('load'))}",
        f"- Versions: Plait {plait['torch']} vs PyTorch {ref['torch']}; Python "
        f"{plait['python']}; numpy {plait['numpy']} (Plait side) / {ref['numpy']} (PyTorch side)",
        f"- Threads: {plait['threads']} (Plait) and {ref['threads']} (PyTorch): "
        "`torch.set_num_threads(2)` and `OMP_NUM_THREADS=2` on both.",
        "- Method: `benchmarks/run.py` keeps one `benchmarks/workloads.py` worker process per "
        "interpreter and alternates between them row by row (so both sides of a row run under "
        "the same machine load). Each figure is the median over rounds (7, or 3 for "
        "calls over 1 s) of the mean time per call, a round lasting about 0.25 s, after a "
        "warm-up. The same functional code and the same numpy-seeded inputs run on both sides; "
        "each workload's result is checked once (float64 checksum of its outputs; the first 3 "
        "steps' losses for the training steps) against PyTorch's. Import time is the median "
        "wall time of 10 fresh `python -c \"import torch\"` processes, with bytecode cached "
        "(as an installed package has it).",
        f"- {met} of {len(rows)} targets met. Ratio < 1 means Plait is faster.",
        *([warning] if (warning := busy_warning(plait.get("load"))) else []),
        "",
    ]
    notes = [f"- *{name}*: {note}" for name, note in NOTES.items() if name in plait["results"]]
    return "\n".join(header + table) + "\n\n" + "\n".join(notes) + "\n"


def chart(rows: list[dict[str, Any]], path: pathlib.Path, quick: bool) -> bool:
    """A horizontal bar chart of the ratios (log scale), the 1.0 line and each target."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("matplotlib is not installed: no chart written\n")
        return False
    names = [row["name"] for row in rows][::-1]
    ratios = [row["ratio"] or 0.0 for row in rows][::-1]
    targets = [row["target"] for row in rows][::-1]
    colours = ["tab:green" if row["status"] == "yes" else
               "tab:gray" if row["ratio"] is None else "tab:red" for row in rows][::-1]
    fig, ax = plt.subplots(figsize=(10, 0.38 * len(rows) + 1.5))
    ys = range(len(names))
    # Bars grow from the 1.0 line: left when Plait is faster, right when it is slower.
    ax.barh(ys, [r - 1.0 if r > 0 else 0.0 for r in ratios], left=1.0, color=colours)
    ax.scatter(targets, ys, marker="|", s=260, color="black", zorder=3, label="target")
    ax.axvline(1.0, color="tab:blue", linestyle="--", linewidth=1, label="PyTorch (1.0)")
    for y, r, row in zip(ys, ratios, rows[::-1]):
        label = f"{r:.2f}" if r > 0 else row["status"][:40]
        ax.text(max(r, 1.0, row["target"]) * 1.08, y, label, va="center", fontsize=7)
    ax.set_xscale("log")
    finite = [r for r in ratios if r > 0] + targets
    ax.set_xlim(min(min(finite) / 2, 0.5), max(max(finite) * 3, 2.0))
    ax.set_yticks(list(ys))
    ax.set_yticklabels(names, fontsize=8)
    ax.set_xlabel("time ratio Plait / PyTorch (log scale; lower is better)")
    ax.set_title("Plait vs PyTorch on CPU, 2 threads" + (" (quick smoke run)" if quick else ""))
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def console(rows: list[dict[str, Any]]) -> str:
    """The table for the terminal."""
    width = max(len(row["name"]) for row in rows)
    lines = [f"{'workload':<{width}}  {'PyTorch':>10}  {'Plait':>10}  {'ratio':>6}  "
             f"{'target':>6}  met?"]
    for row in rows:
        ref = fmt_time(row["ref"]) if row["ref"] is not None else "—"
        pl = fmt_time(row["plait"]) if row["plait"] is not None else "—"
        ratio = f"{row['ratio']:.2f}" if row["ratio"] is not None else "—"
        lines.append(f"{row['name']:<{width}}  {ref:>10}  {pl:>10}  {ratio:>6}  "
                     f"{row['target']:>6g}  {row['status']}  {row['note']}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reference-python", default=None,
                        help="an interpreter whose `import torch` is real PyTorch")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    parser.add_argument("--only", action="append", default=[],
                        help="run only workloads whose name contains this (repeatable)")
    parser.add_argument("--from-json", default=None,
                        help="re-render the table, cpu.md and cpu.png from a cpu.json of an "
                        "earlier run (e.g. after filling WHY) instead of measuring")
    parser.add_argument("--output", default=None,
                        help="folder for cpu.md and cpu.png (default: benchmarks/results, or a "
                        "temporary folder with --quick so a smoke run never overwrites them)")
    args = parser.parse_args()
    if args.reference_python is None and args.from_json is None:
        parser.error("--reference-python is required (unless --from-json)")
    RESULTS.mkdir(exist_ok=True)
    if args.from_json:
        saved = json.loads(pathlib.Path(args.from_json).read_text())
        plait, ref = saved["plait"], saved["pytorch"]
        args.quick = args.quick or plait.get("quick", False)
    else:
        plait, ref = measure(args.reference_python, args.quick, args.only)
    rows = compare(plait, ref)
    sys.stdout.write(console(rows))
    if args.output is not None:
        out = pathlib.Path(args.output)
    else:
        out = pathlib.Path(tempfile.gettempdir(), "plait-bench-quick") if args.quick else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    (out / "cpu.md").write_text(render(plait, ref, rows, args.quick))
    if not args.from_json:  # the raw figures, so that the page can be re-rendered
        (out / "cpu.json").write_text(json.dumps({"plait": plait, "pytorch": ref}, indent=1))
    chart(rows, out / "cpu.png", args.quick)
    sys.stdout.write(f"wrote {out / 'cpu.md'}\n")
    wrong = [row["name"] for row in rows if row["wrong"]]
    if wrong:
        raise SystemExit("results disagree with PyTorch: " + ", ".join(wrong))


if __name__ == "__main__":
    main()
