"""``torch._higher_order_ops``: control flow that takes functions (``torch.cond``)."""

from torch._higher_order_ops.cond import cond

__all__ = ["cond"]
