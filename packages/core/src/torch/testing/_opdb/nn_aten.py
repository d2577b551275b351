"""Rows for the ``torch.*`` functions with ATen signatures whose work ``nn.functional`` does
(plait-nn provides them at the top level): ``torch.batch_norm``, ``torch.embedding``, the
pools, shuffles and activations, the losses that take the reduction enum (0 none, 1 mean,
2 sum) and the recurrent cells."""

from __future__ import annotations

from . import OpInfo, SampleInput

REAL = ("float32", "float64")


def _dt(torch, dtype):
    return getattr(torch, dtype)


def batch_norm_samples(torch, dtype, make):
    x, w, b = make((4, 3, 5), dtype), make((3,), dtype), make((3,), dtype)
    mean, var = make((3,), dtype), make((3,), dtype, 0.5, 2)
    yield SampleInput(x, (w, b, None, None, True, 0.1, 1e-5, False), name="training")
    yield SampleInput(x, (w, b, mean, var, False, 0.1, 1e-5, False), name="evaluation")


def native_batch_norm_samples(torch, dtype, make):
    x, w, b = make((4, 3, 2, 2), dtype), make((3,), dtype), make((3,), dtype)
    yield SampleInput(x, (w, b, None, None, True, 0.1, 1e-5), name="training")
    yield SampleInput(x, (None, None, make((3,), dtype), make((3,), dtype, 0.5, 2), False,
                          0.1, 1e-5), name="evaluation")


def instance_norm_samples(torch, dtype, make):
    yield SampleInput(make((2, 3, 6), dtype),
                      (make((3,), dtype), make((3,), dtype), None, None, True, 0.1, 1e-5,
                       False), name="input statistics")


def group_norm_samples(torch, dtype, make):
    yield SampleInput(make((2, 4, 3), dtype), (2,), name="no affine")
    yield SampleInput(make((2, 6, 2, 2), dtype), (3, make((6,), dtype), make((6,), dtype)),
                      name="affine")


def native_group_norm_samples(torch, dtype, make):
    yield SampleInput(make((2, 4, 3), dtype), (None, None, 2, 4, 3, 2, 1e-5), name="no affine")
    yield SampleInput(make((2, 6, 2, 2), dtype),
                      (make((6,), dtype), make((6,), dtype), 2, 6, 4, 3, 1e-5), name="affine")


def constant_pad_nd_samples(torch, dtype, make):
    yield SampleInput(make((2, 3, 4), dtype), ([1, 2],), name="last dim")
    yield SampleInput(make((2, 3, 4), dtype), ([1, -1, 2, 0], 0.5), name="crop, value")


def embedding_samples(torch, dtype, make):
    index = torch.tensor([[0, 2], [4, 2]])
    yield SampleInput(make((5, 3), dtype), (index,), name="default")
    yield SampleInput(make((5, 3), dtype), (index, 2), name="padding_idx")


def pool1d_samples(torch, dtype, make):
    yield SampleInput(make((2, 3, 8), dtype), (2,), name="stride = kernel")
    yield SampleInput(make((2, 3, 9), dtype), ([3], [2], [1]), name="stride, padding")


def pool_nd_samples(n):
    def samples(torch, dtype, make):
        yield SampleInput(make((1, 2) + (4,) * n, dtype), (2,), name="stride = kernel")
        yield SampleInput(make((1, 2) + (5,) * n, dtype), (3, 2, 1), name="stride, padding")
    return samples


def adaptive_samples(torch, dtype, make):
    yield SampleInput(make((2, 3, 7), dtype), (3,), name="uneven windows")


def pixel_shuffle_samples(torch, dtype, make):
    yield SampleInput(make((1, 8, 2, 3), dtype), (2,), name="factor 2")


def pixel_unshuffle_samples(torch, dtype, make):
    yield SampleInput(make((1, 2, 4, 6), dtype), (2,), name="factor 2")


def channel_shuffle_samples(torch, dtype, make):
    yield SampleInput(make((2, 6, 3), dtype), (3,), name="3 groups")


def bilinear_samples(torch, dtype, make):
    yield SampleInput(make((4, 2), dtype), (make((4, 3), dtype), make((5, 2, 3), dtype),
                                            make((5,), dtype)), name="bias")


def prelu_samples(torch, dtype, make):
    yield SampleInput(make((2, 3, 4), dtype), (make((3,), dtype, 0, 1),), name="per channel")


def threshold_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (0.5, -2.0), name="threshold")


def unary_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), name="values")


def celu_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (2.0,), name="alpha")


def hardshrink_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype, -2, 2), (0.75,), name="lambda")


def rrelu_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (0.1, 0.4), name="evaluation slope")


def kl_div_samples(torch, dtype, make):
    inp, target = make((3, 4), dtype, -3, 0), make((3, 4), dtype, 0.1, 1)
    for reduction in (0, 1, 2):
        yield SampleInput(inp, (target, reduction), name=f"reduction {reduction}")
    yield SampleInput(inp, (make((3, 4), dtype, -3, 0), 2), {"log_target": True},
                      name="log target")


def bce_logits_samples(torch, dtype, make):
    target = make((3, 4), dtype, 0, 1)
    yield SampleInput(make((3, 4), dtype), (target,), name="mean")
    yield SampleInput(make((3, 4), dtype), (target, make((4,), dtype, 0, 1),
                                            make((4,), dtype, 0.5, 2), 0), name="weights, none")


def _signs(torch, dtype, make, shape):
    return torch.tensor((make.array(shape, "float64") > 0).astype(float).tolist(),
                        dtype=_dt(torch, dtype)) * 2 - 1


def hinge_samples(torch, dtype, make):
    yield SampleInput(make((3, 4), dtype), (_signs(torch, dtype, make, (3, 4)), 1.5, 2),
                      name="sum")


def margin_ranking_samples(torch, dtype, make):
    yield SampleInput(make((5,), dtype), (make((5,), dtype), _signs(torch, dtype, make, (5,)),
                                          0.5, 0), name="none")


def cosine_embedding_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), (make((4, 3), dtype),
                                            _signs(torch, dtype, make, (4,)), 0.2), name="mean")


def triplet_samples(torch, dtype, make):
    yield SampleInput(make((4, 3), dtype), (make((4, 3), dtype), make((4, 3), dtype)),
                      name="defaults")
    yield SampleInput(make((4, 3), dtype), (make((4, 3), dtype), make((4, 3), dtype), 0.5,
                                            1.0, 1e-6, True, 0), name="swap, p=1, none")


def poisson_nll_samples(torch, dtype, make):
    target = make((3, 4), dtype, 0, 5)
    yield SampleInput(make((3, 4), dtype, -1, 1), (target, True, False, 1e-8, 1), name="log")
    yield SampleInput(make((3, 4), dtype, 0.1, 3), (target, False, True, 1e-8, 0),
                      name="rates, full")


def _cell_weights(make, dtype, gates):
    return (make((gates * 4, 3), dtype, -1, 1), make((gates * 4, 4), dtype, -1, 1),
            make((gates * 4,), dtype, -1, 1), make((gates * 4,), dtype, -1, 1))


def rnn_cell_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), (make((2, 4), dtype), *_cell_weights(make, dtype, 1)),
                      name="biases")


def gru_cell_samples(torch, dtype, make):
    yield SampleInput(make((2, 3), dtype), (make((2, 4), dtype), *_cell_weights(make, dtype, 3)),
                      name="biases")


def lstm_cell_samples(torch, dtype, make):
    state = (make((2, 4), dtype), make((2, 4), dtype))
    yield SampleInput(make((2, 3), dtype), (state, *_cell_weights(make, dtype, 4)),
                      name="biases")


_TOL = {"atol": 1e-5, "rtol": 1e-4}

OPS = [
    OpInfo("batch_norm", batch_norm_samples, dtypes=REAL, differentiable=True, **_TOL),
    OpInfo("native_batch_norm", native_batch_norm_samples, dtypes=REAL, **_TOL),
    OpInfo("instance_norm", instance_norm_samples, dtypes=REAL, differentiable=True, **_TOL),
    OpInfo("group_norm", group_norm_samples, dtypes=REAL, differentiable=True, **_TOL),
    OpInfo("native_group_norm", native_group_norm_samples, dtypes=REAL, **_TOL),
    OpInfo("constant_pad_nd", constant_pad_nd_samples, dtypes=REAL, differentiable=True),
    OpInfo("embedding", embedding_samples, dtypes=REAL, differentiable=True),
    OpInfo("max_pool1d", pool1d_samples, dtypes=REAL, differentiable=True),
    OpInfo("max_pool1d_with_indices", pool1d_samples, dtypes=REAL),
    OpInfo("avg_pool1d", pool1d_samples, dtypes=REAL, differentiable=True),
    OpInfo("max_pool2d", pool_nd_samples(2), dtypes=REAL, differentiable=True),
    OpInfo("max_pool3d", pool_nd_samples(3), dtypes=REAL),
    OpInfo("adaptive_avg_pool1d", adaptive_samples, dtypes=REAL, differentiable=True),
    OpInfo("adaptive_max_pool1d", adaptive_samples, dtypes=REAL),
    OpInfo("pixel_shuffle", pixel_shuffle_samples, dtypes=REAL),
    OpInfo("pixel_unshuffle", pixel_unshuffle_samples, dtypes=REAL),
    OpInfo("channel_shuffle", channel_shuffle_samples, dtypes=REAL),
    OpInfo("bilinear", bilinear_samples, dtypes=REAL, differentiable=True, **_TOL),
    OpInfo("prelu", prelu_samples, dtypes=REAL, differentiable=True),
    OpInfo("threshold", threshold_samples, dtypes=REAL, differentiable=True),
    OpInfo("selu", unary_samples, dtypes=REAL, differentiable=True),
    OpInfo("celu", celu_samples, dtypes=REAL, differentiable=True),
    OpInfo("hardshrink", hardshrink_samples, dtypes=REAL, differentiable=True),
    OpInfo("rrelu", rrelu_samples, dtypes=REAL),
    OpInfo("kl_div", kl_div_samples, dtypes=REAL, differentiable=True, **_TOL),
    OpInfo("binary_cross_entropy_with_logits", bce_logits_samples, dtypes=REAL,
           differentiable=True, **_TOL),
    OpInfo("hinge_embedding_loss", hinge_samples, dtypes=REAL, differentiable=True),
    OpInfo("margin_ranking_loss", margin_ranking_samples, dtypes=REAL, differentiable=True),
    OpInfo("cosine_embedding_loss", cosine_embedding_samples, dtypes=REAL,
           differentiable=True, **_TOL),
    OpInfo("triplet_margin_loss", triplet_samples, dtypes=REAL, differentiable=True, **_TOL),
    OpInfo("poisson_nll_loss", poisson_nll_samples, dtypes=REAL, differentiable=True, **_TOL),
    OpInfo("rnn_tanh_cell", rnn_cell_samples, dtypes=REAL, differentiable=True, **_TOL),
    OpInfo("rnn_relu_cell", rnn_cell_samples, dtypes=REAL, differentiable=True, **_TOL),
    OpInfo("gru_cell", gru_cell_samples, dtypes=REAL, differentiable=True, **_TOL),
    OpInfo("lstm_cell", lstm_cell_samples, dtypes=REAL, differentiable=True, **_TOL),
]
