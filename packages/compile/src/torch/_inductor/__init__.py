"""A fusing code generator for aten graphs (``torch.compile``'s ``inductor`` backend).

``compile_fx`` reads an aten-level GraphModule (from ``make_fx``, graph capture or AOT
autograd), groups pointwise chains into kernels, writes C++ for each group, builds it in the
background and runs the groups through a fused interpreter until the build is ready. See
docs/compile.md, "inductor".
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["compile", "config"]


def compile(gm: Any, example_inputs: list[Any], options: dict[str, Any] | None = None) -> Any:
    """Compile an aten GraphModule; the same as :func:`torch._inductor.compile_fx.compile_fx`."""
    from .compile_fx import compile_fx

    return compile_fx(gm, example_inputs, config_patches=options)


def __getattr__(name: str) -> Any:
    # config loads lazily so that ``import torch._inductor`` stays cheap.
    if name == "config":
        return importlib.import_module(".config", __name__)
    raise AttributeError(f"module 'torch._inductor' has no attribute {name!r}")
