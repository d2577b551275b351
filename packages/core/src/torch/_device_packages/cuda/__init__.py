"""Not imported: this folder is ``torch.cuda``'s ``__path__`` (see ``torch._device_packages``)."""
