"""Tensor subclasses, ``__torch_function__`` (``torch.overrides``) and ``__torch_dispatch__``
(``torch.utils._python_dispatch``), as PyTorch has them."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
from typing import Any

import pytest

import torch
import torch.nn as nn
from torch.overrides import (
    TorchFunctionMode,
    get_default_nowrap_functions,
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
    is_tensor_like,
)
from torch.utils._python_dispatch import (
    TorchDispatchMode,
    _get_current_dispatch_mode,
    _pop_mode_temporarily,
)


class Sub(torch.Tensor):
    """A subclass that keeps the default ``__torch_function__``."""


# -- making subclass instances ----------------------------------------------------------------


def test_as_subclass_aliases_and_stays_in_the_graph() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.as_subclass(Sub)
    assert type(y) is Sub and y.data_ptr() == x.data_ptr()
    (y * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    with pytest.raises(TypeError, match="subclass of Tensor"):
        x.as_subclass(int)


def test_make_subclass_is_a_leaf_sharing_memory_and_version() -> None:
    data = torch.zeros(3)
    p = torch.Tensor._make_subclass(Sub, data, True)
    assert type(p) is Sub and p.is_leaf and p.requires_grad
    data.add_(1)  # one memory, one version counter
    assert p.tolist() == [1.0, 1.0, 1.0] and p._version == data._version
    assert not torch.Tensor._make_subclass(Sub, data).requires_grad


def test_make_wrapper_subclass_has_metadata_and_no_memory() -> None:
    w = torch.Tensor._make_wrapper_subclass(Sub, (2, 3), dtype=torch.float64,
                                             device="cpu", requires_grad=True)
    assert type(w) is Sub and w.shape == (2, 3) and w.stride() == (3, 1)
    assert w.dtype is torch.float64 and w.device.type == "cpu" and w.requires_grad
    assert w.untyped_storage().device.type == "meta"
    strided = torch.Tensor._make_wrapper_subclass(Sub, [2, 3], strides=(1, 2))
    assert strided.stride() == (1, 2) and strided.dtype is torch.float32


# -- subclasses survive ops (the default __torch_function__) -------------------------------


def test_results_of_ops_on_a_subclass_are_the_subclass() -> None:
    a = torch.tensor([[1.0, -2.0], [3.0, 4.0]]).as_subclass(Sub)
    plain = torch.ones(2, 2)
    results = [a + 1, plain * a, torch.add(a, plain), a.sum(), a.abs(), a[0], a.t(),
               a.view(4), torch.cat([plain, a]), a @ plain]
    assert all(type(r) is Sub for r in results), [type(r).__name__ for r in results]
    values, indices = a.max(dim=1)
    assert type(values) is Sub and type(indices) is Sub
    assert (a + 1).tolist() == [[2.0, -1.0], [4.0, 5.0]]
    assert type(a.tolist()) is list and a.shape == (2, 2)  # non-tensor results as they are


def test_a_subclass_keeps_its_fields_and_in_place_ops_return_self() -> None:
    a = torch.ones(2).as_subclass(Sub)
    assert a.add_(1) is a and type(a) is Sub and a.tolist() == [2.0, 2.0]


def test_parameter_is_a_subclass_whose_ops_give_plain_tensors() -> None:
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    assert isinstance(p, torch.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    assert repr(p).startswith("Parameter containing:\ntensor([1., 2.]")
    assert type(p * 2) is torch.Tensor and type(p.detach()) is torch.Tensor
    clone = copy.deepcopy(p)
    assert type(clone) is nn.Parameter and clone.tolist() == [1.0, 2.0]
    assert clone.data_ptr() != p.data_ptr()
    loaded = pickle.loads(pickle.dumps(p))
    assert type(loaded) is nn.Parameter and loaded.requires_grad
    frozen = nn.Parameter(torch.ones(1), requires_grad=False)
    assert not pickle.loads(pickle.dumps(frozen)).requires_grad


# -- overriding __torch_function__ ----------------------------------------------------------


class Logged(torch.Tensor):
    calls: list[Any] = []

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        cls.calls.append(func)
        return super().__torch_function__(func, types, args, kwargs)


def test_an_override_sees_the_public_function_or_method() -> None:
    Logged.calls.clear()
    x = torch.ones(2).as_subclass(Logged)
    Logged.calls.clear()
    torch.add(x, 1)
    x.mul(2)
    x + x
    assert Logged.calls == [torch.add, torch.Tensor.mul, torch.Tensor.__add__]
    assert type(torch.add(x, 1)) is Logged


class TensorLike:
    """Not a Tensor: takes part through ``__torch_function__`` alone."""

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        return ("handled", func.__name__, types)


def test_a_tensor_like_receives_calls() -> None:
    assert torch.add(TensorLike(), 1) == ("handled", "add", (TensorLike,))
    assert torch.cat([torch.ones(1), TensorLike()]) == ("handled", "cat", (TensorLike,))
    assert is_tensor_like(TensorLike()) and is_tensor_like(torch.ones(1))
    assert not is_tensor_like(1.0)


def test_has_torch_function_and_handle_torch_function() -> None:
    plain, sub = torch.ones(1), torch.ones(1).as_subclass(Sub)
    assert not has_torch_function((plain, 1)) and has_torch_function((plain, sub))
    assert has_torch_function([TensorLike()])
    assert has_torch_function_unary(sub) and not has_torch_function_unary(plain)
    assert has_torch_function_variadic(plain, sub)
    assert not has_torch_function_variadic(plain, nn.Parameter(torch.ones(1)))

    def double(x: Any) -> Any:
        if has_torch_function_unary(x):
            return handle_torch_function(double, (x,), x)
        return x * 2

    assert double(TensorLike()) == ("handled", "double", (TensorLike,))
    assert type(double(sub)) is Sub and double(sub).tolist() == [2.0]


def test_overridable_functions_list_the_namespaces() -> None:
    table = torch.overrides.get_overridable_functions()
    assert torch.add in table[torch] and torch.Tensor.add in table[torch.Tensor]
    assert torch.Tensor.__add__ in table[torch.Tensor]
    assert torch.overrides.is_tensor_method_or_property(torch.Tensor.add)
    assert not torch.overrides.is_tensor_method_or_property(torch.add)


def test_not_implemented_everywhere_is_a_type_error() -> None:
    class Refuses(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            return NotImplemented

    r = torch.ones(1).as_subclass(Refuses)
    with pytest.raises(TypeError, match="no implementation found for 'add'"):
        torch.add(r, 1)


def test_default_nowrap_functions_and_disabled_dispatch() -> None:
    nowrap = get_default_nowrap_functions()
    assert torch.Tensor._base.__get__ in nowrap and torch.Tensor.grad.__get__ in nowrap
    sub = torch.ones(2).as_subclass(Sub)
    with torch._C.DisableTorchFunctionSubclass():
        assert type(sub + 1) is torch.Tensor
    assert type(sub + 1) is Sub


# -- TorchFunctionMode ----------------------------------------------------------------------


class FunctionRecorder(TorchFunctionMode):
    def __init__(self, tag: str, log: list[str]) -> None:
        self.tag, self.log = tag, log

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        self.log.append(f"{self.tag}:{func.__name__}")
        return func(*args, **(kwargs or {}))


def test_function_modes_see_calls_innermost_first() -> None:
    log: list[str] = []
    with FunctionRecorder("outer", log), FunctionRecorder("inner", log) as inner:
        assert torch.overrides._get_current_function_mode() is inner
        out = torch.sub(torch.ones(2), 1)
    assert out.tolist() == [0.0, 0.0]
    # each mode sees a call once: the inner handler's func(...) reaches the outer mode
    assert log == ["inner:ones", "outer:ones", "inner:sub", "outer:sub"]
    assert torch.overrides._get_current_function_mode() is None
    log.clear()
    torch.sub(torch.ones(2), 1)
    assert log == []


# -- __torch_dispatch__ ---------------------------------------------------------------------


class OpRecorder(TorchDispatchMode):
    def __init__(self) -> None:
        self.ops: list[Any] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


def test_a_dispatch_mode_sees_aten_overloads_below_autograd() -> None:
    x = torch.ones(3, requires_grad=True)
    with OpRecorder() as rec:
        assert _get_current_dispatch_mode() is rec
        y = (x * 2).sum()
        y.backward()
    assert _get_current_dispatch_mode() is None
    assert rec.ops[:2] == [torch.ops.aten.mul.Tensor, torch.ops.aten.sum.default]
    assert torch.ops.aten.expand.default in rec.ops  # the backward ran through the mode
    assert y.grad_fn is not None and x.grad.tolist() == [2.0, 2.0, 2.0]


def test_dispatch_modes_nest_and_pop_temporarily() -> None:
    outer, inner = OpRecorder(), OpRecorder()
    a = torch.ones(2)
    with outer, inner:
        a + a
        with _pop_mode_temporarily() as popped:
            assert popped is inner and _get_current_dispatch_mode() is outer
            a - a
        assert _get_current_dispatch_mode() is inner
    assert inner.ops == [torch.ops.aten.add.Tensor]
    assert outer.ops == [torch.ops.aten.add.Tensor, torch.ops.aten.sub.Tensor]


def test_leaving_dispatch_modes_out_of_order_raises() -> None:
    first, second = OpRecorder(), OpRecorder()
    first.__enter__()
    second.__enter__()
    try:
        with pytest.raises(RuntimeError, match="out of order"):
            first.__exit__(None, None, None)
    finally:
        second.__exit__(None, None, None)
        first.__exit__(None, None, None)
    assert _get_current_dispatch_mode() is None


class Wrapper(torch.Tensor):
    """Holds a real tensor in ``elem``; computes by unwrapping and rewrapping."""

    __torch_function__ = torch._C._disabled_torch_function_impl
    seen: list[Any] = []

    @staticmethod
    def __new__(cls, elem: torch.Tensor) -> Wrapper:
        shell = torch.Tensor._make_wrapper_subclass(
            cls, elem.shape, strides=elem.stride(), dtype=elem.dtype, device=elem.device,
            requires_grad=elem.requires_grad)
        shell.elem = elem
        return shell

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        cls.seen.append((func, types))

        def unwrap(x: Any) -> Any:
            return x.elem if isinstance(x, Wrapper) else x

        out = func(*[unwrap(a) for a in args],
                   **{k: unwrap(v) for k, v in (kwargs or {}).items()})
        if isinstance(out, torch.Tensor):
            return Wrapper(out)
        if isinstance(out, tuple):
            return tuple(Wrapper(o) if isinstance(o, torch.Tensor) else o for o in out)
        return out


def test_a_wrapper_subclass_unwraps_and_rewraps() -> None:
    Wrapper.seen.clear()
    w = Wrapper(torch.tensor([1.0, -2.0, 3.0]))
    total = (w * 2 + torch.ones(3)).sum()
    assert type(total) is Wrapper and total.elem.item() == 7.0  # (2 - 4 + 6) + 3
    assert [f for f, _ in Wrapper.seen] == [torch.ops.aten.mul.Tensor,
                                            torch.ops.aten.add.Tensor,
                                            torch.ops.aten.sum.default]
    assert all(types == (Wrapper,) for _, types in Wrapper.seen)
    assert w.abs().elem.tolist() == [1.0, 2.0, 3.0]
    assert type(w.view(3, 1)) is Wrapper


def test_a_wrapper_subclass_under_autograd() -> None:
    w = Wrapper(torch.tensor([1.0, 2.0], requires_grad=True))
    assert w.requires_grad and w.is_leaf
    (w * w).sum().backward()
    assert type(w.grad) is Wrapper and w.grad.elem.tolist() == [2.0, 4.0]


# -- the hot path pays nothing until the protocol can matter ----------------------------------


def test_entry_checks_are_installed_only_when_needed() -> None:
    script = (
        "import torch, torch._torch_function as tf\n"
        "add, method = torch.add, torch.Tensor.add\n"
        "class Opted(torch.Tensor):\n"
        "    __torch_function__ = torch._C._disabled_torch_function_impl\n"
        "import torch.nn\n"
        "assert not tf._possible.on and method not in tf.originals and add in tf.originals\n"
        "assert torch.add is add and torch.Tensor.add is method\n"
        "class Kept(torch.Tensor):\n"
        "    pass\n"
        "assert tf._possible.on and torch.add is add\n"
        "assert tf.originals[torch.Tensor.add] is method\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_function_identity_is_stable_and_late_namespaces_take_part() -> None:
    # A fresh process: nothing has defined an override yet when the functions are captured,
    # and torch.nn.functional is loaded only after the subclass exists.
    script = """
import sys
import torch
import torch.linalg
assert "torch.nn.functional" not in sys.modules and "torch.overrides" not in sys.modules
mv, norm = torch.mv, torch.linalg.norm

class Seen(torch.Tensor):
    calls = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func)
        return super().__torch_function__(func, types, args, kwargs or {})

import torch.nn.functional as F
relu = F.relu
assert torch.mv is mv and torch.linalg.norm is norm, "identity changed"
import torch.overrides
assert torch.mv is mv and torch.linalg.norm is norm and F.relu is relu, "identity changed"
x = torch.tensor([-1.0, 2.0]).as_subclass(Seen)
out = F.relu(x)
assert F.relu in Seen.calls, Seen.calls
assert type(out) is Seen and out.tolist() == [0.0, 2.0]
Seen.calls.clear()
torch.linalg.norm(x)
assert torch.linalg.norm in Seen.calls, Seen.calls
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


class _Tagged(torch.Tensor):
    pass


def test_a_subclass_survives_plain_pickle_with_its_attributes():
    import pickle

    t = torch.arange(3.0).as_subclass(_Tagged)
    t.tag = "kept"
    t.requires_grad_()
    (t * 2).sum().backward()  # a leaf that has been through autograd pickles too
    back = pickle.loads(pickle.dumps(t))
    assert type(back) is _Tagged and back.tag == "kept" and back.requires_grad
    assert back.tolist() == [0.0, 1.0, 2.0] and back.grad is None


def test_as_subclass_to_tensor_gives_a_plain_tensor():
    t = torch.ones(2).as_subclass(_Tagged)
    assert type(t.as_subclass(torch.Tensor)) is torch.Tensor
    assert type(t * 2) is _Tagged


def test_a_subclass_repr_names_its_class():
    t = torch.ones(2, 2).as_subclass(_Tagged)
    assert repr(t) == "_Tagged([[1., 1.],\n         [1., 1.]])"
    assert repr(torch.ones(2)) == "tensor([1., 1.])"


def test_methods_a_library_patches_onto_tensor_skip_the_protocol():
    """fastai patches plain functions onto torch.Tensor (set_meta) and calls them on its
    subclasses, whose __torch_function__ only knows torch's own functions: as in PyTorch, a
    patched method is called directly, never routed through an override."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import torch

        def set_meta(self, source):
            self.__dict__ = dict(source.__dict__)
            return "patched"

        torch.Tensor.set_meta = set_meta  # before any override exists, as fastai does
        seen = []

        class Tagged(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(getattr(func, "__name__", func))
                return super().__torch_function__(func, types, args, kwargs or {})

        t = torch.ones(2).as_subclass(Tagged)
        src = torch.zeros(1)
        src.tag = "x"
        assert t.set_meta(src) == "patched" and t.tag == "x"
        assert "set_meta" not in seen, seen
        t.add(1)  # torch's own methods still consult the override
        assert "add" in seen, seen
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
