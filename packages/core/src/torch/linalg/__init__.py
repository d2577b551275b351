"""``torch.linalg``: norms, decompositions, solvers and products of matrices.

The public namespace of the ops in :mod:`torch._aten.linalg_ops` (the op library), each behind
the ``__torch_function__`` entry. Norms are operators over primitives (``linalg_vector_norm``)
and composites of it; the decompositions (inv, det, slogdet, solve, cholesky, qr, svd, eigh,
lstsq...) are aten operators computed on a host copy with LAPACK; a few functions are
composites of those (:mod:`torch.linalg._composites`).
"""

from __future__ import annotations

from .. import _torch_function
from .._aten.linalg_ops import (
    LinAlgError,
    cholesky,
    cholesky_ex,
    cross,
    det,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    inv,
    inv_ex,
    lstsq,
    lu,
    lu_factor,
    lu_factor_ex,
    matmul,
    matrix_norm,
    matrix_power,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    solve_triangular,
    svd,
    svdvals,
    vecdot,
    vector_norm,
)
from ..amp import _composite as _autocast_composite
from ._composites import (
    cond,
    diagonal,
    lu_solve,
    matrix_exp,
    solve_ex,
    tensorinv,
    tensorsolve,
    vander,
)
from ._householder import householder_product
from ._ldl import ldl_factor, ldl_factor_ex, ldl_solve

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "eig", "eigh", "eigvals",
    "eigvalsh", "inv", "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex", "matmul",
    "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet",
    "solve", "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm",
    "cond", "diagonal", "matrix_exp", "tensorinv", "tensorsolve", "vander", "solve_ex",
    "lu_solve", "householder_product", "ldl_factor", "ldl_factor_ex", "ldl_solve",
]

# Functions written in other ops that PyTorch's autocast lists name as operators, or that
# PyTorch runs as one unlisted native op (torch.amp._policy.UNCAST): inside an autocast region
# their inputs are cast as those operators' would be (or left alone), and the ops inside them
# are not cast again. function name -> operator.
_AUTOCAST_COMPOSITES = {
    "cond": "linalg_cond", "cross": "linalg_cross", "det": "linalg_det", "eigh": "linalg_eigh",
    "eigvalsh": "linalg_eigvalsh", "householder_product": "linalg_householder_product",
    "ldl_factor": "linalg_ldl_factor", "ldl_factor_ex": "linalg_ldl_factor_ex",
    "ldl_solve": "linalg_ldl_solve", "lu": "linalg_lu", "lu_factor": "linalg_lu_factor",
    "lu_factor_ex": "linalg_lu_factor_ex", "lu_solve": "linalg_lu_solve",
    "matrix_exp": "linalg_matrix_exp", "matrix_norm": "linalg_matrix_norm",
    "multi_dot": "linalg_multi_dot", "slogdet": "linalg_slogdet", "solve_ex": "linalg_solve_ex",
    "solve_triangular": "linalg_solve_triangular", "svd": "linalg_svd",
    "svdvals": "linalg_svdvals", "tensorinv": "linalg_tensorinv",
    "tensorsolve": "linalg_tensorsolve", "vecdot": "linalg_vecdot",
}
_autocast_composite.mark(globals(), _AUTOCAST_COMPOSITES)

# The public functions behind the __torch_function__ entry, once (identity never changes).
_torch_function.wrap_module(__name__)
