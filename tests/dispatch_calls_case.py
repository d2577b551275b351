"""Print, for common F./torch./Tensor calls, the aten calls a TorchDispatchMode sees.

Run it with Plait and with real PyTorch and diff the outputs (the recorded lists in
tests/test_dispatch_mode_silu.py were made this way).
"""
# ruff: noqa
import torch, torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
class L(TorchDispatchMode):
    def __init__(s): super().__init__(); s.ops=[]
    def __torch_dispatch__(s, f, t, a=(), k=None):
        s.ops.append(str(f)); return f(*a, **(k or {}))
x = torch.randn(3,4); m = x > 0
cases = {
 "mean_dim": lambda: x.mean(-1), "mean_all": lambda: x.mean(), "sum_dim": lambda: x.sum(-1),
 "pow2": lambda: x.pow(2), "silu": lambda: F.silu(x), "leaky": lambda: F.leaky_relu(x),
 "elu": lambda: F.elu(x), "hardtanh": lambda: F.hardtanh(x), "softplus": lambda: F.softplus(x),
 "relu": lambda: F.relu(x), "gelu": lambda: F.gelu(x), "sigmoid": lambda: torch.sigmoid(x),
 "tanh": lambda: torch.tanh(x), "softmax": lambda: F.softmax(x, -1), "log_softmax": lambda: F.log_softmax(x,-1),
 "clamp": lambda: x.clamp(-1, 1), "div": lambda: x / 2, "where": lambda: torch.where(m, x, 0.),
 "masked_fill": lambda: x.masked_fill(m, 0.), "amax": lambda: x.amax(-1), "var": lambda: x.var(-1),
 "norm": lambda: x.norm(), "layer_norm": lambda: F.layer_norm(x, (4,)), "mse": lambda: F.mse_loss(x, x*2),
 "hardsigmoid": lambda: F.hardsigmoid(x), "hardswish": lambda: F.hardswish(x), "mish": lambda: F.mish(x),
 "selu": lambda: F.selu(x), "celu": lambda: F.celu(x), "logsigmoid": lambda: F.logsigmoid(x),
 "rsqrt": lambda: x.abs().rsqrt() if False else torch.rsqrt(x), "prod": lambda: x.prod(-1),
 "index_select": lambda: x.index_select(0, torch.tensor([0,2])), "gather": lambda: x.gather(1, torch.zeros(3,1,dtype=torch.long)),
}
for n, f in cases.items():
    with L() as l: f()
    print(n, l.ops)
