"""Settings of AOT autograd (``torch._functorch.config``), read at compile time."""

from __future__ import annotations

#: Keep traced and partitioned training graphs on disk, beside the inductor's kernels
#: (``torch._inductor.config.resolved_cache_dir()``/aot), so a new process with the same
#: captured graph and inputs skips tracing (docs/compile.md, "AOT autograd").
enable_autograd_cache: bool = True
