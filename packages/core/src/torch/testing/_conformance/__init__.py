"""The backend conformance suite (docs/backend-guide.md): every primitive, dtype by dtype, on a
backend's device against core's reference kernels; gradients through the op database; and a
coverage summary (native / reference / composite / CPU fallback per op).

Run it with pytest, in any directory, once plait-core is installed (the ``pytest11`` entry
point registers :mod:`.plugin`)::

    pytest --torch-backend=cpu            # the suite alone
    pytest --torch-backend=npu tests/     # the suite in addition to your tests

or from Python: :func:`check_primitive`, :func:`coverage`.

Layout: :mod:`.harness` lays tensors out in device memory and compares; :mod:`.samples` is
the table of cases per primitive; :mod:`.report` the per-op coverage table; :mod:`.gradients` the
bounded gradchecks; :mod:`.plugin` the pytest hooks. This module imports none of them until
they are used, so that pytest's startup stays cheap when the option is not given.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .report import CoverageRow

__all__ = ["check_primitive", "coverage", "format_coverage", "missing_samples"]


def coverage(device_type: str) -> list[CoverageRow]:
    """Per primitive (and fused aten kernel) of the backend serving ``device_type``: how it
    runs there (``native``, ``reference``, ``composite``, ``cpu fallback``, ``missing``).

    :param device_type: the device type (``"cpu"``, a plugin's ``"npu"``...).
    :returns: :class:`~torch.testing._conformance.report.CoverageRow` rows, primitives in
        table order, then fused ``aten::`` overrides.
    """
    from .report import coverage as _coverage

    return _coverage(device_type)


def format_coverage(device_type: str, rows: list[CoverageRow] | None = None) -> list[str]:
    """:func:`coverage` as printable lines (what the pytest plugin's summary shows)."""
    from .report import format_coverage as _format

    return _format(device_type, coverage(device_type) if rows is None else rows)


def missing_samples() -> list[str]:
    """Primitives of ``torch._core.prims.PRIMITIVES`` the suite has no samples for (each fails)."""
    from ..._core import prims as _prims
    from .samples import SAMPLES

    return [name for name in _prims.PRIMITIVES if name not in SAMPLES]


def check_primitive(name: str, dtype: str, device: Any = "cpu", seed: int = 0,
                    skip_dtypes: Iterable[str] = ()) -> list[str]:
    """Run primitive ``name``'s conformance cases for ``dtype`` on ``device``.

    :param name: a primitive (``"add"``).
    :param dtype: a dtype name (``"float32"``).
    :param device: the device under test.
    :param seed: the sample values' seed.
    :param skip_dtypes: dtype names the device does not have: cases with such a tensor (a
        ``copy_`` from it, say) are left out.
    :returns: one line per failing case; empty when the backend conforms.
    :raises KeyError: when the suite has no samples for ``name``.
    """
    from ..._core import storage as _storage
    from .harness import run_cases
    from .samples import cases

    return run_cases(name, cases(name, dtype, seed, frozenset(skip_dtypes)),
                     _storage._normalise(device))
