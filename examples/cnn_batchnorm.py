"""Train a CNN with batch normalisation to recognise synthetic shapes in noisy 16x16 images.

A plain PyTorch script (no dataset download: the images are drawn on the fly, seeded). Six
classes of shapes (horizontal bar, vertical bar, square outline, disc, plus sign, X) at random
positions, sizes and brightness, under Gaussian noise. The network stacks ``Conv2d``,
``BatchNorm2d``, ``ReLU`` and ``MaxPool2d`` twice, then ``Flatten``, ``Dropout`` and two
``Linear`` layers; it trains with AdamW under a ``OneCycleLR`` schedule (which also cycles
Adam's beta1), switching between ``model.train()`` (batch statistics, dropout on) and
``model.eval()`` (running statistics, dropout off) for the test accuracy after each epoch. Saves
a checkpoint (model, optimizer and scheduler state dicts) at the end.

    python examples/cnn_batchnorm.py               # about a minute on 2 CPU cores
    python examples/cnn_batchnorm.py --steps 10    # a smoke run
"""

from __future__ import annotations

import argparse
import pathlib
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

CLASSES = ("hbar", "vbar", "square", "disc", "plus", "x")
SIZE = 16
TARGET_ACCURACY = 0.97


def make_shapes(count: int, noise: float, generator: torch.Generator
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw ``count`` images (count, 1, SIZE, SIZE) and their class labels, all vectorised."""
    def uniform_int(low: int, high: int) -> torch.Tensor:
        return torch.randint(low, high + 1, (count, 1, 1), generator=generator)

    labels = torch.randint(len(CLASSES), (count,), generator=generator)
    cy, cx, size = uniform_int(4, SIZE - 5), uniform_int(4, SIZE - 5), uniform_int(2, 4)
    yy = torch.arange(SIZE).view(1, SIZE, 1)
    xx = torch.arange(SIZE).view(1, 1, SIZE)
    dy, dx = (yy - cy).abs(), (xx - cx).abs()
    hbar = (dy == 0) & (dx <= size)
    vbar = (dx == 0) & (dy <= size)
    masks = torch.stack([
        hbar,
        vbar,
        torch.maximum(dy, dx) == size,
        dy * dy + dx * dx <= size * size,
        hbar | vbar,
        (dy == dx) & (dy <= size),
    ], dim=1).float()  # (count, classes, SIZE, SIZE)
    shapes = masks[torch.arange(count), labels]
    brightness = 0.5 + 0.5 * torch.rand(count, 1, 1, generator=generator)
    images = shapes * brightness + noise * torch.randn(count, SIZE, SIZE, generator=generator)
    return images.unsqueeze(1), labels


def make_model(dropout: float) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(dropout),
        nn.Linear(32 * (SIZE // 4) ** 2, 64), nn.ReLU(), nn.Dropout(dropout),
        nn.Linear(64, len(CLASSES)),
    )


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--train-size", type=int, default=4000)
    parser.add_argument("--test-size", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--dropout", type=float, default=0.25)
    parser.add_argument("--max-lr", type=float, default=1e-2)
    parser.add_argument("--weight-decay", type=float, default=1e-2)
    parser.add_argument("--min-accuracy", type=float, default=0.0,
                        help="exit with status 1 if the final test accuracy is lower")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--compile", action="store_true",
                        help="train and evaluate the model through torch.compile")
    parser.add_argument("--print-losses", action="store_true",
                        help="print each training step's loss ('loss <step> <value>')")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("."),
                        help="folder for the checkpoint cnn_batchnorm.pt")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    data_gen = torch.Generator().manual_seed(args.seed)
    train_set = TensorDataset(*make_shapes(args.train_size, args.noise, data_gen))
    test_set = TensorDataset(*make_shapes(args.test_size, args.noise, data_gen))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              drop_last=True)
    test_loader = DataLoader(test_set, batch_size=500)
    model = make_model(args.dropout).to(device)
    print(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.max_lr,
                                  weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.max_lr,
                                                    total_steps=args.steps)
    # the compiled wrapper shares the model's parameters; the checkpoint saves the model itself
    net = torch.compile(model) if args.compile else model

    test_loss, test_acc = evaluate(net, test_loader, device)
    print(f"before training: test loss {test_loss:.4f}, test accuracy {test_acc:.3f}")
    start = time.perf_counter()
    step, epoch = 0, 0
    while step < args.steps:
        epoch += 1
        running, seen = 0.0, 0
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(net(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
            if args.print_losses:
                print(f"loss {step} {loss.item():.6f}")
            running += loss.item() * y.numel()
            seen += y.numel()
            if step == args.steps:
                break
        test_loss, test_acc = evaluate(net, test_loader, device)
        print(f"epoch {epoch} (step {step}): train loss {running / seen:.4f}, "
              f"test loss {test_loss:.4f}, test accuracy {test_acc:.3f}, "
              f"lr {scheduler.get_last_lr()[0]:.2e}, {time.perf_counter() - start:.1f}s",
              flush=True)

    print(f"final: test accuracy {test_acc:.3f} (target {TARGET_ACCURACY:.2f} with the "
          "default settings)")
    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out / "cnn_batchnorm.pt"
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "step": step}, checkpoint)
    print(f"saved checkpoint {checkpoint}")
    return 0 if test_acc >= args.min_accuracy else 1


if __name__ == "__main__":
    raise SystemExit(main())
