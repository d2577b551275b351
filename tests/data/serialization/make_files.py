"""Write the checkpoints that tests/test_serialization.py reads, with real PyTorch.

Run by hand only (never by the tests), with a Python that has real PyTorch 2.13:

    <python with torch==2.13.0> tests/data/serialization/make_files.py

The values are small and fixed; the tests spell them out, so a change here needs the same change
there.
"""

from __future__ import annotations

import io
import os
from collections import OrderedDict

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def dtypes_checkpoint() -> dict:
    """One tensor per dtype, plus views sharing storage and odd layouts."""
    base = torch.tensor([[0.0, 1.5, -2.25, 3.0], [4.0, -5.5, 6.0, 7.125], [8.0, 9.0, 10.0, 11.0]])
    return {
        "bool": torch.tensor([True, False, True]),
        "uint8": torch.tensor([0, 7, 255], dtype=torch.uint8),
        "int8": torch.tensor([-128, 0, 127], dtype=torch.int8),
        "int16": torch.tensor([-32768, 1, 32767], dtype=torch.int16),
        "int32": torch.tensor([-(2**31), 2, 2**31 - 1], dtype=torch.int32),
        "int64": torch.tensor([-(2**63), 3, 2**63 - 1], dtype=torch.int64),
        "float16": torch.tensor([0.5, -65504.0, float("inf")], dtype=torch.float16),
        "bfloat16": torch.tensor([1.0, -3.0e38, 0.0078125], dtype=torch.bfloat16),
        "float32": base,
        "float64": torch.tensor([1e-300, -2.5, float("nan")], dtype=torch.float64),
        "complex64": torch.tensor([1 + 2j, -3.5j], dtype=torch.complex64),
        "complex128": torch.tensor([0.25 - 1j], dtype=torch.complex128),
        "scalar": torch.tensor(42, dtype=torch.int64),
        "empty": torch.zeros(0, 3),
        "column": base[:, 1],  # a strided view of base's storage
        "transposed": base.t(),
        "narrow": base[1:, 2:],
        "expanded": torch.tensor([1.0, 2.0]).expand(3, 2),
        "grad": torch.tensor([1.0, 2.0], requires_grad=True),
        "nested": OrderedDict(
            [("list", [1, 2.5, "three", None, True]), ("tuple", (b"raw", 1 + 2j)),
             ("size", torch.Size([2, 3])), ("dtype", torch.bfloat16),
             ("device", torch.device("cpu")), ("set", {3})]),
    }


def unsigned_checkpoint() -> dict:
    """The barebones unsigned dtypes, which PyTorch saves untyped with _rebuild_tensor_v3."""
    u32 = torch.tensor([[0, 1, 2], [3, 2**32 - 1, 5]], dtype=torch.uint32)
    return {
        "uint16": torch.tensor([0, 1, 65535], dtype=torch.uint16),
        "uint32": u32,
        "uint32_t": u32.t(),  # a view sharing u32's storage
        "uint64": torch.tensor([2**64 - 1, 0, 2**63], dtype=torch.uint64)[1:],
        "float": torch.tensor([1.5]),
    }


def main() -> None:
    torch.save(dtypes_checkpoint(), os.path.join(HERE, "dtypes.pt"))
    torch.save(unsigned_checkpoint(), os.path.join(HERE, "unsigned.pt"))
    # nn.Module state dict (detached tensors) and a bare Parameter
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        lin.bias.copy_(torch.tensor([0.5, -0.5]))
    torch.save({"state_dict": lin.state_dict(), "param": lin.weight}, os.path.join(HERE,
                                                                                  "module.pt"))
    torch.save({"meta": torch.empty(2, 3, device="meta"), "ones": torch.ones(2)},
               os.path.join(HERE, "meta.pt"))
    # a checkpoint whose storage claims to live on cuda:0 (written on a CPU-only machine by
    # tagging CPU storages as cuda:0 for this one save)
    torch.serialization.register_package(-100, lambda storage: "cuda:0", lambda s, loc: None)
    torch.save({"w": torch.tensor([1.0, 2.0, 3.0])}, os.path.join(HERE, "cuda.pt"))
    # PyTorch's pre-1.6 format, which Plait refuses with a clear error
    buf = io.BytesIO()
    torch.save(torch.ones(2), buf, _use_new_zipfile_serialization=False)
    with open(os.path.join(HERE, "legacy.pt"), "wb") as fh:
        fh.write(buf.getvalue())


if __name__ == "__main__":
    main()
