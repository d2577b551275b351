"""``torch.nn.parallel``: ``DataParallel`` (which, without accelerator devices to split over,
runs the module as it is) and ``DistributedDataParallel`` (gradients averaged over the
processes of a ``torch.distributed`` process group)."""

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel
from .scatter_gather import gather, scatter

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather", "scatter"]
