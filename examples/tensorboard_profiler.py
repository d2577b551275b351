"""Train a small CNN while logging to TensorBoard and profiling the first steps.

A plain PyTorch script. The data are synthetic 12x12 images of four kinds of stripes
(horizontal, vertical, and the two diagonals) at random phases and contrasts, under noise,
drawn on the fly from a seed. Everything a training run usually sends to TensorBoard goes
through ``torch.utils.tensorboard.SummaryWriter``: the model's graph (``add_graph``), a grid
of input images (``add_images``), the training loss and learning rate every step
(``add_scalar``), train and test loss on one chart (``add_scalars``), the test accuracy,
histograms of every parameter and its gradient (``add_histogram``), the first layer's filters
as an image (``add_image``), the run's settings as text (``add_text``) and its hyperparameters
with the final metrics (``add_hparams``). A few steps run under ``torch.profiler.profile`` with
a ``wait/warmup/active`` schedule, labelled ``record_function`` ranges and input shapes; the
trace goes to ``tensorboard_trace_handler`` (TensorBoard's profiler plugin reads it) and the
operator table is printed.

    python examples/tensorboard_profiler.py              # ~10 s on 2 CPU cores
    python examples/tensorboard_profiler.py --steps 12   # a smoke run
    tensorboard --logdir runs                            # then look at the run
"""

from __future__ import annotations

import argparse
import math
import pathlib
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import (
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.tensorboard import SummaryWriter

CLASSES = ("horizontal", "vertical", "diagonal", "antidiagonal")
SIZE = 12
TARGET_ACCURACY = 0.97


def make_stripes(count: int, noise: float, generator: torch.Generator
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` images (count, 1, SIZE, SIZE) of sinusoidal stripes and their classes."""
    labels = torch.randint(len(CLASSES), (count,), generator=generator)
    yy = torch.arange(SIZE, dtype=torch.float32).view(1, SIZE, 1)
    xx = torch.arange(SIZE, dtype=torch.float32).view(1, 1, SIZE)
    # the coordinate each class's stripes run across: (count, SIZE, SIZE) after broadcasting
    across = torch.stack([yy.expand(1, SIZE, SIZE), xx.expand(1, SIZE, SIZE),
                          (xx + yy).expand(1, SIZE, SIZE), (xx - yy).expand(1, SIZE, SIZE)])
    coordinate = across[labels, 0]
    phase = 2 * math.pi * torch.rand(count, 1, 1, generator=generator)
    contrast = 0.3 + 0.2 * torch.rand(count, 1, 1, generator=generator)
    images = 0.5 + contrast * torch.sin(coordinate * (2 * math.pi / 4) + phase)
    images = images + noise * torch.randn(count, SIZE, SIZE, generator=generator)
    return images.clamp(0, 1).unsqueeze(1), labels


class StripeNet(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, channels, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(channels, 2 * channels, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Linear(2 * channels * (SIZE // 4) ** 2, len(CLASSES))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(images).flatten(1))


def evaluate(model: nn.Module, loader: DataLoader, device: torch.device) -> tuple[float, float]:
    model.eval()
    loss_sum, correct, total = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
            correct += int((logits.argmax(1) == y).sum())
            total += y.numel()
    model.train()
    return loss_sum / total, correct / total


def filters_as_image(conv: nn.Conv2d) -> torch.Tensor:
    """The (out, 1, k, k) filters side by side as one (1, k, out*(k+1)) image in 0..1."""
    weights = conv.weight.detach().cpu()
    weights = (weights - weights.min()) / (weights.max() - weights.min() + 1e-12)
    padded = F.pad(weights[:, 0], (0, 1))  # a blank column between filters
    return padded.permute(1, 0, 2).reshape(1, weights.shape[2], -1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--train-size", type=int, default=2048)
    parser.add_argument("--test-size", type=int, default=512)
    parser.add_argument("--noise", type=float, default=0.4)
    parser.add_argument("--channels", type=int, default=8)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--eval-every", type=int, default=50,
                        help="steps between test evaluations and histograms")
    parser.add_argument("--min-accuracy", type=float, default=0.0,
                        help="exit with status 1 if the final test accuracy is lower")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("."),
                        help="folder for the checkpoint tensorboard_profiler.pt")
    parser.add_argument("--logdir", type=pathlib.Path, default=None,
                        help="TensorBoard run folder (default: <out>/runs/tensorboard_profiler)")
    args = parser.parse_args()
    logdir = args.logdir or args.out / "runs" / "tensorboard_profiler"

    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    data_gen = torch.Generator().manual_seed(args.seed)
    train_images, train_labels = make_stripes(args.train_size, args.noise, data_gen)
    test_set = TensorDataset(*make_stripes(args.test_size, args.noise, data_gen))
    train_loader = DataLoader(TensorDataset(train_images, train_labels),
                              batch_size=args.batch_size, shuffle=True, drop_last=True)
    test_loader = DataLoader(test_set, batch_size=256)
    model = StripeNet(args.channels).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)

    writer = SummaryWriter(str(logdir))
    writer.add_text("settings", "  \n".join(f"{k}: {v}" for k, v in sorted(vars(args).items())))
    writer.add_images("inputs", train_images[:16], 0)
    writer.add_graph(model, train_images[:4].to(device))

    # Steps 0 waits, 1 warms up, 2-4 are recorded; then the trace is written and printed.
    profiler = profile(activities=[ProfilerActivity.CPU],
                       schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                       on_trace_ready=tensorboard_trace_handler(str(logdir)),
                       record_shapes=True)
    start = time.perf_counter()
    step, first_loss, test_acc = 0, None, 0.0
    with profiler:
        while step < args.steps:
            for x, y in train_loader:
                x, y = x.to(device), y.to(device)
                with record_function("forward"):
                    loss = F.cross_entropy(model(x), y)
                with record_function("backward"):
                    optimizer.zero_grad()
                    loss.backward()
                with record_function("optimizer_step"):
                    optimizer.step()
                scheduler.step()
                profiler.step()
                step += 1
                loss_value = loss.item()
                first_loss = loss_value if first_loss is None else first_loss
                writer.add_scalar("train/loss", loss_value, step)
                writer.add_scalar("train/lr", scheduler.get_last_lr()[0], step)
                if step % args.eval_every == 0 or step == args.steps:
                    test_loss, test_acc = evaluate(model, test_loader, device)
                    writer.add_scalars("loss", {"train": loss_value, "test": test_loss}, step)
                    writer.add_scalar("test/accuracy", test_acc, step)
                    for name, parameter in model.named_parameters():
                        writer.add_histogram(f"weights/{name}", parameter, step)
                        writer.add_histogram(f"grads/{name}", parameter.grad, step)
                    writer.add_image("conv1_filters", filters_as_image(model.features[0]),
                                     step)
                    print(f"step {step}: train loss {loss_value:.4f}, test loss "
                          f"{test_loss:.4f}, test accuracy {test_acc:.3f}, "
                          f"{time.perf_counter() - start:.1f}s", flush=True)
                if step == args.steps:
                    break

    print("--- profile of steps 2-4 ---")
    print(profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))
    writer.add_hparams({"lr": args.lr, "batch_size": args.batch_size,
                        "channels": args.channels},
                       {"hparam/test_accuracy": test_acc, "hparam/first_loss": first_loss},
                       run_name="hparams")
    writer.close()
    print(f"final: train loss {first_loss:.4f} -> {loss_value:.4f}, test accuracy "
          f"{test_acc:.3f} (target {TARGET_ACCURACY:.2f} with the default settings); "
          f"TensorBoard run in {logdir}")
    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out / "tensorboard_profiler.pt"
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "step": step}, checkpoint)
    print(f"saved checkpoint {checkpoint}")
    return 0 if test_acc >= args.min_accuracy else 1


if __name__ == "__main__":
    raise SystemExit(main())
