"""``torch.ao.nn``: the modules of quantized models (see :mod:`torch.ao`)."""
