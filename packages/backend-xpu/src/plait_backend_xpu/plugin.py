"""The ``torch.backends`` entry point of plait-backend-xpu (device type ``xpu``): the shared
:mod:`.render_runtime_plugin` hooks over this backend's table.

Phase 1 (``import torch``) only imports this module and asks :func:`torch_backend_info`: no
native code, no ``torch`` at module level.
"""

from __future__ import annotations

from . import __version__
from .render_runtime_plugin import PluginTable, export

DEVICE_TYPE = "xpu"
TABLE = PluginTable(
    device_type=DEVICE_TYPE,
    distribution="plait-backend-xpu",
    version=__version__,
    # fp64 is not declared: many Intel GPUs have no native double precision.
    capabilities=frozenset({"amp"}),
    amp_dtypes=("float16", "bfloat16"),  # float16 first: PyTorch's default on xpu
    package=__package__,
    allocator_module="memory",
    fast_path_module="fast",
    codegen_class="XpuCodegen",
)

# the hooks, under their names on this module (torch_backend_info, ...: HOOK_NAMES)
HOOKS = export(TABLE, globals())
