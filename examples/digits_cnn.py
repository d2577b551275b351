"""Train a small CNN on scikit-learn's handwritten digits with torch.nn and torch.optim.

The digits (1,797 8x8 grey images, shipped inside scikit-learn: no download) are split 80/20
with a seeded generator; a two-convolution network with batch norm trains with Adam for a few
epochs, a progress bar per epoch. At the end it saves a checkpoint (model and optimizer state
dicts, loadable by real PyTorch too) and a plot of the loss and the accuracies per epoch, and
exits non-zero if the test accuracy is under the target.
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np
from sklearn.datasets import load_digits
from tqdm import tqdm

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

TARGET_ACCURACY = 0.95


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Dropout(0.1),
        nn.Linear(64, 10),
    )


def load(seed: int) -> tuple[TensorDataset, TensorDataset]:
    digits = load_digits()
    images = torch.tensor((digits.images / 16.0).astype(np.float32)).unsqueeze(1)
    labels = torch.tensor(digits.target.astype(np.int64))
    full = TensorDataset(images, labels)
    train, test = random_split(full, [0.8, 0.2], generator=torch.Generator().manual_seed(seed))
    return train, test


def accuracy(model: nn.Module, loader: DataLoader) -> float:
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += int((model(x).argmax(1) == y).sum().item())
            total += y.numel()
    model.train()
    return correct / total


def plot(history: dict[str, list[float]], path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = range(1, len(history["loss"]) + 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(epochs, history["loss"], marker="o")
    left.set(title="training loss", xlabel="epoch", ylabel="cross-entropy")
    right.plot(epochs, history["train_acc"], marker="o", label="train")
    right.plot(epochs, history["test_acc"], marker="o", label="test")
    right.axhline(TARGET_ACCURACY, color="grey", linestyle="--", label="target")
    right.set(title="accuracy", xlabel="epoch", ylabel="accuracy", ylim=(0.5, 1.0))
    right.legend()
    fig.suptitle("Plait: small CNN on scikit-learn digits")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("demo-output"))
    parser.add_argument("--min-accuracy", type=float, default=TARGET_ACCURACY,
                        help="exit with status 1 if the final test accuracy is below this")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    train_set, test_set = load(args.seed)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              generator=torch.Generator().manual_seed(args.seed))
    train_eval = DataLoader(train_set, batch_size=256)
    test_loader = DataLoader(test_set, batch_size=256)
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    print(f"torch {torch.__version__}: {len(train_set)} training and {len(test_set)} test "
          f"digits, {sum(p.numel() for p in model.parameters()):,} parameters")

    history: dict[str, list[float]] = {"loss": [], "train_acc": [], "test_acc": []}
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        total = 0.0
        bar = tqdm(train_loader, desc=f"epoch {epoch}/{args.epochs}", unit="batch",
                   leave=False, mininterval=0.5)
        for x, y in bar:
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * y.numel()
            bar.set_postfix(loss=f"{loss.item():.3f}")
        history["loss"].append(total / len(train_set))
        history["train_acc"].append(accuracy(model, train_eval))
        history["test_acc"].append(accuracy(model, test_loader))
        print(f"epoch {epoch}: loss {history['loss'][-1]:.4f}  train accuracy "
              f"{history['train_acc'][-1]:.3f}  test accuracy {history['test_acc'][-1]:.3f}")
    elapsed = time.perf_counter() - start

    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out / "digits_cnn.pt"
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "epoch": args.epochs}, checkpoint)
    figure = args.out / "digits_cnn.png"
    plot(history, figure)
    final = history["test_acc"][-1]
    print(f"trained in {elapsed:.1f} s; test accuracy {final:.3f} (target "
          f"{args.min_accuracy:.2f})")
    print(f"wrote {checkpoint} and {figure}")
    return 0 if final >= args.min_accuracy else 1


if __name__ == "__main__":
    raise SystemExit(main())
