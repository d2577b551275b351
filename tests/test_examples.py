"""The training scripts of examples/ run unchanged on Plait (briefly: one epoch)."""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import pytest

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None
                    or importlib.util.find_spec("tqdm") is None
                    or importlib.util.find_spec("matplotlib") is None,
                    reason="the demo needs scikit-learn, tqdm and matplotlib (nox -s tests "
                           "installs them)")
def test_digits_cnn_demo_trains_one_epoch(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "digits_cnn.py"), "--epochs", "1",
         "--out", str(tmp_path), "--min-accuracy", "0.5"],
        capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "epoch 1: loss" in out.stdout
    checkpoint = torch.load(tmp_path / "digits_cnn.pt")
    assert set(checkpoint) == {"model", "optimizer", "epoch"}
    assert checkpoint["model"]["0.weight"].shape == (16, 1, 3, 3)
    assert (tmp_path / "digits_cnn.png").stat().st_size > 10_000
