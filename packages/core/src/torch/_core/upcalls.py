"""Calls from core up into the layers above it, installed by those layers.

Core never imports an upper layer, not even inside a function (docs/architecture.md, "Layers").
Where it must reach up (``Tensor(...)`` and advanced indexing live in the op library, a tensor's
repr and the ``__torch_function__`` protocol in the facade, the CPU fallback's copies in the op
library), the layer that owns the function installs it here when it loads, and core calls it
through this module: ``upcalls.tensor_repr(t)``. The op library reaches autograd the same way
(a result that is not differentiable, an in-place write that bypasses the dispatcher).

Each slot starts as a placeholder. Called, it asks the facade's :data:`importer` (installed by
``torch/__init__``) to import the owning module, which installs the real function, and calls
that; if the slot is still empty it raises, naming the owner. So upper modules may load lazily
(``torch.serialization`` only when something pickles) without core importing them. Installing
is one assignment, checked against :data:`SLOTS` so a typo cannot add a slot no one calls.
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False  # (typing is too costly to import on every `import torch`)
if TYPE_CHECKING:
    from typing import Any

# slot -> (the module that installs it, what core calls it for)
SLOTS: dict[str, tuple[str, str]] = {
    "load_op_surface": ("torch", "torch._functions (the torch.* functions and Tensor methods), "
                                 "imported on first use and returned"),
    "legacy_tensor_new": ("torch._functions", "Tensor(...) / torch.Tensor(data)"),
    "advanced_index": ("torch._functions", "indexing with tensors, lists or booleans"),
    "tensor_repr": ("torch._tensor_str", "repr() of a tensor"),
    "install_torch_function": ("torch._torch_function", "turn the __torch_function__ checks on "
                                                        "once a subclass overrides it"),
    "wrapper_shell": ("torch._torch_function", "Tensor._make_wrapper_subclass"),
    "to_device": ("torch._aten.convert", "the CPU fallback's copies to and from the host"),
    "host_copy": ("torch._aten.convert", "the CPU fallback's view of host-accessible memory"),
    "copy_": ("torch._aten.convert", "filling an output whose layout follows its inputs"),
    "reduce_storage": ("torch.serialization", "pickling an UntypedStorage"),
    "share_storage": ("torch.multiprocessing._shared_memory",
                      "UntypedStorage.share_memory_: moving CPU bytes into shared memory"),
    "storage_is_shared": ("torch.multiprocessing._shared_memory", "UntypedStorage.is_shared"),
    "new_shared_storage": ("torch.multiprocessing._shared_memory",
                           "UntypedStorage._new_shared: a new storage in shared memory"),
    "kernel_library": ("torch.library", "the Library a backend registers its kernels into"),
    "not_differentiable": ("torch.autograd", "marking the floating results of an op without a "
                                             "derivative (floor_divide, unique) so that a "
                                             "backward through them raises"),
    "inplace_begin": ("torch.autograd", "before an in-place write that bypasses the dispatcher "
                                        "(fill_): its checks, and whether it is recorded"),
    "inplace_end": ("torch.autograd", "after a recorded in-place write: its history"),
    "composite_vjp": ("torch.autograd", "the vector-Jacobian product of a composite at fresh "
                                        "leaves: the backward operator whose kernel "
                                        "differentiates its own forward (grid_sampler_*d)"),
    "op_packet": ("torch._ops", "Operator.overloadpacket: the torch.ops packet of an "
                                "operator's overloads"),
}


# Imports a module by name; installed by the facade (core itself imports nothing above it).
importer: Callable[[str], Any] | None = None


def _placeholder(slot: str) -> Callable[..., Any]:
    owner, purpose = SLOTS[slot]

    def not_installed(*args: Any, **kwargs: Any) -> Any:
        if importer is not None:
            importer(owner)
            installed = globals()[slot]
            if installed is not not_installed:
                return installed(*args, **kwargs)
        raise RuntimeError(f"torch core: '{slot}' ({purpose}) is installed by {owner}, which "
                           "has not installed it")

    not_installed.__name__ = f"{slot}_not_installed"
    return not_installed


for _slot in SLOTS:
    globals()[_slot] = _placeholder(_slot)
del _slot


def install(**functions: Callable[..., Any]) -> None:
    """Install upper-layer functions into their slots: ``install(tensor_repr=repr_fn)``."""
    unknown = sorted(set(functions) - set(SLOTS))
    if unknown:
        raise KeyError(f"no upcall slot named {', '.join(unknown)} (slots: {', '.join(SLOTS)})")
    globals().update(functions)


def missing() -> list[str]:
    """Slots still holding their placeholder."""
    return [slot for slot in SLOTS if globals()[slot].__name__ == f"{slot}_not_installed"]
