"""``torch.utils.data``: datasets, samplers and ``DataLoader`` (plait-nn, DESIGN.md §9).

This distribution adds ``torch/utils/data`` to plait-core's ``torch.utils`` package (which
extends its ``__path__`` for that). ``Dataset``, ``TensorDataset``, the samplers and
``DataLoader`` arrive with the nn issue; until then the package is empty.
"""

__all__: list[str] = []
