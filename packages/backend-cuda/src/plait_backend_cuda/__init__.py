"""plait-backend-cuda: the CUDA backend of Plait.

Importing this package is cheap: the native extension ``plait_backend_cuda._C`` (which links
the CUDA runtime statically) loads on the first question about devices. Without a driver or a
GPU, ``torch.cuda.is_available()`` is False and allocating on ``cuda`` raises a RuntimeError
that says why.
"""

__version__ = "0.1.0"
