"""The numpy encoder gives all-MiniLM-L6-v2's sentence vectors: the first numbers of each text's vector as
sentence-transformers 5 (on PyTorch 2.13, CPU) gave them for the same weights, and the similarity that links a
lay word to a schema word."""

from __future__ import annotations

import numpy as np
import pytest

from backends.sentence_encoder import shared_encoder

pytestmark = pytest.mark.unit

# sentence_transformers.SentenceTransformer(<the package's model directory>).encode(texts, normalize_embeddings=True)
REFERENCE = {
    "client": [-0.100059, 0.056195, -0.010376, -0.067117, -0.08551, -0.00964, 0.115068, 0.037606],
    "direct reports": [-0.017611, 0.03287, -0.049281, 0.088725, 0.009903, 0.023937, -0.041297, 0.067045],
    "Which warehouse received the most deliveries?": [
        0.037783,
        0.003672,
        -0.033573,
        0.035862,
        -0.00601,
        -0.019173,
        -0.0052,
        0.001755,
    ],
}


def test_vectors_are_the_reference_models() -> None:
    vectors = shared_encoder().encode(list(REFERENCE))
    assert vectors.shape == (3, 384)
    for row, expected in zip(vectors, REFERENCE.values(), strict=True):
        assert np.allclose(row[:8], expected, atol=2e-6)
        assert abs(float(np.linalg.norm(row)) - 1.0) < 1e-5


def test_texts_of_different_lengths_in_one_batch_match_each_alone() -> None:
    texts = ["client", "Which warehouse received the most deliveries?"]
    together = shared_encoder().encode(texts)
    for text, row in zip(texts, together, strict=True):
        assert np.allclose(shared_encoder().encode([text])[0], row, atol=1e-5)


def test_a_synonym_is_closer_than_an_unrelated_word() -> None:
    client, customer, warehouse = shared_encoder().encode(["client", "customer", "warehouse"])
    assert abs(float(client @ customer) - 0.607) < 1e-3
    assert float(client @ customer) > float(client @ warehouse) + 0.2
