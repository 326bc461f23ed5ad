"""Speech to text: a voice message or a video note becomes the customer's typed request.

A small port (`Transcriber`) with one adapter: an OpenAI-compatible ``POST /audio/transcriptions`` (OpenAI's
whisper-1 and gpt-4o-transcribe, Groq, a local whisper server...) through the openai SDK, configured by
STT_BASE_URL, STT_API_KEY and STT_MODEL (docs/architecture.md, settings).
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from sommelier.domain.errors import PortError
from sommelier.outbound import tls_context
from sommelier.settings import Settings, SpeechSettings

logger = logging.getLogger(__name__)

LANGUAGE = "ru"  # the shop's customers speak Russian; the hint makes short messages far more accurate
TIMEOUT_S = 30.0


class TranscriptionError(PortError):
    """The audio could not be turned into text (the endpoint refused it, or did not answer)."""


class Transcriber(Protocol):
    def transcribe(self, audio: bytes, filename: str) -> str:
        """The words spoken in ``audio`` (may be empty); raises TranscriptionError."""
        ...


class OpenAITranscriber:
    def __init__(self, settings: SpeechSettings, client: Any = None):
        self.model = settings.model
        if client is None:
            import openai

            client = openai.OpenAI(
                api_key=settings.api_key,
                base_url=settings.base_url,
                timeout=TIMEOUT_S,
                max_retries=1,
                http_client=openai.DefaultHttpxClient(verify=tls_context()),
            )
        self._client = client

    def transcribe(self, audio: bytes, filename: str) -> str:
        import openai

        try:
            result = self._client.audio.transcriptions.create(
                model=self.model, file=(filename, audio), language=LANGUAGE, response_format="json"
            )
        except openai.OpenAIError as exc:
            raise TranscriptionError(f"transcription failed: {type(exc).__name__}: {exc}") from None
        text = getattr(result, "text", result if isinstance(result, str) else "")
        return " ".join(str(text or "").split())


def transcriber_from_settings(settings: Settings) -> Transcriber | None:
    """The configured transcriber; None without a key (or offline): voice messages are asked to be typed."""
    if settings.offline_forced or not settings.speech.api_key:
        return None
    return OpenAITranscriber(settings.speech)
