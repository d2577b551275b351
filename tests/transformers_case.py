"""Small randomly initialised transformers models (GPT-2, BERT, Llama, T5, ViT, Whisper), run
forward and backward.

The same code runs under Plait (``tests/test_transformers.py``) and under real PyTorch, which
wrote the reference answers: ``python tests/transformers_case.py`` in an environment with
PyTorch 2.13 and the transformers release pinned in :data:`TRANSFORMERS_VERSION` rewrites
``tests/data/transformers_reference.json``. Weights and inputs come from numpy's seeded
generator, not from torch's, so both sides start from the same numbers.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# The transformers release the reference was made with; the nox sessions install this one.
TRANSFORMERS_VERSION = "5.24.0"
REFERENCE = Path(__file__).parent / "data" / "transformers_reference.json"
VOCAB, WIDTH, LAYERS, HEADS, SEQ, BATCH = 100, 64, 2, 4, 8, 2
# Parameters with at most this many elements are compared whole; larger ones by norm and sum.
SMALL_PARAMETER = 256


def _gpt2() -> tuple[Any, dict[str, Any]]:
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=LAYERS, n_embd=WIDTH, n_head=HEADS, vocab_size=VOCAB,
                        n_positions=4 * SEQ, bos_token_id=0, eos_token_id=0)
    ids = np.random.default_rng(1).integers(0, VOCAB, size=(BATCH, SEQ))
    return GPT2LMHeadModel(config), {"input_ids": ids, "labels": ids}


def _bert() -> tuple[Any, dict[str, Any]]:
    from transformers import BertConfig, BertForMaskedLM

    config = BertConfig(vocab_size=VOCAB, hidden_size=WIDTH, num_hidden_layers=LAYERS,
                        num_attention_heads=HEADS, intermediate_size=2 * WIDTH,
                        max_position_embeddings=4 * SEQ, pad_token_id=0)
    rng = np.random.default_rng(2)
    ids = rng.integers(1, VOCAB, size=(BATCH, SEQ))
    mask = np.ones((BATCH, SEQ), dtype=np.int64)
    mask[1, SEQ - 3:] = 0  # the second sequence is padded: the attention mask is exercised
    ids[1, SEQ - 3:] = 0
    labels = np.full((BATCH, SEQ), -100)
    labels[:, 2] = ids[:, 2]  # two masked positions carry the loss
    labels[0, 5] = ids[0, 5]
    return BertForMaskedLM(config), {"input_ids": ids, "attention_mask": mask, "labels": labels}


def _llama() -> tuple[Any, dict[str, Any]]:
    # rotary embeddings, grouped-query attention, RMSNorm, a gated SiLU MLP
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=VOCAB, hidden_size=WIDTH, num_hidden_layers=LAYERS,
                         num_attention_heads=HEADS, num_key_value_heads=HEADS // 2,
                         intermediate_size=2 * WIDTH, max_position_embeddings=4 * SEQ)
    ids = np.random.default_rng(3).integers(0, VOCAB, size=(BATCH, SEQ))
    return LlamaForCausalLM(config), {"input_ids": ids, "labels": ids}


def _t5() -> tuple[Any, dict[str, Any]]:
    # an encoder-decoder: relative position buckets, cross-attention, shifted decoder inputs
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(vocab_size=VOCAB, d_model=WIDTH, d_kv=WIDTH // HEADS, d_ff=2 * WIDTH,
                      num_layers=LAYERS, num_heads=HEADS, decoder_start_token_id=0,
                      pad_token_id=0)
    rng = np.random.default_rng(5)
    return T5ForConditionalGeneration(config), {
        "input_ids": rng.integers(1, VOCAB, size=(BATCH, SEQ)),
        "labels": rng.integers(1, VOCAB, size=(BATCH, SEQ // 2))}


def _vit() -> tuple[Any, dict[str, Any]]:
    # patches by a strided convolution, a class token, image classification
    from transformers import ViTConfig, ViTForImageClassification

    config = ViTConfig(hidden_size=WIDTH, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                       intermediate_size=2 * WIDTH, image_size=16, patch_size=4, num_labels=3)
    pixels = np.random.default_rng(6).standard_normal((BATCH, 3, 16, 16)).astype(np.float32)
    return ViTForImageClassification(config), {"pixel_values": pixels,
                                               "labels": np.array([0, 2])}


def _whisper() -> tuple[Any, dict[str, Any]]:
    # an audio encoder (two 1-d convolutions, GELU) and a decoder with cross-attention
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    config = WhisperConfig(vocab_size=VOCAB, d_model=WIDTH, encoder_layers=1,
                           decoder_layers=1, encoder_attention_heads=HEADS,
                           decoder_attention_heads=HEADS, encoder_ffn_dim=2 * WIDTH,
                           decoder_ffn_dim=2 * WIDTH, num_mel_bins=16,
                           max_source_positions=SEQ, max_target_positions=4 * SEQ,
                           pad_token_id=0, decoder_start_token_id=1, bos_token_id=1,
                           eos_token_id=2, suppress_tokens=[], begin_suppress_tokens=[])
    rng = np.random.default_rng(7)
    features = rng.standard_normal((BATCH, 16, 2 * SEQ)).astype(np.float32)
    return WhisperForConditionalGeneration(config), {
        "input_features": features, "labels": rng.integers(3, VOCAB, size=(BATCH, SEQ))}


MODELS: dict[str, Callable[[], tuple[Any, dict[str, Any]]]] = {
    "gpt2": _gpt2, "bert": _bert, "llama": _llama, "t5": _t5, "vit": _vit,
    "whisper": _whisper}


def _initialise(model: Any, seed: int) -> None:
    """Every parameter from numpy's generator: matrices and biases small, norm scales near 1."""
    import torch

    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, param in sorted(model.named_parameters()):
            shape = tuple(param.shape)
            if len(shape) == 1 and name.endswith("weight"):  # LayerNorm scale
                values = 1.0 + 0.1 * rng.standard_normal(shape)
            else:
                values = 0.05 * rng.standard_normal(shape)
            param.copy_(torch.tensor(values.astype(np.float32)))


def run(name: str, attention: str | None = None) -> dict[str, Any]:
    """Build model ``name``, set its weights, run forward and backward; the numbers as lists.

    :param name: a key of :data:`MODELS`.
    :param attention: transformers' attention implementation (``"eager"``, ``"sdpa"``);
        None keeps its default (``"sdpa"``, with which the reference was made).
    :returns: ``loss``, ``logits`` (nested lists) and ``grads``: per parameter the loss
        reaches, the whole gradient when it is small, otherwise its norm and sum.
    """
    import torch

    model, inputs = MODELS[name]()
    if attention is not None:
        model.set_attn_implementation(attention)
    _initialise(model, seed=len(name))
    model.eval()  # no dropout: both sides compute the same function
    out = model(**{k: torch.tensor(v) for k, v in inputs.items()})
    out.loss.backward()
    grads: dict[str, Any] = {}
    for param_name, param in sorted(model.named_parameters()):
        if param.grad is None:  # not reached by the loss (T5's later relative biases...)
            continue
        grad = param.grad.detach().double()
        if param.numel() <= SMALL_PARAMETER:
            grads[param_name] = {"values": grad.flatten().tolist()}
        else:
            grads[param_name] = {"norm": grad.norm().item(), "sum": grad.sum().item()}
    return {"loss": out.loss.item(), "logits": out.logits.detach().double().tolist(),
            "grads": grads}


def greedy_tokens() -> list[list[int]]:
    """The GPT-2 model's greedy continuation (``generate``, 6 new tokens) of a 4-token prompt:
    the generation loop, its KV cache and stopping criteria, not only one forward pass."""
    import torch

    model, inputs = MODELS["gpt2"]()
    _initialise(model, seed=4)
    model.eval()
    prompt = torch.tensor(inputs["input_ids"][:1, :4])
    return model.generate(prompt, max_new_tokens=6, do_sample=False, pad_token_id=0).tolist()


def _rounded(value: Any) -> Any:
    """Nine significant digits: float32 results carry no more, and the file stays small."""
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def main() -> None:
    """Write the reference file from the torch and transformers this interpreter imports."""
    import transformers

    import torch

    if transformers.__version__ != TRANSFORMERS_VERSION:
        sys.exit(f"transformers {TRANSFORMERS_VERSION} is pinned; found {transformers.__version__}")
    reference = {"torch": str(torch.__version__), "transformers": transformers.__version__,
                 "models": {name: _rounded(run(name)) for name in MODELS},
                 "gpt2_greedy_tokens": greedy_tokens()}
    REFERENCE.write_text(json.dumps(reference, indent=None, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
