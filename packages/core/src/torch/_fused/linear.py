"""``aten::linear``: ``input @ weight.T + bias`` over any leading dims of ``input``, as one
operator with one derivative.

``F.linear`` was written in other operators (a reshape of the input into rows, ``weight.t()``,
``addmm``, a view back), so each layer call recorded three or four nodes and its backward ran
a transposed view's node besides the product's. As one operator (PyTorch has it; there it is
written in those same operators) a layer call records one node, whose rule computes the
input's, the weight's and the bias's gradients directly, the weight's in the weight's own
row-major layout. A backend may serve the operator with a kernel of its own.

``weight`` may be 1-d (the output then drops the feature dim) and ``input`` 1-d (one row), as
in PyTorch; ``bias`` broadcasts to the output.
"""

from __future__ import annotations

from .._aten.linalg import ATEN as _LINALG, matmul
from .._core import dispatch as _dispatch
from .._core.tensor import Tensor

__all__: list[str] = []

_MM = _LINALG["mm"]
_ADDMM = _LINALG["addmm"]


def check_linear(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's argument checks of ``linear`` (types and ranks; the product checks sizes)."""
    for position, (name, t) in enumerate((("input", input), ("weight", weight)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"linear(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(t).__name__}")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"linear(): argument 'bias' (position 3) must be Tensor, not "
                        f"{type(bias).__name__}")
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if weight.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{weight.ndim}D")


def _linear_kernel(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    check_linear(input, weight, bias)
    if weight.ndim == 2:
        # the input's leading dims folded into rows: one product with the bias folded in
        rows = input if input.ndim == 2 else input.reshape(-1, input._shape[-1])
        out = _MM(rows, weight.t()) if bias is None else _ADDMM(bias, rows, weight.t())
        if input.ndim == 2:
            return out
        return out.view(*input._shape[:-1], weight._shape[0])
    out = matmul(input, weight)  # a 1-d weight: the feature dim is contracted away
    return out if bias is None else out + bias


def _linear_as_pytorch(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``linear`` in the operators PyTorch writes it in, for a dispatch mode to see: with a
    bias, a 2-d or contiguous input is folded into rows for ``t`` + ``addmm`` (then viewed
    back); otherwise ``matmul(input, weight.t())`` (``t`` + ``mm`` for 2-d) plus the bias."""
    check_linear(input, weight, bias)
    if bias is not None and weight.ndim == 2:
        if input.ndim == 2:
            return _ADDMM(bias, input, weight.t())
        if input.is_contiguous():
            rows = input.view(-1, input._shape[-1])
            return _ADDMM(bias, rows, weight.t()).view(*input._shape[:-1], weight._shape[0])
    out = _MATMUL_DECOMPOSED(input, weight.t())  # mm/bmm and views, as a mode sees matmul
    return out if bias is None else out + bias


_MATMUL_DECOMPOSED = _LINALG["matmul"].kernels[_dispatch.COMPOSITE_IMPLICIT]

ATEN = _dispatch.define_aten({
    "linear": ("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
               _linear_kernel),
})
ATEN["linear"].python_key_composite = _linear_as_pytorch
