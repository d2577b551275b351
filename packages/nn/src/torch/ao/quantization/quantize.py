"""``quantize_dynamic``: a copy of a float model with its ``nn.Linear`` (and recurrent) layers
replaced by dynamically quantized ones, as in PyTorch's dynamic quantization tutorials."""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch.nn import Module

from .qconfig import QConfig, default_dynamic_qconfig, float16_dynamic_qconfig

__all__ = ["get_default_dynamic_quant_module_mappings", "quantize_dynamic"]

# the qconfig each dtype stands for when a set of module types (or nothing) is given
_QCONFIG_OF_DTYPE = {torch.qint8: default_dynamic_qconfig,
                     torch.float16: float16_dynamic_qconfig}


def get_default_dynamic_quant_module_mappings() -> dict[type, type]:
    """Float module type -> its dynamic quantized replacement."""
    import torch.ao.nn.quantized.dynamic as nnqd

    return {torch.nn.Linear: nnqd.Linear, torch.nn.LSTM: nnqd.LSTM, torch.nn.GRU: nnqd.GRU,
            torch.nn.LSTMCell: nnqd.LSTMCell, torch.nn.GRUCell: nnqd.GRUCell,
            torch.nn.RNNCell: nnqd.RNNCell}


def _default_types() -> set[type]:
    # (types a default quantize_dynamic call converts: those with a dynamic counterpart)
    return set(get_default_dynamic_quant_module_mappings())


def _qconfig_spec(qconfig_spec: Any, dtype: torch.dtype) -> dict[Any, Any]:
    if isinstance(qconfig_spec, dict):
        return qconfig_spec
    qconfig = _QCONFIG_OF_DTYPE.get(dtype)
    if qconfig is None:
        raise ValueError(f"Don't know how to quantize with default settings for {dtype}. "
                         f"Provide full qconfig please")
    types = _default_types() if qconfig_spec is None else set(qconfig_spec)
    return dict.fromkeys(types, qconfig)


def _convert(module: Module, spec: dict[Any, Any], mapping: dict[type, type],
             inherited: QConfig | None, prefix: str) -> None:
    """Replace, depth first, each child whose exact type is mapped and whose qconfig (by
    type, then by qualified name, then inherited from its parent) is set."""
    for name, child in list(module.named_children()):
        qualified = prefix + name
        qconfig = spec.get(type(child), inherited)
        qconfig = spec.get(qualified, qconfig)
        target = mapping.get(type(child))
        if target is not None and qconfig is not None:
            child.qconfig = qconfig
            try:
                replacement = target.from_float(child)
            finally:
                del child.qconfig
            module._modules[name] = replacement
        else:
            _convert(child, spec, mapping, qconfig, qualified + ".")


def quantize_dynamic(model: Module, qconfig_spec: Any = None, dtype: torch.dtype = torch.qint8,
                     mapping: dict[type, type] | None = None, inplace: bool = False) -> Module:
    """A copy of ``model`` (``model`` itself if ``inplace``), in eval mode, whose layers are
    replaced by dynamic quantized ones.

    :param qconfig_spec: ``None`` (every ``nn.Linear``, ``nn.LSTM``, ``nn.GRU`` and their
        cells), a set of module types (quantized with ``dtype``'s default qconfig), or a dict
        from module types or qualified submodule names to ``QConfig``\\s.
    :param dtype: ``torch.qint8`` or ``torch.float16`` (for a set or ``None`` spec).
    :param mapping: float module type -> dynamic quantized module type.
    """
    spec = _qconfig_spec(qconfig_spec, dtype)
    if mapping is None:
        mapping = get_default_dynamic_quant_module_mappings()
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    root_qconfig = spec.get(type(model), spec.get("", None))
    target = mapping.get(type(model))
    if target is not None and root_qconfig is not None:  # the model itself is one layer
        model.qconfig = root_qconfig
        try:
            return target.from_float(model)
        finally:
            del model.qconfig
    _convert(model, spec, mapping, root_qconfig, "")
    return model
