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
