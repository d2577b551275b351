"""What outside programs and library test suites (nanoGPT, minGPT, pytorch/examples, einops,
safetensors, opt_einsum, torchmetrics, Hugging Face transformers/accelerate, kornia), run
unchanged, tripped over; each expectation is PyTorch
2.13's answer for the same call."""

import numpy as np
import pytest

import torch

# -- empty storages and arrays keep their strides -------------------------------------------


def test_asarray_of_an_empty_storage_is_a_stride_one_byte_run():
    # safetensors loads a zero-sized tensor as asarray(storage[a:a]).view(dtype).reshape(shape)
    empty = torch.asarray(torch.UntypedStorage(8)[8:8], dtype=torch.uint8)
    assert empty.shape == (0,)
    assert empty.stride() == (1,)
    as_float = empty.view(torch.float32)
    assert as_float.shape == (0,)
    assert as_float.reshape(2, 0).shape == (2, 0)


def test_from_numpy_keeps_the_strides_of_an_empty_slice():
    sliced = np.zeros((4, 3), np.float32)[:, :0]
    assert torch.from_numpy(sliced).stride() == (3, 1)
    assert torch.from_numpy(np.empty((2, 0), np.float32)).stride() == (0, 0)


# -- torch._dynamo.config --------------------------------------------------------------------


def test_dynamo_config_settings_have_pytorchs_defaults_and_aliases():
    config = torch._dynamo.config  # reached from `import torch`, as einops' tests do
    assert config.verbose is False
    assert config.recompile_limit == 8
    saved = config.get_config_copy()
    try:
        config.cache_size_limit = 64  # the older name writes the current one
        assert config.recompile_limit == 64
        config.verbose = True
        assert config.verbose is True
    finally:
        config.load_config(saved)
    assert config.verbose is False
    assert config.cache_size_limit == 8


def test_dynamo_config_patch_restores_as_a_block_and_as_a_decorator():
    config = torch._dynamo.config
    with config.patch(verbose=True, suppress_errors=True):
        assert (config.verbose, config.suppress_errors) == (True, True)
    assert (config.verbose, config.suppress_errors) == (False, False)

    @config.patch("capture_scalar_outputs", True)
    def read() -> bool:
        return config.capture_scalar_outputs

    assert read() is True
    assert read() is True
    assert config.capture_scalar_outputs is False


def test_dynamo_config_rejects_unknown_settings():
    config = torch._dynamo.config
    with pytest.raises(AttributeError, match="does not exist"):
        config.no_such_setting = 1
    with pytest.raises(AttributeError, match="does not exist"):
        _ = config.no_such_setting
    with pytest.raises(AttributeError, match="does not exist"):
        config.patch(no_such_setting=1)


# -- numpy keyword names in torch.* functions ------------------------------------------------


def test_torch_functions_take_numpys_keyword_names():
    x = torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    assert torch.sum(x, axis=0).tolist() == [3.0, 5.0, 7.0]
    assert torch.amax(x, axis=1, keepdims=True).tolist() == [[2.0], [5.0]]
    assert torch.max(x, axis=1).values.tolist() == [2.0, 5.0]
    assert torch.cat([x, x], axis=0).shape == (4, 3)
    assert torch.sum(a=x).item() == 15.0
    assert torch.add(x=x, other=x).tolist() == (2 * x).tolist()
    assert torch.mul(x1=x, x2=x)[1, 2].item() == 25.0
    assert torch.linalg.norm(torch.tensor([[3.0, 4.0]]), axis=1).tolist() == [5.0]


def test_numpy_names_do_not_displace_a_functions_own_parameters():
    # trapezoid has a parameter named x (the sample points): it is not read as `input`
    y = torch.tensor([1.0, 1.0, 1.0])
    assert torch.trapezoid(y, x=torch.tensor([0.0, 1.0, 3.0])).item() == 3.0
    x = torch.ones(2, 3)
    with pytest.raises(TypeError):
        torch.sum(x, axis=0, dim=0)  # both spellings of one argument
    with pytest.raises(TypeError):
        torch.sum(x, axes=0)


def test_nn_functional_takes_only_its_own_names_as_in_pytorch():
    with pytest.raises(TypeError):
        torch.nn.functional.softmax(torch.ones(2, 3), axis=0)


def test_numpy_names_reach_a_torch_function_override():
    class Logged(torch.Tensor):
        seen: list[str] = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.seen.append(sorted(kwargs or {}))
            return super().__torch_function__(func, types, args, kwargs)

    x = torch.ones(2, 3).as_subclass(Logged)
    total = torch.sum(x, axis=1)
    assert total.tolist() == [3.0, 3.0]
    assert ["axis"] in Logged.seen  # the override sees the call as written, as in PyTorch


def test_numpy_names_inside_a_torch_function_mode():
    class Counting(torch.overrides.TorchFunctionMode):
        calls = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            Counting.calls += 1
            return func(*args, **(kwargs or {}))

    with Counting():
        total = torch.sum(torch.ones(2, 3), axis=0, keepdims=True)
    assert total.tolist() == [[2.0, 2.0, 2.0]]
    assert Counting.calls >= 1


# -- slice bounds given as tensors or numpy integers -----------------------------------------


def test_slice_bounds_from_tensors_and_numpy_integers_are_read_as_ints():
    # torchmetrics' partial AUROC slices with a 0-d int32 tensor from torch.bucketize
    x = torch.arange(10.0)
    stop = torch.tensor(3, dtype=torch.int32)
    head = x[:stop]
    assert head.shape == (3,)
    assert type(head.shape[0]) is int
    assert torch.cat([head, torch.tensor([9.0])]).tolist() == [0.0, 1.0, 2.0, 9.0]
    assert x[1:torch.tensor(7):torch.tensor(2)].tolist() == [1.0, 3.0, 5.0]
    assert x[np.int64(8):].tolist() == [8.0, 9.0]
    assert torch.arange(12).reshape(3, 4)[:, :stop].shape == (3, 3)
    with pytest.raises(TypeError, match="integer tensors of a single element"):
        x[:torch.tensor(2.0)]


def test_slicing_again_with_another_tensor_bound_gives_the_new_length():
    # the same call signature with a different bound value must not replay the first result
    x = torch.arange(60.0)
    for bound in (55, 35, 20):
        stop = torch.tensor(bound, dtype=torch.int32)
        assert x[:stop].shape == (bound,)
        assert x[:stop - 1].shape == (bound - 1,)
        assert x[stop:].shape == (60 - bound,)
        assert x[stop:][0].item() == float(bound)


def test_slice_assignment_with_a_tensor_bound():
    x = torch.zeros(5)
    x[torch.tensor(3):] = 1.0
    assert x.tolist() == [0.0, 0.0, 0.0, 1.0, 1.0]


# -- Hugging Face, kornia ----------------------------------------------------------------------


def test_to_with_a_device_of_none_is_the_tensor_itself():
    # transformers' GPT-NeoX rotary embedding calls inv_freq.to(device) with device None
    x = torch.ones(2)
    assert x.to(None) is x
    assert x.to(None, non_blocking=True) is x
    assert x.to("cpu", None) is x
    assert x.to(None, torch.float64).dtype == torch.float64
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        x.to(None, 3)


def test_the_package_reaches_itself_as_torch_torch():
    # kornia calls torch.torch.deg2rad
    assert torch.torch is torch
    assert torch.torch.deg2rad(torch.tensor(180.0)).item() == pytest.approx(3.14159265)


def test_distributed_join_imports_without_an_engine():
    # accelerate (and through it transformers' generation and peft) imports Join at import
    from torch.distributed.algorithms.join import Join, Joinable, JoinHook
    from torch.nn.parallel import DistributedDataParallel

    assert issubclass(DistributedDataParallel, Joinable)
    assert Join.notify_join_context.__doc__ and JoinHook().main_hook() is None


def test_torch_distributed_reaches_its_submodules_as_attributes():
    # diffusers annotates with torch.distributed.device_mesh.DeviceMesh after import
    # torch.distributed alone
    import torch.distributed as dist

    assert dist.device_mesh.DeviceMesh is dist.DeviceMesh
    assert dist.algorithms.Join.__name__ == "Join"
    with pytest.raises(AttributeError, match="no attribute 'no_such_module'"):
        dist.no_such_module  # noqa: B018


def test_get_proxy_mode_is_the_active_make_fx_trace():
    # kornia takes a traceable path when get_proxy_mode() is not None
    from torch.fx.experimental.proxy_tensor import get_proxy_mode, make_fx

    seen = []

    def f(x):
        seen.append(get_proxy_mode())
        return x * 2

    assert get_proxy_mode() is None
    make_fx(f)(torch.ones(2))
    assert seen[-1] is not None
    assert get_proxy_mode() is None


def test_an_optimizer_wrapper_that_skips_optimizer_init_can_step():
    # accelerate's AcceleratedOptimizer subclasses Optimizer around another optimizer and
    # never calls Optimizer.__init__
    param = torch.nn.Parameter(torch.ones(2))

    class Wrapper(torch.optim.Optimizer):
        def __init__(self, inner):
            self.inner = inner

        def step(self, closure=None):
            return self.inner.step(closure)

    param.grad = torch.ones(2)
    Wrapper(torch.optim.SGD([param], lr=0.5)).step()
    assert param.tolist() == [0.5, 0.5]


def test_samplers_are_generic_as_pytorchs():
    # timm: class ScheduledBatchSampler(Sampler[List[Tuple[Any, int]]])
    from torch.utils.data import BatchSampler, Sampler, SequentialSampler

    class Pairs(Sampler[list[tuple[int, int]]]):
        def __iter__(self):
            yield [(0, 1)]

    assert list(Pairs()) == [[(0, 1)]]
    assert list(BatchSampler(SequentialSampler(range(5)), 2, False)) == [[0, 1], [2, 3], [4]]


def test_hub_reexports_the_url_helpers_pytorchs_does():
    # timm: from torch.hub import HASH_REGEX, download_url_to_file, urlparse
    from urllib.parse import urlparse

    from torch.hub import urlopen, urlparse as hub_urlparse

    assert hub_urlparse is urlparse and callable(urlopen)


def test_fsdps_module_path_names_the_not_built_class():
    # accelerate: isinstance(model, FullyShardedDataParallel) while unwrapping any model
    from torch.distributed.fsdp import FullyShardedDataParallel
    from torch.distributed.fsdp.fully_sharded_data_parallel import (
        FullyShardedDataParallel as FromModule,
    )

    assert FromModule is FullyShardedDataParallel
    assert not isinstance(torch.nn.Linear(2, 2), FromModule)
    with pytest.raises(NotImplementedError, match="not built in Plait yet"):
        FromModule(torch.nn.Linear(2, 2))


def test_distribution_utils_libraries_import():
    # gpytorch: from torch.distributions.utils import _standard_normal, lazy_property
    from torch.distributions.utils import (
        _standard_normal,
        _sum_rightmost,
        euler_constant,
        tril_matrix_to_vec,
        vec_to_tril_matrix,
    )

    assert _standard_normal((2, 3), torch.float64, "cpu").dtype == torch.float64
    assert _sum_rightmost(torch.ones(2, 3, 4), 2).tolist() == [12.0, 12.0]
    assert _sum_rightmost(5.0, 1) == 5.0
    assert euler_constant == pytest.approx(0.5772156649015329)
    m = torch.arange(9.0).reshape(3, 3)
    assert tril_matrix_to_vec(m).tolist() == [0.0, 3.0, 4.0, 6.0, 7.0, 8.0]
    assert tril_matrix_to_vec(m, -1).tolist() == [3.0, 6.0, 7.0]
    assert vec_to_tril_matrix(tril_matrix_to_vec(m)).tolist() == m.tril().tolist()
    assert vec_to_tril_matrix(tril_matrix_to_vec(m, -1), -1).tolist() == m.tril(-1).tolist()
    with pytest.raises(ValueError):
        vec_to_tril_matrix(torch.ones(4))


def test_the_private_state_dict_hook_names_libraries_register():
    # gpytorch registers _register_load_state_dict_pre_hook; peft _register_state_dict_hook
    seen = []
    module = torch.nn.Linear(2, 2)
    module._register_load_state_dict_pre_hook(lambda sd, prefix, *rest: seen.append(prefix))
    module._register_load_state_dict_pre_hook(
        lambda mod, sd, prefix, *rest: seen.append(type(mod).__name__), with_module=True)
    module._register_state_dict_hook(
        lambda mod, sd, prefix, meta: sd.update({prefix + "extra": torch.zeros(1)}))
    state = module.state_dict()
    assert "extra" in state
    del state["extra"]
    module.load_state_dict(state)
    assert seen == ["", "Linear"]


def test_register_kl_takes_any_class_and_serialization_names_its_types():
    # pyro registers KL pairs with its own Distribution base and imports MAP_LOCATION
    from torch.distributions import Normal, kl_divergence, register_kl
    from torch.serialization import FILE_LIKE, MAGIC_NUMBER, MAP_LOCATION

    class Foreign:
        pass

    class MyNormal(Normal, Foreign):
        pass

    @register_kl(MyNormal, Foreign)
    def _kl(p, q):
        return torch.tensor(42.0)

    assert kl_divergence(MyNormal(0.0, 1.0), MyNormal(1.0, 2.0)).item() == 42.0
    with pytest.raises(TypeError):
        register_kl("Normal", Foreign)
    assert MAGIC_NUMBER == 0x1950A86A20F9469CFC6C
    assert str in MAP_LOCATION.__args__ and torch.device in MAP_LOCATION.__args__
    assert str in FILE_LIKE.__args__
