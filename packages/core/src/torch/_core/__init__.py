"""The kernel of the design: dtypes, devices, symbolic scalars, storage, the tensor, schemas,
primitives, the dispatcher with its cached plans, allocation and the plugin registry.

Nothing here imports the op library, autograd or the facade, not even inside a function:
what the dispatcher needs from above (the autograd recorder, the CPU fallback's conversions,
the Tensor methods) is injected at import time by the layer that owns it
(docs/architecture.md, "Layers")."""
