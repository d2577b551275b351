"""Fit y = w*x + b by gradient descent on Plait tensors with autograd, and plot the result.

The loss is the mean squared error; ``loss.backward()`` computes dL/dw and dL/db, and the
update runs under ``torch.no_grad()``. The nn-based demo (a network trained with torch.nn and
torch.optim) replaces this once plait-nn has its modules.
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np

import torch


def make_data(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, n).astype(np.float32)
    y = 3.0 * x - 2.0 + rng.normal(0.0, 0.5, n).astype(np.float32)
    return torch.tensor(x), torch.tensor(y)


def train(x: torch.Tensor, y: torch.Tensor, steps: int, lr: float) -> tuple[float, float, list]:
    w = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for step in range(1, steps + 1):
        loss = ((x * w + b - y) ** 2).mean()  # (N,) residuals, squared and averaged
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        w.grad = None
        b.grad = None
        losses.append(loss.item())
        if step == 1 or step % 10 == 0:
            print(f"step {step:4d}/{steps}  loss {losses[-1]:8.4f}  w {w.item():+.4f}  "
                  f"b {b.item():+.4f}", flush=True)
    return w.item(), b.item(), losses


def plot(x: torch.Tensor, y: torch.Tensor, w: float, b: float, losses: list,
         out: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    xs, ys = x.numpy(), y.numpy()
    ax1.scatter(xs, ys, s=8, alpha=0.5, label="data")
    line = np.array([xs.min(), xs.max()])
    sign = "-" if b < 0 else "+"
    ax1.plot(line, w * line + b, color="C3", label=f"fit: y = {w:.2f}x {sign} {abs(b):.2f}")
    ax1.plot(line, 3 * line - 2, "k--", lw=1, label="truth: y = 3x - 2")
    ax1.set_title("Linear regression on Plait tensors")
    ax1.legend()
    ax2.plot(range(1, len(losses) + 1), losses)
    ax2.set_yscale("log")
    ax2.set_xlabel("step")
    ax2.set_ylabel("mean squared error")
    ax2.set_title("Training loss")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--out", type=pathlib.Path,
                        default=pathlib.Path("demo-output/regression.png"))
    args = parser.parse_args()
    x, y = make_data(512, seed=0)
    t0 = time.perf_counter()
    w, b, losses = train(x, y, args.steps, args.lr)
    print(f"trained in {time.perf_counter() - t0:.2f} s: w = {w:.3f} (true 3), "
          f"b = {b:.3f} (true -2), final loss {losses[-1]:.4f}")
    plot(x, y, w, b, losses, args.out)
    print(f"plot written to {args.out}")


if __name__ == "__main__":
    main()
