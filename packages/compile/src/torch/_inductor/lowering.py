"""How each aten operator lowers: one table row per operator.

A row's ``kind`` says what the scheduler does with a node of that operator:

* ``pointwise``: fused into a kernel group; ``c`` is the C++ expression template, with the
  operands as ``{0}``, ``{1}``... (already cast as ``cast`` says) and ``{T}`` the result's C
  type; ``floating`` rows take floating results only (integer results stay library calls).
* ``reduction``: a library call that ends the group before it (its pointwise prologue runs
  as one fused group, the reduction reads that group's output).
* ``view``: a library call that makes no copy; groups read views through their strides, so
  a view of a graph input is folded into the kernel's index math.
* anything absent from the table (matmul, convolution, sort, random, ...) is a ``fallback``:
  the node runs through the normal torch operator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

aten = torch.ops.aten


@dataclass(frozen=True)
class Lowering:
    """One row: how an operator lowers."""

    kind: str  # "pointwise", "reduction" or "view"
    c: str | Callable[[list[str], dict[str, Any]], str | None] = ""
    cast: str = "out"  # operands cast to: "out" (result type), "common" (their promotion), "none"
    floating: bool = False  # the C template is for floating results only


def _pw(c: str | Callable[[list[str], dict[str, Any]], str | None], cast: str = "out",
        floating: bool = False) -> Lowering:
    return Lowering("pointwise", c, cast, floating)


def _with_alpha(op: str) -> Callable[[list[str], dict[str, Any]], str | None]:
    """add/sub with an optional ``alpha`` keyword (scales the second operand)."""
    def render(ops: list[str], kwargs: dict[str, Any]) -> str | None:
        alpha = kwargs.get("alpha", 1)
        if alpha == 1:
            return f"({ops[0]} {op} {ops[1]})"
        return f"({ops[0]} {op} ({T_PLACEHOLDER})({alpha!r}) * {ops[1]})"
    return render


def _gelu(ops: list[str], kwargs: dict[str, Any]) -> str | None:
    x = ops[0]
    if kwargs.get("approximate", "none") == "tanh":
        return (f"(({{T}})0.5 * {x} * (({{T}})1 + tanh(({{T}})0.7978845608028654 * "
                f"({x} + ({{T}})0.044715 * {x} * {x} * {x}))))")
    return f"(({{T}})0.5 * {x} * (({{T}})1 + erf({x} * ({{T}})0.7071067811865476)))"


def _gelu_backward(ops: list[str], kwargs: dict[str, Any]) -> str | None:
    # grad * gelu'(x): the derivative of each form of gelu (the library's formulas).
    grad, x = ops[0], ops[1]
    if kwargs.get("approximate", "none") == "tanh":
        inner = f"(({{T}})0.7978845608028654 * ({x} + ({{T}})0.044715 * {x} * {x} * {x}))"
        th = f"tanh({inner})"
        return (f"({grad} * (({{T}})0.5 * (({{T}})1 + {th}) + ({{T}})0.5 * {x} * "
                f"(({{T}})1 - {th} * {th}) * ({{T}})0.7978845608028654 * "
                f"(({{T}})1 + ({{T}})0.134145 * {x} * {x})))")
    return (f"({grad} * (({{T}})0.5 * (({{T}})1 + erf({x} * ({{T}})0.7071067811865476)) + "
            f"{x} * ({{T}})0.3989422804014327 * exp(({{T}})-0.5 * {x} * {x})))")


def _clamp(ops: list[str], kwargs: dict[str, Any]) -> str | None:
    # clamp(x, min, max) with Python-number bounds (rendered as literals), NaN kept.
    expr = ops[0]
    if len(ops) > 1 and ops[1] != "None":
        expr = f"({expr} < {ops[1]} ? ({{T}}){ops[1]} : {expr})"
    if len(ops) > 2 and ops[2] != "None":
        expr = f"({expr} > {ops[2]} ? ({{T}}){ops[2]} : {expr})"
    return expr


def _leaky_relu(ops: list[str], kwargs: dict[str, Any]) -> str | None:
    slope = ops[1] if len(ops) > 1 else "0.01"
    return f"({ops[0]} > 0 ? {ops[0]} : {ops[0]} * ({{T}}){slope})"


T_PLACEHOLDER = "{T}"

_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}

_VIEWS = (("view", "default"), ("_unsafe_view", "default"), ("t", "default"),
          ("permute", "default"), ("expand", "default"), ("unsqueeze", "default"),
          ("squeeze", "dim"), ("squeeze", "dims"), ("squeeze", "default"),
          ("transpose", "int"), ("slice", "Tensor"), ("select", "int"), ("alias", "default"))

LOWERINGS: dict[Any, Lowering] = {
    aten.add.Tensor: _pw(_with_alpha("+")),
    aten.sub.Tensor: _pw(_with_alpha("-")),
    aten.mul.Tensor: _pw("({0} * {1})"),
    aten.div.Tensor: _pw("({0} / {1})", floating=True),
    aten.div.Tensor_mode: _pw("({0} / {1})", floating=True),  # rounding_mode=None only
    aten.neg.default: _pw("(-{0})"),
    aten.abs.default: _pw("({0} < 0 ? -{0} : {0})"),
    aten.reciprocal.default: _pw("(({T})1 / {0})", floating=True),
    aten.exp.default: _pw("exp({0})", floating=True),
    aten.expm1.default: _pw("expm1({0})", floating=True),
    aten.log.default: _pw("log({0})", floating=True),
    aten.log1p.default: _pw("log1p({0})", floating=True),
    aten.sqrt.default: _pw("sqrt({0})", floating=True),
    aten.rsqrt.default: _pw("(({T})1 / sqrt({0}))", floating=True),
    aten.sin.default: _pw("sin({0})", floating=True),
    aten.cos.default: _pw("cos({0})", floating=True),
    aten.tanh.default: _pw("tanh({0})", floating=True),
    aten.erf.default: _pw("erf({0})", floating=True),
    aten.sigmoid.default: _pw("(({T})1 / (({T})1 + exp(-{0})))", floating=True),
    aten.silu.default: _pw("({0} / (({T})1 + exp(-{0})))", floating=True),
    aten.gelu.default: _pw(_gelu, floating=True),
    aten.gelu_backward.default: _pw(_gelu_backward, floating=True),
    # relu keeps NaN (a NaN is not < 0).
    aten.relu.default: _pw("({0} < 0 ? ({T})0 : {0})"),
    aten.leaky_relu.default: _pw(_leaky_relu, floating=True),
    aten.clamp.default: _pw(_clamp),
    aten.square.default: _pw("({0} * {0})"),
    aten.pow.Tensor_Scalar: _pw("pow({0}, {1})", floating=True),
    # maximum/minimum propagate a NaN from either side.
    aten.maximum.default: _pw("(({0} != {0} || {0} > {1}) ? {0} : {1})"),
    aten.minimum.default: _pw("(({0} != {0} || {0} < {1}) ? {0} : {1})"),
    aten.where.self: _pw("({0} ? {1} : {2})", cast="where"),
    aten.logical_not.default: _pw("(!{0})", cast="none"),
    aten.logical_and.default: _pw("((bool){0} && (bool){1})", cast="none"),
    aten.logical_or.default: _pw("((bool){0} || (bool){1})", cast="none"),
    aten._to_copy.default: _pw("(({T}){0})", cast="none"),
    **{getattr(aten, name).Tensor: _pw(f"({{0}} {op} {{1}})", cast="common")
       for name, op in _COMPARE.items()},
    **{getattr(aten, name).Scalar: _pw(f"({{0}} {op} {{1}})", cast="common")
       for name, op in _COMPARE.items()},
    aten.sum.dim_IntList: Lowering("reduction"),
    aten.sum.default: Lowering("reduction"),
    aten.mean.dim: Lowering("reduction"),
    aten.amax.default: Lowering("reduction"),
    aten.amin.default: Lowering("reduction"),
    aten.prod.dim_int: Lowering("reduction"),
    aten.var.correction: Lowering("reduction"),
    aten._softmax.default: Lowering("reduction"),
    aten._log_softmax.default: Lowering("reduction"),
    **{getattr(getattr(aten, name), overload): Lowering("view")
       for name, overload in _VIEWS
       if hasattr(getattr(aten, name, None), overload)},
}


def lowering_of(target: Any) -> Lowering | None:
    """The row of an operator, or ``None`` for a fallback (a library call)."""
    return LOWERINGS.get(target)
