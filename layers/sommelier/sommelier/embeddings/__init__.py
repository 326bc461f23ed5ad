"""Embedding providers: `openai` (text-embedding-3-small) and `local` (offline n-gram hashing)."""

from __future__ import annotations

from collections.abc import Sequence

# ModelMismatchError lives in the domain: the tool function raises it without the embedders.
from sommelier.domain.errors import ModelMismatchError
from sommelier.embeddings.port import EmbeddingError, EmbeddingProvider, embed_one
from sommelier.settings import Settings

__all__ = ["EmbeddingError", "EmbeddingProvider", "ModelMismatchError", "embed_one", "provider_from_settings"]


class UnavailableEmbeddings:
    """A provider that can't work (no key): every call raises, so semantic search degrades, turns go on."""

    dimensions = 1536

    def __init__(self, model: str, reason: str):
        self.model = model
        self.reason = reason

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbeddingError(self.reason)


def provider_from_settings(settings: Settings, *, strict: bool = True) -> EmbeddingProvider:
    """The configured provider. With strict=False a misconfiguration yields UnavailableEmbeddings."""
    embeddings = settings.embeddings
    if embeddings.provider == "openai":
        from sommelier.embeddings.openai_provider import OpenAIEmbeddings

        if not embeddings.api_key:
            reason = "EMBEDDING_PROVIDER=openai needs EMBEDDING_API_KEY or OPENAI_API_KEY"
            if strict:
                raise EmbeddingError(reason)
            return UnavailableEmbeddings(embeddings.model, reason)
        return OpenAIEmbeddings(api_key=embeddings.api_key, base_url=embeddings.base_url, model=embeddings.model)
    from sommelier.embeddings.local import LocalHashingEmbeddings

    return LocalHashingEmbeddings(model=embeddings.model)
