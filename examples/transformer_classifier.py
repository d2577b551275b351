"""Train a small ``nn.TransformerEncoder`` to classify variable-length token sequences.

A plain PyTorch script. The synthetic task: a sequence of 6 to 32 tokens drawn from a vocabulary
of ``--symbols`` "vote" symbols and some distractor symbols; the label is the vote symbol that
occurs most often (sequences with a tie are redrawn). The model has to look at every real token
and ignore the padding, so it exercises what a real classifier needs: a custom ``Dataset``, a
``DataLoader`` with a ``collate_fn`` that pads (``nn.utils.rnn.pad_sequence``) and builds the
padding mask, ``nn.Embedding(padding_idx=0)`` plus a learned position embedding, a
``TransformerEncoder`` called with ``src_key_padding_mask``, a masked mean over time, a linear
head, ``CrossEntropyLoss``, AdamW with a ``LinearLR`` warmup chained into ``CosineAnnealingLR``
by ``SequentialLR``, and test accuracy in ``eval()`` mode. Saves a checkpoint at the end.

    python examples/transformer_classifier.py               # about a minute on 2 CPU cores
    python examples/transformer_classifier.py --steps 10    # a smoke run
"""

from __future__ import annotations

import argparse
import pathlib
import time

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset

PAD = 0
TARGET_ACCURACY = 0.95


class MajorityDataset(Dataset):
    """Sequences whose label is their most frequent vote symbol (tokens 1..symbols)."""

    def __init__(self, size: int, symbols: int, distractors: int, min_len: int, max_len: int,
                 seed: int) -> None:
        gen = torch.Generator().manual_seed(seed)
        self.items: list[tuple[torch.Tensor, int]] = []
        vocab = symbols + distractors
        while len(self.items) < size:
            length = int(torch.randint(min_len, max_len + 1, (), generator=gen))
            seq = torch.randint(1, vocab + 1, (length,), generator=gen)
            counts = torch.bincount(seq, minlength=vocab + 1)[1:symbols + 1]
            top = counts.max()
            if top == 0 or int((counts == top).sum()) > 1:
                continue  # no vote or a tie: no well-defined label
            self.items.append((seq, int(counts.argmax())))

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        return self.items[index]


def collate(batch: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor,
                                                            torch.Tensor]:
    tokens = pad_sequence([seq for seq, _ in batch], batch_first=True, padding_value=PAD)
    labels = torch.tensor([label for _, label in batch])
    return tokens, tokens == PAD, labels  # True in the mask = padding, ignored by attention


class Classifier(nn.Module):
    def __init__(self, vocab: int, classes: int, max_len: int, d_model: int, heads: int,
                 layers: int, dropout: float) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model, padding_idx=PAD)
        self.pos = nn.Parameter(torch.zeros(1, max_len, d_model))
        nn.init.normal_(self.pos, std=0.02)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=2 * d_model,
                                           dropout=dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d_model),
                                             enable_nested_tensor=False)
        self.head = nn.Linear(d_model, classes)

    def forward(self, tokens: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.pos[:, :tokens.size(1)]
        x = self.encoder(x, src_key_padding_mask=padding)
        keep = (~padding).unsqueeze(-1).to(x.dtype)
        pooled = (x * keep).sum(1) / keep.sum(1)
        return self.head(pooled)


def accuracy(model: nn.Module, loader: DataLoader, device: torch.device) -> float:
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for tokens, padding, labels in loader:
            logits = model(tokens.to(device), padding.to(device))
            correct += int((logits.argmax(-1) == labels.to(device)).sum())
            total += labels.numel()
    model.train()
    return correct / total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--train-size", type=int, default=6000)
    parser.add_argument("--test-size", type=int, default=1000)
    parser.add_argument("--symbols", type=int, default=8)
    parser.add_argument("--distractors", type=int, default=2)
    parser.add_argument("--min-len", type=int, default=6)
    parser.add_argument("--max-len", type=int, default=32)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--log-interval", type=int, default=50)
    parser.add_argument("--min-accuracy", type=float, default=0.0,
                        help="exit with status 1 if the final test accuracy is lower")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("."),
                        help="folder for the checkpoint transformer_classifier.pt")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    shape = (args.symbols, args.distractors, args.min_len, args.max_len)
    train_set = MajorityDataset(args.train_size, *shape, seed=args.seed)
    test_set = MajorityDataset(args.test_size, *shape, seed=args.seed + 1)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              collate_fn=collate, drop_last=True,
                              generator=torch.Generator().manual_seed(args.seed))
    test_loader = DataLoader(test_set, batch_size=256, collate_fn=collate)
    vocab = args.symbols + args.distractors + 1  # + padding
    model = Classifier(vocab, args.symbols, args.max_len, args.d_model, args.heads,
                       args.layers, args.dropout).to(device)
    print(f"{len(train_set)} training and {len(test_set)} test sequences; "
          f"{sum(p.numel() for p in model.parameters()):,} parameters")

    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = min(args.warmup, max(1, args.steps // 2))
    scheduler = torch.optim.lr_scheduler.SequentialLR(optimizer, [
        torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=warmup),
        torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(1, args.steps - warmup)),
    ], milestones=[warmup])

    print(f"before training: test accuracy {accuracy(model, test_loader, device):.3f}")
    start = time.perf_counter()
    step, running, correct, seen = 0, 0.0, 0, 0
    while step < args.steps:
        for tokens, padding, labels in train_loader:
            tokens, padding, labels = tokens.to(device), padding.to(device), labels.to(device)
            logits = model(tokens, padding)
            loss = criterion(logits, labels)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            step += 1
            running += loss.item() * labels.numel()
            correct += int((logits.argmax(-1) == labels).sum())
            seen += labels.numel()
            if step % args.log_interval == 0 or step == args.steps:
                print(f"step {step:5d}: train loss {running / seen:.4f}, "
                      f"train accuracy {correct / seen:.3f}, "
                      f"{time.perf_counter() - start:.1f}s", flush=True)
                running, correct, seen = 0.0, 0, 0
            if step == args.steps:
                break

    test_acc = accuracy(model, test_loader, device)
    print(f"final: test accuracy {test_acc:.3f} (target {TARGET_ACCURACY:.2f} with the "
          "default settings)")
    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out / "transformer_classifier.pt"
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "step": step}, checkpoint)
    print(f"saved checkpoint {checkpoint}")
    return 0 if test_acc >= args.min_accuracy else 1


if __name__ == "__main__":
    raise SystemExit(main())
