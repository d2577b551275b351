"""``torch.nn.utils``: gradient clipping, parameter/vector conversion, parametrizations
(weight and spectral norm) and ``stateless.functional_call``."""

from . import parametrizations, parametrize, rnn, stateless
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
    "parameters_to_vector", "vector_to_parameters", "rnn",
    "parametrizations", "parametrize", "stateless", "remove_spectral_norm", "spectral_norm",
    "remove_weight_norm", "weight_norm",
]
