"""The layer classes of ``torch.nn``: one module per family, gathered here.

Adding a family is adding its module (with ``__all__``) and its name to ``AREAS``.
"""

import importlib

AREAS = (
    "module", "container", "linear", "flatten", "lazy", "activation", "conv", "pooling",
    "normalization", "dropout", "loss", "rnn", "transformer",
    "sparse", "upsampling", "pixelshuffle", "fold", "padding", "distance", "adaptive",
)

# PyTorch's file names for classes defined with their family here (batchnorm.py holds
# BatchNorm2d there): imported so the classes carry those module names, which pickles record.
PYTORCH_PATHS = ("batchnorm", "instancenorm", "channelshuffle", "utils")

__all__: list[str] = []
for _area in AREAS:
    _mod = importlib.import_module(f"{__name__}.{_area}")
    for _name in _mod.__all__:
        globals()[_name] = getattr(_mod, _name)
        __all__.append(_name)
for _area in PYTORCH_PATHS:
    _mod = importlib.import_module(f"{__name__}.{_area}")
    for _name in _mod.__all__:  # the layers only PyTorch's file defines (SyncBatchNorm)
        if _name not in globals() and isinstance(getattr(_mod, _name), type):
            globals()[_name] = getattr(_mod, _name)
            __all__.append(_name)
del _area, _mod, _name
