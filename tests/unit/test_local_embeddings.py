"""The offline embedding provider (sommelier.embeddings.local): deterministic, unit-length, paraphrase-aware."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from sommelier.embeddings import embed_one
from sommelier.embeddings.local import (
    CONCEPTS,
    LOCAL_MODEL_NAME,
    STOPWORDS,
    LocalHashingEmbeddings,
    embed_text,
    features,
)
from sommelier.settings import EMBEDDING_DIMENSIONS

embedder = LocalHashingEmbeddings()


def cosine(a: str, b: str) -> float:
    va, vb = np.asarray(embed_text(a)), np.asarray(embed_text(b))
    return float(va @ vb)


def test_model_name_and_dimensions():
    assert embedder.model == LOCAL_MODEL_NAME == "local-ngram-hash-v4"
    assert embedder.dimensions == EMBEDDING_DIMENSIONS == 1536
    assert len(embedder.embed(["лёгкое белое"])[0]) == EMBEDDING_DIMENSIONS  # what the vector column holds


@pytest.mark.parametrize("text", ["лёгкое белое вино", "A", "🍷", "", "   ", "и в на", "x" * 50_000, "вино " * 1000])
def test_vectors_are_finite_unit_length(text):
    vector = embed_one(embedder, text)
    assert len(vector) == EMBEDDING_DIMENSIONS
    assert all(math.isfinite(x) for x in vector)
    assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-9)
    assert any(vector)  # never all zeros: semantic_search refuses those


def test_batches_keep_order_and_match_single_calls():
    texts = ["красное к стейку", "игристое на праздник", "сладкое к десерту"]
    assert embedder.embed(texts) == [embed_text(t) for t in texts]
    assert embedder.embed([]) == []


def test_deterministic_across_processes():
    """The catalogue is embedded in one process and queries in another: hashing must not be salted."""
    code = "from sommelier.embeddings.local import embed_text; v = embed_text('согреться у камина'); print(repr(v[:8]))"
    other = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    ).stdout.strip()
    assert other == repr(embed_text("согреться у камина")[:8])


def test_yo_and_case_do_not_matter():
    assert embed_text("Лёгкое ЛЕТНЕЕ") == embed_text("легкое летнее")


def test_stopwords_do_not_count():
    assert features("посоветуй мне вино для ужина") == features("ужина")
    assert {"и", "вино", "посоветуй", "для"} <= STOPWORDS


def test_inflections_are_close():
    assert cosine("лёгкое вино", "лёгкого вина") > 0.7
    assert cosine("к стейку", "стейк") > 0.7


@pytest.mark.parametrize(
    "a,b,concept",
    [
        ("согреться у камина", "зимний вечер", "winter"),
        ("отметить повышение", "для праздника", "celebration"),
        ("романтическое свидание", "ужин для двоих при свечах", "romance"),
        ("подарок начальнику", "престижное коллекционное", "gift"),
        ("пузырьки", "игристое брют", "bubbles"),
    ],
)
def test_paraphrases_share_a_concept(a, b, concept):
    assert f"c:{concept}" in features(a) and f"c:{concept}" in features(b)
    assert cosine(a, b) > cosine(a, "устрицы и морепродукты")


def test_unrelated_texts_are_far_apart():
    assert cosine("насыщенное красное к стейку", "сладкое десертное к торту") < 0.3
    assert cosine("насыщенное красное к стейку", "плотное танинное к шашлыку") > cosine(
        "насыщенное красное к стейку", "лёгкое игристое аперитив"
    )


def test_concepts_thesaurus_is_well_formed():
    for name, prefixes in CONCEPTS.items():
        assert prefixes, name
        for prefix in prefixes:
            assert prefix == prefix.lower().replace("ё", "е"), (name, prefix)
            assert " " not in prefix, (name, prefix)


def test_features_are_weighted_by_kind():
    weights = features("камин")
    assert weights["w:камин"] == pytest.approx(1.0)
    assert weights["c:winter"] > weights["w:камин"]
    assert any(k.startswith("g:") for k in weights)
