"""What a dispatch mode and a ``__torch_dispatch__`` subclass are handed, as PyTorch hands it.

The expected operator names are PyTorch's native_functions names (``add_.Tensor(Tensor(a!) self,
Tensor other, *, Scalar alpha=1) -> Tensor(a!)``...): an in-place method reaches a mode as its
in-place operator, with the arguments of the call.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class _Log(TorchDispatchMode):
    """Records (operator name, argument kinds, keyword names) of every call it runs."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, list[Any], dict[str, Any]]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kinds = ["T" if isinstance(a, torch.Tensor) else a for a in args]
        self.calls.append((str(func), kinds, dict(kwargs or {})))
        return func(*args, **(kwargs or {}))

    @property
    def names(self) -> list[str]:
        return [name for name, _, _ in self.calls]


_OTHER = [0.5, 0.25, 0.75]

# method call on x = [1., 2., 3.] -> the operator PyTorch's mode sees (native_functions name)
INPLACE_CASES = [
    ("add_", lambda x, y: x.add_(y), "aten.add_.Tensor", lambda x, y: x + y),
    ("add_ number", lambda x, y: x.add_(1), "aten.add_.Tensor", lambda x, y: x + 1),
    ("sub_ alpha", lambda x, y: x.sub_(y, alpha=2), "aten.sub_.Tensor", lambda x, y: x - 2 * y),
    ("mul_", lambda x, y: x.mul_(2), "aten.mul_.Tensor", lambda x, y: x * 2),
    ("div_", lambda x, y: x.div_(y), "aten.div_.Tensor", lambda x, y: x / y),
    ("div_ rounding", lambda x, y: x.div_(y, rounding_mode="floor"), "aten.div_.Tensor_mode",
     lambda x, y: np.floor(x / y)),
    ("clamp_", lambda x, y: x.clamp_(min=2), "aten.clamp_.default",
     lambda x, y: np.maximum(x, 2)),
    ("clip_", lambda x, y: x.clip_(0, 1.5), "aten.clamp_.default", lambda x, y: np.clip(x, 0, 1.5)),
    ("exp_", lambda x, y: x.exp_(), "aten.exp_.default", lambda x, y: np.exp(x)),
    ("abs_", lambda x, y: x.abs_(), "aten.abs_.default", lambda x, y: np.abs(x)),
    ("neg_", lambda x, y: x.neg_(), "aten.neg_.default", lambda x, y: -x),
    ("sqrt_", lambda x, y: x.sqrt_(), "aten.sqrt_.default", lambda x, y: np.sqrt(x)),
    ("sigmoid_", lambda x, y: x.sigmoid_(), "aten.sigmoid_.default",
     lambda x, y: 1 / (1 + np.exp(-x))),
    ("floor_", lambda x, y: x.floor_(), "aten.floor_.default", lambda x, y: np.floor(x)),
    ("fix_ (alias)", lambda x, y: x.fix_(), "aten.trunc_.default", lambda x, y: np.trunc(x)),
    ("arcsinh_ (alias)", lambda x, y: x.arcsinh_(), "aten.asinh_.default",
     lambda x, y: np.arcsinh(x)),
    ("multiply_ (alias)", lambda x, y: x.multiply_(y), "aten.mul_.Tensor", lambda x, y: x * y),
    ("pow_ number", lambda x, y: x.pow_(2), "aten.pow_.Scalar", lambda x, y: x ** 2),
    ("pow_ tensor", lambda x, y: x.pow_(y), "aten.pow_.Tensor", lambda x, y: x ** y),
    ("atan2_", lambda x, y: x.atan2_(y), "aten.atan2_.default", lambda x, y: np.arctan2(x, y)),
    ("hypot_", lambda x, y: x.hypot_(y), "aten.hypot_.default", lambda x, y: np.hypot(x, y)),
    ("remainder_", lambda x, y: x.remainder_(y), "aten.remainder_.Tensor",
     lambda x, y: np.remainder(x, y)),
    ("lt_", lambda x, y: x.lt_(y), "aten.lt_.Tensor", lambda x, y: (x < y).astype(np.float32)),
    ("+=", lambda x, y: x.__iadd__(1), "aten.add_.Tensor", lambda x, y: x + 1),
    ("-=", lambda x, y: x.__isub__(y), "aten.sub_.Tensor", lambda x, y: x - y),
    ("*=", lambda x, y: x.__imul__(y), "aten.mul_.Tensor", lambda x, y: x * y),
    ("/=", lambda x, y: x.__itruediv__(2), "aten.div_.Tensor", lambda x, y: x / 2),
    ("cumsum_", lambda x, y: x.cumsum_(0), "aten.cumsum_.default", lambda x, y: np.cumsum(x)),
    ("cumprod_", lambda x, y: x.cumprod_(0), "aten.cumprod_.default",
     lambda x, y: np.cumprod(x)),
]


@pytest.mark.parametrize(("call", "expected", "reference"),
                         [(c[1], c[2], c[3]) for c in INPLACE_CASES],
                         ids=[c[0] for c in INPLACE_CASES])
def test_an_inplace_method_reaches_a_mode_as_its_inplace_operator(call: Any, expected: str,
                                                                   reference: Any) -> None:
    x = torch.tensor([1.0, 2.0, 3.0])
    y = torch.tensor(_OTHER)
    want = torch.from_numpy(np.asarray(reference(x.numpy().copy(), y.numpy()),
                                       dtype=np.float32))
    log = _Log()
    with log:
        out = call(x, y)
    assert log.names == [expected]
    assert log.calls[0][1][0] == "T"
    assert out is x
    torch.testing.assert_close(x, want, equal_nan=True)


def test_the_inplace_operator_gets_the_calls_arguments_as_pytorch_passes_them() -> None:
    x = torch.ones(3)
    y = torch.tensor(_OTHER)
    log = _Log()
    with log:
        x.add_(1)
        x.sub_(y, alpha=2)
        x.clamp_(min=0)
        x.clamp_(max=5)
    assert log.calls[0] == ("aten.add_.Tensor", ["T", 1], {})
    assert log.calls[1][0] == "aten.sub_.Tensor" and log.calls[1][2] == {"alpha": 2}
    assert log.calls[2] == ("aten.clamp_.default", ["T", 0], {})
    assert log.calls[3] == ("aten.clamp_.default", ["T", None, 5], {})
    assert x.tolist() == [1.0, 1.5, 0.5]  # ((1 + 1) - 2 * y) clamped to [0, 5]


def test_addmm_inplace_reaches_a_mode_as_addmm_() -> None:
    m = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    acc = torch.ones(2, 2)
    log = _Log()
    with log:
        acc.addmm_(m, m)
    assert log.names == ["aten.addmm_.default"]
    assert acc.tolist() == [[8.0, 11.0], [16.0, 23.0]]  # 1 + m @ m


def test_indexing_and_triangle_inplace_methods_reach_their_inplace_operators() -> None:
    x = torch.arange(9.0).reshape(3, 3)
    index, ones = torch.tensor([[0, 1, 2]]), torch.ones(1, 3)
    log = _Log()
    with log:
        x.masked_fill_(x > 4, 0.0)
        x.triu_()
        x.tril_(1)
        x.scatter_reduce_(0, index, ones, "sum")
    assert log.names == ["aten.gt.Scalar", "aten.masked_fill_.Scalar", "aten.triu_.default",
                         "aten.tril_.default", "aten.scatter_reduce_.two"]
    want = np.arange(9.0).reshape(3, 3)
    want[want > 4] = 0.0
    want = np.tril(np.triu(want), 1)
    want[0, 0] += 1
    want[1, 1] += 1
    want[2, 2] += 1
    assert x.tolist() == want.tolist()


def test_the_inplace_operators_are_named_by_torch_ops_and_write_in_place() -> None:
    op = torch.ops.aten.add_.Tensor
    assert isinstance(op, torch._ops.OpOverload)
    assert "Tensor(a!) self" in str(op._schema)
    x = torch.ones(3)
    version = x._version
    out = op(x, torch.tensor([1.0, 2.0, 3.0]), alpha=2)
    assert out is x and x.tolist() == [3.0, 5.0, 7.0]
    assert x._version == version + 1
    assert torch.ops.aten.mul_.Tensor is not torch.ops.aten.mul.Tensor


def test_a_version_counter_moves_once_per_inplace_call_under_a_mode() -> None:
    x = torch.ones(3)
    before = x._version
    with _Log():
        x.mul_(2)
        x.exp_()
    assert x._version == before + 2


def test_errors_of_an_inplace_call_are_pytorchs_under_a_mode() -> None:
    ints = torch.tensor([1, 2, 3])
    with _Log(), pytest.raises(RuntimeError, match="result type Float can't be cast to the "
                                                   "desired output type Long"):
        ints.add_(1.5)
    small = torch.ones(3)
    with _Log(), pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        small.add_(torch.ones(2, 3))
    base = torch.arange(6.0)
    with _Log(), pytest.raises(RuntimeError, match="unsupported operation"):
        base[1:5].add_(base[:4])
    assert ints.tolist() == [1, 2, 3] and small.tolist() == [1.0, 1.0, 1.0]


def test_an_inplace_call_with_grad_to_record_keeps_its_gradient_under_a_mode() -> None:
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    log = _Log()
    with log:
        h = w * 3
        h.mul_(w)  # h = 3 w^2
    h.sum().backward()
    assert w.grad.tolist() == [6.0, 12.0, 18.0]  # 6 w
    assert "aten.mul.Tensor" in log.names


def test_a_leaf_requiring_grad_refuses_an_inplace_call_under_a_mode() -> None:
    w = torch.ones(3, requires_grad=True)
    with _Log(), pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.add_(1)
    with torch.no_grad(), _Log() as log:
        w.add_(1)  # allowed without grad, and seen as the in-place operator
    assert log.names == ["aten.add_.Tensor"] and w.tolist() == [2.0, 2.0, 2.0]


def test_fake_tensors_run_inplace_methods_through_the_inplace_operator() -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode() as mode:
        x = mode.from_tensor(torch.ones(2, 3))
        out = x.add_(torch.ones(3)).mul_(2)
        assert out is x
        assert tuple(x.shape) == (2, 3) and x.dtype == torch.float32


class _Wrapper(torch.Tensor):
    """A wrapper subclass that records what its ``__torch_dispatch__`` is handed."""

    seen: list[str] = []

    @staticmethod
    def __new__(cls, inner: torch.Tensor) -> Any:
        out = torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype)
        out.inner = inner
        return out

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        cls.seen.append(str(func))
        unwrap = [a.inner if isinstance(a, _Wrapper) else a for a in args]
        out = func(*unwrap, **(kwargs or {}))
        if func._schema.returns and func._schema.returns[0].alias_info is not None and \
                func._schema.returns[0].alias_info.is_write:
            return args[0]
        return _Wrapper(out) if isinstance(out, torch.Tensor) else out


def test_a_torch_dispatch_subclass_sees_the_inplace_operator() -> None:
    _Wrapper.seen = []
    inner = torch.ones(3)
    w = _Wrapper(inner)
    out = w.mul_(4)
    assert out is w
    assert _Wrapper.seen == ["aten.mul_.Tensor"]
    assert inner.tolist() == [4.0, 4.0, 4.0]


class _Args(TorchDispatchMode):
    """Records (operator name, arguments with tensors as "T", keyword arguments)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, list[Any], dict[str, Any]]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        def plain(a: Any) -> Any:
            if isinstance(a, torch.Tensor):
                return "T"
            if isinstance(a, (list, tuple)):
                return type(a)(plain(x) for x in a)
            return a

        self.calls.append((str(func), plain(list(args)), dict(kwargs or {})))
        return func(*args, **(kwargs or {}))


# call on x = ones(2, 3) -> (op, args, kwargs) as PyTorch's dispatcher hands them: int[]
# arguments as lists, trailing positional defaults left out, keyword-only ones only when set
NORMAL_FORM_CASES = [
    ("sum dim", lambda x: x.sum(0), ("aten.sum.dim_IntList", ["T", [0]], {})),
    ("sum dims", lambda x: x.sum((0, 1)), ("aten.sum.dim_IntList", ["T", [0, 1]], {})),
    ("mean keepdim", lambda x: x.mean(1, keepdim=True), ("aten.mean.dim", ["T", [1], True], {})),
    ("std", lambda x: x.std(0), ("aten.std.correction", ["T", [0]], {"correction": 1})),
    ("view", lambda x: x.view(6), ("aten.view.default", ["T", [6]], {})),
    ("permute", lambda x: x.permute(1, 0), ("aten.permute.default", ["T", [1, 0]], {})),
    ("expand", lambda x: x.expand(2, 2, 3), ("aten.expand.default", ["T", [2, 2, 3]], {})),
    ("clone", lambda x: x.clone(), ("aten.clone.default", ["T"], {})),
    ("copy_", lambda x: x.copy_(x.t().t()), ("aten.t.default", ["T"], {})),
    ("uniform_", lambda x: x.uniform_(), ("aten.uniform_.default", ["T"], {})),
    ("normal_", lambda x: x.normal_(), ("aten.normal_.default", ["T"], {})),
    ("normal_ floats", lambda x: x.normal_(0, 2), ("aten.normal_.default", ["T", 0.0, 2.0], {})),
    ("max dim", lambda x: x.max(0), ("aten.max.dim", ["T", 0], {})),
    ("to dtype", lambda x: x.to(torch.float64),
     ("aten._to_copy.default", ["T"], {"dtype": torch.float64})),
    ("to device and dtype", lambda x: x.to("meta", torch.float64),
     ("aten._to_copy.default", ["T"], {"dtype": torch.float64,
                                        "device": torch.device("meta")})),
    ("split", lambda x: x.split(1), ("aten.split.Tensor", ["T", 1], {})),
    ("cat", lambda x: torch.cat((x, x)), ("aten.cat.default", [["T", "T"]], {})),
    ("zeros", lambda x: torch.zeros(2, 3),
     ("aten.zeros.default", [[2, 3]], {"device": torch.device("cpu"), "pin_memory": False})),
    ("zeros_like", lambda x: torch.zeros_like(x),
     ("aten.zeros_like.default", ["T"], {"pin_memory": False})),
    ("new_zeros", lambda x: x.new_zeros(2),
     ("aten.new_zeros.default", ["T", [2]], {"pin_memory": False})),
    ("new_zeros varargs", lambda x: x.new_zeros(2, 2),
     ("aten.new_zeros.default", ["T", [2, 2]], {"pin_memory": False})),
    ("new_empty", lambda x: x.new_empty((2, 2)),
     ("aten.new_empty.default", ["T", [2, 2]], {"pin_memory": False})),
    ("new_ones dtype", lambda x: x.new_ones(2, dtype=torch.int64),
     ("aten.new_ones.default", ["T", [2]], {"dtype": torch.int64, "pin_memory": False})),
    ("new_full", lambda x: x.new_full((2,), 3),
     ("aten.new_full.default", ["T", [2], 3], {"pin_memory": False})),
]


@pytest.mark.parametrize(("call", "expected"), [(c[1], c[2]) for c in NORMAL_FORM_CASES],
                         ids=[c[0] for c in NORMAL_FORM_CASES])
def test_a_mode_gets_arguments_in_pytorchs_normal_form(call: Any, expected: Any) -> None:
    x = torch.ones(2, 3)
    log = _Args()
    with log:
        call(x)
    assert log.calls[0] == expected


def test_copy_is_handed_without_its_default_non_blocking() -> None:
    x, y = torch.ones(2, 3), torch.zeros(2, 3)
    log = _Args()
    with log:
        x.copy_(y)
    assert log.calls == [("aten.copy_.default", ["T", "T"], {})]
    assert x.tolist() == [[0.0] * 3] * 2


def test_new_factories_under_a_mode_keep_self_dtype_device_and_requires_grad() -> None:
    x = torch.ones(2, 3, dtype=torch.float64)
    with _Args():
        zeros = x.new_zeros(2, 2, requires_grad=True)
        full = x.new_full((3,), 7)
        ints = x.new_ones(size=(2,), dtype=torch.int32)
    assert zeros.dtype == torch.float64 and zeros.requires_grad
    assert zeros.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert full.dtype == torch.float64 and full.tolist() == [7.0, 7.0, 7.0]
    assert ints.dtype == torch.int32 and ints.tolist() == [1, 1]


def test_a_torch_dispatch_subclass_gets_the_normal_form_too() -> None:
    _Wrapper.seen = []
    seen_args: list[Any] = []
    original = _Wrapper.__torch_dispatch__

    class _Recording(_Wrapper):
        @classmethod
        def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            seen_args.append((str(func), [a for a in args if not isinstance(a, torch.Tensor)],
                              dict(kwargs or {})))
            return original.__func__(cls, func, types, args, kwargs)

    w = _Recording(torch.ones(2, 3))
    w.sum(0)
    assert seen_args == [("aten.sum.dim_IntList", [[0]], {})]
