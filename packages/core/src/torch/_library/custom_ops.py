"""``torch._library.custom_ops``: the custom-op definitions of :mod:`torch.library`."""

from torch.library import CustomOpDef, custom_op

__all__ = ["CustomOpDef", "custom_op"]
