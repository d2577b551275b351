"""Per-sample gradients with ``torch.func``, used for DP-SGD on a small CNN.

A plain PyTorch script. The model is a small CNN (``Conv2d``/``ReLU``/``MaxPool2d``/``Linear``)
on synthetic 8x8 images of stripes in four orientations (seeded, no download). Every step it
computes the gradient of the loss of each example of the batch separately,

    per_sample = vmap(grad(loss), in_dims=(None, None, 0, 0))(params, buffers, x, y)

where ``loss`` calls the model through ``torch.func.functional_call``; first it checks those
gradients against a loop of ordinary ``backward()`` passes, one example at a time. Then it
trains with DP-SGD (Abadi et al., 2016): each example's gradient is clipped to norm
``--clip``, the clipped gradients are summed, Gaussian noise of standard deviation
``--noise-multiplier * --clip`` is added, and the average updates the parameters with SGD.
It reports the training loss, the fraction of clipped gradients and the test accuracy.

    python examples/per_sample_grads.py             # well under a minute on 2 CPU cores
    python examples/per_sample_grads.py --steps 20  # a smoke run
"""

from __future__ import annotations

import argparse
import pathlib
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

TARGET_ACCURACY = 0.9


def stripes(count: int, size: int, generator: torch.Generator
            ) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` noisy (1, size, size) images of stripes: horizontal, vertical or one of the
    two diagonals (the label), with a random phase."""
    labels = torch.randint(4, (count,), generator=generator)
    rows = torch.arange(size).view(1, size, 1)
    cols = torch.arange(size).view(1, 1, size)
    phase = torch.randint(4, (count, 1, 1), generator=generator)
    coords = torch.stack([rows.expand(count, size, size), cols.expand(count, size, size),
                          (rows + cols).expand(count, size, size),
                          (rows - cols).expand(count, size, size)])  # (4, count, size, size)
    along = coords[labels, torch.arange(count)]  # (count, size, size)
    images = ((along + phase) % 4 < 2).float()
    images = images + 0.3 * torch.randn(count, size, size, generator=generator)
    return images.unsqueeze(1), labels


class StripeCNN(nn.Module):
    def __init__(self, channels: int, size: int) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, channels, 3, padding=1), nn.ReLU(),
                                      nn.MaxPool2d(2))
        self.head = nn.Linear(channels * (size // 2) ** 2, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--train-size", type=int, default=2048)
    parser.add_argument("--test-size", type=int, default=512)
    parser.add_argument("--size", type=int, default=8, help="image side")
    parser.add_argument("--channels", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--clip", type=float, default=1.0,
                        help="the largest norm a per-sample gradient keeps")
    parser.add_argument("--noise-multiplier", type=float, default=0.5,
                        help="noise std as a multiple of --clip")
    parser.add_argument("--min-accuracy", type=float, default=0.0,
                        help="exit with status 1 if the final test accuracy is lower")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("."),
                        help="folder for the checkpoint per_sample_grads.pt")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    gen = torch.Generator().manual_seed(args.seed)
    train_x, train_y = (t.to(device) for t in stripes(args.train_size, args.size, gen))
    test_x, test_y = (t.to(device) for t in stripes(args.test_size, args.size, gen))
    model = StripeCNN(args.channels, args.size).to(device)
    print(model)

    def loss_of_one(params: dict, buffers: dict, x: torch.Tensor, y: torch.Tensor
                    ) -> torch.Tensor:
        # one example as a batch of one: the model is written for batches
        logits = functional_call(model, (params, buffers), (x.unsqueeze(0),))
        return F.cross_entropy(logits, y.unsqueeze(0))

    per_sample_grads = vmap(grad(loss_of_one), in_dims=(None, None, 0, 0))

    def test_accuracy() -> float:
        with torch.no_grad():
            return (model(test_x).argmax(1) == test_y).float().mean().item()

    # The check: vmap(grad) against one backward() per example.
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}
    x, y = train_x[: args.batch_size], train_y[: args.batch_size]
    batched = per_sample_grads(params, buffers, x, y)
    worst = 0.0
    for i in range(x.shape[0]):
        model.zero_grad()
        F.cross_entropy(model(x[i: i + 1]), y[i: i + 1]).backward()
        for name, p in model.named_parameters():
            worst = max(worst, (batched[name][i] - p.grad).abs().max().item())
    print(f"per-sample gradients of {x.shape[0]} examples match a loop of backward() passes: "
          f"max abs difference {worst:.2e}")
    if worst > 1e-4:
        print("per-sample gradients differ from the loop")
        return 1

    print(f"before training: test accuracy {test_accuracy():.3f}")
    start = time.perf_counter()
    order = torch.randperm(args.train_size, generator=gen)
    at = 0
    running, clipped_frac = [], []
    for step in range(1, args.steps + 1):
        if at + args.batch_size > args.train_size:
            order, at = torch.randperm(args.train_size, generator=gen), 0
        idx = order[at: at + args.batch_size].to(device)
        at += args.batch_size
        x, y = train_x[idx], train_y[idx]
        params = {k: v.detach() for k, v in model.named_parameters()}
        grads = per_sample_grads(params, buffers, x, y)
        # each example's gradient norm over all parameters, then clip it to args.clip
        norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()]).norm(dim=0)
        scale = (args.clip / (norms + 1e-6)).clamp(max=1.0)  # (batch,)
        with torch.no_grad():
            for name, p in model.named_parameters():
                g = (grads[name] * scale.view(-1, *[1] * (grads[name].dim() - 1))).sum(0)
                g += args.noise_multiplier * args.clip * torch.randn_like(g)
                p -= args.lr * g / x.shape[0]
            running.append(F.cross_entropy(model(x), y).item())
        clipped_frac.append((norms > args.clip).float().mean().item())
        if step % 50 == 0 or step == args.steps:
            print(f"step {step:4d}: train loss {sum(running) / len(running):.4f}, "
                  f"clipped {sum(clipped_frac) / len(clipped_frac):.2f}, "
                  f"test accuracy {test_accuracy():.3f}, {time.perf_counter() - start:.1f}s",
                  flush=True)
            running, clipped_frac = [], []

    acc = test_accuracy()
    print(f"final: test accuracy {acc:.3f} (target {TARGET_ACCURACY:.2f} with the default "
          "settings)")
    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out / "per_sample_grads.pt"
    torch.save({"model": model.state_dict(), "step": args.steps}, checkpoint)
    print(f"saved checkpoint {checkpoint}")
    return 0 if acc >= args.min_accuracy else 1


if __name__ == "__main__":
    raise SystemExit(main())
