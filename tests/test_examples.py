"""The training scripts of examples/ run unchanged on Plait (briefly: a few steps each).

Each script is written for PyTorch (nothing Plait-specific) and runs here in a subprocess with
small settings; the tests check that it trained (the loss went down), that its checkpoint loads
back into the script's own model, and what it printed (perplexity, accuracy, sampled text).
"""

from __future__ import annotations

import importlib.util
import math
import pathlib
import re
import subprocess
import sys
from types import ModuleType

import pytest

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SONNETS = EXAMPLES / "data" / "sonnets.txt"


def run_example(name: str, tmp_path: pathlib.Path, *args: str) -> str:
    """Run examples/<name>.py with ``args`` from ``tmp_path``; return its stdout."""
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), "--out", str(tmp_path), *args],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def load_example(name: str) -> ModuleType:
    """Import examples/<name>.py as a module (for its model classes)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def floats(pattern: str, text: str) -> list[float]:
    return [float(v) for v in re.findall(pattern, text)]


def sample_of(stdout: str) -> str:
    match = re.search(r"--- sample ---\n(.*)\n--- end of sample ---", stdout, re.S)
    assert match, stdout
    return match.group(1)


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None
                    or importlib.util.find_spec("tqdm") is None
                    or importlib.util.find_spec("matplotlib") is None,
                    reason="the demo needs scikit-learn, tqdm and matplotlib (nox -s tests "
                           "installs them)")
def test_digits_cnn_demo_trains_one_epoch(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "digits_cnn.py"), "--epochs", "1",
         "--out", str(tmp_path), "--min-accuracy", "0.5"],
        capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "epoch 1: loss" in out.stdout
    checkpoint = torch.load(tmp_path / "digits_cnn.pt")
    assert set(checkpoint) == {"model", "optimizer", "epoch"}
    assert checkpoint["model"]["0.weight"].shape == (16, 1, 3, 3)
    assert (tmp_path / "digits_cnn.png").stat().st_size > 10_000


SCRIPTS = ("char_gpt", "lstm_lm", "transformer_classifier", "cnn_batchnorm", "mlp",
           "tensorboard_profiler", "per_sample_grads", "vae", "spectrogram")


@pytest.mark.parametrize("name", SCRIPTS)
def test_scripts_import_only_pytorch_and_the_standard_library(name):
    """The scripts are plain PyTorch programs: nothing Plait-specific, so they run on both."""
    import ast

    tree = ast.parse((EXAMPLES / f"{name}.py").read_text(encoding="utf-8"))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            modules.add(node.module)
    roots = {m.split(".")[0] for m in modules}
    assert roots <= {"__future__", "argparse", "math", "pathlib", "time", "torch"}, modules
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not {n for n in names | attributes if "plait" in n.lower()}


def test_sonnets_text_is_plain_and_sized():
    text = SONNETS.read_text(encoding="utf-8")
    assert 20_000 <= len(text.encode("utf-8")) <= 60_000
    assert text.isascii()
    assert "Shall I compare thee to a summer's day?" in text


def test_char_gpt_trains_saves_and_samples(tmp_path):
    stdout = run_example(
        "char_gpt", tmp_path, "--steps", "20", "--eval-interval", "10", "--eval-iters", "2",
        "--warmup", "2", "--batch-size", "8", "--block-size", "32", "--n-embd", "32",
        "--n-head", "2", "--sample-chars", "60", "--prompt", "Shall I")
    train = floats(r"train loss (\d+\.\d+)", stdout)
    val = floats(r"val loss (\d+\.\d+)", stdout)
    assert len(train) == len(val) == 3, stdout
    assert train[0] == pytest.approx(math.log(61), abs=0.2)  # uniform over the vocabulary
    assert train[-1] < train[0] - 0.5 and val[-1] < val[0] - 0.5, stdout

    checkpoint = torch.load(tmp_path / "char_gpt.pt")
    assert set(checkpoint) == {"model", "optimizer", "step", "vocab", "config"}
    vocab = checkpoint["vocab"]
    assert vocab == "".join(sorted(set(SONNETS.read_text(encoding="utf-8"))))
    # the output layer shares the embedding matrix; both names are in the state dict
    state = checkpoint["model"]
    assert torch.equal(state["head.weight"], state["tok_emb.weight"])
    assert checkpoint["optimizer"]["state"][0]["step"].item() == 20
    assert [g["weight_decay"] for g in checkpoint["optimizer"]["param_groups"]] == [0.1, 0.0]
    gpt = load_example("char_gpt")
    model = gpt.GPT(len(vocab), dropout=0.0, **checkpoint["config"])
    model.load_state_dict(state)
    assert model.head.weight is model.tok_emb.weight

    sample = sample_of(stdout)
    assert sample.startswith("Shall I") and len(sample) == len("Shall I") + 60
    assert set(sample) <= set(vocab)


def test_lstm_lm_trains_reports_perplexity_and_samples(tmp_path):
    stdout = run_example(
        "lstm_lm", tmp_path, "--steps", "12", "--batch-size", "8", "--bptt", "16",
        "--embed", "16", "--hidden", "32", "--log-interval", "6", "--sample-chars", "40")
    before = re.search(r"before training: val loss (\d+\.\d+), val ppl (\d+\.\d+)", stdout)
    final = re.search(r"final: val loss (\d+\.\d+), val ppl (\d+\.\d+)", stdout)
    assert before and final, stdout
    for match in (before, final):
        assert float(match.group(2)) == pytest.approx(math.exp(float(match.group(1))),
                                                      rel=1e-3)
    assert float(final.group(1)) < float(before.group(1)) - 0.25, stdout
    assert len(floats(r"train loss (\d+\.\d+)", stdout)) == 2

    checkpoint = torch.load(tmp_path / "lstm_lm.pt")
    vocab = checkpoint["vocab"]
    lm = load_example("lstm_lm")
    model = lm.LSTMLanguageModel(len(vocab), 16, 32, 2, 0.2)
    model.load_state_dict(checkpoint["model"])
    assert checkpoint["model"]["lstm.weight_hh_l1"].shape == (4 * 32, 32)
    assert checkpoint["optimizer"]["state"][0]["step"].item() == 12

    sample = sample_of(stdout)
    assert sample.startswith("When ") and len(sample) == len("When ") + 40
    assert set(sample) <= set(vocab)


def test_lstm_lm_batchify_and_chunks():
    lm = load_example("lstm_lm")
    columns = lm.batchify(torch.arange(23), 4)
    assert columns.shape == (5, 4)
    assert columns[:, 1].tolist() == [5, 6, 7, 8, 9]
    pairs = list(lm.chunks(columns, 2))
    assert [x.shape[0] for x, _ in pairs] == [2, 2]
    assert torch.equal(pairs[1][1], columns[3:5])


def test_transformer_classifier_learns(tmp_path):
    stdout = run_example(
        "transformer_classifier", tmp_path, "--steps", "40", "--train-size", "640",
        "--test-size", "200", "--batch-size", "32", "--d-model", "32", "--warmup", "5",
        "--log-interval", "20", "--lr", "3e-3", "--symbols", "4", "--distractors", "4",
        "--max-len", "24")
    before = floats(r"before training: test accuracy (\d\.\d+)", stdout)
    final = floats(r"final: test accuracy (\d\.\d+)", stdout)
    losses = floats(r"train loss (\d+\.\d+)", stdout)
    assert len(losses) == 2 and losses[1] < losses[0], stdout
    assert final[0] > before[0] + 0.1, stdout

    checkpoint = torch.load(tmp_path / "transformer_classifier.pt")
    tc = load_example("transformer_classifier")
    model = tc.Classifier(9, 4, 24, 32, 4, 2, 0.1)
    model.load_state_dict(checkpoint["model"])
    assert checkpoint["step"] == 40
    assert checkpoint["scheduler"]["last_epoch"] == 40


def test_transformer_classifier_dataset_and_collate():
    tc = load_example("transformer_classifier")
    data = tc.MajorityDataset(50, symbols=3, distractors=2, min_len=3, max_len=9, seed=0)
    assert len(data) == 50
    for seq, label in data:
        counts = torch.bincount(seq, minlength=6)[1:4]
        assert 3 <= seq.numel() <= 9 and int(counts.argmax()) == label
        assert int((counts == counts.max()).sum()) == 1
    tokens, padding, labels = tc.collate([data[0], data[1], data[2]])
    lengths = [data[i][0].numel() for i in range(3)]
    assert tokens.shape == (3, max(lengths))
    assert padding.sum(1).tolist() == [max(lengths) - n for n in lengths]
    assert labels.tolist() == [data[i][1] for i in range(3)]


def test_cnn_batchnorm_trains(tmp_path):
    stdout = run_example(
        "cnn_batchnorm", tmp_path, "--steps", "40", "--train-size", "640",
        "--test-size", "200", "--batch-size", "32")
    before = floats(r"before training: test loss (\d+\.\d+)", stdout)
    epochs = floats(r"test loss (\d+\.\d+), test accuracy", stdout)
    train = floats(r"train loss (\d+\.\d+)", stdout)
    assert len(epochs) == 3 and len(train) == 2, stdout  # before, then 2 epochs of 20 steps
    assert epochs[-1] < before[0] - 0.1 and train[1] < train[0], stdout

    checkpoint = torch.load(tmp_path / "cnn_batchnorm.pt")
    state = checkpoint["model"]
    assert state["1.num_batches_tracked"].item() == 40
    assert not torch.equal(state["1.running_mean"], torch.zeros(16))
    cnn = load_example("cnn_batchnorm")
    model = cnn.make_model(0.25)
    model.load_state_dict(state)
    assert checkpoint["scheduler"]["total_steps"] == 40


def test_cnn_shapes_are_drawn():
    cnn = load_example("cnn_batchnorm")
    images, labels = cnn.make_shapes(60, 0.0, torch.Generator().manual_seed(0))
    assert images.shape == (60, 1, 16, 16) and labels.shape == (60,)
    lit = (images[:, 0] > 0).sum((1, 2))
    for label, pixels in zip(labels.tolist(), lit.tolist()):
        if cnn.CLASSES[label] in ("hbar", "vbar"):
            assert pixels in (5, 7, 9)  # 2 * size + 1 for size 2..4
        assert pixels > 0


def test_mlp_trains(tmp_path):
    stdout = run_example(
        "mlp", tmp_path, "--steps", "150", "--train-size", "1000", "--test-size", "300",
        "--batch-size", "50", "--lr", "0.1")
    before = floats(r"before training: test accuracy (\d\.\d+)", stdout)
    final = floats(r"final: test accuracy (\d\.\d+)", stdout)
    assert final[0] > before[0] + 0.2, stdout
    checkpoint = torch.load(tmp_path / "mlp.pt")
    mlp = load_example("mlp")
    model = mlp.MLP(2, 64, 3, 3)
    model.load_state_dict(checkpoint["model"])
    assert checkpoint["scheduler"]["milestones"] == {90: 1, 127: 1}
    assert "momentum_buffer" in checkpoint["optimizer"]["state"][0]


def test_mlp_with_worker_processes(tmp_path):
    stdout = run_example("mlp", tmp_path, "--steps", "8", "--train-size", "200",
                         "--test-size", "100", "--batch-size", "50", "--workers", "2")
    assert "final: test accuracy" in stdout


def test_tensorboard_profiler_logs_and_profiles(tmp_path):
    pytest.importorskip("tensorboard", reason="SummaryWriter needs the tensorboard package "
                                              "(nox -s tests installs it)")
    import json

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    stdout = run_example("tensorboard_profiler", tmp_path, "--steps", "12", "--eval-every", "6",
                         "--train-size", "256", "--test-size", "64")
    assert len(floats(r"test accuracy (\d\.\d+), ", stdout)) == 2, stdout
    table = stdout.split("--- profile of steps 2-4 ---")[1]
    assert "Self CPU %" in table and "aten::convolution" in table, stdout
    first = floats(r"final: train loss (\d+\.\d+) ->", stdout)[0]
    last = floats(r"final: train loss \d+\.\d+ -> (\d+\.\d+)", stdout)[0]
    assert first == pytest.approx(math.log(4), abs=0.3) and last < first, stdout

    run = tmp_path / "runs" / "tensorboard_profiler"
    (trace,) = run.glob("*.pt.trace.json")
    names = {event["name"] for event in json.loads(trace.read_text())["traceEvents"]}
    assert {"forward", "backward", "optimizer_step", "ProfilerStep#2", "ProfilerStep#4"} <= names
    events = EventAccumulator(str(run), size_guidance={"scalars": 0})
    events.Reload()
    assert [e.step for e in events.Scalars("train/loss")] == list(range(1, 13))
    assert len(events.Scalars("test/accuracy")) == 2
    assert "grads/features.0.weight" in events.Tags()["histograms"]
    inputs = events.Images("inputs")[0]
    assert (inputs.width, inputs.height) == (8 * 12, 2 * 12)  # 16 images, 8 per row
    graph_ops = {node.op for node in events.Graph().node}
    assert {"aten::convolution", "prim::GetAttr", "IO Node"} <= graph_ops
    assert {p.name for p in run.iterdir() if p.is_dir()} == {"hparams", "loss_train",
                                                             "loss_test"}

    checkpoint = torch.load(tmp_path / "tensorboard_profiler.pt")
    model = load_example("tensorboard_profiler").StripeNet(8)
    model.load_state_dict(checkpoint["model"])
    assert checkpoint["step"] == 12


def test_per_sample_grads_match_the_loop_and_train(tmp_path):
    stdout = run_example("per_sample_grads", tmp_path, "--steps", "50", "--train-size", "512",
                         "--test-size", "128")
    worst = floats(r"max abs difference (\d\.\d+e[+-]\d+)", stdout)
    assert len(worst) == 1 and worst[0] < 1e-5, stdout
    before = floats(r"before training: test accuracy (\d\.\d+)", stdout)[0]
    final = floats(r"final: test accuracy (\d\.\d+)", stdout)[0]
    assert before < 0.5 and final > 0.8, stdout  # four classes: chance is 0.25
    checkpoint = torch.load(tmp_path / "per_sample_grads.pt")
    model = load_example("per_sample_grads").StripeCNN(8, 8)
    model.load_state_dict(checkpoint["model"])
    assert checkpoint["step"] == 50


def test_vae_improves_its_elbo_and_samples(tmp_path):
    stdout = run_example("vae", tmp_path, "--steps", "60", "--train-size", "512",
                         "--test-size", "128", "--eval-interval", "30", "--hidden", "32",
                         "--lr", "5e-3", "--samples", "3")
    pattern = (r"test elbo (-?\d+\.\d+) \(reconstruction (-?\d+\.\d+), "
               r"kl (-?\d+\.\d+)\)")
    reports = [tuple(float(v) for v in match) for match in re.findall(pattern, stdout)]
    assert len(reports) == 3, stdout  # before training, steps 30 and 60
    for elbo, rec, kl in reports:
        assert elbo == pytest.approx(rec - kl, abs=2e-3) and kl >= 0
    # untrained logits are near 0: about log(1/2) per pixel of the 64
    assert reports[0][0] == pytest.approx(64 * math.log(0.5), abs=2.0)
    assert reports[-1][0] > reports[0][0] + 4, stdout
    samples = re.search(r"--- samples from the prior ---\n(.*)\n--- end of samples ---",
                        stdout, re.S)
    assert samples, stdout
    lines = samples.group(1).split("\n")
    assert len(lines) == 8 and all(re.fullmatch(r"[#.]{8}( {3}[#.]{8}){2}", ln) for ln in lines)
    checkpoint = torch.load(tmp_path / "vae.pt")
    model = load_example("vae").VAE(64, **checkpoint["config"])
    model.load_state_dict(checkpoint["model"])
    assert checkpoint["step"] == 60 and checkpoint["config"] == {"hidden": 32, "latent": 2}


def test_spectrogram_classifies_sounds_from_stft(tmp_path):
    stdout = run_example("spectrogram", tmp_path, "--steps", "40", "--train-size", "640",
                         "--test-size", "200", "--batch-size", "32", "--lr", "0.01")
    # the spectral check: a 1 kHz tone (1024 samples at 8 kHz: bins 7.8125 Hz apart)
    assert "1000 Hz tone peaks at 1000.0 Hz; stft (65, 33)" in stdout, stdout
    assert floats(r"istft round trip max error (\S+)", stdout)[0] < 1e-5, stdout
    before = floats(r"before training: test loss (\d+\.\d+)", stdout)
    accuracy = floats(r"test accuracy (\d+\.\d+),", stdout)
    assert floats(r"test loss (\d+\.\d+), test accuracy", stdout)[-1] < before[0] - 0.3, stdout
    assert accuracy[-1] >= 0.7, stdout  # five classes: chance is 0.2 (reaches 0.94 here)

    checkpoint = torch.load(tmp_path / "spectrogram.pt")
    model = load_example("spectrogram").SoundNet(**checkpoint["config"])
    model.load_state_dict(checkpoint["model"])
    # the Hann window is a buffer of the model, saved with it
    assert torch.allclose(checkpoint["model"]["spectrogram.window"], torch.hann_window(128))


def test_spectrogram_sounds_are_drawn():
    example = load_example("spectrogram")
    clips, labels = example.make_sounds(50, 0.0, torch.Generator().manual_seed(1))
    assert clips.shape == (50, 1024) and labels.shape == (50,)
    spectra = torch.fft.rfft(clips).abs()
    freqs = torch.fft.rfftfreq(1024, d=1 / 8000)
    peaks = freqs[spectra.argmax(1)]
    for label, peak in zip(labels.tolist(), peaks.tolist()):
        if example.CLASSES[label] == "low tone":
            assert 200 <= peak <= 750
        elif example.CLASSES[label] == "high tone":
            assert 1450 <= peak <= 3050
