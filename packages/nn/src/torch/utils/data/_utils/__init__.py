"""The DataLoader's parts, under the module names PyTorch gives them (``collate``, ``fetch``,
``pin_memory``, ``worker``), which programs and libraries import directly
(``from torch.utils.data._utils.collate import default_collate``)."""

from __future__ import annotations

import sys

IS_WINDOWS = sys.platform == "win32"
# Seconds between a worker's checks that its parent is alive, and the main process's checks
# that its workers are (PyTorch's constant, read by code that tunes its own loaders).
MP_STATUS_CHECK_INTERVAL = 5.0
# Set once the interpreter starts shutting down, so workers stop quietly.
python_exit_status = False
HAS_NUMPY = True

from . import collate, fetch, pin_memory, worker  # noqa: E402  (the constants above first)

__all__ = ["HAS_NUMPY", "IS_WINDOWS", "MP_STATUS_CHECK_INTERVAL", "collate", "fetch",
           "pin_memory", "python_exit_status", "worker"]
