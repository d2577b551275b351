"""``torch.onnx.symbolic_helper``: the decorators symbolic functions are written with in
PyTorch's TorchScript exporter, so that modules defining such functions import (see
:mod:`torch.onnx._symbolics`: Plait's exporter does not run them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["parse_args", "quantized_args"]

# PyTorch's argument descriptors: value, int, float, bool, string, tensor, int list, none
_DESCRIPTORS = frozenset("v i f b s t is fs bs none".split())


def parse_args(*arg_descriptors: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare how a symbolic function's arguments are read (``"v"`` a graph value, ``"i"`` an
    int, ``"f"`` a float...); the function is kept as it is, its descriptors recorded."""
    unknown = [d for d in arg_descriptors if d not in _DESCRIPTORS]
    if unknown:
        raise ValueError(f"parse_args: unknown argument descriptor(s) {unknown}")

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn._arg_descriptors = arg_descriptors  # type: ignore[attr-defined]
        return fn

    return decorate


def quantized_args(*arg_q_descriptors: bool, scale: float | None = None,
                   zero_point: int | None = None,
                   quantize_output: bool = False) -> Callable[[Callable[..., Any]], Any]:
    """Declare which arguments of a symbolic function are quantized; the function is kept as
    it is."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn._quantized_args = arg_q_descriptors  # type: ignore[attr-defined]
        return fn

    return decorate
