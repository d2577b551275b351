"""The ``torch.*`` functions PyTorch exposes at the top level with ATen signatures whose work
is done by ``nn.functional``: ``torch.dropout(input, p, train)``, ``torch.embedding(weight,
indices, padding_idx=-1, ...)``, ``torch.batch_norm(...)``, the losses that take ``reduction``
as the integer enum (0 none, 1 mean, 2 sum), the recurrent cells and layers.

Core cannot import plait-nn, so the facade finds these names through its table of names
plait-nn provides (``torch._provided_names``) and imports this module on first use. Each
function here only translates the ATen calling convention to the functional one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, _torch_function
from torch.nn.modules.rnn import RNNBase

__all__ = [
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "alpha_dropout", "alpha_dropout_",
    "avg_pool1d", "batch_norm", "bilinear", "binary_cross_entropy_with_logits", "celu", "celu_",
    "channel_shuffle", "constant_pad_nd", "cosine_embedding_loss", "ctc_loss", "dropout",
    "dropout_", "embedding",
    "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout", "feature_dropout_",
    "group_norm", "gru", "gru_cell", "hardshrink", "hinge_embedding_loss", "instance_norm",
    "kl_div", "lstm", "lstm_cell", "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices",
    "max_pool2d", "max_pool3d", "native_batch_norm", "native_channel_shuffle",
    "native_group_norm", "pixel_shuffle",
    "pixel_unshuffle", "poisson_nll_loss", "prelu", "rnn_relu", "rnn_relu_cell", "rnn_tanh",
    "rnn_tanh_cell", "rrelu", "rrelu_", "selu", "selu_", "threshold", "threshold_",
    "triplet_margin_loss",
]

# at::Reduction: the integer the ATen loss functions take. Any other value leaves the loss
# unreduced, as ATen's reduction does. An omitted reduction is 0 (none), not the schema's
# Mean: PyTorch's Python argument parser cannot read the default "at::Reduction::Mean" and
# passes 0, so torch.kl_div(x, t) is unreduced in PyTorch 2.13 (F.kl_div passes it explicitly).
_REDUCTION_NAMES = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction: int) -> str:
    return _REDUCTION_NAMES.get(int(reduction), "none")


def _no_grad_for(function: str, **arguments: Tensor | None) -> None:
    """PyTorch's refusal of arguments its ATen function has no derivative for (running
    statistics, loss weights), when autograd would record the call."""
    if not torch.is_grad_enabled():
        return
    for name, value in arguments.items():
        if value is not None and value.requires_grad:
            raise RuntimeError(f"The function '{function}' is not differentiable with respect "
                               f"to argument '{name}'. This input cannot have requires_grad "
                               "True.")


# --------------------------------------------------------------------------- dropout


def _check_p(p: float) -> None:
    # ATen raises RuntimeError here (nn.functional raises ValueError)
    if p < 0.0 or p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_keep(input: Tensor, p: float) -> Tensor:
    """The scaled keep mask of whole features: one value per (N, C), broadcast over the rest."""
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = [*input.shape[:2]] + [1] * (input.dim() - 2)
    keep = torch.empty(shape, dtype=input.dtype, device=input.device)
    if p == 1.0:
        return keep.zero_()
    return keep.bernoulli_(1.0 - p).div_(1.0 - p)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.dropout``: each element zeroed with probability ``p`` and the rest scaled by
    ``1 / (1 - p)`` when ``train``; the input itself otherwise."""
    _check_p(p)
    return F.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`dropout`."""
    _check_p(p)
    return F.dropout(input, p, train, inplace=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_dropout``: whole channels (dim 1 of an (N, C, *) input) zeroed with
    probability ``p``, the rest scaled by ``1 / (1 - p)``."""
    _check_p(p)
    if not train or p == 0.0:
        return input
    return input * _feature_keep(input, p)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`feature_dropout`."""
    _check_p(p)
    if not train or p == 0.0:
        return input
    return input.mul_(_feature_keep(input, p))


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.alpha_dropout``: dropout that keeps SELU's zero mean and unit variance."""
    _check_p(p)
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`alpha_dropout`."""
    _check_p(p)
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``torch.feature_alpha_dropout``: alpha dropout of whole channels."""
    _check_p(p)
    if train and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`feature_alpha_dropout`."""
    _check_p(p)
    if train and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return F.feature_alpha_dropout(input, p, train, inplace=True)


# --------------------------------------------------------------------------- layers


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``torch.embedding``: rows of ``weight`` picked by ``indices``. A negative
    ``padding_idx`` means none (ATen's convention; ``F.embedding`` takes ``None``)."""
    return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """``torch.batch_norm``: ``F.batch_norm`` in ATen's argument order (``cudnn_enabled`` is
    accepted and has no effect on the CPU)."""
    _no_grad_for("native_batch_norm", running_mean=running_mean, running_var=running_var)
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                      momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.native_batch_norm``: ``(output, save_mean, save_invstd)``. In training the
    saved values are the batch mean and ``1 / sqrt(biased var + eps)`` per channel and the
    running statistics are updated in place; in evaluation both are empty, as in PyTorch."""
    _no_grad_for("native_batch_norm", running_mean=running_mean, running_var=running_var)
    return torch.ops.aten.native_batch_norm.default(input, weight, bias, running_mean,
                                                    running_var, training, momentum, eps)


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int,
                      C: int, HxW: int, group: int,
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.native_group_norm``: ``(output, mean, rstd)``, the statistics (N, group) per
    sample and group, as in PyTorch."""
    return torch.ops.aten.native_group_norm.default(input, weight, bias, N, C, HxW, group, eps)


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    """``torch.constant_pad_nd``: ``F.pad`` in constant mode (negative pads crop)."""
    return torch.ops.aten.constant_pad_nd.default(input, [int(p) for p in pad], value)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """``torch.instance_norm``: ``F.instance_norm`` in ATen's argument order."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enabled: bool = True) -> Tensor:
    """``torch.group_norm``: ``F.group_norm`` (``cudnn_enabled`` has no effect on the CPU)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def _stride(stride: Any) -> Any:
    # ATen's default stride is the empty list, which means "the kernel size"
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        return None
    return stride


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """``torch.max_pool1d`` (an empty ``stride`` is the kernel size)."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (),
                            padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """``torch.max_pool1d_with_indices``: the pooled values and their indices."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                        return_indices=True)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """``torch.max_pool2d`` (an empty ``stride`` is the kernel size)."""
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    """``torch.max_pool3d`` (an empty ``stride`` is the kernel size)."""
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """``torch.avg_pool1d`` (an empty ``stride`` is the kernel size)."""
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                        count_include_pad)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """``torch.adaptive_avg_pool1d``."""
    return F.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """``torch.adaptive_max_pool1d``: the pooled values and their indices (always both)."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``torch.pixel_shuffle``: (*, C r^2, H, W) -> (*, C, H r, W r)."""
    return F.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``torch.pixel_unshuffle``: (*, C, H r, W r) -> (*, C r^2, H, W)."""
    return F.pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``torch.channel_shuffle``: the channels of (N, C, *) regrouped as (C / g, g)."""
    return F.channel_shuffle(input, groups)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``torch.native_channel_shuffle``: :func:`channel_shuffle`."""
    return F.native_channel_shuffle(input, groups)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """``torch.bilinear``: ``x1^T A x2 + b`` for each output feature."""
    return F.bilinear(input1, input2, weight, bias)


# --------------------------------------------------------------------------- activations


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``torch.prelu``: ``max(0, x) + weight * min(0, x)`` (a weight per channel or one)."""
    return F.prelu(input, weight)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """``torch.threshold``: ``input`` where ``input > threshold``, ``value`` elsewhere."""
    return F.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return F.threshold_(input, threshold, value)


def selu(input: Tensor) -> Tensor:
    """``torch.selu``: ``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))``."""
    return F.selu(input)


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`."""
    return F.selu_(input)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``torch.celu``: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    return F.celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`."""
    return F.celu_(input, alpha)


def _rrelu_training(input: Tensor, lower: float, upper: float,
                    generator: torch.Generator | None) -> Tensor:
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    return torch.ops.aten.rrelu_with_noise.default(input, torch.empty_like(input), lower, upper,
                                                   True, generator)


def rrelu(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3, training: bool = False,
          generator: torch.Generator | None = None) -> Tensor:
    """``torch.rrelu``: in training each non-positive element gets a slope drawn from
    ``U(lower, upper)`` (from ``generator`` when given); otherwise ``(lower + upper) / 2``."""
    if training and generator is not None:
        return _rrelu_training(input, lower, upper, generator)
    return F.rrelu(input, lower, upper, training)


def rrelu_(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3, training: bool = False,
           generator: torch.Generator | None = None) -> Tensor:
    """In-place :func:`rrelu`."""
    if training and generator is not None:
        out = _rrelu_training(input, lower, upper, generator)
        with torch.no_grad():
            input.copy_(out)
        return input
    return F.rrelu_(input, lower, upper, training)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``torch.hardshrink``: zero on ``[-lambd, lambd]``, the identity elsewhere."""
    return F.hardshrink(input, lambd)


# --------------------------------------------------------------------------- losses


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *,
           log_target: bool = False) -> Tensor:
    """``torch.kl_div``: ``target * (log(target) - input)``, unreduced unless ``reduction`` is
    given; 1 is the plain mean (without ``F.kl_div``'s warning about "batchmean")."""
    loss = F.kl_div(input, target, reduction="none", log_target=log_target)
    name = _reduction(reduction)
    return loss.mean() if name == "mean" else loss.sum() if name == "sum" else loss


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None,
                                     reduction: int = 0) -> Tensor:
    """``torch.binary_cross_entropy_with_logits`` with the reduction enum."""
    _no_grad_for("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 0) -> Tensor:
    """``torch.hinge_embedding_loss`` with the reduction enum."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    """``torch.margin_ranking_loss`` with the reduction enum."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    """``torch.cosine_embedding_loss`` with the reduction enum."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-06,
                        swap: bool = False, reduction: int = 0) -> Tensor:
    """``torch.triplet_margin_loss`` with the reduction enum."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """``torch.poisson_nll_loss``: every argument required, as in ATen."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Sequence[int],
             target_lengths: Tensor | Sequence[int], blank: int = 0, reduction: int = 0,
             zero_infinity: bool = False) -> Tensor:
    """``torch.ctc_loss`` with the reduction enum (mean divides each loss by its target
    length first, as ``F.ctc_loss`` does)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction), zero_infinity)


# --------------------------------------------------------------------------- recurrent cells


def _cell_gates(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
                b_hh: Tensor | None) -> tuple[Tensor, Tensor]:
    return F.linear(input, w_ih, b_ih), F.linear(hx, w_hh, b_hh)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """``torch.rnn_tanh_cell``: ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    gi, gh = _cell_gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return torch.tanh(gi + gh)


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """``torch.rnn_relu_cell``: ``relu(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    gi, gh = _cell_gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return torch.relu(gi + gh)


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """``torch.lstm_cell``: one LSTM step from ``hx = (h, c)``; gates in the order i, f, g, o.
    Returns ``(h', c')``."""
    h, c = hx
    gi, gh = _cell_gates(input, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, -1)
    c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c_next), c_next


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
             b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """``torch.gru_cell``: one GRU step; gates in the order r, z, n, with the hidden n gate
    (bias included) inside the reset product."""
    gi, gh = _cell_gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return n + z * (hx - n)


# --------------------------------------------------------------------------- recurrent layers


class _FlatRNN:
    """What :meth:`RNNBase._run` reads of a layer, built from ATen's flat parameter list
    (per layer and direction: ``w_ih, w_hh[, b_ih, b_hh][, w_hr]``)."""

    def __init__(self, mode: str, params: Sequence[Tensor], has_biases: bool, num_layers: int,
                 dropout: float, train: bool, bidirectional: bool, projected: bool) -> None:
        self.mode, self.num_layers, self.dropout, self.training = mode, num_layers, dropout, train
        self.bidirectional = bidirectional
        names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if has_biases else [])
        names += ["weight_hr"] if projected else []
        directions = 2 if bidirectional else 1
        if len(params) != len(names) * num_layers * directions:
            raise RuntimeError(f"{mode.lower()}: expected {len(names) * num_layers * directions} "
                               f"parameters, got {len(params)}")
        self._all_weights: list[list[str]] = []
        flat = iter(params)
        for layer in range(num_layers):
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                self._all_weights.append([n + suffix for n in names])
                for name in names:
                    setattr(self, name + suffix, next(flat))
        self._flat_weights = list(params)
        # (only whether there is a projection is read: its size is the weight's)
        self.proj_size = 1 if projected else 0


def _run_rnn(mode: str, input: Tensor, hx: Any, params: Any, has_biases: Any,
             num_layers: Any, dropout: Any, train: Any, bidirectional: Any,
             batch_first: Any, projected: bool = False) -> tuple[Tensor, Any]:
    """One of ATen's two forms: ``(input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first)`` or, for packed sequences, ``(data, batch_sizes, hx, params,
    has_biases, num_layers, dropout, train, bidirectional)``, told apart by where the
    parameter list is."""
    if isinstance(has_biases, (list, tuple)):  # the packed form: shift the arguments
        data, batch_sizes = input, hx
        hx, params, has_biases, num_layers, dropout, train, bidirectional = (
            params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
        layer = _FlatRNN(mode, params, has_biases, num_layers, dropout, train, bidirectional,
                         projected)
        sizes = [int(n) for n in batch_sizes.tolist()]
        return RNNBase._run(layer, data, sizes, hx)  # type: ignore[arg-type]
    layer = _FlatRNN(mode, params, has_biases, num_layers, dropout, train, bidirectional,
                     projected)
    x = input.transpose(0, 1) if batch_first else input
    out, state = RNNBase._run(layer, x, None, hx)  # type: ignore[arg-type]
    return (out.transpose(0, 1) if batch_first else out), state


def rnn_tanh(input: Tensor, hx: Any, params: Any, has_biases: Any, num_layers: Any,
             dropout: Any, train: Any, bidirectional: Any, batch_first: Any) -> Any:
    """``torch.rnn_tanh``: a multi-layer tanh RNN over (T, B, I) (or (B, T, I)) input from
    ``hx`` (L*D, B, H), or over packed ``(data, batch_sizes, hx, params, ...)``; returns
    ``(output, h_n)``."""
    return _run_rnn("RNN_TANH", input, hx, params, has_biases, num_layers, dropout, train,
                    bidirectional, batch_first)


def rnn_relu(input: Tensor, hx: Any, params: Any, has_biases: Any, num_layers: Any,
             dropout: Any, train: Any, bidirectional: Any, batch_first: Any) -> Any:
    """``torch.rnn_relu``: :func:`rnn_tanh` with relu."""
    return _run_rnn("RNN_RELU", input, hx, params, has_biases, num_layers, dropout, train,
                    bidirectional, batch_first)


def gru(input: Tensor, hx: Any, params: Any, has_biases: Any, num_layers: Any, dropout: Any,
        train: Any, bidirectional: Any, batch_first: Any) -> Any:
    """``torch.gru``: a multi-layer GRU (both forms of :func:`rnn_tanh`); returns
    ``(output, h_n)``."""
    return _run_rnn("GRU", input, hx, params, has_biases, num_layers, dropout, train,
                    bidirectional, batch_first)


def lstm(input: Tensor, hx: Any, params: Any, has_biases: Any, num_layers: Any, dropout: Any,
         train: Any, bidirectional: Any, batch_first: Any) -> Any:
    """``torch.lstm``: a multi-layer LSTM from ``hx = (h_0, c_0)`` (both forms of
    :func:`rnn_tanh`); returns ``(output, h_n, c_n)``. A projected LSTM (``h_0`` narrower than
    ``c_0``) takes ``w_hr`` after each layer's biases, as PyTorch's flat list has it."""
    state = params if isinstance(has_biases, (list, tuple)) else hx
    h0, c0 = state
    projected = h0.shape[-1] != c0.shape[-1]
    if isinstance(has_biases, (list, tuple)):
        args = (input, hx, (h0, c0), has_biases, num_layers, dropout, train, bidirectional,
                batch_first)
    else:
        args = (input, (h0, c0), params, has_biases, num_layers, dropout, train,
                bidirectional, batch_first)
    out, (h_n, c_n) = _run_rnn("LSTM", *args, projected=projected)
    return out, h_n, c_n


# Behind the __torch_function__ entry like every torch.* function (and, as ATen functions,
# taking the numpy keyword names PyTorch's argument parser accepts).
_torch_function.wrap_namespace(globals(), __all__)
