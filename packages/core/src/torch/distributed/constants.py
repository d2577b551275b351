"""``torch.distributed.constants``: the default process-group timeout."""

from ._group import default_pg_timeout

__all__ = ["default_pg_timeout"]
