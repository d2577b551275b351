"""``torch.jit.save`` and ``load``: refused with a clear error for now.

PyTorch writes TorchScript archives (code plus constants). Plait runs scripted code as Python
and keeps traced graphs in memory; saving them waits for the compile issue's
``torch.export``-style files, as the issue that asked for ``torch.jit`` says.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["load", "refuse_save", "save"]

_LATER = ("TorchScript archives are not written or read by Plait yet: saving and loading "
          "scripted or traced modules comes with the compile issue (torch.export-style "
          "files). Until then save the weights with torch.save(module.state_dict(), f) and "
          "build the module again in Python before load_state_dict")


def refuse_save() -> NoReturn:
    raise RuntimeError(f"torch.jit.save: {_LATER}")


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """``torch.jit.save``: refused (see the module docstring)."""
    refuse_save()


def load(f: Any, map_location: Any = None, _extra_files: Any = None,
         _restore_shapes: bool = False) -> Any:
    """``torch.jit.load``: refused (see the module docstring)."""
    raise RuntimeError(f"torch.jit.load: {_LATER}")
