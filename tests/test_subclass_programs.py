"""Tensor subclasses, ``__torch_function__``/``__torch_dispatch__`` and modes as libraries
(torchao-style quantized weights, float8 experiments, op counters, logging modes) use them.

Expected values are PyTorch's documented behaviour, or computed independently (by hand or with
plain tensor arithmetic that no override takes part in)."""

from __future__ import annotations

from typing import Any

import pytest

import torch
from torch.utils._pytree import tree_map_only

aten = torch.ops.aten


class QuantizedWeight(torch.Tensor):
    """An int8 weight with one scale, dequantized for every op but the few it keeps (a
    torchao-style wrapper subclass: no ``__torch_function__`` of its own)."""

    @staticmethod
    def __new__(cls, q: torch.Tensor, scale: torch.Tensor) -> QuantizedWeight:
        return torch.Tensor._make_wrapper_subclass(cls, q.shape, dtype=torch.float32,
                                                   device=q.device)

    def __init__(self, q: torch.Tensor, scale: torch.Tensor) -> None:
        self.q = q
        self.scale = scale

    def __tensor_flatten__(self) -> tuple[list[str], Any]:
        return ["q", "scale"], None

    @staticmethod
    def __tensor_unflatten__(inner: dict[str, torch.Tensor], meta: Any, size: Any,
                             stride: Any) -> QuantizedWeight:
        return QuantizedWeight(inner["q"], inner["scale"])

    def dequantize(self) -> torch.Tensor:
        return self.q.to(torch.float32) * self.scale

    seen: list[str] = []

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        cls.seen.append(str(func))
        kwargs = kwargs or {}
        if func is aten.t.default:
            return QuantizedWeight(args[0].q.t(), args[0].scale)
        if func is aten.detach.default:
            return QuantizedWeight(args[0].q, args[0].scale)
        if func is aten.clone.default:
            return QuantizedWeight(args[0].q.clone(), args[0].scale.clone())
        plain = tree_map_only(QuantizedWeight, QuantizedWeight.dequantize, (args, kwargs))
        return func(*plain[0], **plain[1])


def _quantized_linear() -> tuple[torch.nn.Linear, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 3)
    w = lin.weight.detach().clone()
    scale = w.abs().max() / 127
    q = torch.round(w / scale).to(torch.int8)
    lin.weight = torch.nn.Parameter(QuantizedWeight(q, scale), requires_grad=False)
    return lin, q.to(torch.float32) * scale, lin.bias.detach()


def test_a_dispatch_subclass_opts_out_of_the_default_torch_function() -> None:
    # PyTorch: a class defining __torch_dispatch__ and inheriting Tensor's default
    # __torch_function__ gets the disabled one, so results are what its dispatch returns
    assert QuantizedWeight.__torch_function__ is torch._C._disabled_torch_function_impl

    class Child(QuantizedWeight):
        pass

    class Keeps(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            return super().__torch_function__(func, types, args, kwargs)

        @classmethod
        def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            return NotImplemented

    assert Child.__torch_function__ is torch._C._disabled_torch_function_impl
    assert "__torch_function__" in vars(Keeps)
    w = QuantizedWeight(torch.tensor([[2, -4]], dtype=torch.int8), torch.tensor(0.5))
    out = w + 1
    assert type(out) is torch.Tensor and out.tolist() == [[2.0, -1.0]]


def test_a_quantized_weight_parameter_in_linear() -> None:
    lin, dequantized, bias = _quantized_linear()
    # Parameter(custom subclass) keeps the class and is marked a parameter (PyTorch >= 2.1)
    assert type(lin.weight) is QuantizedWeight
    assert isinstance(lin.weight, torch.nn.Parameter)
    assert [name for name, _ in lin.named_parameters()] == ["weight", "bias"]
    assert not lin.weight.requires_grad
    x = torch.randn(2, 4)
    QuantizedWeight.seen.clear()
    y = lin(x)
    assert type(y) is torch.Tensor
    # F.linear with a 2-d input is t + addmm to a __torch_dispatch__ class, as in PyTorch
    assert QuantizedWeight.seen == ["aten.t.default", "aten.addmm.default"]
    expected = x @ dequantized.t() + bias
    assert torch.allclose(y, expected, atol=1e-6)
    assert "QuantizedWeight" not in repr(lin)


def test_parameter_of_a_subclass_whose_detach_changes_class_is_refused() -> None:
    class Loses(torch.Tensor):
        @staticmethod
        def __new__(cls, elem: torch.Tensor) -> Loses:
            return torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)

        def __init__(self, elem: torch.Tensor) -> None:
            self.elem = elem

        @classmethod
        def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            return func(*tree_map_only(Loses, lambda t: t.elem, args), **(kwargs or {}))

    with pytest.raises(RuntimeError, match="requires that detach\\(\\) returns an instance"):
        torch.nn.Parameter(Loses(torch.ones(2)))
    plain = torch.nn.Parameter(torch.ones(2))
    assert type(plain) is torch.nn.Parameter and plain.requires_grad


def test_a_logging_mode_reads_the_schema_as_pytorch_spells_it() -> None:
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: list[tuple[Any, ...]] = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            s = func._schema
            seen.append((func.__name__, s.name, s.overload_name,
                         [str(a.type) for a in s.arguments],
                         [type(r.type).__name__ for r in s.returns], s.is_mutable,
                         torch.Tag.pointwise in func.tags,
                         isinstance(func, torch._ops.OpOverload)))
            return func(*args, **(kwargs or {}))

    x = torch.randn(3, 3)
    with Log():
        torch.mm(x, x)
        x.sum(dim=0)
        torch.nn.functional.gelu(x)
    # the strings aten's declarations give (native_functions.yaml), as PyTorch prints them
    assert seen == [
        ("mm.default", "aten::mm", "", ["Tensor", "Tensor"], ["TensorType"], False, False, True),
        ("sum.dim_IntList", "aten::sum", "dim_IntList",
         ["Tensor", "Optional[List[int]]", "bool", "Optional[int]"], ["TensorType"], False,
         False, True),
        ("gelu.default", "aten::gelu", "", ["Tensor", "str"], ["TensorType"], False, True, True),
    ]


def test_schema_alias_info_marks_written_and_viewed_arguments() -> None:
    copy_ = aten.copy_.default._schema
    assert str(copy_) == ("aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) "
                          "-> Tensor(a!)")
    assert copy_.is_mutable
    self_arg = copy_.arguments[0]
    assert self_arg.alias_info.is_write and set(self_arg.alias_info.before_set) == {"a"}
    assert copy_.arguments[1].alias_info is None
    assert copy_.arguments[2].has_default_value() and copy_.arguments[2].default_value is False
    assert copy_.returns[0].alias_info.is_write
    view = aten.view.default._schema
    assert str(view) == "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)"
    assert not view.arguments[0].alias_info.is_write
    assert set(view.returns[0].alias_info.before_set) == {"a"}
    assert str(view.arguments[1].type) == "List[int]"
    to_copy = aten._to_copy.default._schema
    assert [a.kwarg_only for a in to_copy.arguments][:3] == [False, True, True]
    assert str(to_copy.arguments[3].type) == "Optional[Device]"
    assert not any(a.is_out for a in to_copy.arguments)


def test_operator_tags() -> None:
    assert torch.Tag.pointwise in aten.mul.Tensor.tags
    assert torch.Tag.pointwise not in aten.mm.default.tags
    assert torch.Tag.reduction in aten.sum.dim_IntList.tags
    assert torch.Tag.inplace in aten.copy_.default.tags
    assert torch.Tag.nondeterministic_seeded in aten.bernoulli.default.tags
    assert torch.Tag.nondeterministic_seeded not in aten.add.Tensor.tags


def test_flop_counter_attributes_backward_ops_to_modules() -> None:
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
    x = torch.randn(4, 16)
    counter = FlopCounterMode(display=False)
    with counter:
        mlp(x).sum().backward()
    # 2 flops per multiply-add. Forward: 4x16 @ 16x32 and 4x32 @ 32x8 (addmm). Backward: the
    # last layer's input and weight gradients (two 4*8*32 products), the first layer's weight
    # gradient only (x does not require grad): 32x4 @ 4x16.
    first, second = 2 * 4 * 16 * 32, 2 * 4 * 32 * 8
    counts = {module: {str(op): n for op, n in ops.items()}
              for module, ops in counter.get_flop_counts().items()}
    assert counts["Global"] == {"aten.addmm": first + second, "aten.mm": 2 * second + first}
    assert counts["Sequential"] == counts["Global"]
    assert counts["Sequential.0"] == {"aten.addmm": first, "aten.mm": first}
    assert counts["Sequential.2"] == {"aten.addmm": second, "aten.mm": 2 * second}
    assert counter.get_total_flops() == 2 * first + 3 * second
    with pytest.warns(UserWarning, match="mods argument is not needed"):
        FlopCounterMode(mlp, display=False)


def test_flop_counter_counts_convolution_backward_per_module() -> None:
    from torch.utils.flop_counter import FlopCounterMode

    conv = torch.nn.Conv2d(3, 8, 3, padding=1)
    net = torch.nn.Sequential(conv, torch.nn.ReLU())
    x = torch.randn(2, 3, 8, 8, requires_grad=True)
    with FlopCounterMode(display=False) as counter:
        net(x).sum().backward()
    # forward: every one of 2*8*8*8 outputs takes 3*3*3 multiply-adds; backward: the input's
    # gradient as many, the weight's as many again (groups=1)
    forward = 2 * (2 * 8 * 8 * 8) * (3 * 3 * 3)
    counts = counter.get_flop_counts()
    assert {str(k): v for k, v in counts["Sequential.0"].items()} == {
        "aten.convolution": forward, "aten.convolution_backward": 2 * forward}
    assert "Sequential.1" not in counts or not counts["Sequential.1"]


class Wrapped(torch.Tensor):
    """A wrapper subclass over one inner tensor, written the way PyTorch's docs show it:
    unwrap, run, rewrap, then ``return_and_correct_aliasing``."""

    @staticmethod
    def __new__(cls, inner: torch.Tensor) -> Wrapped:
        return torch.Tensor._make_wrapper_subclass(
            cls, inner.shape, strides=inner.stride(), storage_offset=inner.storage_offset(),
            dtype=inner.dtype, device=inner.device)

    def __init__(self, inner: torch.Tensor) -> None:
        self.inner = inner

    def __repr__(self) -> str:
        return f"Wrapped({self.inner!r})"

    def __tensor_flatten__(self) -> tuple[list[str], Any]:
        return ["inner"], None

    @staticmethod
    def __tensor_unflatten__(inner: dict[str, torch.Tensor], meta: Any, size: Any,
                             stride: Any) -> Wrapped:
        return Wrapped(inner["inner"])

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        from torch.utils._python_dispatch import return_and_correct_aliasing

        kwargs = kwargs or {}
        unwrapped = tree_map_only(Wrapped, lambda t: t.inner, (args, kwargs))
        out = func(*unwrapped[0], **unwrapped[1])
        out = tree_map_only(torch.Tensor, Wrapped, out)
        return return_and_correct_aliasing(func, args, kwargs, out)


def test_return_and_correct_aliasing_returns_the_written_argument() -> None:
    x = Wrapped(torch.arange(6.0).view(2, 3))
    y = x.add_(1)
    assert y is x  # an in-place op returns self, as PyTorch's schema says (Tensor(a!))
    assert x.inner.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    t = x.t()
    assert type(t) is Wrapped and t.shape == (3, 2) and t.stride() == (1, 3)
    assert t.inner.tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    r = repr(x.detach())
    assert r.startswith("Wrapped(tensor([[1., 2., 3.]")


def test_a_function_mode_sees_repr_once_and_not_the_ops_printing_makes() -> None:
    from torch.overrides import TorchFunctionMode

    seen: list[tuple[str, list[str]]] = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            seen.append((func.__name__, sorted(kwargs)))
            return func(*args, **kwargs)

    t = torch.tensor([1.0, 2.0])
    with Log():
        text = repr(t)
    assert text == "tensor([1., 2.])"
    assert seen == [("__repr__", ["tensor_contents"])]


def test_data_and_view_properties_keep_the_subclass() -> None:
    names: list[str] = []

    class Keep(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            names.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    k = torch.ones(2, 2).as_subclass(Keep)
    assert type(k.data) is Keep and type(k.T) is Keep
    # PyTorch hands an override a property's __get__
    assert names == ["__get__", "__get__"]
    k.data = torch.zeros(2, 2)  # the setter is kept
    assert k.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_overrides_helpers_libraries_call() -> None:
    import inspect

    from torch.overrides import (
        get_ignored_functions,
        get_overridable_functions,
        get_testing_overrides,
        resolve_name,
    )

    table = get_overridable_functions()
    assert torch.add in table[torch] and torch.Tensor.add in table[torch.Tensor]
    assert torch.nn.functional.relu in table[torch.nn.functional]
    dummies = get_testing_overrides()
    assert dummies[torch.add](torch.ones(1), torch.ones(1)) == -1
    assert list(inspect.signature(dummies[torch.add]).parameters)[:2] == ["input", "other"]
    assert resolve_name(torch.add) == "torch.add"
    assert resolve_name(torch.Tensor.add) == "torch.Tensor.add"
    assert resolve_name(torch.nn.functional.relu) == "torch.nn.functional.relu"
    assert resolve_name(aten.add.Tensor) == "aten.add.Tensor"
    ignored = get_ignored_functions()
    assert torch.is_tensor in ignored and torch.add not in ignored


def test_no_dispatch_and_the_mode_stack_introspection() -> None:
    from torch.utils._mode_utils import no_dispatch
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: list[str] = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    a = torch.ones(2)
    assert torch._C._len_torch_dispatch_stack() == 0
    with Log() as log:
        a + 1
        with no_dispatch():
            a * 2
        assert torch._C._len_torch_dispatch_stack() == 1
        assert torch._C._get_dispatch_stack_at(0) is log
        assert torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE) is None
    assert seen == ["aten.add.Tensor"]
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode() as fake:
        assert torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE) is fake
    assert torch._C._is_torch_function_enabled()
    with torch._C.DisableTorchFunctionSubclass():
        assert not torch._C._is_torch_function_enabled()


def test_library_impl_in_its_decorator_form_with_a_library() -> None:
    from torch.library import Library, impl

    lib = Library("h4_subclass_programs", "FRAGMENT")
    lib.define("triple(Tensor x) -> Tensor")

    @impl(lib, "triple", "CPU")
    def triple_cpu(x: torch.Tensor) -> torch.Tensor:
        return x * 3

    lib.impl("triple", lambda x: torch.empty_like(x), "Meta")
    assert torch.ops.h4_subclass_programs.triple(torch.ones(2)).tolist() == [3.0, 3.0]
    assert torch.ops.h4_subclass_programs.triple(torch.ones(4, device="meta")).shape == (4,)


def test_a_mode_returning_not_implemented_hands_the_call_to_the_subclass() -> None:
    from torch.utils._python_dispatch import TorchDispatchMode

    order: list[str] = []

    class Declines(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            order.append(f"mode {func} {[t.__name__ for t in types]}")
            if types:
                return NotImplemented
            return func(*args, **(kwargs or {}))

    x = Wrapped(torch.ones(2))
    with Declines():
        y = x + 1
    assert type(y) is Wrapped and y.inner.tolist() == [2.0, 2.0]
    # the subclass's handler runs with the mode back on: its inner call reaches the mode
    assert order == ["mode aten.add.Tensor ['Wrapped']", "mode aten.add.Tensor []"]
    assert not TorchDispatchMode.is_infra_mode()


_TV_TENSORS_PROGRAM = """
import torch
from torch._C import DisableTorchFunctionSubclass

class Boxes(torch.Tensor):
    # torchvision's tv_tensors name these right after `import torch`, in the class body
    _NO_WRAP = {torch.Tensor.clone, torch.Tensor.to, torch.Tensor.detach}

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        with DisableTorchFunctionSubclass():
            out = func(*args, **(kwargs or {}))
        if func in cls._NO_WRAP or func is torch.Tensor.__getitem__:
            out = out.as_subclass(cls)
            out.fmt = args[0].fmt
        return out

b = torch.tensor([[0.0, 0.0, 4.0, 4.0]]).as_subclass(Boxes)
b.fmt = "XYXY"
print(type(b + 1).__name__, type(b.clone()).__name__, b.clone().fmt,
      type(b.to(torch.float64)).__name__, type(b[0]).__name__, type(b.sum()).__name__)
"""


def test_a_class_body_naming_tensor_methods_right_after_import() -> None:
    import subprocess
    import sys

    # (a fresh process: the names are looked up before the op surface and the protocol load)
    done = subprocess.run([sys.executable, "-c", _TV_TENSORS_PROGRAM], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Tensor", "Boxes", "XYXY", "Boxes", "Boxes", "Tensor"]


def test_fake_tensors_made_inside_and_outside_a_mode() -> None:
    from torch._subclasses.fake_tensor import (
        FakeTensor,
        FakeTensorMode,
        unset_fake_temporarily,
    )

    mode = FakeTensorMode()
    fake = mode.from_tensor(torch.randn(2, 3))
    assert repr(fake) == "FakeTensor(..., size=(2, 3))"  # PyTorch leaves out the CPU
    with mode:
        with unset_fake_temporarily() as unset:
            assert unset is mode and type(torch.ones(2)) is torch.Tensor
        lin = torch.nn.Linear(3, 4)
        assert isinstance(lin.weight, FakeTensor) and isinstance(lin.weight, torch.nn.Parameter)
        out = lin(fake)
        assert isinstance(out, FakeTensor) and out.shape == (2, 4)
        out.sum().backward()
        assert isinstance(lin.weight.grad, FakeTensor) and lin.weight.grad.shape == (4, 3)
    assert torch._C._len_torch_dispatch_stack() == 0
    # nameable (a __torch_dispatch__ compares func with it), as in PyTorch
    assert str(torch.ops.aten.sym_size.default) == "aten.sym_size.default"


def test_register_torch_dispatch_rules_for_a_subclass_and_a_mode() -> None:
    from torch.utils._python_dispatch import TorchDispatchMode

    @torch.library.custom_op("h4_subclass_programs::sine", mutates_args=())
    def sine(x: torch.Tensor) -> torch.Tensor:
        return x.sin()

    @sine.register_fake
    def _(x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x)

    class Tagged(Wrapped):
        pass

    @torch.library.register_torch_dispatch("h4_subclass_programs::sine", Tagged)
    def _(cls: type, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return Tagged(torch.full_like(args[0].inner, 7.0))  # the rule, not sin

    out = sine(Tagged(torch.zeros(2)))
    assert type(out) is Tagged and out.inner.tolist() == [7.0, 7.0]
    # other operators still reach the class's own __torch_dispatch__
    assert (Tagged(torch.ones(2)) + 1).inner.tolist() == [2.0, 2.0]

    class Plain(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            return func(*args, **(kwargs or {}))

    @torch.library.register_torch_dispatch("h4_subclass_programs::sine", Plain)
    def _(mode: Any, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return torch.full_like(args[0], -1.0)

    with Plain():
        assert sine(torch.zeros(2)).tolist() == [-1.0, -1.0]
        assert (torch.zeros(2) + 1).tolist() == [1.0, 1.0]


def test_flop_counter_sees_einsum_as_bmm_and_cpu_attention_as_pytorch_does() -> None:
    from torch.utils.flop_counter import FlopCounterMode

    a, b = torch.randn(3, 4), torch.randn(4, 5)
    q = torch.randn(2, 4, 6, 8)
    with FlopCounterMode(display=False) as counter:
        out = torch.einsum("ij,jk->ik", a, b)
        torch.nn.functional.scaled_dot_product_attention(q, q, q)
    assert torch.allclose(out, a @ b, atol=1e-5)
    # einsum is CompositeImplicitAutograd in PyTorch: one bmm of 3x4 @ 4x5; the CPU's
    # attention kernel has no formula in PyTorch's counter
    assert {str(k): v for k, v in counter.get_flop_counts()["Global"].items()} == {
        "aten.bmm": 2 * 3 * 4 * 5}


def test_opcheck_passes_a_correct_custom_op_and_flags_broken_ones() -> None:
    from torch.library import custom_op, opcheck

    @custom_op("h4_subclass_programs::scale_add", mutates_args=())
    def scale_add(x: torch.Tensor, y: torch.Tensor, alpha: float = 2.0) -> torch.Tensor:
        return x * alpha + y

    @scale_add.register_fake
    def _(x: torch.Tensor, y: torch.Tensor, alpha: float = 2.0) -> torch.Tensor:
        return torch.empty_like(x)

    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        ctx.alpha = inputs[2]

    def backward(ctx: Any, grad: torch.Tensor) -> Any:
        return grad * ctx.alpha, grad, None

    scale_add.register_autograd(backward, setup_context=setup_context)
    x = torch.randn(3, requires_grad=True)
    out = scale_add(x, torch.ones(3), 3.0)
    assert out.grad_fn.name() == \
        "GeneratedBackwardFor_h4_subclass_programs_scale_add_defaultBackward"
    assert set(opcheck(scale_add, (x, torch.randn(3))).values()) == {"SUCCESS"}

    @custom_op("h4_subclass_programs::sneaky", mutates_args=())
    def sneaky(x: torch.Tensor) -> torch.Tensor:
        x.add_(1)  # writes an input its schema says it only reads
        return x.clone()

    @sneaky.register_fake
    def _(x: torch.Tensor) -> torch.Tensor:
        return torch.empty(x.shape[0] + 1)  # and a fake of the wrong shape

    results = opcheck(sneaky, (torch.zeros(2),), raise_exception=False,
                      test_utils=("test_schema", "test_faketensor"))
    assert isinstance(results["test_schema"], Exception)
    assert isinstance(results["test_faketensor"], Exception)


def test_deepcopy_and_state_dict_of_a_module_with_a_wrapper_subclass_weight() -> None:
    import copy

    lin, dequantized, _ = _quantized_linear()
    twin = copy.deepcopy(lin)
    assert type(twin.weight) is QuantizedWeight and twin.weight is not lin.weight
    assert isinstance(twin.weight, torch.nn.Parameter)  # the _is_param mark travels
    assert torch.equal(twin.weight.q, lin.weight.q) and twin.weight.q is not lin.weight.q
    x = torch.randn(2, 4)
    assert torch.allclose(twin(x), lin(x))
    fresh = torch.nn.Linear(4, 3)
    fresh.load_state_dict(lin.state_dict(), assign=True)
    assert type(fresh.weight) is QuantizedWeight and isinstance(fresh.weight, torch.nn.Parameter)
    assert torch.allclose(fresh(x), x @ dequantized.t() + lin.bias.detach())
