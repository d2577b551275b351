"""Builders of TensorBoard ``Summary`` protocol buffers (scalars, histograms, images, text,
tensors, audio, videos, hyperparameters, precision-recall curves, custom scalar layouts,
meshes), as ``torch.utils.tensorboard.summary`` has them.

Each returns a ``Summary`` for :meth:`FileWriter.add_summary`; the layouts are the ones
TensorBoard's plugins read (``simple_value`` scalars, ``HistogramProto``, PNG ``Summary.Image``,
the text plugin's string tensors, the hparams plugin's session records).
"""

from __future__ import annotations

import io
import wave
from collections.abc import Sequence
from typing import Any

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

import torch

from ._convert import convert_to_HWC, make_np, rescale_image, to_uint8_image, video_frames
from ._gif import encode_gif
from ._hparams import hparams  # the hparams plugin's three summaries
from ._png import encode_png

__all__ = ["audio", "compute_curve", "custom_scalars", "default_bins", "draw_boxes",
           "histogram", "histogram_raw", "hparams", "image", "image_boxes", "make_histogram",
           "mesh", "pr_curve", "pr_curve_raw", "scalar", "tensor_proto", "text", "video"]


def _plugin_metadata(name: str, content: bytes = b"") -> SummaryMetadata:
    return SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=name,
                                                                  content=content))


def _shape_proto(shape: Sequence[int]) -> TensorShapeProto:
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(n)) for n in shape])


# --- scalars --------------------------------------------------------------------------------
def scalar(name: str, tensor: Any, collections: Any = None, new_style: bool = False,
           double_precision: bool = False) -> Summary:
    """A one-value summary: ``simple_value`` (the classic form TensorBoard's scalar dashboard
    reads), or with ``new_style`` a float (double with ``double_precision``) tensor tagged for
    the scalars plugin."""
    array = make_np(tensor).squeeze()
    if array.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given "
                             f"size: {array.size} and {array.ndim} dimensions.")
    value = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=value)])
    proto = (TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[value], dtype="DT_FLOAT"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto,
                                        metadata=_plugin_metadata("scalars"))])


# --- tensors --------------------------------------------------------------------------------
def _half_bits(array: np.ndarray) -> list[int]:
    return array.astype(np.float16).view(np.uint16).ravel().tolist()


def _bfloat16_bits(array: np.ndarray) -> list[int]:
    # bfloat16 is the upper half of a float32; the tensor arrives widened to float32
    return (array.astype(np.float32).view(np.uint32) >> 16).ravel().tolist()


def _complex_parts(array: np.ndarray) -> list[float]:
    return np.stack([array.real, array.imag], axis=-1).ravel().tolist()


# torch dtype -> (TensorProto dtype, field of TensorProto, numpy array -> field values)
_TENSOR_FIELDS: dict[torch.dtype, tuple[str, str, Any]] = {
    torch.float16: ("DT_HALF", "half_val", _half_bits),
    torch.bfloat16: ("DT_BFLOAT16", "half_val", _bfloat16_bits),
    torch.float32: ("DT_FLOAT", "float_val", lambda a: a.ravel().tolist()),
    torch.float64: ("DT_DOUBLE", "double_val", lambda a: a.ravel().tolist()),
    torch.int8: ("DT_INT8", "int_val", lambda a: a.ravel().tolist()),
    torch.uint8: ("DT_UINT8", "int_val", lambda a: a.ravel().tolist()),
    torch.int16: ("DT_INT16", "int_val", lambda a: a.ravel().tolist()),
    torch.int32: ("DT_INT32", "int_val", lambda a: a.ravel().tolist()),
    torch.int64: ("DT_INT64", "int64_val", lambda a: a.ravel().tolist()),
    torch.bool: ("DT_BOOL", "bool_val", lambda a: a.ravel().tolist()),
    torch.complex64: ("DT_COMPLEX64", "scomplex_val", _complex_parts),
    torch.complex128: ("DT_COMPLEX128", "dcomplex_val", _complex_parts),
}


def tensor_proto(tag: str, tensor: torch.Tensor) -> Summary:
    """A summary holding the whole ``tensor`` (TensorBoard's "tensor" plugin data)."""
    if tensor.numel() * tensor.element_size() >= 1 << 31:
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if tensor.dtype not in _TENSOR_FIELDS:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, values = _TENSOR_FIELDS[tensor.dtype]
    proto = TensorProto(dtype=dtype, tensor_shape=_shape_proto(tensor.shape),
                        **{field: values(make_np(tensor))})
    return Summary(value=[Summary.Value(tag=tag, tensor=proto,
                                        metadata=_plugin_metadata("tensor"))])


# --- histograms -----------------------------------------------------------------------------
_DEFAULT_BINS: list[float] = []


def default_bins() -> list[float]:
    """TensorFlow's histogram bucket edges (``bins="tensorflow"``): 0 and +-1e-12 * 1.1**k up
    to 1e20, so that buckets are about 10% wide at every magnitude."""
    if not _DEFAULT_BINS:
        positive = []
        edge = 1e-12
        while edge < 1e20:
            positive.append(edge)
            edge *= 1.1
        _DEFAULT_BINS.extend([-e for e in reversed(positive)] + [0.0] + positive)
    return _DEFAULT_BINS


def make_histogram(values: np.ndarray, bins: Any, max_bins: int | None = None
                   ) -> HistogramProto:
    """A ``HistogramProto`` of ``values`` over ``bins`` (anything ``numpy.histogram`` takes: a
    count, edges, or a rule name such as ``"auto"``), merged down to at most ``max_bins``
    buckets, and trimmed to the buckets that hold values."""
    values = values.reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, edges = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        padded = np.concatenate([counts, np.zeros(-len(counts) % group, counts.dtype)])
        counts = padded.reshape(-1, group).sum(axis=1)
        edges = np.concatenate([edges[:-1:group], edges[-1:]])
    filled = np.flatnonzero(counts)
    if filled.size == 0:
        raise ValueError("The histogram is empty: no value falls inside the bins.")
    first, last = int(filled[0]), int(filled[-1])
    # TensorBoard stores each bucket's right edge only: an empty bucket ending at the left edge
    # of the first filled one keeps where the histogram starts.
    bucket_counts = [0.0] + counts[first:last + 1].astype(float).tolist()
    bucket_limits = edges[first:last + 2].astype(float).tolist()
    return HistogramProto(min=float(values.min()), max=float(values.max()), num=len(values),
                          sum=float(values.sum()), sum_squares=float(values.dot(values)),
                          bucket_limit=bucket_limits, bucket=bucket_counts)


def histogram(name: str, values: Any, bins: Any, max_bins: int | None = None) -> Summary:
    """A histogram summary of ``values`` (see :func:`make_histogram`)."""
    array = make_np(values).astype(float)
    return Summary(value=[Summary.Value(tag=name,
                                        histo=make_histogram(array, bins, max_bins))])


def histogram_raw(name: str, min: float, max: float, num: int, sum: float,
                  sum_squares: float, bucket_limits: Sequence[float],
                  bucket_counts: Sequence[float]) -> Summary:
    """A histogram summary from precomputed statistics and buckets."""
    histo = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                           bucket_limit=list(bucket_limits), bucket=list(bucket_counts))
    return Summary(value=[Summary.Value(tag=name, histo=histo)])


# --- images, audio, text --------------------------------------------------------------------
def make_image(pixels: np.ndarray, rescale: float = 1) -> Summary.Image:
    """A PNG ``Summary.Image`` of uint8 (H, W, C) pixels."""
    pixels = rescale_image(pixels, rescale)
    height, width, channels = pixels.shape
    return Summary.Image(height=height, width=width, colorspace=channels,
                         encoded_image_string=encode_png(pixels))


def image(tag: str, tensor: Any, rescale: float = 1, dataformats: str = "NCHW") -> Summary:
    """An image summary: ``tensor`` in layout ``dataformats``, floats read as 0..1 and uint8 as
    0..255 (a batch is tiled into a grid of eight columns)."""
    hwc = convert_to_HWC(make_np(tensor), dataformats)
    return Summary(value=[Summary.Value(tag=tag,
                                        image=make_image(to_uint8_image(hwc), rescale))])


def audio(tag: str, tensor: Any, sample_rate: int = 44100) -> Summary:
    """A mono WAV audio summary of samples in [-1, 1] (shape (L,) or (1, L))."""
    samples = make_np(tensor).squeeze()
    if samples.ndim != 1:
        raise AssertionError("input tensor should be one dimensional.")
    pcm = (samples.clip(-1, 1) * np.iinfo(np.int16).max).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm.tobytes())
    sound = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=len(pcm),
                          encoded_audio_string=buffer.getvalue(), content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=sound)])


def video(tag: str, tensor: Any, fps: float = 4) -> Summary:
    """A video summary: (N, T, C, H, W) frames (floats in 0..1 or uint8), the N videos in a
    grid, as an animated GIF (encoded here: no moviepy needed)."""
    frames = to_uint8_image(video_frames(make_np(tensor)))
    _, height, width, channels = frames.shape
    clip = Summary.Image(height=height, width=width, colorspace=channels,
                         encoded_image_string=encode_gif(frames, fps))
    return Summary(value=[Summary.Value(tag=tag, image=clip)])


def text(tag: str, text: str) -> Summary:
    """A text summary (markdown), under ``<tag>/text_summary`` as PyTorch names it."""
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf-8")],
                        tensor_shape=_shape_proto([1]))
    metadata = _plugin_metadata("text", TextPluginData(version=0).SerializeToString())
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata,
                                        tensor=proto)])


# --- images with boxes ----------------------------------------------------------------------
_BOX_COLOUR = (255, 0, 0)
_BOX_THICKNESS = 2


def draw_boxes(pixels: np.ndarray, boxes: np.ndarray,
               labels: Sequence[str] | None = None) -> np.ndarray:
    """``pixels`` (uint8 H, W, 3) with the outlines of ``boxes`` ((N, 4) as x1, y1, x2, y2
    pixel coordinates) in red, and each box's label under its bottom-left corner (labels need
    Pillow, for its font)."""
    pixels = pixels.copy()
    height, width = pixels.shape[:2]
    for x1, y1, x2, y2 in np.rint(boxes).astype(int).tolist():
        x1, x2 = sorted((max(0, min(x1, width - 1)), max(0, min(x2, width - 1))))
        y1, y2 = sorted((max(0, min(y1, height - 1)), max(0, min(y2, height - 1))))
        t = _BOX_THICKNESS
        pixels[y1:y1 + t, x1:x2 + 1] = _BOX_COLOUR
        pixels[max(y1, y2 - t + 1):y2 + 1, x1:x2 + 1] = _BOX_COLOUR
        pixels[y1:y2 + 1, x1:x1 + t] = _BOX_COLOUR
        pixels[y1:y2 + 1, max(x1, x2 - t + 1):x2 + 1] = _BOX_COLOUR
    if labels is not None:
        from PIL import Image, ImageDraw, ImageFont

        picture = Image.fromarray(pixels)
        draw = ImageDraw.Draw(picture)
        font = ImageFont.load_default()
        for (x1, _, _, y2), label in zip(boxes.tolist(), labels):
            left, top, right, bottom = font.getbbox(label)
            draw.rectangle([(x1, y2 - (bottom - top)), (x1 + right - left, y2)],
                           fill=_BOX_COLOUR)
            draw.text((x1, y2 - (bottom - top)), label, fill=(0, 0, 0), font=font)
        pixels = np.asarray(picture)
    return pixels


def image_boxes(tag: str, tensor_image: Any, tensor_boxes: Any, rescale: float = 1,
                dataformats: str = "CHW", labels: Sequence[str] | None = None) -> Summary:
    """An image summary with boxes drawn on it (see :func:`draw_boxes`)."""
    pixels = to_uint8_image(convert_to_HWC(make_np(tensor_image), dataformats))
    boxed = draw_boxes(pixels, make_np(tensor_boxes), labels)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(boxed, rescale))])


# --- precision-recall curves, custom scalar layouts -----------------------------------------
_PR_THRESHOLDS_MAX = 127  # more thresholds than this break TensorBoard's pr_curves protobuf
_MINIMUM_COUNT = 1e-7  # keeps precision and recall finite where nothing was predicted


def compute_curve(labels: np.ndarray, predictions: np.ndarray, num_thresholds: int,
                  weights: Any = None) -> np.ndarray:
    """The (6, num_thresholds) rows TP, FP, TN, FN, precision, recall at the thresholds
    k / (num_thresholds - 1): a prediction counts as positive at every threshold up to its
    own, rounded down to the grid."""
    weights = 1.0 if weights is None else weights
    bucket = np.floor(predictions * (num_thresholds - 1)).astype(np.int64)
    bucket = bucket.clip(0, num_thresholds - 1).reshape(-1)
    positive = (labels.astype(np.float64) * weights).reshape(-1)
    negative = ((1.0 - labels.astype(np.float64)) * weights).reshape(-1)
    # counts per bucket, then summed from the top: everything at or above each threshold
    tp = np.bincount(bucket, positive, num_thresholds)[::-1].cumsum()[::-1]
    fp = np.bincount(bucket, negative, num_thresholds)[::-1].cumsum()[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    precision = tp / np.maximum(_MINIMUM_COUNT, tp + fp)
    recall = tp / np.maximum(_MINIMUM_COUNT, tp + fn)
    return np.stack([tp, fp, tn, fn, precision, recall])


def pr_curve_raw(tag: str, tp: Any, fp: Any, tn: Any, fn: Any, precision: Any, recall: Any,
                 num_thresholds: int = 127, weights: Any = None) -> Summary:
    """A pr_curves summary from precomputed counts, precision and recall."""
    from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData

    num_thresholds = min(num_thresholds, _PR_THRESHOLDS_MAX)
    rows = np.stack([np.asarray(r, dtype=np.float64) for r in (tp, fp, tn, fn, precision,
                                                                   recall)])
    proto = TensorProto(dtype="DT_FLOAT", float_val=rows.reshape(-1).tolist(),
                        tensor_shape=_shape_proto(rows.shape))
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    return Summary(value=[Summary.Value(tag=tag, tensor=proto,
                                        metadata=_plugin_metadata("pr_curves", content))])


def pr_curve(tag: str, labels: Any, predictions: Any, num_thresholds: int = 127,
             weights: Any = None) -> Summary:
    """A pr_curves summary of binary ``labels`` against ``predictions`` in [0, 1]."""
    num_thresholds = min(num_thresholds, _PR_THRESHOLDS_MAX)
    curve = compute_curve(make_np(labels), make_np(predictions), num_thresholds, weights)
    return pr_curve_raw(tag, *curve, num_thresholds=num_thresholds)


def custom_scalars(layout: dict[str, dict[str, list[Any]]]) -> Summary:
    """The custom_scalars plugin's layout: ``{category: {chart title: [kind, tags]}}`` where
    kind is ``"Multiline"`` (tags: regular expressions of scalar tags) or ``"Margin"`` (tags:
    value, lower and upper)."""
    from tensorboard.plugins.custom_scalar import layout_pb2

    categories = []
    for category, charts in layout.items():
        built = []
        for title, (kind, tags) in charts.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1],
                                                              upper=tags[2])
                built.append(layout_pb2.Chart(
                    title=title, margin=layout_pb2.MarginChartContent(series=[series])))
            else:
                built.append(layout_pb2.Chart(
                    title=title, multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=category, chart=built))
    proto = TensorProto(dtype="DT_STRING", tensor_shape=TensorShapeProto(),
                        string_val=[layout_pb2.Layout(category=categories).SerializeToString()])
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=proto,
                                        metadata=_plugin_metadata("custom_scalars"))])


# --- meshes and point clouds ----------------------------------------------------------------
def mesh(tag: str, vertices: Any, colors: Any = None, faces: Any = None,
         config_dict: dict[str, Any] | None = None, display_name: str | None = None,
         description: str | None = None) -> Summary:
    """The mesh plugin's summaries: one float tensor each for the (B, N, 3) ``vertices``, and
    the optional ``faces`` (vertex indices) and ``colors``, with ``config_dict`` (three.js
    settings) as JSON."""
    import json

    from tensorboard.plugins.mesh import metadata
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData

    json_config = json.dumps(config_dict, sort_keys=True) if config_dict else "{}"
    parts = [(array, kind) for array, kind in ((vertices, MeshPluginData.VERTEX),
                                               (faces, MeshPluginData.FACE),
                                               (colors, MeshPluginData.COLOR))
             if array is not None]
    components = metadata.get_components_bitmask([kind for _, kind in parts])
    values = []
    for array, kind in parts:
        data = make_np(array).astype(np.float32)
        smd = metadata.create_summary_metadata(tag, display_name, kind, components,
                                               list(data.shape), description,
                                               json_config=json_config)
        proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                            tensor_shape=_shape_proto(data.shape))
        values.append(Summary.Value(tag=metadata.get_instance_name(tag, kind), tensor=proto,
                                    metadata=smd))
    return Summary(value=values)
