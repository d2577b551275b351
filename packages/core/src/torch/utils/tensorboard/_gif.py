"""A minimal animated-GIF encoder for ``add_video``, so that videos need neither moviepy nor
Pillow.

GIF holds palette indices compressed with variable-width LZW. Frames are mapped to a fixed
palette: 256 greys when every frame is grey, otherwise the 6x6x6 colour cube (each channel
rounded to the nearest of 0, 51, ..., 255). Each frame is one image with a graphic control
extension giving its delay; the NETSCAPE2.0 extension makes the animation loop.
"""

from __future__ import annotations

import struct
from typing import Any

_MIN_CODE_SIZE = 8  # 256 palette entries
_MAX_CODE = 4095  # GIF codes are at most 12 bits wide


def _palette_indices(frames: Any) -> tuple[Any, bytes]:
    """(T, H, W) palette indices of uint8 (T, H, W, C) frames, and the 256-entry palette."""
    import numpy as np

    rgb = frames if frames.shape[3] == 3 else np.repeat(frames[..., :1], 3, axis=3)
    if (rgb[..., 0] == rgb[..., 1]).all() and (rgb[..., 1] == rgb[..., 2]).all():
        palette = np.repeat(np.arange(256, dtype=np.uint8), 3)
        return rgb[..., 0], palette.tobytes()
    levels = np.rint(rgb.astype(np.float32) / 51).astype(np.uint8)  # 0..5 per channel
    indices = levels[..., 0] * 36 + levels[..., 1] * 6 + levels[..., 2]
    cube = np.stack(np.meshgrid(*[np.arange(6) * 51] * 3, indexing="ij"), -1).reshape(-1, 3)
    palette = np.zeros((256, 3), np.uint8)
    palette[:216] = cube
    return indices.astype(np.uint8), palette.tobytes()


def _lzw(indices: bytes) -> bytes:
    """GIF's LZW code stream of ``indices`` (bytes of palette indices), packed LSB first."""
    clear, end = 1 << _MIN_CODE_SIZE, (1 << _MIN_CODE_SIZE) + 1
    out = bytearray()
    bits = nbits = 0

    def emit(code: int, width: int) -> None:
        nonlocal bits, nbits
        bits |= code << nbits
        nbits += width
        while nbits >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            nbits -= 8

    table: dict[tuple[int, int], int] = {}
    next_code, width = end + 1, _MIN_CODE_SIZE + 1
    emit(clear, width)
    prefix = indices[0]
    for symbol in indices[1:]:
        code = table.get((prefix, symbol))
        if code is not None:
            prefix = code
            continue
        emit(prefix, width)
        if next_code <= _MAX_CODE:
            table[(prefix, symbol)] = next_code
            # the decoder widens its codes one entry later than the encoder adds them
            if next_code == 1 << width and width < 12:
                width += 1
            next_code += 1
        else:  # the table is full: start again
            emit(clear, width)
            table.clear()
            next_code, width = end + 1, _MIN_CODE_SIZE + 1
        prefix = symbol
    emit(prefix, width)
    emit(end, width)
    if nbits:
        out.append(bits & 0xFF)
    return bytes(out)


def _sub_blocks(data: bytes) -> bytes:
    """``data`` as GIF data sub-blocks (a length byte, at most 255 bytes) and a terminator."""
    blocks = b"".join(bytes([len(data[i:i + 255])]) + data[i:i + 255]
                      for i in range(0, len(data), 255))
    return blocks + b"\x00"


def encode_gif(frames: Any, fps: float) -> bytes:
    """Animated GIF bytes of uint8 (T, H, W, C) frames (C 1, 3 or 4; alpha is dropped) shown
    at ``fps`` frames a second, looping."""
    count, height, width = frames.shape[:3]
    indices, palette = _palette_indices(frames[..., :3])
    delay = max(1, round(100 / fps))  # in hundredths of a second
    parts = [b"GIF89a", struct.pack("<HHBBB", width, height, 0xF7, 0, 0), palette,
             b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"]
    for frame in range(count):
        parts.append(struct.pack("<BBBBHBB", 0x21, 0xF9, 4, 0, delay, 0, 0))
        parts.append(struct.pack("<BHHHHB", 0x2C, 0, 0, width, height, 0))
        parts.append(bytes([_MIN_CODE_SIZE]) + _sub_blocks(_lzw(indices[frame].tobytes())))
    parts.append(b"\x3b")
    return b"".join(parts)
