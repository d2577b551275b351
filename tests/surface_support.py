"""Helpers of the surface tests (tests/test_surface_*.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from torch._core import registry

# With plait-backend-cuda installed, torch.cuda is that backend's module.
without_cuda_backend = pytest.mark.skipif(
    "cuda" in registry.installed(),
    reason="plait-backend-cuda is installed: torch.cuda is its module, not the CPU build's answers")

CPU_ONLY = {**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}


def run_cpu_only(code: str) -> str:
    """Run ``code`` in a fresh interpreter that loads no backend plugin; its stdout."""
    done = subprocess.run([sys.executable, "-c", code], env=CPU_ONLY, capture_output=True,
                          text=True, timeout=120, check=True)
    return done.stdout.strip()
