"""``torch.optim.LBFGS``: limited-memory BFGS with an optional strong-Wolfe line search, as
PyTorch documents it (one parameter group; ``step`` needs a closure that recomputes the loss).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor

from .optimizer import Optimizer

__all__ = ["LBFGS"]

# Line-search objective: (start point, step length, direction) -> (loss, flat gradient).
_Objective = Callable[[list[Tensor], float, Tensor], tuple[float, Tensor]]


def _cubic_minimum(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                   bounds: tuple[float, float] | None = None) -> float:
    """Minimiser of the cubic through ``(x1, f1)``, ``(x2, f2)`` with slopes ``g1``, ``g2``,
    clamped to ``bounds`` (the interval's ends by default); the midpoint when the cubic has
    no real minimiser."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(disc)
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(obj: _Objective, x: list[Tensor], t: float, d: Tensor, f: float, g: Tensor,
                  gtd: float, c1: float = 1e-4, c2: float = 0.9,
                  tolerance_change: float = 1e-9, max_ls: int = 25
                  ) -> tuple[float, Tensor, float, int]:
    """Find a step ``t`` along ``d`` meeting the strong Wolfe conditions (sufficient decrease
    ``f(t) <= f + c1 t gtd`` and curvature ``|g(t).d| <= -c2 gtd``): grow the step by cubic
    extrapolation until an interval brackets an acceptable point, then shrink the bracket by
    safeguarded cubic interpolation ("zoom"). Returns the loss, flat gradient and step there
    and the number of evaluations."""
    d_norm = float(d.abs().max())
    g = g.clone()
    f_new, g_new = obj(x, t, d)
    evals = 1
    gtd_new = float(g_new.dot(d))
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    # Bracketing phase: each entry is [step, loss, gradient, directional derivative].
    bracket: list[list[Any]] = []
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.clone(), gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = [[t, f_new, g_new, gtd_new]]
            done = True
            break
        if gtd_new >= 0:  # the slope turned: a minimiser lies between t_prev and t
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.clone(), gtd_new]]
            break
        # Extrapolate, keeping the new step in [t + 0.01 (t - t_prev), 10 t].
        lo, hi = t + 0.01 * (t - t_prev), t * 10
        t_next = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lo, hi))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.clone(), gtd_new
        t = t_next
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = float(g_new.dot(d))
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [[0.0, f, g, gtd], [t, f_new, g_new, gtd_new]]

    # Zoom phase: ``low`` indexes the bracket end with the lower loss.
    insufficient_progress = False
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1][0] - bracket[0][0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(*bracket[0][:2], bracket[0][3], *bracket[1][:2], bracket[1][3])
        b_lo = min(bracket[0][0], bracket[1][0])
        b_hi = max(bracket[0][0], bracket[1][0])
        margin = 0.1 * (b_hi - b_lo)
        if min(b_hi - t, t - b_lo) < margin:
            # Too close to an end: accept it once, then push it a tenth of the way inside.
            if insufficient_progress or t >= b_hi or t <= b_lo:
                t = b_hi - margin if abs(t - b_hi) < abs(t - b_lo) else b_lo + margin
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = float(g_new.dot(d))
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
            bracket[high] = [t, f_new, g_new.clone(), gtd_new]
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = [t, f_new, g_new.clone(), gtd_new]
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


class LBFGS(Optimizer):
    """L-BFGS (after minFunc), with PyTorch's options and state layout.

    Each :meth:`step` runs up to ``max_iter`` iterations (``max_eval`` closure calls, by
    default ``max_iter * 5 // 4``): the direction comes from the two-loop recursion over the
    last ``history_size`` curvature pairs, the step length is ``lr`` (the first iteration
    scales it by ``min(1, 1 / |g|_1)``) or found by the strong-Wolfe line search. It stops
    early when the largest gradient entry is at most ``tolerance_grad`` or when the step or
    the loss changes by less than ``tolerance_change``. All parameters must sit in one group.
    """

    def __init__(self, params: Iterable[Any], lr: float | Tensor = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]
        self._numel_cache: int | None = None

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    # ------------------------------------------------------------------ flat views

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> Tensor:
        parts = [p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1)
                 for p in self._params]
        return torch.cat(parts, 0)

    def _add_grad(self, step_size: float, direction: Tensor) -> None:
        """``params += step_size * direction`` (``direction`` flat, in parameter order)."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[offset:offset + n].view_as(p), alpha=step_size)
            offset += n
        assert offset == self._numel()

    def _clone_param(self) -> list[Tensor]:
        return [p.clone() for p in self._params]

    def _set_param(self, values: list[Tensor]) -> None:
        for p, v in zip(self._params, values):
            p.copy_(v)

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[Tensor], t: float,
                              d: Tensor) -> tuple[float, Tensor]:
        """Loss and flat gradient at ``x + t d``; the parameters are restored to ``x``."""
        self._add_grad(t, d)
        with torch.enable_grad():
            value = closure()
        loss = float(value)  # outside grad mode, as PyTorch's: float() of it does not warn
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # ------------------------------------------------------------------ step

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; ``closure`` must zero the gradients,
        compute the loss, call ``backward`` and return the loss. Returns the first loss."""
        if closure is None:
            raise RuntimeError("LBFGS requires a closure that reevaluates the model and "
                               "returns the loss")
        with torch.no_grad():
            return self._run(closure)

    def _run(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr = float(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # All state lives with the first parameter, as in PyTorch.
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with torch.enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if float(flat_grad.abs().max()) <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag = state.get("H_diag")
        # A state loaded from PyTorch may hold these scalars as 0-d tensors.
        t = None if t is None else float(t)
        h_diag = None if h_diag is None else float(h_diag)
        ro = None if ro is None else [float(r) for r in ro]
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1.0
            else:
                # Curvature pair of the last step; skipped when it is not positive enough.
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = float(y.dot(s))
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y.dot(y))
                # Two-loop recursion: d = -H g with H the L-BFGS inverse-Hessian estimate.
                num_old = len(old_dirs)
                al: list[float | None] = [None] * history_size
                state["al"] = al
                q = flat_grad.neg()
                for i in range(num_old - 1, -1, -1):
                    al[i] = float(old_stps[i].dot(q)) * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i])
                d = r = q.mul(h_diag)
                for i in range(num_old):
                    be_i = float(old_dirs[i].dot(r)) * ro[i]
                    r.add_(old_stps[i], alpha=al[i] - be_i)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / float(flat_grad.abs().sum())) * lr
            else:
                t = lr
            gtd = float(flat_grad.dot(d))
            if gtd > -tolerance_change:
                break  # not a descent direction

            ls_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def objective(x: list[Tensor], step: float, direction: Tensor
                              ) -> tuple[float, Tensor]:
                    return self._directional_evaluate(closure, x, step, direction)

                loss, flat_grad, t, ls_evals = _strong_wolfe(objective, x_init, t, d, loss,
                                                             flat_grad, gtd)
                self._add_grad(t, d)
                opt_cond = float(flat_grad.abs().max()) <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    # Re-evaluate only when another iteration will use it.
                    with torch.enable_grad():
                        value = closure()
                    loss = float(value)
                    flat_grad = self._gather_flat_grad()
                    opt_cond = float(flat_grad.abs().max()) <= tolerance_grad
                    ls_evals = 1
            current_evals += ls_evals
            state["func_evals"] += ls_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if float(d.mul(t).abs().max()) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update({"d": d, "t": t, "old_dirs": old_dirs, "old_stps": old_stps, "ro": ro,
                      "H_diag": h_diag, "prev_flat_grad": prev_flat_grad,
                      "prev_loss": prev_loss})
        return orig_loss
