"""``torch.ao``: PyTorch's home of quantization (``torch.ao.quantization``, ``torch.ao.nn``).

Plait has no quantized kernels: its kernels compute in floating point, and
``torch.backends.quantized.supported_engines`` is ``["none"]``. What is here is the part of the
API a *float* model is built with: the stubs that mark where a model would be quantized and
the functional module its skip connections call, each doing exactly what PyTorch's does before
``convert`` (nothing, or the floating-point operation). Preparing and converting a model
(``prepare``, ``convert``, observers, qconfigs) is not provided.
"""
