"""A minimal PNG encoder (8-bit grey, grey+alpha, RGB or RGBA), so that images need no Pillow.

PNG is a signature followed by chunks (length, type, data, CRC-32 of type and data); the pixels
are the zlib stream of the rows, each row prefixed by its filter type (0: stored as is).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# channels -> PNG colour type
_COLOUR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def encode_png(pixels: Any) -> bytes:
    """PNG bytes of ``pixels``, a uint8 numpy array (H, W, C) with C in 1..4."""
    import numpy as np

    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] not in _COLOUR_TYPES:
        raise ValueError(f"encode_png expects a uint8 (H, W, C) array with C in 1..4, got "
                         f"{pixels.dtype} of shape {pixels.shape}")
    height, width, channels = pixels.shape
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOUR_TYPES[channels], 0, 0, 0)
    rows = np.ascontiguousarray(pixels).reshape(height, width * channels)
    filtered = np.concatenate([np.zeros((height, 1), np.uint8), rows], axis=1)
    return (_SIGNATURE + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(filtered.tobytes(), 6)) + _chunk(b"IEND", b""))
