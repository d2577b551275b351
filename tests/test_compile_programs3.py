"""torch.compile on programs written for PyTorch, third round: the compiler's stance, copies
of GraphModules, and programs from training loops (optimizers, schedulers, autocast,
checkpointing, buffers, hooks, structured arguments, torch.export). Each test is a small
program as users write it, run compiled and compared with the same code run eagerly or with
math done by hand."""

from __future__ import annotations

import copy
import pickle

import pytest

import torch
import torch._dynamo
import torch.fx as fx
from torch import nn
from torch._dynamo.testing import CompileCounter

# -- torch.compiler.set_stance ------------------------------------------------------------------

def test_unknown_stance_is_refused_by_the_next_compiled_call_as_pytorch_does() -> None:
    f = torch.compile(lambda x: x + 1, backend="eager")
    stance = torch.compiler.set_stance("bogus")  # accepted here, as in PyTorch 2.13
    try:
        with pytest.raises(RuntimeError, match=r"invalid torch.compile stance .*'bogus'"):
            f(torch.ones(2))
        assert (lambda x: x + 1)(torch.ones(2)).tolist() == [2.0, 2.0]  # eager code runs
    finally:
        with stance:  # leaving the block puts back the stance set_stance found
            pass
    assert f(torch.ones(2)).tolist() == [2.0, 2.0]


def test_eager_then_compile_runs_the_first_call_eagerly() -> None:
    counter = CompileCounter()
    f = torch.compile(lambda x: x.sin() * 2, backend=counter)
    x = torch.linspace(-1, 1, 5)
    with torch.compiler.set_stance("eager_then_compile"):
        first = f(x)
        assert counter.frame_count == 0
        second = f(x)
        assert counter.frame_count == 1
    expected = x.sin() * 2
    torch.testing.assert_close(first, expected)
    torch.testing.assert_close(second, expected)


# -- copies and pickles of a GraphModule --------------------------------------------------------

class _Scale(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.relu() + 1


@pytest.mark.parametrize("make_copy", [lambda g: pickle.loads(pickle.dumps(g)), copy.deepcopy,
                                       copy.copy], ids=["pickle", "deepcopy", "copy"])
def test_copies_of_a_traced_module_are_plain_graph_modules(make_copy) -> None:
    gm = fx.symbolic_trace(_Scale())
    assert type(gm).__name__ == "_Scale"  # the traced class's name on the original only
    dup = make_copy(gm)
    assert type(dup).__name__ == "GraphModule"
    assert type(dup).__qualname__ == "GraphModule.__new__.<locals>.GraphModuleImpl"
    assert dup(torch.tensor([-1.0, 2.0])).tolist() == [1.0, 3.0]
