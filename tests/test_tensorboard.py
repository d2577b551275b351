"""torch.utils.tensorboard.SummaryWriter: what it writes, read back with TensorBoard's own reader
(``EventAccumulator``), as TensorBoard's dashboards read it."""

from __future__ import annotations

import io
import math
import os
import subprocess
import sys
import textwrap
import wave

import numpy as np
import pytest

import torch
import torch.nn as nn

pytest.importorskip("tensorboard", reason="SummaryWriter needs the tensorboard package "
                                          "(nox -s tests installs it)")

from tensorboard.backend.event_processing.event_accumulator import (
    EventAccumulator,
)
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

from torch.utils.tensorboard import SummaryWriter


def read_run(log_dir) -> EventAccumulator:
    """Every event of ``log_dir`` (no sampling: size_guidance 0 keeps all)."""
    events = EventAccumulator(str(log_dir), size_guidance={"scalars": 0, "images": 0,
                                                           "histograms": 0, "tensors": 0,
                                                           "audio": 0})
    events.Reload()
    return events


def decode_png(data: bytes) -> np.ndarray:
    image = pytest.importorskip("PIL.Image", reason="Pillow decodes the PNGs in this test")
    return np.asarray(image.open(io.BytesIO(data)))


# --- import ---------------------------------------------------------------------------------
def test_import_without_tensorboard_fails_as_in_pytorch():
    script = textwrap.dedent("""
        import sys, types

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "tensorboard" or name.startswith("tensorboard."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)

        sys.meta_path.insert(0, Block())
        try:
            import torch.utils.tensorboard
        except ModuleNotFoundError as e:
            print("missing", e.name)
        sys.meta_path.pop(0)
        sys.modules["tensorboard"] = types.SimpleNamespace(__version__="1.14.0")
        try:
            import torch.utils.tensorboard
        except ImportError as e:
            print("old", e)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "missing tensorboard",
        "old TensorBoard logging requires TensorBoard version 1.15 or above"]


# --- scalars --------------------------------------------------------------------------------
def test_scalars_round_trip(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalar("loss", torch.tensor(2.5), 0)
        writer.add_scalar("loss", np.float32(1.25), 1, walltime=123.0)
        writer.add_scalar("loss", 0.5, global_step=torch.tensor(2))
        writer.add_scalar("acc", torch.tensor([0.75]), 7, new_style=True)
    events = read_run(tmp_path)
    loss = events.Scalars("loss")
    assert [(e.step, e.value) for e in loss] == [(0, 2.5), (1, 1.25), (2, 0.5)]
    assert loss[1].wall_time == 123.0
    (acc,) = events.Tensors("acc")
    assert acc.step == 7 and list(acc.tensor_proto.float_val) == [0.75]
    assert events.SummaryMetadata("acc").plugin_data.plugin_name == "scalars"


def test_scalar_of_several_values_is_refused(tmp_path):
    with SummaryWriter(tmp_path) as writer, pytest.raises(AssertionError, match="one element"):
        writer.add_scalar("x", torch.ones(3))


def test_add_scalars_writes_one_run_per_key(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        for step in range(3):
            writer.add_scalars("loss/all", {"train": 1.0 / (step + 1), "val": 2.0 * step}, step)
    train = read_run(tmp_path / "loss_all_train").Scalars("loss/all")
    val = read_run(tmp_path / "loss_all_val").Scalars("loss/all")
    assert [e.value for e in train] == pytest.approx([1.0, 0.5, 1 / 3])
    assert [e.value for e in val] == [0.0, 2.0, 4.0]


@pytest.mark.parametrize("dtype", [torch.int64, torch.float16, torch.float64, torch.bool,
                                   torch.complex64])
def test_add_tensor_decodes_with_tensorboards_reader(tmp_path, dtype):
    from tensorboard.util.tensor_util import make_ndarray

    tensor = torch.tensor([[0, 1, 2], [3, 4, 5]]).to(dtype)
    with SummaryWriter(tmp_path) as writer:
        writer.add_tensor("t", tensor, 4)
    (event,) = read_run(tmp_path).Tensors("t")
    assert event.step == 4
    assert np.array_equal(make_ndarray(event.tensor_proto), tensor.numpy())


# --- histograms -----------------------------------------------------------------------------
def tensorflow_edges() -> np.ndarray:
    """TensorFlow's default bucket edges: 0 and +-1e-12 * 1.1**k below 1e20."""
    positive = []
    edge = 1e-12
    while edge < 1e20:
        positive.append(edge)
        edge *= 1.1
    return np.array([-e for e in reversed(positive)] + [0.0] + positive)


def test_histogram_with_tensorflow_buckets(tmp_path):
    values = torch.linspace(-3, 5, 101)
    with SummaryWriter(tmp_path) as writer:
        writer.add_histogram("h", values, 3)
    (event,) = read_run(tmp_path).Histograms("h")
    histo = event.histogram_value
    v = values.numpy().astype(np.float64)
    assert event.step == 3
    assert (histo.min, histo.max, histo.num) == (-3.0, 5.0, 101)
    assert histo.sum == pytest.approx(v.sum(), abs=1e-9)
    assert histo.sum_squares == pytest.approx(float(v @ v))
    # bucket k holds the values in (limit[k-1], limit[k]]: with numpy's half-open bins
    # [edge_i, edge_i+1) each limit is the right edge of its bucket
    limits, counts = np.array(histo.bucket_limit), np.array(histo.bucket)
    assert counts[0] == 0 and counts.sum() == 101
    edges = tensorflow_edges()
    assert np.isin(limits, edges).all()
    index = np.searchsorted(edges, v, side="right") - 1  # bin of each value
    expected = np.bincount(index, minlength=len(edges) - 1)
    first = index.min()
    assert limits[0] == edges[first] and limits[-1] == edges[index.max() + 1]
    assert counts[1:].tolist() == expected[first:index.max() + 1].tolist()


@pytest.mark.parametrize("bins", ["auto", "fd", "sturges", 10])
def test_histogram_with_numpy_bins(tmp_path, bins):
    values = np.random.default_rng(0).standard_normal(300)
    with SummaryWriter(tmp_path) as writer:
        writer.add_histogram("h", torch.from_numpy(values), 0, bins=bins)
    histo = read_run(tmp_path).Histograms("h")[0].histogram_value
    counts, edges = np.histogram(values, bins=bins)
    filled = np.flatnonzero(counts)
    lo, hi = filled[0], filled[-1]
    assert list(histo.bucket) == [0] + counts[lo:hi + 1].tolist()
    assert list(histo.bucket_limit) == pytest.approx(edges[lo:hi + 2].tolist())


def test_histogram_max_bins_merges_neighbours(tmp_path):
    values = np.arange(20.0)
    with SummaryWriter(tmp_path) as writer:
        writer.add_histogram("h", values, 0, bins=20, max_bins=5)
    histo = read_run(tmp_path).Histograms("h")[0].histogram_value
    # 20 one-value bins merged four at a time: 5 buckets of 4, after the empty leading one
    assert list(histo.bucket) == [0, 4, 4, 4, 4, 4]
    assert list(histo.bucket_limit) == pytest.approx([0.0, 3.8, 7.6, 11.4, 15.2, 19.0])


def test_histogram_raw_and_empty_input(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_histogram_raw("r", min=0, max=3, num=6, sum=9, sum_squares=19,
                                 bucket_limits=[1, 2, 3], bucket_counts=[1, 2, 3],
                                 global_step=1)
        with pytest.raises(ValueError, match="len"):
            writer.add_histogram_raw("r", 0, 1, 1, 1, 1, [1, 2], [1])
        with pytest.raises(ValueError, match="no element"):
            writer.add_histogram("e", torch.tensor([]))
    histo = read_run(tmp_path).Histograms("r")[0].histogram_value
    assert list(histo.bucket) == [1, 2, 3] and histo.num == 6


# --- images ---------------------------------------------------------------------------------
def test_images_in_every_layout_decode_to_the_pixels(tmp_path):
    chw = torch.rand(3, 5, 7)
    hwc_uint8 = torch.randint(0, 256, (4, 6, 3), dtype=torch.uint8)
    hw = torch.linspace(0, 1, 12).reshape(3, 4)
    with SummaryWriter(tmp_path) as writer:
        writer.add_image("chw", chw, 0)
        writer.add_image("hwc", hwc_uint8, 0, dataformats="HWC")
        writer.add_image("hw", hw, 0, dataformats="HW")
        writer.add_image("rgba", torch.rand(4, 2, 3), 0)
    events = read_run(tmp_path)

    def pixels(tag):
        (event,) = events.Images(tag)
        decoded = decode_png(event.encoded_image_string)
        assert (event.height, event.width) == decoded.shape[:2]
        return decoded

    # floats are read as 0..1, scaled by 255 and truncated to uint8
    expected = (chw.numpy().transpose(1, 2, 0) * np.float32(255)).astype(np.uint8)
    assert np.array_equal(pixels("chw"), expected)
    assert np.array_equal(pixels("hwc"), hwc_uint8.numpy())
    grey = (hw.numpy() * np.float32(255)).astype(np.uint8)
    assert np.array_equal(pixels("hw"), np.stack([grey] * 3, axis=2))
    assert pixels("rgba").shape == (2, 3, 4)


def test_add_images_tiles_a_batch_eight_per_row(tmp_path):
    batch = torch.zeros(10, 1, 2, 3)
    batch[9] = 1.0  # the last image, alone on the second row
    with SummaryWriter(tmp_path) as writer:
        writer.add_images("batch", batch, 0)
        writer.add_images("nhwc", torch.rand(2, 4, 5, 3), 0, dataformats="NHWC")
    events = read_run(tmp_path)
    grid = decode_png(events.Images("batch")[0].encoded_image_string)
    assert grid.shape == (4, 24, 3)  # 2 rows of 2, 8 columns of 3
    assert (grid[2:, 3:6] == 255).all() and grid[2:, :3].sum() == 0 and grid[:2].sum() == 0
    assert (events.Images("nhwc")[0].height, events.Images("nhwc")[0].width) == (4, 10)


def test_image_with_a_bad_layout_is_refused(tmp_path):
    with SummaryWriter(tmp_path) as writer, pytest.raises(AssertionError, match="different"):
        writer.add_image("x", torch.rand(3, 4), 0)


def test_add_figure_renders_the_figure(tmp_path):
    pytest.importorskip("matplotlib", reason="add_figure renders with matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(2, 1), dpi=50)
    plt.plot([0, 1], [1, 0])
    with SummaryWriter(tmp_path) as writer:
        writer.add_figure("fig", figure, 0)
    (event,) = read_run(tmp_path).Images("fig")
    assert (event.width, event.height) == (100, 50)
    assert not plt.fignum_exists(figure.number)  # close=True closed it


def test_image_with_boxes_draws_red_outlines(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_image_with_boxes("boxes", torch.zeros(3, 20, 30),
                                    torch.tensor([[2.0, 3.0, 12.0, 15.0]]), 0)
    pixels = decode_png(read_run(tmp_path).Images("boxes")[0].encoded_image_string)
    red = (pixels[:, :, 0] == 255) & (pixels[:, :, 1] == 0)
    rows, cols = np.nonzero(red)
    assert (rows.min(), rows.max(), cols.min(), cols.max()) == (3, 15, 2, 12)
    assert not red[5:13, 4:10].any()  # an outline: the inside stays black


def test_add_video_is_a_looping_gif_of_the_frames_in_a_grid(tmp_path):
    image = pytest.importorskip("PIL.Image", reason="Pillow decodes the GIF in this test")
    from PIL import ImageSequence

    # three grey videos of 4 frames, 6x5 pixels: padded to four blank, in one row (rows are
    # 2 ** floor(log2(N) / 2) for N videos, as in PyTorch)
    video = torch.zeros(3, 4, 1, 6, 5, dtype=torch.uint8)
    for n in range(3):
        for t in range(4):
            video[n, t] = 20 * n + 60 * t
    with SummaryWriter(tmp_path) as writer:
        writer.add_video("clip", video, 0, fps=5)
    (event,) = read_run(tmp_path).Images("clip")
    assert (event.width, event.height) == (20, 6)
    gif = image.open(io.BytesIO(event.encoded_image_string))
    assert gif.info["duration"] == 200 and gif.info["loop"] == 0
    frames = [np.asarray(frame.convert("L")) for frame in ImageSequence.Iterator(gif)]
    assert len(frames) == 4
    for t, frame in enumerate(frames):
        for n, expected in enumerate([60 * t, 20 + 60 * t, 40 + 60 * t, 0]):
            assert (frame[:, 5 * n:5 * n + 5] == expected).all(), (t, n)


def test_video_colours_and_long_frames_survive_the_gif(tmp_path):
    image = pytest.importorskip("PIL.Image", reason="Pillow decodes the GIF in this test")
    # colours on the 6x6x6 cube come back exactly; 100x100 noise overflows the LZW table
    levels = torch.randint(0, 6, (1, 2, 3, 100, 100)) * 51
    with SummaryWriter(tmp_path) as writer:
        writer.add_video("noise", levels.to(torch.uint8), 0)
    gif = image.open(io.BytesIO(read_run(tmp_path).Images("noise")[0].encoded_image_string))
    for t in range(2):
        gif.seek(t)
        assert np.array_equal(np.asarray(gif.convert("RGB")),
                              levels[0, t].permute(1, 2, 0).numpy())


# --- text, audio ----------------------------------------------------------------------------
def test_text(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_text("notes", "**lr** = 0.1 ✓", 2)
    events = read_run(tmp_path)
    (event,) = events.Tensors("notes/text_summary")
    assert event.step == 2 and event.tensor_proto.string_val == ["**lr** = 0.1 ✓".encode()]
    assert events.SummaryMetadata("notes/text_summary").plugin_data.plugin_name == "text"


def test_audio_is_a_wav(tmp_path):
    samples = torch.sin(torch.arange(800) * (2 * math.pi * 440 / 8000))
    with SummaryWriter(tmp_path) as writer:
        writer.add_audio("tone", samples, 0, sample_rate=8000)
    (event,) = read_run(tmp_path).Audio("tone")
    with wave.open(io.BytesIO(event.encoded_audio_string)) as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getnframes()) == (8000, 1, 800)
        pcm = np.frombuffer(wav.readframes(800), "<i2")
    assert np.array_equal(pcm, (samples.numpy().clip(-1, 1) * 32767).astype(np.int16))


# --- graph ----------------------------------------------------------------------------------
class SmallNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU())
        self.head = nn.Linear(8, 3)

    def forward(self, image):
        return self.head(self.features(image).flatten(1)) * 2


def test_add_graph_records_the_forward_in_module_scopes(tmp_path):
    model = SmallNet()
    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(model, torch.randn(2, 1, 4, 4))
    events = read_run(tmp_path)
    assert events.Tags()["graph"] and events.Tags()["run_metadata"] == ["step1"]
    nodes = {node.name: node for node in events.Graph().node}
    conv = nodes["SmallNet/Sequential[features]/Conv2d[0]/convolution"]
    assert conv.op == "aten::convolution"
    assert list(conv.input) == ["input/image", "SmallNet/Sequential[features]/Conv2d[0]/weight",
                                "SmallNet/Sequential[features]/Conv2d[0]/bias"]
    assert [d.size for d in conv.attr["_output_shapes"].list.shape[0].dim] == [2, 2, 2, 2]
    relu = nodes["SmallNet/Sequential[features]/ReLU[1]/relu"]
    assert list(relu.input) == [conv.name]
    assert nodes["SmallNet/Linear[head]/weight"].op == "prim::GetAttr"
    assert nodes["input/image"].op == "IO Node"
    # every input names a node of the graph, and the output comes from the final multiply
    for node in nodes.values():
        assert all(name in nodes for name in node.input), node
    (mul,) = [n for n in nodes.values() if n.op == "aten::mul"]
    assert mul.name == "SmallNet/mul" and b"other : 2" in mul.attr["attr"].s
    assert list(nodes["output/output.0"].input) == [mul.name]


def test_add_graph_traces_in_eval_mode_and_restores_each_modules_mode(tmp_path):
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Dropout(0.5))
    model[2].eval()  # a submodule in another mode than its parent keeps it
    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(model, torch.randn(2, 1, 4, 4))
    assert model.training and model[1].training and not model[2].training
    # eval mode: the running statistics were read, not updated, and no dropout mask was drawn
    assert model[1].num_batches_tracked.item() == 0
    assert torch.equal(model[1].running_mean, torch.zeros(2))
    ops = {node.op for node in read_run(tmp_path).Graph().node}
    assert not {"aten::bernoulli_", "aten::native_dropout"} & ops


def test_add_onnx_graph(tmp_path):
    onnx = pytest.importorskip("onnx", reason="add_onnx_graph reads the file with onnx")
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.ones((4, 6), np.float32), "fc.weight")
    nodes = [helper.make_node("MatMul", ["x", "fc.weight"], ["/fc/MatMul_output_0"]),
             helper.make_node("Split", ["/fc/MatMul_output_0"], ["a", "b"], axis=1,
                              num_outputs=2),
             helper.make_node("Add", ["a", "b"], ["y"])]
    graph = helper.make_graph(
        nodes, "net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [weight])
    path = tmp_path / "net.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    with SummaryWriter(tmp_path / "run") as writer:
        writer.add_onnx_graph(str(path))
    nodes = {node.name: node for node in read_run(tmp_path / "run").Graph().node}
    assert nodes["x"].op == "Variable" and nodes["fc.weight"].op == "Variable"
    assert [d.size for d in nodes["x"].attr["shape"].shape.dim] == [2, 4]
    assert list(nodes["fc/MatMul_output_0"].input) == ["x", "fc.weight"]
    assert nodes["a"].op == "Split" and b"axis = 1" in nodes["a"].attr["parameters"].s
    assert list(nodes["y"].input) == ["a", "a:1"]  # Split's second output
    assert list(nodes["output/y"].input) == ["y"]


def test_add_graph_leaves_no_hooks_and_takes_tuples(tmp_path):
    class TwoInputs(nn.Module):
        def forward(self, a, b):
            return a + b, a * b

    model = TwoInputs()
    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(model, (torch.ones(2), torch.ones(2)))
        writer.add_graph(SmallNet(), torch.randn(1, 1, 4, 4))
    nodes = {node.name for node in read_run(tmp_path).Graph().node}
    assert "input/image" in nodes  # the last graph written is the one read
    assert not model._forward_hooks and not model._forward_pre_hooks


# --- curves and layouts ---------------------------------------------------------------------
def test_pr_curve_counts_at_each_threshold(tmp_path):
    labels = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    predictions = np.array([0.9, 0.8, 0.6, 0.45, 0.3, 0.1, 0.05, 0.95])
    with SummaryWriter(tmp_path) as writer:
        writer.add_pr_curve("pr", torch.from_numpy(labels), torch.from_numpy(predictions), 2,
                            num_thresholds=5)
        writer.add_pr_curve("capped", labels, predictions, 2, num_thresholds=500)
    events = read_run(tmp_path)
    (event,) = events.Tensors("pr")
    rows = np.array(event.tensor_proto.float_val).reshape(6, 5)
    # threshold k/4: a prediction is positive at k when floor(prediction * 4) >= k
    grid = np.floor(predictions * 4)
    tp = [((grid >= k) & (labels == 1)).sum() for k in range(5)]
    fp = [((grid >= k) & (labels == 0)).sum() for k in range(5)]
    assert rows[0].tolist() == tp and rows[1].tolist() == fp
    assert rows[2].tolist() == [4 - f for f in fp] and rows[3].tolist() == [4 - t for t in tp]
    expected_precision = [t / max(t + f, 1e-7) for t, f in zip(tp, fp)]
    assert rows[4] == pytest.approx(expected_precision) and rows[5] == pytest.approx(
        [t / 4 for t in tp])
    assert events.SummaryMetadata("pr").plugin_data.plugin_name == "pr_curves"
    assert events.Tensors("capped")[0].tensor_proto.tensor_shape.dim[1].size == 127


def test_custom_scalars_layout(tmp_path):
    from tensorboard.plugins.custom_scalar import layout_pb2

    with SummaryWriter(tmp_path) as writer:
        writer.add_custom_scalars({"losses": {"both": ["Multiline", ["loss/train", "loss/val"]]},
                                   "bands": {"acc": ["Margin", ["acc", "acc_lo", "acc_hi"]]}})
        with pytest.raises(AssertionError):
            writer.add_custom_scalars_marginchart(["a", "b"])
    (event,) = read_run(tmp_path).Tensors("custom_scalars__config__")
    layout = layout_pb2.Layout.FromString(event.tensor_proto.string_val[0])
    losses, bands = layout.category
    assert losses.title == "losses" and list(losses.chart[0].multiline.tag) == [
        "loss/train", "loss/val"]
    series = bands.chart[0].margin.series[0]
    assert (series.value, series.lower, series.upper) == ("acc", "acc_lo", "acc_hi")


def test_add_mesh_writes_vertices_faces_and_colours(tmp_path):
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData

    vertices = torch.tensor([[[1.0, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]])
    faces = torch.tensor([[[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]])
    colors = torch.tensor([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 0, 255]]])
    with SummaryWriter(tmp_path) as writer:
        writer.add_mesh("tetra", vertices, colors=colors, faces=faces,
                        config_dict={"camera": {"fov": 75}}, global_step=1)
    events = read_run(tmp_path)
    assert sorted(events.Tags()["tensors"]) == ["tetra_COLOR", "tetra_FACE", "tetra_VERTEX"]
    (vertex_event,) = events.Tensors("tetra_VERTEX")
    assert list(vertex_event.tensor_proto.float_val) == vertices.reshape(-1).tolist()
    data = MeshPluginData.FromString(
        events.SummaryMetadata("tetra_FACE").plugin_data.content)
    assert data.name == "tetra" and data.content_type == MeshPluginData.FACE
    assert list(data.shape) == [1, 4, 3] and data.json_config == '{"camera": {"fov": 75}}'


# --- hyperparameters, embeddings ------------------------------------------------------------
def test_add_hparams(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_hparams({"lr": 0.1, "optimizer": "adam", "layers": torch.tensor([3]),
                            "skip": None}, {"hparam/accuracy": 0.9}, run_name="trial",
                           hparam_domain_discrete={"optimizer": ["adam", "sgd"]})
        with pytest.raises(TypeError, match="same type"):
            writer.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": ["fast"]})
        with pytest.raises(TypeError, match="dictionary"):
            writer.add_hparams([("lr", 0.1)], {})
    events = read_run(tmp_path / "trial")
    assert [e.value for e in events.Scalars("hparam/accuracy")] == [pytest.approx(0.9)]
    start = HParamsPluginData.FromString(events.SummaryMetadata(
        "_hparams_/session_start_info").plugin_data.content).session_start_info
    assert start.hparams["lr"].number_value == 0.1
    assert start.hparams["optimizer"].string_value == "adam"
    assert start.hparams["layers"].number_value == 3
    assert "skip" not in start.hparams
    experiment = HParamsPluginData.FromString(events.SummaryMetadata(
        "_hparams_/experiment").plugin_data.content).experiment
    assert [m.name.tag for m in experiment.metric_infos] == ["hparam/accuracy"]
    infos = {info.name: info for info in experiment.hparam_infos}
    assert set(infos) == {"lr", "optimizer", "layers"}
    assert [v.string_value for v in infos["optimizer"].domain_discrete.values] == ["adam",
                                                                                   "sgd"]


def test_add_embedding_writes_the_projector_files(tmp_path):
    points = torch.arange(12.0).reshape(4, 3)
    with SummaryWriter(tmp_path) as writer:
        writer.add_embedding(points, metadata=["a", "b", "c", "d"],
                             label_img=torch.rand(4, 3, 2, 2), global_step=5, tag="my/emb")
    folder = tmp_path / "00005" / "my%2femb"
    rows = [[float(v) for v in line.split("\t")]
            for line in (folder / "tensors.tsv").read_text().splitlines()]
    assert rows == points.tolist()
    assert (folder / "metadata.tsv").read_text() == "a\nb\nc\nd\n"
    assert decode_png((folder / "sprite.png").read_bytes()).shape == (4, 4, 3)
    config = (tmp_path / "projector_config.pbtxt").read_text()
    assert 'tensor_name: "my/emb:00005"' in config and "single_image_dim: 2" in config


# --- files and lifecycle --------------------------------------------------------------------
def test_default_log_dir_and_comment(tmp_path, monkeypatch):
    import socket

    monkeypatch.chdir(tmp_path)
    writer = SummaryWriter(comment="_lr0.1")
    writer.close()
    (run,) = os.listdir(tmp_path / "runs")
    assert writer.get_logdir() == os.path.join("runs", run)
    assert run.endswith(f"_{socket.gethostname()}_lr0.1")
    assert any(f.startswith("events.out.tfevents.") for f in os.listdir(tmp_path / "runs" / run))


def test_close_then_log_again_starts_a_new_file(tmp_path):
    writer = SummaryWriter(tmp_path, filename_suffix=".mine")
    writer.add_scalar("x", 1.0, 0)
    writer.close()
    writer.add_scalar("x", 2.0, 1)
    writer.flush()
    writer.close()
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 2 and all(f.endswith(".mine") for f in files)
    assert [e.value for e in read_run(tmp_path).Scalars("x")] == [1.0, 2.0]


def test_purge_step_hides_the_later_steps_of_a_crashed_run(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        for step in range(5):
            writer.add_scalar("loss", float(step), step)
    with SummaryWriter(tmp_path, purge_step=3) as writer:
        writer.add_scalar("loss", 30.0, 3)
    assert [(e.step, e.value) for e in read_run(tmp_path).Scalars("loss")] == [
        (0, 0.0), (1, 1.0), (2, 2.0), (3, 30.0)]
