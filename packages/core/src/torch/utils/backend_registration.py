"""``torch.utils.backend_registration``: methods named after backend plugin devices.

PyTorch's out-of-tree backends are one ``privateuse1`` key renamed; Plait's are plugins, each
with its own device type, and core already gives every installed plugin's device type
``Tensor.<type>()`` and ``Tensor.is_<type>``. :func:`generate_methods_for_privateuse1_backend`
is kept for code written against PyTorch, and is how ``torch.nn.Module`` gets its
``Module.<type>()`` methods.
"""

from __future__ import annotations

from typing import Any

__all__ = ["generate_methods_for_privateuse1_backend"]


def generate_methods_for_privateuse1_backend(for_tensor: bool = True, for_module: bool = True,
                                             for_packed_sequence: bool = True,
                                             for_storage: bool = False,
                                             unsupported_dtype: Any = None) -> None:
    """Add ``<type>()`` (and ``is_<type>``) methods for every backend plugin's device type.

    :param for_tensor: ``Tensor.<type>()`` and ``Tensor.is_<type>`` (core adds them at import
        already; calling again is harmless).
    :param for_module: ``torch.nn.Module.<type>()``, now and for device types registered later.
    :param for_packed_sequence: accepted for PyTorch compatibility (PackedSequence moves with
        ``.to``).
    :param for_storage: accepted for PyTorch compatibility; storages move with ``.to``.
    :param unsupported_dtype: accepted for PyTorch compatibility.
    """
    from .. import _device_modules

    if for_tensor:
        for device_type in _device_modules.device_types_with_methods():
            _device_modules.add_methods(device_type)
    if for_module:
        from torch.nn.modules.module import Module

        _device_modules.add_module_methods(Module)
