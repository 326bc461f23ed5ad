"""The embedding provider port. Every vector carries the name of the model that made it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class EmbeddingError(RuntimeError):
    """The provider could not embed (network, quota, or a wrong vector size)."""


class EmbeddingProvider(Protocol):
    model: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, each `dimensions` long."""
        ...


def embed_one(provider: EmbeddingProvider, text: str) -> list[float]:
    return provider.embed([text])[0]
