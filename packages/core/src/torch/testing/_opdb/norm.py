"""Op database rows: normalisation and losses -- softmax / log_softmax gradients, layer_norm,
native_layer_norm, and cross-entropy through ``torch.ops.aten.cross_entropy_loss`` (class
indices of any leading shape, class probabilities, weights, ignore_index, label smoothing and
the three reductions). Float64 samples are small enough to gradcheck."""

from __future__ import annotations

from . import OpInfo, SampleInput


def softmax_grad_samples(torch, dtype, make):
    yield SampleInput(make((3, 5), dtype), (1,), name="rows")
    yield SampleInput(make((4, 3), dtype), (0,), name="columns")
    yield SampleInput(make((2, 3, 4), dtype), (1,), name="middle dim")
    yield SampleInput(make((2, 3, 4), dtype, noncontiguous=True), (-1,), name="noncontiguous")
    yield SampleInput(make((6,), dtype), (0,), name="vector")


def layer_norm_samples(torch, dtype, make):
    yield SampleInput(make((3, 5), dtype), ([5],), name="rows")
    yield SampleInput(make((3, 5), dtype, low=-2, high=2), ([5], make((5,), dtype),
                                                           make((5,), dtype)),
                      name="weight and bias")
    yield SampleInput(make((2, 3, 4), dtype), ([3, 4], make((3, 4), dtype)), name="weight, 2-d")
    yield SampleInput(make((2, 2, 4), dtype), ([4], None, make((4,), dtype)), name="bias only")
    yield SampleInput(make((2, 4), dtype, noncontiguous=True), ([4],), {"eps": 1e-3},
                      name="noncontiguous, eps")
    yield SampleInput(make((5,), dtype), ([5],), name="all dims")
    yield SampleInput(make((0, 4), dtype), ([4],), name="no rows")


def native_layer_norm_samples(torch, dtype, make):
    yield SampleInput(make((3, 5), dtype), ([5], None, None, 1e-5), name="no weight")
    yield SampleInput(make((3, 5), dtype), ([5], make((5,), dtype), make((5,), dtype), 1e-5),
                      name="weight and bias")
    yield SampleInput(make((2, 3, 4), dtype), ([3, 4], make((3, 4), dtype), None, 1e-3),
                      name="weight only, 2-d")


def _targets(torch, make, shape, classes):
    return torch.tensor(make.rng.integers(0, classes, shape).tolist(),
                        dtype=torch.int64).reshape(shape)


def _probabilities(torch, dtype, make, shape, dim):
    return torch.softmax(make(shape, dtype), dim)


def cross_entropy_samples(torch, dtype, make):
    t = _targets(torch, make, (4,), 5)
    yield SampleInput(make((4, 5), dtype), (t,), name="mean")
    yield SampleInput(make((4, 5), dtype), (t,), {"reduction": 0}, name="none")
    yield SampleInput(make((4, 5), dtype), (t,), {"reduction": 2}, name="sum")
    yield SampleInput(make((4, 5), dtype), (t, make((5,), dtype, low=0.1, high=2)),
                      name="weight")
    ignored = torch.tensor([0, 2, 2, 4])
    yield SampleInput(make((4, 5), dtype), (ignored,), {"ignore_index": 2}, name="ignore_index")
    yield SampleInput(make((4, 5), dtype), (ignored, make((5,), dtype, low=0.1, high=2)),
                      {"ignore_index": 2, "label_smoothing": 0.2}, name="weight, smoothing")
    yield SampleInput(make((4, 5), dtype), (t,), {"label_smoothing": 0.1, "reduction": 0},
                      name="smoothing, none")
    yield SampleInput(make((5,), dtype), (torch.tensor(3),), name="unbatched")
    yield SampleInput(make((2, 3, 4), dtype), (_targets(torch, make, (2, 4), 3),),
                      {"reduction": 0}, name="(N, C, d)")
    yield SampleInput(make((2, 3, 2, 2), dtype), (_targets(torch, make, (2, 2, 2), 3),),
                      name="(N, C, d1, d2)")
    yield SampleInput(make((3, 4), dtype), (_probabilities(torch, dtype, make, (3, 4), 1),),
                      name="probabilities")
    yield SampleInput(make((3, 4), dtype), (_probabilities(torch, dtype, make, (3, 4), 1),
                                            make((4,), dtype, low=0.1, high=2)),
                      {"label_smoothing": 0.3, "reduction": 0},
                      name="probabilities, weight, smoothing")


OPS = [
    OpInfo("softmax", softmax_grad_samples, method="softmax", differentiable=True,
           dtypes=("float32", "float64")),
    OpInfo("log_softmax", softmax_grad_samples, method="log_softmax", differentiable=True,
           dtypes=("float32", "float64")),
    OpInfo("layer_norm", layer_norm_samples, differentiable=True,
           dtypes=("float32", "float64"), atol=1e-5, rtol=1e-4),
    OpInfo("native_layer_norm", native_layer_norm_samples, differentiable=True,
           dtypes=("float32", "float64"), atol=1e-5, rtol=1e-4),
    # half types: one rounding of the float32 result, which may differ by an ulp between
    # statistics summed in different orders
    OpInfo("layer_norm", layer_norm_samples, dtypes=("float16", "bfloat16"), atol=2e-2,
           rtol=2e-2),
    OpInfo("native_layer_norm", native_layer_norm_samples, dtypes=("float16", "bfloat16"),
           atol=2e-2, rtol=2e-2),
    # PyTorch's half-precision loss accumulates differently (a few half ulps)
    OpInfo("ops.aten.cross_entropy_loss", cross_entropy_samples, differentiable=True,
           dtypes=("float32", "float64"), atol=1e-5, rtol=1e-4),
    OpInfo("ops.aten.cross_entropy_loss", cross_entropy_samples,
           dtypes=("float16", "bfloat16"), atol=2e-2, rtol=2e-2),
]
