"""``torch.utils.tensorboard``: write TensorBoard event files (``SummaryWriter``).

As in PyTorch, this needs the ``tensorboard`` package: its protocol buffers and its event-file
writer are what the files are made of. Importing this module without it raises the
``ModuleNotFoundError`` of ``import tensorboard``; an older release than 1.15 raises PyTorch's
``ImportError``.
"""

import tensorboard

from torch.torch_version import TorchVersion

if TorchVersion(getattr(tensorboard, "__version__", "0")) < "1.15":
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del TorchVersion
del tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
