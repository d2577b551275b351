"""``torch.distributed._functional_collectives``: collectives that return new tensors and
record autograd; not built yet (see :mod:`._not_built`)."""

from __future__ import annotations

from ._not_built import not_built_function

_NAMES = ("all_gather_tensor", "all_reduce", "all_to_all_single", "all_to_all_single_autograd",
          "reduce_scatter_tensor", "wait_tensor")
__all__ = [*_NAMES]

_WHAT = "functional collectives (torch.distributed._functional_collectives)"
globals().update({name: not_built_function(name, _WHAT) for name in _NAMES})
