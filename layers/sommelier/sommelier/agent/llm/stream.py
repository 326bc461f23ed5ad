"""A streamed chat completion (Server-Sent Events), read robustly.

``read_stream`` turns the openai SDK's chunk iterator into one ``LLMReply``: content and tool-call
deltas are joined, a usage chunk with no choices is counted, and a stream that breaks, reports an
``error`` object or ``finish_reason: "error"`` (OpenRouter's way after streaming started), stalls or
outlives the turn deadline raises ``StreamBroken`` with what had arrived. The SDK already skips SSE
comment lines such as ``: OPENROUTER PROCESSING`` and raises on an ``error`` object in a chunk.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sommelier.agent.llm.client import LLMError, LLMReply, ToolCall, Usage

logger = logging.getLogger(__name__)


class StreamBroken(LLMError):
    """The stream ended before the answer did. ``partial`` is the content that had arrived."""

    def __init__(self, message: str, partial: str = ""):
        super().__init__(message)
        self.partial = partial


@dataclass
class _CallParts:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def read_stream(
    chunks: Iterable[Any],
    *,
    model: str,
    on_content: Callable[[str], None] | None = None,
    deadline: float | None = None,
    close: Callable[[], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> LLMReply:
    """Join a chat.completion.chunk stream into one reply. Raises StreamBroken when it does not end well.

    ``deadline`` (on ``clock``) bounds the whole stream: a watchdog calls ``close`` (the SDK stream's
    close) when it passes, so even a provider that sends only keep-alive comments is cut off.
    """
    content: list[str] = []
    refusal: list[str] = []
    reasoning: list[str] = []
    reasoning_details: list[Any] = []  # sent back with the message (Gemini's thought signatures)
    calls: dict[int, _CallParts] = {}
    usage = Usage()
    finish_reason: str | None = None
    answered_model = ""
    expired = threading.Event()
    watchdog = None
    if deadline is not None and close is not None:
        watchdog = threading.Timer(max(deadline - clock(), 0.0), lambda: (expired.set(), _quietly(close)))
        watchdog.daemon = True
        watchdog.start()
    try:
        for chunk in chunks:
            if deadline is not None and clock() > deadline:
                expired.set()
                break
            answered_model = getattr(chunk, "model", None) or answered_model
            chunk_usage = getattr(chunk, "usage", None)
            if chunk_usage is not None:  # the usage chunk (no choices) or usage on the last choice chunk
                details = getattr(chunk_usage, "completion_tokens_details", None)
                usage = Usage(
                    chunk_usage.prompt_tokens or 0,
                    chunk_usage.completion_tokens or 0,
                    (getattr(details, "reasoning_tokens", None) or 0) if details is not None else 0,
                )
            for choice in getattr(chunk, "choices", None) or []:
                if getattr(choice, "index", 0) not in (0, None):
                    continue
                delta = choice.delta
                text = getattr(delta, "content", None) if delta is not None else None
                if text:
                    content.append(text)
                    if on_content is not None:
                        on_content(text)
                if delta is not None and getattr(delta, "refusal", None):
                    refusal.append(delta.refusal)
                extra = (getattr(delta, "model_extra", None) or {}) if delta is not None else {}
                for name in ("reasoning", "reasoning_content"):
                    if isinstance(extra.get(name), str):
                        reasoning.append(extra[name])
                if isinstance(extra.get("reasoning_details"), list):
                    reasoning_details.extend(extra["reasoning_details"])
                for position, call in enumerate((getattr(delta, "tool_calls", None) if delta else None) or []):
                    index = call.index if call.index is not None else position
                    parts = calls.setdefault(index, _CallParts())
                    parts.id = call.id or parts.id
                    function = getattr(call, "function", None)
                    if function is not None:
                        parts.name = function.name or parts.name
                        if function.arguments:
                            parts.arguments.append(function.arguments)
                if choice.finish_reason:
                    finish_reason = choice.finish_reason
            if finish_reason == "error":
                raise StreamBroken('the stream reported finish_reason "error"', "".join(content))
    except StreamBroken:
        raise
    except Exception as exc:  # APIError (an error object), APIConnectionError / APITimeoutError (break, stall)
        if expired.is_set():
            raise StreamBroken("the turn deadline passed while the answer streamed", "".join(content)) from exc
        raise StreamBroken(f"the stream broke: {type(exc).__name__}: {_short(exc)}", "".join(content)) from exc
    finally:
        if watchdog is not None:
            watchdog.cancel()
    if expired.is_set():
        _quietly(close)
        raise StreamBroken("the turn deadline passed while the answer streamed", "".join(content))
    if finish_reason is None:
        raise StreamBroken("the stream ended without a finish_reason", "".join(content))
    tool_calls = [
        ToolCall(id=parts.id or f"call_{index}", name=parts.name, arguments="".join(parts.arguments) or "{}")
        for index, parts in sorted(calls.items())
        if parts.name
    ]
    return LLMReply(
        content="".join(content) if content else None,
        tool_calls=tool_calls,
        usage=usage,
        model=answered_model or model,
        finish_reason=finish_reason,
        refusal="".join(refusal) or None,
        reasoning="".join(reasoning) or None,
        reasoning_details=reasoning_details or None,
    )


def _quietly(close: Callable[[], None] | None) -> None:
    if close is None:
        return
    try:
        close()
    except Exception as exc:  # closing a half-read response from the watchdog thread: best effort
        logger.debug("closing the stream failed: %s", exc)


def _short(exc: BaseException) -> str:
    return str(exc).replace("\n", " ")[:300]
