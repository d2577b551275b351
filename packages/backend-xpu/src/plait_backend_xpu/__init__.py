"""plait-backend-xpu: the ``xpu`` backend of Plait, through OpenCL.

Importing this package is cheap: the native extension ``plait_backend_xpu._C`` loads on the
first question about devices. This first version discovers OpenCL devices (``torch.xpu``);
device memory and kernels come in later issues.
"""

__version__ = "0.1.0"
