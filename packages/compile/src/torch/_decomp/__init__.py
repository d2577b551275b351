"""``torch._decomp``: decomposition tables for ``make_fx`` and AOT autograd backends.

A decomposition is a Python function computing an operator from other operators; a table
maps operator overloads (``torch.ops.aten.addmm.default``) to them. Programs build tables with
:func:`get_decompositions` and hand them to ``make_fx(f, decomposition_table=...)`` or
``aot_autograd(decompositions=...)``. Where PyTorch ships a Python decomposition of its own
for an operator, Plait's is the operator's ``CompositeImplicitAutograd`` kernel (the
operator written in others); :func:`register_decomposition` adds or replaces entries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from torch._core import dispatch

__all__ = ["core_aten_decompositions", "decomposition_table", "get_decompositions",
           "register_decomposition"]

# operator overload -> decomposition, filled by register_decomposition (PyTorch's global
# table of the same name)
decomposition_table: dict[Any, Callable[..., Any]] = {}


def _overloads(op: Any) -> list[Any]:
    """The overloads an entry names: a packet (``aten.addmm``) stands for all of its own."""
    names = getattr(op, "overloads", None)
    if callable(names):
        return [getattr(op, name) for name in names()]
    return [op]


def register_decomposition(aten_op: Any, registry: dict[Any, Callable[..., Any]] | None = None,
                           *, type: str = "post_autograd", unsafe: bool = False
                           ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator registering its function as the decomposition of ``aten_op`` (an overload,
    a packet for all its overloads, or a list of them) in ``registry`` (default: the global
    :data:`decomposition_table`).

    :param type: PyTorch's kinds (``post_autograd``, ``pre_autograd``, ``meta``); one table
        serves them all here.
    """
    del type, unsafe
    table = decomposition_table if registry is None else registry
    ops = aten_op if isinstance(aten_op, (list, tuple)) else [aten_op]

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        for op in ops:
            for overload in _overloads(op):
                table[overload] = fn
        return fn

    return register


def get_decompositions(aten_ops: Iterable[Any], type: str = "post_autograd"
                       ) -> dict[Any, Callable[..., Any]]:
    """The decompositions of ``aten_ops`` (overloads or packets), each from
    :data:`decomposition_table` if registered there, else the operator's composite kernel.
    Operators with neither (a primitive with a kernel per backend) are left out, as PyTorch
    leaves out those it has no decomposition for."""
    del type
    found: dict[Any, Callable[..., Any]] = {}
    for op in aten_ops:
        for overload in _overloads(op):
            fn = decomposition_table.get(overload)
            if fn is None:
                fn = getattr(overload, "kernels", {}).get(dispatch.COMPOSITE_IMPLICIT)
            if fn is not None:
                found[overload] = fn
    return found


def core_aten_decompositions() -> dict[Any, Callable[..., Any]]:
    """Every operator with only a composite kernel -> that kernel, plus the registered
    decompositions: the table that lowers a graph to core aten operators."""
    from torch.export.exported_program import core_aten_decompositions as composites

    table = composites()
    table.update(decomposition_table)
    return table
