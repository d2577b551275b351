"""Classify synthetic sounds from their log-magnitude spectrograms (``torch.stft``).

A plain PyTorch script (no dataset download: the sounds are synthesised, seeded). Five classes
of 0.128 s clips at 8 kHz: a low tone (250-700 Hz), a high tone (1.5-3 kHz), a rising chirp, a
falling chirp (linear sweeps between 300 Hz and 3.2 kHz) and a noise burst, each with a random
amplitude, phase and start, under background noise. The model's first layer is a
``Spectrogram`` module: ``torch.stft`` with a Hann window (a buffer, so it follows
``model.to(device)`` and lands in the checkpoint), the magnitude ``.abs()`` of the complex
result, then ``log``; a small CNN reads the (frequency, time) image. Rising and falling chirps
share their frequencies: only the time-frequency layout tells them apart. Before training, the
script checks its spectral tools on a pure tone: the peak of ``torch.fft.rfft`` at the
frequency ``torch.fft.rfftfreq`` names, and ``torch.istft`` giving the clip back.

    python examples/spectrogram.py               # about 17 s of CPU time
    python examples/spectrogram.py --steps 10    # a smoke run
"""

from __future__ import annotations

import argparse
import math
import pathlib
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

CLASSES = ("low tone", "high tone", "rising chirp", "falling chirp", "noise")
SAMPLE_RATE = 8000
LENGTH = 1024  # samples per clip (0.128 s)
N_FFT, HOP = 128, 32
TARGET_ACCURACY = 0.95


def make_sounds(count: int, noise: float, generator: torch.Generator
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` clips (count, LENGTH) and their labels, synthesised all at once."""
    def uniform(low: float, high: float) -> torch.Tensor:
        return low + (high - low) * torch.rand(count, 1, generator=generator)

    labels = torch.randint(len(CLASSES), (count,), generator=generator)
    t = torch.arange(LENGTH).float().unsqueeze(0) / SAMPLE_RATE  # (1, LENGTH) seconds
    duration = LENGTH / SAMPLE_RATE
    phase0 = uniform(0, 2 * math.pi)
    low = torch.sin(2 * math.pi * uniform(250, 700) * t + phase0)
    high = torch.sin(2 * math.pi * uniform(1500, 3000) * t + phase0)
    # a linear sweep from f0 to f1: the phase is 2 pi (f0 t + (f1 - f0) t^2 / (2 duration))
    f0, f1 = uniform(300, 900), uniform(2400, 3200)
    rising = torch.sin(2 * math.pi * (f0 * t + (f1 - f0) * t * t / (2 * duration)) + phase0)
    falling = torch.sin(2 * math.pi * (f1 * t + (f0 - f1) * t * t / (2 * duration)) + phase0)
    burst = torch.randn(count, LENGTH, generator=generator)
    sounds = torch.stack([low, high, rising, falling, burst], 1)  # (count, classes, LENGTH)
    clips = sounds[torch.arange(count), labels]
    # each sound starts somewhere in the first third and lasts to the end
    onset = (uniform(0, LENGTH / 3) * torch.ones(1, LENGTH)).long()
    envelope = (torch.arange(LENGTH).unsqueeze(0) >= onset).float()
    amplitude = uniform(0.3, 1.0)
    clips = clips * envelope * amplitude + noise * torch.randn(count, LENGTH, generator=generator)
    return clips, labels


class Spectrogram(nn.Module):
    """Log-magnitude short-time Fourier transform: (batch, samples) -> (batch, 1, freq, time)."""

    def __init__(self, n_fft: int = N_FFT, hop_length: int = HOP) -> None:
        super().__init__()
        self.n_fft, self.hop_length = n_fft, hop_length
        self.register_buffer("window", torch.hann_window(n_fft))

    def forward(self, clips: torch.Tensor) -> torch.Tensor:
        spec = torch.stft(clips, self.n_fft, hop_length=self.hop_length, window=self.window,
                          return_complex=True)  # (batch, n_fft // 2 + 1, frames) complex
        return torch.log(spec.abs() + 1e-3).unsqueeze(1)


class SoundNet(nn.Module):
    def __init__(self, channels: int = 8) -> None:
        super().__init__()
        self.spectrogram = Spectrogram()
        self.features = nn.Sequential(  # (batch, 1, 65, 33) -> (batch, 2 * channels * 16)
            nn.BatchNorm2d(1),
            nn.Conv2d(1, channels, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(channels, 2 * channels, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.AdaptiveAvgPool2d((4, 4)), nn.Flatten(),
        )
        self.head = nn.Linear(2 * channels * 16, len(CLASSES))

    def forward(self, clips: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(self.spectrogram(clips)))


def check_spectral_tools(device: torch.device) -> None:
    """A 1 kHz tone's spectrum peaks at 1 kHz, and istft(stft(x)) gives x back."""
    t = torch.arange(LENGTH, device=device) / SAMPLE_RATE
    tone = torch.sin(2 * math.pi * 1000.0 * t)
    spectrum = torch.fft.rfft(tone)
    freqs = torch.fft.rfftfreq(LENGTH, d=1 / SAMPLE_RATE)
    peak = freqs[spectrum.abs().argmax().cpu()].item()
    window = torch.hann_window(N_FFT, device=device)
    spec = torch.stft(tone, N_FFT, hop_length=HOP, window=window, return_complex=True)
    back = torch.istft(spec, N_FFT, hop_length=HOP, window=window, length=LENGTH)
    error = (back - tone).abs().max().item()
    print(f"spectral check: 1000 Hz tone peaks at {peak:.1f} Hz; stft {tuple(spec.shape)}, "
          f"istft round trip max error {error:.2e}")


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
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--train-size", type=int, default=2000)
    parser.add_argument("--test-size", type=int, default=500)
    parser.add_argument("--noise", type=float, default=0.5)
    parser.add_argument("--channels", type=int, default=8)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--min-accuracy", type=float, default=0.0,
                        help="exit with status 1 if the final test accuracy is lower")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("."),
                        help="folder for the checkpoint spectrogram.pt")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    check_spectral_tools(device)
    data_gen = torch.Generator().manual_seed(args.seed)
    train_set = TensorDataset(*make_sounds(args.train_size, args.noise, data_gen))
    test_set = TensorDataset(*make_sounds(args.test_size, args.noise, data_gen))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              drop_last=True)
    test_loader = DataLoader(test_set, batch_size=250)
    model = SoundNet(args.channels).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)

    test_loss, test_acc = evaluate(model, test_loader, device)
    print(f"before training: test loss {test_loss:.4f}, test accuracy {test_acc:.3f}")
    start = time.perf_counter()
    step, epoch = 0, 0
    while step < args.steps:
        epoch += 1
        running, seen = 0.0, 0
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
            running += loss.item() * y.numel()
            seen += y.numel()
            if step == args.steps:
                break
        test_loss, test_acc = evaluate(model, test_loader, device)
        print(f"epoch {epoch} (step {step}): train loss {running / seen:.4f}, "
              f"test loss {test_loss:.4f}, test accuracy {test_acc:.3f}, "
              f"{time.perf_counter() - start:.1f}s", flush=True)

    print(f"final: test accuracy {test_acc:.3f} (target {TARGET_ACCURACY:.2f} with the "
          "default settings)")
    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out / "spectrogram.pt"
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "config": {"channels": args.channels}, "step": step}, checkpoint)
    print(f"saved checkpoint {checkpoint}")
    return 0 if test_acc >= args.min_accuracy else 1


if __name__ == "__main__":
    raise SystemExit(main())
