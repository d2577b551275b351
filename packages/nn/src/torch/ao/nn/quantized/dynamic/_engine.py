"""Which arithmetic the dynamic kernels follow: fbgemm's (``x86``/``fbgemm`` engines) quantizes
activations over half the quint8 range; qnnpack's over all of it."""

from __future__ import annotations

import torch


def reduce_range() -> bool:
    """Whether activations are quantized over ``0..127`` (every engine but qnnpack)."""
    return torch.backends.quantized.engine != "qnnpack"
