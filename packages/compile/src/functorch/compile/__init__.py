"""``functorch.compile``: AOT autograd entry points, re-exported from ``torch._functorch``."""

from torch._functorch.aot_autograd import (
    aot_function,
    aot_module,
    aot_module_simplified,
    make_boxed_compiler,
    make_boxed_func,
    nop,
)
from torch._functorch.partitioners import default_partition, min_cut_rematerialization_partition

__all__ = ["aot_function", "aot_module", "aot_module_simplified", "make_boxed_compiler",
           "make_boxed_func", "nop", "default_partition", "min_cut_rematerialization_partition"]
