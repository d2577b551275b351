"""The ``torch.backends`` entry point of plait-backend-cuda (device type ``cuda``): the shared
:mod:`._render.render_runtime_plugin` hooks over this backend's table.

Phase 1 (``import torch``) only imports this module and asks :func:`torch_backend_info`: no
native code, no ``torch`` at module level. The native extension loads when ``torch.cuda`` is
asked a question or the device is first used.
"""

from __future__ import annotations

from . import __version__
from ._render.render_runtime_plugin import PluginTable, export

DEVICE_TYPE = "cuda"
TABLE = PluginTable(
    device_type=DEVICE_TYPE,
    distribution="plait-backend-cuda",
    version=__version__,
    capabilities=frozenset({"float64", "amp"}),
    amp_dtypes=("float16", "bfloat16"),
    package=__package__,
    allocator_module="allocator",
    fast_path_module=None,  # no native small-op path yet
    codegen_class="CudaCodegen",
)

# the hooks, under their names on this module (torch_backend_info, ...: HOOK_NAMES)
HOOKS = export(TABLE, globals())
