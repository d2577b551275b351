"""The files of TensorBoard's embedding projector: ``tensors.tsv`` (one point a line),
``metadata.tsv`` (its labels), ``sprite.png`` (its thumbnails, tiled in a square) and the
``projector_config.pbtxt`` that lists every embedding of a log directory."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._convert import make_grid, make_np, to_uint8_image
from ._png import encode_png


def write_tensors(matrix: np.ndarray, folder: str) -> None:
    """One tab-separated line per row of ``matrix``."""
    with open(os.path.join(folder, "tensors.tsv"), "w", encoding="utf-8") as f:
        for row in matrix:
            f.write("\t".join(repr(float(v)) for v in row) + "\n")


def write_metadata(metadata: Sequence[Any], folder: str,
                   header: Sequence[str] | None = None) -> None:
    """One label a line; with ``header``, a header line and tab-separated label columns."""
    if header:
        if len(header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in "
                                 "metadata")
        lines = ["\t".join(str(v) for v in row) for row in [header, *metadata]]
    else:
        lines = [str(label) for label in metadata]
    with open(os.path.join(folder, "metadata.tsv"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def write_sprite(label_img: Any, folder: str) -> None:
    """The (N, C, H, W) thumbnails (floats in 0..1) tiled row by row into a square PNG, the
    layout the projector expects (n x n cells, n = ceil(sqrt(N)))."""
    images = make_np(label_img)
    side = math.ceil(math.sqrt(images.shape[0]))
    grid = make_grid(images, ncols=side).transpose(1, 2, 0)  # (rows*H, side*W, C)
    square = np.zeros((images.shape[2] * side, images.shape[3] * side, grid.shape[2]),
                      grid.dtype)
    square[:grid.shape[0]] = grid
    with open(os.path.join(folder, "sprite.png"), "wb") as f:
        f.write(encode_png(to_uint8_image(square)))


def embedding_info(tag: str, global_step: int, subdir: str, has_metadata: bool,
                   label_img: Any) -> Any:
    """The projector config's entry for one embedding written under ``subdir``."""
    from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo

    info = EmbeddingInfo(tensor_name=f"{tag}:{global_step:05d}",
                         tensor_path=f"{subdir}/tensors.tsv")
    if has_metadata:
        info.metadata_path = f"{subdir}/metadata.tsv"
    if label_img is not None:
        info.sprite.image_path = f"{subdir}/sprite.png"
        info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
    return info


def write_config(config: Any, log_dir: str) -> None:
    """``projector_config.pbtxt`` in ``log_dir``: the text form of ``config``."""
    from google.protobuf import text_format

    with open(os.path.join(log_dir, "projector_config.pbtxt"), "w", encoding="utf-8") as f:
        f.write(text_format.MessageToString(config))
