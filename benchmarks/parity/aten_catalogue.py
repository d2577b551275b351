"""Write the catalogue of PyTorch's aten operator names that ``torch.ops.aten`` answers for.

Run it with real PyTorch (the version Plait's API level names)::

    /path/to/real-torch/bin/python benchmarks/parity/aten_catalogue.py

It writes ``packages/core/src/torch/_core/aten_catalogue.txt``: one line per operator name, the
name followed by its overload names (``default`` for the unnamed one). Only names are recorded:
Plait's operators, schemas and kernels are its own.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import torch

TARGET = Path(__file__).resolve().parents[2] / "packages/core/src/torch/_core/aten_catalogue.txt"


def main() -> None:
    overloads: dict[str, list[str]] = defaultdict(list)
    for qualified in torch._C._dispatch_get_all_op_names():
        if qualified.startswith("aten::"):
            name, _, overload = qualified[len("aten::"):].partition(".")
            overloads[name].append(overload or "default")
    lines = [f"# aten operator names of PyTorch {torch.__version__.split('+')[0]}: "
             "name, then its overloads"]
    lines += [" ".join([name, *sorted(overloads[name])]) for name in sorted(overloads)]
    TARGET.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
