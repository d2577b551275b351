"""The semi-private names of PyTorch that libraries built on it import (tensordict, TorchRL,
functorch-era code): ``torch._C._functorch`` and vmap's stages, ``torch.utils.weak``,
``torch.utils._contextlib``, pytree helpers, ``torch.from_file``, the DataLoader's worker
seeds, module registration hooks, ``torch.nn.utils._named_member_accessor`` and
``functorch.make_functional``. Each behaves as PyTorch documents it."""

from __future__ import annotations

import gc
import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import torch
import torch.nn as nn
from torch.utils import _pytree

# -- torch._C and vmap's stages ----------------------------------------------------------------


def test_native_submodules_import_by_name() -> None:
    from torch._C._functorch import _add_batch_dim, is_batchedtensor  # noqa: F401
    from torch._C._nn import _parse_to

    assert importlib.import_module("torch._C._functorch") is torch._C._functorch
    assert _parse_to(torch.float64)[1] is torch.float64
    with pytest.raises(AttributeError, match="no attribute"):
        torch._C.no_such_name  # noqa: B018


def test_add_and_remove_batch_dim_inside_vmap() -> None:
    from torch._C._functorch import _add_batch_dim, _remove_batch_dim, is_batchedtensor

    x = torch.arange(6.0).reshape(2, 3)
    seen = []

    def f(row: torch.Tensor) -> torch.Tensor:
        seen.append((is_batchedtensor(row), tuple(row.shape)))
        return row * 2

    out = torch.vmap(f, in_dims=1)(x)  # samples along dim 1: each (2,)
    assert seen == [(True, (2,))]
    assert torch.equal(out, (x * 2).t())
    assert not is_batchedtensor(x)
    # outside any vmap, _remove_batch_dim of an unbatched tensor expands it to the batch
    expanded = _remove_batch_dim(torch.tensor([1.0, 2.0]), 1, 3, 1)
    assert expanded.tolist() == [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    with pytest.raises(IndexError):
        _add_batch_dim(x, 2, 1)


def test_vmap_runs_the_module_stages_a_library_replaces(monkeypatch) -> None:
    """A library that maps over its own container replaces _create_batched_inputs and
    _unwrap_batched in torch._functorch.vmap; vmap must call the replacements."""
    import torch._functorch.vmap as vmap_module

    calls = []
    original_create = vmap_module._create_batched_inputs
    original_unwrap = vmap_module._unwrap_batched

    def create(flat_in_dims, flat_args, vmap_level, args_spec):
        calls.append(("create", list(flat_in_dims), vmap_level))
        return original_create(flat_in_dims, flat_args, vmap_level, args_spec)

    def unwrap(batched_outputs, out_dims, vmap_level, batch_size, func):
        calls.append(("unwrap", out_dims, batch_size))
        return original_unwrap(batched_outputs, out_dims, vmap_level, batch_size, func)

    monkeypatch.setattr(vmap_module, "_create_batched_inputs", create)
    monkeypatch.setattr(vmap_module, "_unwrap_batched", unwrap)
    x = torch.arange(12.0).reshape(3, 4)
    out = torch.vmap(lambda a, b: a.sum() + b, in_dims=(0, None))(x, torch.tensor(1.0))
    assert out.tolist() == [7.0, 23.0, 39.0]
    assert calls == [("create", [0, None], 1), ("unwrap", 0, 3)]


def test_process_batched_inputs_normalises_in_dims() -> None:
    import torch._functorch.vmap as vmap_module

    x = torch.zeros(2, 5)
    batch, dims, leaves, _spec = vmap_module._process_batched_inputs((-1, None), (x, 3), len)
    assert (batch, dims) == (5, [1, None]) and leaves[0] is x and leaves[1] == 3
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        vmap_module._process_batched_inputs(0, (x, torch.zeros(3)), len)


def test_broadcast_to_and_flatten() -> None:
    spec = _pytree.tree_structure(((1, 2), {"a": 3, "b": [4, 5]}))
    assert _pytree._broadcast_to_and_flatten(0, spec) == [0] * 5
    assert _pytree._broadcast_to_and_flatten((None, {"a": 1, "b": 2}), spec) == \
        [None, None, 1, 2, 2]
    assert _pytree._broadcast_to_and_flatten((0, 1, 2), spec) is None


def test_functorch_state_queries() -> None:
    a = torch.arange(4.0)
    assert torch._C._is_alias_of(a[1:], a) and not torch._C._is_alias_of(a.clone(), a)
    assert not torch._C._are_functorch_transforms_active()
    inside = []
    torch.vmap(lambda r: inside.append(torch._C._are_functorch_transforms_active()) or r)(a)
    assert inside == [True]
    assert not torch._C._is_torch_function_mode_enabled()


# -- torch.utils -------------------------------------------------------------------------------


def test_weak_id_key_dictionary_compares_by_identity_and_forgets_dead_keys() -> None:
    from torch.utils.weak import TensorWeakRef, WeakIdKeyDictionary, WeakIdRef

    a, b = torch.zeros(2), torch.zeros(2)  # equal values, distinct objects
    d = WeakIdKeyDictionary()
    d[a] = "a"
    d[b] = "b"
    assert d[a] == "a" and d[b] == "b" and len(d) == 2
    assert torch.ones(2) not in d and d.get(torch.ones(2), 7) == 7
    assert WeakIdRef(a) == WeakIdRef(a) and WeakIdRef(a) != WeakIdRef(b)
    ref = TensorWeakRef(b)
    del b
    gc.collect()
    assert ref() is None and len(d) == 1 and list(d) == [a]
    del d[a]
    assert len(d) == 0


def test_decorator_context_manager_base_decorates_functions_and_generators() -> None:
    from torch.utils._contextlib import _DecoratorContextManager

    log = []

    class Tag(_DecoratorContextManager):
        def __enter__(self) -> None:
            log.append("enter")

        def __exit__(self, *exc: object) -> None:
            log.append("exit")

    @Tag()
    def double(x: int) -> int:
        log.append("body")
        return 2 * x

    assert double(3) == 6 and log == ["enter", "body", "exit"]
    log.clear()

    @Tag()
    def gen():
        yield 1
        yield 2

    assert list(gen()) == [1, 2] and log.count("enter") == log.count("exit") >= 2


def test_pytree_list_functions_and_structseq() -> None:
    import os as os_module
    import time

    assert _pytree._list_unflatten([1, 2], None) == [1, 2]
    assert _pytree._tuple_unflatten([1, 2], None) == (1, 2)
    assert _pytree.is_structseq_instance(time.gmtime(0))
    assert _pytree.is_structseq_class(type(os_module.stat(".")))
    assert not _pytree.is_structseq_instance((1, 2))
    # torch.return_types are struct sequences, as in PyTorch
    assert _pytree.is_structseq_instance(torch.max(torch.ones(2, 2), 0))


def test_every_core_utils_submodule_is_an_attribute() -> None:
    code = ("import torch; import sys; "
            "assert torch.utils._pytree.tree_flatten([1])[0] == [1]; "
            "assert callable(torch.utils.weak.WeakIdKeyDictionary)")
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttributeError):
        torch.utils.no_such_module  # noqa: B018


# -- tensors and storage -----------------------------------------------------------------------


def test_from_file_maps_a_file_shared_or_private(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    np.arange(6, dtype=np.float32).tofile(path)
    private = torch.from_file(str(path), shared=False, size=6, dtype=torch.float32)
    assert private.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    private[0] = 42.0  # copy-on-write: the file keeps its bytes
    assert np.fromfile(path, dtype=np.float32)[0] == 0.0
    shared = torch.from_file(str(path), shared=True, size=6, dtype=torch.float32)
    shared[1] = 7.0
    del shared
    gc.collect()
    assert np.fromfile(path, dtype=np.float32)[1] == 7.0
    grown = tmp_path / "new.bin"  # a shared mapping creates its file
    t = torch.from_file(str(grown), shared=True, size=4, dtype=torch.int64)
    assert t.shape == (4,) and os.path.getsize(grown) == 32
    with pytest.raises(RuntimeError, match="smaller than the required"):
        torch.from_file(str(path), shared=False, size=100, dtype=torch.float32)


def test_tensor_queries_libraries_read() -> None:
    t = torch.ones(2)
    assert t.is_nested is False
    assert isinstance(t.untyped_storage(), torch.StorageBase)


def test_worker_numpy_seeds_are_pytorchs() -> None:
    from torch.utils.data._utils.worker import _generate_state

    # the values PyTorch 2.13's _generate_state gives for these (base seed, worker id)
    assert _generate_state(0, 0) == [2968811710, 3677149159, 745650761, 2884920346]
    assert _generate_state(12345, 3) == [388367306, 2732186161, 3264781304, 1215154576]
    assert _generate_state(2**40 + 7, 1) == [1152389008, 3270329042, 2442107819, 4106971920]


# -- nn ----------------------------------------------------------------------------------------


def test_global_registration_hooks_see_and_replace_registrations() -> None:
    from torch.nn.modules import module as module_mod

    seen = []
    replacements = []

    def on_param(mod, name, param):
        seen.append(("param", name))
        if name != "bias":
            return None
        replacements.append(nn.Parameter(param.detach().clone()))
        return replacements[-1]

    handles = [
        module_mod.register_module_parameter_registration_hook(on_param),
        module_mod.register_module_buffer_registration_hook(
            lambda mod, name, buf: seen.append(("buffer", name))),
        module_mod.register_module_module_registration_hook(
            lambda mod, name, sub: seen.append(("module", name))),
    ]
    try:
        lin = nn.Linear(2, 3)
        bn = nn.BatchNorm1d(3)
        seq = nn.Sequential()
        seq.add_module("lin", lin)
        seq.bn = bn
    finally:
        for h in handles:
            h.remove()
    assert ("param", "weight") in seen and ("param", "bias") in seen
    assert ("buffer", "running_mean") in seen and ("module", "lin") in seen
    assert ("module", "bn") in seen
    assert lin.bias is replacements[0]  # the hook's replacement was registered
    before = len(seen)
    nn.Linear(2, 2)
    assert len(seen) == before  # removed hooks no longer run


def test_named_member_accessor_swaps_tensors_by_dotted_name() -> None:
    from torch.nn.utils._named_member_accessor import NamedMemberAccessor, swap_tensor

    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    access = NamedMemberAccessor(model)
    weight = model[0].weight
    old = access.swap_tensor("0.weight", torch.zeros(2, 2))
    assert old is weight and not model[0].weight.any()
    assert access.get_tensor("1.running_var").tolist() == [1.0, 1.0]
    assert access.check_keys(["0.weight", "extra"]) == (
        ["extra"], ["0.bias", "1.bias", "1.num_batches_tracked", "1.running_mean",
                    "1.running_var", "1.weight"])
    assert swap_tensor(model[0], "weight", weight) is not weight and model[0].weight is weight
    with pytest.raises(AttributeError):
        swap_tensor(model[0], "missing", torch.zeros(1))
    with pytest.raises(KeyError):
        swap_tensor(model, "0.weight", torch.zeros(1))


def test_functorch_make_functional_calls_with_given_parameters() -> None:
    functorch = pytest.importorskip("functorch", reason="plait-compile is not installed")

    model = nn.Linear(3, 2)
    fmodel, params = functorch.make_functional(model)
    x = torch.ones(4, 3)
    assert torch.equal(fmodel(params, x), model(x))
    zeros = tuple(torch.zeros_like(p) for p in params)
    assert not fmodel(zeros, x).any() and model(x).any()
    with pytest.raises(RuntimeError, match="has buffers"):
        functorch.make_functional(nn.BatchNorm1d(3))
    models = [nn.Linear(3, 2) for _ in range(4)]
    fm, ps, bs = functorch.combine_state_for_ensemble(models)
    out = functorch.vmap(fm, in_dims=(0, 0, None))(ps, bs, x)
    for k, m in enumerate(models):
        assert torch.allclose(out[k], m(x))


# -- torch.functional --------------------------------------------------------------------------


def test_torch_functional_names_are_torchs_functions() -> None:
    from torch.functional import einsum, meshgrid, unravel_index

    assert einsum is torch.einsum and meshgrid is torch.meshgrid
    assert unravel_index is torch.unravel_index
    assert torch.functional.stft is torch.stft


def test_einsum_shows_overrides_one_form() -> None:
    from torch.overrides import TorchFunctionMode

    seen = []

    class Record(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is torch.einsum:
                seen.append(tuple(type(a).__name__ for a in args))
            return func(*args, **(kwargs or {}))

    a, b = torch.ones(2, 3), torch.ones(3, 4)
    with Record():
        listed = torch.einsum("ij,jk->ik", (a, b))  # operands as one tuple
        sublist = torch.einsum(a, [0, 1], b, [1, 2], [0, 2])
    assert seen == [("str", "Tensor", "Tensor")] * 2
    assert torch.equal(listed, a @ b) and torch.equal(sublist, a @ b)


def test_unravel_index_gives_row_major_coordinates() -> None:
    flat = torch.tensor([[1, 5], [0, 3]])
    rows, cols = torch.unravel_index(flat, (2, 3))
    expected = np.unravel_index(flat.numpy(), (2, 3))
    assert rows.tolist() == expected[0].tolist() and cols.tolist() == expected[1].tolist()
    assert [t.item() for t in torch.unravel_index(torch.tensor(-1), (3, 2))] == [2, 1]
    assert torch.unravel_index(torch.tensor(0), ()) == ()
    with pytest.raises(TypeError, match="integer dtype"):
        torch.unravel_index(torch.tensor(1.0), (3, 2))
    with pytest.raises(ValueError, match="negative"):
        torch.unravel_index(torch.tensor(1), (-3, 2))


def test_collate_exports_its_string_dtype_pattern() -> None:
    from torch.utils.data._utils.collate import np_str_obj_array_pattern

    assert np_str_obj_array_pattern.search(np.array(["a"]).dtype.str)
    assert not np_str_obj_array_pattern.search(np.zeros(1).dtype.str)


def test_relu_backward_is_threshold_backward_under_a_mode() -> None:
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Names(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))

    x = torch.tensor([-1.0, 0.0, 2.0, float("nan")], requires_grad=True)
    with Names():
        torch.relu(x).backward(torch.tensor([5.0, 6.0, 7.0, 8.0]))
    assert "threshold_backward" in seen and "where" not in seen
    # no gradient where the result is <= 0 (0 included); a NaN passes the gradient on
    assert x.grad.tolist() == [0.0, 0.0, 7.0, 8.0]


# -- autograd hooks ----------------------------------------------------------------------------


def test_multi_grad_hook_all_sees_each_pass_once() -> None:
    a, b, c = (torch.ones(2, requires_grad=True) for _ in range(3))
    seen = []
    handle = torch.autograd.graph.register_multi_grad_hook(
        (a, b, c), lambda grads: seen.append([None if g is None else g.tolist() for g in grads]))
    (a * 2 + b).sum().backward()
    (a * 3).sum().backward()  # b and c take no part: None for them
    assert seen == [[[2.0, 2.0], [1.0, 1.0], None], [[3.0, 3.0], None, None]]
    handle.remove()
    (a * 4).sum().backward()
    assert len(seen) == 2


def test_multi_grad_hook_any_sees_the_first_gradient() -> None:
    a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    seen = []
    torch.autograd.graph.register_multi_grad_hook((a, b), lambda g: seen.append(g.tolist()),
                                                  mode="any")
    (a * 2 + b * 5).sum().backward()
    assert len(seen) == 1 and seen[0] in ([2.0, 2.0], [5.0, 5.0])
    with pytest.raises(ValueError, match="mode"):
        torch.autograd.graph.register_multi_grad_hook((a,), print, mode="some")


def test_leaf_hooks_run_for_autograd_grad() -> None:
    b, c = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    calls = []
    b.register_hook(lambda g: calls.append(g.tolist()) or g * 10)
    c.register_hook(lambda g: calls.append("c"))
    (grad,) = torch.autograd.grad((b * c * 3).sum(), [b])
    assert calls == [[3.0, 3.0]]  # c is no input: its hook does not run
    assert grad.tolist() == [30.0, 30.0]  # the hook's replacement is the result
    assert b.grad is None


def test_a_tensors_dict_holds_only_the_users_attributes() -> None:
    """Libraries copy a parameter's __dict__ into a new Parameter (accelerate's
    init_empty_weights): autograd's own state must not be there."""
    model = nn.Linear(2, 2)
    model(torch.ones(1, 2)).sum().backward()
    model.weight.register_hook(lambda g: g)
    model.weight.tag = "mine"
    assert model.weight.__dict__ == {"tag": "mine"}
    copy = nn.Parameter(model.weight.detach(), **{k: v for k, v in model.weight.__dict__.items()
                                                  if k == "requires_grad"})
    assert copy.requires_grad
    calls = []
    model.weight.register_hook(lambda g: calls.append(1))
    model(torch.ones(1, 2)).sum().backward()
    assert calls == [1] and model.weight.__dict__ == {"tag": "mine"}


def test_a_comparison_records_nothing_so_checkpoint_counts_agree() -> None:
    """A comparison of tensors that require grad records no node (its output is bool) on the
    first call of its signature as on the planned later ones: non-reentrant checkpointing
    compares the saved tensors of the forward with those of the recomputation."""
    from torch.autograd.graph import saved_tensors_hooks
    from torch.utils.checkpoint import checkpoint

    def block(s: torch.Tensor) -> torch.Tensor:
        empty = s.amax(-1, keepdim=True) == float("-inf")  # a fresh signature each test run
        return torch.where(empty, 0.0, s.softmax(-1)) * 2

    counts = []
    for _ in range(2):
        s = torch.randn(1, 3, 5, 7, requires_grad=True)
        saved = []
        with saved_tensors_hooks(lambda t, saved=saved: saved.append(t.dtype) or t,
                                 lambda t: t):
            block(s).sum()
        counts.append(saved.count(torch.bool))
    assert counts[0] == counts[1] == 1  # where's condition only: no node for ==
    s = torch.randn(1, 3, 6, 4, requires_grad=True)
    ref = torch.autograd.grad(block(s).sum(), s)[0]
    out = checkpoint(block, s, use_reentrant=False)
    (grad,) = torch.autograd.grad(out.sum(), s)
    assert torch.allclose(grad, ref)


def test_attention_rows_that_see_no_key_have_finite_gradients_with_dropout() -> None:
    import torch.nn.functional as F

    q, k, v = (torch.randn(1, 2, 4, 8, requires_grad=True) for _ in range(3))
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[1] = False  # query 1 sees no key
    torch.manual_seed(0)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.5)
    grads = torch.autograd.grad(out.sum(), (q, k, v))
    assert torch.isfinite(out).all() and out[:, :, 1].abs().sum().item() == 0.0
    assert all(torch.isfinite(g).all() for g in grads)
    assert grads[0][:, :, 1].abs().sum().item() == 0.0  # no gradient reaches that query


def test_anomaly_traces_show_the_programs_frames() -> None:
    import warnings

    x = torch.ones(2, requires_grad=True)
    with torch.autograd.detect_anomaly(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = (x * float("nan")).sqrt()  # the line the trace must name
        with pytest.raises(RuntimeError, match="nan"):
            y.sum().backward()
    trace = y.grad_fn.metadata["traceback_"]
    assert "test_anomaly_traces_show_the_programs_frames" in trace and ".sqrt()" in trace
    assert "/_core/" not in trace and "_torch_function" not in trace
    assert any("SqrtBackward0" in str(w.message) for w in caught)


@pytest.mark.parametrize("shape, pads, ok", [
    ((1, 2, 3, 4), (1, 1), False), ((1, 2, 3, 4), (1, 1, 1, 1), True),
    ((1, 2, 3, 4), (1, 1, 1, 1, 1, 1), True), ((5,), (1, 1), False), ((2, 3), (1, 1), True),
    ((1, 1, 2, 2, 2), (1, 1), False), ((1, 1, 2, 2, 2), (1,) * 6, True)])
def test_non_constant_padding_takes_pytorchs_rank_combinations(shape, pads, ok) -> None:
    import torch.nn.functional as F

    x = torch.randn(*shape)
    for mode in ("replicate", "reflect", "circular"):
        if ok:
            out = F.pad(x, pads, mode=mode)
            n = len(pads) // 2
            assert out.shape[-n:] == tuple(s + 2 for s in shape[-n:])
        else:
            with pytest.raises(NotImplementedError, match=f"{len(shape)}D input tensor"):
                F.pad(x, pads, mode=mode)


def test_reentrant_checkpoint_without_grad_inputs_gives_no_gradients() -> None:
    from torch.utils.checkpoint import checkpoint

    layer = nn.Linear(3, 3)
    x = torch.ones(2, 3)  # requires no grad
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(layer, x, use_reentrant=True)
    assert not out.requires_grad  # as PyTorch's reentrant Function: nothing inside is trained
    assert checkpoint(layer, x, use_reentrant=False).requires_grad  # the other variant is
