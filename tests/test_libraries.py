"""Libraries written for PyTorch, run on Plait: lightning trains and checkpoints, a
torch_geometric graph convolution, torchmetrics, einops, rotary-embedding-torch, diffusers'
noise schedule, kornia's filters and colour conversion, accelerate's training step, peft's
LoRA update, torchvision's boxes and transforms, ignite's trainer, opacus' per-sample
gradients, a zuko flow's Jacobian, pytorch-metric-learning's triplet loss and tensordict's
containers (vmap over them, swapping a module's parameters) compute what their
definitions say (checked against formulas written here); a diffusers UNet, torchvision's ResNet
and a timm ViT build, run and train. The tests session installs them; elsewhere these tests
skip, naming the package."""

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


def test_diffusers_noising_formula_and_a_unet_training_step() -> None:
    pytest.importorskip("diffusers", reason="diffusers is not installed")
    from diffusers import DDPMScheduler, UNet2DModel

    scheduler = DDPMScheduler(num_train_timesteps=100)
    x, noise = torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8)
    steps = torch.tensor([3, 70])
    noisy = scheduler.add_noise(x, noise, steps)
    # x_t = sqrt(abar_t) x + sqrt(1 - abar_t) noise, abar_t the product of (1 - beta_s), s <= t
    betas = torch.linspace(1e-4, 0.02, 100, dtype=torch.float64)
    abar = torch.cumprod(1 - betas, 0)[steps].float().view(2, 1, 1, 1)
    torch.testing.assert_close(noisy, abar.sqrt() * x + (1 - abar).sqrt() * noise)

    torch.manual_seed(0)
    unet = UNet2DModel(sample_size=8, in_channels=3, out_channels=3, layers_per_block=1,
                       block_out_channels=(8, 16), norm_num_groups=4,
                       down_block_types=("DownBlock2D", "AttnDownBlock2D"),
                       up_block_types=("AttnUpBlock2D", "UpBlock2D"))
    predicted = unet(noisy, steps).sample
    assert predicted.shape == x.shape
    F.mse_loss(predicted, noise).backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in unet.parameters())


def test_kornia_blur_is_the_separable_gaussian_and_grayscale_the_luma_weights() -> None:
    kornia = pytest.importorskip("kornia", reason="kornia is not installed")
    impulse = torch.zeros(1, 1, 7, 7)
    impulse[0, 0, 3, 3] = 1.0
    blurred = kornia.filters.gaussian_blur2d(impulse, (5, 5), (1.0, 1.0))
    g = torch.exp(-torch.arange(-2.0, 3.0) ** 2 / 2)
    g = g / g.sum()
    torch.testing.assert_close(blurred[0, 0, 1:6, 1:6], torch.outer(g, g))
    rgb = torch.rand(2, 3, 4, 4)
    gray = kornia.color.rgb_to_grayscale(rgb)
    torch.testing.assert_close(gray[:, 0], 0.299 * rgb[:, 0] + 0.587 * rgb[:, 1]
                               + 0.114 * rgb[:, 2])


def test_accelerate_prepares_and_steps_as_plain_pytorch() -> None:
    pytest.importorskip("accelerate", reason="accelerate is not installed")
    from accelerate import Accelerator

    from torch.utils.data import DataLoader, TensorDataset

    data = TensorDataset(torch.randn(8, 3), torch.randn(8, 1))
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    reference = nn.Linear(3, 1)
    reference.load_state_dict(model.state_dict())
    accelerator = Accelerator(cpu=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer, loader = accelerator.prepare(model, optimizer,
                                                   DataLoader(data, batch_size=8))
    for x, y in loader:
        accelerator.backward(F.mse_loss(model(x), y))
        optimizer.step()
        optimizer.zero_grad()
    x, y = data.tensors
    F.mse_loss(reference(x), y).backward()
    with torch.no_grad():
        for p in reference.parameters():
            p -= 0.1 * p.grad
    for mine, theirs in zip(accelerator.unwrap_model(model).parameters(),
                            reference.parameters()):
        torch.testing.assert_close(mine, theirs)


def test_torchvision_models_boxes_and_transforms() -> None:
    torchvision = pytest.importorskip("torchvision", reason="torchvision is not installed")
    import torchvision.transforms.v2 as T
    from torchvision.ops import box_iou

    boxes = torch.tensor([[0.0, 0.0, 2.0, 2.0], [1.0, 1.0, 3.0, 3.0]])
    # overlap 1 of union 4 + 4 - 1
    torch.testing.assert_close(box_iou(boxes, boxes), torch.tensor([[1.0, 1 / 7],
                                                                    [1 / 7, 1.0]]))
    image = torch.randint(0, 256, (3, 6, 6), dtype=torch.uint8)
    out = T.Compose([T.ToDtype(torch.float32, scale=True), T.Normalize([0.5] * 3, [0.25] * 3)])(
        image)
    torch.testing.assert_close(out, (image.float() / 255 - 0.5) / 0.25)
    model = torchvision.models.resnet18(num_classes=4).eval()
    with torch.no_grad():
        logits = model(torch.randn(2, 3, 32, 32))
    assert logits.shape == (2, 4) and torch.isfinite(logits).all()


def test_timm_builds_a_vision_transformer_that_trains() -> None:
    timm = pytest.importorskip("timm", reason="timm is not installed")
    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=3,
                              img_size=32, patch_size=8)
    logits = model(torch.randn(2, 3, 32, 32))
    assert logits.shape == (2, 3)
    F.cross_entropy(logits, torch.tensor([0, 2])).backward()
    assert model.patch_embed.proj.weight.grad.abs().sum() > 0


def test_peft_lora_adds_the_scaled_low_rank_update() -> None:
    pytest.importorskip("peft", reason="peft is not installed")
    from peft import LoraConfig, get_peft_model

    class Two(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = nn.Linear(6, 4)
            self.out = nn.Linear(4, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.out(self.proj(x))

    torch.manual_seed(0)
    model = get_peft_model(Two(), LoraConfig(r=2, lora_alpha=4, target_modules=["proj"]))
    lora = model.base_model.model.proj
    with torch.no_grad():
        lora.lora_B["default"].weight.normal_()  # B starts at zero: make the update visible
    x = torch.randn(3, 6)
    # y = W x + b + (alpha / r) * B A x
    a, b = lora.lora_A["default"].weight, lora.lora_B["default"].weight
    expected = lora.base_layer(x) + 2.0 * x @ a.T @ b.T
    torch.testing.assert_close(lora(x), expected)
    trainable = [name for name, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in name for name in trainable)
    model(x).sum().backward()
    assert lora.base_layer.weight.grad is None and a.grad is not None


def test_ignite_trainer_steps_as_a_plain_sgd_loop() -> None:
    """pytorch-ignite's supervised trainer is the loop zero_grad/forward/backward/step."""
    pytest.importorskip("ignite", reason="pytorch-ignite is not installed")
    from ignite.engine import create_supervised_trainer

    torch.manual_seed(0)
    x, y = torch.randn(12, 3), torch.randn(12, 1)
    batches = [(x[i:i + 4], y[i:i + 4]) for i in range(0, 12, 4)]
    model = torch.nn.Linear(3, 1)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    trainer = create_supervised_trainer(model, torch.optim.SGD(model.parameters(), lr=0.1),
                                        torch.nn.MSELoss())
    trainer.run(batches, max_epochs=2)
    w, b = start["weight"].clone(), start["bias"].clone()
    for _ in range(2):  # the same steps by hand: d/dw mean((xw + b - y)^2)
        for xb, yb in batches:
            residual = xb @ w.T + b - yb
            w -= 0.1 * 2 * (residual * xb).mean(0, keepdim=True)
            b -= 0.1 * 2 * residual.mean(0)
    assert torch.allclose(model.weight.detach(), w, atol=1e-6)
    assert torch.allclose(model.bias.detach(), b, atol=1e-6)


def test_opacus_per_sample_gradients_are_outer_products() -> None:
    """opacus' GradSampleModule (module hooks): a linear layer's per-sample weight gradient is
    the outer product of that sample's output gradient and input."""
    pytest.importorskip("opacus", reason="opacus is not installed")
    from opacus.grad_sample import GradSampleModule

    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 3)
    model = GradSampleModule(torch.nn.Sequential(layer), loss_reduction="sum")
    x = torch.randn(5, 4)
    out = model(x)
    seed = torch.randn(5, 3)
    out.backward(seed)
    assert layer.weight.grad_sample.shape == (5, 3, 4)
    for i in range(5):
        assert torch.allclose(layer.weight.grad_sample[i], torch.outer(seed[i], x[i]),
                              atol=1e-6)
        assert torch.allclose(layer.bias.grad_sample[i], seed[i])


def test_zuko_flow_inverts_and_its_log_determinant_is_the_jacobians() -> None:
    """A zuko masked autoregressive flow: the transform's inverse undoes it, and its
    log|det J| equals the log-determinant of the Jacobian autograd computes."""
    pytest.importorskip("zuko", reason="zuko is not installed")
    import zuko

    torch.manual_seed(0)
    flow = zuko.flows.MAF(features=3, transforms=2, hidden_features=(8,)).double()
    transform = flow().transform
    x = torch.randn(3, dtype=torch.float64)
    y = transform(x)
    assert torch.allclose(transform.inv(y), x, atol=1e-8)
    jacobian = torch.autograd.functional.jacobian(transform, x)
    assert torch.allclose(transform.log_abs_det_jacobian(x, y),
                          torch.linalg.slogdet(jacobian)[1], atol=1e-8)
    samples = flow().sample((4,))
    assert samples.shape == (4, 3) and torch.isfinite(flow().log_prob(samples)).all()


def test_metric_learning_triplet_loss_is_the_hinge_over_triplets() -> None:
    """pytorch-metric-learning's TripletMarginLoss on every valid triplet: the mean of
    relu(d(a, p) - d(a, n) + margin) over triplets with a positive loss."""
    pytest.importorskip("pytorch_metric_learning",
                        reason="pytorch-metric-learning is not installed")
    from pytorch_metric_learning import losses

    torch.manual_seed(0)
    emb = torch.randn(6, 3)
    labels = torch.tensor([0, 0, 1, 1, 2, 2])
    got = losses.TripletMarginLoss(margin=0.5)(emb, labels)
    normed = torch.nn.functional.normalize(emb, dim=1)
    dist = torch.cdist(normed, normed)
    values = []
    for a in range(6):
        for p in range(6):
            for n in range(6):
                if a != p and labels[a] == labels[p] and labels[a] != labels[n]:
                    values.append(torch.relu(dist[a, p] - dist[a, n] + 0.5))
    values = torch.stack(values)
    assert torch.allclose(got, values[values > 0].mean(), atol=1e-5)


def test_tensordict_vmaps_over_containers_and_swaps_module_parameters(tmp_path: Path) -> None:
    pytest.importorskip("tensordict", reason="tensordict is not installed")
    from tensordict import TensorDict

    td = TensorDict({"a": torch.arange(6.0).reshape(2, 3), "b": torch.ones(2, 3)},
                    batch_size=[2])
    # vmap maps over the container's batch dim (tensordict replaces vmap's input stages)
    mapped = torch.vmap(lambda t: t["a"] * t["b"] + 1)(td)
    assert mapped.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    summed = torch.vmap(lambda t: TensorDict({"s": t["a"].sum()}, batch_size=[]))(td)
    assert summed["s"].tolist() == [3.0, 12.0]
    assert torch.stack([td, td])["a"].shape == (2, 2, 3)

    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    params = TensorDict.from_module(model)
    zeros = params.apply(torch.zeros_like)
    x = torch.ones(5, 3)
    with zeros.to_module(model):  # the module computes with the swapped-in parameters
        assert model(x).abs().sum().item() == 0.0
    expected = F.linear(F.relu(F.linear(x, model[0].weight, model[0].bias)),
                        model[2].weight, model[2].bias)
    assert torch.equal(model(x), expected)  # and its own ones are back afterwards
    batched = torch.stack([params, params.apply(lambda p: p * 2)])

    def call(p: TensorDict, inputs: torch.Tensor) -> torch.Tensor:
        with p.to_module(model):
            return model(inputs)

    ensemble = torch.vmap(call, (0, None))(batched, x)
    assert ensemble.shape == (2, 5, 2)
    assert torch.allclose(ensemble[0], expected)

    saved = td.memmap_(str(tmp_path / "td"))  # memory-mapped files (torch.from_file)
    assert saved.is_memmap() and saved["a"].sum().item() == 15.0
