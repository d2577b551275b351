#!/usr/bin/env bash
# One run on a machine with an NVIDIA GPU checks plait-backend-cuda end to end: builds the
# wheels there (nvcc, CMake and ninja from that machine; the kernels themselves are compiled by
# NVRTC at first use), runs the CUDA tests, the conformance suite against the cuda backend
# (its closing coverage table says, per primitive, native or CPU fallback), two training
# examples on cuda and on the CPU (same seed: their losses should agree), and
# benchmarks/device/cuda_bench.py under Plait and under the PyTorch installed there.
# Each step has a time limit and the whole a budget (PLAIT_CHECK_BUDGET, 470 s): under 8 minutes. Logs go to $OUT (default
# ./cuda-check-out): summary.md, info.log, build.log, tests.log, conformance.log,
# examples.log, bench.md. Last, in what is left of the budget, plait-backend-xpu's conformance
# suite on the GPU's OpenCL device.
#
# The GPU machine is offline: the build helpers it lacks (hatchling and its needs) and
# the CPU backend's OpenBLAS travel as wheels in .whl/, fetched beforehand on a machine with
# network (ignored by git: echo /.whl/ >> .git/info/exclude):
#   bash benchmarks/device/cuda_check.sh --prepare
# then, on the GPU machine, from the repository root, with .whl/ carried:
#   bash benchmarks/device/cuda_check.sh
# PLAIT_PYTHON picks the interpreter (default python3: there, the one that holds PyTorch, whose
# nvidia-cuda-nvrtc wheel NVRTC is taken from). PLAIT_CUDA_ARCH: the architecture _C is built
# for (default 90; release wheels build the full list, see packages/backend-cuda/README.md).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
PY=${PLAIT_PYTHON:-python3}

if [[ ${1:-} == --prepare ]]; then
  exec "$PY" -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .whl hatchling trove-classifiers pathspec packaging \
    scipy-openblas32
fi

OUT=${OUT:-$ROOT/cuda-check-out}
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SITE=$WORK/site
SUMMARY=$OUT/summary.md
echo "| step | rc | seconds |" >"$SUMMARY"
echo "|---|---|---|" >>"$SUMMARY"

# step NAME LOG LIMIT COMMAND...: run with a time limit, append its output to LOG.log; the
# limit shrinks to what is left of BUDGET seconds, and a step with too little left is skipped
BUDGET=${PLAIT_CHECK_BUDGET:-470}
step() {
  local name=$1 log=$2 limit=$3
  shift 3
  local left=$((BUDGET - SECONDS))
  ((limit > left)) && limit=$left
  if ((limit < 10)); then
    echo "| $name | skipped: out of time | |" >>"$SUMMARY"
    return 1
  fi
  local start=$SECONDS
  echo "=== $name: $*" >>"$OUT/$log.log"
  timeout "$limit" "$@" >>"$OUT/$log.log" 2>&1
  local rc=$?
  echo "| $name | $rc | $((SECONDS - start)) |" >>"$SUMMARY"
  return $rc
}

# -- the machine -------------------------------------------------------------------------------
{
  nvidia-smi
  "$PY" --version
  nvcc --version
  "$PY" -c "import torch; print('PyTorch', torch.__version__, torch.version.cuda)"
} >"$OUT/info.log" 2>&1

# -- build -------------------------------------------------------------------------------------
if [[ -z ${CUDACXX:-} ]]; then  # CMake finds nvcc through CUDACXX when it is not on PATH
  for nvcc in "$(command -v nvcc)" /usr/local/cuda/bin/nvcc; do
    [[ -x $nvcc ]] && export CUDACXX=$nvcc && break
  done
fi
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
BUILD_PATH=""
if compgen -G ".whl/*.whl" >/dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$WORK/tools" .whl/*.whl \
    >>"$OUT/build.log" 2>&1
  BUILD_PATH=$WORK/tools
fi
# build without isolation (offline) into $WORK/wheels
WHEEL=(env PYTHONPATH="$BUILD_PATH" "$PY" -m pip wheel -q --no-build-isolation --no-deps
       -w "$WORK/wheels")
step "build pure-Python wheels" build 60 "${WHEEL[@]}" packages/core packages/nn \
  packages/compile
step "build plait-backend-cuda" build 100 env \
  SKBUILD_CMAKE_DEFINE="CMAKE_CUDA_ARCHITECTURES=${PLAIT_CUDA_ARCH:-90}" \
  "${WHEEL[@]}" packages/backend-cuda
# the CPU backend makes the CPU runs (fallbacks, examples on cpu) fast; without it they run on
# core's reference kernels
step "build plait-backend-cpu" build 120 "${WHEEL[@]}" packages/backend-cpu
"$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$WORK"/wheels/*.whl \
  $(compgen -G ".whl/scipy_openblas32*.whl") >>"$OUT/build.log" 2>&1
echo "| install | $? | |" >>"$SUMMARY"

# Plait runs in a venv of its own: real PyTorch is installed beside the interpreter, and a
# path entry holding it would join Plait's torch package (torch extends its __path__). The
# venv sees Plait's wheels and every other package of the interpreter's site-packages (numpy,
# pytest, the nvidia wheels NVRTC and cuBLAS come from), through links, except torch's own.
"$PY" -m venv --without-pip "$WORK/venv"
PLAIT=$WORK/venv/bin/python
SYSTEM_SITE=$("$PY" -c "import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))")
mkdir -p "$WORK/deps"
for entry in "$SYSTEM_SITE"/*; do
  case $(basename "$entry") in torch* | functorch* | *.pth | __pycache__) continue ;; esac
  ln -s "$entry" "$WORK/deps/"
done
printf '%s\n%s\n' "$SITE" "$WORK/deps" >"$("$PLAIT" -c \
  "import sysconfig; print(sysconfig.get_paths()['purelib'])")/plait-check.pth"
"$PLAIT" -c "import torch, plait_backend_cuda; print(torch.__file__, torch.cuda.is_available())" \
  >>"$OUT/build.log" 2>&1
export PLAIT_CUDA_CACHE_DIR=$WORK/cubins

# -- tests and the conformance suite -----------------------------------------------------------
step "cuda tests" tests 90 "$PLAIT" -m pytest -q -rs -p no:cacheprovider \
  tests/test_backend_cuda.py tests/test_backend_cuda_kernels.py tests/test_backend_cuda_codegen.py

# -- benchmark: Plait, then the PyTorch of this machine -----------------------------------------
step "bench plait" bench 45 "$PLAIT" benchmarks/device/cuda_bench.py
step "bench pytorch" bench 45 "$PY" benchmarks/device/cuda_bench.py
"$PY" - "$OUT/bench.log" >"$OUT/bench.md" 2>&1 <<'EOF'
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
if len(runs) != 2:
    sys.exit(f"expected two JSON results, got {len(runs)}: see bench.log")
plait, pytorch = runs
print(f"GPU: {plait['device']}; Plait against PyTorch {pytorch['torch']}\n")
print("| figure | Plait | PyTorch | Plait / PyTorch |\n|---|---|---|---|")
for name, value in plait["figures"].items():
    theirs = pytorch["figures"][name]
    print(f"| {name} | {value:.1f} | {theirs:.1f} | {value / theirs:.2f} |")
EOF

# from an empty folder: the suite alone, not the repository's tests
(cd "$WORK" && step "conformance --torch-backend=cuda" conformance 150 "$PLAIT" -m pytest -q \
  -p no:cacheprovider --torch-backend=cuda)

# -- training examples: cuda against cpu, same seed ------------------------------------------
for device in cuda cpu; do
  step "mlp on $device" examples 25 "$PLAIT" examples/mlp.py --device "$device" --steps 150 \
    --train-size 1000 --test-size 300 --out "$WORK/mlp-$device"
  step "cnn_batchnorm on $device" examples 35 "$PLAIT" examples/cnn_batchnorm.py \
    --device "$device" --steps 40 --train-size 640 --test-size 200 --batch-size 32 \
    --out "$WORK/cnn-$device"
done

# -- the xpu backend on the GPU's OpenCL device, last: it runs in what is left
# of the budget. The driver's libnvidia-opencl.so.1 is registered beside PoCL on these machines;
# the default device type (GPU) picks it, the CPU fallback is off.
step "build plait-backend-xpu" build 90 "${WHEEL[@]}" packages/backend-xpu
"$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" \
  "$WORK"/wheels/plait_backend_xpu*.whl >>"$OUT/build.log" 2>&1
(cd "$WORK" && step "conformance --torch-backend=xpu (OpenCL GPU)" conformance 150 \
  env TORCH_DEVICE_CPU_FALLBACK=0 "$PLAIT" -m pytest -q -p no:cacheprovider --torch-backend=xpu)

cat "$SUMMARY"
