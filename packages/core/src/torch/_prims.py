"""The primitive set: the kernels a backend implements (DESIGN.md §7, "Primitive groups").

Everything else in the API is composite over these. The table is versioned: a backend
declares kernels against ``VERSION`` and the conformance suite checks every row.

Conventions shared by every primitive (STYLE.md, "Kernels write into out"):

- the first argument is the output, preallocated by core on the right device, with the
  result's dtype and shape; kernels write into it and return nothing;
- inputs have the output's dtype (except ``copy_``, which casts) and are already broadcast to
  the output's shape with stride-0 expansion, so a kernel sees equal shapes and arbitrary
  strides (a contiguous fast path is expected);
- Python scalars arrive as 0-d tensors expanded with stride 0, never as a second kernel family;
- float16 and bfloat16 compute in float32 and round to nearest even on store.
"""

from __future__ import annotations

VERSION = 1

# name -> (group, schema). The schema is torch.library's schema syntax without the namespace.
PRIMITIVES: dict[str, tuple[str, str]] = {
    # memory
    "copy_": ("memory", "copy_(Tensor(a!) out, Tensor src) -> ()"),
    "fill_": ("memory", "fill_(Tensor(a!) out, Scalar value) -> ()"),
    # binary
    "add": ("binary", "add(Tensor(a!) out, Tensor a, Tensor b) -> ()"),
    "mul": ("binary", "mul(Tensor(a!) out, Tensor a, Tensor b) -> ()"),
    # reductions: `out` has the input's shape with every reduced dim set to 1 (keepdim) and the
    # input's dtype; core casts the input to the result dtype first (int64 for integer sums).
    "sum": ("reduction", "sum(Tensor(a!) out, Tensor a, int[] dims) -> ()"),
}


def schema(name: str) -> str:
    """The schema string of primitive ``name`` (``KeyError`` if it is not a primitive)."""
    return PRIMITIVES[name][1]
