"""Offline embeddings: feature hashing of stems, character n-grams and wine concepts.

No model download, deterministic, 1536 dimensions like text-embedding-3-small (but never
comparable with it: rows record the model name). Three kinds of features:

- word stems, so "лёгкое"/"лёгкого"/"легкий" meet;
- character 3–5-grams of each word, for spelling variants and compounds;
- concepts from a small wine thesaurus, so paraphrases meet: "согреться у камина" and
  "зимний вечер" share the concept *winter*, "отметить повышение" and "для праздника"
  share *celebration*.
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from collections.abc import Sequence

from sommelier import language
from sommelier.language import stem, words
from sommelier.settings import EMBEDDING_DIMENSIONS, LOCAL_MODEL_NAME

# v2: Snowball stems (the language layer) instead of the hand-written suffix stripper; v1 vectors differ.
# v3: a wine's text also carries its structure in mood words (language/data/structure.json); v2 rows differ.
# v4: the price words follow budget.json's levels (the reader's «недорогое», «премиальное»).

_STEM_WEIGHT = 1.0
_NGRAM_WEIGHT = 0.35
_CONCEPT_WEIGHT = 2.2

# Words that say nothing about which wine fits, and concept → stem prefixes that evoke it: the language layer's.
STOPWORDS = frozenset(language.data("occasions.json")["stopwords"])
CONCEPTS: dict[str, tuple[str, ...]] = {m["concept"]: tuple(m["stems"]) for m in language.moods()}


def _concepts_of(token: str) -> list[str]:
    return [name for name, prefixes in CONCEPTS.items() if token.startswith(prefixes)]


def _bucket(feature: str) -> tuple[int, float]:
    digest = zlib.crc32(feature.encode("utf-8"))
    return digest % EMBEDDING_DIMENSIONS, (1.0 if (digest >> 31) & 1 else -1.0)


def features(text: str) -> dict[str, float]:
    """Weighted features of a text (public for tests and for explaining a match)."""
    weights: defaultdict[str, float] = defaultdict(float)
    for word in words(text):
        if word in STOPWORDS or len(word) < 2:
            continue
        token = stem(word)
        weights["w:" + token] += _STEM_WEIGHT
        padded = f"<{word}>"
        grams = [padded[i : i + n] for n in (3, 4, 5) for i in range(len(padded) - n + 1)]
        for gram in grams:
            weights["g:" + gram] += _NGRAM_WEIGHT / max(len(grams), 1) * 4
        for concept in _concepts_of(token) or _concepts_of(word):
            weights["c:" + concept] += _CONCEPT_WEIGHT
    return weights


def embed_text(text: str) -> list[float]:
    vector = [0.0] * EMBEDDING_DIMENSIONS
    for feature, weight in features(text).items():
        index, sign = _bucket(feature)
        # Sublinear term frequency: a word repeated in a long description must not dominate.
        vector[index] += sign * math.log1p(weight)
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:
        # An empty or stopword-only text still needs a valid unit vector.
        index, sign = _bucket("empty")
        vector[index] = sign
        return vector
    return [v / norm for v in vector]


class LocalHashingEmbeddings:
    """The `local` provider: offline and deterministic."""

    dimensions = EMBEDDING_DIMENSIONS

    def __init__(self, model: str = LOCAL_MODEL_NAME):
        self.model = model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [embed_text(text) for text in texts]
