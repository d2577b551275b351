"""torch.compile on programs written for PyTorch, second round: slice bounds that change,
backends that hand graphs on, torch.fx as libraries use it, training loops from tutorials.
Each test is a small program as users write it, run compiled and compared with the same code
run eagerly or with math done by hand."""

from __future__ import annotations

import pytest

import torch
import torch._dynamo

BACKENDS = ["eager", "aot_eager", "inductor"]


@pytest.fixture(autouse=True)
def _fresh_caches():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


# -- an int argument used as a slice bound ---------------------------------------------------


def _window(x, n):
    return x[:n] * 2, x[n:].sum(0), x[1:n + 1].exp(), x[:, :n].sin()


@pytest.mark.parametrize("backend", BACKENDS)
def test_slice_bound_becomes_an_input_after_it_changes(backend):
    # PyTorch: static at the first value, symbolic (an int input) after the second: one
    # recompile, not one per value
    from torch._dynamo.testing import CompileCounterWithBackend

    counter = CompileCounterWithBackend(backend)
    compiled = torch.compile(_window, backend=counter)
    torch.manual_seed(0)
    for n in (2, 3, 4, 5, 6):
        x = torch.randn(8, 7, requires_grad=True)
        got = compiled(x, n)
        sum(g.sum() for g in got).backward()
        got_grad, x.grad = x.grad, None
        want = _window(x, n)
        sum(w.sum() for w in want).backward()
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w)
        torch.testing.assert_close(got_grad, x.grad)
    assert counter.frame_count == 2


def test_slice_bound_input_is_named_and_symbolic_for_a_programs_backend():
    seen = []

    def backend(gm, example_inputs):
        seen.append(([n.name for n in gm.graph.nodes if n.op == "placeholder"],
                     [type(e).__name__ for e in example_inputs]))
        return gm.forward

    compiled = torch.compile(lambda x, n: x[:n] + 1, backend=backend)
    for n in (1, 2, 3, 2):
        assert compiled(torch.zeros(5), n).tolist() == [1.0] * n
    # n = 1 is specialised (as PyTorch specialises 0 and 1), 2 too at first, then 3 and
    # back to 2 share the graph taking n
    assert seen == [(["l_x_"], ["Tensor"]), (["l_x_"], ["Tensor"]),
                    (["l_x_", "l_n_"], ["Tensor", "SymInt"])]


def test_slice_bound_that_turns_negative_recompiles_and_stays_right(capsys):
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()
    compiled = torch.compile(lambda x, n: x[n:] * 3, backend=counter)
    x = torch.arange(6.0)
    torch._logging.set_logs(recompiles=True)
    try:
        for n in (2, 3, 4, -2, -3, 5):
            torch.testing.assert_close(compiled(x, n), x[n:] * 3)
    finally:
        torch._logging.set_logs()
    assert counter.frame_count == 3  # n = 2; n >= 2 as an input; n < 0 as an input
    text = capsys.readouterr().err
    assert "expected an int >= 2, got a negative int" in text


def test_lookup_backend_gives_a_callable_to_hand_a_graph_on():
    from torch._dynamo import lookup_backend

    calls = []

    def logging_backend(gm, example_inputs):
        calls.append(len(example_inputs))
        return lookup_backend("aot_eager")(gm, example_inputs)

    w = torch.tensor([1.0, 2.0], requires_grad=True)
    compiled = torch.compile(lambda x: (x * w).sin().sum(), backend=logging_backend)
    loss = compiled(torch.tensor([0.5, 0.25]))
    loss.backward()
    # d/dw sum(sin(x * w)) = x cos(x * w)
    x = torch.tensor([0.5, 0.25])
    torch.testing.assert_close(w.grad, x * torch.cos(x * torch.tensor([1.0, 2.0])))
    assert calls == [2]
    with pytest.raises(torch._dynamo.exc.InvalidBackend):
        lookup_backend("no_such_backend")
