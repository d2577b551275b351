"""Train a character-level LSTM language model on Shakespeare's sonnets; report perplexity.

A plain PyTorch script: an ``nn.Embedding``, a multi-layer ``nn.LSTM`` with dropout between
layers and a ``nn.Linear`` decoder, trained with truncated backpropagation through time. The
text is laid out as ``batch_size`` parallel streams (one column each); every training step
reads the next ``bptt`` characters of all streams, and the hidden state carried over from the
previous step is ``.detach()``-ed so gradients stop at the chunk boundary. Gradients are clipped
with ``clip_grad_norm_``; the learning rate drops by ``ReduceLROnPlateau`` when the validation
loss stalls. After each epoch it prints the validation loss and perplexity (``exp`` of the mean
cross-entropy per character); at the end it saves a checkpoint and prints a short sample.

Data: ``examples/data/sonnets.txt`` (Shakespeare's sonnets, 1609, public domain).

    python examples/lstm_lm.py                  # about 2-3 minutes on 2 CPU cores
    python examples/lstm_lm.py --steps 10       # a smoke run
"""

from __future__ import annotations

import argparse
import math
import pathlib
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DATA = pathlib.Path(__file__).resolve().parent / "data" / "sonnets.txt"


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab_size: int, embed: int, hidden: int, layers: int,
                 dropout: float) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed)
        self.drop = nn.Dropout(dropout)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, dropout=dropout)
        self.decoder = nn.Linear(hidden, vocab_size)
        self.layers, self.hidden = layers, hidden
        nn.init.uniform_(self.embed.weight, -0.1, 0.1)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, tokens: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]
                ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        # tokens: (time, batch) -> logits (time, batch, vocab)
        output, state = self.lstm(self.drop(self.embed(tokens)), state)
        return self.decoder(self.drop(output)), state

    def init_state(self, batch: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        zeros = torch.zeros(self.layers, batch, self.hidden, device=device)
        return zeros, zeros.clone()


def batchify(data: torch.Tensor, batch_size: int) -> torch.Tensor:
    """Cut the 1-d token stream into ``batch_size`` equal columns: shape (length, batch)."""
    rows = data.size(0) // batch_size
    return data[:rows * batch_size].view(batch_size, rows).t().contiguous()


def chunks(source: torch.Tensor, bptt: int):
    """Yield (input, target) windows of ``bptt`` time steps; the target is shifted by one."""
    for start in range(0, source.size(0) - 1, bptt):
        length = min(bptt, source.size(0) - 1 - start)
        yield source[start:start + length], source[start + 1:start + 1 + length]


def detach(state: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """Keep the values of the hidden state but cut its history (truncated BPTT)."""
    return tuple(s.detach() for s in state)


def evaluate(model: LSTMLanguageModel, source: torch.Tensor, bptt: int) -> float:
    model.eval()
    total, count = 0.0, 0
    state = model.init_state(source.size(1), source.device)
    with torch.no_grad():
        for x, y in chunks(source, bptt):
            logits, state = model(x, state)
            total += F.cross_entropy(logits.view(-1, logits.size(-1)), y.reshape(-1),
                                     reduction="sum").item()
            count += y.numel()
    model.train()
    return total / count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=pathlib.Path, default=DATA)
    parser.add_argument("--steps", type=int, default=400,
                        help="training steps (one bptt chunk of every stream each)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--bptt", type=int, default=32)
    parser.add_argument("--embed", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=192)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--dropout", type=float, default=0.2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--clip", type=float, default=0.5)
    parser.add_argument("--log-interval", type=int, default=50)
    parser.add_argument("--sample-chars", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1111)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("."),
                        help="folder for the checkpoint lstm_lm.pt")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    text = args.data.read_text(encoding="utf-8")
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    split = int(0.9 * len(data))
    train = batchify(data[:split], args.batch_size).to(device)
    val = batchify(data[split:], 8).to(device)
    print(f"{len(text):,} characters, vocabulary of {len(chars)}; train {tuple(train.shape)} "
          f"(time, streams), validation {tuple(val.shape)}")

    model = LSTMLanguageModel(len(chars), args.embed, args.hidden, args.layers,
                              args.dropout).to(device)
    print(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=1)

    val_loss = evaluate(model, val, args.bptt)
    print(f"before training: val loss {val_loss:.4f}, val ppl {math.exp(val_loss):.2f}")
    start = time.perf_counter()
    step, epoch, running, seen = 0, 0, 0.0, 0
    while step < args.steps:
        epoch += 1
        state = model.init_state(args.batch_size, device)
        for x, y in chunks(train, args.bptt):
            state = detach(state)
            logits, state = model(x, state)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            step += 1
            running += loss.item()
            seen += 1
            if step % args.log_interval == 0 or step == args.steps:
                mean = running / seen
                print(f"step {step:5d} (epoch {epoch}): train loss {mean:.4f}, "
                      f"train ppl {math.exp(mean):.2f}, lr {optimizer.param_groups[0]['lr']:.1e}, "
                      f"{time.perf_counter() - start:.1f}s", flush=True)
                running, seen = 0.0, 0
            if step == args.steps:
                break
        val_loss = evaluate(model, val, args.bptt)
        scheduler.step(val_loss)
        print(f"end of epoch {epoch}: val loss {val_loss:.4f}, val ppl {math.exp(val_loss):.2f}",
              flush=True)

    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out / "lstm_lm.pt"
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "vocab": "".join(chars), "val_loss": val_loss}, checkpoint)
    print(f"final: val loss {val_loss:.4f}, val ppl {math.exp(val_loss):.2f}")
    print(f"saved checkpoint {checkpoint}")

    # Sample: feed a prompt, then draw one character at a time, carrying the LSTM state.
    model.eval()
    generator = torch.Generator(device=device).manual_seed(args.seed)
    state = model.init_state(1, device)
    out = "When "
    token = torch.tensor([[stoi[c]] for c in out], device=device)
    with torch.no_grad():
        logits, state = model(token, state)
        for _ in range(args.sample_chars):
            probs = F.softmax(logits[-1, 0] / 0.7, dim=-1)
            nxt = torch.multinomial(probs, 1, generator=generator)
            out += chars[nxt.item()]
            logits, state = model(nxt.view(1, 1), state)
    print("--- sample ---")
    print(out)
    print("--- end of sample ---")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
