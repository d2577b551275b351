"""The xpu column of ``nox -s bench``: plait-backend-xpu (OpenCL; PoCL on this machine) against
Plait's own CPU backend on the same workloads, in one process, plus program build times.

PoCL compiles OpenCL C for the same CPU, so the native CPU backend is the yardstick. Each
figure is the best of 7 rounds of the mean time per call (the xpu side synchronised at the end
of each round). Throughput ratios are CPU time / xpu time (1.0: as fast as the CPU backend);
the small-op rows compare host time per call with real PyTorch's CPU op when
``--reference-python`` is given. Writes ``benchmarks/results/xpu.md`` (or ``--output``).

``python benchmarks/xpu.py [--reference-python PY] [--output DIR]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("PLAIT_XPU_DEVICE_TYPE", "all")

import torch  # noqa: E402  (after the device-type choice, which is read at the first query)

ROUNDS = 7
SMALL = ("import torch; import torch.nn.functional as F; a = torch.ones(4); "
         "b = torch.ones(4); x = torch.ones(4, 4); "
         "ga = torch.ones(4, requires_grad=True); gb = torch.ones(4, requires_grad=True)")
# The small ops whose host time per call is compared with PyTorch's CPU op (the first is the
# issue's target; the others are the same tiers and plans on other kinds of op: unary math, a
# broadcast product, reductions over one dim, and an add that autograd records, which are a
# training loop's common calls); expression -> its operands, as the table names them.
SMALL_OPS = {
    **dict.fromkeys(("a + b", "a * 2.0", "a.exp()", "torch.sub(a, b)", "F.relu(a)", "a.sum()",
                     "a.sigmoid()", "a.tanh()"), "4 floats"),
    **dict.fromkeys(("x * a", "x.sum(1)", "x.sum(0)", "x.amax(-1)"), "4 x 4 floats"),
    **dict.fromkeys(("ga + gb", "ga * gb"), "4 floats requiring grad"),
}
HOST_ROUNDS = 3  # alternating runs of PyTorch and Plait per small-op figure


def _best(fn: Callable[[], Any], sync: Callable[[], None], number: int) -> float:
    """Seconds per call: the best round of ``number`` calls."""
    fn()
    sync()
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def _pair(make: Callable[[str], Callable[[], Any]], number: int) -> tuple[float, float]:
    """(CPU seconds, xpu seconds) per call of the workload ``make(device)``."""
    cpu = _best(make("cpu"), lambda: None, number)
    xpu = _best(make("xpu"), torch.xpu.synchronize, number)
    return cpu, xpu


def _elementwise(op: Callable[..., Any], n: int) -> Callable[[str], Callable[[], Any]]:
    def make(device: str) -> Callable[[], Any]:
        x = torch.rand(n, device=device)
        y = torch.rand(n, device=device)
        return lambda: op(x, y)
    return make


def _rows_max(rows: int, cols: int) -> Callable[[str], Callable[[], Any]]:
    def make(device: str) -> Callable[[], Any]:
        x = torch.rand(rows, cols, device=device)
        return lambda: x.amax(-1)
    return make


def _matmul(n: int) -> Callable[[str], Callable[[], Any]]:
    def make(device: str) -> Callable[[], Any]:
        a = torch.rand(n, n, device=device)
        b = torch.rand(n, n, device=device)
        return lambda: a @ b
    return make


# name, workload, calls per round, target ratio (CPU time / xpu time at least this)
THROUGHPUT = [
    ("add 4M float32", _elementwise(lambda x, y: x + y, 1 << 22), 5, 0.5),
    ("exp 4M float32", _elementwise(lambda x, y: torch.exp(x), 1 << 22), 5, 0.5),
    ("sum 4M float32", _elementwise(lambda x, y: x.sum(), 1 << 22), 5, 0.5),
    ("amax (4096, 1024) last dim", _rows_max(4096, 1024), 5, 0.5),
    ("matmul 512 float32", _matmul(512), 3, 0.3),
]


def _gelu_mul_add(x: Any, y: Any, z: Any) -> Any:
    return torch.nn.functional.gelu(x) * y + z


def _relu_sum(x: Any, b: Any) -> Any:
    return torch.relu(x * b + 1).sum(-1)


# name, function, the inputs' shapes, calls per round, target ratio (eager time / compiled
# time): torch.compile's generated OpenCL (one kernel per fused group) against eager xpu
COMPILED = [
    ("gelu(x) * y + z 4M float32", _gelu_mul_add, [(1 << 22,)] * 3, 5, 1.5),
    ("relu(x * b + 1).sum(-1) (4096, 1024) float32", _relu_sum, [(4096, 1024), (1024,)], 5,
     1.5),
]


def _compiled_rows() -> list[tuple[str, str, str, str, str, str]]:
    """Eager xpu against ``torch.compile`` on xpu, per :data:`COMPILED` workload (kernels
    built before the first call returns, so that every timed call runs them)."""
    import torch._inductor

    torch._inductor.config.compile_in_background = False
    rows = []
    for name, fn, shapes, number, target in COMPILED:
        inputs = [torch.rand(*shape, device="xpu") for shape in shapes]
        compiled = torch.compile(fn)
        eager = _best(lambda f=fn, a=inputs: f(*a), torch.xpu.synchronize, number)
        fused = _best(lambda f=compiled, a=inputs: f(*a), torch.xpu.synchronize, number)
        ratio = eager / fused
        rows.append((name, _fmt(eager), _fmt(fused), f"{ratio:.2f}", f">= {target}",
                     "yes" if ratio >= target else "no"))
    return rows


def _host_times(python: str, device: str) -> dict[str, tuple[float, float]]:
    """(wall, calling thread's CPU) seconds per call of each of :data:`SMALL_OPS` on
    ``device``, in a fresh interpreter ``python`` (from the third call: the first plans). The
    CPU time leaves out what other processes, and PoCL's worker threads running the kernels,
    take of the shared cores: on a loaded machine wall time swings, it far less."""
    # (the grad operands are made on the device: leaves there, as a model's parameters are)
    code = (f"{SMALL}; a, b, x = a.to('{device}'), b.to('{device}'), x.to('{device}'); "
            f"ga, gb = (t.detach().to('{device}').requires_grad_() for t in (ga, gb)); "
            "import time, timeit\n"
            "def cpu_timer(f):\n"
            "    t = time.thread_time(); f(); return time.thread_time() - t\n"
            f"for e in {tuple(SMALL_OPS)!r}:\n"
            "    f = eval('lambda: ' + e); f(); f()\n"
            "    t = timeit.Timer(f)\n"
            "    wall = min(t.repeat(number=2000, repeat=7)) / 2000\n"
            "    cpu = min(cpu_timer(lambda: t.timeit(2000)) for _ in range(7)) / 2000\n"
            "    print(wall, cpu)\n")
    env = {**os.environ, "PLAIT_XPU_DEVICE_TYPE": "all"}
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env,
                         check=True)
    lines = out.stdout.splitlines()[-len(SMALL_OPS):]
    return {e: (float(line.split()[0]), float(line.split()[1]))
            for e, line in zip(SMALL_OPS, lines)}


def _host_time_pairs(reference: str) -> dict[str, tuple[float, float, float, float]]:
    """(PyTorch's wall, xpu's wall, PyTorch's thread CPU, xpu's thread CPU) host time of each
    small op: the best of :data:`HOST_ROUNDS` alternating runs of each side, so that both see
    the same load."""
    best: dict[str, list[float]] = {e: [float("inf")] * 4 for e in SMALL_OPS}
    for _ in range(HOST_ROUNDS):
        for side, times in enumerate((_host_times(reference, "cpu"),
                                      _host_times(sys.executable, "xpu"))):
            for e, (wall, cpu) in times.items():
                best[e][side] = min(best[e][side], wall)
                best[e][2 + side] = min(best[e][2 + side], cpu)
    return {e: (ref, xpu, ref_cpu, xpu_cpu) for e, (ref, xpu, ref_cpu, xpu_cpu) in best.items()}


def _first_use(cache: str) -> float:
    """Seconds of a first ``x.exp()`` on xpu (a program built or loaded) in a fresh
    interpreter, beyond a second call's time, with the program cache in ``cache``."""
    code = ("import time, torch; x = torch.rand(1000, device='xpu'); torch.xpu.synchronize(); "
            "t0 = time.perf_counter(); x.exp(); torch.xpu.synchronize(); "
            "t1 = time.perf_counter(); x.exp(); torch.xpu.synchronize(); "
            "t2 = time.perf_counter(); print((t1 - t0) - (t2 - t1))")
    # PoCL compiles a loaded program again for each work-group size at its first launch and
    # keeps that in its own kernel cache (on by default): both caches live in ``cache``, so
    # the first run starts with both empty and the second finds what a user's second run does
    env = {**os.environ, "PLAIT_XPU_DEVICE_TYPE": "all", "PLAIT_XPU_CACHE_DIR": cache,
           "POCL_KERNEL_CACHE": "1", "POCL_CACHE_DIR": os.path.join(cache, "pocl")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True)
    return max(float(out.stdout.split()[-1]), 0.0)


def _fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference-python", default=None,
                        help="an interpreter with real PyTorch, for the small-op rows")
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "results"))
    args = parser.parse_args()
    out_dir = Path(args.output)
    out_dir.mkdir(parents=True, exist_ok=True)
    if not torch.xpu.is_available():
        sys.stdout.write(f"xpu column skipped: {torch.xpu.unavailable_reason()}\n")
        return
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    rows: list[tuple[str, str, str, str, str, str]] = []
    for name, make, number, target in THROUGHPUT:
        cpu, xpu = _pair(make, number)
        ratio = cpu / xpu
        rows.append((name, _fmt(cpu), _fmt(xpu), f"{ratio:.2f}", f">= {target}",
                     "yes" if ratio >= target else "no"))
    compiled_rows = _compiled_rows()
    pairs = _host_time_pairs(args.reference_python) if args.reference_python else {}
    for expression, (reference, plait_host, reference_cpu, plait_cpu) in pairs.items():
        ratio = plait_host / reference
        rows.append((f"`{expression}` ({SMALL_OPS[expression]}), host time vs PyTorch's CPU op",
                     _fmt(reference), _fmt(plait_host),
                     f"{ratio:.2f} (xpu / PyTorch; thread CPU {plait_cpu / reference_cpu:.2f}: "
                     f"{_fmt(plait_cpu)} / {_fmt(reference_cpu)})", "<= 3",
                     "yes" if ratio <= 3 else "no"))
    with tempfile.TemporaryDirectory() as cache:
        built = _first_use(cache)
        cached = _first_use(cache)
    rows.append(("first use of a kernel: program built", "", _fmt(built), "", "<= 1 s",
                 "yes" if built <= 1.0 else "no"))
    rows.append(("first use of a kernel: from the disk cache", "", _fmt(cached), "", "~0 s",
                 "yes" if cached <= 0.05 else "no"))
    name = torch.xpu.get_device_name(0)
    try:
        import plait_backend_cpu  # noqa: F401
        cpu_side = "plait-backend-cpu"
    except ImportError:  # only core's numpy reference kernels serve the CPU
        cpu_side = "core's reference kernels (plait-backend-cpu is not installed)"
    lines = [
        "# xpu benchmarks: plait-backend-xpu against Plait's CPU backend",
        "",
        f"- Device: {name} (OpenCL); CPU side: {cpu_side}, "
        f"{torch.get_num_threads()} threads; Python {sys.version.split()[0]}.",
        "- Method: one process; best of 7 rounds of the mean time per call, the xpu side "
        "synchronised at the end of each round; ratio = CPU time / xpu time (throughput), "
        "so 1.0 is the CPU backend's speed. Build times: a fresh interpreter's first "
        "`x.exp()` beyond its second, with empty caches (Plait's program cache and PoCL's "
        "kernel cache, in one temporary folder), then with them. Small ops: host time per "
        "call (best of 7 timeit rounds of 2000 calls) in fresh interpreters, real PyTorch's "
        f"CPU op and Plait's xpu op alternating {HOST_ROUNDS} times, the best of each; "
        "the ratio's parenthesis gives the calling thread's CPU time per call too (best of 7 "
        "rounds), which other processes and PoCL's worker threads (running the kernels on "
        "the same cores) do not add to.",
        "",
        "| workload | CPU | xpu | ratio | target | met? |",
        "|---|---|---|---|---|---|",
        *(f"| {' | '.join(row)} |" for row in rows),
        "",
        "torch.compile on xpu (kernels generated by plait-backend-xpu's codegen hook) against "
        "eager xpu; ratio = eager time / compiled time:",
        "",
        "| workload | eager xpu | compiled xpu | ratio | target | met? |",
        "|---|---|---|---|---|---|",
        *(f"| {' | '.join(row)} |" for row in compiled_rows),
        "",
    ]
    (out_dir / "xpu.md").write_text("\n".join(lines))
    sys.stdout.write("\n".join(lines) + f"\nwrote {out_dir / 'xpu.md'}\n")


if __name__ == "__main__":
    main()
