"""``torch._dynamo.backends.common``: :func:`aot_autograd`, how a backend gets AOT autograd.

``aot_autograd(fw_compiler=..., bw_compiler=...)`` makes a backend ``(gm, example_inputs) ->
callable`` that hands the captured graph to
``torch._functorch.aot_autograd.aot_module_simplified`` (joint forward/backward graphs traced
on fake tensors and functionalized, each compiled by its compiler; the backward at its first
call). With ``torch._dynamo.config.use_aot_autograd`` off, the backend runs the captured graph
through eager autograd instead.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from typing import Any

__all__ = ["DATA_DEPENDENT", "aot_autograd", "aot_available", "changes_grad_mode_with_grad",
           "reads_data"]

log = logging.getLogger("torch._functorch")

# torch functions and Tensor methods whose decomposition into aten operators depends on the
# values of their inputs (negative indices wrapped where present, bin ranges, sample counts,
# pivots): on fake tensors they trace the branch for no data, so a graph holding one runs as
# captured, under eager autograd, instead of through AOT autograd (one row per family).
DATA_DEPENDENT: dict[str, frozenset[str]] = {
    "indexing": frozenset(("take", "take_along_dim", "put", "index_fill", "masked_scatter")),
    "histograms": frozenset(("histc", "histogram", "histogramdd")),
    "sampling": frozenset(("poisson",)),
    "linalg": frozenset(("matrix_exp", "geqrf", "ldl_factor", "ldl_factor_ex", "ldl_solve",
                         "householder_product", "orgqr", "ormqr")),
    "shape": frozenset(("repeat_interleave",)),
}
_DATA_DEPENDENT_NAMES = frozenset().union(*DATA_DEPENDENT.values())


def reads_data(gm: Any) -> str | None:
    """The first call in the captured graph ``gm`` of :data:`DATA_DEPENDENT`, or None."""
    for node in gm.graph.nodes:
        if node.op not in ("call_function", "call_method"):
            continue
        target = node.target
        name = target if isinstance(target, str) else getattr(target, "__name__", "")
        if name.rstrip("_") in _DATA_DEPENDENT_NAMES:
            return name
    return None


def changes_grad_mode_with_grad(gm: Any, example_inputs: list[Any]) -> bool:
    """Whether the captured graph ``gm`` switches grad mode inside (a ``torch.no_grad()`` or
    ``enable_grad()`` block in the program) while a gradient may flow (an input or a
    parameter requires grad). AOT autograd traces one joint graph under one grad mode, so
    the values made under ``no_grad`` would get a gradient (or the others none): such a
    graph runs as captured, under eager autograd, which honours each region's mode."""
    from torch._dynamo._capture import set_grad_enabled_node

    if not any(node.op == "call_function" and node.target is set_grad_enabled_node
               for node in gm.graph.nodes):
        return False
    return any(getattr(t, "requires_grad", False) for t in example_inputs) or any(
        p.requires_grad for p in getattr(gm, "parameters", lambda: ())())


def aot_available() -> bool:
    """Whether captured graphs go through AOT autograd: ``torch._dynamo.config.
    use_aot_autograd`` is set and ``torch._functorch.aot_autograd.aot_module_simplified`` can
    be imported."""
    from torch._dynamo import config

    if not config.use_aot_autograd:
        return False
    try:
        module = importlib.import_module("torch._functorch.aot_autograd")
    except ImportError:
        return False
    return hasattr(module, "aot_module_simplified")


def aot_autograd(**kwargs: Any) -> Callable[..., Any]:
    """A backend that compiles through AOT autograd with ``kwargs`` (``fw_compiler``,
    ``bw_compiler``, ``decompositions``...), as PyTorch's helper of the same name.

    :returns: ``backend(gm, example_inputs) -> callable``.
    """

    def backend(gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
        if not aot_available():
            return gm.forward  # eager autograd through the captured graph
        data_read = reads_data(gm)
        if data_read is not None:
            log.debug("AOT autograd: %s reads its inputs' values; the graph runs as captured",
                      data_read)
            return gm.forward
        if changes_grad_mode_with_grad(gm, example_inputs):
            log.debug("AOT autograd: the graph switches grad mode; it runs as captured")
            return gm.forward
        from torch._functorch.aot_autograd import aot_module_simplified
        from torch._subclasses.fake_tensor import (
            DataDependentOutputException,
            DynamicOutputShapeException,
        )

        try:
            return aot_module_simplified(gm, example_inputs, **kwargs)
        except (NotImplementedError, DataDependentOutputException,
                DynamicOutputShapeException, TypeError) as error:
            # (TypeError: an operator that takes no symbolic size, arange(0, s0))
            # what AOT autograd does not handle (a write to a captured tensor, a value the
            # fake trace cannot see) stays correct: the graph runs as captured
            log.warning("AOT autograd cannot trace this graph (%s: %s); it runs as captured, "
                        "under eager autograd", type(error).__name__, error)
            return gm.forward

    backend.__name__ = "aot_autograd"
    return backend
