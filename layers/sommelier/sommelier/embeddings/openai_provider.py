"""Embeddings through any OpenAI-compatible endpoint (text-embedding-3-small by default)."""

from __future__ import annotations

from collections.abc import Sequence

import openai

from sommelier.embeddings.port import EmbeddingError
from sommelier.outbound import tls_context
from sommelier.settings import EMBEDDING_DIMENSIONS

BATCH_SIZE = 96


class OpenAIEmbeddings:
    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        model: str = "text-embedding-3-small",
        dimensions: int = EMBEDDING_DIMENSIONS,
        timeout: float = 20.0,
        max_retries: int = 3,
    ):
        self.model = model
        self.dimensions = dimensions
        # The SDK retries 408/409/429/5xx and connection errors with exponential backoff.
        self._client = openai.OpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            http_client=openai.DefaultHttpxClient(verify=tls_context()),
        )

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH_SIZE):
            batch = [text if text.strip() else " " for text in texts[start : start + BATCH_SIZE]]
            try:
                response = self._client.embeddings.create(model=self.model, input=batch, encoding_format="float")
            except openai.OpenAIError as exc:
                raise EmbeddingError(f"embedding request failed: {exc}") from exc
            ordered = sorted(response.data, key=lambda item: item.index)
            if len(ordered) != len(batch):
                raise EmbeddingError(f"asked for {len(batch)} embeddings, got {len(ordered)}")
            for item in ordered:
                if len(item.embedding) != self.dimensions:
                    raise EmbeddingError(
                        f"model {self.model} returned {len(item.embedding)} dimensions, expected {self.dimensions}"
                    )
                vectors.append(list(item.embedding))
        return vectors
