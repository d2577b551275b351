"""The operator table of the ONNX exporter: one row per aten operator of a traced graph.

Each row is a function ``(g, node, args, kwargs) -> output name(s)`` that adds the ONNX nodes
computing the operator: ``g`` is the :class:`~torch.onnx._builder.Builder`, ``node`` the traced
node (its outputs carry the shapes and dtypes the trace saw), ``args``/``kwargs`` its arguments
with every tensor a :class:`~torch.onnx._builder.Var`. An in-place operator (``relu_``) uses
its out-of-place row. Functions traced as one node (``aten::max_pool2d``...) get their
arguments by the function's own signature.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.jit._graph import Node
from torch.onnx._builder import Builder, Var, onnx_type

__all__ = ["SHAPE_ONLY", "TABLE", "lookup"]

Row = Callable[[Builder, Node, tuple[Any, ...], dict[str, Any]], Any]
TABLE: dict[str, Row] = {}

# Operators whose result depends only on their non-tensor arguments and the dtype of their
# tensor argument: the exporter stores their results as constants.
SHAPE_ONLY = frozenset({
    "aten::new_zeros", "aten::new_ones", "aten::new_full", "aten::new_empty",
})

_INT64_MAX = 2**63 - 1


def row(*kinds: str) -> Callable[[Row], Row]:
    def add(fn: Row) -> Row:
        for kind in kinds:
            TABLE[kind] = fn
        return fn

    return add


def lookup(kind: str) -> Row | None:
    """The row of ``kind``; an in-place operator falls back to its out-of-place row."""
    found = TABLE.get(kind)
    if found is None:
        name, dot, overload = kind.partition(".")
        if name.endswith("_") and not name.endswith("__"):
            found = TABLE.get(name[:-1] + dot + overload)
    return found


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str,
         default: Any = None) -> Any:
    if index < len(args):
        return args[index]
    return kwargs.get(name, default)


def _out(node: Node, i: int = 0) -> Any:
    return node.outputs[i]


def _bound(node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a function traced as one node, by its parameter names."""
    bound = inspect.signature(node.target).bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def _dim(d: int, rank: int) -> int:
    return d + rank if d < 0 else d


def _ntuple(x: Any, n: int) -> list[int]:
    if isinstance(x, (list, tuple)):
        return [int(v) for v in x] * (n if len(x) == 1 else 1)
    return [int(x)] * n


# -- elementwise -----------------------------------------------------------------------------

def _operand(g: Builder, x: Any, dtype: torch.dtype) -> str:
    """A tensor operand cast to ``dtype``, or a Python number as a 0-d constant of it."""
    if isinstance(x, Var):
        return g.cast(x, dtype)
    return g.const(x, dtype)


def _common_dtype(a: Any, b: Any) -> torch.dtype:
    """The dtype two operands compute in, by PyTorch's promotion (a Python number does not
    raise a tensor's category's dtype)."""
    ta = torch.empty((), dtype=a.dtype) if isinstance(a, Var) else a
    tb = torch.empty((), dtype=b.dtype) if isinstance(b, Var) else b
    return torch.result_type(ta, tb)


def _binary(op_type: str, compare: bool = False) -> Row:
    def build(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        a, b = args[0], args[1]
        dtype = _common_dtype(a, b) if compare else _out(node).dtype
        alpha = _arg(args, kwargs, 2, "alpha", 1)
        rhs = _operand(g, b, dtype)
        if alpha != 1:
            rhs = g.op("Mul", rhs, g.const(alpha, dtype))
        return g.op(op_type, _operand(g, a, dtype), rhs)

    return build


for _kinds, _op in (
    (("aten::add.Tensor", "aten::add.Scalar"), "Add"),
    (("aten::sub.Tensor", "aten::sub.Scalar"), "Sub"),
    (("aten::mul.Tensor", "aten::mul.Scalar"), "Mul"),
    (("aten::pow.Tensor_Tensor", "aten::pow.Tensor_Scalar", "aten::pow.Scalar"), "Pow"),
    (("aten::maximum",), "Max"),
    (("aten::minimum",), "Min"),
):
    row(*_kinds)(_binary(_op))

for _kinds, _op in (
    (("aten::eq.Tensor", "aten::eq.Scalar"), "Equal"),
    (("aten::gt.Tensor", "aten::gt.Scalar"), "Greater"),
    (("aten::lt.Tensor", "aten::lt.Scalar"), "Less"),
    (("aten::ge.Tensor", "aten::ge.Scalar"), "GreaterOrEqual"),
    (("aten::le.Tensor", "aten::le.Scalar"), "LessOrEqual"),
):
    row(*_kinds)(_binary(_op, compare=True))


@row("aten::ne.Tensor", "aten::ne.Scalar")
def _ne(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return g.op("Not", _binary("Equal", compare=True)(g, node, args, kwargs))


@row("aten::zeros_like", "aten::ones_like", "aten::full_like", "aten::empty_like")
def _fill_like(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    # the input's shape at run time, so that a dynamic axis stays dynamic
    from onnx import numpy_helper

    fills = {"aten::zeros_like": 0, "aten::ones_like": 1, "aten::empty_like": 0}
    value = fills.get(node.kind)
    if value is None:
        value = _arg(args, kwargs, 1, "fill_value")
    dtype = _out(node).dtype
    fill = numpy_helper.from_array(torch.tensor([value], dtype=dtype).numpy(), "value")
    return g.op("ConstantOfShape", g.op("Shape", args[0]), value=fill)


@row("aten::pow.Scalar")
def _pow_scalar(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    dtype = _out(node).dtype
    return g.op("Pow", _operand(g, args[0], dtype), _operand(g, args[1], dtype))


@row("aten::randn_like", "aten::rand_like")
def _random_like(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    # sampled by the runtime on each run, as the eager model samples on each call
    dtype = _out(node).dtype
    op_type = "RandomNormalLike" if node.kind == "aten::randn_like" else "RandomUniformLike"
    return g.op(op_type, args[0], dtype=onnx_type(g.onnx, dtype))


@row("aten::rsub.Scalar", "aten::rsub.Tensor")
def _rsub(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    dtype = _out(node).dtype
    alpha = _arg(args, kwargs, 2, "alpha", 1)
    x = _operand(g, args[0], dtype)
    if alpha != 1:
        x = g.op("Mul", x, g.const(alpha, dtype))
    return g.op("Sub", _operand(g, args[1], dtype), x)


@row("aten::div.Tensor", "aten::div.Scalar", "aten::div.Tensor_mode", "aten::div.Scalar_mode")
def _div(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    dtype = _out(node).dtype
    mode = _arg(args, kwargs, 2, "rounding_mode")
    a, b = _operand(g, args[0], dtype), _operand(g, args[1], dtype)
    if mode == "floor" and not dtype.is_floating_point:
        # a - mod(a, b) is an exact multiple of b (ONNX's integer Mod takes the divisor's
        # sign, as Python's does), so the truncating Div gives the floor
        return g.op("Div", g.op("Sub", a, g.op("Mod", a, b)), b)
    quotient = g.op("Div", a, b)
    if mode is None or not dtype.is_floating_point:
        return quotient  # ONNX's integer Div truncates, as rounding_mode="trunc" does
    if mode == "floor":
        return g.op("Floor", quotient)
    # trunc of a float quotient: toward zero
    return g.op("Mul", g.op("Sign", quotient), g.op("Floor", g.op("Abs", quotient)))


_UNARY = {
    "aten::relu": "Relu", "aten::tanh": "Tanh", "aten::sigmoid": "Sigmoid", "aten::exp": "Exp",
    "aten::log": "Log", "aten::sqrt": "Sqrt", "aten::neg": "Neg", "aten::abs": "Abs",
    "aten::erf": "Erf", "aten::sin": "Sin", "aten::cos": "Cos", "aten::floor": "Floor",
    "aten::ceil": "Ceil", "aten::reciprocal": "Reciprocal", "aten::sign": "Sign",
    "aten::logical_not": "Not", "aten::round": "Round", "aten::tan": "Tan",
    "aten::atan": "Atan", "aten::asin": "Asin", "aten::acos": "Acos", "aten::sinh": "Sinh",
    "aten::cosh": "Cosh", "aten::isnan": "IsNaN",
    # identities: copies and aliases are the same value in ONNX's value semantics
    "aten::clone": "Identity", "aten::alias": "Identity", "aten::detach": "Identity",
    "aten::lift_fresh": "Identity", "aten::contiguous": "Identity",
}


def _unary(op_type: str) -> Row:
    def build(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        return g.op(op_type, args[0])

    return build


for _kind, _op in _UNARY.items():
    row(_kind)(_unary(_op))


@row("aten::rsqrt")
def _rsqrt(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return g.op("Reciprocal", g.op("Sqrt", args[0]))


@row("aten::expm1")
def _expm1(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return g.op("Sub", g.op("Exp", args[0]), g.const(1, args[0].dtype))


@row("aten::log1p")
def _log1p(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return g.op("Log", g.op("Add", args[0], g.const(1, args[0].dtype)))


@row("aten::copy_")
def _copy(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    # the destination's values become the source's, cast and broadcast to the destination
    target = args[0]
    return g.op("Expand", g.cast(args[1], target.dtype), g.ints(target.shape))


@row("prims::fill_", "aten::fill_.Scalar", "aten::fill.Scalar")
def _fill(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    target = args[0]
    return g.op("Expand", _operand(g, args[1], target.dtype), g.ints(target.shape))


# bool tensors: logical ONNX operators; integer tensors: the bitwise ones (opset 18)
_BITWISE = {"and": ("And", "BitwiseAnd"), "or": ("Or", "BitwiseOr"), "xor": ("Xor", "BitwiseXor")}


def _bitwise(logical: str, bitwise: str) -> Row:
    def build(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        dtype = _out(node).dtype
        a, b = _operand(g, args[0], dtype), _operand(g, args[1], dtype)
        if dtype == torch.bool:
            return g.op(logical, a, b)
        if g.opset < 18:
            from torch.onnx.errors import UnsupportedOperatorError

            raise UnsupportedOperatorError(node.kind, g.opset, 18)
        return g.op(bitwise, a, b)

    return build


for _name, (_logical, _bitwise_op) in _BITWISE.items():
    row(f"aten::bitwise_{_name}.Tensor", f"aten::bitwise_{_name}.Scalar",
        f"aten::logical_{_name}")(_bitwise(_logical, _bitwise_op))


@row("aten::bitwise_not")
def _bitwise_not(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    if args[0].dtype == torch.bool:
        return g.op("Not", args[0])
    if g.opset < 18:
        from torch.onnx.errors import UnsupportedOperatorError

        raise UnsupportedOperatorError(node.kind, g.opset, 18)
    return g.op("BitwiseNot", args[0])


@row("aten::silu")
def _silu(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return g.op("Mul", args[0], g.op("Sigmoid", args[0]))


@row("aten::gelu")
def _gelu(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    approximate = _arg(args, kwargs, 1, "approximate", "none")
    if g.opset >= 20:
        return g.op("Gelu", x, approximate=approximate)
    half = g.const(0.5, x.dtype)
    one = g.const(1.0, x.dtype)
    if approximate == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = g.op("Mul", g.op("Mul", x, x), x)
        inner = g.op("Add", x, g.op("Mul", cube, g.const(0.044715, x.dtype)))
        t = g.op("Tanh", g.op("Mul", inner, g.const(math.sqrt(2 / math.pi), x.dtype)))
    else:  # 0.5 x (1 + erf(x / sqrt(2)))
        t = g.op("Erf", g.op("Mul", x, g.const(1 / math.sqrt(2), x.dtype)))
    return g.op("Mul", g.op("Mul", x, half), g.op("Add", one, t))


@row("aten::elu")
def _elu(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    alpha = float(_arg(args, kwargs, 1, "alpha", 1.0))
    scale = float(_arg(args, kwargs, 2, "scale", 1.0))
    input_scale = float(_arg(args, kwargs, 3, "input_scale", 1.0))
    if scale == 1.0 and input_scale == 1.0:
        return g.op("Elu", x, alpha=alpha)
    # scale * (x if x > 0 else alpha * (exp(input_scale * x) - 1)): F.selu's call, among others
    scaled = g.op("Mul", x, g.const(input_scale, x.dtype))
    negative = g.op("Mul", g.op("Sub", g.op("Exp", scaled), g.const(1.0, x.dtype)),
                    g.const(alpha, x.dtype))
    chosen = g.op("Where", g.op("Greater", x, g.const(0.0, x.dtype)), x, negative)
    return g.op("Mul", chosen, g.const(scale, x.dtype))


@row("aten::leaky_relu")
def _leaky_relu(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return g.op("LeakyRelu", args[0], alpha=float(_arg(args, kwargs, 1, "negative_slope", 0.01)))


@row("aten::celu")
def _celu(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    # x if x > 0 else alpha * (exp(x / alpha) - 1), written out: ONNX's Celu is float32-only
    x = args[0]
    alpha = float(_arg(args, kwargs, 1, "alpha", 1.0))
    curve = g.op("Exp", g.op("Div", x, g.const(alpha, x.dtype)))
    negative = g.op("Mul", g.op("Sub", curve, g.const(1.0, x.dtype)), g.const(alpha, x.dtype))
    return g.op("Where", g.op("Greater", x, g.const(0.0, x.dtype)), x, negative)


@row("aten::softplus")
def _softplus(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    # log(1 + exp(beta x)) / beta; the threshold (x beyond it is returned as is) only avoids
    # overflow in PyTorch's kernel, where the two agree to the dtype's precision
    x = args[0]
    beta = float(_arg(args, kwargs, 1, "beta", 1.0))
    if beta == 1.0:
        return g.op("Softplus", x)
    soft = g.op("Softplus", g.op("Mul", x, g.const(beta, x.dtype)))
    return g.op("Div", soft, g.const(beta, x.dtype))


@row("aten::hardsigmoid")
def _hardsigmoid(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return g.op("HardSigmoid", args[0], alpha=1.0 / 6.0, beta=0.5)


@row("aten::hardswish")
def _hardswish(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    return g.op("Mul", x, g.op("HardSigmoid", x, alpha=1.0 / 6.0, beta=0.5))


@row("aten::mish")
def _mish(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    return g.op("Mul", x, g.op("Tanh", g.op("Softplus", x)))


@row("aten::softshrink", "aten::hardshrink")
def _shrink(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    lambd = float(_arg(args, kwargs, 1, "lambd", 0.5))
    bias = lambd if node.kind == "aten::softshrink" else 0.0
    return g.op("Shrink", args[0], bias=bias, lambd=lambd)


@row("aten::threshold")
def _threshold(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    limit = _operand(g, _arg(args, kwargs, 1, "threshold"), x.dtype)
    value = _operand(g, _arg(args, kwargs, 2, "value"), x.dtype)
    return g.op("Where", g.op("Greater", x, limit), x, value)


@row("aten::glu")
def _glu(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    axis = _dim(_arg(args, kwargs, 1, "dim", -1), x.rank)
    half = x.shape[axis] // 2
    first, second = g.op("Split", x, g.ints([half, half]), axis=axis, outputs=2)
    return g.op("Mul", first, g.op("Sigmoid", second))


@row("aten::mse_loss")
def _mse_loss(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x, target = args[0], args[1]
    reduction = _arg(args, kwargs, 2, "reduction", 1)  # 0 none, 1 mean, 2 sum
    difference = g.op("Sub", x, _operand(g, target, x.dtype))
    squared = g.op("Mul", difference, difference)
    if reduction == 0:
        return squared
    op_type, since = ("ReduceMean", 18) if reduction == 1 else ("ReduceSum", 13)
    return g.axes_input(op_type, squared, None, since, keepdims=0)


def _reduced(g: Builder, loss: str, reduction: int) -> str:
    """``loss`` under PyTorch's reduction enum: 0 none, 1 mean, 2 sum (over every axis)."""
    if reduction == 0:
        return loss
    op_type, since = ("ReduceMean", 18) if reduction == 1 else ("ReduceSum", 13)
    return g.axes_input(op_type, loss, None, since, keepdims=0)


@row("aten::smooth_l1_loss", "aten::huber_loss")
def _smooth_l1_or_huber(g: Builder, node: Node, args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> str:
    # quadratic inside |d| < width, linear outside: 0.5 d^2 / beta | |d| - 0.5 beta (smooth L1),
    # 0.5 d^2 | delta (|d| - 0.5 delta) (Huber)
    x, target = args[0], args[1]
    reduction = _arg(args, kwargs, 2, "reduction", 1)
    huber = node.kind == "aten::huber_loss"
    width = float(_arg(args, kwargs, 3, "delta" if huber else "beta", 1.0))
    diff = g.op("Sub", x, _operand(g, target, x.dtype))
    size = g.op("Abs", diff)
    square = g.op("Mul", g.op("Mul", diff, diff), g.const(0.5, x.dtype))
    linear = g.op("Sub", size, g.const(0.5 * width, x.dtype))
    if huber:
        linear = g.op("Mul", linear, g.const(width, x.dtype))
    else:
        square = g.op("Div", square, g.const(width, x.dtype))
    loss = g.op("Where", g.op("Less", size, g.const(width, x.dtype)), square, linear)
    return _reduced(g, loss, reduction)


@row("aten::soft_margin_loss")
def _soft_margin_loss(g: Builder, node: Node, args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> str:
    x, target = args[0], args[1]
    margin = g.op("Neg", g.op("Mul", _operand(g, target, x.dtype), x))
    return _reduced(g, g.op("Softplus", margin), _arg(args, kwargs, 2, "reduction", 1))


@row("aten::binary_cross_entropy")
def _binary_cross_entropy(g: Builder, node: Node, args: tuple[Any, ...],
                          kwargs: dict[str, Any]) -> str:
    # -w (y log x + (1 - y) log(1 - x)), each log clamped to >= -100 as in PyTorch
    x, target = args[0], _operand(g, args[1], args[0].dtype)
    weight = _arg(args, kwargs, 2, "weight")
    one, floor = g.const(1.0, x.dtype), g.const(-100.0, x.dtype)
    log_x = g.op("Max", g.op("Log", x), floor)
    log_rest = g.op("Max", g.op("Log", g.op("Sub", one, x)), floor)
    loss = g.op("Neg", g.op("Add", g.op("Mul", target, log_x),
                            g.op("Mul", g.op("Sub", one, target), log_rest)))
    if weight is not None:
        loss = g.op("Mul", loss, _operand(g, weight, x.dtype))
    return _reduced(g, loss, _arg(args, kwargs, 3, "reduction", 1))


@row("aten::binary_cross_entropy_with_logits")
def _binary_cross_entropy_with_logits(g: Builder, node: Node, args: tuple[Any, ...],
                                      kwargs: dict[str, Any]) -> str:
    # (1 - y) x + lw softplus(-x) (= -lw log(sigmoid(x))), lw = 1 + (pos_weight - 1) y
    x, target = args[0], _operand(g, args[1], args[0].dtype)
    weight = _arg(args, kwargs, 2, "weight")
    pos_weight = _arg(args, kwargs, 3, "pos_weight")
    one = g.const(1.0, x.dtype)
    log_term = g.op("Softplus", g.op("Neg", x))
    if pos_weight is not None:
        extra = g.op("Sub", _operand(g, pos_weight, x.dtype), one)
        log_term = g.op("Mul", g.op("Add", one, g.op("Mul", extra, target)), log_term)
    loss = g.op("Add", g.op("Mul", g.op("Sub", one, target), x), log_term)
    if weight is not None:
        loss = g.op("Mul", loss, _operand(g, weight, x.dtype))
    return _reduced(g, loss, _arg(args, kwargs, 4, "reduction", 1))


@row("aten::rrelu_with_noise")
def _rrelu_with_noise(g: Builder, node: Node, args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> str:
    # evaluation: the leaky ReLU with the mean slope; training draws slopes ONNX cannot
    lower = float(_arg(args, kwargs, 2, "lower", 0.125))
    upper = float(_arg(args, kwargs, 3, "upper", 1.0 / 3))
    if _arg(args, kwargs, 4, "training", False):
        from torch.onnx.errors import UnsupportedOperatorError

        raise UnsupportedOperatorError("aten::rrelu_with_noise (training=True)", g.opset)
    return g.op("LeakyRelu", args[0], alpha=(lower + upper) / 2)


_REDUCTION_NAMES = ("none", "mean", "sum")  # PyTorch's reduction enum, as ONNX names them


@row("aten::nll_loss_forward", "aten::nll_loss2d_forward", "aten::nll_loss_nd",
     "aten::nll_loss")
def _nll_loss_forward(g: Builder, node: Node, args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> str | list[str | None]:
    # NegativeLogLikelihoodLoss over (N, C, d1, ...): the same weighted mean over the targets
    # not ignored; the total_weight output of the *_forward operators is not exported (only
    # the backward reads it)
    x, target = args[0], args[1]
    weight = _arg(args, kwargs, 2, "weight")
    reduction = int(_arg(args, kwargs, 3, "reduction", 1))
    ignore_index = int(_arg(args, kwargs, 4, "ignore_index", -100))
    if x.rank < 2:
        from torch.onnx.errors import UnsupportedOperatorError

        raise UnsupportedOperatorError(f"{node.kind} (an input without a batch dim)", g.opset)
    loss = g.op("NegativeLogLikelihoodLoss", x, g.cast(target, torch.int64),
                None if weight is None else _operand(g, weight, x.dtype),
                reduction=_REDUCTION_NAMES[reduction], ignore_index=ignore_index)
    return [loss, None] if node.kind.endswith("_forward") else loss


@row("aten::affine_grid_generator")
def _affine_grid_generator(g: Builder, node: Node, args: tuple[Any, ...],
                           kwargs: dict[str, Any]) -> str:
    # base (1, points, n + 1), fixed by the static size, times theta^T: MatMul, then the
    # (N, *spatial, n) shape (ONNX's AffineGrid needs opset 20)
    from torch._aten.sampling import affine_base_grid

    theta = args[0]
    size = [int(s) for s in _arg(args, kwargs, 1, "size")]
    align_corners = bool(_arg(args, kwargs, 2, "align_corners"))
    spatial = size[2:]
    base = affine_base_grid(spatial, align_corners,
                            torch.empty(0, dtype=theta.dtype))
    points = g.op("MatMul", g.tensor(base, g.fresh("affine_base")),
                  g.op("Transpose", theta, perm=[0, 2, 1]))
    return g.op("Reshape", points, g.ints([theta.shape[0], *spatial, len(spatial)]))


# grid_sampler's enums as GridSample's modes: opset 20 renamed bilinear/bicubic linear/cubic
_GRID_SAMPLE_MODES = {16: ("bilinear", "nearest", "bicubic"), 20: ("linear", "nearest", "cubic")}
_GRID_SAMPLE_PADDINGS = ("zeros", "border", "reflection")


@row("aten::grid_sampler_2d", "aten::grid_sampler_3d")
def _grid_sampler(g: Builder, node: Node, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> str:
    x, grid = args[0], args[1]
    interpolation = int(_arg(args, kwargs, 2, "interpolation_mode"))
    padding = int(_arg(args, kwargs, 3, "padding_mode"))
    align_corners = bool(_arg(args, kwargs, 4, "align_corners"))
    since = 16 if node.kind == "aten::grid_sampler_2d" else 20  # volumes: GridSample-20
    if g.opset < since:
        from torch.onnx.errors import UnsupportedOperatorError

        raise UnsupportedOperatorError(node.kind, g.opset, since)
    modes = _GRID_SAMPLE_MODES[20 if g.opset >= 20 else 16]
    return g.op("GridSample", x, _operand(g, grid, x.dtype), mode=modes[interpolation],
                padding_mode=_GRID_SAMPLE_PADDINGS[padding], align_corners=int(align_corners))


@row("aten::clamp", "aten::clamp_min", "aten::clamp_max", "aten::hardtanh")
def _clamp(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    if node.kind == "aten::clamp_max":
        low, high = None, _arg(args, kwargs, 1, "max")
    elif node.kind == "aten::hardtanh":
        low, high = _arg(args, kwargs, 1, "min_val", -1.0), _arg(args, kwargs, 2, "max_val", 1.0)
    else:
        low = _arg(args, kwargs, 1, "min")
        high = _arg(args, kwargs, 2, "max") if node.kind == "aten::clamp" else None
    bounds = [None if b is None else _operand(g, b, x.dtype) for b in (low, high)]
    return g.op("Clip", x, *bounds)


@row("aten::where.self", "aten::where.ScalarSelf", "aten::where.ScalarOther",
     "aten::where.Scalar")
def _where(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    dtype = _out(node).dtype
    return g.op("Where", g.cast(args[0], torch.bool), _operand(g, args[1], dtype),
                _operand(g, args[2], dtype))


@row("aten::masked_fill.Scalar", "aten::masked_fill.Tensor")
def _masked_fill(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x, mask, value = args[0], args[1], args[2]
    return g.op("Where", g.cast(mask, torch.bool), _operand(g, value, x.dtype), x)


@row("aten::_to_copy")
def _to_copy(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return g.op("Identity", g.cast(args[0], _out(node).dtype))


# -- softmax, normalisation ------------------------------------------------------------------

@row("aten::_softmax", "aten::softmax.int")
def _softmax(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    return g.op("Softmax", g.cast(x, _out(node).dtype), axis=_dim(args[1], x.rank))


@row("aten::_log_softmax", "aten::log_softmax.int")
def _log_softmax(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    return g.op("LogSoftmax", g.cast(x, _out(node).dtype), axis=_dim(args[1], x.rank))


def _layer_norm_parts(g: Builder, x: Var, shape: Sequence[int], weight: Any, bias: Any,
                      eps: float, outputs: int) -> Any:
    axis = x.rank - len(shape)
    if g.opset >= 17:
        scale = weight if weight is not None else g.const(torch.ones(*shape), x.dtype)
        return g.op("LayerNormalization", x, scale, bias, axis=axis, epsilon=float(eps),
                    outputs=outputs)
    axes = list(range(axis, x.rank))
    mean = g.axes_input("ReduceMean", x, axes, 18, keepdims=1)
    centred = g.op("Sub", x, mean)
    var = g.axes_input("ReduceMean", g.op("Mul", centred, centred), axes, 18, keepdims=1)
    rstd = g.op("Reciprocal", g.op("Sqrt", g.op("Add", var, g.const(float(eps), x.dtype))))
    y = g.op("Mul", centred, rstd)
    if weight is not None:
        y = g.op("Mul", y, weight)
    if bias is not None:
        y = g.op("Add", y, bias)
    return y if outputs == 1 else [y, mean, rstd]


@row("aten::layer_norm")
def _layer_norm(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return _layer_norm_parts(g, args[0], args[1], _arg(args, kwargs, 2, "weight"),
                             _arg(args, kwargs, 3, "bias"), _arg(args, kwargs, 4, "eps", 1e-5),
                             1)


@row("aten::native_layer_norm")
def _native_layer_norm(g: Builder, node: Node, args: tuple[Any, ...],
                       kwargs: dict[str, Any]) -> list[str]:
    return _layer_norm_parts(g, args[0], args[1], args[2], args[3], args[4], 3)


@row("aten::batch_norm")
def _batch_norm(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    a = _bound(node, args, kwargs)
    x = a["input"]
    if a["training"]:
        from torch.onnx.errors import OnnxExporterError

        raise OnnxExporterError("aten::batch_norm in training mode (batch statistics) is not "
                                "exported: export with training=TrainingMode.EVAL (the "
                                "default) or call model.eval() first")
    channels = x.shape[1]
    scale = a["weight"] if a["weight"] is not None else g.const(torch.ones(channels), x.dtype)
    shift = a["bias"] if a["bias"] is not None else g.const(torch.zeros(channels), x.dtype)
    return g.op("BatchNormalization", x, scale, shift, a["running_mean"], a["running_var"],
                epsilon=float(a["eps"]))


def _normalized(g: Builder, x: Any, axes: list[int], eps: float,
                dtype: torch.dtype) -> tuple[str, str, str]:
    """(x - mean) * rstd over ``axes`` (kept as size-1 dims), with the mean and rstd."""
    mean = g.axes_input("ReduceMean", x, axes, 18, keepdims=1)
    centred = g.op("Sub", x, mean)
    var = g.axes_input("ReduceMean", g.op("Mul", centred, centred), axes, 18, keepdims=1)
    rstd = g.op("Reciprocal", g.op("Sqrt", g.op("Add", var, g.const(float(eps), dtype))))
    return g.op("Mul", centred, rstd), mean, rstd


def _per_channel(g: Builder, y: str, weight: Any, bias: Any, rank: int) -> str:
    """``y * weight + bias`` with (C,) vectors broadcast along dim 1 of a rank-``rank`` y."""
    shape = g.ints([-1] + [1] * (rank - 2))
    if weight is not None:
        y = g.op("Mul", y, g.op("Reshape", weight, shape))
    if bias is not None:
        y = g.op("Add", y, g.op("Reshape", bias, shape))
    return y


@row("aten::adaptive_max_pool2d")
def _adaptive_max_pool2d(g: Builder, node: Node, args: tuple[Any, ...],
                         kwargs: dict[str, Any]) -> list[str]:
    x = args[0]
    outs = [int(v) for v in _arg(args, kwargs, 1, "output_size", [])]
    *lead, h, w = x.shape
    flat, cell = g.ints([*lead, -1]), g.ints([*lead, 1])
    values, indices = [], []
    # one ReduceMax / ArgMax per window [floor(i*L/O), ceil((i+1)*L/O)) (first maximum)
    for i in range(outs[0]):
        r0, r1 = (i * h) // outs[0], -(-((i + 1) * h) // outs[0])
        for j in range(outs[1]):
            c0, c1 = (j * w) // outs[1], -(-((j + 1) * w) // outs[1])
            window = g.op("Reshape", g.op("Slice", x, g.ints([r0, c0]), g.ints([r1, c1]),
                                          g.ints([-2, -1])), flat)
            values.append(g.axes_input("ReduceMax", window, [-1], 18, keepdims=1))
            tap = g.op("ArgMax", window, axis=-1, keepdims=1)
            width = g.const(c1 - c0, torch.int64)
            row = g.op("Add", g.op("Div", tap, width), g.const(r0, torch.int64))
            col = g.op("Add", g.op("Mod", tap, width), g.const(c0, torch.int64))
            indices.append(g.op("Add", g.op("Mul", row, g.const(w, torch.int64)), col))
    shape = g.ints([*lead, *outs])
    return [g.op("Reshape", g.op("Concat", *[g.op("Reshape", v, cell) for v in values],
                                 axis=-1), shape),
            g.op("Reshape", g.op("Concat", *indices, axis=-1), shape)]


@row("aten::native_batch_norm")
def _native_batch_norm(g: Builder, node: Node, args: tuple[Any, ...],
                       kwargs: dict[str, Any]) -> list[str]:
    x, weight, bias = args[0], _arg(args, kwargs, 1, "weight"), _arg(args, kwargs, 2, "bias")
    eps = float(_arg(args, kwargs, 7, "eps", 1e-5))
    if not _arg(args, kwargs, 5, "training"):
        channels = x.shape[1]
        scale = weight if weight is not None else g.const(torch.ones(channels), x.dtype)
        shift = bias if bias is not None else g.const(torch.zeros(channels), x.dtype)
        y = g.op("BatchNormalization", x, scale, shift, _arg(args, kwargs, 3, "running_mean"),
                 _arg(args, kwargs, 4, "running_var"), epsilon=eps)
        empty = g.const(torch.zeros(0), x.dtype)
        return [y, empty, g.op("Identity", empty)]
    # batch statistics (instance norm reaches this on its (1, N*C, *) view): the running
    # statistics' update is a side effect an inference graph drops
    y, mean, rstd = _normalized(g, x, [0, *range(2, x.rank)], eps, x.dtype)
    flat = g.ints([-1])
    return [_per_channel(g, y, weight, bias, x.rank), g.op("Reshape", mean, flat),
            g.op("Reshape", rstd, flat)]


@row("aten::native_group_norm")
def _native_group_norm(g: Builder, node: Node, args: tuple[Any, ...],
                       kwargs: dict[str, Any]) -> list[str]:
    x, weight, bias = args[0], _arg(args, kwargs, 1, "weight"), _arg(args, kwargs, 2, "bias")
    n, group = int(_arg(args, kwargs, 3, "N")), int(_arg(args, kwargs, 6, "group"))
    grouped = g.op("Reshape", x, g.ints([n, group, -1]))
    y, mean, rstd = _normalized(g, grouped, [2], float(_arg(args, kwargs, 7, "eps", 1e-5)),
                               x.dtype)
    y = g.op("Reshape", y, g.ints(list(x.shape)))
    stats = g.ints([n, group])
    return [_per_channel(g, y, weight, bias, x.rank), g.op("Reshape", mean, stats),
            g.op("Reshape", rstd, stats)]


# -- linear algebra, convolution -------------------------------------------------------------

@row("aten::matmul", "aten::mm", "aten::bmm")
def _matmul(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return g.op("MatMul", args[0], args[1])


@row("aten::linear")
def _linear(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    a = _bound(node, args, kwargs)  # F.linear's arguments
    x, weight, bias = a["input"], a["weight"], a["bias"]
    if x.rank == 2 and bias is not None:  # a batch of rows: one Gemm, as PyTorch exports it
        return g.op("Gemm", x, weight, bias, transB=1)
    out = g.op("MatMul", x, g.op("Transpose", weight, perm=[1, 0]))
    return out if bias is None else g.op("Add", out, bias)


@row("aten::addmm")
def _addmm(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    beta = _arg(args, kwargs, 3, "beta", 1)
    alpha = _arg(args, kwargs, 4, "alpha", 1)
    return g.op("Gemm", args[1], args[2], args[0], alpha=float(alpha), beta=float(beta))


@row("aten::baddbmm", "aten::addbmm")
def _baddbmm(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    dtype = _out(node).dtype
    beta = _arg(args, kwargs, 3, "beta", 1)
    alpha = _arg(args, kwargs, 4, "alpha", 1)
    product = g.op("MatMul", args[1], args[2])
    if node.kind == "aten::addbmm":
        product = g.axes_input("ReduceSum", product, [0], 13, keepdims=0)
    product = g.op("Mul", product, g.const(alpha, dtype))
    return g.op("Add", g.op("Mul", args[0], g.const(beta, dtype)), product)


@row("aten::convolution", "aten::_convolution")
def _convolution(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x, weight, bias, stride, padding, dilation, transposed, output_padding, groups = args[:9]
    n = weight.rank - 2
    pads = _ntuple(padding, n)
    attrs = {"strides": _ntuple(stride, n), "pads": pads + pads,
             "dilations": _ntuple(dilation, n), "group": int(groups),
             "kernel_shape": list(weight.shape[2:])}
    if transposed:
        return g.op("ConvTranspose", x, weight, bias,
                    output_padding=_ntuple(output_padding, n), **attrs)
    return g.op("Conv", x, weight, bias, **attrs)


@row("aten::scaled_dot_product_attention")
def _sdpa(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    q, k, v = args[0], args[1], args[2]
    mask = _arg(args, kwargs, 3, "attn_mask")
    causal = _arg(args, kwargs, 5, "is_causal", False)
    scale = _arg(args, kwargs, 6, "scale")
    if _arg(args, kwargs, 7, "enable_gqa", False) and q.shape[-3] != k.shape[-3]:
        from torch.onnx.errors import UnsupportedOperatorError

        raise UnsupportedOperatorError("aten::scaled_dot_product_attention (enable_gqa)",
                                       g.opset)
    dtype = q.dtype
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    perm = list(range(k.rank - 2)) + [k.rank - 1, k.rank - 2]
    scores = g.op("Mul", g.op("MatMul", q, g.op("Transpose", k, perm=perm)),
                  g.const(scale, dtype))  # (..., L, S); dropout_p is training only
    length, source = q.shape[-2], k.shape[-2]
    if causal:
        future = torch.ones(length, source, dtype=torch.bool).triu(1)
        scores = g.op("Add", scores, g.const(torch.zeros(length, source).masked_fill(
            future, -math.inf), dtype))
    if mask is not None:
        if mask.dtype == torch.bool:
            scores = g.op("Add", scores, g.op("Where", mask, g.const(0.0, dtype),
                                              g.const(-math.inf, dtype)))
        else:
            scores = g.op("Add", scores, g.cast(mask, dtype))
    return g.op("MatMul", g.op("Softmax", scores, axis=-1), v)


# -- pooling (functions traced as one node) --------------------------------------------------

def _batched(g: Builder, x: Var, n: int, build: Callable[[str], str]) -> str:
    """Run a pooling node on an unbatched input through a batch of one."""
    if x.rank == n + 2:
        return build(x.name)
    pooled = build(g.axes_input("Unsqueeze", x, [0], 13))
    return g.axes_input("Squeeze", pooled, [0], 13)


def _pool_attrs(a: dict[str, Any], n: int) -> dict[str, Any]:
    kernel = _ntuple(a["kernel_size"], n)
    stride = a["stride"]
    strides = kernel if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else _ntuple(stride, n)
    pads = _ntuple(a["padding"], n)
    return {"kernel_shape": kernel, "strides": strides, "pads": pads + pads,
            "ceil_mode": int(bool(a["ceil_mode"]))}


@row("aten::max_pool1d", "aten::max_pool2d", "aten::max_pool3d")
def _max_pool(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    a = _bound(node, args, kwargs)
    if a["return_indices"]:
        from torch.onnx.errors import UnsupportedOperatorError

        raise UnsupportedOperatorError(f"{node.kind} (return_indices=True)", g.opset)
    n = a["n"]
    attrs = _pool_attrs(a, n)
    attrs["dilations"] = _ntuple(a["dilation"], n)
    return _batched(g, a["input"], n, lambda x: g.op("MaxPool", x, **attrs))


@row("aten::avg_pool1d", "aten::avg_pool2d", "aten::avg_pool3d")
def _avg_pool(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    a = _bound(node, args, kwargs)
    if a["divisor_override"]:
        from torch.onnx.errors import UnsupportedOperatorError

        raise UnsupportedOperatorError(f"{node.kind} (divisor_override)", g.opset)
    n = a["n"]
    attrs = _pool_attrs(a, n)
    attrs["count_include_pad"] = int(bool(a["count_include_pad"]))
    return _batched(g, a["input"], n, lambda x: g.op("AveragePool", x, **attrs))


@row("aten::adaptive_avg_pool1d", "aten::adaptive_avg_pool2d", "aten::adaptive_avg_pool3d")
def _adaptive_avg_pool(g: Builder, node: Node, args: tuple[Any, ...],
                       kwargs: dict[str, Any]) -> str:
    a = _bound(node, args, kwargs)
    x, n = a["input"], a["n"]
    sizes = x.shape[-n:]
    outs = _out(node).shape[-n:]
    if all(o == 1 for o in outs):
        return _batched(g, x, n, lambda v: g.op("GlobalAveragePool", v))
    if any(o == 0 or s % o for s, o in zip(sizes, outs)):
        from torch.onnx.errors import UnsupportedOperatorError

        raise UnsupportedOperatorError(
            f"{node.kind} (input size {list(sizes)} not a multiple of {list(outs)})", g.opset)
    kernel = [s // o for s, o in zip(sizes, outs)]
    return _batched(g, x, n, lambda v: g.op("AveragePool", v, kernel_shape=kernel,
                                            strides=kernel))


# -- shapes and views ------------------------------------------------------------------------

def _reshape_to(g: Builder, x: Var, node: Node, requested: Sequence[int] | None) -> str:
    """Reshape to the traced output shape, writing ``0`` (copy the input's size) where a
    dimension kept its size at its place and ``-1`` where the code asked for it, so that a
    dynamic axis (the batch) stays dynamic."""
    target = _out(node).shape
    shape = []
    for i, size in enumerate(target):
        if requested is not None and i < len(requested) and requested[i] == -1:
            shape.append(-1)
        elif i < x.rank and x.shape[i] == size and size != 0:
            shape.append(0)
        else:
            shape.append(size)
    return g.op("Reshape", x, g.ints(shape))


@row("aten::reshape", "aten::view", "aten::_unsafe_view", "aten::_reshape_alias")
def _reshape(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    return _reshape_to(g, args[0], node, list(args[1]))


@row("aten::flatten.using_ints", "aten::unflatten.int")
def _flatten(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    requested = None
    if node.kind == "aten::flatten.using_ints" and x.rank:
        start = _dim(_arg(args, kwargs, 1, "start_dim", 0), x.rank)
        requested = [0] * start + [-1]  # the flattened dim is the inferred one
    return _reshape_to(g, x, node, requested)


@row("aten::permute")
def _permute(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    return g.op("Transpose", x, perm=[_dim(d, x.rank) for d in args[1]])


@row("aten::transpose.int")
def _transpose(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    perm = list(range(x.rank))
    a, b = _dim(args[1], x.rank), _dim(args[2], x.rank)
    perm[a], perm[b] = perm[b], perm[a]
    return g.op("Transpose", x, perm=perm)


@row("aten::t")
def _t(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    return g.op("Transpose", x, perm=[1, 0]) if x.rank == 2 else g.op("Identity", x)


@row("aten::unsqueeze")
def _unsqueeze(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    return g.axes_input("Unsqueeze", x, [_dim(args[1], x.rank + 1)], 13)


@row("aten::squeeze", "aten::squeeze.dim", "aten::squeeze.dims")
def _squeeze(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    if len(args) > 1:
        dims = args[1] if isinstance(args[1], (list, tuple)) else [args[1]]
    else:
        dims = range(x.rank)
    axes = [_dim(d, x.rank) for d in dims if x.rank and x.shape[_dim(d, x.rank)] == 1]
    if not axes:
        return g.op("Identity", x)
    return g.axes_input("Squeeze", x, axes, 13)


@row("aten::expand")
def _expand(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    target = list(_out(node).shape)
    offset = len(target) - x.rank
    # 1 keeps the input's size (ONNX Expand broadcasts), so a dynamic axis stays dynamic
    shape = [1 if i >= offset and x.shape[i - offset] == size else size
             for i, size in enumerate(target)]
    return g.op("Expand", x, g.ints(shape))


@row("aten::select.int")
def _select(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    return g.op("Gather", x, g.const(int(args[2]), torch.int64), axis=_dim(args[1], x.rank))


@row("aten::slice.Tensor")
def _slice(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    dim = _dim(_arg(args, kwargs, 1, "dim", 0), x.rank)
    start = _arg(args, kwargs, 2, "start")
    end = _arg(args, kwargs, 3, "end")
    step = _arg(args, kwargs, 4, "step", 1)
    start = 0 if start is None else max(min(int(start), _INT64_MAX), -_INT64_MAX)
    end = _INT64_MAX if end is None else max(min(int(end), _INT64_MAX), -_INT64_MAX)
    return g.op("Slice", x, g.ints([start]), g.ints([end]), g.ints([dim]), g.ints([step]))


@row("aten::narrow")
def _narrow(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x, dim, start, length = args[:4]
    return _slice(g, node, (x, dim, start, start + length, 1), {})


@row("aten::cat", "aten::concat", "aten::concatenate")
def _cat(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    dtype = _out(node).dtype
    parts = [t for t in args[0] if not (t.rank == 1 and t.shape[0] == 0)]  # legacy empties
    axis = _dim(_arg(args, kwargs, 1, "dim", 0), len(_out(node).shape))
    return g.op("Concat", *[g.cast(t, dtype) for t in parts], axis=axis)


@row("aten::stack")
def _stack(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    dtype = _out(node).dtype
    axis = _dim(_arg(args, kwargs, 1, "dim", 0), len(_out(node).shape))
    parts = [g.axes_input("Unsqueeze", g.cast(t, dtype), [axis], 13) for t in args[0]]
    return g.op("Concat", *parts, axis=axis)


@row("aten::chunk", "aten::split.Tensor", "aten::split_with_sizes", "aten::unbind.int",
     "aten::split.sizes", "aten::tensor_split.sections")
def _split(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    x = args[0]
    dims = {"aten::chunk": 2, "aten::unbind.int": 1}
    index = dims.get(node.kind, 2)
    axis = _dim(_arg(args, kwargs, index, "dim", 0), x.rank)
    unbind = node.kind == "aten::unbind.int"
    sizes = [1 if unbind else v.shape[axis] for v in node.outputs]
    if len(sizes) == 1:
        parts = [g.op("Identity", x)]
    else:
        parts = g.op("Split", x, g.ints(sizes), axis=axis, outputs=len(sizes))
    if unbind:
        parts = [g.axes_input("Squeeze", p, [axis], 13) for p in parts]
    return parts


@row("aten::index_select")
def _index_select(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    return g.op("Gather", x, args[2], axis=_dim(args[1], x.rank))


@row("aten::embedding")
def _embedding(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    a = _bound(node, args, kwargs)  # F.embedding's arguments
    if a["max_norm"] is not None:
        from torch.onnx.errors import UnsupportedOperatorError

        raise UnsupportedOperatorError("aten::embedding (max_norm renormalises the weight "
                                       "in place)", g.opset)
    return g.op("Gather", a["weight"], a["input"], axis=0)


@row("aten::triu", "aten::tril")
def _trilu(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    diagonal = _arg(args, kwargs, 1, "diagonal", 0)
    return g.op("Trilu", args[0], g.const(int(diagonal), torch.int64),
                upper=int(node.kind == "aten::triu"))


_PAD_MODES = {"constant": ("constant", 11), "reflect": ("reflect", 11),
              "replicate": ("edge", 11), "circular": ("wrap", 19)}


@row("aten::pad")
def _pad(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    a = _bound(node, args, kwargs)  # F.pad's arguments
    x, widths = a["input"], [int(p) for p in a["pad"]]
    mode, since = _PAD_MODES[a["mode"]]
    if g.opset < since or min(widths, default=0) < 0:
        from torch.onnx.errors import UnsupportedOperatorError

        detail = "negative padding" if g.opset >= since else f"mode {a['mode']!r}"
        raise UnsupportedOperatorError(f"aten::pad ({detail})", g.opset,
                                       None if g.opset >= since else since)
    begins, ends = [0] * x.rank, [0] * x.rank
    for k in range(len(widths) // 2):  # (before, after) pairs from the last dim backwards
        begins[x.rank - 1 - k], ends[x.rank - 1 - k] = widths[2 * k], widths[2 * k + 1]
    value = None
    if mode == "constant":
        value = g.const(0.0 if a["value"] is None else a["value"], x.dtype)
    return g.op("Pad", x, g.ints(begins + ends), value, mode=mode)


@row("aten::constant_pad_nd")
def _constant_pad_nd(g: Builder, node: Node, args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> str:
    x, widths = args[0], [int(p) for p in _arg(args, kwargs, 1, "pad", [])]
    value = _arg(args, kwargs, 2, "value", 0)
    begins, ends = [0] * x.rank, [0] * x.rank
    for k in range(len(widths) // 2):  # (before, after) pairs from the last dim backwards
        begins[x.rank - 1 - k], ends[x.rank - 1 - k] = widths[2 * k], widths[2 * k + 1]
    # ONNX Pad (opset 11 on) crops where a width is negative, as constant_pad_nd does
    return g.op("Pad", x, g.ints(begins + ends), g.const(value, x.dtype), mode="constant")


def _shuffle(g: Builder, x: Any, split: list[int], perm: list[int], out: list[int]) -> str:
    """Reshape ``x`` to ``split``, permute by ``perm`` and reshape to ``out``."""
    grouped = g.op("Reshape", x, g.ints(split))
    return g.op("Reshape", g.op("Transpose", grouped, perm=perm), g.ints(out))


@row("aten::pixel_shuffle")
def _pixel_shuffle(g: Builder, node: Node, args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> str:
    x, r = args[0], int(_arg(args, kwargs, 1, "upscale_factor", 1))
    *lead, c, h, w = x.shape
    k = len(lead)
    return _shuffle(g, x, [*lead, c // (r * r), r, r, h, w],
                    [*range(k), k, k + 3, k + 1, k + 4, k + 2],
                    [*lead, c // (r * r), h * r, w * r])


@row("aten::pixel_unshuffle")
def _pixel_unshuffle(g: Builder, node: Node, args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> str:
    x, r = args[0], int(_arg(args, kwargs, 1, "downscale_factor", 1))
    *lead, c, h, w = x.shape
    k = len(lead)
    return _shuffle(g, x, [*lead, c, h // r, r, w // r, r],
                    [*range(k), k, k + 2, k + 4, k + 1, k + 3],
                    [*lead, c * r * r, h // r, w // r])


@row("aten::upsample_nearest2d")
def _upsample_nearest2d(g: Builder, node: Node, args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> str:
    x = args[0]
    sizes = [int(v) for v in _arg(args, kwargs, 1, "output_size", [])]
    scales = [_arg(args, kwargs, 2, "scales_h", None), _arg(args, kwargs, 3, "scales_w", None)]
    # asymmetric + floor is upsample_nearest2d's map: output i reads floor(i / scale); the
    # caller's scales drive it when both are given, as in the eager kernel, else the sizes
    attrs = {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
             "nearest_mode": "floor"}
    if None not in scales:
        factors = g.const([1.0, 1.0, *(float(v) for v in scales)], torch.float32)
        return g.op("Resize", x, None, factors, **attrs)
    return g.op("Resize", x, None, None, g.ints([*x.shape[:2], *sizes]), **attrs)


@row("aten::upsample_bilinear2d")
def _upsample_bilinear2d(g: Builder, node: Node, args: tuple[Any, ...],
                         kwargs: dict[str, Any]) -> str:
    x = args[0]
    sizes = [int(v) for v in _arg(args, kwargs, 1, "output_size", [])]
    scales = [_arg(args, kwargs, 3, "scales_h", None), _arg(args, kwargs, 4, "scales_w", None)]
    # half_pixel is upsample_bilinear2d's map, (i + 0.5) / scale - 0.5 (clamped at the edges),
    # with the caller's scales when both are given, else the sizes' ratio
    align = bool(_arg(args, kwargs, 2, "align_corners", False))
    attrs = {"mode": "linear",
             "coordinate_transformation_mode": "align_corners" if align else "half_pixel"}
    if None not in scales and not align:
        factors = g.const([1.0, 1.0, *(float(v) for v in scales)], torch.float32)
        return g.op("Resize", x, None, factors, **attrs)
    return g.op("Resize", x, None, None, g.ints([*x.shape[:2], *sizes]), **attrs)


def _block_settings(args: tuple[Any, ...], kwargs: dict[str, Any],
                    first: int) -> list[list[int]]:
    """(kernel_size, dilation, padding, stride) of im2col / col2im, as pairs."""
    names = ("kernel_size", "dilation", "padding", "stride")
    out = []
    for i, name in enumerate(names):
        value = _arg(args, kwargs, first + i, name, 1)
        out.append(_ntuple(value, 2))
    return out


@row("aten::im2col")
def _im2col(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    k, d, p, s = _block_settings(args, kwargs, 1)
    batched = x.rank == 4
    planes = x if batched else g.axes_input("Unsqueeze", x, [0], 13)
    channels = x.shape[-3]
    # a grouped convolution with one-hot kernels: output channel c*kH*kW + t copies tap t of
    # channel c, which is im2col's column order
    taps = k[0] * k[1]
    weight = torch.zeros(channels * taps, 1, k[0], k[1])
    for c in range(channels):
        for t in range(taps):
            weight[c * taps + t, 0, t // k[1], t % k[1]] = 1.0
    cols = g.op("Conv", planes, g.const(weight, x.dtype), kernel_shape=k, dilations=d,
                pads=[p[0], p[1], p[0], p[1]], strides=s, group=channels)
    out = g.op("Reshape", cols, g.ints([0, channels * taps, -1]))
    return out if batched else g.axes_input("Squeeze", out, [0], 13)


@row("aten::col2im")
def _col2im(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    if g.opset < 18:
        from torch.onnx.errors import UnsupportedOperatorError

        raise UnsupportedOperatorError(node.kind, g.opset, 18)
    x = args[0]
    size = _ntuple(_arg(args, kwargs, 1, "output_size", []), 2)
    k, d, p, s = _block_settings(args, kwargs, 2)
    batched = x.rank == 3
    cols = x if batched else g.axes_input("Unsqueeze", x, [0], 13)
    out = g.op("Col2Im", cols, g.ints(size), g.ints(k), dilations=d,
               pads=[p[0], p[1], p[0], p[1]], strides=s)
    return out if batched else g.axes_input("Squeeze", out, [0], 13)


@row("aten::einsum")
def _einsum(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    dtype = _out(node).dtype
    return g.op("Einsum", *[g.cast(t, dtype) for t in args[1]], equation=args[0])


@row("aten::cumsum")
def _cumsum(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    source = g.cast(x, _out(node).dtype)
    return g.op("CumSum", source, g.const(_dim(args[1], x.rank), torch.int64))


@row("aten::flip")
def _flip(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    axes = [_dim(d, x.rank) for d in args[1]]
    count = len(axes)
    return g.op("Slice", x, g.ints([-1] * count), g.ints([-_INT64_MAX] * count), g.ints(axes),
                g.ints([-1] * count))


@row("aten::repeat")
def _repeat(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x, repeats = args[0], list(args[1])
    extra = len(repeats) - x.rank
    source = x.name
    if extra > 0:  # repeat adds leading dims of size 1 first
        source = g.op("Reshape", x, g.ints([1] * extra + list(x.shape)))
    return g.op("Tile", source, g.ints(repeats))


@row("aten::linalg_vector_norm")
def _vector_norm(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    order = _arg(args, kwargs, 1, "ord", 2)
    axes = _reduce_dims(x, _arg(args, kwargs, 2, "dim"))
    keepdim = int(bool(_arg(args, kwargs, 3, "keepdim", False)))
    kinds = {1: "ReduceL1", 2: "ReduceL2", math.inf: "ReduceMax"}
    op_type = kinds.get(order)
    if op_type is None:
        from torch.onnx.errors import UnsupportedOperatorError

        raise UnsupportedOperatorError(f"aten::linalg_vector_norm (ord={order})", g.opset)
    source = g.cast(x, _out(node).dtype)
    if order == math.inf:
        source = g.op("Abs", source)
    since = 18
    return g.axes_input(op_type, source, axes, since, keepdims=keepdim)


# -- reductions ------------------------------------------------------------------------------

def _reduce_dims(x: Var, dims: Any) -> list[int] | None:
    if dims is None or (isinstance(dims, (list, tuple)) and not dims):
        return None
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    return [_dim(d, x.rank) for d in dims]


def _reduction(op_type: str, since: int) -> Row:
    def build(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        x = args[0]
        axes = _reduce_dims(x, _arg(args, kwargs, 1, "dim"))
        keepdim = bool(_arg(args, kwargs, 2, "keepdim", False))
        source = g.cast(x, _out(node).dtype)
        return g.axes_input(op_type, source, axes, since, keepdims=int(keepdim))

    return build


row("aten::sum.dim_IntList", "aten::sum")(_reduction("ReduceSum", 13))
row("aten::mean.dim", "aten::mean")(_reduction("ReduceMean", 18))
row("aten::amax", "aten::max")(_reduction("ReduceMax", 18))
row("aten::amin", "aten::min")(_reduction("ReduceMin", 18))


@row("aten::var.correction", "aten::std.correction")
def _var(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    # sum((x - mean)^2) / (n - correction) over the reduced axes, whose sizes the trace fixed
    x = args[0]
    axes = _reduce_dims(x, _arg(args, kwargs, 1, "dim"))
    correction = kwargs.get("correction")
    correction = 1 if correction is None else float(correction)
    keepdim = int(bool(kwargs.get("keepdim", False)))
    count = math.prod(x.shape[a] for a in (range(x.rank) if axes is None else axes))
    mean = g.axes_input("ReduceMean", x, axes, 18, keepdims=1)
    centred = g.op("Sub", x, mean)
    total = g.axes_input("ReduceSum", g.op("Mul", centred, centred), axes, 13, keepdims=keepdim)
    var = g.op("Div", total, g.const(float(max(count - correction, 0)), x.dtype))
    return g.op("Sqrt", var) if node.kind == "aten::std.correction" else var


@row("aten::argmax", "aten::argmin")
def _argmax(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    x = args[0]
    dim = _arg(args, kwargs, 1, "dim")
    keepdim = bool(_arg(args, kwargs, 2, "keepdim", False))
    op_type = "ArgMax" if node.kind == "aten::argmax" else "ArgMin"
    if dim is None:  # over the flattened tensor
        flat = g.op("Reshape", x, g.ints([-1]))
        return g.op(op_type, flat, axis=0, keepdims=0)
    return g.op(op_type, x, axis=_dim(dim, x.rank), keepdims=int(keepdim),
                select_last_index=0)


@row("aten::max.dim", "aten::min.dim")
def _max_dim(g: Builder, node: Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    x = args[0]
    dim = _dim(args[1], x.rank)
    keepdim = bool(_arg(args, kwargs, 2, "keepdim", False))
    reduce, arg = ("ReduceMax", "ArgMax") if node.kind == "aten::max.dim" else \
        ("ReduceMin", "ArgMin")
    values = g.axes_input(reduce, x, [dim], 18, keepdims=int(keepdim))
    return [values, g.op(arg, x, axis=dim, keepdims=int(keepdim))]
