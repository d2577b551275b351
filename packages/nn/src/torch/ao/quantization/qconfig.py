"""``QConfig``: how a module is quantized, as a pair of observer factories (for its activations
and for its weight), and the configurations dynamic quantization uses."""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from .observer import (
    PlaceholderObserver,
    default_dynamic_quant_observer,
    default_per_channel_weight_observer,
    default_weight_observer,
)

__all__ = ["QConfig", "default_dynamic_qconfig", "float16_dynamic_qconfig",
           "per_channel_dynamic_qconfig"]


class QConfig(NamedTuple):
    """Observer factories (classes, or ``Observer.with_args(...)``) for a module's activations
    and its weight; calling one makes a fresh observer."""

    activation: Any
    weight: Any


default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                  weight=default_weight_observer)
float16_dynamic_qconfig = QConfig(
    activation=PlaceholderObserver.with_args(dtype=torch.float16, is_dynamic=True),
    weight=PlaceholderObserver.with_args(dtype=torch.float16))
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
