"""``torch.nn.grad``: the gradients of a convolution with respect to its input and to its weight,
for custom ``autograd.Function`` backward passes (PyTorch's fused conv + batch-norm tutorial).

Each is one ``aten::convolution_backward`` call with one output asked for; the tensor whose
gradient is not asked for is only a shape there, so it is an expanded one-element tensor.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]

_IntOrTuple = int | Sequence[int]


def _tuple(value: _IntOrTuple, n: int, name: str) -> list[int]:
    if isinstance(value, int):
        return [value] * n
    items = list(value)
    if len(items) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={items}")
    return items


def _backward(n: int, grad_output: Tensor, input: Tensor, weight: Tensor, stride: _IntOrTuple,
              padding: _IntOrTuple, dilation: _IntOrTuple, groups: int,
              mask: list[bool]) -> Tensor:
    if grad_output.dim() != n + 2:
        raise RuntimeError(f"conv{n}d gradient: expected grad_output with {n + 2} dimensions, "
                           f"got {grad_output.dim()}")
    grads = torch.ops.aten.convolution_backward(
        grad_output, input, weight, None, _tuple(stride, n, "stride"),
        _tuple(padding, n, "padding"), _tuple(dilation, n, "dilation"), False, [0] * n, groups,
        mask)
    return grads[0] if mask[0] else grads[1]


def _input_grad(n: int) -> object:
    def conv_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor,
                   stride: _IntOrTuple = 1, padding: _IntOrTuple = 0,
                   dilation: _IntOrTuple = 1, groups: int = 1) -> Tensor:
        input = grad_output.new_empty(1).expand(tuple(input_size))
        return _backward(n, grad_output, input, weight, stride, padding, dilation, groups,
                         [True, False, False])

    conv_input.__name__ = conv_input.__qualname__ = f"conv{n}d_input"
    conv_input.__doc__ = (f"The gradient of ``conv{n}d(input, weight)`` with respect to an "
                          "input of size ``input_size``, given ``grad_output``.")
    return conv_input


def _weight_grad(n: int) -> object:
    def conv_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor,
                    stride: _IntOrTuple = 1, padding: _IntOrTuple = 0,
                    dilation: _IntOrTuple = 1, groups: int = 1) -> Tensor:
        weight = grad_output.new_empty(1).expand(tuple(weight_size))
        return _backward(n, grad_output, input, weight, stride, padding, dilation, groups,
                         [False, True, False])

    conv_weight.__name__ = conv_weight.__qualname__ = f"conv{n}d_weight"
    conv_weight.__doc__ = (f"The gradient of ``conv{n}d(input, weight)`` with respect to a "
                           "weight of size ``weight_size``, given ``grad_output``.")
    return conv_weight


conv1d_input, conv2d_input, conv3d_input = (_input_grad(n) for n in (1, 2, 3))
conv1d_weight, conv2d_weight, conv3d_weight = (_weight_grad(n) for n in (1, 2, 3))
