"""Names programs import or call (issue 12): ``torch.nn.modules.<file>`` paths as PyTorch has
them, ``torch.nn.utils.prune``, ``torch.distributed``, ``torch.nn.parallel`` and
``torch.utils.data.DistributedSampler``.

Expected values are PyTorch 2.13's answers on its CPU build.
"""

from __future__ import annotations

import pickle
import warnings

import pytest
from surface_support import run_cpu_only

import torch
from torch._core import registry

# -- torch.nn.modules.<file> paths --------------------------------------------------------

# PyTorch 2.13's file for each class (the module name its pickles record)
NN_PATHS = {
    "MultiheadAttention": "activation", "ReLU": "activation", "Linear": "linear",
    "Identity": "linear", "BatchNorm1d": "batchnorm", "BatchNorm2d": "batchnorm",
    "BatchNorm3d": "batchnorm", "LazyBatchNorm2d": "batchnorm", "SyncBatchNorm": "batchnorm",
    "InstanceNorm1d": "instancenorm", "InstanceNorm2d": "instancenorm",
    "LazyInstanceNorm3d": "instancenorm", "LayerNorm": "normalization",
    "GroupNorm": "normalization", "RMSNorm": "normalization", "Conv2d": "conv",
    "ConvTranspose1d": "conv", "Dropout": "dropout", "Embedding": "sparse",
    "EmbeddingBag": "sparse", "LSTM": "rnn", "GRUCell": "rnn", "Sequential": "container",
    "ModuleList": "container", "ModuleDict": "container", "ParameterList": "container",
    "Container": "container", "MaxPool2d": "pooling", "AdaptiveAvgPool2d": "pooling",
    "CrossEntropyLoss": "loss", "MSELoss": "loss", "Transformer": "transformer",
    "TransformerEncoderLayer": "transformer", "Module": "module", "Flatten": "flatten",
    "Unflatten": "flatten", "ZeroPad2d": "padding", "ReflectionPad1d": "padding",
    "CosineSimilarity": "distance", "Fold": "fold", "PixelShuffle": "pixelshuffle",
    "ChannelShuffle": "channelshuffle", "Upsample": "upsampling",
}


@pytest.mark.parametrize(("name", "file"), sorted(NN_PATHS.items()))
def test_nn_class_lives_at_pytorchs_path(name: str, file: str) -> None:
    import importlib

    cls = getattr(torch.nn, name)
    assert cls.__module__ == f"torch.nn.modules.{file}"
    assert getattr(importlib.import_module(f"torch.nn.modules.{file}"), name) is cls


def test_non_dynamically_quantizable_linear() -> None:
    from torch.nn.modules.linear import NonDynamicallyQuantizableLinear

    assert issubclass(NonDynamicallyQuantizableLinear, torch.nn.Linear)
    mha = torch.nn.MultiheadAttention(4, 2)
    assert type(mha.out_proj) is NonDynamicallyQuantizableLinear


def test_private_base_classes_at_pytorchs_paths() -> None:
    from torch.nn.modules.batchnorm import _BatchNorm, _NormBase
    from torch.nn.modules.instancenorm import _InstanceNorm

    assert isinstance(torch.nn.BatchNorm2d(2), _BatchNorm)
    assert isinstance(torch.nn.InstanceNorm2d(2), _NormBase)
    assert isinstance(torch.nn.InstanceNorm2d(2), _InstanceNorm)
    assert not isinstance(torch.nn.BatchNorm2d(2), _InstanceNorm)
    from torch.nn.modules.transformer import _get_activation_fn, _get_clones

    assert len(_get_clones(torch.nn.Linear(2, 2), 3)) == 3
    assert _get_activation_fn("relu")(torch.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]
    from torch.nn.modules.transformer import _generate_square_subsequent_mask

    inf = float("inf")
    assert _generate_square_subsequent_mask(3).tolist() == [[0, -inf, -inf], [0, 0, -inf],
                                                            [0, 0, 0]]


def test_padding_and_pooling_bases_at_pytorchs_paths() -> None:
    from torch.nn.modules.padding import _CircularPadNd, _ReflectionPadNd, _ReplicationPadNd
    from torch.nn.modules.pooling import _AdaptiveAvgPoolNd, _AdaptiveMaxPoolNd

    nn = torch.nn
    assert isinstance(nn.ReflectionPad2d(1), _ReflectionPadNd)
    assert not isinstance(nn.ReplicationPad2d(1), _ReflectionPadNd)
    assert isinstance(nn.ReplicationPad3d(1), _ReplicationPadNd)
    assert isinstance(nn.CircularPad1d(1), _CircularPadNd)
    assert isinstance(nn.AdaptiveAvgPool2d(1), _AdaptiveAvgPoolNd)
    assert not isinstance(nn.AdaptiveMaxPool2d(1), _AdaptiveAvgPoolNd)
    assert isinstance(nn.AdaptiveMaxPool1d(1), _AdaptiveMaxPoolNd)
    x = torch.arange(8.0).reshape(1, 2, 4)
    assert nn.ReflectionPad1d(2)(x)[0, 0].tolist() == [2, 1, 0, 1, 2, 3, 2, 1]
    assert nn.ReplicationPad1d(1)(x)[0, 0].tolist() == [0, 0, 1, 2, 3, 3]
    assert nn.CircularPad1d(1)(x)[0, 0].tolist() == [3, 0, 1, 2, 3, 0]


def test_pickled_modules_name_pytorchs_paths() -> None:
    model = torch.nn.Sequential(torch.nn.BatchNorm2d(3), torch.nn.MultiheadAttention(4, 2),
                                torch.nn.InstanceNorm1d(2), torch.nn.ChannelShuffle(2))
    data = pickle.dumps(model)
    for path in (b"torch.nn.modules.batchnorm", b"torch.nn.modules.activation",
                 b"torch.nn.modules.instancenorm", b"torch.nn.modules.channelshuffle",
                 b"NonDynamicallyQuantizableLinear"):
        assert path in data
    assert b"torch.nn.modules.normalization" not in data
    assert b"torch.nn.modules.pixelshuffle" not in data
    copy = pickle.loads(data)
    assert type(copy[1].out_proj).__name__ == "NonDynamicallyQuantizableLinear"


def test_weights_only_load_of_a_module_with_safe_globals(tmp_path) -> None:
    nn = torch.nn
    model = nn.Sequential(nn.BatchNorm2d(3), nn.MultiheadAttention(4, 2))
    model[0](torch.randn(2, 3, 2, 2))  # through autograd: running stats move
    path = tmp_path / "model.pt"
    torch.save(model, path)
    with pytest.raises(pickle.UnpicklingError, match="Sequential"):
        torch.load(path)
    allowed = [nn.Sequential, nn.BatchNorm2d, nn.MultiheadAttention,
               nn.modules.linear.NonDynamicallyQuantizableLinear]
    with torch.serialization.safe_globals(allowed):
        loaded = torch.load(path)
    assert type(loaded[0]) is nn.BatchNorm2d
    assert torch.equal(loaded[0].running_mean, model[0].running_mean)
    assert torch.equal(loaded[1].in_proj_weight, model[1].in_proj_weight)


def test_sync_batch_norm_without_a_process_group() -> None:
    nn = torch.nn
    torch.manual_seed(0)
    x = torch.randn(4, 3, 5)
    sync, plain = nn.SyncBatchNorm(3), nn.BatchNorm1d(3)
    assert torch.allclose(sync(x), plain(x))
    assert torch.allclose(sync.running_mean, plain.running_mean)
    with pytest.raises(ValueError, match="expected at least 2D input"):
        sync(torch.randn(3))
    model = nn.Sequential(nn.Conv2d(1, 3, 1), nn.BatchNorm2d(3))
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert type(converted[1]) is nn.SyncBatchNorm and type(converted[0]) is nn.Conv2d
    assert converted[1].weight is model[1].weight
    assert converted[1].running_var is model[1].running_var


def test_container_is_deprecated() -> None:
    with pytest.warns(UserWarning, match="`nn.Container` is deprecated"):
        c = torch.nn.Container(a=torch.nn.Linear(1, 1))
    assert isinstance(c.a, torch.nn.Linear) and len(list(c.parameters())) == 2


def test_nn_modules_utils_helpers() -> None:
    from collections import OrderedDict

    from torch.nn.modules.utils import (
        _list_with_default,
        _ntuple,
        _pair,
        _quadruple,
        _reverse_repeat_tuple,
        _single,
        _triple,
        consume_prefix_in_state_dict_if_present,
    )

    assert _pair(3) == (3, 3) and _pair((1, 2)) == (1, 2) and _pair([4, 5]) == (4, 5)
    assert _single(2) == (2,) and _triple(1) == (1, 1, 1) and _quadruple(0) == (0, 0, 0, 0)
    assert _ntuple(5)(7) == (7,) * 5
    assert _reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)
    assert _list_with_default([None, 4], [1, 2, 8, 9]) == [8, 4]
    assert _list_with_default(5, [1, 2]) == [5]
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        _list_with_default([None, 4], [1, 2])
    state = OrderedDict([("module.a", 1), ("b", 2), ("module.c.d", 3)])
    state._metadata = OrderedDict([("", {"v": 0}), ("module", {"v": 1}),
                                   ("module.c", {"v": 2})])
    consume_prefix_in_state_dict_if_present(state, "module.")
    assert list(state.items()) == [("b", 2), ("a", 1), ("c.d", 3)]
    assert state._metadata[""] == {"v": 1} and state._metadata["c"] == {"v": 2}


# -- torch.nn.utils.prune ------------------------------------------------------------------

PRUNE_WEIGHT = [[0.5, -2.0, 1.0, 0.1], [3.0, -0.2, 0.3, -4.0], [0.05, 1.5, -0.7, 2.2]]


def _pruning_linear() -> torch.nn.Linear:
    m = torch.nn.Linear(4, 3)
    with torch.no_grad():
        m.weight.copy_(torch.tensor(PRUNE_WEIGHT))
        m.bias.copy_(torch.tensor([0.1, -0.3, 0.2]))
    return m


def test_l1_unstructured_reparametrizes_the_weight() -> None:
    import torch.nn.utils.prune as prune

    m = _pruning_linear()
    assert prune.l1_unstructured(m, "weight", 0.5) is m
    assert m.weight_mask.tolist() == [[0, 1, 1, 0], [1, 0, 0, 1], [0, 1, 0, 1]]
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight_orig"]
    assert [n for n, _ in m.named_buffers()] == ["weight_mask"]
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert torch.equal(m.weight, m.weight_orig * m.weight_mask)
    hooks = list(m._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.L1Unstructured)
    assert prune.is_pruned(torch.nn.Sequential(m))


def test_pruning_again_acts_on_what_is_left_and_gradients_follow_the_mask() -> None:
    import torch.nn.utils.prune as prune

    m = _pruning_linear()
    prune.l1_unstructured(m, "weight", 0.5)
    prune.l1_unstructured(m, "weight", 2)  # 2 more of the 6 kept
    assert m.weight_mask.tolist() == [[0, 1, 0, 0], [1, 0, 0, 1], [0, 0, 0, 1]]
    hooks = list(m._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer) and len(hooks[0]) == 2
    out = m(torch.ones(2, 4))
    assert out.tolist()[0] == pytest.approx([-1.9, -1.3, 2.4])
    out.sum().backward()
    assert m.weight_orig.grad.tolist() == [[0, 2, 0, 0], [2, 0, 0, 2], [0, 0, 0, 2]]
    prune.remove(m, "weight")
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"]
    assert isinstance(m.weight, torch.nn.Parameter) and not prune.is_pruned(m)
    assert m.weight.tolist() == [[0, -2, 0, 0], [3, 0, 0, -4], [0, 0, 0, pytest.approx(2.2)]]


def test_ln_structured_prunes_whole_slices() -> None:
    import torch.nn.utils.prune as prune

    m = _pruning_linear()
    prune.ln_structured(m, "weight", 1, 2, 0)  # the row of least L2 norm
    assert m.weight_mask.tolist() == [[0] * 4, [1] * 4, [1] * 4]
    prune.ln_structured(m, "weight", 0.5, 1, 1)  # then half of the columns, by L1 norm
    assert m.weight_mask.tolist() == [[0, 0, 0, 0], [1, 0, 0, 1], [1, 0, 0, 1]]
    m = _pruning_linear()
    prune.ln_structured(m, "weight", 2, float("inf"), -1)
    assert m.weight_mask.tolist() == [[1, 0, 0, 1]] * 3
    with pytest.raises(ValueError, match="Structured pruning can only be applied to "
                                         "multidimensional tensors"):
        prune.ln_structured(_pruning_linear(), "bias", 1, 2, 0)


def test_global_unstructured_chooses_over_all_parameters() -> None:
    import torch.nn.utils.prune as prune

    a, b = _pruning_linear(), torch.nn.Linear(2, 2)
    with torch.no_grad():
        b.weight.copy_(torch.tensor([[0.01, 5.0], [-0.02, 0.6]]))
    prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured, amount=5)
    assert a.weight_mask.tolist() == [[1, 1, 1, 0], [1, 0, 1, 1], [0, 1, 1, 1]]
    assert b.weight_mask.tolist() == [[0, 1], [0, 1]]
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported'):
        prune.global_unstructured([(_pruning_linear(), "weight")], prune.LnStructured,
                                  amount=1, n=2, dim=0)


def test_other_pruning_methods() -> None:
    import torch.nn.utils.prune as prune

    m = _pruning_linear()
    prune.custom_from_mask(m, "bias", torch.tensor([1, 0, 1]))
    assert m.bias.tolist() == pytest.approx([0.1, 0.0, 0.2]) and m.bias_mask.dtype is torch.float32
    m = _pruning_linear()
    prune.random_unstructured(m, "weight", 0.25)
    assert int(m.weight_mask.sum()) == 9
    m = _pruning_linear()
    prune.random_structured(m, "weight", 2, 1)
    column_sums = m.weight_mask.sum(0).tolist()
    assert column_sums.count(0.0) == 2 and column_sums.count(3.0) == 2
    m = _pruning_linear()
    prune.identity(m, "weight")
    assert m.weight_mask.tolist() == [[1.0] * 4] * 3
    m = _pruning_linear()
    prune.l1_unstructured(m, "weight", 1, importance_scores=-torch.tensor(PRUNE_WEIGHT))
    assert m.weight_mask.tolist() == [[1, 1, 1, 1], [1, 1, 1, 1], [0, 1, 1, 1]]
    assert prune.L1Unstructured(0.5).prune(torch.tensor([1.0, -3.0, 0.5, 2.0])).tolist() == [
        0.0, -3.0, 0.0, 2.0]


def test_pruning_argument_errors() -> None:
    import torch.nn.utils.prune as prune

    for amount in (1.5, -1):
        with pytest.raises(ValueError, match=f"amount={amount} should either be a float"):
            prune.l1_unstructured(_pruning_linear(), "weight", amount)
    with pytest.raises(TypeError, match=r"Invalid type for amount: x\. Must be int or float\."):
        prune.l1_unstructured(_pruning_linear(), "weight", "x")
    m = _pruning_linear()
    with pytest.raises(ValueError, match="amount=13 should be smaller than the number of "
                                         "parameters to prune=12"):
        prune.l1_unstructured(m, "weight", 13)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"]  # left as it was
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(_pruning_linear(), "weight")


# -- torch.distributed, torch.nn.parallel, DistributedSampler -------------------------------


def test_distributed_without_a_process_group() -> None:
    import torch.distributed as dist

    assert torch.distributed is dist
    assert dist.is_available() is True and dist.is_initialized() is False
    assert not dist.is_nccl_available()
    assert dist.ReduceOp.SUM is not dist.ReduceOp.MAX and dist.group.WORLD is None
    assert dist.Backend("GLOO") == dist.Backend.GLOO == "gloo"
    for call in (dist.get_rank, dist.get_world_size, dist.barrier, dist.destroy_process_group):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            call()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(torch.ones(2), op=dist.ReduceOp.SUM)


def test_distributed_data_parallel_needs_a_process_group() -> None:
    from torch.nn.parallel import DistributedDataParallel

    with pytest.raises(ValueError, match=r"call torch\.distributed\.init_process_group"):
        DistributedDataParallel(torch.nn.Linear(1, 1))


def test_data_parallel_without_an_accelerator_runs_the_module() -> None:
    out = run_cpu_only("""
import torch
torch.manual_seed(0)
inner = torch.nn.Linear(2, 1)
m = torch.nn.DataParallel(inner)
x = torch.randn(3, 2)
print(m.device_ids, list(m.state_dict()), m.module is inner)
print(torch.equal(m(x), inner(x)), torch.nn.parallel.DataParallel is torch.nn.DataParallel)
print(torch.equal(torch.nn.parallel.data_parallel(inner, x), inner(x)))
""")
    assert out.splitlines() == ["[] ['module.weight', 'module.bias'] True", "True True", "True"]


def test_data_parallel_runs_on_the_accelerators_first_device() -> None:
    if "toy" not in registry.installed():
        pytest.skip("the toy device plugin is not installed")
    torch.manual_seed(0)
    inner = torch.nn.Linear(2, 1)
    expected = inner(torch.ones(3, 2))
    m = torch.nn.DataParallel(inner)
    assert m.device_ids == [0, 1] and inner.weight.device == torch.device("toy", 0)
    with warnings.catch_warnings():
        # the toy device's kernels fall back to the CPU for some ops (warned once a process)
        warnings.simplefilter("ignore", UserWarning)
        out = m(torch.ones(3, 2))
    assert out.device == torch.device("toy", 0)
    assert torch.allclose(out.cpu(), expected)


def test_distributed_sampler_shares_a_dataset() -> None:
    from torch.utils.data import DistributedSampler
    from torch.utils.data.distributed import DistributedSampler as same

    assert same is DistributedSampler
    shares = [list(DistributedSampler(range(10), num_replicas=3, rank=r, shuffle=False))
              for r in range(3)]
    assert shares == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]  # padded by repeating
    trimmed = DistributedSampler(range(10), num_replicas=3, rank=2, shuffle=False,
                                 drop_last=True)
    assert list(trimmed) == [2, 5, 8] and len(trimmed) == 3
    shuffled = [DistributedSampler(range(11), num_replicas=2, rank=r, seed=3) for r in range(2)]
    first = [list(s) for s in shuffled]
    assert set(first[0] + first[1]) == set(range(11)) and len(first[0]) == len(first[1]) == 6
    assert [list(s) for s in shuffled] == first  # the same epoch gives the same order
    for s in shuffled:
        s.set_epoch(1)
    assert [list(s) for s in shuffled] != first
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval "
                                         r"\[0, 2\]"):
        DistributedSampler(range(10), num_replicas=3, rank=3)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(10))
    loader = torch.utils.data.DataLoader(list(range(10)), batch_size=2,
                                         sampler=DistributedSampler(range(10), 2, 0, False))
    assert [b.tolist() for b in loader] == [[0, 2], [4, 6], [8]]


def test_scatter_and_gather_split_and_join_batches():
    """torch.nn.parallel.scatter_gather (captum imports scatter): tensors split into chunks
    along dim, containers element by element, other objects copied to every piece; gather
    concatenates on the target (-1: the CPU)."""
    import collections

    from torch.nn.parallel.scatter_gather import gather, scatter, scatter_kwargs

    pair = collections.namedtuple("pair", "a b")
    x = torch.arange(10.0).view(5, 2)
    pieces = scatter((x, 3, {"k": x}), ["cpu", "cpu"])
    assert len(pieces) == 2
    assert [p[0].tolist() for p in pieces] == [x[:3].tolist(), x[3:].tolist()]
    assert pieces[0][1] == 3 and pieces[1][2]["k"].tolist() == x[3:].tolist()
    assert [p[0].tolist() for p in scatter([x], ["cpu"] * 3)] == [[[0, 1], [2, 3]],
                                                                  [[4, 5], [6, 7]], [[8, 9]]]
    args, kwargs = scatter_kwargs((x,), {"y": x}, ["cpu", "cpu"])
    assert len(args) == len(kwargs) == 2 and kwargs[1]["y"].shape == (2, 2)
    joined = gather([pair(torch.ones(1), None), pair(torch.zeros(2), None)], -1)
    assert isinstance(joined, pair) and joined.a.tolist() == [1, 0, 0] and joined.b is None
    assert gather([torch.ones(1, 2), torch.zeros(1, 2)], "cpu", dim=1).tolist() == [[1, 1, 0, 0]]
