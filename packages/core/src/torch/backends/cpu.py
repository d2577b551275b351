"""``torch.backends.cpu``: what the running CPU's vector units can do."""

from __future__ import annotations

import functools
import platform

__all__ = ["get_cpu_capability"]

# /proc/cpuinfo flags a capability needs, best first (the ISA levels PyTorch reports)
_X86_LEVELS: tuple[tuple[str, frozenset[str]], ...] = (
    ("AVX512", frozenset({"avx512f", "avx512bw", "avx512vl", "avx512dq"})),
    ("AVX2", frozenset({"avx2", "fma"})),
)


@functools.cache
def get_cpu_capability() -> str:
    """The vector instruction level of this CPU as PyTorch names it: ``"AVX512"``, ``"AVX2"``
    or ``"DEFAULT"`` (anything else, including a CPU whose flags cannot be read)."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i686", "x86"):
        return "DEFAULT"
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            flags = next((line.split(":", 1)[1].split() for line in info
                          if line.startswith("flags")), [])
    except OSError:
        return "DEFAULT"
    present = set(flags)
    return next((name for name, needs in _X86_LEVELS if needs <= present), "DEFAULT")
