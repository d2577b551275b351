"""``torch.*`` functions that other distributions provide (docs/architecture.md).

PyTorch exposes some functions at the top level with ATen signatures whose work is done by
``nn.functional`` (``torch.dropout(input, p, train)``, ``torch.batch_norm(...)``, the losses that
take the reduction enum). Core cannot import plait-nn, so the facade's module ``__getattr__``
looks a missing name up here, one row per name, and imports the module that defines it on first
use. Without that distribution the AttributeError says which one to install.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from . import _subpackages

__all__ = ["PROVIDED", "load"]

_NN = "torch.nn._torch_namespace"

# torch.<name> -> the module that defines it
PROVIDED: Mapping[str, str] = MappingProxyType({
    "adaptive_avg_pool1d": _NN,
    "adaptive_max_pool1d": _NN,
    "alpha_dropout": _NN,
    "alpha_dropout_": _NN,
    "avg_pool1d": _NN,
    "batch_norm": _NN,
    "constant_pad_nd": _NN,
    "bilinear": _NN,
    "binary_cross_entropy_with_logits": _NN,
    "celu": _NN,
    "celu_": _NN,
    "channel_shuffle": _NN,
    "cosine_embedding_loss": _NN,
    "ctc_loss": _NN,
    "dropout": _NN,
    "dropout_": _NN,
    "embedding": _NN,
    "feature_alpha_dropout": _NN,
    "feature_alpha_dropout_": _NN,
    "feature_dropout": _NN,
    "feature_dropout_": _NN,
    "group_norm": _NN,
    "gru": _NN,
    "gru_cell": _NN,
    "hardshrink": _NN,
    "hinge_embedding_loss": _NN,
    "instance_norm": _NN,
    "kl_div": _NN,
    "lstm": _NN,
    "lstm_cell": _NN,
    "margin_ranking_loss": _NN,
    "max_pool1d": _NN,
    "max_pool1d_with_indices": _NN,
    "max_pool2d": _NN,
    "max_pool3d": _NN,
    "native_batch_norm": _NN,
    "native_channel_shuffle": _NN,
    "native_group_norm": _NN,
    "pixel_shuffle": _NN,
    "pixel_unshuffle": _NN,
    "poisson_nll_loss": _NN,
    "prelu": _NN,
    "rnn_relu": _NN,
    "rnn_relu_cell": _NN,
    "rnn_tanh": _NN,
    "rnn_tanh_cell": _NN,
    "rrelu": _NN,
    "rrelu_": _NN,
    "selu": _NN,
    "selu_": _NN,
    "threshold": _NN,
    "threshold_": _NN,
    "triplet_margin_loss": _NN,
})


def load(name: str) -> Any:
    """``torch.<name>`` from the module of its row.

    :param name: a key of :data:`PROVIDED`.
    :returns: the function.
    :raises AttributeError: the distribution that provides it is not installed (the message
        names it and how to install it).
    """
    module = PROVIDED[name]
    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        owner = _subpackages._owner(module)
        if owner is None or exc.name is None or not module.startswith(exc.name):
            raise
        raise AttributeError(f"module 'torch' has no attribute '{name}': torch.{name} is "
                             f"provided by the {owner[1]} distribution ({exc})") from exc
