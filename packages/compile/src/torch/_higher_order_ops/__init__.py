"""``torch._higher_order_ops``: control flow that takes functions (``torch.cond``,
``torch.while_loop``, ``map``, ``scan``, ``associative_scan``)."""

from torch._higher_order_ops.cond import cond
from torch._higher_order_ops.loops import associative_scan, map, scan, while_loop

__all__ = ["associative_scan", "cond", "map", "scan", "while_loop"]
