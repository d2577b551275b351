"""plait-backend-xpu: the ``xpu`` backend of Plait, through OpenCL.

Importing this package is cheap: the native extension ``plait_backend_xpu._C`` loads on the
first question about devices, and it opens the OpenCL ICD loader itself at that point (no
link-time dependency on OpenCL). It provides devices, memory, programs and the first rendered
kernels (README.md).
"""

__version__ = "0.1.0"
