"""A streamed chat completion (Server-Sent Events), read robustly.

``read_stream`` turns the openai SDK's chunk iterator into content deltas (yielded as they come) and one
``LLMReply`` (returned): content and tool-call
deltas are joined, a usage chunk with no choices is counted, and a stream that breaks, reports an
``error`` object or ``finish_reason: "error"`` (OpenRouter's way after streaming started), stalls or
outlives the turn deadline raises ``StreamBroken`` with what had arrived. The SDK already skips SSE
comment lines such as ``: OPENROUTER PROCESSING`` and raises on an ``error`` object in a chunk.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sommelier.agent.llm.port import LLMError, LLMReply, ToolCall, Usage
from sommelier.agent.llm.reply import content_text, usage_of

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


@dataclass
class _Assembly:
    """What a stream has delivered so far, one method per kind of chunk part."""

    content: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    # sent back with the message (Gemini's thought signatures)
    reasoning_details: list[Any] = field(default_factory=list)
    calls: dict[int, _CallParts] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    model: str = ""

    @property
    def partial(self) -> str:
        """The content so far, for a StreamBroken."""
        return "".join(self.content)

    def take_chunk(self, chunk: Any) -> Iterator[str]:
        """One chunk; yields its content text. Only the first choice is the answer (n > 1 is never asked for)."""
        self.model = getattr(chunk, "model", None) or self.model
        chunk_usage = getattr(chunk, "usage", None)
        if chunk_usage is not None:  # the usage chunk (no choices) or usage on the last choice chunk
            self.take_usage(chunk_usage)
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) not in (0, None):
                continue
            if choice.delta is not None:
                yield from self.take_delta(choice.delta)
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason

    def take_usage(self, chunk_usage: Any) -> None:
        """The token counts; a later usage replaces an earlier one."""
        self.usage = usage_of(chunk_usage)

    def take_delta(self, delta: Any) -> Iterator[str]:
        """A choice's delta; its content text is yielded before the rest of it is taken."""
        text = getattr(delta, "content", None)
        if text is not None and not isinstance(text, str):  # a list of parts (Mistral's thinking and text)
            text, thought = content_text(text)
            if thought:
                self.reasoning.append(thought)
        if text:
            self.content.append(text)
            yield text
        if getattr(delta, "refusal", None):
            self.refusal.append(delta.refusal)
        self.take_reasoning(getattr(delta, "model_extra", None) or {})
        self.take_tool_calls(getattr(delta, "tool_calls", None) or [])

    def take_reasoning(self, extra: dict[str, Any]) -> None:
        """Reasoning text and details, which providers send as fields the SDK does not model."""
        for name in ("reasoning", "reasoning_content"):
            if isinstance(extra.get(name), str):
                self.reasoning.append(extra[name])
        if isinstance(extra.get("reasoning_details"), list):
            self.reasoning_details.extend(extra["reasoning_details"])

    def take_tool_calls(self, tool_calls: list[Any]) -> None:
        """Tool-call fragments, joined by index (or by position when a provider leaves the index out)."""
        for position, call in enumerate(tool_calls):
            index = call.index if call.index is not None else position
            parts = self.calls.setdefault(index, _CallParts())
            parts.id = call.id or parts.id
            function = getattr(call, "function", None)
            if function is not None:
                parts.name = function.name or parts.name
                if function.arguments:
                    parts.arguments.append(function.arguments)

    def reply(self, requested_model: str) -> LLMReply:
        """The assembled reply; a call that never got a name is dropped."""
        tool_calls = [
            ToolCall(id=parts.id or f"call_{index}", name=parts.name, arguments="".join(parts.arguments) or "{}")
            for index, parts in sorted(self.calls.items())
            if parts.name
        ]
        return LLMReply(
            content=self.partial if self.content else None,
            tool_calls=tool_calls,
            usage=self.usage,
            model=self.model or requested_model,
            finish_reason=self.finish_reason,
            refusal="".join(self.refusal) or None,
            reasoning="".join(self.reasoning) or None,
            reasoning_details=self.reasoning_details or None,
        )


def read_stream(
    chunks: Iterable[Any],
    *,
    model: str,
    deadline: float | None = None,
    close: Callable[[], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    stall_s: float | None = None,
    first_token_s: float | None = None,
) -> Generator[str, None, LLMReply]:
    """Join a chat.completion.chunk stream into one reply, yielding each content delta as it arrives.
    Raises StreamBroken when it does not end well.

    A watchdog calls ``close`` (the SDK stream's close) when the stream outlives ``deadline`` (on ``clock``),
    when no data chunk came for ``stall_s`` after the first one, or when the first took longer than
    ``first_token_s``. Only data counts: the SDK drops SSE comments, so keep-alive comments never reset it.
    """
    assembly = _Assembly()
    watchdog = _Watchdog(deadline, stall_s, first_token_s, close, clock)
    watchdog.start()
    try:
        for chunk in chunks:
            if watchdog.reason:
                break
            watchdog.touch()
            yield from assembly.take_chunk(chunk)
            if assembly.finish_reason == "error":
                raise StreamBroken('the stream reported finish_reason "error"', assembly.partial)
    except StreamBroken:
        raise
    except Exception as exc:  # APIError (an error object), APIConnectionError / APITimeoutError (break, stall)
        if watchdog.reason:
            raise StreamBroken(watchdog.reason, assembly.partial) from exc
        raise StreamBroken(f"the stream broke: {type(exc).__name__}: {_short(exc)}", assembly.partial) from exc
    finally:
        watchdog.stop()
    if watchdog.reason:
        _quietly(close)
        raise StreamBroken(watchdog.reason, assembly.partial)
    if assembly.finish_reason is None:
        raise StreamBroken("the stream ended without a finish_reason", assembly.partial)
    return assembly.reply(model)


class _Watchdog:
    """Closes the stream when it passes the deadline, stalls between data chunks, or waits too long for the
    first one; ``reason`` says which. One thread per stream, waking only when a limit could have passed."""

    def __init__(
        self,
        deadline: float | None,
        stall_s: float | None,
        first_token_s: float | None,
        close: Callable[[], None] | None,
        clock: Callable[[], float],
    ):
        self.deadline, self.stall_s, self.first_token_s = deadline, stall_s, first_token_s
        self.close, self.clock = close, clock
        self.reason = ""
        self.started = self.last_data = clock()
        self.data_seen = False
        self._stopped = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def touch(self) -> None:
        self.last_data = self.clock()
        if not self.data_seen:
            self.data_seen = True
            self._wake.set()  # from the first data on, the stall limit applies: the thread recomputes

    def start(self) -> None:
        if self.close is None or (self.deadline is None and self.stall_s is None and self.first_token_s is None):
            return
        self._thread = threading.Thread(target=self._run, name="stream-watchdog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._wake.set()

    def _limit(self) -> tuple[float, str]:
        limits: list[tuple[float, str]] = []
        if self.deadline is not None:
            limits.append((self.deadline, "the turn deadline passed while the answer streamed"))
        if self.data_seen and self.stall_s is not None:
            limits.append((self.last_data + self.stall_s, f"the stream stalled: no data for {self.stall_s:g} s"))
        if not self.data_seen and self.first_token_s is not None:
            limits.append(
                (self.started + self.first_token_s, f"no data within {self.first_token_s:.1f} s of the request")
            )
        return min(limits) if limits else (float("inf"), "")

    def _run(self) -> None:
        while not self._stopped.is_set():
            limit, reason = self._limit()
            now = self.clock()
            if now >= limit:
                self.reason = reason
                _quietly(self.close)
                return
            self._wake.wait(min(limit - now, 3600.0))
            self._wake.clear()


def _quietly(close: Callable[[], None] | None) -> None:
    if close is None:
        return
    try:
        close()
    except Exception as exc:  # closing a half-read response from the watchdog thread: best effort
        logger.debug("closing the stream failed: %s", exc)


def _short(exc: BaseException) -> str:
    return str(exc).replace("\n", " ")[:300]
