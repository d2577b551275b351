"""torch.sparse: COO tensors, their ops and gradients, checked against dense math written here
(dense tensors built element by element, products and sums over Python lists)."""

from __future__ import annotations

import copy
import io
import pickle
import pickletools

import pytest

import torch

# indices (2 x 4) with a duplicate position (1, 2) and values; as a dense 2x3 matrix:
# [[0, 0, 1], [2, 0, 3 + 4]]
IDX = [[0, 1, 1, 1], [2, 0, 2, 2]]
VALS = [1.0, 2.0, 3.0, 4.0]
DENSE = [[0.0, 0.0, 1.0], [2.0, 0.0, 7.0]]


def sample(dtype=torch.float64, requires_grad=False):
    values = torch.tensor(VALS, dtype=dtype, requires_grad=requires_grad)
    return torch.sparse_coo_tensor(torch.tensor(IDX), values, (2, 3)), values


def matmul_lists(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))]
            for i in range(len(a))]


def transpose_lists(a):
    return [list(r) for r in zip(*a)]


def close(t, expected, tol=1e-12):
    assert t.layout == torch.strided
    got = t.tolist()
    flat_got = torch.tensor(got, dtype=torch.float64).reshape(-1).tolist()
    flat_exp = torch.tensor(expected, dtype=torch.float64).reshape(-1).tolist()
    assert len(flat_got) == len(flat_exp)
    for g, e in zip(flat_got, flat_exp):
        assert abs(g - e) <= tol * max(1.0, abs(e)), (got, expected)


# -- construction and attributes ------------------------------------------------------------


def test_attributes_and_to_dense_sum_duplicates():
    s, _ = sample()
    assert isinstance(s, torch.Tensor) and s.is_sparse and s.layout == torch.sparse_coo
    assert s.shape == torch.Size([2, 3]) and s.dim() == 2 and s.numel() == 6
    assert s.sparse_dim() == 2 and s.dense_dim() == 0 and s._nnz() == 4
    assert s.dtype == torch.float64 and s.device == torch.device("cpu")
    assert s.type() == "torch.sparse.DoubleTensor"
    assert not s.is_coalesced()
    assert s._indices().tolist() == IDX and s._values().tolist() == VALS
    close(s.to_dense(), DENSE)
    dense = torch.ones(2)
    assert not dense.is_sparse and dense.layout == torch.strided
    assert dense.sparse_dim() == 0 and dense.dense_dim() == 1
    assert dense.to_dense() is dense


def test_size_is_inferred_and_values_dtype_kept():
    s = torch.sparse_coo_tensor([[0, 3], [1, 0]], [1, 2])
    assert s.shape == (4, 2) and s.dtype == torch.int64
    t = torch.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (5,), dtype=torch.float64)
    assert t.dtype == torch.float64 and t.to_dense().tolist() == [1.0, 2.0, 0.0, 0.0, 0.0]


def test_hybrid_tensor_with_dense_trailing_dims():
    values = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    s = torch.sparse_coo_tensor([[0, 2]], values, (3, 2))
    assert s.sparse_dim() == 1 and s.dense_dim() == 1
    assert s.to_dense().tolist() == [[1.0, 2.0], [0.0, 0.0], [3.0, 4.0]]
    d = torch.tensor([[0.0, 5.0], [0.0, 0.0], [6.0, 0.0]])
    h = d.to_sparse(1)
    assert h._indices().tolist() == [[0, 2]] and h._values().tolist() == [[0.0, 5.0], [6.0, 0.0]]
    assert h.is_coalesced() and h.to_dense().tolist() == d.tolist()


@pytest.mark.parametrize("args, message", [
    (([0, 1], [1.0, 2.0], (2,)), "indices must be sparse_dim x nnz"),
    (([[0, 1]], [1.0], (2,)), "indices and values must have same nnz"),
    (([[0, 5]], [1.0, 2.0], (2,)), "size is inconsistent with indices"),
    (([[0, -1]], [1.0, 2.0], (2,)), "found negative index"),
    (([[0, 1]], [[1.0, 2.0], [3.0, 4.0]], (2, 3)), "values has incorrect size"),
    (([[0, 1]], [1.0, 2.0], (2, 2, 2)), "number of dimensions must be sparse_dim"),
])
def test_construction_errors(args, message):
    with pytest.raises(RuntimeError, match=message):
        torch.sparse_coo_tensor(*args)


def test_coalesce_sums_duplicates_in_row_major_order():
    s = torch.sparse_coo_tensor([[1, 0, 1], [0, 2, 0]], [1.0, 2.0, 3.0], (2, 3))
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.indices()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.values()
    c = s.coalesce()
    assert c.is_coalesced() and c.coalesce() is c
    assert c.indices().tolist() == [[0, 1], [2, 0]] and c.values().tolist() == [2.0, 4.0]
    assert c.to_dense().tolist() == s.to_dense().tolist()


def test_to_sparse_round_trip_and_zeros_layout():
    d = torch.tensor([[0.0, 1.5, 0.0], [2.5, 0.0, 0.0]])
    s = d.to_sparse()
    assert s.is_coalesced() and s.indices().tolist() == [[0, 1], [1, 0]]
    assert s.values().tolist() == [1.5, 2.5] and s.to_dense().tolist() == d.tolist()
    assert d.to_sparse_coo().to_dense().tolist() == d.tolist()
    assert s.to_sparse() is s
    z = torch.zeros(2, 3, layout=torch.sparse_coo)
    assert z.is_sparse and z._nnz() == 0 and z.to_dense().tolist() == [[0.0] * 3] * 2
    e = torch.zeros_like(s)
    assert e.is_sparse and e._nnz() == 0 and e.shape == s.shape


# -- ops ------------------------------------------------------------------------------------


def test_products_match_dense_math():
    s, _ = sample()
    d = [[1.0, -2.0], [0.5, 3.0], [-1.0, 4.0]]
    dt = torch.tensor(d, dtype=torch.float64)
    expected = matmul_lists(DENSE, d)
    close(torch.sparse.mm(s, dt), expected)
    close(torch.mm(s, dt), expected)
    close(s @ dt, expected)
    close(torch.matmul(s, dt), expected)
    close(s @ torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64),
          [r[0] for r in matmul_lists(DENSE, [[1.0], [2.0], [3.0]])])
    left = [[1.0, 2.0], [3.0, -1.0]]
    close(torch.tensor(left, dtype=torch.float64) @ s, matmul_lists(left, DENSE))
    bias = [[1.0, 1.0], [2.0, 2.0]]
    close(torch.sparse.addmm(torch.tensor(bias, dtype=torch.float64), s, dt, beta=2.0,
                             alpha=0.5),
          [[2 * b + 0.5 * e for b, e in zip(rb, re)] for rb, re in zip(bias, expected)])
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.sparse.mm(s, torch.ones(2, 2, dtype=torch.float64))


def test_elementwise_ops():
    s, _ = sample()
    close((s * 2).to_dense(), [[2 * x for x in r] for r in DENSE])
    close((3 * s).to_dense(), [[3 * x for x in r] for r in DENSE])
    close((s / 2).to_dense(), [[x / 2 for x in r] for r in DENSE])
    close((-s).to_dense(), [[-x for x in r] for r in DENSE])
    close((s + s).to_dense(), [[2 * x for x in r] for r in DENSE])
    close((s - s).to_dense(), [[0.0] * 3] * 2)
    ones = torch.ones(2, 3, dtype=torch.float64)
    close(s + ones, [[x + 1 for x in r] for r in DENSE])
    close(ones + s, [[x + 1 for x in r] for r in DENSE])
    other = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)
    prod = s * other
    assert prod.is_sparse
    close(prod.to_dense(), [[a * b for a, b in zip(r, q)] for r, q in zip(DENSE, other.tolist())])
    acc = torch.zeros(2, 3, dtype=torch.float64)
    acc.add_(s)
    close(acc, DENSE)
    both = s.coalesce() + s.coalesce()
    assert both.is_coalesced() and both._nnz() == 3


def test_transposes():
    s, _ = sample()
    expected = transpose_lists(DENSE)
    for t in (s.t(), s.transpose(0, 1), s.T, s.mT, s.permute(1, 0)):
        assert t.is_sparse and t.shape == (3, 2)
        close(t.to_dense(), expected)


def test_sums():
    s, _ = sample()
    total = torch.sparse.sum(s)
    assert not total.is_sparse and total.item() == sum(VALS)
    assert torch.sum(s).item() == sum(VALS)
    cols = torch.sparse.sum(s, 0)
    assert cols.is_sparse and cols.is_coalesced()
    close(cols.to_dense(), [sum(c) for c in zip(*DENSE)])
    rows = torch.sparse.sum(s, [1])
    close(rows.to_dense(), [sum(r) for r in DENSE])
    h = torch.sparse_coo_tensor([[0, 2]], torch.tensor([[1.0, 2.0], [3.0, 4.0]]), (3, 2))
    close(torch.sparse.sum(h, 0), [4.0, 6.0])


def _masked_softmax(rows, present, log):
    """Softmax of each row over the present entries only (the others stay absent)."""
    import math

    out = []
    for r, p in zip(rows, present):
        if not any(p):
            out.append([0.0] * len(r))
            continue
        top = max(x for x, here in zip(r, p) if here)
        total = sum(math.exp(x - top) for x, here in zip(r, p) if here)
        out.append([(x - top - math.log(total) if log else math.exp(x - top) / total) if here
                    else 0.0 for x, here in zip(r, p)])
    return out


@pytest.mark.parametrize("log", [False, True])
def test_softmax_over_specified_entries(log):
    s, _ = sample()
    present = [[x != 0 for x in r] for r in DENSE]
    fn = torch.sparse.log_softmax if log else torch.sparse.softmax
    out = fn(s, 1)
    assert out.is_sparse and out.is_coalesced()
    close(out.to_dense(), _masked_softmax(DENSE, present, log))
    close(fn(s, 0).to_dense(),
          transpose_lists(_masked_softmax(transpose_lists(DENSE), transpose_lists(present), log)))


def test_dtype_and_device_conversions():
    s, _ = sample()
    f = s.float()
    assert f.is_sparse and f.dtype == torch.float32 and f._indices().tolist() == IDX
    assert s.to("cpu") is s and s.cpu() is s
    c = s.clone()
    c._values().mul_(0)
    assert s._values().tolist() == VALS  # a clone owns its values


# -- gradients ------------------------------------------------------------------------------


def test_sparse_mm_gradients_are_sparse_with_the_pattern():
    s, values = sample(requires_grad=True)
    d = [[1.0, -2.0], [0.5, 3.0], [-1.0, 4.0]]
    w = [[1.0, 2.0], [-1.0, 0.5]]
    dt = torch.tensor(d, dtype=torch.float64, requires_grad=True)
    (torch.sparse.mm(s, dt) * torch.tensor(w, dtype=torch.float64)).sum().backward()
    grad_dense = matmul_lists(w, transpose_lists(d))  # dL/dS = W @ D^T
    assert values.grad.tolist() == [grad_dense[i][j] for i, j in zip(*IDX)]
    close(dt.grad, matmul_lists(transpose_lists(DENSE), w))  # dL/dD = S^T @ W
    leaf = s.detach().requires_grad_()
    (torch.sparse.mm(leaf, dt.detach()) * torch.tensor(w, dtype=torch.float64)).sum().backward()
    g = leaf.grad
    assert g.is_sparse and g.is_coalesced()
    # each position once (the duplicate (1, 2) is one gradient entry)
    assert g._indices().tolist() == [[0, 1, 1], [2, 0, 2]]
    close(g.to_dense(), [[grad_dense[i][j] if DENSE[i][j] else 0.0 for j in range(3)]
                         for i in range(2)])


def test_torch_mm_gives_a_dense_gradient_as_pytorch():
    s, _ = sample()
    leaf = s.detach().requires_grad_()
    d = [[1.0, -2.0], [0.5, 3.0], [-1.0, 4.0]]
    torch.mm(leaf, torch.tensor(d, dtype=torch.float64)).sum().backward()
    assert leaf.grad.layout == torch.strided
    close(leaf.grad, matmul_lists([[1.0, 1.0], [1.0, 1.0]], transpose_lists(d)))


def test_to_dense_and_constructor_backward():
    s, values = sample(requires_grad=True)
    w = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)
    (s.to_dense() * w).sum().backward()
    # each value (duplicates included) gets the weight of its position
    assert values.grad.tolist() == [w.tolist()[i][j] for i, j in zip(*IDX)]
    leaf = s.detach().requires_grad_()
    (leaf.to_dense() * w).sum().backward()
    assert leaf.grad.is_sparse
    close(leaf.grad.to_dense(), [[w.tolist()[i][j] if DENSE[i][j] else 0.0 for j in range(3)]
                                 for i in range(2)])


def test_coalesce_backward_reaches_every_duplicate():
    s, values = sample(requires_grad=True)
    c = s.coalesce()
    (c.values() * torch.tensor([1.0, 10.0, 100.0], dtype=torch.float64)).sum().backward()
    # coalesced order: (0, 2), (1, 0), (1, 2); the two entries at (1, 2) both get 100
    assert values.grad.tolist() == [1.0, 10.0, 100.0, 100.0]


def test_sparse_sum_and_softmax_backward_match_dense():
    s, values = sample(requires_grad=True)
    torch.sparse.sum(s, 1).to_dense().mul(torch.tensor([2.0, 3.0], dtype=torch.float64)) \
        .sum().backward()
    assert values.grad.tolist() == [2.0, 3.0, 3.0, 3.0]
    # softmax: against the dense softmax of the same rows with absent entries at -inf
    s2, v2 = sample(requires_grad=True)
    w = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)
    (torch.sparse.softmax(s2, 1).to_dense() * w).sum().backward()
    x = torch.tensor([[float("-inf"), float("-inf"), 1.0], [2.0, float("-inf"), 7.0]],
                     dtype=torch.float64, requires_grad=True)
    (torch.softmax(x, 1) * w).sum().backward()
    assert v2.grad.tolist() == pytest.approx([x.grad.tolist()[i][j] for i, j in zip(*IDX)])


def test_gradients_accumulate_across_backward_calls():
    s, _ = sample()
    leaf = s.detach().requires_grad_()
    d = torch.ones(3, 1, dtype=torch.float64)
    for _ in range(2):
        torch.sparse.mm(leaf, d).sum().backward()
    assert leaf.grad.is_sparse
    close(leaf.grad.to_dense(), [[0.0, 0.0, 2.0], [2.0, 0.0, 2.0]])


# -- printing, serialization, errors --------------------------------------------------------


def test_repr_matches_pytorch():
    # strings printed by PyTorch 2.13 for the same tensors
    s = torch.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
    assert repr(s) == ("tensor(indices=tensor([[0, 1, 1],\n"
                       "                       [2, 0, 2]]),\n"
                       "       values=tensor([3., 4., 5.]),\n"
                       "       size=(2, 3), nnz=3, layout=torch.sparse_coo)")
    v = torch.tensor([3.0, 4.0, 5.0], dtype=torch.float64, requires_grad=True)
    g = torch.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], v, (2, 3))
    assert repr(g) == ("tensor(indices=tensor([[0, 1, 1],\n"
                       "                       [2, 0, 2]]),\n"
                       "       values=tensor([3., 4., 5.]),\n"
                       "       size=(2, 3), nnz=3, dtype=torch.float64, layout=torch.sparse_coo,\n"
                       "       grad_fn=<SparseCooTensorWithDimsAndTensorsBackward0>)")
    z = torch.zeros(2, 3, layout=torch.sparse_coo)
    assert repr(z) == ("tensor(indices=tensor([], size=(2, 0)),\n"
                       "       values=tensor([], size=(0,)),\n"
                       "       size=(2, 3), nnz=0, layout=torch.sparse_coo)")


def test_save_load_pickle_and_deepcopy():
    s, _ = sample()
    buffer = io.BytesIO()
    torch.save({"adj": s, "coalesced": s.coalesce()}, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    assert loaded["adj"].is_sparse and not loaded["adj"].is_coalesced()
    assert loaded["adj"]._indices().tolist() == IDX and loaded["adj"]._values().tolist() == VALS
    assert loaded["coalesced"].is_coalesced()
    # PyTorch's pickle form: torch._utils._rebuild_sparse_tensor(layout, (indices, values,
    # size, is_coalesced)), which real PyTorch reads
    import zipfile

    buffer.seek(0)
    with zipfile.ZipFile(buffer) as archive:
        name = next(n for n in archive.namelist() if n.endswith("data.pkl"))
        ops = pickletools.genops(archive.read(name))
        strings = [arg for op, arg, _ in ops if isinstance(arg, str)]
    assert "torch._utils _rebuild_sparse_tensor" in strings
    again = pickle.loads(pickle.dumps(s))
    assert again.is_sparse and again.to_dense().tolist() == s.to_dense().tolist()
    leaf = s.detach().requires_grad_()
    twin = copy.deepcopy(leaf)
    assert twin.is_sparse and twin.requires_grad and twin._values().tolist() == VALS
    assert twin._values().data_ptr() != leaf._values().data_ptr()


def test_unsupported_ops_raise_clearly():
    s, _ = sample()
    for fn in (torch.exp, lambda t: t.view(6), lambda t: t[0], lambda t: t == t):
        with pytest.raises(NotImplementedError, match="SparseCPU"):
            fn(s)
    with pytest.raises(TypeError, match="to_dense"):
        s.numpy()
    with pytest.raises(NotImplementedError, match="storage"):
        s.untyped_storage()
    with pytest.raises(RuntimeError, match="number"):
        s + 1
    with pytest.raises(NotImplementedError, match="layout"):
        torch.ones(2).to_sparse(layout=torch.sparse_csr if hasattr(torch, "sparse_csr")
                                else "csr")


def test_sparse_tensors_on_another_device_use_its_dense_kernels():
    # the toy plugin's device: the sparse kernels run on its dense kernels
    device = "toy"
    i = torch.tensor(IDX, device=device)
    v = torch.tensor(VALS, device=device, requires_grad=True)
    s = torch.sparse_coo_tensor(i, v, (2, 3))
    assert s.device.type == "toy" and "device='toy:0'" in repr(s)
    out = torch.sparse.mm(s, torch.ones(3, 1, device=device))
    assert out.device.type == "toy"
    out.sum().backward()
    assert v.grad.device.type == "toy" and v.grad.cpu().tolist() == [1.0] * 4
    assert s.to("cpu").device.type == "cpu"
    close(s.to_dense().cpu(), DENSE, tol=1e-6)


# -- sparse embedding gradients -------------------------------------------------------------


def test_embedding_sparse_gradient_and_sgd_step():
    nn = pytest.importorskip("torch.nn", reason="needs plait-nn")
    weight = [[float(3 * r + c) for c in range(3)] for r in range(5)]
    e = nn.Embedding(5, 3, sparse=True, padding_idx=0)
    with torch.no_grad():
        e.weight.copy_(torch.tensor(weight))
    x = torch.tensor([[1, 2, 1], [0, 4, 1]])
    w = torch.arange(18.0).reshape(2, 3, 3)
    (e(x) * w).sum().backward()
    g = e.weight.grad
    assert g.is_sparse and g.sparse_dim() == 1 and g.dense_dim() == 1
    # one entry per row read, padding left out (uncoalesced, as PyTorch's)
    assert g._nnz() == 5 and not g.is_coalesced()
    expected = [[0.0] * 3 for _ in range(5)]
    for pos, row in enumerate(x.reshape(-1).tolist()):
        if row != 0:
            for c in range(3):
                expected[row][c] += w.reshape(6, 3)[pos, c].item()
    close(g.to_dense(), expected)
    torch.optim.SGD(e.parameters(), lr=0.5).step()
    close(e.weight.detach(), [[a - 0.5 * b for a, b in zip(ra, rb)]
                              for ra, rb in zip(weight, expected)], tol=1e-6)


def test_gcn_training_matches_pytorch_reference():
    # A two-layer graph convolution trained by Adam, with learnable edge weights and
    # duplicate edges (each edge appears 4 times). The reference numbers were printed by this
    # same code run under PyTorch 2.13 (CPU): loss 1.07858157, sum |edge grad| 0.250751585,
    # sum |w1| 25.1123695.
    nn = pytest.importorskip("torch.nn", reason="needs plait-nn")
    n, f, h, c = 30, 8, 16, 3
    k = torch.arange(120)
    edges = torch.stack([(k * 7) % n, (k * 11 + 3) % n])
    x = torch.sin(torch.arange(n * f, dtype=torch.float32)).reshape(n, f)
    y = torch.arange(n) % c
    w1 = (torch.cos(torch.arange(f * h, dtype=torch.float32)).reshape(f, h) * 0.3)
    w2 = (torch.sin(torch.arange(h * c, dtype=torch.float32) * 0.7).reshape(h, c) * 0.3)
    w1.requires_grad_()
    w2.requires_grad_()
    ew = (torch.sin(torch.arange(120.0)) * 0.5 + 0.6).requires_grad_()
    opt = torch.optim.Adam([w1, w2, ew], lr=0.01)
    for _ in range(5):
        adj = torch.sparse_coo_tensor(edges, ew, (n, n))
        deg = torch.sparse.sum(adj, 1).to_dense() + 1
        hidden = torch.relu(torch.sparse.mm(adj, x @ w1) / deg.unsqueeze(1))
        out = torch.sparse.mm(adj, hidden @ w2) + hidden @ w2
        loss = nn.functional.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() == pytest.approx(1.07858157, rel=1e-5)
    assert ew.grad.abs().sum().item() == pytest.approx(0.250751585, rel=1e-5)
    assert w1.detach().abs().sum().item() == pytest.approx(25.1123695, rel=1e-5)


def test_sparse_buffers_in_modules():
    nn = pytest.importorskip("torch.nn", reason="needs plait-nn")
    s, _ = sample()
    m = nn.Module()
    m.register_buffer("adj", s)
    buffer = io.BytesIO()
    torch.save(m.state_dict(), buffer)
    buffer.seek(0)
    other = nn.Module()
    other.register_buffer("adj", torch.zeros(2, 3, layout=torch.sparse_coo, dtype=torch.float64))
    other.load_state_dict(torch.load(buffer))
    assert other.adj.is_sparse and other.adj.to_dense().tolist() == DENSE
    assert m.float().adj.dtype == torch.float32 and m.adj.is_sparse
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.Parameter(s)


def test_legacy_constructors_and_compressed_layouts():
    i = torch.tensor([[0, 1], [1, 0]])
    s = torch.sparse.FloatTensor(i, torch.tensor([1.0, 2.0]), torch.Size([2, 2]))
    assert s.is_sparse and s.dtype == torch.float32
    assert s.to_dense().tolist() == [[0.0, 1.0], [2.0, 0.0]]
    assert isinstance(s, torch.sparse.FloatTensor) and not isinstance(s, torch.sparse.DoubleTensor)
    assert not isinstance(s.to_dense(), torch.sparse.FloatTensor)
    empty = torch.sparse.DoubleTensor(2, 3)
    assert empty.is_sparse and empty.shape == (2, 3) and empty.dtype == torch.float64
    assert not torch.ones(2).is_sparse_csr and not s.is_sparse_csr
    for fn in (lambda: torch.sparse_csr_tensor([0, 1], [0], [1.0]),
               lambda: torch.ones(2, 2).to_sparse_csr()):
        with pytest.raises(NotImplementedError, match="compressed"):
            fn()


def test_cat_and_index_select():
    a = [[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]
    b = [[4.0, 0.0, 0.0]]
    sa, sb = torch.tensor(a).to_sparse(), torch.tensor(b).to_sparse()
    out = torch.cat([sa, sb])
    assert out.is_sparse and out.to_dense().tolist() == a + b
    assert torch.cat([sa, sa], 1).to_dense().tolist() == [r + r for r in a]
    hybrid = torch.tensor(a).to_sparse(1)  # cat along a dense dim
    assert torch.cat([hybrid, hybrid], 1).to_dense().tolist() == [r + r for r in a]
    cols = [2, 0, 2, 1]
    picked = sa.index_select(1, torch.tensor(cols))
    assert picked.is_sparse and picked.to_dense().tolist() == [[r[c] for c in cols] for r in a]
    rows = [1, 1, 0]
    assert sa.index_select(0, torch.tensor(rows)).to_dense().tolist() == [a[r] for r in rows]
    assert hybrid.index_select(1, torch.tensor(cols)).to_dense().tolist() == \
        [[r[c] for c in cols] for r in a]
    with pytest.raises(RuntimeError, match="mixing sparse and dense"):
        torch.cat([sa, torch.ones(1, 3)])


def test_spmm_is_mm_for_sparse_and_dense_operands():
    # torch.spmm (used by GCN programs) is torch.mm under its older name: a dense result and,
    # unlike torch.sparse.mm, a dense gradient for the sparse operand.
    a = [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]
    b = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    expected = [[11.0, 14.0], [9.0, 12.0]]
    sa = torch.tensor(a).to_sparse().requires_grad_()
    db = torch.tensor(b, requires_grad=True)
    out = torch.spmm(sa, db)
    assert not out.is_sparse and out.tolist() == expected
    out.sum().backward()
    assert not sa.grad.is_sparse
    assert sa.grad.tolist() == [[sum(row) for row in b]] * 2
    assert db.grad.tolist() == [[sum(col)] * 2 for col in zip(*a)]
    assert torch.spmm(torch.tensor(a), torch.tensor(b).to_sparse()).tolist() == expected
