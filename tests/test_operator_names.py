"""An operator overload names itself as PyTorch's OpOverload does: dispatch modes, flop counters
and memory trackers written for PyTorch print ``func``, call ``func.name()`` and read
``func._schema``, ``func._overloadname`` and ``func._opname``."""

import pytest

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# (attribute path, str, name(), _opname, _overloadname) as PyTorch documents them
CASES = [
    (("add", "Tensor"), "aten.add.Tensor", "aten::add.Tensor", "add", "Tensor"),
    (("relu", "default"), "aten.relu.default", "aten::relu", "relu", "default"),
    (("mean", "dim"), "aten.mean.dim", "aten::mean.dim", "mean", "dim"),
    (("mm", "default"), "aten.mm.default", "aten::mm", "mm", "default"),
]


@pytest.mark.parametrize(("path", "text", "qualified", "opname", "overload"), CASES)
def test_an_overload_names_itself_as_in_pytorch(path, text, qualified, opname, overload):
    op = getattr(getattr(torch.ops.aten, path[0]), path[1])
    assert str(op) == text
    assert repr(op) == f"<OpOverload(op='aten.{opname}', overload='{overload}')>"
    assert op.name() == qualified
    assert (op._opname, op._overloadname) == (opname, overload)
    assert op._schema._schema is op.schema and str(op._schema) == f"aten::{op.schema}"
    assert op.overloadpacket is getattr(torch.ops.aten, opname)


def test_a_dispatch_mode_sees_printable_names():
    seen = []

    class Names(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((str(func), func.name(), func._schema.arguments[0].name))
            return func(*args, **(kwargs or {}))

    with Names():
        torch.ones(3).relu()
    assert ("aten.relu.default", "aten::relu", "self") in seen


def test_the_plain_name_is_still_a_string_key():
    op = torch.ops.aten.add.Tensor
    assert op.name == "add.Tensor"
    assert {op.name: 1}["add.Tensor"] == 1
    assert op.__name__ == "add.Tensor"


def test_an_operator_plait_lacks_names_itself_too():
    op = torch.ops.aten._pin_memory.default
    assert str(op) == "aten._pin_memory.default"
    assert op.name() == "aten::_pin_memory"
    with pytest.raises(NotImplementedError, match="aten::_pin_memory is an operator of PyTorch"):
        op(torch.ones(1))
