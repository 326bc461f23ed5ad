"""What a failed request asks for: a lesson (the request changes: the endpoint refused something it named),
a retry after a pause (a 429, a 5xx, a broken connection), or the end (the request is rejected, or the LLM
is unavailable). Also an error reported inside an HTTP 200, and the pause before a retry.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from sommelier.agent.llm.capabilities import ModelCapabilities, lesson_from_error, retry_delay_in_body
from sommelier.agent.llm.port import LLMError, LLMRequestRejected

if TYPE_CHECKING:  # the SDK loads with the first OpenAIChat
    import openai

BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 4.0


class Retry(Exception):
    """Wait `delay` seconds, then send again."""

    def __init__(self, reason: str, delay: float):
        super().__init__(reason)
        self.reason = reason
        self.delay = delay


class Lesson(Exception):
    """The endpoint refused something it named; send again without it."""

    def __init__(self, change: dict[str, Any], reason: str, note: str = ""):
        super().__init__(reason)
        self.change = change
        self.reason = short(reason)
        self.note = note


def status_failure(
    exc: openai.APIStatusError,
    text: str,
    request: dict[str, Any],
    caps: ModelCapabilities,
    attempt: int,
    *,
    final: bool,
) -> Exception:
    """What an error status asks for, to raise. `text`: everything the error says; `attempt`: the retries
    so far (the backoff grows with them)."""
    status = exc.status_code
    if status in (400, 404, 422) or (status >= 500 and status != 503):
        change = lesson_from_error(text, request, caps, final=final)
        if change:
            return Lesson(change, text)
    if status in (408, 409, 429) or status >= 500:
        delay = retry_after(exc)
        if delay is None:
            delay = retry_delay_in_body(getattr(exc, "body", None), text)
        if delay is None:
            delay = backoff(attempt)
        return Retry(f"HTTP {status}: {short(text)}", delay)
    if status in (400, 404, 422):
        return LLMRequestRejected(f"the LLM rejected the request: HTTP {status}: {short(text)}")
    return LLMError(f"the LLM is unavailable: HTTP {status}: {short(text)}")


def retry_after(exc: openai.APIStatusError) -> float | None:
    """Retry-After (seconds or an HTTP date is rare for LLM APIs; seconds only) or retry-after-ms."""
    headers = getattr(exc.response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw:
            try:
                return max(0.0, float(raw) * scale)
            except ValueError:
                continue
    return None


def backoff(attempt: int) -> float:
    return min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2.0**attempt) * (0.75 + random.random() / 2)  # nosec B311 - retry jitter, not security


def error_in_body(completion: Any) -> str | None:
    """An error reported inside an HTTP 200: `choices: null` with an `error` object, or a choice that
    finished with "error"."""
    error = getattr(completion, "error", None)
    if error is None:
        error = (getattr(completion, "model_extra", None) or {}).get("error")
    choices = getattr(completion, "choices", None)
    if not choices:
        if isinstance(error, dict):
            return short(str(error.get("message") or error))
        return short(str(error)) if error else "no choices in the answer"
    choice = choices[0]
    if getattr(choice, "finish_reason", None) == "error":
        choice_error = (getattr(choice, "model_extra", None) or {}).get("error") or error
        return short(str(choice_error or "finish_reason error"))
    if getattr(choice, "message", None) is None:
        return "a choice without a message"
    return None


def short(text: str) -> str:
    return text.replace("\n", " ")[:400]
