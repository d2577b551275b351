"""``SummaryWriter`` and ``FileWriter``: log training data to TensorBoard event files.

The event files are written by the ``tensorboard`` package's ``EventFileWriter`` (a queue and
a background thread that flushes every ``flush_secs``); this module builds the summaries
(``summary.py``, ``_graph.py``, ``_embedding.py``) and decides which file each one goes to.
"""

from __future__ import annotations

import os
import socket
import time
import warnings
from datetime import datetime
from types import TracebackType
from typing import Any

from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter

import torch

from . import _embedding, summary
from ._convert import figure_to_image, make_np
from ._graph import graph

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes ``Event`` and ``Summary`` protocol buffers to one event file in ``log_dir``."""

    def __init__(self, log_dir: str | os.PathLike[str], max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = "") -> None:
        self._options = (str(log_dir), max_queue, flush_secs, filename_suffix)
        self.event_writer = EventFileWriter(*self._options)
        self._closed = False

    def get_logdir(self) -> str:
        """The directory the event file is in."""
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: int | None = None,
                  walltime: float | None = None) -> None:
        """Write ``event``, stamped with ``walltime`` (default: now) and ``step``."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            # a numpy or tensor step would not convert inside protobuf
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary: Summary, global_step: int | None = None,
                    walltime: float | None = None) -> None:
        """Write ``summary`` as an event at ``global_step``."""
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile: tuple[GraphDef, RunMetadata],
                  walltime: float | None = None) -> None:
        """Write a ``(GraphDef, RunMetadata)`` pair: the graph and its run statistics."""
        graph_def, run_metadata = graph_profile
        self.add_event(Event(graph_def=graph_def.SerializeToString()), None, walltime)
        tagged = TaggedRunMetadata(tag="step1", run_metadata=run_metadata.SerializeToString())
        self.add_event(Event(tagged_run_metadata=tagged), None, walltime)

    def add_onnx_graph(self, graph: GraphDef, walltime: float | None = None) -> None:
        """Write a ``GraphDef`` alone."""
        self.add_event(Event(graph_def=graph.SerializeToString()), None, walltime)

    def flush(self) -> None:
        """Write the pending events to disk."""
        self.event_writer.flush()

    def close(self) -> None:
        """Flush and close the event file."""
        self.event_writer.close()
        self._closed = True

    def reopen(self) -> None:
        """After :meth:`close`, continue in a new event file in the same directory."""
        if self._closed:
            self.event_writer = EventFileWriter(*self._options)
            self._closed = False


def _default_log_dir(comment: str) -> str:
    """``runs/<Mon DD_HH-MM-SS>_<host><comment>``, as PyTorch names a run."""
    stamp = datetime.now().strftime("%b%d_%H-%M-%S")
    return os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")


class SummaryWriter:
    """Writes scalars, histograms, images, text, graphs, hyperparameters and embeddings to
    event files in ``log_dir`` for TensorBoard.

    ``log_dir`` defaults to ``runs/<date-time>_<host><comment>``. ``purge_step`` (after a
    crash at step T+X, restarting at T) hides the events at steps >= T already in the
    directory. ``max_queue`` events are queued before an ``add_*`` call writes them;
    ``flush_secs`` is how often the queue is written anyway. Use it as a context manager or
    call :meth:`close` at the end."""

    def __init__(self, log_dir: str | os.PathLike[str] | None = None, comment: str = "",
                 purge_step: int | None = None, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:
        self.log_dir = str(log_dir) if log_dir else _default_log_dir(comment)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        # log directory -> writer: this run's and one per add_scalars series
        self.all_writers: dict[str, FileWriter] | None = None
        self._get_file_writer()
        self.default_bins = summary.default_bins()

    def _get_file_writer(self) -> FileWriter:
        """This run's writer, made again (in a new file) after :meth:`close`."""
        if self.file_writer is None or self.all_writers is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # TensorBoard drops the earlier events at steps >= a restart's step
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=step, session_log=SessionLog(
                    status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory the event files are written to."""
        return self.log_dir

    # --- numbers ---------------------------------------------------------------------------
    def add_scalar(self, tag: str, scalar_value: Any, global_step: int | None = None,
                   walltime: float | None = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """Log one number (a Python number, a one-element tensor or array) under ``tag``."""
        self._get_file_writer().add_summary(
            summary.scalar(tag, scalar_value, new_style=new_style,
                           double_precision=double_precision), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict[str, Any],
                    global_step: int | None = None, walltime: float | None = None) -> None:
        """Log several numbers on one chart: each key is a run of its own, in the directory
        ``<log_dir>/<main_tag>_<key>`` (with ``/`` in ``main_tag`` replaced by ``_``)."""
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        assert self.all_writers is not None
        for tag, value in tag_scalar_dict.items():
            series_dir = f"{root}/{main_tag.replace('/', '_')}_{tag}"
            writer = self.all_writers.get(series_dir)
            if writer is None:
                writer = FileWriter(series_dir, self.max_queue, self.flush_secs,
                                    self.filename_suffix)
                self.all_writers[series_dir] = writer
            writer.add_summary(summary.scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag: str, tensor: torch.Tensor, global_step: int | None = None,
                   walltime: float | None = None) -> None:
        """Log a whole tensor (read back by TensorBoard's tensor plugin)."""
        self._get_file_writer().add_summary(summary.tensor_proto(tag, tensor), global_step,
                                            walltime)

    def add_histogram(self, tag: str, values: Any, global_step: int | None = None,
                      bins: Any = "tensorflow", walltime: float | None = None,
                      max_bins: int | None = None) -> None:
        """Log the distribution of ``values``: ``bins`` is ``"tensorflow"`` (buckets ~10% wide
        at every magnitude) or anything ``numpy.histogram`` takes (``"auto"``, ``"fd"``,
        ``"sturges"``, a count, edges)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(
            summary.histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag: str, min: float, max: float, num: int,
                          sum: float, sum_squares: float, bucket_limits: Any,
                          bucket_counts: Any, global_step: int | None = None,
                          walltime: float | None = None) -> None:
        """Log a histogram from its statistics and buckets (``bucket_limits`` are the right
        edges, one per count)."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._get_file_writer().add_summary(
            summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                  bucket_counts), global_step, walltime)

    def add_hparams(self, hparam_dict: dict[str, Any], metric_dict: dict[str, Any],
                    hparam_domain_discrete: dict[str, list[Any]] | None = None,
                    run_name: str | None = None, global_step: int | None = None) -> None:
        """Log one run's hyperparameters with its final metrics, for the HPARAMS tab; written
        to ``<log_dir>/<run_name>`` (default: the current time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        records = summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run_dir = os.path.join(self._get_file_writer().get_logdir(),
                               run_name or str(time.time()))
        with SummaryWriter(log_dir=run_dir) as run_writer:
            for record in records:
                run_writer._get_file_writer().add_summary(record, global_step)
            for tag, value in metric_dict.items():
                run_writer.add_scalar(tag, value, global_step)

    # --- pictures, sound, text -------------------------------------------------------------
    def add_image(self, tag: str, img_tensor: Any, global_step: int | None = None,
                  walltime: float | None = None, dataformats: str = "CHW") -> None:
        """Log an image: ``img_tensor`` in layout ``dataformats`` (``CHW``, ``HWC``, ``HW``),
        1, 3 or 4 channels, floats in 0..1 or uint8 in 0..255."""
        self._get_file_writer().add_summary(
            summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor: Any, global_step: int | None = None,
                   walltime: float | None = None, dataformats: str = "NCHW") -> None:
        """Log a batch of images, tiled into one grid (eight per row)."""
        self._get_file_writer().add_summary(
            summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_image_with_boxes(self, tag: str, img_tensor: Any, box_tensor: Any,
                             global_step: int | None = None, walltime: float | None = None,
                             rescale: float = 1, dataformats: str = "CHW",
                             labels: list[str] | str | None = None) -> None:
        """Log an image with boxes drawn on it: ``box_tensor`` (N, 4) holds x1, y1, x2, y2 in
        pixels; ``labels`` (one per box, drawn with Pillow) are dropped if their count is not
        N, as in PyTorch."""
        if isinstance(labels, str):
            labels = [labels]
        if labels is not None and len(labels) != box_tensor.shape[0]:
            labels = None
        self._get_file_writer().add_summary(
            summary.image_boxes(tag, img_tensor, box_tensor, rescale=rescale,
                                dataformats=dataformats, labels=labels), global_step, walltime)

    def add_figure(self, tag: str, figure: Any, global_step: int | None = None,
                   close: bool = True, walltime: float | None = None) -> None:
        """Log a matplotlib figure (or a list of them, as a grid) as an image; ``close``
        closes it afterwards. Needs matplotlib."""
        layout = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                       dataformats=layout)

    def add_video(self, tag: str, vid_tensor: Any, global_step: int | None = None,
                  fps: float = 4, walltime: float | None = None) -> None:
        """Log videos: ``vid_tensor`` (N, T, C, H, W), floats in 0..1 or uint8, shown as one
        looping GIF with the N videos in a grid, at ``fps`` frames a second."""
        self._get_file_writer().add_summary(summary.video(tag, vid_tensor, fps), global_step,
                                            walltime)

    def add_audio(self, tag: str, snd_tensor: Any, global_step: int | None = None,
                  sample_rate: int = 44100, walltime: float | None = None) -> None:
        """Log mono audio: samples in [-1, 1], shape (L,) or (1, L)."""
        self._get_file_writer().add_summary(
            summary.audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        """Log text (markdown is rendered by TensorBoard)."""
        self._get_file_writer().add_summary(summary.text(tag, text_string), global_step,
                                            walltime)

    # --- curves and dashboard layouts -----------------------------------------------------
    def add_pr_curve(self, tag: str, labels: Any, predictions: Any,
                     global_step: int | None = None, num_thresholds: int = 127,
                     weights: Any = None, walltime: float | None = None) -> None:
        """Log a precision-recall curve of binary ``labels`` against ``predictions`` in
        [0, 1], at ``num_thresholds`` (at most 127) evenly spaced thresholds."""
        self._get_file_writer().add_summary(
            summary.pr_curve(tag, make_np(labels), make_np(predictions), num_thresholds,
                             weights), global_step, walltime)

    def add_pr_curve_raw(self, tag: str, true_positive_counts: Any,
                         false_positive_counts: Any, true_negative_counts: Any,
                         false_negative_counts: Any, precision: Any, recall: Any,
                         global_step: int | None = None, num_thresholds: int = 127,
                         weights: Any = None, walltime: float | None = None) -> None:
        """Log a precision-recall curve from precomputed counts, precision and recall."""
        self._get_file_writer().add_summary(
            summary.pr_curve_raw(tag, make_np(true_positive_counts),
                                 make_np(false_positive_counts), make_np(true_negative_counts),
                                 make_np(false_negative_counts), make_np(precision),
                                 make_np(recall), num_thresholds, weights),
            global_step, walltime)

    def add_custom_scalars(self, layout: dict[str, dict[str, list[Any]]]) -> None:
        """Lay out the CUSTOM SCALARS dashboard: ``{category: {title: [kind, tags]}}`` with kind
        ``"Multiline"`` or ``"Margin"`` (see :func:`summary.custom_scalars`)."""
        self._get_file_writer().add_summary(summary.custom_scalars(layout))

    def add_custom_scalars_multilinechart(self, tags: list[str], category: str = "default",
                                          title: str = "untitled") -> None:
        """One chart of the CUSTOM SCALARS dashboard showing the scalars ``tags``."""
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags: list[str], category: str = "default",
                                       title: str = "untitled") -> None:
        """One chart of the CUSTOM SCALARS dashboard: a value and its lower and upper bounds
        (``tags`` names the three scalars)."""
        if len(tags) != 3:
            raise AssertionError("len(tags) != 3")
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_mesh(self, tag: str, vertices: Any, colors: Any = None, faces: Any = None,
                 config_dict: dict[str, Any] | None = None, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        """Log a 3D mesh or point cloud: ``vertices`` (B, N, 3), optional ``faces`` (B, F, 3)
        vertex indices and ``colors`` (B, N, 3) in 0..255, ``config_dict`` three.js settings."""
        self._get_file_writer().add_summary(
            summary.mesh(tag, vertices, colors, faces, config_dict), global_step, walltime)

    # --- models ----------------------------------------------------------------------------
    def add_graph(self, model: torch.nn.Module, input_to_model: Any = None,
                  verbose: bool = False, use_strict_trace: bool = True) -> None:
        """Log the graph of ``model``: it runs once on ``input_to_model`` (a tensor or a tuple
        of them) and every operator call becomes a node, inside its module's scope."""
        self._get_file_writer().add_graph(graph(model, input_to_model, verbose,
                                                use_strict_trace))

    def add_onnx_graph(self, prototxt: str | os.PathLike[str]) -> None:
        """Log the graph of the ONNX model file ``prototxt`` (needs the ``onnx`` package)."""
        from ._onnx_graph import load_onnx_graph

        self._get_file_writer().add_onnx_graph(load_onnx_graph(prototxt))

    @staticmethod
    def _encode(rawstr: str) -> str:
        """``rawstr`` with ``%``, ``/`` and ``\\`` percent-encoded (a tag as a folder name)."""
        return "".join(f"%{ord(c):02x}" if c in "%/\\" else c for c in rawstr)

    def add_embedding(self, mat: Any, metadata: list[Any] | None = None,
                      label_img: torch.Tensor | None = None, global_step: int | None = None,
                      tag: str = "default", metadata_header: list[str] | None = None) -> None:
        """Log points for the projector: ``mat`` (N, D), with optional labels ``metadata``
        (N of them, or rows of columns named by ``metadata_header``) and thumbnails
        ``label_img`` (N, C, H, W)."""
        from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

        matrix = make_np(mat)
        global_step = 0 if global_step is None else int(global_step)
        subdir = f"{global_step:05d}/{self._encode(tag)}"
        log_dir = self._get_file_writer().get_logdir()
        folder = os.path.join(log_dir, subdir)
        if os.path.isdir(folder):
            warnings.warn("Embedding dir exists, did you set global_step for add_embedding()?",
                          stacklevel=2)
        elif os.path.exists(folder):
            raise NotADirectoryError(f"Path: `{folder}` exists, but is a file. Cannot proceed.")
        else:
            os.makedirs(folder)
        if metadata is not None:
            if matrix.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            _embedding.write_metadata(metadata, folder, metadata_header)
        if label_img is not None:
            if matrix.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            _embedding.write_sprite(label_img, folder)
        if matrix.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data "
                                 "points")
        _embedding.write_tensors(matrix, folder)
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        self._projector_config.embeddings.append(_embedding.embedding_info(
            tag, global_step, subdir, metadata is not None, label_img))
        _embedding.write_config(self._projector_config, log_dir)

    # --- lifecycle -------------------------------------------------------------------------
    def flush(self) -> None:
        """Write every pending event of every file to disk."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self) -> None:
        """Flush and close the event files; a later ``add_*`` call starts new ones."""
        for writer in (self.all_writers or {}).values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
