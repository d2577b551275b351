"""plait-backend-cpu: the native CPU backend of Plait.

Importing this package is cheap: the native extension ``plait_backend_cpu._C`` loads on the
first use of the device (see :mod:`plait_backend_cpu.plugin`, the ``torch.backends`` entry
point).
"""

__version__ = "0.1.0"
