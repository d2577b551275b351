"""``torch.distributed._composable``: see :mod:`torch.distributed.fsdp` (not built yet)."""
