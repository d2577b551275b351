"""Names programs import or call (issue 12): ``torch.diag``/``diag_embed``/``diagflat``,
``torch.cdist``/``dist``, ``torch.utils.dlpack`` and ``torch.hub``.

Expected values are PyTorch 2.13's answers (and numpy's distances).
"""

from __future__ import annotations

import pytest

import torch

# -- torch.diag, diag_embed, diagflat, cdist, dist -----------------------------------------


def test_diag_of_a_vector_is_a_matrix() -> None:
    v = torch.tensor([1.0, 2.0, 3.0])
    assert torch.diag(v).tolist() == [[1, 0, 0], [0, 2, 0], [0, 0, 3]]
    assert torch.diag(v, 1).tolist() == [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 3], [0, 0, 0, 0]]
    assert torch.diag(torch.arange(2), -1).tolist() == [[0, 0, 0], [0, 0, 0], [0, 1, 0]]
    assert torch.diag(torch.arange(2), -1).dtype is torch.int64
    assert v.diag().shape == (3, 3)


def test_diag_of_a_matrix_copies_a_diagonal() -> None:
    m = torch.arange(12.0).reshape(3, 4)
    assert torch.diag(m).tolist() == [0.0, 5.0, 10.0]
    assert torch.diag(m, 1).tolist() == [1.0, 6.0, 11.0]
    assert torch.diag(m, -2).tolist() == [8.0]
    assert torch.diag(m, 5).shape == (0,)
    d = torch.diag(m)
    d[0] = 100.0
    assert m[0, 0] == 0.0  # a copy, not a view
    with pytest.raises(RuntimeError, match=r"diag\(\): Supports 1D or 2D tensors. Got 3D"):
        torch.diag(torch.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="Got 0D"):
        torch.diag(torch.tensor(1.0))


def test_diag_gradients() -> None:
    v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    weights = torch.arange(16.0).reshape(4, 4)
    (torch.diag(v, 1) * weights).sum().backward()
    assert v.grad.tolist() == [1.0, 6.0, 11.0]  # weights[i, i + 1]
    m = torch.arange(12.0).reshape(3, 4).requires_grad_()
    torch.diag(m, 1).pow(2).sum().backward()
    expected = [[0, 2, 0, 0], [0, 0, 12, 0], [0, 0, 0, 22]]
    assert m.grad.tolist() == expected


def test_diag_embed_and_diagflat() -> None:
    x = torch.arange(6.0).reshape(2, 3)
    out = torch.diag_embed(x)
    assert out.shape == (2, 3, 3) and out[1].tolist() == [[3, 0, 0], [0, 4, 0], [0, 0, 5]]
    shifted = torch.diag_embed(x, 1)
    assert shifted.shape == (2, 4, 4) and shifted[0, 1, 2] == 1.0
    moved = torch.diag_embed(x, -1, 0, 2)
    assert moved.shape == (4, 2, 4) and moved[1, 0, 0] == 0.0 and moved[3, 1, 2] == 5.0
    assert torch.diagflat(torch.tensor([[1.0, 2.0], [3.0, 4.0]])).shape == (4, 4)
    assert torch.diagflat(torch.tensor([1.0, 2.0]), -1).tolist() == [[0, 0, 0], [1, 0, 0],
                                                                      [0, 2, 0]]


def _numpy_cdist(a, b, p):
    import numpy as np

    diff = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (diff != 0).sum(-1).astype(a.dtype)
    if p == float("inf"):
        return diff.max(-1)
    return (diff ** p).sum(-1) ** (1.0 / p)


@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("points", [(3, 4), (30, 40)])
def test_cdist_matches_numpy(p: float, points: tuple[int, int]) -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, points[0], 5))
    b = rng.standard_normal((2, points[1], 5))
    got = torch.cdist(torch.tensor(a), torch.tensor(b), p=p)
    assert got.shape == (2, *points)
    np.testing.assert_allclose(got.numpy(), _numpy_cdist(a, b, p), rtol=1e-10, atol=1e-10)


def test_cdist_broadcasts_batches_and_checks_arguments() -> None:
    assert torch.cdist(torch.ones(5, 2, 3), torch.ones(1, 4, 3)).shape == (5, 2, 4)
    assert torch.cdist(torch.ones(2, 2, 3), torch.ones(4, 3)).shape == (2, 2, 4)
    with pytest.raises(RuntimeError, match="cdist only supports at least 2D tensors, X1 got: 1D"):
        torch.cdist(torch.ones(3), torch.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"same number of columns\. X1: 3 X2: 4"):
        torch.cdist(torch.ones(2, 3), torch.ones(2, 4))
    with pytest.raises(RuntimeError, match="cdist only supports non-negative p values"):
        torch.cdist(torch.ones(2, 3), torch.ones(2, 3), p=-1)
    with pytest.raises(RuntimeError, match="floating-point dtypes, X1 got: Long"):
        torch.cdist(torch.ones(2, 3, dtype=torch.long), torch.ones(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="bad is not a valid value for compute_mode"):
        torch.cdist(torch.ones(2, 3), torch.ones(4, 3), compute_mode="bad")


def test_cdist_gradients() -> None:
    import numpy as np

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    for p in (1.0, 2.0, 3.0):
        x1 = torch.tensor(a, requires_grad=True)
        x2 = torch.tensor(b, requires_grad=True)
        assert torch.autograd.gradcheck(lambda u, v, p=p: torch.cdist(u, v, p=p), (x1, x2))
    # coinciding points: the gradient is 0 there (not NaN), as PyTorch's
    x = torch.zeros(2, 3, requires_grad=True)
    torch.cdist(x, torch.zeros(2, 3)).sum().backward()
    assert x.grad.tolist() == [[0.0] * 3] * 2
    many = torch.randn(30, 3, requires_grad=True)
    torch.cdist(many, many.detach().clone()).sum().backward()
    assert bool(torch.isfinite(many.grad).all())


def test_cdist_matrix_product_mode() -> None:
    import numpy as np

    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((40, 5)), rng.standard_normal((50, 5))
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        got = torch.cdist(torch.tensor(a), torch.tensor(b), compute_mode=mode)
        np.testing.assert_allclose(got.numpy(), _numpy_cdist(a, b, 2.0), rtol=1e-9)
    same = torch.tensor(a)
    assert torch.cdist(same, same).diagonal().abs().max() < 1e-6


def test_dist() -> None:
    assert float(torch.dist(torch.tensor([3.0, 4.0]), torch.zeros(2))) == 5.0
    assert float(torch.tensor([1.0, -2.0]).dist(torch.zeros(2), 1)) == 3.0
    assert torch.dist(torch.ones(2, 3), torch.zeros(3), 3).shape == ()


# -- torch.utils.dlpack, torch.hub ---------------------------------------------------------


def test_dlpack_round_trips_share_memory() -> None:
    import numpy as np

    import torch.utils.dlpack as dlpack

    assert dlpack.from_dlpack is torch.from_dlpack
    assert dlpack.DLDeviceType.kDLCPU == 1 and dlpack.DLDeviceType.kDLCUDA == 2
    x = torch.arange(3.0)
    capsule = dlpack.to_dlpack(x)
    assert type(capsule).__name__ == "PyCapsule"
    y = dlpack.from_dlpack(capsule)
    y[0] = 9.0
    assert x.tolist() == [9.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="can be consumed only once"):
        dlpack.from_dlpack(capsule)
    array = np.arange(6.0).reshape(2, 3)
    t = dlpack.from_dlpack(array)
    t[1, 2] = -1.0
    assert array[1, 2] == -1.0 and t.dtype is torch.float64
    back = np.from_dlpack(torch.ones(2, dtype=torch.int32))
    assert back.dtype == np.int32 and back.tolist() == [1, 1]


HUBCONF = '''
dependencies = ["torch"]
import torch
import helper  # the repository's own module: importable while hubconf runs


def tiny(n=2, pretrained=False):
    """A tiny model."""
    return torch.nn.Linear(n, helper.OUT)


def _private():
    pass

CONST = 3
'''


def _hub_repo(directory) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "hubconf.py").write_text(HUBCONF)
    (directory / "helper.py").write_text("OUT = 1\n")
    return str(directory)


def test_hub_load_from_a_local_directory(tmp_path) -> None:
    import sys

    repo = _hub_repo(tmp_path / "repo")
    model = torch.hub.load(repo, "tiny", 3, source="local")
    assert isinstance(model, torch.nn.Linear) and model.in_features == 3
    assert torch.hub.load(repo, "tiny", source="local", n=5).in_features == 5
    assert repo not in sys.path
    with pytest.raises(RuntimeError, match="Cannot find callable nope in hubconf"):
        torch.hub.load(repo, "nope", source="local")
    with pytest.raises(ValueError, match='Unknown source: "bad"'):
        torch.hub.load(repo, "tiny", source="bad")
    with pytest.raises(ValueError, match="model should be a string of function name"):
        torch.hub.load(repo, 5, source="local")
    with pytest.raises(FileNotFoundError):
        torch.hub.load(str(tmp_path / "absent"), "tiny", source="local")
    (tmp_path / "repo" / "hubconf.py").write_text(
        'dependencies = ["no_such_package_here", "os"]\ndef a():\n    pass\n')
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_package_here"):
        torch.hub.load(repo, "a", source="local")


def test_hub_directory_settings(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    assert torch.hub.get_dir() == str(tmp_path / "home" / "hub")
    torch.hub.set_dir(tmp_path / "elsewhere")
    assert torch.hub.get_dir() == str(tmp_path / "elsewhere")


def test_hub_constants_and_torch_home(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    # torchvision imports _get_torch_home, kornia HASH_REGEX
    monkeypatch.delenv("TORCH_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert torch.hub._get_torch_home() == str(tmp_path / "xdg" / "torch")
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    assert torch.hub._get_torch_home() == str(tmp_path / "home")
    assert torch.hub.HASH_REGEX.search("resnet18-f37072fd.pth").group(1) == "f37072fd"
    assert torch.hub.HASH_REGEX.search("plain.pth") is None
    assert (torch.hub.MODULE_HUBCONF, torch.hub.VAR_DEPENDENCY) == ("hubconf.py", "dependencies")
    assert (torch.hub.ENV_TORCH_HOME, torch.hub.ENV_XDG_CACHE_HOME, torch.hub.ENV_GITHUB_TOKEN,
            torch.hub.DEFAULT_CACHE_DIR) == ("TORCH_HOME", "XDG_CACHE_HOME", "GITHUB_TOKEN",
                                             "~/.cache")


def test_hub_checkpoints_check_the_hash_in_their_name(tmp_path) -> None:
    checkpoint = tmp_path / "weights.pt"
    torch.save({"w": torch.ones(2)}, checkpoint)
    import hashlib

    digest = hashlib.sha256(checkpoint.read_bytes()).hexdigest()
    url = checkpoint.as_uri()
    good = torch.hub.load_state_dict_from_url(url, model_dir=str(tmp_path / "a"),
                                              file_name=f"w-{digest[:8]}.pt", check_hash=True)
    assert good["w"].tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="invalid hash value"):
        torch.hub.load_state_dict_from_url(url, model_dir=str(tmp_path / "b"),
                                           file_name="w-0000beef.pt", check_hash=True)


def test_hub_github_repositories_come_from_the_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    torch.hub.set_dir(tmp_path)
    _hub_repo(tmp_path / "someone_models_main")
    assert torch.hub.list("someone/models", trust_repo=True) == ["tiny"]
    assert torch.hub.help("someone/models", "tiny") == "A tiny model."
    assert (tmp_path / "trusted_list").read_text().split() == ["someone_models"]
    model = torch.hub.load("someone/models", "tiny", 4, verbose=False)
    assert model.in_features == 4
    with pytest.raises(ValueError, match="repo_owner/repo_name"):
        torch.hub.load("no-slash", "tiny")
