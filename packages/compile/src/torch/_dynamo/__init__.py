"""``torch._dynamo``: the machinery behind ``torch.compile`` (packages/compile/README.md).

This distribution adds ``torch._dynamo`` to plait-core's ``torch`` package; core's
``torch.compile`` validates its arguments and calls :func:`optimize`, whose wrapper captures
each call's tensor operations into graphs by deferred execution (``_capture``), caches the
compiled graphs by structure and guards (``_cache``) and runs them.
"""

import torch._logging  # noqa: F401  (reads TORCH_LOGS)
from torch._dynamo import config, exc, utils  # noqa: F401  (an attribute, as in PyTorch)
from torch._dynamo.backends.registry import list_backends, lookup_backend, register_backend
from torch._dynamo.eval_frame import OptimizedModule, optimize, set_stance
from torch._dynamo.exc import InvalidBackend, TorchDynamoException
from torch._dynamo.explain import explain
from torch._dynamo.markers import (
    allow_in_graph,
    assume_constant_result,
    disable,
    disallow_in_graph,
    forbid_in_graph,
    graph_break,
    is_compiling,
    mark_dynamic,
    mark_static,
    mark_static_address,
    maybe_mark_dynamic,
    nonstrict_trace,
    reset,
    substitute_in_graph,
)

is_dynamo_compiling = is_compiling

__all__ = [
    "InvalidBackend",
    "OptimizedModule",
    "TorchDynamoException",
    "allow_in_graph",
    "assume_constant_result",
    "config",
    "disable",
    "disallow_in_graph",
    "exc",
    "explain",
    "forbid_in_graph",
    "graph_break",
    "is_compiling",
    "is_dynamo_compiling",
    "list_backends",
    "lookup_backend",
    "mark_dynamic",
    "mark_static",
    "mark_static_address",
    "maybe_mark_dynamic",
    "nonstrict_trace",
    "optimize",
    "register_backend",
    "reset",
    "set_stance",
    "substitute_in_graph",
]
