"""``torch.ao.nn.quantized.dynamic.Linear``: a linear layer with a qint8 (or float16) weight
whose input is quantized at each call from its own range (PyTorch's
``DynamicQuantizedLinear``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor
from torch.nn import Module

from ..._kernels import linear_dynamic, linear_dynamic_fp16, quantize_weight
from ...modules.linear import LinearPackedParams
from .. import _engine

__all__ = ["Linear"]


class Linear(Module):
    """``y = x @ weight().T + bias()`` computed on quantized integers: the weight is
    quantized once (qint8, per tensor or per channel), the input at each call (quint8, from
    its minimum and maximum); with ``dtype=torch.float16`` the weight is stored in float16."""

    _version = 4

    def __init__(self, in_features: int, out_features: int, bias_: bool = True,
                 dtype: torch.dtype = torch.qint8) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bias = torch.zeros(out_features) if bias_ else None
        if dtype is torch.qint8:
            weight: Tensor = torch.quantize_per_tensor(
                torch.zeros(out_features, in_features), 1.0, 0, torch.qint8)
        elif dtype is torch.float16:
            weight = torch.zeros(out_features, in_features)
        else:
            raise RuntimeError("Unsupported dtype specified for quantized Linear!")
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(weight, bias)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self) -> str:
        return "DynamicQuantizedLinear"

    def __repr__(self) -> str:
        # one line, as PyTorch's: the packed parameters are not shown as a child
        return f"{self._get_name()}({self.extra_repr()})"

    def extra_repr(self) -> str:
        text = (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"dtype={self._packed_params.dtype}")
        if self._packed_params.dtype is torch.qint8:
            text += f", qscheme={self.weight().qscheme()}"
        return text

    def weight(self) -> Tensor:
        """The quantized weight (float32 values of the float16 weight for ``float16``)."""
        return self._packed_params._weight_bias()[0]

    def bias(self) -> Tensor | None:
        return self._packed_params._weight_bias()[1]

    def set_weight_bias(self, weight: Tensor, bias: Tensor | None) -> None:
        self._packed_params.set_weight_bias(weight, bias)

    def forward(self, x: Tensor) -> Tensor:
        weight, bias = self._packed_params._packed_params
        if self._packed_params.dtype is torch.float16:
            return linear_dynamic_fp16(x, weight, bias)
        return linear_dynamic(x, weight, bias, _engine.reduce_range())

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = torch.tensor(self.scale)
        destination[prefix + "zero_point"] = torch.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str,
                              local_metadata: dict[str, Any], strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        for name in ("scale", "zero_point"):
            if prefix + name in state_dict:
                value = state_dict.pop(prefix + name)  # type: ignore[attr-defined]
                setattr(self, name, float(value) if name == "scale" else int(value))
            elif strict:
                missing_keys.append(prefix + name)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> Linear:
        """The dynamic quantized counterpart of a float ``nn.Linear`` carrying a ``qconfig``
        (its weight observer decides the weight's dtype and scheme)."""
        if not isinstance(mod, torch.nn.Linear):
            raise AssertionError(f"nn.quantized.dynamic.Linear.from_float only works for "
                                 f"nn.Linear, got {type(mod).__name__}")
        qconfig = getattr(mod, "qconfig", None)
        if qconfig is None:
            raise AssertionError("Input float module must have qconfig defined")
        observer = qconfig.weight()
        dtype = observer.dtype
        if dtype not in (torch.qint8, torch.float16):
            raise RuntimeError(f"Unsupported dtype specified for dynamic quantized Linear: "
                               f"{dtype}")
        if dtype is torch.qint8:
            weight: Tensor = quantize_weight(mod.weight, observer)
        else:
            weight = mod.weight.detach().float()
        out = cls(mod.in_features, mod.out_features, dtype=dtype)
        out.set_weight_bias(weight, mod.bias)
        return out
