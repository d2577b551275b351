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
x = torch.randn(3,4); m = x > 0; y = torch.randn(3,4); p = torch.rand(3,4); q = torch.rand(3,4)
t = torch.tensor([0, 3, 1]); t2 = torch.zeros(3, 4, dtype=torch.long); i4 = torch.randn(2, 4, 4, 4)
b3 = torch.randn(2, 3, 4); s3 = torch.randn(2, 3, 3)
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
 # more activations, losses, norms, pooling, in-place forms, indexing and products
 "relu6": lambda: F.relu6(x), "softshrink": lambda: F.softshrink(x), "hardshrink": lambda: F.hardshrink(x),
 "threshold": lambda: F.threshold(x, 0.1, 2.), "glu": lambda: F.glu(x), "rrelu_eval": lambda: F.rrelu(x),
 "std": lambda: x.std(), "var_mean": lambda: torch.var_mean(x, 1), "l1": lambda: F.l1_loss(x, y),
 "smooth_l1": lambda: F.smooth_l1_loss(x, y), "bce": lambda: F.binary_cross_entropy(p, q),
 "huber": lambda: F.huber_loss(x, y), "cross_entropy": lambda: F.cross_entropy(x, t),
 "batch_norm": lambda: F.batch_norm(x, None, None, training=True), "group_norm": lambda: F.group_norm(i4, 2),
 "max_pool2d": lambda: F.max_pool2d(i4, 2), "avg_pool2d": lambda: F.avg_pool2d(i4, 2),
 "adaptive_avg_pool2d": lambda: F.adaptive_avg_pool2d(i4, 1), "relu_": lambda: x.clone().relu_(),
 "leaky_relu_": lambda: F.leaky_relu_(x.clone()), "add_": lambda: x.clone().add_(1), "mul_": lambda: x.clone().mul_(2),
 "where_scalar": lambda: torch.where(m, x, 0.), "clamp_min": lambda: x.clamp(min=0), "cumsum": lambda: x.cumsum(1),
 "argmax": lambda: x.argmax(-1), "topk": lambda: x.topk(2), "scatter_add": lambda: x.scatter_add(1, t2, x),
 "masked_fill_": lambda: x.clone().masked_fill_(m, 0.), "bmm": lambda: torch.bmm(b3, b3.transpose(1, 2)),
 "baddbmm": lambda: torch.baddbmm(s3, b3, b3.transpose(1, 2)), "einsum": lambda: torch.einsum("ij,kj->ik", x, x),
 "stack": lambda: torch.stack([x, x]), "matmul": lambda: x @ x.T, "linear": lambda: F.linear(x, x),
 "dropout_eval": lambda: F.dropout(x, training=False), "embedding": lambda: F.embedding(t, y.T),
 "normalize": lambda: F.normalize(x), "pad": lambda: F.pad(x, (1, 1)), "interpolate": lambda: F.interpolate(i4, scale_factor=2),
}
def name(op):  # both print an overload as aten.name.overload
    return op
for n, f in cases.items():
    with L() as l: f()
    print(n, [name(o) for o in l.ops])
