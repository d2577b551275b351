"""Run the workloads under Plait and real PyTorch in one go and write the comparison.

``python benchmarks/run.py --reference-python /path/to/venv-with-torch/bin/python``
(``nox -s bench`` does this). Writes ``benchmarks/results/overhead.md``.
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

HERE = pathlib.Path(__file__).parent
RESULTS = HERE / "results"


def measure(python: str) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="2")
    out = subprocess.run([python, str(HERE / "workloads.py")], capture_output=True, text=True,
                         check=True, env=env)
    return json.loads(out.stdout)


# Caveats printed under the table, so a figure is never read for more than it is.
NOTES = {
    "a + b, requires_grad inputs": "records the graph (an AddBackward0 node) on both sides; "
    "Plait's recording is pure Python.",
    "a + b (4 floats)": "Plait's first fast tier (same interned layout, no grad, no mode); the "
    "allocate+kernel-in-one-native-call tier arrives with the CPU backend issue.",
}


def fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.2f} µs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reference-python", required=True,
                        help="an interpreter whose `import torch` is real PyTorch")
    args = parser.parse_args()
    plait = measure(sys.executable)
    ref = measure(args.reference_python)
    rows = ["| workload | PyTorch | Plait | ratio (Plait / PyTorch) |", "|---|---|---|---|"]
    for name, t in plait["results"].items():
        r = ref["results"][name]
        rows.append(f"| {name} | {fmt(r)} | {fmt(t)} | {t / r:.2f} |")
    header = (f"# Eager overhead and import time\n\n"
              f"Plait {plait['torch']} vs PyTorch {ref['torch']}, measured "
              f"{datetime.date.today().isoformat()} on {platform.machine()} "
              f"({os.cpu_count()} cores), Python {platform.python_version()}, 2 threads. "
              "Each op figure is the median of 7 rounds of 20,000 calls after warm-up; import "
              "times are the median wall time of 10 fresh `python -c \"import torch\"` "
              "processes (bare interpreter start shown for reference).\n\n")
    notes = [f"- *{name}*: {note}" for name, note in NOTES.items() if name in plait["results"]]
    text = header + "\n".join(rows) + "\n\n" + "\n".join(notes) + "\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "overhead.md").write_text(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
