"""What every kernel area's wrappers share: the kernel type and the boundary errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Kernel = Callable[..., None]

def layout_error(name: str, message: str) -> ValueError:
    return ValueError(
        f"prims.{name} (plait-backend-cpu): {message}; core must pass operands already "
        "broadcast to the output's shape (torch._prims conventions)"
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
