"""``torch.optim``: optimizers and learning-rate schedulers (plait-nn, DESIGN.md §9).

This distribution adds ``torch.optim`` to plait-core's ``torch`` package. Optimizers with
``state_dict`` / ``load_state_dict`` and the LR schedulers arrive with the nn issue; until then
the package is empty.
"""

__all__: list[str] = []
