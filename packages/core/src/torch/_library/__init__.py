"""Where PyTorch keeps ``torch.library``'s machinery (``torch._library.custom_ops``,
``torch._library.infer_schema``); libraries import these names from here."""

from . import custom_ops, infer_schema

__all__ = ["custom_ops", "infer_schema"]
