"""What every kernel area's wrappers share: the kernel type and the boundary errors."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Kernel = Callable[..., None]

def layout_error(name: str, message: str) -> ValueError:
    return ValueError(
        f"prims.{name} (plait-backend-cpu): {message}; core must pass operands already "
        "broadcast to the output's shape (torch.backends.contract.schema conventions)"
    )


def shape_error(name: str, out: Any, inputs: tuple[Any, ...]) -> ValueError:
    for i, t in enumerate(inputs):
        if tuple(t.shape) != tuple(out.shape):
            return layout_error(
                name, f"input {i} has shape {tuple(t.shape)}, the output has {tuple(out.shape)}"
            )
    return layout_error(name, "operand shapes differ")


def dtype_error(name: str, out: Any, inputs: tuple[Any, ...]) -> TypeError:
    bad = [f"input {i} has dtype {t.dtype}" for i, t in enumerate(inputs) if t.dtype != out.dtype]
    return TypeError(
        f"prims.{name} (plait-backend-cpu): {', '.join(bad)}, the output {out.dtype}; core "
        "must promote inputs to the output's dtype first"
    )


def null_pointer_error(name: str) -> RuntimeError:
    return RuntimeError(
        f"prims.{name} (plait-backend-cpu): a tensor with elements has a null data pointer"
    )



UNKNOWN_DTYPE = -1  # not a _C dtype code: _C returns False for it and the reference kernel runs


# -- what the wrappers of fused aten ops share (areas fused, loss, rnn) --------------------

FLOATING = ("float32", "float64", "float16", "bfloat16")


def floating_codes(native: Any, dtype_codes: Mapping[Any, int]) -> dict[Any, int]:
    """torch dtype -> ``_C`` code for the floating dtypes: what the fused kernels take."""
    return {dt: code for dt, code in dtype_codes.items() if native.DTYPES[code] in FLOATING}


def composite(qualname: str) -> Kernel:
    """Core's backend-independent kernel of aten op ``qualname`` (the fallback)."""
    from torch.backends import contract

    return contract.composite(qualname)


def planned_composite(qualname: str, planner: Callable[..., Kernel | None]) -> Kernel:
    """A kernel of aten operator ``qualname`` that runs core's composite (looked up at its
    first call), with ``planner`` (``torch.backends.contract.plannable``, native) giving the
    dispatcher a kernel specialised to each call signature."""
    from torch.backends.contract import plannable

    fallback: list[Kernel] = []

    @plannable(planner, native=True)
    def kernel(*args: Any, **kwargs: Any) -> Any:
        if not fallback:
            fallback.append(composite(qualname))
        return fallback[0](*args, **kwargs)

    kernel.__name__ = kernel.__qualname__ = qualname.replace("aten::", "").replace(".", "_")
    return kernel


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The element strides of a row-major tensor of ``shape``."""
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def addresses(*tensors: Any) -> list[int] | None:
    """The data pointers of ``tensors`` (None entries give 0), or None when a tensor with
    elements has no address (the native code would dereference it)."""
    out = []
    for t in tensors:
        if t is None:
            out.append(0)
            continue
        ptr = t.data_ptr()
        if not ptr and t.numel():
            return None
        out.append(ptr)
    return out
