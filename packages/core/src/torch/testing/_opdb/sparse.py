"""Op database rows: ``torch.sparse`` functions on COO tensors, with dense results (the
comparisons work on dense tensors). Sparse inputs are made from the seeded dense samples
with about half of their entries zeroed, so both libraries hold the same entries.

``layout_dependent``: the inputs must stay sparse (the non-contiguous check would hand the
function dense copies); no meta samples (a sparse tensor's indices are checked on making it).
"""

from __future__ import annotations

from . import OpInfo, SampleInput

FLOATS_ONLY = ("float32", "float64")


def _sparse(torch, dtype, make, shape):
    dense = make(shape, dtype, -1.0, 1.0)
    return torch.where(dense > 0, dense, torch.zeros_like(dense)).to_sparse()


def _mm_samples(torch, dtype, make):
    yield SampleInput(_sparse(torch, dtype, make, (4, 3)), (make((3, 2), dtype),),
                      name="(4, 3) @ (3, 2)")
    yield SampleInput(_sparse(torch, dtype, make, (5, 5)), (make((5, 1), dtype),),
                      name="square")


def _addmm_samples(torch, dtype, make):
    yield SampleInput(make((4, 2), dtype), (_sparse(torch, dtype, make, (4, 3)),
                                            make((3, 2), dtype)), name="default scales")
    yield SampleInput(make((4, 2), dtype), (_sparse(torch, dtype, make, (4, 3)),
                                            make((3, 2), dtype)),
                      {"beta": 0.5, "alpha": 2.0}, name="beta, alpha")


def _sum_samples(torch, dtype, make):
    yield SampleInput(_sparse(torch, dtype, make, (4, 3)), name="all dims")
    yield SampleInput(_sparse(torch, dtype, make, (3, 4, 2)).to_dense().to_sparse(2),
                      ((0, 1),), name="the sparse dims of a hybrid tensor")


OPS = [
    OpInfo("sparse.mm", _mm_samples, dtypes=FLOATS_ONLY, layout_dependent=True,
           supports_meta=False),
    OpInfo("sparse.addmm", _addmm_samples, dtypes=FLOATS_ONLY, layout_dependent=True,
           supports_meta=False),
    OpInfo("sparse.sum", _sum_samples, dtypes=FLOATS_ONLY, layout_dependent=True,
           supports_meta=False),
]
