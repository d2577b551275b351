"""Wrappers of the native matrix products, and loading OpenBLAS for them.

float32 products run on the backend's own packed AVX2/AVX-512 kernels where the CPU has them
(``_C.blas_info()["packed_kernel"]``). float64 products (float32 without those kernels,
float16/bfloat16 through float32) run on the OpenBLAS of the ``scipy-openblas32`` wheel, which
``_C`` dlopens at run time: nothing is linked at build time, so a missing or broken wheel only
costs speed. Every other dtype, and every dtype when OpenBLAS
could not be loaded, runs the native cache-blocked kernel; ``_C.blas_info()`` says which and why.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from ._common import UNKNOWN_DTYPE, Kernel, dtype_error, layout_error, null_pointer_error

_log = logging.getLogger(__name__)

# Set to a non-empty value other than "0" to keep OpenBLAS unloaded (the native kernel runs
# every product): for debugging and for testing the fallback in a fresh process.
DISABLE_ENV = "PLAIT_CPU_DISABLE_BLAS"

_MAX_DIMS = 64  # _C's kMaxDims


def openblas_library() -> str:
    """The path of the scipy-openblas32 shared library.

    :raises ImportError: the wheel is not installed.
    :raises OSError: the wheel has no library for this platform.
    """
    import scipy_openblas32

    lib_dir = scipy_openblas32.get_lib_dir()
    path = os.path.join(lib_dir, scipy_openblas32.get_library(fullname=True))
    if not os.path.isfile(path):
        raise OSError(f"{path} does not exist")
    return path


def load_blas(native: ModuleType) -> bool:
    """Load OpenBLAS into ``_C`` once; True when products use it.

    A failure is logged (not raised): the native kernel then runs every product, and
    ``_C.blas_info()["error"]`` keeps the reason.
    """
    if native.blas_info()["loaded"]:
        return True
    if os.environ.get(DISABLE_ENV, "0") not in ("", "0"):
        native.blas_set_error(f"{DISABLE_ENV} is set")
        _log.info("OpenBLAS not loaded: %s is set", DISABLE_ENV)
        return False
    try:
        path = openblas_library()
    except (ImportError, OSError) as exc:
        native.blas_set_error(f"scipy-openblas32 unavailable ({exc})")
        _log.warning(
            "plait-backend-cpu: OpenBLAS unavailable (%s); matrix products use the slower "
            "native kernel. Install scipy-openblas32 to fix this.",
            exc,
        )
        return False
    if not native.blas_load(path):
        _log.warning(
            "plait-backend-cpu: could not load OpenBLAS (%s); matrix products use the slower "
            "native kernel.",
            native.blas_info()["error"],
        )
        return False
    return True


def make_kernels(
    native: ModuleType,
    dtype_codes: Mapping[Any, int],
    reference: Callable[[str], Kernel],
) -> dict[str, Kernel]:
    """``matmul`` and ``aten::linear`` (and loads OpenBLAS)."""
    load_blas(native)
    unknown = UNKNOWN_DTYPE
    native_matmul = native.matmul

    def matmul(out: Any, a: Any, b: Any) -> None:
        # Sequences, not copied: this wrapper is most of a small product's cost.
        shape = out.shape
        a_shape = a.shape
        b_shape = b.shape
        nd = len(shape)
        if nd < 2 or len(a_shape) != nd or len(b_shape) != nd:
            raise layout_error(
                "matmul",
                f"operands of {len(a_shape)} and {len(b_shape)} dimensions, output of {nd}; "
                "all need the same number, at least 2",
            )
        k = a_shape[-1]
        if (
            a_shape[:-1] != shape[:-1]
            or b_shape[:-2] != shape[:-2]
            or b_shape[-2] != k
            or b_shape[-1] != shape[-1]
        ):
            raise layout_error(
                "matmul",
                f"shapes {tuple(a_shape)} @ {tuple(b_shape)} do not give the output's "
                f"{tuple(shape)}",
            )
        dtype = out.dtype
        if a.dtype != dtype or b.dtype != dtype:
            raise dtype_error("matmul", out, (a, b))
        out_ptr, a_ptr, b_ptr = out.data_ptr(), a.data_ptr(), b.data_ptr()
        if (
            (not out_ptr and out.numel())
            or (not a_ptr and a.numel())
            or (not b_ptr and b.numel())
        ):
            raise null_pointer_error("matmul")
        code = dtype_codes.get(dtype, unknown)
        if nd > _MAX_DIMS or not native_matmul(
            code, shape, k, out_ptr, out.stride(), a_ptr, a.stride(), b_ptr, b.stride()
        ):
            # Reaches here (issue 5 audit): bool (PyTorch has no bool matmul: core raises
            # first; only the conformance suite's bool row gets here) and complex dtypes; an
            # output with repeated elements (stride 0) or overlapping an operand (the
            # reference computes the whole product before it stores); > 64 dims.
            reference("matmul")(out, a, b)

    from torch import Tensor
    from torch.backends import contract

    native_linear = native.linear
    floating = {dt: code for dt, code in dtype_codes.items()
                if native.DTYPES[code] in ("float32", "float64")}

    def plan_linear(input: Any, weight: Any, bias: Any = None) -> Kernel | None:
        """The kernel of one signature the native call takes: the rows and the output's
        shape worked out once."""
        if not (isinstance(input, Tensor) and isinstance(weight, Tensor)
                and (bias is None or isinstance(bias, Tensor))):
            return None
        shape = input.shape
        code = floating.get(input.dtype)
        if (code is None or len(shape) < 2 or weight.ndim != 2 or weight.dtype != input.dtype
                or shape[-1] != weight.shape[1] or not shape[-1] or not input.numel()
                or not weight.shape[0] or not input.is_contiguous()
                or not weight.is_contiguous() or input.device.type != "cpu"
                or weight.device.type != "cpu"
                or (bias is not None and (
                    bias.dtype != input.dtype or bias.shape != weight.shape[:1]
                    or not bias.is_contiguous() or bias.device.type != "cpu"))):
            return None
        k, n = shape[-1], weight.shape[0]
        rows = input.numel() // k
        out_shape = (*shape[:-1], n)
        new_output = contract.allocator([(out_shape, input.dtype, input.device)])

        def planned(input: Any, weight: Any, bias: Any = None) -> Any:
            (out,), (dst,) = new_output()
            if not native_linear(code, rows, k, n, dst, input.data_ptr(), weight.data_ptr(),
                                 0 if bias is None else bias.data_ptr()):
                return None  # the generic path
            return out

        return planned

    @contract.plannable(plan_linear, native=True)
    def linear(input: Any, weight: Any, bias: Any = None) -> Any:
        """``aten::linear`` in one native call (the bias written into the output rows, the
        product added onto them by one GEMM) for contiguous float32/float64 operands on the
        host; every other case, and every error, is core's composite's."""
        if not (isinstance(input, Tensor) and isinstance(weight, Tensor)
                and (bias is None or isinstance(bias, Tensor))):
            return contract.composite("aten::linear")(input, weight, bias)  # (its TypeError)
        shape = input.shape
        code = floating.get(input.dtype)
        if (code is None or len(shape) < 2 or weight.ndim != 2 or weight.dtype != input.dtype
                or shape[-1] != weight.shape[1] or not shape[-1]
                or not input.is_contiguous() or not weight.is_contiguous()
                or input.device.type != "cpu" or weight.device.type != "cpu"
                or (bias is not None and (
                    bias.dtype != input.dtype or bias.shape != weight.shape[:1]
                    or not bias.is_contiguous() or bias.device.type != "cpu"))):
            return contract.composite("aten::linear")(input, weight, bias)
        n = weight.shape[0]
        out = contract.empty((*shape[:-1], n), input.dtype, input.device)
        rows = input.numel() // shape[-1]
        if not native_linear(code, rows, shape[-1], n, out.data_ptr(), input.data_ptr(),
                             weight.data_ptr(), 0 if bias is None else bias.data_ptr()):
            return contract.composite("aten::linear")(input, weight, bias)
        return out

    return {"matmul": matmul, "aten::linear": linear}
