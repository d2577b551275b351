"""The layer classes of ``torch.nn``: one module per family, gathered here.

Adding a family is adding its module (with ``__all__``) and its name to ``AREAS``.
"""

import importlib

AREAS = (
    "module", "container", "linear", "flatten", "lazy", "activation", "conv", "pooling",
    "normalization", "dropout", "loss", "rnn", "transformer",
    "sparse", "upsampling", "pixelshuffle", "fold", "padding", "distance",
)

__all__: list[str] = []
for _area in AREAS:
    _mod = importlib.import_module(f"{__name__}.{_area}")
    for _name in _mod.__all__:
        globals()[_name] = getattr(_mod, _name)
        __all__.append(_name)
del _area, _mod, _name
