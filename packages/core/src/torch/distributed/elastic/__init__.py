"""``torch.distributed.elastic``: the error types programs started by ``torchrun`` catch
(``torch.distributed.elastic.multiprocessing.errors``)."""
