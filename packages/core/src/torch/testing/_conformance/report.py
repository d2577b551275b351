"""What a backend provides: per primitive, its own kernel, the reference, or the CPU fallback;
and the fused kernels it registered on composite ``aten::`` ops."""

from __future__ import annotations

from dataclasses import dataclass

from ... import _refs
from ..._core import dispatch as _dispatch, prims as _prims, registry as _registry

NATIVE = "native"
REFERENCE = "reference"
COMPOSITE = "composite"
CPU_FALLBACK = "cpu fallback"
MISSING = "missing"


@dataclass(frozen=True)
class CoverageRow:
    """How one operator runs on a backend.

    :param name: ``prims::<name>`` or ``aten::<name>`` (fused overrides).
    :param group: the primitive's group (``"fused"`` for aten overrides).
    :param status: ``native`` (the backend's own kernel), ``reference`` (core's numpy kernel
        registered as the backend's), ``composite`` (a backend-agnostic kernel), ``cpu
        fallback`` (no kernel: copied through the CPU) or ``missing``.
    """

    name: str
    group: str
    status: str


def _status(op: _dispatch.Operator | None, key: str, reference: object) -> str:
    if op is None:
        return MISSING
    kernel = op.kernels.get(key)
    if kernel is not None:
        return REFERENCE if kernel is reference else NATIVE
    if any(alias in op.kernels for alias in _dispatch.ALIAS_KEYS):
        return COMPOSITE
    if key not in ("CPU", _dispatch.META) and "CPU" in op.kernels:
        return CPU_FALLBACK
    return MISSING


def coverage(device_type: str) -> list[CoverageRow]:
    """The coverage table of the backend serving ``device_type`` (initialising it): one row
    per primitive of ``torch._core.prims.PRIMITIVES``, in table order, then one per fused ``aten``
    kernel the backend registered (sorted by name).

    :param device_type: ``"cpu"``, ``"cuda"``, a plugin's device type...
    :returns: the rows; ``python -m torch.backends`` and the pytest plugin print them.
    """
    _registry.runtime(device_type)  # phase 2: the backend registers its kernels
    _registry.runtime("cpu")  # and the CPU's, which decide what falls back through the CPU
    key = _dispatch.key_for(device_type)
    rows = [CoverageRow(f"prims::{name}", group,
                        _status(_dispatch.get(f"prims::{name}"), key, _refs.CPU_KERNELS.get(name)))
            for name, (group, _schema) in _prims.PRIMITIVES.items()]
    import torch._functions  # noqa: F401  (defines the aten ops a backend may override)

    fused = sorted(op.qualname for op in _dispatch.operators("aten") if key in op.kernels)
    rows += [CoverageRow(name, "fused", NATIVE) for name in fused]
    return rows


def format_coverage(device_type: str, rows: list[CoverageRow]) -> list[str]:
    """The coverage table as text lines: counts, then the primitives by status and group."""
    prims = [r for r in rows if r.group != "fused"]
    fused = [r.name for r in rows if r.group == "fused"]
    counts = {s: sum(1 for r in prims if r.status == s)
              for s in (NATIVE, REFERENCE, COMPOSITE, CPU_FALLBACK, MISSING)}
    lines = [f"backend '{device_type}' (dispatch key {_dispatch.key_for(device_type)}), "
             f"primitive table version {_prims.VERSION}: " + ", ".join(
                 f"{n} {s}" for s, n in counts.items() if n) + f" of {len(prims)} primitives; "
             f"{len(fused)} fused aten kernels"]
    for status in (NATIVE, REFERENCE, COMPOSITE, CPU_FALLBACK, MISSING):
        by_group: dict[str, list[str]] = {}
        for r in prims:
            if r.status == status:
                by_group.setdefault(r.group, []).append(r.name.removeprefix("prims::"))
        if by_group:
            lines.append(f"  {status}:")
            lines += [f"    {group:<12} {' '.join(names)}" for group, names in by_group.items()]
    if fused:
        lines.append(f"  fused aten kernels: {' '.join(n.removeprefix('aten::') for n in fused)}")
    return lines
