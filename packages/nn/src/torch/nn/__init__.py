"""``torch.nn``: modules, layers, losses and ``nn.functional`` (plait-nn, DESIGN.md §9).

This distribution adds ``torch.nn`` to plait-core's ``torch`` package. ``nn.Module`` with
PyTorch's semantics, containers, layers, losses, ``nn.functional``, ``nn.init`` and
``nn.utils`` arrive with the nn issue; until then the package is empty.
"""

__all__: list[str] = []
