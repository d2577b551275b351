"""Libraries written for PyTorch, run on Plait: lightning trains and checkpoints, a
torch_geometric graph convolution, torchmetrics, einops and rotary-embedding-torch compute what
their definitions say (checked against formulas written here). The tests session installs them;
elsewhere these tests skip, naming the package."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import torch
import torch.nn as nn
import torch.nn.functional as F


def test_lightning_trains_validates_and_reloads_a_checkpoint(tmp_path: Path) -> None:
    lightning = pytest.importorskip("lightning", reason="lightning is not installed")
    from torch.utils.data import DataLoader, TensorDataset

    class Regressor(lightning.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))

        def training_step(self, batch: tuple[torch.Tensor, ...], index: int) -> torch.Tensor:
            x, y = batch
            loss = F.mse_loss(self.net(x), y)
            self.log("loss", loss)
            return loss

        def validation_step(self, batch: tuple[torch.Tensor, ...], index: int) -> None:
            x, y = batch
            self.log("val_loss", F.mse_loss(self.net(x), y))

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.Adam(self.parameters(), lr=1e-2)

    torch.manual_seed(0)
    x = torch.randn(64, 4)
    data = DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=16)
    model = Regressor()
    before = F.mse_loss(model.net(x), x.sum(1, keepdim=True)).item()
    trainer = lightning.Trainer(max_epochs=4, accelerator="cpu", logger=False,
                                enable_progress_bar=False, enable_model_summary=True,
                                default_root_dir=str(tmp_path))
    trainer.fit(model, data, data)
    assert trainer.callback_metrics["val_loss"].item() < before
    path = tmp_path / "model.ckpt"
    trainer.save_checkpoint(path)
    reloaded = Regressor.load_from_checkpoint(path)
    for a, b in zip(model.parameters(), reloaded.parameters(), strict=True):
        assert torch.equal(a, b)


def test_torch_geometric_gcn_conv_is_the_normalised_propagation() -> None:
    pytest.importorskip("torch_geometric", reason="torch_geometric is not installed")
    from torch_geometric.nn import GCNConv

    torch.manual_seed(0)
    edge_index = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
    x = torch.randn(4, 5)
    conv = GCNConv(5, 3)
    out = conv(x, edge_index)
    # GCN: D^-1/2 (A + I) D^-1/2 X W^T + b
    adjacency = torch.eye(4)
    adjacency[edge_index[1], edge_index[0]] = 1.0
    scale = adjacency.sum(1).rsqrt()
    propagated = scale[:, None] * adjacency * scale[None, :]
    expected = propagated @ (x @ conv.lin.weight.t()) + conv.bias
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)
    out.sum().backward()
    assert conv.lin.weight.grad is not None and conv.lin.weight.grad.shape == (3, 5)


def test_torchmetrics_accuracy_and_mean_squared_error() -> None:
    torchmetrics = pytest.importorskip("torchmetrics", reason="torchmetrics is not installed")

    accuracy = torchmetrics.Accuracy(task="multiclass", num_classes=3)
    accuracy.update(torch.tensor([0, 2, 1, 1]), torch.tensor([0, 1, 1, 1]))
    accuracy.update(torch.tensor([2, 2]), torch.tensor([2, 0]))
    assert accuracy.compute().item() == pytest.approx(4 / 6)
    mse = torchmetrics.MeanSquaredError()
    assert mse(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 3.0])).item() == \
        pytest.approx((0.25 + 1.0) / 2)


def test_einops_rearrange_reduce_and_repeat() -> None:
    einops = pytest.importorskip("einops", reason="einops is not installed")

    x = torch.arange(24.0).reshape(2, 3, 4)
    assert torch.equal(einops.rearrange(x, "b c w -> b w c"), x.permute(0, 2, 1))
    assert torch.equal(einops.rearrange(x, "b (g c) w -> b g c w", g=3), x[:, :, None])
    assert torch.equal(einops.reduce(x, "b c w -> b c", "max"), x.amax(-1))
    assert torch.equal(einops.repeat(x[0, 0], "w -> n w", n=2), x[0, 0].expand(2, 4))


def test_rotary_embedding_rotates_pairs_by_position_angles() -> None:
    pytest.importorskip("rotary_embedding_torch", reason="rotary-embedding-torch is not installed")
    from rotary_embedding_torch import RotaryEmbedding

    rotary = RotaryEmbedding(dim=4)
    q = torch.randn(1, 1, 3, 4)
    out = rotary.rotate_queries_or_keys(q)
    # pairs (0,1) and (2,3) of position p turn by p * theta_i, theta_i = 10000^(-2i/4)
    for position in range(3):
        for i, (a, b) in enumerate(((0, 1), (2, 3))):
            angle = position * 10000 ** (-2 * i / 4)
            cos, sin = math.cos(angle), math.sin(angle)
            x0, x1 = q[0, 0, position, a].item(), q[0, 0, position, b].item()
            assert out[0, 0, position, a].item() == pytest.approx(x0 * cos - x1 * sin, abs=1e-5)
            assert out[0, 0, position, b].item() == pytest.approx(x1 * cos + x0 * sin, abs=1e-5)
