"""``torch._C._functorch``: the batched-tensor functions of PyTorch's native module, here
written in Python (:mod:`torch._functorch.c_api`)."""

from .._functorch.c_api import (
    _add_batch_dim,
    _remove_batch_dim,
    get_unwrapped,
    is_batchedtensor,
    maybe_get_bdim,
    maybe_get_level,
)

__all__ = ["_add_batch_dim", "_remove_batch_dim", "get_unwrapped", "is_batchedtensor",
           "maybe_get_bdim", "maybe_get_level"]
