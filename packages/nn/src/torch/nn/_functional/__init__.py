"""``nn.functional`` by area: ``torch.nn.functional`` re-exports every name in the ``__all__``
of each module listed in ``AREAS`` (adding an area is adding its module and a row here)."""

import importlib

AREAS: tuple[str, ...] = ("layers", "attention", "activation", "loss", "conv", "pooling",
                          "normalization", "dropout", "sparse", "vision", "distance")

__all__: list[str] = []
for _area in AREAS:
    _mod = importlib.import_module(f"{__name__}.{_area}")
    for _name in _mod.__all__:
        globals()[_name] = getattr(_mod, _name)
        __all__.append(_name)
