"""``torch.utils.benchmark``: time small statements (:class:`Timer`), summarise the runs
(:class:`Measurement`: mean, median, IQR) and print several side by side (:class:`Compare`).

Pure Python over :mod:`timeit`: the subset of PyTorch's module that programs use (no
instruction counting, no fuzzers).
"""

from torch.utils.benchmark.utils.common import Measurement, TaskSpec, select_unit
from torch.utils.benchmark.utils.compare import Compare
from torch.utils.benchmark.utils.timer import Language, Timer

__all__ = ["Compare", "Language", "Measurement", "TaskSpec", "Timer", "select_unit"]
