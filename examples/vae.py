"""Train a variational autoencoder on 8x8 binary "crossing bars" images with torch.distributions.

A plain PyTorch script. Each image (seeded, no download) has one horizontal and one vertical bar
at random places, a few pixels flipped at random: data with a two-number explanation that a VAE
has to discover. The encoder gives the approximate posterior q(z|x) as an
``Independent(Normal(mu, sigma), 1)``; a sample is drawn with ``rsample()`` (the
reparameterisation trick, so gradients flow through it); the decoder's logits give the
likelihood p(x|z) as an ``Independent(Bernoulli(logits=...), 1)``; the prior is a standard
``Normal`` and the KL term is ``kl_divergence(q, prior)``. It maximises the evidence lower
bound ELBO = E_q[log p(x|z)] - KL(q || p) with Adam and reports the ELBO of the test images
(nats per image, higher is better) as it improves, then draws a few images from the prior.

    python examples/vae.py               # about 40 s of CPU time
    python examples/vae.py --steps 20    # a smoke run
"""

from __future__ import annotations

import argparse
import pathlib
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Bernoulli, Independent, Normal, kl_divergence
from torch.utils.data import DataLoader, TensorDataset

SIDE = 8


def make_bars(count: int, noise: float, generator: torch.Generator) -> torch.Tensor:
    """``count`` flattened 8x8 images (count, 64) of 0/1 floats: a horizontal and a vertical
    bar at random rows and columns, each pixel flipped with probability ``noise``."""
    rows = torch.randint(SIDE, (count,), generator=generator)
    cols = torch.randint(SIDE, (count,), generator=generator)
    grid = torch.arange(SIDE)
    horizontal = (grid[None, :, None] == rows[:, None, None]).expand(count, SIDE, SIDE)
    vertical = (grid[None, None, :] == cols[:, None, None]).expand(count, SIDE, SIDE)
    images = horizontal | vertical  # (count, 8, 8)
    flips = torch.rand(count, SIDE, SIDE, generator=generator) < noise
    return (images ^ flips).float().reshape(count, SIDE * SIDE)


class VAE(nn.Module):
    def __init__(self, pixels: int, hidden: int, latent: int) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(pixels, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU(),
                                     nn.Linear(hidden, 2 * latent))
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU(),
                                     nn.Linear(hidden, pixels))
        self.register_buffer("prior_loc", torch.zeros(latent))
        self.register_buffer("prior_scale", torch.ones(latent))

    def prior(self) -> Independent:
        return Independent(Normal(self.prior_loc, self.prior_scale), 1)

    def posterior(self, x: torch.Tensor) -> Independent:
        """q(z|x): a diagonal Gaussian per image, batch shape (B,), event shape (latent,)."""
        loc, raw_scale = self.encoder(x).chunk(2, dim=-1)
        return Independent(Normal(loc, F.softplus(raw_scale) + 1e-4), 1)

    def likelihood(self, z: torch.Tensor) -> Independent:
        """p(x|z): independent Bernoulli pixels, event shape (pixels,)."""
        return Independent(Bernoulli(logits=self.decoder(z)), 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per image: the reconstruction term log p(x|z), z ~ q(z|x), and KL(q(z|x) || p(z))."""
        q = self.posterior(x)
        z = q.rsample()  # (B, latent), differentiable in the encoder's outputs
        return self.likelihood(z).log_prob(x), kl_divergence(q, self.prior())


def evaluate(model: VAE, loader: DataLoader, device: torch.device) -> tuple[float, float, float]:
    """Mean test ELBO, reconstruction term and KL per image (nats)."""
    model.eval()
    total_rec = total_kl = 0.0
    count = 0
    with torch.no_grad():
        for (x,) in loader:
            rec, kl = model(x.to(device))
            total_rec += rec.sum().item()
            total_kl += kl.sum().item()
            count += x.shape[0]
    model.train()
    return (total_rec - total_kl) / count, total_rec / count, total_kl / count


def draw(images: torch.Tensor) -> str:
    """8x8 images side by side as text, '#' for pixels more likely on than off."""
    lines = []
    for r in range(SIDE):
        lines.append("   ".join("".join("#" if image[r * SIDE + c] > 0.5 else "."
                                        for c in range(SIDE)) for image in images))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--train-size", type=int, default=4000)
    parser.add_argument("--test-size", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--latent", type=int, default=2)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--eval-interval", type=int, default=500)
    parser.add_argument("--samples", type=int, default=6, help="images drawn from the prior")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("."),
                        help="folder for the checkpoint vae.pt")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    data_gen = torch.Generator().manual_seed(args.seed)
    train_set = TensorDataset(make_bars(args.train_size, args.noise, data_gen))
    test_set = TensorDataset(make_bars(args.test_size, args.noise, data_gen))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              drop_last=True, generator=data_gen)
    test_loader = DataLoader(test_set, batch_size=500)
    model = VAE(SIDE * SIDE, args.hidden, args.latent).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    elbo, rec, kl = evaluate(model, test_loader, device)
    print(f"before training: test elbo {elbo:.3f} (reconstruction {rec:.3f}, kl {kl:.3f})")
    start = time.perf_counter()
    step, running, seen = 0, 0.0, 0
    while step < args.steps:
        for (x,) in train_loader:
            rec, kl = model(x.to(device))
            loss = -(rec - kl).mean()  # the negative ELBO per image
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            running += -loss.item() * x.shape[0]
            seen += x.shape[0]
            if step % args.eval_interval == 0 or step == args.steps:
                elbo, rec, kl = evaluate(model, test_loader, device)
                print(f"step {step}: train elbo {running / seen:.3f}, test elbo {elbo:.3f} "
                      f"(reconstruction {rec:.3f}, kl {kl:.3f}), "
                      f"{time.perf_counter() - start:.1f}s", flush=True)
                running, seen = 0.0, 0
            if step == args.steps:
                break

    print(f"final: test elbo {elbo:.3f} nats per image")
    model.eval()
    with torch.no_grad():
        z = model.prior().sample((args.samples,))  # (samples, latent)
        probs = model.likelihood(z.to(device)).mean.cpu()  # Bernoulli means: pixel probabilities
    print("--- samples from the prior ---")
    print(draw(probs))
    print("--- end of samples ---")
    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out / "vae.pt"
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "step": step, "config": {"hidden": args.hidden, "latent": args.latent}},
               checkpoint)
    print(f"saved checkpoint {checkpoint}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
