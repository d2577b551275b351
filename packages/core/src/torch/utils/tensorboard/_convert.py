"""Turning what users log (tensors, arrays, numbers, matplotlib figures) into numpy arrays, and
images into one (H, W, C) array."""

from __future__ import annotations

from typing import Any

import numpy as np

import torch


def make_np(x: Any) -> np.ndarray:
    """``x`` (a tensor, a numpy array or a number) as a numpy array; a number becomes shape (1,)."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        if x.dtype == torch.bfloat16:  # numpy has no bfloat16
            x = x.float()
        return x.numpy()
    if np.isscalar(x):
        return np.array([x])
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """Tile (N, C, H, W) images (C 1, 3 or 4) row by row into one (C', H*rows, W*cols) image;
    grey images become RGB."""
    if images.ndim != 4:
        raise AssertionError(f"make_grid expects (N, C, H, W) images, got shape {images.shape}")
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, axis=1)
    if images.shape[1] not in (3, 4):
        raise AssertionError(f"images must have 1, 3 or 4 channels, got {images.shape[1]}")
    count, channels, height, width = images.shape
    ncols = min(count, ncols)
    nrows = -(-count // ncols)
    # pad with blank images to fill the last row, then (rows, cols, C, H, W) -> (C, rows*H, ...)
    blank = np.zeros((nrows * ncols - count, channels, height, width), images.dtype)
    tiles = np.concatenate([images, blank]).reshape(nrows, ncols, channels, height, width)
    return tiles.transpose(2, 0, 3, 1, 4).reshape(channels, nrows * height, ncols * width)


def convert_to_HWC(tensor: np.ndarray, input_format: str) -> np.ndarray:
    """An image array in layout ``input_format`` (a permutation of ``NCHW``, ``CHW``, ``HWC``,
    ``HW``...) as (H, W, C) with C 3 or 4; a batch (``N``) is tiled into a grid. A bad layout raises
    ``AssertionError``, as in PyTorch."""
    input_format = input_format.upper()
    if len(set(input_format)) != len(input_format):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: "
                         f"{input_format}")
    if tensor.ndim != len(input_format):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: "
                         f"{tensor.shape}, input_format: {input_format}")
    if len(input_format) == 4:
        nchw = tensor.transpose([input_format.index(c) for c in "NCHW"])
        return make_grid(nchw).transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = tensor.transpose([input_format.index(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, axis=2) if hwc.shape[2] == 1 else hwc
    if len(input_format) == 2:
        hw = tensor.transpose([input_format.index(c) for c in "HW"])
        return np.stack([hw] * 3, axis=2)
    raise AssertionError(f"input_format must have 2 to 4 letters, got {input_format!r}")


def to_uint8_image(hwc: np.ndarray) -> np.ndarray:
    """Pixels in 0..255: uint8 images are taken as they are, anything else is read as 0..1
    (and scaled by 255); values outside the range are clipped."""
    scale = 1 if hwc.dtype == np.uint8 else 255
    return (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def rescale_image(hwc: np.ndarray, factor: float) -> np.ndarray:
    """``hwc`` resized by ``factor`` (nearest neighbour)."""
    if factor == 1:
        return hwc
    height, width = hwc.shape[:2]
    new_height, new_width = max(1, int(height * factor)), max(1, int(width * factor))
    rows = (np.arange(new_height) * height // new_height).clip(0, height - 1)
    cols = (np.arange(new_width) * width // new_width).clip(0, width - 1)
    return hwc[rows][:, cols]


def figure_to_image(figures: Any, close: bool = True) -> np.ndarray:
    """Render a matplotlib figure as a uint8 (3, H, W) array, or a list of them as (N, 3, H, W);
    ``close`` closes the figures afterwards. Needs matplotlib (imported here, on first use)."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure: Any) -> np.ndarray:
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())  # (H, W, 4)
        if close:
            plt.close(figure)
        return np.ascontiguousarray(rgba[:, :, :3].transpose(2, 0, 1))

    if isinstance(figures, list):
        return np.stack([render(figure) for figure in figures])
    return render(figures)


def video_frames(video: np.ndarray) -> np.ndarray:
    """(N, T, C, H, W) videos as (T, H', W', C) frames: the N videos (padded with blank ones to
    a power of two) side by side in a grid, rows = 2 ** floor(log2(N) / 2). uint8 input is
    scaled to 0..1."""
    count, steps, channels, height, width = video.shape
    if video.dtype == np.uint8:
        video = video.astype(np.float32) / 255.0
    padded = 1 << (count - 1).bit_length()
    if padded != count:
        blank = np.zeros((padded - count, steps, channels, height, width), video.dtype)
        video = np.concatenate([video, blank])
    rows = 2 ** ((count.bit_length() - 1) // 2)
    cols = padded // rows
    grid = video.reshape(rows, cols, steps, channels, height, width)
    # (rows, cols, T, C, H, W) -> (T, rows, H, cols, W, C)
    return grid.transpose(2, 0, 4, 1, 5, 3).reshape(steps, rows * height, cols * width,
                                                    channels)
