"""torch.compile's replay (issue 15, Measure; docs/compile.md "Replay"): a call whose capture
proved the Python free of effects runs its graph without the Python later, and every program
with a Python side effect, a data-dependent branch or unguarded state keeps running its Python
with eager semantics."""

from __future__ import annotations

import random
import sys
from importlib import import_module

import pytest

import torch
import torch._dynamo
from torch import nn
from torch._dynamo.utils import counters


@pytest.fixture(autouse=True)
def _fresh() -> None:
    torch._dynamo.reset()


def _frame(compiled):
    return compiled.__dict__["_torchdynamo_frame"]


def _calls_of(code, fn, *args):
    """(result, how many times Python frames of ``code`` ran during ``fn(*args)``)."""
    seen = [0]

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is code:
            seen[0] += 1

    sys.setprofile(profile)
    try:
        result = fn(*args)
    finally:
        sys.setprofile(None)
    return result, seen[0]


# -- acceptance -----------------------------------------------------------------------------


def test_a_pure_function_replays_without_running_its_python() -> None:
    def f(x, y):
        return (x * y + 1).relu()

    compiled = torch.compile(f, backend="eager")
    x, y = torch.tensor([1.0, -2.0, 3.0]), torch.tensor([4.0, 5.0, -6.0])
    assert compiled(x, y).tolist() == [5.0, 0.0, 0.0]  # captured (and probed)
    frame = _frame(compiled)
    assert frame.replay_refused is None
    a, b = torch.tensor([2.0, 2.0, 2.0]), torch.tensor([3.0, -1.0, 0.5])
    out, runs = _calls_of(f.__code__, compiled, a, b)
    assert runs == 0 and frame.replay_hits == 1  # the graph ran, the Python did not
    assert type(out) is torch.Tensor and out.tolist() == [7.0, 0.0, 2.0]  # new values used


def test_replay_keeps_results_structure_aliasing_and_in_place_updates() -> None:
    def f(x, y):
        x.add_(1)  # an in-place update of an input: part of the graph
        return {"sum": x + y, "pair": (x, y * 2)}

    compiled = torch.compile(f, backend="eager")
    x, y = torch.zeros(2), torch.ones(2)
    compiled(x, y)
    out = compiled(x, y)
    assert _frame(compiled).replay_hits == 1
    assert x.tolist() == [2.0, 2.0]  # both calls updated it
    assert out["pair"][0] is x and out["sum"].tolist() == [3.0, 3.0]
    assert out["pair"][1].tolist() == [2.0, 2.0]
    # the same tensor twice is other state than two tensors: no replay of the (x, y) graph
    z = torch.ones(2)
    got = compiled(z, z)
    assert got["sum"].tolist() == [4.0, 4.0] and z.tolist() == [2.0, 2.0]


def test_an_nn_module_replays_and_sees_parameter_updates_and_attribute_changes() -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.scale = 2.0

        def forward(self, x):
            return torch.relu(self.fc(x)) * self.scale

    torch.manual_seed(0)
    net = Net()
    compiled = torch.compile(net, backend="eager")
    x = torch.randn(4, 3)
    compiled(x)
    out, runs = _calls_of(Net.forward.__code__, compiled, x)
    frame = _frame(compiled)
    assert runs == 0 and frame.replay_hits == 1
    assert torch.allclose(out, net(x))
    with torch.no_grad():
        net.fc.weight.mul_(-1)  # in place: same tensors, new values
    assert torch.allclose(compiled(x), net(x)) and frame.replay_hits == 2
    net.scale = 5.0  # state the graph baked in: no longer the replayed state
    out, runs = _calls_of(Net.forward.__code__, compiled, x)
    assert runs == 1 and torch.allclose(out, net(x))
    net.fc.weight = nn.Parameter(torch.ones(2, 3))  # a new parameter object
    assert torch.allclose(compiled(x), net(x))


def test_training_flag_and_grad_mode_are_part_of_the_replayed_state() -> None:
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    compiled = torch.compile(model, backend="eager")
    x = torch.ones(8, 4)
    model.eval()
    compiled(x)
    assert torch.equal(compiled(x), model(x))  # replayed, no dropout
    model.train()
    torch.manual_seed(3)
    got = compiled(x)
    torch.manual_seed(3)
    assert torch.equal(got, model(x))  # dropout runs, with eager's random numbers
    with torch.no_grad():
        out = compiled(x)
    assert not out.requires_grad
    assert compiled(x).requires_grad


def test_random_ops_in_the_graph_draw_as_eager_when_replayed() -> None:
    def f(x):
        return x + torch.rand_like(x)

    compiled = torch.compile(f, backend="eager")
    x = torch.zeros(5)
    torch.manual_seed(1)
    got = [compiled(x) for _ in range(3)]
    torch.manual_seed(1)
    want = [f(x) for _ in range(3)]
    assert _frame(compiled).replay_hits == 2
    assert all(torch.equal(a, b) for a, b in zip(got, want))


SCALE = torch.tensor(2.0)
OFFSET = 1.0


def test_globals_and_closure_cells_are_guarded() -> None:
    global SCALE, OFFSET
    bias = torch.tensor(10.0)

    def f(x):
        return x * SCALE + OFFSET + bias

    compiled = torch.compile(f, backend="eager")
    x = torch.ones(2)
    compiled(x)
    assert compiled(x).tolist() == [13.0, 13.0] and _frame(compiled).replay_hits == 1
    saved = SCALE, OFFSET
    try:
        SCALE = torch.tensor(3.0)
        assert compiled(x).tolist() == [14.0, 14.0]
        OFFSET = 0.0
        assert compiled(x).tolist() == [13.0, 13.0]
        bias = torch.tensor(0.0)  # the closure cell now holds another tensor
        assert compiled(x).tolist() == [3.0, 3.0]
    finally:
        SCALE, OFFSET = saved


def test_new_shapes_and_scalar_arguments_make_new_entries() -> None:
    def f(x, n):
        return x.view(n, -1).sum(1)

    compiled = torch.compile(f, backend="eager")
    x = torch.arange(12.0)
    for n in (2, 3, 2, 3):
        assert torch.equal(compiled(x, n), x.view(n, -1).sum(1))
    assert _frame(compiled).replay_hits == 2
    y = torch.arange(6.0)
    assert torch.equal(compiled(y, 2), y.view(2, -1).sum(1))


def test_the_fast_key_of_plain_tensor_calls_sees_what_the_full_key_sees() -> None:
    # a call of distinct contiguous tensors replays by a short key (layouts, offsets,
    # requires_grad, global state); each change below must miss it and give eager's result
    def f(x, y):
        return x * y + 1

    compiled = torch.compile(f, backend="eager")
    x, y = torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([2.0, 2.0, 2.0, 2.0])
    for _ in range(3):
        assert compiled(x, y).tolist() == [3.0, 5.0, 7.0, 9.0]
    frame = _frame(compiled)
    assert frame.replay_fast and frame.replay_hits >= 1
    assert compiled(x, x).tolist() == [2.0, 5.0, 10.0, 17.0]  # aliased arguments
    base = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0])
    assert compiled(base[1:], y).tolist() == [3.0, 5.0, 7.0, 9.0]  # another offset
    with torch.no_grad():
        assert compiled(x, y).grad_fn is None
    w = torch.tensor([1.0, 2.0, 3.0, 4.0]).requires_grad_()
    assert compiled(w, y).requires_grad  # another tensor that needs grad
    x.requires_grad_()  # the same tensor object now needs grad
    out = compiled(x, y)
    assert out.requires_grad and out.grad_fn is not None
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0, 2.0]
    m = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    n = torch.tensor([[1.0, 1.0], [1.0, 1.0]])
    assert compiled(m, n).tolist() == [[2.0, 3.0], [4.0, 5.0]]
    assert compiled(m, n).tolist() == [[2.0, 3.0], [4.0, 5.0]]
    m.t_()  # an in-place view change of an argument replayed before
    assert compiled(m, torch.tensor([[0.0, 1.0], [0.0, 1.0]])).tolist() == [[1.0, 4.0],
                                                                             [1.0, 5.0]]


def test_a_module_imported_during_the_first_call_does_not_stop_replay(tmp_path,
                                                                      monkeypatch) -> None:
    # an import runs once (as eagerly); its module body, finders and the import system are
    # not the call's state, so the next calls still replay
    (tmp_path / "replay_lazy_module.py").write_text("import sys\nLOADED = object()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "replay_lazy_module", raising=False)

    def f(x):
        import_module("replay_lazy_module")
        return x + 1

    compiled = torch.compile(f, backend="eager")
    x = torch.tensor([1.0, 2.0])
    assert compiled(x).tolist() == [2.0, 3.0]
    assert "replay_lazy_module" in sys.modules
    frame = _frame(compiled)
    assert frame.replay_refused is None
    assert compiled(x).tolist() == [2.0, 3.0]
    assert frame.replay_hits == 1


def test_the_fast_path_calls_the_graph_without_the_override_checks_it_rules_out() -> None:
    from torch.overrides import TorchFunctionMode

    def f(x, y):  # (no global read: the fast path's condition)
        z = x.add(y, alpha=2.0)  # a keyword: the call keeps its entry
        return (z * y).clamp(min=-1.0).sum(0), (x - 0.5).relu().shape

    compiled = torch.compile(f, backend="eager")
    x, y = torch.tensor([[1.0, -2.0], [3.0, 4.0]]), torch.tensor([[0.5, 2.0], [-1.0, 1.0]])
    for _ in range(3):
        total, shape = compiled(x, y)
        assert total.tolist() == [0.0, 10.0] and shape == (2, 2)  # by hand: z = x + 2y
    entry = next(iter(_frame(compiled).replay_fast.values()))
    assert entry.fast is not entry.compiled  # the direct graph ran the last calls

    class Count(TorchFunctionMode):
        calls = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            Count.calls += 1
            return func(*args, **(kwargs or {}))

    with Count():  # a mode changes the key: the calls go through the protocol again
        assert compiled(x, y)[0].tolist() == [0.0, 10.0]
    assert Count.calls > 0

    class Marked(torch.Tensor):
        seen = 0

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            Marked.seen += 1
            return super().__torch_function__(func, types, args, kwargs or {})

    marked = x.as_subclass(Marked)
    assert compiled(marked, y)[0].tolist() == [0.0, 10.0]
    assert Marked.seen > 0  # a subclass argument takes the full path and its override


def test_the_fast_path_checks_the_library_globals_a_function_reads(monkeypatch) -> None:
    def f(x, y):
        return torch.relu(x * y) - 1.0

    compiled = torch.compile(f, backend="eager")
    x, y = torch.tensor([1.0, -2.0, 3.0]), torch.tensor([2.0, 2.0, -1.0])
    for _ in range(3):
        assert compiled(x, y).tolist() == [1.0, -1.0, -1.0]
    frame = _frame(compiled)
    entry = next(iter(frame.replay_fast.values()))
    assert ("torch", "relu") in [slot[2] for slot, _ in entry.slot_checks]
    hits = frame.replay_hits
    assert compiled(x, y).tolist() == [1.0, -1.0, -1.0] and frame.replay_hits == hits + 1
    monkeypatch.setattr(torch, "relu", torch.abs)  # the global now names another function
    assert compiled(x, y).tolist() == [1.0, 3.0, 2.0]


def test_replay_can_be_switched_off() -> None:
    with torch._dynamo.config.patch(replay=False):
        compiled = torch.compile(lambda x: x + 1, backend="eager")
        x = torch.ones(2)
        compiled(x)
        compiled(x)
        assert _frame(compiled).replay_hits == 0


# -- refusals: each program keeps its eager behaviour -----------------------------------------

LOG: list[object] = []
COUNT = 0


def _print(x):
    y = x * 2
    print("called")
    return y


def _global_write(x):
    global COUNT
    COUNT += 1
    return x * 2


def _list_append(x):
    y = x * 2
    LOG.append(1)
    return y


class _Holder:
    value = None


HOLDER = _Holder()


def _attribute_write(x):
    y = x * 2
    HOLDER.value = y
    return y


def _python_rng(x):
    return x * random.random()


def _data_branch(x):
    if x.sum() > 0:
        return x * 2
    return x * 3


def _item_read(x):
    return x * x[0].item()


@pytest.mark.parametrize("fn, reason", [
    (_print, "graph"),  # print breaks the graph, as in PyTorch
    (_global_write, "global"),
    (_list_append, "append"),
    (_attribute_write, "attribute"),
    (_python_rng, "random"),
    (_data_branch, "graph"),
    (_item_read, "data"),
])
def test_each_refused_program_keeps_running_its_python(fn, reason, capsys) -> None:
    global COUNT
    LOG.clear()
    COUNT = 0
    compiled = torch.compile(fn, backend="eager")
    calls = 0
    for value in (1.0, 1.0, -1.0, 1.0):
        x = torch.full((3,), value)
        random.seed(5)
        got = compiled(x)
        random.seed(5)
        want = fn(x)
        calls += 2
        assert torch.equal(got, want)
    frame = _frame(compiled)
    assert frame.replay_hits == 0
    assert reason in frame.replay_refused
    assert counters["replay_refused"][frame.replay_refused] == 1  # probed once only
    # the side effect happened at every call, compiled or not
    if fn is _print:
        assert capsys.readouterr().out.count("called") == calls
    elif fn is _global_write:
        assert COUNT == calls
    elif fn is _list_append:
        assert len(LOG) == calls
    elif fn is _attribute_write:
        assert type(HOLDER.value) is torch.Tensor and HOLDER.value.tolist() == [2.0] * 3


def test_a_mutated_argument_container_is_refused() -> None:
    def f(xs):
        xs.pop()  # a list method with an effect: refused; the pop happens at each call
        return xs[0] * 2

    compiled = torch.compile(f, backend="eager")
    for _ in range(2):
        xs = [torch.ones(2), torch.zeros(2)]
        assert compiled(xs).tolist() == [2.0, 2.0] and len(xs) == 1
    assert "pop" in _frame(compiled).replay_refused


def test_an_unknown_object_in_the_state_is_refused() -> None:
    class Config:
        __slots__ = ("scale",)  # no __dict__: the fingerprint cannot see its values

    cfg = Config()
    cfg.scale = 2.0

    def f(x):
        return x * cfg.scale

    compiled = torch.compile(f, backend="eager")
    x = torch.ones(2)
    assert compiled(x).tolist() == [2.0, 2.0]
    cfg.scale = 3.0
    assert compiled(x).tolist() == [3.0, 3.0]
    assert _frame(compiled).replay_hits == 0
    assert "Config" in _frame(compiled).replay_refused


def test_a_torch_generator_is_state_the_graph_uses() -> None:
    gen = torch.Generator()

    def f(x):
        return x + torch.rand(x.shape, generator=gen)

    compiled = torch.compile(f, backend="eager")
    gen.manual_seed(0)
    got = [compiled(torch.zeros(2)) for _ in range(3)]
    gen.manual_seed(0)
    want = [f(torch.zeros(2)) for _ in range(3)]
    assert all(torch.equal(a, b) for a, b in zip(got, want))
    assert _frame(compiled).replay_hits == 2  # the replayed graph draws from the generator


def test_attributes_read_off_modules_are_guarded(monkeypatch) -> None:
    def f(x):
        return torch.nn.functional.relu(x) + 1

    compiled = torch.compile(f, backend="eager")
    x = torch.tensor([-1.0, 2.0])
    compiled(x)
    assert compiled(x).tolist() == [1.0, 3.0] and _frame(compiled).replay_hits == 1
    monkeypatch.setattr(torch.nn.functional, "relu", lambda t: t * 10)
    assert compiled(x).tolist() == [-9.0, 21.0]  # the new function: not the replayed graph


def test_a_global_module_hook_or_a_mode_stops_replay() -> None:
    from torch.nn.modules.module import register_module_forward_hook
    from torch.overrides import TorchFunctionMode

    model = nn.Linear(2, 2)
    compiled = torch.compile(model, backend="eager")
    x = torch.ones(1, 2)
    compiled(x)
    compiled(x)
    assert _frame(compiled).replay_hits == 1
    seen = []
    handle = register_module_forward_hook(lambda mod, args, out: seen.append(type(mod)))
    try:
        compiled(x)
    finally:
        handle.remove()
    assert seen == [nn.Linear] and _frame(compiled).replay_hits == 1

    class Count(TorchFunctionMode):
        calls = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            Count.calls += 1
            return func(*args, **(kwargs or {}))

    with Count():
        compiled(x)
    assert Count.calls > 0 and _frame(compiled).replay_hits == 1
    compiled(x)
    assert _frame(compiled).replay_hits == 2


def test_a_rebound_class_attribute_is_seen() -> None:
    class Scaled(nn.Module):
        factor = 2.0

        def forward(self, x):
            return x * self.factor

    model = Scaled()
    compiled = torch.compile(model, backend="eager")
    x = torch.ones(2)
    compiled(x)
    assert compiled(x).tolist() == [2.0, 2.0] and _frame(compiled).replay_hits == 1
    Scaled.factor = 5.0
    assert compiled(x).tolist() == [5.0, 5.0]


def test_identity_and_imports_of_the_program_s_modules_are_refused(tmp_path, monkeypatch) -> None:
    (tmp_path / "h51_settings.py").write_text("SCALE = 2.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def scaled(x):
        import h51_settings

        return x * h51_settings.SCALE

    def keyed(x):
        return x + (id(x) % 7)

    compiled = torch.compile(scaled, backend="eager")
    x = torch.ones(2)
    assert compiled(x).tolist() == [2.0, 2.0]
    import h51_settings

    h51_settings.SCALE = 3.0
    assert compiled(x).tolist() == [3.0, 3.0]
    assert "imports h51_settings" in _frame(compiled).replay_refused
    compiled = torch.compile(keyed, backend="eager")
    for _ in range(2):
        y = torch.zeros(1)
        assert compiled(y).tolist() == [float(id(y) % 7)]
    assert "id" in _frame(compiled).replay_refused


def test_a_module_hook_with_an_effect_keeps_running() -> None:
    model = nn.Linear(2, 2)
    calls = []
    model.register_forward_hook(lambda mod, args, out: calls.append(1))
    compiled = torch.compile(model, backend="eager")
    x = torch.ones(1, 2)
    for _ in range(3):
        assert torch.allclose(compiled(x), model.forward(x))
    assert len(calls) == 3 and _frame(compiled).replay_hits == 0
    assert "append" in _frame(compiled).replay_refused


def test_a_pure_module_hook_replays_and_a_new_hook_is_seen() -> None:
    model = nn.Linear(2, 2)
    model.register_forward_hook(lambda mod, args, out: out * 2)
    compiled = torch.compile(model, backend="eager")
    x = torch.ones(1, 2)
    compiled(x)
    assert torch.allclose(compiled(x), model.forward(x) * 2)
    assert _frame(compiled).replay_hits == 1
    model.register_forward_hook(lambda mod, args, out: out + 1)
    assert torch.allclose(compiled(x), model.forward(x) * 2 + 1)


def test_a_profiler_the_program_installs_stays_installed() -> None:
    events = []

    def profiler(frame, event, arg):
        events.append(event)

    def f(x):
        sys.setprofile(profiler)  # state replay cannot guard (module sys): refused
        return x + 1

    compiled = torch.compile(f, backend="eager")
    try:
        compiled(torch.ones(1))
        assert sys.getprofile() is profiler
    finally:
        sys.setprofile(None)
    assert events and "sys" in _frame(compiled).replay_refused
