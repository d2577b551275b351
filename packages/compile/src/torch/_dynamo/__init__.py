"""``torch._dynamo``: the machinery behind ``torch.compile`` (plait-compile, docs/architecture.md).

This distribution adds ``torch._dynamo`` to plait-core's ``torch`` package; core's
``torch.compile`` validates its arguments and calls :func:`optimize`. Graph capture, guards,
recompilation, graph breaks, AOT autograd and the ``eager``/``aot_eager``/``inductor`` backends
arrive with the compile issue. Until then :func:`optimize` validates the backend name and returns
a wrapper that runs the original function or module eagerly.
"""

from torch._dynamo import config
from torch._dynamo.backends.registry import list_backends, lookup_backend
from torch._dynamo.eval_frame import OptimizedModule, optimize
from torch._dynamo.exc import InvalidBackend, TorchDynamoException
from torch._dynamo.markers import (
    allow_in_graph,
    assume_constant_result,
    disable,
    is_compiling,
    mark_dynamic,
    mark_static,
    mark_static_address,
    maybe_mark_dynamic,
    reset,
)

__all__ = [
    "InvalidBackend",
    "OptimizedModule",
    "TorchDynamoException",
    "allow_in_graph",
    "assume_constant_result",
    "config",
    "disable",
    "is_compiling",
    "list_backends",
    "lookup_backend",
    "mark_dynamic",
    "mark_static",
    "mark_static_address",
    "maybe_mark_dynamic",
    "optimize",
    "reset",
]
