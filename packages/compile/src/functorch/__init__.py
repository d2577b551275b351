"""``functorch``: the compile entry points of PyTorch's functorch (see ``functorch.compile``)."""
