"""``torch.ao``: PyTorch's home of quantization (``torch.ao.quantization``, ``torch.ao.nn``).

What is here: quantized tensors' modules for *dynamic* quantization (``quantize_dynamic``
replaces ``nn.Linear`` layers with ``torch.ao.nn.quantized.dynamic.Linear``, which computes on
integers as PyTorch's CPU kernels do), its observers and qconfigs, and the parts of the API a
float model is built with: the stubs that mark where a model would be quantized and the
functional module its skip connections call, each doing exactly what PyTorch's does before
``convert`` (nothing, or the floating-point operation). Static quantization (``prepare``,
``convert``, calibrated activations, quantized convolutions) is not provided.
"""

from __future__ import annotations

import importlib
from types import ModuleType

_SUBMODULES = frozenset({"nn", "quantization"})


def __getattr__(name: str) -> ModuleType:
    # torch.ao.quantization works after a bare `import torch`, as in PyTorch
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
