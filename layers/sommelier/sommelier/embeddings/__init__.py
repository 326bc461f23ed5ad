"""Embedding providers: `openai` (text-embedding-3-small) and `local` (offline n-gram hashing)."""

from __future__ import annotations

from sommelier.config import Settings
from sommelier.embeddings.port import EmbeddingError, EmbeddingProvider, ModelMismatchError, embed_one

__all__ = ["EmbeddingError", "EmbeddingProvider", "ModelMismatchError", "embed_one", "provider_from_settings"]


def provider_from_settings(settings: Settings) -> EmbeddingProvider:
    if settings.embedding_provider == "openai":
        from sommelier.embeddings.openai_provider import OpenAIEmbeddings

        if not settings.embedding_api_key:
            raise EmbeddingError("EMBEDDING_PROVIDER=openai needs EMBEDDING_API_KEY or OPENAI_API_KEY")
        return OpenAIEmbeddings(
            api_key=settings.embedding_api_key,
            base_url=settings.embedding_base_url,
            model=settings.embedding_model,
        )
    from sommelier.embeddings.local import LocalHashingEmbeddings

    return LocalHashingEmbeddings(model=settings.embedding_model)
