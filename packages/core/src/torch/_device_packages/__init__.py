"""Submodules of the ``torch.<device type>`` proxies (``torch.cuda.amp``): one folder per device
type, which :class:`torch._device_modules.DeviceModuleProxy` makes its ``__path__`` so that
``import torch.cuda.amp`` works whether or not a backend serves the device."""
