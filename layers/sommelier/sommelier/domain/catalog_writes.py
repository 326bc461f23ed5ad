"""What the catalogue's writes answer: an import's summary, and the texts and vectors of the embeddings (the
catalogue drop loads only these, not the figures and export of `domain.catalog`)."""

from __future__ import annotations

from typing import NamedTuple


class ImportSummary(NamedTuple):
    inserted: int
    updated: int
    total: int
    retired: int
    ids: list[str]
    started_at: str


class WineEmbedding(NamedTuple):
    """A new vector for an existing wine."""

    id: str
    embedding: list[float]


class EmbeddingText(NamedTuple):
    """The text a wine is embedded from (re-embedding after a change of model)."""

    id: str
    text: str


# The fields of a wine's file row that its embedding text is made from (both stores re-embed from these).
EMBEDDED_FIELDS = frozenset(
    {
        "name",
        "producer",
        "country",
        "region",
        "appellation",
        "vintage_year",
        "grape_varieties",
        "wine_type",
        "sweetness",
        "body",
        "tannins",
        "acidity",
        "price_rub",
        "description",
        "tasting_notes",
        "food_pairings",
        "image_key",
    }
)


class EmbeddingTexts(NamedTuple):
    items: list[EmbeddingText]
