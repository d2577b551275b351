"""The op surface: gathers the public functions of ``torch`` that compute from the modules
that implement them, one concern per module, and binds their Tensor methods.

Loaded on first use (through the facade's ``__getattr__`` or ``Tensor.__new__``), because it
imports numpy; loading also installs ``Tensor(...)`` and advanced indexing into core's upcall
slots (:mod:`torch._core.upcalls`). Core does the shared work of every op once (argument parsing,
promotion, broadcasting, output allocation) and hands primitives outputs plus inputs of one dtype,
already broadcast (docs/architecture.md).

An op module defines ``__all__`` (its public ``torch.*`` functions) and ``METHODS`` (Tensor
method name -> function). Adding a module is adding a row to ``OP_MODULES``.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from . import _torch_function
from ._core import upcalls
from ._core.tensor import Tensor
from .amp import _composite as _autocast_composite

OP_MODULES = (
    "_aten.views",
    "_aten.inplace_views",
    "_core.promotion",
    "_aten.factories",
    "_aten.convert",
    "_aten.arith",
    "_tensor_methods",
    "_aten.elementwise",
    "_aten.complex_views",
    "_aten.reductions",
    "_aten.shape",
    "_aten.indexing",
    "_aten.creation",
    "_aten.random",
    "_aten.gamma_sampling",
    "_aten.poisson_sampling",
    "_aten.linalg",
    "_aten.spectral",
    "_aten.windows",
    "_aten.stft",
    "_fused.softmax",
    "_fused.norms",
    "_fused.losses",
    "_fused.attention",
    "_fused.adam",
    "_aten.conv",
    "_fused.activations",
    "_aten.activations",
    "_aten.losses",
    "_aten.sampling",
    "_aten.nn_layout",
    "_aten.resample",
    "_aten.normalization",
    "_aten.pooling",
    "_aten.im2col",
    "_fused.embedding",
    "_fused.linear",
    "_fused.rnn_cells",
    "_fused.rnn_sequence",
    "_fused.diagonals",
    "_fused.distances",
    "_fused.membership",
    "_fused.statistics",
    "_fused.gradient",
    "_fused.histogramdd",
    "_fused.factorizations",
    "_fused.lowrank",
    "_fused.products",
    "_fused.integer_math",
    "_fused.float_parts",
    "_aten.queries",
    "_fused.special",
    "_aten.sparse",
    "linalg._torch_level",
    "_aten.view_copies",
    "_method_forms",
    "_aten.python_key",  # last: in-place forms of the operators above, modes' arguments
)

__all__: list[str] = []
_methods: dict[str, Any] = {}
for _name in OP_MODULES:
    _mod = importlib.import_module(f"torch.{_name}")
    for _public in getattr(_mod, "__all__", ()):
        globals()[_public] = getattr(_mod, _public)
        __all__.append(_public)
    _methods.update(getattr(_mod, "METHODS", {}))
# torch.* functions written in other ops that PyTorch's autocast lists name as operators
# (torch.amp._policy): inside an autocast region their inputs are cast as those operators'
# would be and the ops inside them are not cast again (a bfloat16 matmul output fed to
# torch.cdist is computed in float32, as in PyTorch). function name -> listed operator.
_AUTOCAST_COMPOSITES = {
    "addr": "addr", "bilinear": "bilinear", "cdist": "cdist", "chain_matmul": "chain_matmul",
    "cholesky": "cholesky", "cholesky_inverse": "cholesky_inverse",
    "cholesky_solve": "cholesky_solve", "cosine_embedding_loss": "cosine_embedding_loss",
    "cosine_similarity": "cosine_similarity", "cross": "cross", "ctc_loss": "ctc_loss",
    "dist": "dist", "geqrf": "geqrf", "grid_sampler": "grid_sampler", "group_norm": "group_norm",
    "hinge_embedding_loss": "hinge_embedding_loss", "index_copy": "index_copy",
    "index_put": "index_put", "inverse": "inverse", "kl_div": "kl_div",
    "lu_solve": "lu_solve", "margin_ranking_loss": "margin_ranking_loss",
    "nanquantile": "nanquantile", "norm": "norm", "nuclear_norm": "nuclear_norm",
    "orgqr": "orgqr", "ormqr": "ormqr", "pdist": "pdist", "pinverse": "pinverse",
    "poisson_nll_loss": "poisson_nll_loss", "polar": "polar", "prelu": "prelu", "qr": "qr",
    "quantile": "quantile", "renorm": "renorm", "scatter_add": "scatter_add", "stft": "stft",
    "svd": "svd", "triangular_solve": "triangular_solve",
    "triplet_margin_loss": "triplet_margin_loss", "view_as_complex": "view_as_complex",
}
_autocast_composite.mark(globals(), _AUTOCAST_COMPOSITES)
_autocast_composite.mark(_methods, _AUTOCAST_COMPOSITES)  # x.svd(), x.inverse()... as well

# Each torch.* function behind the __torch_function__ entry, once, so its identity never
# changes (the Tensor methods get theirs only when an override can first exist).
_torch_function.wrap_namespace(globals(), __all__)
for _method, _fn in _methods.items():
    # x.mean(axis=1, keepdims=True): reductions take the numpy names PyTorch's parser accepts
    if _method in _torch_function.NUMPY_NAME_METHODS:
        _fn = _torch_function.numpy_names_method(_fn)
    setattr(Tensor, _method, _fn)
importlib.import_module("torch.autograd")  # the Autograd key: recording and Tensor.backward

from ._aten.factories import legacy_tensor_new  # noqa: E402


def advanced_index(t: Tensor, index: tuple[Any, ...]) -> Tensor:
    """Indexing with tensors, lists or booleans: served by torch._aten.indexing once it has it."""
    fn = getattr(sys.modules["torch._aten.indexing"], "getitem", None)
    if fn is None:
        raise IndexError("indexing with tensors, lists or booleans is not supported yet (only "
                         "ints, slices, None and ... are)")
    return fn(t, index)


upcalls.install(legacy_tensor_new=legacy_tensor_new, advanced_index=advanced_index)
