"""``torch.Tag`` and the tags of an operator (``OpOverload.tags``), as PyTorch has them.

Libraries ask ``torch.Tag.pointwise in func.tags`` inside a dispatch mode (to fuse or count
elementwise work), ``torch.Tag.inplace_view``, ``nondeterministic_seeded``... PyTorch writes
the tags in its op declarations; here they follow from tables of names (the pointwise rows of
:mod:`torch._core.op_tables` and the lists below) and from the schema (written arguments).
"""

from __future__ import annotations

import enum
from typing import Any

from . import op_tables


class Tag(enum.Enum):
    """The operator tags PyTorch defines (``torch.Tag``)."""

    core = 0
    data_dependent_output = 1
    dynamic_output_shape = 2
    flexible_layout = 3
    generated = 4
    inplace = 5
    inplace_view = 6
    needs_fixed_stride_order = 7
    nondeterministic_bitwise = 8
    nondeterministic_seeded = 9
    out = 10
    pointwise = 11
    pt2_compliant_tag = 12
    reduction = 13
    view_copy = 14
    maybe_aliasing_or_mutating = 15
    needs_exact_strides = 16
    cudagraph_unsafe = 17

    def __str__(self) -> str:
        return f"Tag.{self.name}"


# Elementwise operators besides the op table's pointwise rows (activations, fused arithmetic,
# casts that PyTorch tags pointwise).
_POINTWISE = frozenset(op_tables.BY_NAME) | frozenset((
    "relu", "gelu", "silu", "mish", "elu", "selu", "celu", "leaky_relu", "hardtanh", "hardswish",
    "hardsigmoid", "softplus", "threshold", "clamp", "clamp_min", "clamp_max", "clip", "lerp",
    "addcmul", "addcdiv", "masked_fill", "frac", "logit", "xlogy", "special_xlog1py", "sinc",
    "rad2deg", "deg2rad", "heaviside", "isinf", "isfinite", "isneginf", "isposinf",
    "nan_to_num", "positive", "square", "true_divide", "floor_divide", "rsub", "absolute",
    "i0", "erfc", "float_power", "bitwise_left_shift", "gelu_backward", "silu_backward",
    "threshold_backward", "hardtanh_backward", "leaky_relu_backward", "elu_backward",
    "hardsigmoid_backward", "hardswish_backward", "softplus_backward", "mish_backward",
    "logical_not", "fill", "conj_physical", "signbit", "ldexp", "igamma", "igammac",
    "polygamma", "mvlgamma", "logaddexp", "logaddexp2", "trunc", "fix", "ne", "sigmoid",
))
_REDUCTION = frozenset((
    "sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "all", "any",
    "var", "std", "var_mean", "std_mean", "logsumexp", "norm", "nansum", "nanmean", "aminmax",
    "linalg_vector_norm", "count_nonzero", "median", "nanmedian", "mode",
))
_SEEDED = frozenset((
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
    "bernoulli", "bernoulli_", "normal", "normal_", "uniform_", "random_", "exponential_",
    "geometric_", "cauchy_", "log_normal_", "multinomial", "poisson", "dropout",
    "native_dropout", "rrelu", "rrelu_with_noise", "_fused_dropout",
))
_INPLACE_VIEW = frozenset((
    "t_", "transpose_", "squeeze_", "unsqueeze_", "as_strided_", "swapdims_", "swapaxes_",
    "detach_",
))
_DYNAMIC_SHAPE = frozenset((
    "nonzero", "unique", "_unique2", "unique_consecutive", "unique_dim", "masked_select",
    "repeat_interleave",
))
_DATA_DEPENDENT = frozenset(("_local_scalar_dense", "item", "equal", "allclose"))


def tags_of(namespace: str, name: str, schema: Any) -> tuple[Tag, ...]:
    """The tags of operator ``namespace::name`` (``name`` without the overload) with
    ``schema`` (Plait's :class:`~torch._core.schema.Schema`)."""
    if namespace != "aten":
        return ()
    out_arg = any(a.mutable and a.kwarg_only for a in schema.arguments)
    writes_self = bool(schema.arguments) and schema.arguments[0].mutable and not out_arg
    found: list[Tag] = []
    base = name[:-1] if writes_self and name.endswith("_") else name
    if out_arg:
        found.append(Tag.out)
    if writes_self and name.endswith("_"):
        found.append(Tag.inplace_view if name in _INPLACE_VIEW else Tag.inplace)
    if name in _SEEDED:
        found.append(Tag.nondeterministic_seeded)
    if name in _DYNAMIC_SHAPE:
        found.append(Tag.dynamic_output_shape)
    if name in _DATA_DEPENDENT:
        found.append(Tag.data_dependent_output)
    if base in _POINTWISE:
        found.append(Tag.pointwise)
    if base in _REDUCTION and not out_arg:
        found.append(Tag.reduction)
    found.append(Tag.pt2_compliant_tag)
    return tuple(found)
