"""``torch._dynamo.backends.common``: :func:`aot_autograd`, how a backend gets AOT autograd.

``aot_autograd(fw_compiler=..., bw_compiler=...)`` makes a backend ``(gm, example_inputs) ->
callable`` that hands the captured graph to
``torch._functorch.aot_autograd.aot_module_simplified`` (joint forward/backward graphs, each
compiled by its compiler). Until that module exists in this installation, the backend runs the
captured graph through eager autograd, so results and gradients are right either way.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["aot_autograd", "aot_available"]


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
        from torch._functorch.aot_autograd import aot_module_simplified

        return aot_module_simplified(gm, example_inputs, **kwargs)

    backend.__name__ = "aot_autograd"
    return backend
