"""Names PyTorch programs spell that Plait serves from other ops: the ``*_copy`` twins of the
views, in-place methods of out-of-place ops, ``torch.*`` forms of Tensor methods, the older
per-device autocast functions and the build flags."""

from __future__ import annotations

import math
import warnings

import pytest

import torch


def test_view_copies_hold_the_view_and_share_nothing() -> None:
    x = torch.tensor([[1.0, -2.0, 0.5], [0.0, 3.5, 4.0]])
    cases = [
        (torch.view_copy(x, (3, 2)), x.view(3, 2)),
        (torch.permute_copy(x, (1, 0)), x.permute(1, 0)),
        (torch.transpose_copy(x, 0, 1), x.t()),
        (torch.t_copy(x), x.t()),
        (torch.select_copy(x, 1, 2), x[:, 2]),
        (torch.slice_copy(x, 1, 1, 3), x[:, 1:3]),
        (torch.diagonal_copy(x), torch.tensor([1.0, 3.5])),
        (torch.expand_copy(x[0], (2, 3)), x[0].expand(2, 3)),
        (torch.unsqueeze_copy(x, 1), x[:, None]),
        (torch.squeeze_copy(x[None]), x),
        (torch.as_strided_copy(x, (2,), (4,)), torch.tensor([1.0, 3.5])),
        (torch.alias_copy(x), x),
        (torch.detach_copy(x), x),
        (torch.unfold_copy(torch.arange(4.0), 0, 2, 2), torch.tensor([[0.0, 1.0], [2.0, 3.0]])),
    ]
    for copy, expected in cases:
        assert torch.equal(copy, expected)
        assert copy.is_contiguous() and copy.data_ptr() != x.data_ptr()
    pieces = torch.split_copy(x, 1)
    assert [p.tolist() for p in pieces] == [[[1.0, -2.0, 0.5]], [[0.0, 3.5, 4.0]]]
    assert [p.tolist() for p in torch.unbind_copy(x, 1)] == [[1.0, 0.0], [-2.0, 3.5], [0.5, 4.0]]
    c = torch.tensor([1 + 2j, 3 - 1j])
    assert torch.view_as_real_copy(c).tolist() == [[1.0, 2.0], [3.0, -1.0]]
    y = torch.transpose_copy(x, 0, 1)
    y[0, 0] = 9.0
    assert x[0, 0].item() == 1.0


def test_in_place_forms_of_out_of_place_ops() -> None:
    z = torch.tensor([0.5, 0.0])
    assert z.sinc_() is z
    assert z.tolist() == pytest.approx([math.sin(math.pi / 2) / (math.pi / 2), 1.0])
    g = torch.tensor([12, 18])
    torch.gcd_(g, torch.tensor([8, 12]))
    assert g.tolist() == [4, 6]
    m = torch.tensor([4, 6])
    m.lcm_(torch.tensor([6, 4]))
    assert m.tolist() == [12, 12]
    e = torch.tensor([1.0, 2.0])
    e.ldexp_(torch.tensor([2, 3]))
    assert e.tolist() == [4.0, 16.0]
    i = torch.tensor([0.0])
    torch.i0_(i)
    assert i.tolist() == pytest.approx([1.0])
    c = torch.tensor([1 + 2j])
    c.conj_physical_()
    assert c.tolist() == [1 - 2j]
    with pytest.raises(RuntimeError):
        torch.tensor([1, 2]).sinc_()  # an int tensor cannot hold sinc's float result


def test_torch_forms_of_methods() -> None:
    assert torch.fill_(torch.zeros(2), 3).tolist() == [3.0, 3.0]
    assert torch.zero_(torch.ones(2)).tolist() == [0.0, 0.0]
    base = torch.zeros(2)
    filled = torch.fill(base, 5)
    assert filled.tolist() == [5.0, 5.0] and base.tolist() == [0.0, 0.0]
    assert torch.is_signed(torch.zeros(1, dtype=torch.uint8)) is False
    assert torch.is_signed(torch.zeros(1)) is True
    assert torch.get_device(torch.zeros(1)) == -1
    assert torch.is_inference(torch.zeros(1)) is False
    m = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert torch.adjoint(m).tolist() == [[1.0, 3.0], [2.0, 4.0]]
    assert m.adjoint().data_ptr() == m.data_ptr()  # a view
    a = torch.arange(5)
    assert [p.tolist() for p in torch.split_with_sizes(a, [2, 3])] == [[0, 1], [2, 3, 4]]
    assert [p.tolist() for p in a.unsafe_chunk(2)] == [[0, 1, 2], [3, 4]]
    assert [p.tolist() for p in torch.unsafe_split(a, 2)] == [[0, 1], [2, 3], [4]]


def test_nonzero_static_pads_or_truncates() -> None:
    x = torch.tensor([0, 3, 0, 4])
    assert torch.nonzero_static(x, size=3).tolist() == [[1], [3], [-1]]
    assert torch.nonzero_static(x, size=1).tolist() == [[1]]
    grid = torch.tensor([[1, 0], [1, 1]])
    assert torch.nonzero_static(grid, size=4, fill_value=-5).tolist() == [
        [0, 0], [1, 0], [1, 1], [-5, -5]]
    out = torch.nonzero_static(x, size=0)
    assert out.shape == (0, 1) and out.dtype == torch.int64
    with pytest.raises(RuntimeError):
        torch.nonzero_static(x, size=-1)


def test_legacy_autocast_spellings_warn_and_answer() -> None:
    with pytest.warns(DeprecationWarning, match="is_autocast_enabled\\('cpu'\\)"):
        assert torch.is_autocast_cpu_enabled() is False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert torch.get_autocast_gpu_dtype() == torch.float16
        before = torch.get_autocast_dtype("cpu")
        torch.set_autocast_cpu_dtype(torch.float16)
        try:
            assert torch.get_autocast_cpu_dtype() == torch.float16
        finally:
            torch.set_autocast_dtype("cpu", before)
    depth = torch.autocast_increment_nesting()
    assert torch.autocast_decrement_nesting() == depth - 1


def test_build_flags_and_errors() -> None:
    assert torch.has_lapack is True and torch.has_spectral is True
    assert torch.is_vulkan_available() is False
    assert torch.set_flush_denormal(True) is False  # not applied: denormals stay
    assert issubclass(torch.AcceleratorError, RuntimeError)
    assert torch.init_num_threads() is None
    with torch.DisableTorchFunctionSubclass():
        assert torch.ones(1).tolist() == [1.0]


def test_functional_protocol_helpers_and_grid_sample_modes() -> None:
    import torch.nn.functional as F
    import torch.overrides

    assert F.has_torch_function is torch.overrides.has_torch_function
    assert F.handle_torch_function is torch.overrides.handle_torch_function
    assert F.has_torch_function_variadic(torch.ones(1), 2) is False
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == {"bilinear": 0, "nearest": 1, "bicubic": 2}
    assert F.GRID_SAMPLE_PADDING_MODES == {"zeros": 0, "border": 1, "reflection": 2}


def test_backward_hooks_attribute_and_serialization_warnings() -> None:
    import torch.utils.hooks as hooks

    x = torch.ones(2, requires_grad=True)
    assert x._backward_hooks is None

    def hook(g):
        return g

    x.register_hook(hook)
    assert list(x._backward_hooks.values()) == [hook]
    with pytest.warns(UserWarning, match="will not be serialized"):
        hooks.warn_if_has_hooks(x)
    y = x * 2
    marked = hooks.unserializable_hook(lambda g: g)
    y.register_hook(marked)
    assert list(y._backward_hooks.values()) == [marked]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hooks.warn_if_has_hooks(y)  # marked: silent


def test_assert_allclose_is_the_deprecated_lenient_form() -> None:
    with pytest.warns(FutureWarning, match="assert_close"):
        torch.testing.assert_allclose(torch.tensor([1.0, 2.0]), [1.0, 2.0])
    with pytest.warns(FutureWarning), pytest.raises(AssertionError):
        torch.testing.assert_allclose(torch.tensor([1.0]), [1.1])
    with pytest.warns(FutureWarning):  # no dtype check
        torch.testing.assert_allclose(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64))


def test_tensor_storage_is_the_deprecated_typed_view() -> None:
    import torch._utils

    torch._utils._typed_storage_warned = False  # (warned once per process, as PyTorch)
    x = torch.ones(3)
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        s = x.storage()
    assert len(s) == 3 and s.size() == 3 and s.dtype == torch.float32
    assert s.element_size() == 4 and s.nbytes() == 12
    assert s.data_ptr() == x.data_ptr() == x[1:].storage().data_ptr()
    assert s.untyped() is x.untyped_storage() or s.untyped().data_ptr() == x.data_ptr()
    s[0] = 5
    assert x.tolist() == [5.0, 1.0, 1.0] and s.tolist() == [5.0, 1.0, 1.0]
    assert s.type() == "torch.FloatStorage" and not s.is_shared() and not s.is_pinned()
