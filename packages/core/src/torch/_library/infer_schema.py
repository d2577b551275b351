"""``torch._library.infer_schema``: a schema string from a function's type hints."""

from torch.library import infer_schema

__all__ = ["infer_schema"]
