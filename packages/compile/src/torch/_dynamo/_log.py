"""The loggers of graph capture, one per ``TORCH_LOGS`` artifact (see :mod:`torch._logging`)."""

from __future__ import annotations

import logging

__all__ = ["graph_breaks", "graph_code", "guards", "limit", "output_code", "recompiles"]

graph_breaks = logging.getLogger("torch._dynamo.graph_breaks")
recompiles = logging.getLogger("torch._dynamo.recompiles")
guards = logging.getLogger("torch._dynamo.guards")
graph_code = logging.getLogger("torch._dynamo.graph_code")
output_code = logging.getLogger("torch._inductor.output_code")
# the recompile-limit warning, under the name PyTorch logs it with
limit = logging.getLogger("torch._dynamo.convert_frame")
