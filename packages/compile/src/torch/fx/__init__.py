"""``torch.fx``: graphs of tensor programs (plait-compile, docs/architecture.md).

This distribution adds ``torch.fx`` to plait-core's ``torch`` package. ``Graph``, ``Node``,
``GraphModule``, ``symbolic_trace``, ``Interpreter`` and readable ``.code`` arrive with the
compile issue; until then the package is empty.
"""

__all__: list[str] = []
