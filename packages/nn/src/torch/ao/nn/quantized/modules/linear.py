"""``LinearPackedParams``: a quantized linear layer's weight and bias, kept together (in
PyTorch a packed native object; here the quantized weight, or the float16 weight, and the
float bias)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor
from torch.nn import Module

__all__ = ["LinearPackedParams"]


class LinearPackedParams(Module):
    """Holds ``(weight, bias)`` of a quantized linear layer; ``dtype`` is ``torch.qint8`` (a
    quantized weight) or ``torch.float16``. Saved in a state dict as ``dtype`` and
    ``_packed_params`` (the pair), as PyTorch's."""

    _version = 3

    def __init__(self, dtype: torch.dtype = torch.qint8) -> None:
        super().__init__()
        self.dtype = dtype
        if dtype is torch.qint8:
            weight = torch.quantize_per_tensor(torch.zeros(1, 1), 1.0, 0, torch.qint8)
        elif dtype is torch.float16:
            weight = torch.zeros(1, 1, dtype=torch.float16)
        else:
            raise RuntimeError("Unsupported dtype on dynamic quantized linear!")
        self.set_weight_bias(weight, None)

    def set_weight_bias(self, weight: Tensor, bias: Tensor | None) -> None:
        """Pack ``weight`` (quantized for qint8; stored as float16 for float16) and ``bias``."""
        if self.dtype is torch.float16 and weight.dtype is not torch.float16:
            weight = weight.detach().to(torch.float16)
        self._packed_params = (weight, bias)

    def _weight_bias(self) -> tuple[Tensor, Tensor | None]:
        """``(weight, bias)``: the quantized weight, or the float16 weight as float32."""
        weight, bias = self._packed_params
        if self.dtype is torch.float16:
            weight = weight.float()
        return weight, bias

    def forward(self, x: Tensor) -> Tensor:
        return x

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str,
                              local_metadata: dict[str, Any], strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        entries = state_dict  # (load_state_dict hands over its own mutable copy)
        if prefix + "dtype" in entries:
            self.dtype = entries.pop(prefix + "dtype")  # type: ignore[attr-defined]
        elif strict:
            missing_keys.append(prefix + "dtype")
        if prefix + "_packed_params" in entries:
            weight, bias = entries.pop(prefix + "_packed_params")  # type: ignore[attr-defined]
            self.set_weight_bias(weight, bias)
        elif strict:
            missing_keys.append(prefix + "_packed_params")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def __repr__(self) -> str:
        return repr(self._weight_bias())
