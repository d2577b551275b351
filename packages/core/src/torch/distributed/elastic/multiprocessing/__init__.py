"""``torch.distributed.elastic.multiprocessing``: see :mod:`.errors`."""
