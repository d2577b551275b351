"""Matrix products through cuBLAS (``nvidia-cublas``), opened with ``ctypes`` at first use.

``matmul`` asks :func:`gemm` first; it answers False (and the rendered tiled kernel runs)
where cuBLAS is not installed, ``PLAIT_CUDA_CUBLAS=0``, the dtype has no cuBLAS type here
(integers), or a layout cuBLAS cannot take without a copy (neither stride of a matrix is 1,
more than one batch dim after merging, a broadcast batch). float32 products use TF32 tensor
cores when ``torch.get_float32_matmul_precision()`` is not ``"highest"`` (what
``torch.backends.cuda.matmul.allow_tf32`` sets), as PyTorch does; float16 and bfloat16
accumulate in float32.

cuBLAS is column-major: a row-major ``out (n x m) = a (n x k) @ b (k x m)`` is the column-major
``out^T = b^T @ a^T``, so :func:`plan` passes ``b`` first. The library is looked up as NVRTC
is (:mod:`.nvrtc`): ``PLAIT_CUDA_CUBLAS_LIBRARY``, the wheel's ``nvidia/cu13/lib`` on
``sys.path``, the toolkit's ``lib64``, then the loader's search.
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV_SWITCH = "PLAIT_CUDA_CUBLAS"
ENV_LIBRARY = "PLAIT_CUDA_CUBLAS_LIBRARY"
_FOLDERS = ("nvidia/cu13/lib", "nvidia/cublas/lib")
_SONAMES = ("libcublas.so.13", "libcublas.so.12", "libcublas.so")

# cudaDataType and cublasComputeType_t values (cuBLAS's headers; stable across versions)
_DATA_TYPE = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 14}
_COMPUTE_32F, _COMPUTE_32F_FAST_TF32, _COMPUTE_64F = 68, 77, 70
_OP_N, _OP_T = 0, 1
_GEMM_DEFAULT = -1

_lock = threading.Lock()
_state: dict[str, Any] = {}  # "lib": the CDLL or None (not found), "handles": device -> handle


@dataclass(frozen=True)
class Plan:
    """One ``cublasGemmStridedBatchedEx`` call in element units: ``first`` is ``b``, ``second``
    is ``a`` (column-major order), each with its op, leading dimension and batch stride."""

    op_first: int
    op_second: int
    m: int
    n: int
    k: int
    ld_first: int
    ld_second: int
    ld_out: int
    stride_first: int
    stride_second: int
    stride_out: int
    batches: int


def _matrix(rows: int, cols: int, row_stride: int, col_stride: int) -> tuple[int, int] | None:
    """(op, leading dim) of a row-major ``rows x cols`` matrix for cuBLAS: ``N`` where its
    columns step by 1 (column-major, it is its own transpose with the row stride as leading
    dim), ``T`` where its rows do; None for any other layout (a broadcast, a strided view)."""
    if (col_stride == 1 or cols == 1) and (rows == 1 or row_stride >= cols):
        return _OP_N, row_stride if rows > 1 else max(cols, 1)
    if (row_stride == 1 or rows == 1) and (cols == 1 or col_stride >= rows):
        return _OP_T, col_stride if cols > 1 else max(rows, 1)
    return None


def plan(out_shape: tuple[int, ...], out_strides: tuple[int, ...], a_strides: tuple[int, ...],
         b_strides: tuple[int, ...], k: int, batch_sizes: list[int],
         batch_strides: list[list[int]]) -> Plan | None:
    """The cuBLAS call for ``out = a @ b`` of these geometries (batch dims merged first), or
    None when cuBLAS cannot take it without a copy."""
    n, m = out_shape[-2], out_shape[-1]
    written = _matrix(n, m, out_strides[-2], out_strides[-1])
    if written is None or written[0] != _OP_N:
        return None  # cuBLAS writes column-major out^T: out's columns must step by 1
    if len(batch_sizes) > 1:
        return None
    batches = batch_sizes[0] if batch_sizes else 1
    st_out, st_a, st_b = (s[0] for s in batch_strides) if batch_sizes else (0, 0, 0)
    if batches > 1 and (st_a == 0 or st_b == 0 or st_out == 0):
        return None  # a broadcast batch
    first = _matrix(k, m, b_strides[-2], b_strides[-1])
    second = _matrix(n, k, a_strides[-2], a_strides[-1])
    if first is None or second is None:
        return None
    return Plan(first[0], second[0], m, n, k, first[1], second[1], written[1], st_b, st_a,
                st_out, batches)


def _library() -> Any:
    if "lib" in _state:
        return _state["lib"]
    with _lock:
        if "lib" not in _state:
            _state["lib"] = _open()
            _state["handles"] = {}
    return _state["lib"]


def _open() -> Any:
    candidates = [os.environ[ENV_LIBRARY]] if os.environ.get(ENV_LIBRARY) else []
    for entry in sys.path:
        for folder in _FOLDERS:
            found = sorted(glob.glob(str(Path(entry or ".") / folder / "libcublas.so*")), key=len)
            candidates += found[:1]
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    candidates += sorted(glob.glob(f"{home}/lib64/libcublas.so*"), key=len)[:1]
    for candidate in [*candidates, *_SONAMES]:
        try:
            folder = os.path.dirname(candidate)
            if folder:  # cuBLAS opens cuBLASLt by name: load it from the same folder first
                for lt in sorted(glob.glob(os.path.join(folder, "libcublasLt.so*")), key=len)[:1]:
                    ctypes.CDLL(lt, mode=ctypes.RTLD_GLOBAL)
            lib = ctypes.CDLL(candidate, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        p, i, v = ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p
        lib.cublasCreate_v2.argtypes = [ctypes.POINTER(p)]
        lib.cublasGemmStridedBatchedEx.argtypes = [
            p, i, i, i, i, i, v, v, i, i, ctypes.c_longlong, v, i, i, ctypes.c_longlong, v, v,
            i, i, ctypes.c_longlong, i, i, i]
        return lib
    return None


def available() -> bool:
    """Whether matrix products can go through cuBLAS (installed and not switched off)."""
    if os.environ.get(ENV_SWITCH, "").strip().lower() in {"0", "false", "no", "off"}:
        return False
    return _library() is not None


def _handle(lib: Any, device: int) -> Any:
    handles = _state["handles"]
    found = handles.get(device)
    if found is None:
        handle = ctypes.c_void_p()
        _check(lib.cublasCreate_v2(ctypes.byref(handle)), "cublasCreate")
        found = handles[device] = handle
    return found


def _check(status: int, call: str) -> None:
    if status:
        raise RuntimeError(f"cuBLAS error in {call}: status {status}")


def gemm(out: Any, a: Any, b: Any, batch_sizes: list[int], batch_strides: list[list[int]],
         buffers: list[Any], offsets: list[int]) -> bool:
    """Run ``out = a @ b`` through cuBLAS where :func:`plan` takes it (``buffers`` and element
    ``offsets`` of out, a and b, checked by the caller); False when it does not."""
    name = str(out.dtype).removeprefix("torch.")
    if name not in _DATA_TYPE or not available():
        return False
    from . import device_module

    device = out.device.index or 0
    if device != device_module.native().current_device():
        return False  # cuBLAS runs on the runtime's current device
    p = plan(tuple(out.shape), tuple(out.stride()), tuple(a.stride()), tuple(b.stride()),
             a.shape[-1], batch_sizes, batch_strides)
    if p is None or p.k == 0:
        return False  # k == 0: out is zeros, which the rendered kernel writes
    import torch

    lib = _library()
    data = _DATA_TYPE[name]
    if name == "float64":
        compute, alpha, beta = _COMPUTE_64F, ctypes.c_double(1.0), ctypes.c_double(0.0)
    else:
        fast = name == "float32" and torch.get_float32_matmul_precision() != "highest"
        compute = _COMPUTE_32F_FAST_TF32 if fast else _COMPUTE_32F
        alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
    size = out.element_size()
    out_address, a_address, b_address = (buf.ptr + off * size for buf, off in zip(buffers, offsets))
    from .kernels import CALLS

    CALLS["matmul_cublas"] += 1
    _check(lib.cublasGemmStridedBatchedEx(
        _handle(lib, device), p.op_first, p.op_second, p.m, p.n, p.k, ctypes.byref(alpha),
        b_address, data, p.ld_first, p.stride_first, a_address, data, p.ld_second,
        p.stride_second, ctypes.byref(beta), out_address, data, p.ld_out, p.stride_out,
        p.batches, compute, _GEMM_DEFAULT), "cublasGemmStridedBatchedEx")
    return True
