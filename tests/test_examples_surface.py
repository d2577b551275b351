"""Small pieces of PyTorch's surface that the stand-alone training programs of pytorch/examples
use (each test names the program that needed it)."""

from __future__ import annotations

import collections

import numpy as np

import torch


def test_tensor_reads_a_deque_as_a_dimension() -> None:
    # reinforcement_learning/reinforce.py: returns = deque(); ...; torch.tensor(returns)
    returns = collections.deque()
    for r in (1.0, 0.5, 0.25):
        returns.appendleft(r)
    t = torch.tensor(returns)
    assert t.dtype == torch.float32
    assert t.tolist() == [0.25, 0.5, 1.0]


def test_tensor_reads_nested_sequences_of_any_kind() -> None:
    nested = [collections.deque([1, 2]), (3, 4), collections.UserList([5, 6])]
    t = torch.tensor(nested)
    assert t.dtype == torch.int64
    np.testing.assert_array_equal(t.numpy(), np.array([[1, 2], [3, 4], [5, 6]]))
    zero_d = collections.deque([torch.tensor(1.5), torch.tensor(2.0)])
    assert torch.tensor(zero_d).tolist() == [1.5, 2.0]


def test_tensor_still_refuses_text_and_ragged_sequences() -> None:
    for bad in ("ab", ["ab"], {1: 2}):
        try:
            torch.tensor(bad)
        except (TypeError, RuntimeError):
            continue
        raise AssertionError(f"torch.tensor({bad!r}) should raise")
    try:
        torch.tensor([collections.deque([1, 2]), (3,)])
    except ValueError as err:
        assert "expected sequence of length 2" in str(err)
    else:
        raise AssertionError("a ragged nesting should raise")


def test_default_backend_for_device_follows_pytorchs_table() -> None:
    # distributed/ddp/example.py: backend = get_default_backend_for_device(current_accelerator())
    import torch.distributed as dist

    assert dist.get_default_backend_for_device("cpu") == "gloo"
    assert dist.get_default_backend_for_device(torch.device("cuda", 1)) == "nccl"
    assert dist.get_default_backend_for_device("cuda:0") == "nccl"
    assert dist.get_default_backend_for_device("xpu") == "xccl"
    assert dist.Backend.default_device_backend_map["cpu"] == "gloo"
    try:
        dist.get_default_backend_for_device("meta")
    except ValueError as err:
        assert "Default backend not registered for device" in str(err)
    else:
        raise AssertionError("a device type without a backend should raise")


def test_leaky_relu_and_padding_modules_trace_with_fx() -> None:
    # fx/wrap_output_dynamically.py: symbolic_trace(nn.LeakyReLU()) records F.leaky_relu
    import torch.fx as fx
    import torch.nn.functional as F
    from torch import nn

    x = torch.linspace(-2.0, 2.0, 18).reshape(1, 2, 3, 3)
    modules = [nn.LeakyReLU(0.2), nn.ZeroPad2d(1), nn.ReflectionPad2d(1),
               nn.ConstantPad1d(1, 2.0)]
    targets = [F.leaky_relu, F.pad, F.pad, F.pad]
    for module, target in zip(modules, targets):
        traced = fx.symbolic_trace(module)
        calls = [n.target for n in traced.graph.nodes if n.op == "call_function"]
        assert calls == [target], (module, calls)
        np.testing.assert_array_equal(traced(x).numpy(), module(x).numpy())
    # values checked against numpy: slope 0.2 below zero, reflection without the edge
    xn = x.numpy()
    np.testing.assert_allclose(nn.LeakyReLU(0.2)(x).numpy(), np.where(xn > 0, xn, 0.2 * xn),
                               rtol=1e-6)
    np.testing.assert_array_equal(nn.ReflectionPad2d(1)(x).numpy(),
                                  np.pad(xn, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect"))


def test_float_of_a_tensor_requiring_grad_warns_once() -> None:
    # language_translation/main.py logs float(loss); PyTorch 2.13 warns once per process that
    # the scalar leaves the graph (not under no_grad, not for int()). A fresh process, since
    # the warning is once per process.
    import subprocess
    import sys

    code = (
        "import warnings, torch\n"
        "t = torch.tensor(2.0, requires_grad=True)\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    int(t)\n"
        "    with torch.no_grad():\n"
        "        float(t)\n"
        "    assert not w, [str(x.message) for x in w]\n"
        "    assert float(t * 3) == 6.0\n"
        "    float(t)\n"
        "assert len(w) == 1 and w[0].category is UserWarning, [str(x.message) for x in w]\n"
        "assert 'requires_grad=True to a scalar' in str(w[0].message)\n"
        "assert w[0].filename == '<string>'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr


def test_attention_warns_about_mismatched_mask_types() -> None:
    # language_translation: a float causal tgt_mask with a bool padding mask. PyTorch warns once
    # per attention call and still applies both masks (True = may not attend).
    import warnings

    from torch import nn

    mha = nn.MultiheadAttention(4, 1, bias=False)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([torch.eye(4)] * 3))
        mha.out_proj.weight.copy_(torch.eye(4))
    x = torch.tensor([[[1.0, 0, 0, 0]], [[0, 2.0, 0, 0]], [[0, 0, 3.0, 0]]])  # (L=3, N=1, E=4)
    causal = torch.triu(torch.full((3, 3), float("-inf")), diagonal=1)
    padding = torch.tensor([[False, False, True]])  # the last key is padding
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, weights = mha(x, x, x, attn_mask=causal, key_padding_mask=padding)
        mha(x, x, x, attn_mask=causal, key_padding_mask=padding.float())
        mha(x, x, x, attn_mask=causal, key_padding_mask=padding.float() * float("-inf"))
    messages = [str(w.message) for w in caught]
    assert messages == ["Support for mismatched key_padding_mask and attn_mask is deprecated. "
                        "Use same type for both instead."], messages  # float with float: none
    # both masks applied: row 0 sees key 0 only, rows 1 and 2 see keys 0 and 1 (numpy softmax)
    scores = np.array([[1.0, 0], [0, 4.0], [0, 0]]) / 2.0  # q.k / sqrt(4) for keys 0 and 1
    expected = np.zeros((3, 3))
    expected[0, 0] = 1.0
    for row in (1, 2):
        e = np.exp(scores[row] - scores[row].max())
        expected[row, :2] = e / e.sum()
    np.testing.assert_allclose(weights[0].detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_force_no_weights_only_load_warns_and_loads_numpy(tmp_path, monkeypatch) -> None:
    # time_sequence_prediction/train.py: torch.load('traindata.pt') of a numpy array, which
    # the weights-only default refuses; the environment switch loads it, with PyTorch's warning
    import pickle
    import warnings

    path = tmp_path / "traindata.pt"
    data = np.sin(np.arange(12.0)).reshape(3, 4)
    torch.save(data, path)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", raising=False)
    try:
        torch.load(path)
    except pickle.UnpicklingError:
        pass
    else:
        raise AssertionError("weights_only=True (the default) should refuse a numpy array")
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = torch.load(path)
        torch.load(path, weights_only=False)  # an explicit argument: no warning
    np.testing.assert_array_equal(loaded, data)
    assert [str(w.message) for w in caught] == [
        "Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` "
        "argument was not explicitly passed to `torch.load`, forcing weights_only=False."]


def test_dropout2d_of_a_2d_input_warns_at_the_callers_line() -> None:
    # mnist_rnn/main.py applies nn.Dropout2d to (N, C) rows: PyTorch's full deprecation text
    import warnings

    from torch import nn

    torch.manual_seed(0)
    x = torch.ones(4, 6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = nn.Dropout2d(0.5)(x)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith("dropout2d: Received a 2-D input to dropout2d, which is deprecated")
    assert message.endswith("(i.e. 3D or 4D inputs).")
    assert caught[0].filename == __file__  # this test's line, not a frame inside torch
    # a 2-D input is (N, C) with no spatial dims, so each element is its own channel: each is
    # zeroed or scaled by 1 / (1 - p), as in PyTorch
    values = out.numpy()
    assert set(np.unique(values).tolist()) <= {0.0, 2.0}
