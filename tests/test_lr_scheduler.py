"""``torch.optim.lr_scheduler``: every scheduler's learning-rate sequence against the formula
PyTorch documents for it (the schedulers step through their chainable forms, the formulas are
closed forms), momentum cycling, the deprecated ``step(epoch)`` closed forms, the step-order
warnings, state_dict round trips and PyTorch's errors."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable

import pytest

import torch
from torch.optim import SGD, Adam, Optimizer, lr_scheduler as sched

EPOCHS = 25
BASES = (0.1, 0.5)


def make_opt(kind: type[Optimizer] = SGD) -> Optimizer:
    """Two parameter groups with lr 0.1 and 0.5 (SGD with momentum, or Adam)."""
    a = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    extra = {"momentum": 0.9} if kind is SGD else {}
    return kind([{"params": [a]}, {"params": [b], "lr": BASES[1]}], lr=BASES[0], **extra)


def run(scheduler: sched.LRScheduler, epochs: int = EPOCHS) -> list[list[float]]:
    """Learning rates per epoch: the construction-time ones, then after each step."""
    out = [list(scheduler.get_last_lr())]
    for _ in range(epochs):
        scheduler.optimizer.step()
        scheduler.step()
        out.append(list(scheduler.get_last_lr()))
        assert out[-1] == [g["lr"] for g in scheduler.optimizer.param_groups]
    return out


def expect(formula: Callable[[float, int], float], epochs: int = EPOCHS) -> list[list[float]]:
    return [[formula(base, e) for base in BASES] for e in range(epochs + 1)]


def assert_close(got: list[list[float]], want: list[list[float]]) -> None:
    assert len(got) == len(want)
    for e, (g, w) in enumerate(zip(got, want)):
        assert g == pytest.approx(w, rel=1e-12, abs=1e-15), f"epoch {e}"


def cosine(low: float, base: float, t: float, period: float) -> float:
    return low + (base - low) * (1 + math.cos(math.pi * t / period)) / 2


CASES: list[tuple[str, Callable[[Optimizer], sched.LRScheduler],
                  Callable[[float, int], float]]] = [
    ("LambdaLR", lambda o: sched.LambdaLR(o, lambda e: 0.9 ** e + 0.1 * e),
     lambda b, e: b * (0.9 ** e + 0.1 * e)),
    ("MultiplicativeLR", lambda o: sched.MultiplicativeLR(o, lambda e: 0.95),
     lambda b, e: b * 0.95 ** e),
    ("StepLR", lambda o: sched.StepLR(o, step_size=3, gamma=0.5),
     lambda b, e: b * 0.5 ** (e // 3)),
    ("MultiStepLR", lambda o: sched.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3),
     lambda b, e: b * 0.3 ** sum(e >= m for m in (2, 5, 5, 9))),
    ("ConstantLR", lambda o: sched.ConstantLR(o, factor=0.25, total_iters=4),
     lambda b, e: b * (0.25 if e < 4 else 1.0)),
    ("LinearLR", lambda o: sched.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=6),
     lambda b, e: b * (0.2 + 0.7 * min(e, 6) / 6)),
    ("ExponentialLR", lambda o: sched.ExponentialLR(o, gamma=0.8), lambda b, e: b * 0.8 ** e),
    ("PolynomialLR", lambda o: sched.PolynomialLR(o, total_iters=7, power=2.0),
     lambda b, e: b * (1 - min(e, 7) / 7) ** 2),
    ("CosineAnnealingLR", lambda o: sched.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
     lambda b, e: cosine(0.01, b, e, 5)),
]


@pytest.mark.parametrize(("name", "build", "formula"), CASES, ids=[c[0] for c in CASES])
def test_schedule_follows_formula(name: str, build: Callable, formula: Callable) -> None:
    assert_close(run(build(make_opt())), expect(formula))


def test_multiplicative_per_group_lambdas() -> None:
    opt = make_opt()
    got = run(sched.MultiplicativeLR(opt, [lambda e: 0.9, lambda e: 1.0 + 0.01 * e]), 6)
    want = [[BASES[0] * 0.9 ** e, BASES[1] * math.prod(1.0 + 0.01 * k for k in range(1, e + 1))]
            for e in range(7)]
    assert_close(got, want)


def warm_restarts(base: float, epoch: float, t0: int, mult: int, low: float) -> float:
    period, start = t0, 0
    while epoch >= start + period:
        start += period
        period *= mult
    return cosine(low, base, epoch - start, period)


@pytest.mark.parametrize(("t0", "mult", "low"), [(4, 1, 0.0), (3, 2, 0.001), (2, 3, 0.01)])
def test_cosine_warm_restarts(t0: int, mult: int, low: float) -> None:
    got = run(sched.CosineAnnealingWarmRestarts(make_opt(), T_0=t0, T_mult=mult, eta_min=low))
    assert_close(got, expect(lambda b, e: warm_restarts(b, e, t0, mult, low)))


def test_cosine_warm_restarts_fractional_epochs() -> None:
    s = sched.CosineAnnealingWarmRestarts(make_opt(), T_0=3, T_mult=2)
    for epoch in (0.5, 2.5, 4.25, 10.0, 20.5):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s.step(epoch)
        assert s.get_last_lr() == pytest.approx([warm_restarts(b, epoch, 3, 2, 0.0)
                                                 for b in BASES], rel=1e-12)
        assert s.last_epoch == math.floor(epoch)
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
        s.step(-1)


def triangle(e: int, up: int) -> float:
    """The documented triangular wave of CyclicLR with equal half-cycles: 0 -> 1 -> 0."""
    cycle = math.floor(1 + e / (2 * up))
    return max(0.0, 1 - abs(e / up - 2 * cycle + 1))


@pytest.mark.parametrize(("mode", "scale"), [
    ("triangular", lambda e, cycle: 1.0),
    ("triangular2", lambda e, cycle: 1 / 2 ** (cycle - 1)),
    ("exp_range", lambda e, cycle: 0.9 ** e),
])
def test_cyclic_lr_and_momentum(mode: str, scale: Callable[[int, int], float]) -> None:
    opt = make_opt()
    s = sched.CyclicLR(opt, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=3, mode=mode,
                       gamma=0.9, base_momentum=0.7, max_momentum=0.95)
    for e in range(EPOCHS):
        cycle = math.floor(1 + e / 6)
        h = triangle(e, 3) * scale(e, cycle)
        assert s.get_last_lr() == pytest.approx([0.01 + 0.09 * h, 0.01 + 0.19 * h], rel=1e-12)
        for group in opt.param_groups:
            assert group["momentum"] == pytest.approx(0.95 - 0.25 * h, rel=1e-12)
        opt.step()
        s.step()


def test_cyclic_asymmetric_custom_scale_and_beta1() -> None:
    opt = make_opt(Adam)
    s = sched.CyclicLR(opt, 0.01, 0.1, step_size_up=2, step_size_down=4,
                       scale_fn=lambda x: 1.0 / x, scale_mode="cycle")
    for e in range(20):
        cycle = math.floor(1 + e / 6)
        x = e - (cycle - 1) * 6
        h = (x / 2 if x <= 2 else (6 - x) / 4) / cycle
        assert s.get_last_lr() == pytest.approx([0.01 + 0.09 * h] * 2, rel=1e-12)
        assert opt.param_groups[0]["betas"] == pytest.approx((0.9 - 0.1 * h, 0.999))
        opt.step()
        s.step()


def one_cycle(step: int, total: int, top: float, pct: float, cos: bool,
              three: bool) -> tuple[float, float]:
    """The documented 1cycle schedule: (lr, momentum) at ``step``."""
    start, low = top / 25, top / 25 / 1e4

    def anneal(a: float, b: float, frac: float) -> float:
        return b + (a - b) / 2 * (1 + math.cos(math.pi * frac)) if cos else a + (b - a) * frac

    up = pct * total - 1
    if three:
        phases = [(up, start, top, 0.95, 0.85), (2 * pct * total - 2, top, start, 0.85, 0.95),
                  (total - 1, start, low, 0.95, 0.95)]
    else:
        phases = [(up, start, top, 0.95, 0.85), (total - 1, top, low, 0.85, 0.95)]
    begin = 0.0
    for i, (end, lr0, lr1, m0, m1) in enumerate(phases):
        if step <= end or i == len(phases) - 1:
            frac = (step - begin) / (end - begin)
            return anneal(lr0, lr1, frac), anneal(m0, m1, frac)
        begin = end
    raise AssertionError


@pytest.mark.parametrize(("strategy", "three"), [("cos", False), ("linear", False),
                                                 ("cos", True), ("linear", True)])
def test_one_cycle(strategy: str, three: bool) -> None:
    opt = make_opt()
    total = 25
    s = sched.OneCycleLR(opt, max_lr=[1.0, 2.0], total_steps=total, pct_start=0.2,
                         anneal_strategy=strategy, three_phase=three)
    for step in range(total):
        for top, lr, group in zip((1.0, 2.0), s.get_last_lr(), opt.param_groups):
            want_lr, want_m = one_cycle(step, total, top, 0.2, strategy == "cos", three)
            assert lr == pytest.approx(want_lr, rel=1e-12, abs=1e-15)
            assert group["momentum"] == pytest.approx(want_m, rel=1e-12)
        opt.step()
        if step < total - 1:
            s.step()
    s.step()
    with pytest.raises(ValueError, match=re.escape("Tried to step 26 times. The specified "
                                                   "number of total steps is 25")):
        s.step()


def test_one_cycle_epochs_and_beta1() -> None:
    opt = make_opt(Adam)
    s = sched.OneCycleLR(opt, max_lr=0.3, epochs=2, steps_per_epoch=5, cycle_momentum=True)
    assert s.total_steps == 10
    assert opt.param_groups[0]["betas"] == (0.95, 0.999)
    assert opt.param_groups[0]["initial_lr"] == pytest.approx(0.3 / 25)
    assert opt.param_groups[0]["min_lr"] == pytest.approx(0.3 / 25 / 1e4)


def test_sequential_lr() -> None:
    opt = make_opt()
    s = sched.SequentialLR(opt, [sched.LinearLR(opt, 0.1, 1.0, 4), sched.ExponentialLR(opt, 0.9),
                                 sched.StepLR(opt, 2, 0.5)], milestones=[5, 12])

    def formula(b: float, e: int) -> float:
        if e < 5:
            return b * (0.1 + 0.9 * min(e, 4) / 4)
        if e < 12:
            return b * 0.9 ** (e - 5)
        return b * 0.5 ** ((e - 12) // 2)

    assert_close(run(s), expect(formula))


def test_chained_scheduler() -> None:
    opt = make_opt()
    s = sched.ChainedScheduler([sched.ConstantLR(opt, 0.5, 3), sched.ExponentialLR(opt, 0.9)])
    assert_close(run(s), expect(lambda b, e: b * (0.5 if e < 3 else 1.0) * 0.9 ** e))


def test_reduce_on_plateau_min_rel_with_cooldown_and_min_lr() -> None:
    opt = make_opt()
    s = sched.ReduceLROnPlateau(opt, patience=2, cooldown=1, factor=0.5, min_lr=[0.01, 0.2])
    metrics = [5, 4, 4, 4, 4, 4, 3.9999, 4, 4, 4, 4, 4, 4, 4]
    got = []
    for m in metrics:
        s.step(m)
        got.append(s.get_last_lr())
    # 4 improves on 5; three non-improving epochs (3.9999 is within the relative threshold)
    # reduce, the next epoch is cooldown, then the count restarts; min_lr caps group 2.
    want = [[0.1, 0.5]] * 4 + [[0.05, 0.25]] * 4 + [[0.025, 0.2]] * 4 + [[0.0125, 0.2]] * 2
    assert got == [pytest.approx(w, rel=1e-12) for w in want]


def test_reduce_on_plateau_max_abs_and_eps() -> None:
    opt = make_opt()
    s = sched.ReduceLROnPlateau(opt, mode="max", threshold=0.1, threshold_mode="abs",
                                patience=0, eps=0.1)
    got = []
    for m in [1, 1.05, 1.2, 1.25, 1.31, 1.0]:
        s.step(m)
        got.append(s.get_last_lr())
    # 1.05 and 1.25 do not beat the best by 0.1: reductions smaller than eps=0.1 are skipped
    # (0.1 -> 0.01 and later 0.05 -> 0.005), 0.5 -> 0.05 happens.
    assert got == [[0.1, 0.5]] + [[0.1, 0.05]] * 5


def test_tensor_lr_is_filled_in_place() -> None:
    p = torch.zeros(1, requires_grad=True)
    lr = torch.tensor(0.1)
    opt = SGD([p], lr=lr)
    s = sched.StepLR(opt, 1, 0.5)
    opt.step()
    s.step()
    assert opt.param_groups[0]["lr"] is lr
    assert float(lr) == pytest.approx(0.05)


# --------------------------------------------------------------------------- epoch form


@pytest.mark.parametrize(("build", "formula"), [
    (lambda o: sched.StepLR(o, 3, 0.5), lambda b, e: b * 0.5 ** (e // 3)),
    (lambda o: sched.MultiStepLR(o, [2, 6], 0.1), lambda b, e: b * 0.1 ** ((e >= 2) + (e >= 6))),
    (lambda o: sched.ExponentialLR(o, 0.8), lambda b, e: b * 0.8 ** e),
    (lambda o: sched.CosineAnnealingLR(o, 5, 0.01), lambda b, e: cosine(0.01, b, e, 5)),
    (lambda o: sched.LinearLR(o, 0.2, 1.0, 4), lambda b, e: b * (0.2 + 0.8 * min(e, 4) / 4)),
    (lambda o: sched.PolynomialLR(o, 6, 1.5), lambda b, e: b * (1 - min(e, 6) / 6) ** 1.5),
    (lambda o: sched.ConstantLR(o, 0.5, 3), lambda b, e: b * (0.5 if e < 3 else 1.0)),
])
def test_step_with_epoch_uses_closed_form(build: Callable, formula: Callable) -> None:
    opt = make_opt()
    s = build(opt)
    opt.step()
    for epoch in (7, 2, 0, 11, 4):
        with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step"):
            s.step(epoch)
        assert s.get_last_lr() == pytest.approx([formula(b, epoch) for b in BASES], rel=1e-12)


# --------------------------------------------------------------------------- warnings


def test_warns_when_scheduler_steps_before_optimizer() -> None:
    s = sched.StepLR(make_opt(), 2)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before "
                                         "`optimizer.step\\(\\)`"):
        s.step()


def test_no_warning_in_the_right_order() -> None:
    opt = make_opt()
    s = sched.StepLR(opt, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        s.step()
        s.step()


def test_warns_when_optimizer_step_is_replaced() -> None:
    opt = make_opt()
    s = sched.StepLR(opt, 2)
    opt.step = lambda closure=None: None  # type: ignore[method-assign]
    with pytest.warns(UserWarning, match="Seems like `optimizer.step\\(\\)` has been "
                                         "overridden"):
        s.step()


def test_get_lr_outside_step_warns() -> None:
    s = sched.ExponentialLR(make_opt(), 0.5)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()


def test_step_hook_still_runs_with_wrapped_step() -> None:
    opt = make_opt()
    sched.StepLR(opt, 2)
    seen = []
    opt.register_step_post_hook(lambda o, args, kwargs: seen.append(o))
    opt.step()
    assert seen == [opt] and opt._opt_called


# --------------------------------------------------------------------------- state dicts


@pytest.mark.parametrize("build", [
    lambda o: sched.StepLR(o, 3, 0.5),
    lambda o: sched.CosineAnnealingLR(o, 7, 0.01),
    lambda o: sched.CosineAnnealingWarmRestarts(o, 3, 2),
    lambda o: sched.CyclicLR(o, 0.01, 0.1, 3, mode="triangular2"),
    lambda o: sched.OneCycleLR(o, 1.0, total_steps=30),
    lambda o: sched.SequentialLR(o, [sched.ConstantLR(o, 0.5, 2), sched.ExponentialLR(o, 0.9)],
                                 [4]),
    lambda o: sched.ChainedScheduler([sched.LinearLR(o, 0.5, 1.0, 3),
                                      sched.StepLR(o, 2, 0.7)]),
], ids=["step", "cosine", "warm-restarts", "cyclic", "one-cycle", "sequential", "chained"])
def test_state_dict_round_trip(build: Callable) -> None:
    opt = make_opt()
    s = build(opt)
    straight = run(s, 20)
    opt2 = make_opt()
    s2 = build(opt2)
    for _ in range(8):
        opt2.step()
        s2.step()
    saved_opt, saved = opt2.state_dict(), s2.state_dict()
    assert "optimizer" not in saved
    opt3 = make_opt()
    s3 = build(opt3)
    opt3.load_state_dict(saved_opt)
    s3.load_state_dict(saved)
    rest = run(s3, 12)
    assert_close(rest, straight[8:])


def test_lambda_state_dict_keeps_callable_object_state() -> None:
    class Decay:
        def __init__(self, rate: float) -> None:
            self.rate = rate

        def __call__(self, epoch: int) -> float:
            return self.rate ** epoch

    s = sched.LambdaLR(make_opt(), [Decay(0.5), lambda e: 1.0])
    state = s.state_dict()
    assert state["lr_lambdas"] == [{"rate": 0.5}, None]
    other = sched.LambdaLR(make_opt(), [Decay(0.9), lambda e: 1.0])
    other.load_state_dict(state)
    assert other.lr_lambdas[0].rate == 0.5


def test_plateau_state_dict_round_trip() -> None:
    s = sched.ReduceLROnPlateau(make_opt(), mode="max", patience=1)
    for m in (1.0, 0.5, 0.4):
        s.step(m)
    other = sched.ReduceLROnPlateau(make_opt())
    other.load_state_dict(s.state_dict())
    assert (other.mode, other.best, other.num_bad_epochs, other.mode_worse) == \
        ("max", 1.0, 0, -math.inf)


def test_resume_with_last_epoch() -> None:
    opt = make_opt()
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups"):
        sched.StepLR(opt, 2, last_epoch=3)
    for group in opt.param_groups:
        group["initial_lr"] = group["lr"]
    s = sched.StepLR(opt, 2, 0.5, last_epoch=3)
    assert s.last_epoch == 4
    assert s.get_last_lr() == pytest.approx([0.05, 0.25])


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(("build", "error", "message"), [
    (lambda o: sched.StepLR(object(), 2), TypeError, "object is not an Optimizer"),
    (lambda o: sched.LambdaLR(o, [lambda e: 1.0]), ValueError, "Expected 2 lr_lambdas, but got 1"),
    (lambda o: sched.MultiplicativeLR(o, 3), TypeError, "lr_lambda should be a function, but "
                                                        "got int"),
    (lambda o: sched.ConstantLR(o, factor=2), ValueError, "Constant multiplicative factor "
                                                          "expected to be between 0 and 1."),
    (lambda o: sched.LinearLR(o, start_factor=0), ValueError, "Starting multiplicative factor"),
    (lambda o: sched.LinearLR(o, end_factor=2), ValueError, "Ending multiplicative factor"),
    (lambda o: sched.CosineAnnealingWarmRestarts(o, 0), ValueError,
     "Expected positive integer T_0, but got 0"),
    (lambda o: sched.CosineAnnealingWarmRestarts(o, 2, T_mult=0), ValueError,
     "Expected integer T_mult >= 1, but got 0"),
    (lambda o: sched.CyclicLR(o, 0.1, 1.0, mode="bogus"), ValueError,
     "mode is invalid and scale_fn is None"),
    (lambda o: sched.CyclicLR(o, [0.1], 1.0), ValueError,
     "base_lr must have the same length as optimizer.param_groups"),
    (lambda o: sched.OneCycleLR(o, 1.0), ValueError,
     "You must define either total_steps OR"),
    (lambda o: sched.OneCycleLR(o, 1.0, total_steps=0), ValueError,
     "Expected positive integer total_steps, but got 0"),
    (lambda o: sched.OneCycleLR(o, 1.0, total_steps=10, pct_start=2.0), ValueError,
     "Expected float between 0 and 1 pct_start, but got 2.0"),
    (lambda o: sched.OneCycleLR(o, 1.0, total_steps=10, anneal_strategy="cubic"), ValueError,
     "anneal_strategy must be one of 'cos' or 'linear', instead got cubic"),
    (lambda o: sched.ReduceLROnPlateau(o, factor=1.0), ValueError, "Factor should be < 1.0."),
    (lambda o: sched.ReduceLROnPlateau(o, mode="avg"), ValueError, "mode avg is unknown!"),
    (lambda o: sched.ReduceLROnPlateau(o, threshold_mode="x"), ValueError,
     "threshold mode x is unknown!"),
    (lambda o: sched.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError, "expected 2 min_lrs, got 1"),
    (lambda o: sched.SequentialLR(o, [sched.StepLR(o, 2)], [3]), ValueError,
     "Sequential Schedulers expects number of schedulers provided to be one more"),
    (lambda o: sched.SequentialLR(o, [], []), ValueError,
     "SequentialLR expects at least one scheduler, but got no scheduler."),
    (lambda o: sched.ChainedScheduler([sched.ReduceLROnPlateau(o)]), ValueError,
     "ChainedScheduler does not support `ReduceLROnPlateau`"),
    (lambda o: sched.ChainedScheduler([sched.StepLR(o, 2), sched.StepLR(make_opt(), 2)]),
     ValueError, "ChainedScheduler expects all schedulers to belong to the same optimizer"),
])
def test_errors(build: Callable, error: type[Exception], message: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=re.escape(message)):
            build(make_opt())


def test_cycle_momentum_needs_momentum() -> None:
    from torch.optim import Adagrad

    opt = Adagrad([torch.zeros(1, requires_grad=True)])
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        sched.CyclicLR(opt, 0.01, 0.1)
    sched.CyclicLR(opt, 0.01, 0.1, cycle_momentum=False)  # fine without cycling


# --------------------------------------------------------------------------- SWALR


@pytest.mark.parametrize(("swa_lr", "epochs", "strategy"), [
    (0.05, 4, "cos"), ([0.05, 0.3], 3, "linear"), (0.02, 0, "cos")])
def test_swalr_anneals_to_swa_lr(swa_lr: float | list[float], epochs: int,
                                 strategy: str) -> None:
    from torch.optim.swa_utils import SWALR

    targets = swa_lr if isinstance(swa_lr, list) else [swa_lr] * 2

    def alpha(e: int) -> float:
        t = 1.0 if epochs == 0 else min(1.0, e / epochs)
        return (1 - math.cos(math.pi * t)) / 2 if strategy == "cos" else t

    got = run(SWALR(make_opt(), swa_lr, anneal_epochs=epochs, anneal_strategy=strategy), 8)
    want = [[s * alpha(e) + b * (1 - alpha(e)) for s, b in zip(targets, BASES)]
            for e in range(9)]
    assert_close(got, want)


def test_swalr_errors_and_state_dict() -> None:
    from torch.optim.swa_utils import SWALR

    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        SWALR(make_opt(), 0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        SWALR(make_opt(), 0.1, anneal_epochs=-1)
    s = SWALR(make_opt(), 0.1, anneal_strategy="linear")
    state = s.state_dict()
    assert "anneal_func" not in state and state["_anneal_strategy"] == "linear"
    other = SWALR(make_opt(), 0.1)
    other.load_state_dict(state)
    assert other.anneal_func(0.25) == 0.25
