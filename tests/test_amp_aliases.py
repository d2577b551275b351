"""torch.cuda.amp / torch.cpu.amp: PyTorch's deprecated aliases of torch.amp, importable and
usable without a CUDA backend, and torch.amp.custom_fwd / custom_bwd."""

import warnings

import pytest

import torch


def test_import_forms_without_gpu():
    import torch.cuda.amp as cuda_amp
    from torch.cuda.amp import GradScaler, autocast, custom_bwd, custom_fwd

    assert cuda_amp.GradScaler is GradScaler and torch.cuda.amp is cuda_amp
    assert issubclass(GradScaler, torch.amp.GradScaler)
    assert issubclass(autocast, torch.amp.autocast)
    assert callable(custom_fwd) and callable(custom_bwd)


def test_cuda_grad_scaler_warns_and_disables_when_cuda_unavailable():
    assert not torch.cuda.is_available()
    with pytest.warns(FutureWarning, match=r"torch\.amp\.GradScaler\('cuda'"):
        with pytest.warns(UserWarning, match="CUDA is not available"):
            scaler = torch.cuda.amp.GradScaler()
    assert not scaler.is_enabled()
    loss = torch.tensor(3.0)
    assert scaler.scale(loss) is loss  # disabled: no scaling


def test_disabled_cuda_forms_are_noops():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # only the FutureWarning is allowed
        with pytest.warns(FutureWarning):
            scaler = torch.cuda.amp.GradScaler(enabled=False)
        assert not scaler.is_enabled()
        with pytest.warns(FutureWarning, match=r"torch\.amp\.autocast\('cuda'"):
            ctx = torch.cuda.amp.autocast(enabled=False)
    x = torch.ones(2, 2)
    with ctx:
        assert not torch.is_autocast_enabled("cuda")
        assert (x @ x).dtype == torch.float32


def test_cpu_amp_aliases():
    with pytest.warns(FutureWarning, match=r"torch\.amp\.autocast\('cpu'"):
        ctx = torch.cpu.amp.autocast()
    a = torch.ones(4, 4)
    with ctx:
        assert torch.is_autocast_enabled("cpu")
        assert (a @ a).dtype == torch.bfloat16  # cpu autocast defaults to bfloat16
    assert not torch.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning, match=r"torch\.amp\.GradScaler\('cpu'"):
        scaler = torch.cpu.amp.GradScaler(init_scale=8.0)
    assert isinstance(scaler, torch.amp.GradScaler) and scaler.is_enabled()
    assert scaler.scale(torch.tensor(2.0)).item() == 16.0


class _MatMul(torch.autograd.Function):
    seen: dict = {}

    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    def forward(ctx, a, b):
        _MatMul.seen["fwd_dtypes"] = (a.dtype, b.dtype)
        _MatMul.seen["fwd_autocast"] = torch.is_autocast_enabled("cpu")
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, grad):
        _MatMul.seen["bwd_autocast"] = torch.is_autocast_enabled("cpu")
        a, b = ctx.saved_tensors
        return grad @ b.t(), a.t() @ grad


def test_custom_fwd_casts_inputs_and_custom_bwd_restores_state():
    a = torch.randn(3, 4, dtype=torch.bfloat16, requires_grad=True)
    b = torch.randn(4, 2, dtype=torch.bfloat16, requires_grad=True)
    with torch.autocast("cpu"):
        out = _MatMul.apply(a, b)
    assert _MatMul.seen["fwd_dtypes"] == (torch.float32, torch.float32)
    assert _MatMul.seen["fwd_autocast"] is False  # cast_inputs runs the forward outside
    assert out.dtype == torch.float32
    out.sum().backward()
    # the forward ran with autocast off (cast_inputs), so backward does too
    assert _MatMul.seen["bwd_autocast"] is False
    expected = torch.ones(3, 2) @ b.detach().float().t()
    assert torch.allclose(a.grad.float(), expected, atol=1e-2)


def test_custom_bwd_runs_backward_under_forward_autocast():
    seen = {}

    class Scale(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cpu")
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @torch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            seen["enabled"] = torch.is_autocast_enabled("cpu")
            return grad * 2

    x = torch.randn(3, requires_grad=True)
    with torch.autocast("cpu"):
        y = Scale.apply(x)
    assert not torch.is_autocast_enabled("cpu")
    y.sum().backward()
    assert seen["enabled"] is True
    assert torch.equal(x.grad, torch.full((3,), 2.0))


def test_cuda_custom_fwd_alias_warns():
    with pytest.warns(FutureWarning, match="custom_fwd"):
        deco = torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    assert callable(deco)
