"""Train a small character-level GPT on Shakespeare's sonnets, then sample from it.

A plain PyTorch script (``torch``, ``torch.nn``, ``torch.optim`` only): it runs unchanged on
Plait and on PyTorch. The model is a decoder-only transformer: token and position embeddings,
pre-LayerNorm blocks of causal self-attention (``F.scaled_dot_product_attention`` with
``is_causal=True``) and a GELU MLP, a final LayerNorm and an output layer whose weight is tied to
the token embedding. Training uses AdamW with weight decay on the matrices only, a linear warmup
followed by a cosine decay of the learning rate (``LambdaLR``), gradient clipping and a
``torch.no_grad()`` estimate of the train and validation losses. At the end it saves a
checkpoint (model and optimizer state dicts) and prints text sampled with a temperature, top-k
filtering and ``torch.multinomial`` driven by a seeded generator.

Data: ``examples/data/sonnets.txt``, fifty-nine of William Shakespeare's sonnets (first printed
in 1609, public domain), typed out in modern spelling for this repository.

    python examples/char_gpt.py                 # about 2 minutes on 2 CPU cores
    python examples/char_gpt.py --steps 20      # a smoke run
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


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int, dropout: float) -> None:
        super().__init__()
        assert n_embd % n_head == 0
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.dropout = dropout
        self.resid_drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, time_, channels = x.shape
        q, k, v = self.qkv(x).split(channels, dim=2)
        # (B, T, C) -> (B, heads, T, head size)
        q = q.view(batch, time_, self.n_head, channels // self.n_head).transpose(1, 2)
        k = k.view(batch, time_, self.n_head, channels // self.n_head).transpose(1, 2)
        v = v.view(batch, time_, self.n_head, channels // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(batch, time_, channels)
        return self.resid_drop(self.proj(y))


class MLP(nn.Module):
    def __init__(self, n_embd: int, dropout: float) -> None:
        super().__init__()
        self.fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.proj = nn.Linear(4 * n_embd, n_embd)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.proj(self.gelu(self.fc(x))))


class Block(nn.Module):
    def __init__(self, n_embd: int, n_head: int, dropout: float) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd, dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size: int, block_size: int, n_layer: int, n_head: int,
                 n_embd: int, dropout: float) -> None:
        super().__init__()
        self.block_size = block_size
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Embedding(block_size, n_embd)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(Block(n_embd, n_head, dropout) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)
        self.head.weight = self.tok_emb.weight  # weight tying: one matrix, two uses
        self.apply(self._init_weights)
        # GPT-2's scaled init of the projections that write into the residual stream
        for name, p in self.named_parameters():
            if name.endswith("proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        _, time_ = idx.shape
        pos = torch.arange(time_, device=idx.device)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    @torch.no_grad()
    def generate(self, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None, generator: torch.Generator | None = None
                 ) -> torch.Tensor:
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.block_size:])
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, [-1]]
                logits[logits < kth] = -float("inf")
            probs = F.softmax(logits, dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, 1, generator=generator)), dim=1)
        return idx


def optimizer_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """Decay the matrices (linear weights, embeddings); not biases or LayerNorm parameters."""
    params = {name: p for name, p in model.named_parameters() if p.requires_grad}
    decay = [p for p in params.values() if p.dim() >= 2]
    no_decay = [p for p in params.values() if p.dim() < 2]
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=pathlib.Path, default=DATA)
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--block-size", type=int, default=64)
    parser.add_argument("--n-layer", type=int, default=2)
    parser.add_argument("--n-head", type=int, default=4)
    parser.add_argument("--n-embd", type=int, default=96)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--min-lr", type=float, default=3e-4)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--grad-clip", type=float, default=1.0)
    parser.add_argument("--eval-interval", type=int, default=100)
    parser.add_argument("--eval-iters", type=int, default=10)
    parser.add_argument("--sample-chars", type=int, default=400)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--prompt", default="Shall I ")
    parser.add_argument("--seed", type=int, default=1337)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--compile", action="store_true",
                        help="train and evaluate the model through torch.compile")
    parser.add_argument("--print-losses", action="store_true",
                        help="print each training step's loss ('loss <step> <value>')")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("."),
                        help="folder for the checkpoint char_gpt.pt")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    text = args.data.read_text(encoding="utf-8")
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    split = int(0.9 * len(data))
    splits = {"train": data[:split], "val": data[split:]}
    print(f"{len(text):,} characters, vocabulary of {len(chars)}; "
          f"{split:,} for training, {len(data) - split:,} for validation")

    batch_gen = torch.Generator().manual_seed(args.seed)

    def get_batch(name: str) -> tuple[torch.Tensor, torch.Tensor]:
        source = splits[name]
        starts = torch.randint(len(source) - args.block_size - 1, (args.batch_size,),
                               generator=batch_gen)
        x = torch.stack([source[i:i + args.block_size] for i in starts.tolist()])
        y = torch.stack([source[i + 1:i + 1 + args.block_size] for i in starts.tolist()])
        return x.to(device), y.to(device)

    model = GPT(len(chars), args.block_size, args.n_layer, args.n_head, args.n_embd,
                args.dropout).to(device)
    print(f"{sum(p.numel() for p in model.parameters()):,} parameters")
    optimizer = torch.optim.AdamW(optimizer_groups(model, args.weight_decay), lr=args.lr,
                                  betas=(0.9, 0.99))

    def lr_factor(step: int) -> float:
        if step < args.warmup:
            return (step + 1) / args.warmup
        progress = (step - args.warmup) / max(1, args.steps - args.warmup)
        cosine = 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))
        return (args.min_lr + (args.lr - args.min_lr) * cosine) / args.lr

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)
    # the compiled wrapper shares the model's parameters; the checkpoint saves the model itself
    net = torch.compile(model) if args.compile else model

    @torch.no_grad()
    def estimate_loss() -> dict[str, float]:
        model.eval()
        out = {}
        for name in splits:
            losses = torch.zeros(args.eval_iters)
            for k in range(args.eval_iters):
                _, loss = net(*get_batch(name))
                losses[k] = loss.item()
            out[name] = losses.mean().item()
        model.train()
        return out

    start = time.perf_counter()
    for step in range(args.steps + 1):
        if step % args.eval_interval == 0 or step == args.steps:
            losses = estimate_loss()
            print(f"step {step:5d}: train loss {losses['train']:.4f}, "
                  f"val loss {losses['val']:.4f}, lr {scheduler.get_last_lr()[0]:.2e}, "
                  f"{time.perf_counter() - start:.1f}s", flush=True)
        if step == args.steps:
            break
        _, loss = net(*get_batch("train"))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        optimizer.step()
        scheduler.step()
        if args.print_losses:
            print(f"loss {step} {loss.item():.6f}")

    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out / "char_gpt.pt"
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "step": args.steps, "vocab": "".join(chars),
                "config": {"block_size": args.block_size, "n_layer": args.n_layer,
                           "n_head": args.n_head, "n_embd": args.n_embd}}, checkpoint)
    print(f"saved checkpoint {checkpoint}")

    model.eval()
    prompt = "".join(c for c in args.prompt if c in stoi) or "\n"
    context = torch.tensor([[stoi[c] for c in prompt]], dtype=torch.long, device=device)
    sample_gen = torch.Generator(device=device).manual_seed(args.seed)
    tokens = model.generate(context, args.sample_chars, temperature=args.temperature,
                            top_k=args.top_k, generator=sample_gen)
    print("--- sample ---")
    print("".join(chars[i] for i in tokens[0].tolist()))
    print("--- end of sample ---")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
