"""plait-backend-mps: the ``mps`` backend of Plait (Apple GPUs through Metal).

Importing this package is cheap: the native extension ``plait_backend_mps._C`` loads on the
first question about the device. On systems other than macOS the extension is a stub and
``torch.mps.is_available()`` is False with the reason.
"""

__version__ = "0.1.0"
