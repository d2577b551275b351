"""``torch.nn.parallel``: ``DataParallel`` (which, without accelerator devices to split over,
runs the module as it is) and ``DistributedDataParallel`` (which needs ``torch.distributed``,
not built yet: constructing one raises)."""

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
