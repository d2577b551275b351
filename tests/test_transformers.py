"""transformers on Plait: small randomly initialised GPT-2, BERT, Llama, T5, ViT and Whisper
models, forward and backward, equal to real PyTorch 2.13 from the same weights (issue 12, item
2).

The models, weights and inputs are built by ``tests/transformers_case.py``; the expected numbers
in ``tests/data/transformers_reference.json`` were written by that file under real PyTorch with
the pinned transformers release (see its docstring to regenerate them).
"""

from __future__ import annotations

import importlib.util
import json
import math

import pytest
import transformers_case

import torch

# Checked without importing transformers: its import registers custom ops and pytree nodes,
# which should happen only when these tests run, not while the whole suite is collected.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None,
    reason="transformers is not installed (the nox tests session installs it)")

REFERENCE = json.loads(transformers_case.REFERENCE.read_text())
# float32 models: sums of 64 products per layer, two layers, a softmax; the backward pass
# through attention loses a little more.
RTOL, ATOL = 2e-4, 2e-5
GRAD_RTOL, GRAD_ATOL = 2e-3, 1e-5


def test_reference_was_made_with_the_installed_transformers() -> None:
    import transformers

    assert transformers.__version__ == REFERENCE["transformers"] == (
        transformers_case.TRANSFORMERS_VERSION)
    assert REFERENCE["torch"].startswith("2.13.")


def test_transformers_sees_torch() -> None:
    from transformers.utils import is_torch_available

    assert is_torch_available()


@pytest.fixture(scope="module", params=sorted(transformers_case.MODELS))
def case(request: pytest.FixtureRequest) -> tuple[dict, dict]:
    name = request.param
    return transformers_case.run(name), REFERENCE["models"][name]


def test_forward_matches_pytorch(case: tuple[dict, dict]) -> None:
    ours, expected = case
    assert math.isclose(ours["loss"], expected["loss"], rel_tol=RTOL)
    torch.testing.assert_close(torch.tensor(ours["logits"]), torch.tensor(expected["logits"]),
                               rtol=RTOL, atol=ATOL)


def test_backward_matches_pytorch(case: tuple[dict, dict]) -> None:
    ours, expected = case
    assert sorted(ours["grads"]) == sorted(expected["grads"])
    for name, grad in expected["grads"].items():
        mine = ours["grads"][name]
        for key, value in grad.items():
            torch.testing.assert_close(torch.tensor(mine[key], dtype=torch.float64),
                                       torch.tensor(value, dtype=torch.float64),
                                       rtol=GRAD_RTOL, atol=GRAD_ATOL, msg=f"{name} {key}")


def test_gpt2_greedy_generation_matches_pytorch() -> None:
    assert transformers_case.greedy_tokens() == REFERENCE["gpt2_greedy_tokens"]


def test_save_pretrained_and_from_pretrained_round_trip(tmp_path) -> None:
    # safetensors files written by transformers, read back through UntypedStorage.from_file,
    # torch.asarray(storage) and Tensor.view(dtype=...), as safetensors' "pt" reader does.
    model, inputs = transformers_case.MODELS["gpt2"]()
    transformers_case._initialise(model, seed=4)
    model.eval()
    model.save_pretrained(tmp_path)
    again = type(model).from_pretrained(tmp_path).eval()
    ids = torch.tensor(inputs["input_ids"])
    assert torch.equal(model(ids).logits, again(ids).logits)


@pytest.mark.parametrize("name", sorted(transformers_case.MODELS))
def test_eager_attention_matches_pytorch(name: str) -> None:
    # transformers' own softmax(QK^T)V path instead of scaled_dot_product_attention; PyTorch's
    # two paths agree far inside these tolerances, so the sdpa reference serves for both.
    ours, expected = transformers_case.run(name, "eager"), REFERENCE["models"][name]
    assert math.isclose(ours["loss"], expected["loss"], rel_tol=RTOL)
    torch.testing.assert_close(torch.tensor(ours["logits"]), torch.tensor(expected["logits"]),
                               rtol=RTOL, atol=ATOL)
