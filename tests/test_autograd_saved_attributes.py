"""What a graph node shows of itself, as PyTorch's nodes do: the values it saved by argument
name (``grad_fn._saved_self``), the raw saved tensors with their own hooks
(``_raw_saved_self.register_hooks``), and PyTorch's class names, which graph visualisers and
debugging tools read."""

from __future__ import annotations

import pytest

import torch
import torch.nn.functional as F


def _saved_names(node: object) -> list[str]:
    return [name for name in dir(node) if name.startswith("_saved_")]


def test_inputs_are_saved_under_their_schema_names_as_the_same_objects() -> None:
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    node = (a * b).grad_fn
    assert _saved_names(node) == ["_saved_other", "_saved_self"]
    assert node._saved_self is a and node._saved_other is b


def test_an_output_is_saved_as_result_with_its_values() -> None:
    a = torch.randn(4, requires_grad=True)
    y = a.exp()
    assert "_saved_result" in _saved_names(y.grad_fn)
    saved = y.grad_fn._saved_result
    assert torch.equal(saved, y)
    # a tensor rule reads, not the output object itself (PyTorch's is a new Variable too)
    assert saved.data_ptr() == y.data_ptr()


def test_outputs_of_a_multi_output_op_are_numbered() -> None:
    x = torch.randn(2, 5, requires_grad=True)
    node = F.layer_norm(x, (5,)).grad_fn
    names = _saved_names(node)
    assert {"_saved_input", "_saved_normalized_shape", "_saved_result1",
            "_saved_result2"} <= set(names)
    assert node._saved_normalized_shape == (5,)  # an int list reads as a tuple
    # the saved mean and rstd are the statistics of each row
    mean, rstd = node._saved_result1, node._saved_result2
    assert torch.allclose(mean.reshape(-1), x.detach().mean(1), atol=1e-6)
    assert torch.allclose(rstd.reshape(-1), 1 / torch.sqrt(x.detach().var(1, unbiased=False)
                                                          + 1e-5), rtol=1e-5)


def test_numbers_and_lists_of_a_convolution_are_hashable_values() -> None:
    x = torch.randn(1, 2, 5, 5, requires_grad=True)
    w = torch.randn(3, 2, 3, 3, requires_grad=True)
    node = F.conv2d(x, w, stride=2, padding=1).grad_fn
    assert node._saved_stride == (2, 2) and node._saved_padding == (1, 1)
    assert node._saved_groups == 1 and node._saved_transposed is False
    assert node._saved_input is x and node._saved_weight is w
    for name in _saved_names(node):  # a graph visualiser puts each in a set
        hash(getattr(node, name))


def test_a_tensor_list_argument_reads_as_a_tuple_of_tensors() -> None:
    a = torch.randn(2, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    node = torch.cat([a, b]).grad_fn
    assert node._saved_dim == 0
    if "_saved_tensors" in _saved_names(node):
        tensors = node._saved_tensors
        assert isinstance(tensors, tuple) and tensors[0] is a and tensors[1] is b


def test_an_unknown_saved_name_is_an_attribute_error() -> None:
    a = torch.randn(3, requires_grad=True)
    node = a.sin().grad_fn
    with pytest.raises(AttributeError):
        _ = node._saved_other
    with pytest.raises(AttributeError):
        _ = node.no_such_attribute
    assert not hasattr(node, "_saved_weight")


def test_saved_values_are_freed_by_backward() -> None:
    a = torch.randn(3, requires_grad=True)
    y = a.sin()
    node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _ = node._saved_self
    # kept with retain_graph
    z = a.sin()
    z.sum().backward(retain_graph=True)
    assert z.grad_fn._saved_self is a


def test_raw_saved_tensor_hooks_pack_now_and_unpack_in_backward() -> None:
    a = torch.randn(4, requires_grad=True)
    y = a.pow(2)
    events: list[str] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        events.append("pack")
        return t.detach() * 1.0

    def unpack(t: torch.Tensor) -> torch.Tensor:
        events.append("unpack")
        return t

    raw = y.grad_fn._raw_saved_self
    raw.register_hooks(pack, unpack)
    assert events == ["pack"]
    with pytest.raises(RuntimeError):
        raw.register_hooks(pack, unpack)  # once per saved tensor
    y.sum().backward()
    assert events == ["pack", "unpack"]
    assert torch.allclose(a.grad, 2 * a.detach())


def test_an_unpack_hook_changes_what_backward_reads() -> None:
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a * a  # d/da = 2a, read from the saved self and other
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: torch.zeros_like(t))
    y.sum().backward()
    # only the other factor's saved value survives: d(a*a)/da = a_other + a_self -> a + 0
    assert torch.equal(a.grad, torch.tensor([1.0, 2.0, 3.0]))


def test_raw_saved_of_a_number_is_an_attribute_error() -> None:
    x = torch.randn(2, 5, requires_grad=True)
    node = F.layer_norm(x, (5,)).grad_fn
    with pytest.raises(AttributeError):
        _ = node._raw_saved_normalized_shape
    assert node._raw_saved_input is not None


@pytest.mark.parametrize(("make", "name"), [
    (lambda x: x.view(24), "ViewBackward0"),
    (lambda x: x[0], "SelectBackward0"),
    (lambda x: x[:, 1:], "SliceBackward0"),
    (lambda x: x.transpose(0, 1), "TransposeBackward0"),
    (lambda x: x.permute(2, 0, 1), "PermuteBackward0"),
    (lambda x: x.expand(2, 2, 3, 4), "ExpandBackward0"),
    (lambda x: x.unsqueeze(0), "UnsqueezeBackward0"),
    (lambda x: x.unbind(0)[0], "UnbindBackward0"),
    (lambda x: x.split(1)[0], "SplitBackward0"),
    (lambda x: x.log1p(), "Log1PBackward0"),
    (lambda x: F.max_pool2d(x, 2), "MaxPool2DWithIndicesBackward0"),
    (lambda x: F.avg_pool2d(x, 2), "AvgPool2DBackward0"),
])
def test_node_classes_carry_pytorchs_names(make, name) -> None:
    x = torch.rand(2, 3, 4, requires_grad=True)
    node = make(x).grad_fn
    assert type(node).__name__ == name
    assert node.name() == name


def test_is_view_is_a_method() -> None:
    t = torch.randn(4)
    assert t._is_view() is False
    assert t[1:]._is_view() is True


def test_a_layer_keeps_its_weight_only_for_its_inputs_gradient():
    # linear/addmm keep each product operand only for the other's gradient; the bias, which
    # needs nothing, does not make them keep the weight (PyTorch's AddmmBackward0 neither)
    import numpy as np

    x = torch.randn(4, 3)
    for bias in (True, False):
        m = torch.nn.Linear(3, 2, bias=bias)
        y = m(x).sum()
        with torch.no_grad():
            m.weight.add_(1.0)  # not read by the backward: the input needs no gradient
        y.backward()
        np.testing.assert_allclose(m.weight.grad.numpy(), np.ones((2, 1)) * x.sum(0).numpy(),
                                   rtol=1e-5)
    m = torch.nn.Linear(3, 2)
    xg = torch.randn(4, 3, requires_grad=True)
    y = m(xg).sum()
    with torch.no_grad():
        m.weight.add_(1.0)  # read by the input's gradient: the version check raises
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    b, m1, m2 = torch.zeros(2, requires_grad=True), torch.randn(4, 3), torch.randn(3, 2)
    out = torch.addmm(b, m1, m2).sum()
    with torch.no_grad():
        m2.add_(1.0)  # neither product operand needs a gradient: nothing kept
    out.backward()
    assert b.grad.tolist() == [4.0, 4.0]
