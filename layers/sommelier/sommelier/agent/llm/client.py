"""The chat LLM adapter (agent/llm/port.py), on the openai SDK (OpenRouter or any OpenAI-compatible endpoint).

One `complete` (a whole answer) or `stream` (a generator of content deltas that returns the reply; SSE read
by agent.llm.stream) is one logical call. It may take several HTTP requests: a re-send in a form the
endpoint accepts (a learned capability), a retry of a transport error, a 429/5xx (after Retry-After)
or an HTTP-200 error body. Every request gets its timeout from the turn's deadline, and no retry is
started that cannot finish within it. The SDK's own retries are off: they know nothing of the deadline.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Generator
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

import httpx2

from sommelier.agent.llm.capabilities import (
    MAX_OUTPUT_TOKENS,
    CapabilityRegistry,
    ModelCapabilities,
    has_images,
    lesson_from_error,
    parse_capabilities,
    provider_error_text,
    retry_delay_in_body,
    without_images,
)
from sommelier.agent.llm.port import (
    ChatLLM,
    ContentPart,
    GenerationsSpent,
    LLMDeadlineExceeded,
    LLMError,
    LLMLedger,
    LLMMessage,
    LLMReply,
    LLMRequestRejected,
    ToolCall,
    ToolSpec,
    ToolsUnsupported,
    UnusableEndpoint,
    drain,
)
from sommelier.agent.llm.reply import normalise_message, usage_of
from sommelier.domain.conversation import Deadline
from sommelier.observability.telemetry import subsegment
from sommelier.settings import LLMSettings, Settings

if TYPE_CHECKING:  # the SDK itself loads on the first OpenAIChat (~650 ms a cold start without an LLM skips)
    import openai

    from sommelier.domain.wire import JSONObject

logger = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_CALL_TIMEOUT_S = 30.0
MIN_CALL_S = 0.2  # a request with less time than this left is not started
MAX_LESSONS_PER_CALL = 6
SLOW_CALL_SHARE = 0.8  # a call that took this share of its timeout teaches a longer one…
SLOW_CALL_MARGIN = 1.5  # …of this many times what it took
BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 4.0


MAX_GENERATIONS_PER_TURN = 3  # billed generations (timed-out ones too) one turn may cause


def _check_stream_body(response: Any) -> None:
    """A stream's response that is not Server-Sent Events: an HTML page (by its type or its first byte) is
    not the API. Anything else is left to the stream's reader."""
    content_type = response.headers.get("content-type", "")
    _check_content_type(content_type, streaming=True)
    if "event-stream" not in content_type.lower() and response.read()[:512].lstrip()[:1] == b"<":
        raise UnusableEndpoint(f"the stream is an HTML page ({content_type or 'no content type'}), not the API")


def _check_content_type(content_type: str, *, streaming: bool) -> None:
    """An HTML page (a gateway's, a captive portal's, a wrong base URL's web UI) is not an answer."""
    if "html" in content_type.lower():
        shape = "stream" if streaming else "answer"
        raise UnusableEndpoint(f"the {shape} is an HTML page ({content_type}), not the API")


class _Retry(Exception):
    """Internal: wait `delay` seconds, then send again."""

    def __init__(self, reason: str, delay: float):
        super().__init__(reason)
        self.reason = reason
        self.delay = delay


class OpenAIChat:
    """Chat completions with tools, capability fallbacks and a deadline."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        temperature: float = 0.6,
        max_tokens: int = 1500,
        capabilities: CapabilityRegistry | None = None,
        stream: bool = True,
        stall_timeout: float = 20.0,
    ):
        self.model = model
        self.stall_timeout = stall_timeout
        self._stream_wanted = stream
        self._stream_refused = False  # the provider rejected `stream`: remembered for this client's life
        self._usage_in_stream = True  # stream_options.include_usage, until a provider rejects it
        self.timeout = timeout
        self.max_retries = max_retries
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.capabilities = capabilities or CapabilityRegistry()
        self._local = threading.local()  # the ledger of the call running in this thread
        import openai

        http_client = openai.DefaultHttpxClient(event_hooks={"request": [self._count_request]})
        self._client = openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0, http_client=http_client
        )

    @property
    def sees_images(self) -> bool:
        """Whether image parts reach the model (stated, or not yet refused)."""
        return self.capabilities.get(self.model).vision

    @property
    def streams(self) -> bool:
        """Whether `stream` calls really stream (config on, provider not refusing)."""
        return self._stream_wanted and not self._stream_refused

    def _count_request(self, _request: Any) -> None:
        ledger = getattr(self._local, "ledger", None)
        if ledger is not None:
            ledger.http_requests += 1

    # ------------------------------------------------------------------ the request
    def build_request(
        self,
        messages: list[LLMMessage],
        tools: list[ToolSpec] | None,
        final: bool,
        response_format: JSONObject | None,
        caps: ModelCapabilities,
    ) -> dict[str, Any]:
        """The request body this model accepts (one place, so a streaming final call can reuse it)."""
        if not caps.vision and has_images(messages):
            messages = without_images(messages)
        if caps.prompt_cache == "cache_control":
            messages = cache_marked(messages)
        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if caps.temperature:
            request["temperature"] = self.temperature
        request[caps.token_parameter] = caps.output_tokens or self.max_tokens
        history_has_tools = any(m.get("role") == "tool" or m.get("tool_calls") for m in messages)
        if tools and caps.tools:
            if not final:
                request["tools"] = tools
                if caps.parallel_tool_calls:
                    request["parallel_tool_calls"] = False
            elif caps.final_tools == "none_choice" and history_has_tools:
                request["tools"] = tools
                request["tool_choice"] = "none"
        if final and response_format and caps.response_format != "none":
            # Never on tool rounds: guided decoding (vLLM) would win over the tool calls.
            if caps.response_format == "json_schema":
                request["response_format"] = response_format
            else:
                request["response_format"] = {"type": "json_object"}
        return request

    # ------------------------------------------------------------------ one logical call
    def complete(
        self,
        messages: list[LLMMessage],
        *,
        tools: list[ToolSpec] | None = None,
        final: bool = False,
        response_format: JSONObject | None = None,
        deadline: Deadline | float | None = None,
        ledger: LLMLedger | None = None,
    ) -> LLMReply:
        """One logical call, answered whole. ``deadline``: the turn's Deadline (or an absolute time.monotonic
        end)."""
        call = self._call(messages, tools, final, response_format, deadline, ledger, stream=False)
        return drain(call)

    def stream(
        self,
        messages: list[LLMMessage],
        *,
        tools: list[ToolSpec] | None = None,
        final: bool = False,
        response_format: JSONObject | None = None,
        deadline: Deadline | float | None = None,
        ledger: LLMLedger | None = None,
    ) -> Generator[str, None, LLMReply]:
        """One logical call that streams when the provider allows it: yields each content delta as it arrives
        and returns the joined reply. A stream that breaks or stalls after content was yielded raises
        StreamBroken (the caller's retry names what was shown)."""
        return self._call(messages, tools, final, response_format, deadline, ledger, stream=True)

    def _call(
        self,
        messages: list[LLMMessage],
        tools: list[ToolSpec] | None,
        final: bool,
        response_format: JSONObject | None,
        deadline: Deadline | float | None,
        ledger: LLMLedger | None,
        *,
        stream: bool,
    ) -> Generator[str, None, LLMReply]:
        import openai  # loaded by __init__; this binds the name for the except clause

        turn_deadline = self._deadline(deadline)
        ledger = ledger if ledger is not None else LLMLedger()
        if ledger.unusable_endpoint:
            raise UnusableEndpoint(f"not asked again this turn: {ledger.unusable_endpoint}")
        ledger.logical_calls += 1
        state = _CallState(self, tools)
        self._local.ledger = ledger
        try:
            while True:
                caps = self.capabilities.get(self.model)
                if tools and not final and not caps.tools:
                    raise ToolsUnsupported(f"{self.model} does not accept tools at this endpoint")
                request = self.build_request(messages, tools, final, response_format, caps)
                timeout = state.attempt_timeout(turn_deadline)
                if ledger.generations >= MAX_GENERATIONS_PER_TURN:
                    raise GenerationsSpent(f"{ledger.generations} generations billed this turn; no more")
                streaming = stream and self.streams
                if streaming:
                    request["stream"] = True
                    if self._usage_in_stream:
                        request["stream_options"] = {"include_usage": True}
                elif caps.thinking_off:
                    # The provider refuses thinking on non-streamed calls: its own switch, off.
                    request["extra_body"] = {caps.thinking_off: False}
                started = time.monotonic()
                try:
                    completion = self._send(request, timeout, ledger, final=final, streaming=streaming)
                except UnusableEndpoint as exc:
                    raise self._unusable(exc, ledger) from None
                except (openai.APITimeoutError, _Retry, _Lesson) as exc:
                    self._recover(exc, state, turn_deadline, ledger, started)
                    continue
                ledger.generations += 1
                if streaming:
                    reply = yield from self._streamed_reply(completion, turn_deadline, state, ledger)
                else:
                    reply = self._whole_reply(completion, state, turn_deadline, ledger)
                if reply is None:
                    continue  # a provider error in the answer, tried once more
                ledger.usage.add(reply.usage)
                ledger.calls.append(reply.usage)
                state.learn_from_duration(time.monotonic() - started, ledger)
                if state.needs_room_to_think(reply, caps, turn_deadline, ledger):
                    continue
                return reply
        finally:
            self._local.ledger = None

    def _deadline(self, deadline: Deadline | float | None) -> Deadline:
        if isinstance(deadline, (int, float)):
            return Deadline(ends_at=float(deadline), budget_s=max(0.0, float(deadline) - time.monotonic()))
        return deadline or Deadline.after(self.timeout * (self.max_retries + 1) + BACKOFF_MAX_S)

    def _recover(
        self, exc: Exception, state: _CallState, deadline: Deadline, ledger: LLMLedger, started: float
    ) -> None:
        """After a failed request: learn, wait or give up (raises LLMError when no retry fits the budget)."""
        if isinstance(exc, _Lesson):
            state.lessons += 1
            if state.lessons > MAX_LESSONS_PER_CALL:
                raise LLMRequestRejected(f"the LLM rejected the request: {exc.reason}") from None
            if exc.change:
                self.capabilities.learn(self.model, exc.change, exc.reason)
            ledger.lessons.append(", ".join(f"{k}={v}" for k, v in exc.change.items()) or exc.note)
            return
        if isinstance(exc, _Retry):
            if state.retries >= self.max_retries or deadline.remaining_for_llm() < exc.delay + MIN_CALL_S:
                raise LLMError(f"the LLM is unavailable: {exc.reason}") from None
            state.retries += 1
            ledger.retries += 1
            logger.warning("LLM call failed (%s); retrying in %.2f s", exc.reason, exc.delay)
            time.sleep(exc.delay)
            return
        ledger.timeouts += 1
        ledger.generations += 1  # the provider bills a generation it was producing
        spent = time.monotonic() - started
        # Retry only when the retry gets more time than the attempt that timed out.
        if (
            state.retries >= self.max_retries
            or deadline.remaining_for_llm() <= spent + MIN_CALL_S
            or ledger.generations >= MAX_GENERATIONS_PER_TURN
        ):
            raise LLMError(f"the LLM timed out after {spent:.1f} s; no time for another try") from exc
        state.retries += 1
        ledger.retries += 1
        state.timeout_cap = float("inf")  # the next attempt may use what is left of the budget
        logger.warning("LLM call timed out after %.1f s; trying again with the rest of the budget", spent)

    def _streamed_reply(
        self, completion: Any, deadline: Deadline, state: _CallState, ledger: LLMLedger
    ) -> Generator[str, None, LLMReply | None]:
        """The stream's deltas, then its reply; None: a provider error before any content, to try once more."""
        from sommelier.agent.llm.stream import StreamBroken

        delivered = False
        try:
            reader = self._read_stream(completion, deadline, state.tool_names or None, state.first_token_s)
            while True:
                try:
                    delta = next(reader)
                except StopIteration as done:
                    reply: LLMReply = done.value
                    return reply
                delivered = True
                yield delta
        except StreamBroken as exc:
            # A provider error before any content reached the customer: retried once, like an error in a
            # 200; once content was shown, the agent's retry path takes it from there.
            if delivered or state.provider_errors >= 1 or deadline.remaining_for_llm() < MIN_CALL_S * 2:
                raise
            ledger.provider_errors += 1
            state.provider_errors += 1
            ledger.retries += 1
            logger.warning("the stream failed before any content (%s); trying once more", exc)
            return None

    def _whole_reply(
        self, completion: Any, state: _CallState, deadline: Deadline, ledger: LLMLedger
    ) -> LLMReply | None:
        error = _error_in_body(completion)
        if error is None:
            return _reply_from(completion, self.model, state.tool_names or None)
        # OpenRouter reports errors after generation started as HTTP 200: retried once.
        ledger.provider_errors += 1
        state.provider_errors += 1
        if state.provider_errors > 1 or deadline.remaining_for_llm() < MIN_CALL_S * 2:
            raise LLMError(f"the provider answered an error: {error}")
        logger.warning("the provider answered an error in a 200 (%s); trying once more", error)
        ledger.retries += 1
        return None

    def _read_stream(
        self, completion: Any, deadline: Deadline, tool_names: set[str] | None, first_token_s: float | None = None
    ) -> Generator[str, None, LLMReply]:
        from sommelier.agent.llm.stream import read_stream  # imports jiter only where streams are read

        reply = yield from read_stream(
            completion,
            model=self.model,
            deadline=deadline.ends_at - deadline.fallback_reserve_s,
            close=lambda: _cut(completion),
            clock=time.monotonic,
            stall_s=self.stall_timeout,
            first_token_s=first_token_s,
        )
        # The joined stream gets the same hygiene as a whole answer (ids, text tool calls, <think>).
        message = normalise_message(
            SimpleNamespace(
                content=reply.content,
                tool_calls=[
                    SimpleNamespace(id=c.id, function=SimpleNamespace(name=c.name, arguments=c.arguments))
                    for c in reply.tool_calls
                ],
            ),
            tool_names,
        )
        reply.content = message.content
        reply.tool_calls = [ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls]
        reply.reasoning = "\n".join(part for part in (reply.reasoning, message.reasoning) if part) or None
        return reply

    def _whole(self, request: dict[str, Any], timeout: float) -> Any:
        """A non-streamed completion, cut off when its time is up even if the provider keeps the response
        alive with a trickle of bytes (httpx's timeouts are per read, not per response)."""
        import openai

        sent = time.monotonic()
        with self._client.chat.completions.with_streaming_response.create(**request, timeout=timeout) as response:
            expired = threading.Event()

            def cut_off() -> None:
                expired.set()
                try:
                    response.close()
                except Exception as exc:  # closing from the watchdog thread: best effort
                    logger.debug("closing a late response failed: %s", exc)

            watchdog = threading.Timer(max(0.0, timeout - (time.monotonic() - sent)), cut_off)
            watchdog.daemon = True
            watchdog.start()
            try:
                _check_content_type(response.headers.get("content-type", ""), streaming=False)
                return response.parse()
            except (json.JSONDecodeError, ValueError) as exc:
                if expired.is_set():
                    raise openai.APITimeoutError(request=response.http_request) from exc
                if response.http_response.text.lstrip()[:1] == "<":
                    raise UnusableEndpoint("the body is an HTML page, not JSON") from exc
                raise
            except Exception as exc:
                if expired.is_set():
                    raise openai.APITimeoutError(request=response.http_request) from exc
                raise
            finally:
                watchdog.cancel()

    def _send(
        self, request: dict[str, Any], timeout: float, ledger: LLMLedger, *, final: bool, streaming: bool = False
    ) -> Any:
        """One HTTP request. Raises _Lesson, _Retry, LLMError or openai.APITimeoutError."""
        import openai

        try:
            with subsegment("llm", model=str(request.get("model", ""))):
                if streaming:
                    # No per-read stall limit here: keep-alive comments would reset it, and a reasoning model
                    # may think silently before its first token. read_stream times the data itself.
                    stream = self._client.chat.completions.create(**request, timeout=httpx2.Timeout(timeout))
                    try:
                        _check_stream_body(stream.response)
                    except UnusableEndpoint:
                        stream.close()
                        raise
                    return stream
                return self._whole(request, timeout)
        except (openai.APITimeoutError, UnusableEndpoint):
            raise
        except httpx2.TransportError as exc:  # the body broke off after the headers
            raise _Retry(f"connection: {type(exc).__name__}", _backoff(ledger.retries)) from exc
        except openai.APIConnectionError as exc:
            raise _Retry(f"connection: {type(exc).__name__}", _backoff(ledger.retries)) from exc
        except openai.APIStatusError as exc:
            raise self._status_failure(exc, request, ledger, final=final, streaming=streaming) from exc
        except openai.OpenAIError as exc:
            raise LLMError(f"the LLM is unavailable: {type(exc).__name__}: {_short(str(exc))}") from exc
        except (json.JSONDecodeError, ValueError) as exc:  # a 200 with a body that is not JSON
            raise _Retry(f"unreadable body: {_short(str(exc))}", _backoff(ledger.retries)) from exc

    def _unusable(self, exc: UnusableEndpoint, ledger: LLMLedger) -> UnusableEndpoint:
        """Remembered for the rest of the turn: the same address gives the same page."""
        ledger.unusable_endpoint = str(exc)
        logger.warning("the LLM endpoint answered something that is not its API: %s", exc)
        return exc

    def _status_failure(
        self, exc: openai.APIStatusError, request: dict[str, Any], ledger: LLMLedger, *, final: bool, streaming: bool
    ) -> Exception:
        """What an error status asks for, to raise: a lesson (the request changes), a retry after a pause, or
        the end (the request is rejected, or the LLM is unavailable)."""
        status = exc.status_code
        text = provider_error_text(exc)
        caps = self.capabilities.get(self.model)
        if streaming and status == 400:
            lesson = self._streaming_lesson(text)
            if lesson is not None:
                return lesson
        if status in (400, 404, 422) or (status >= 500 and status != 503):
            change = lesson_from_error(text, request, caps, final=final)
            if change:
                return _Lesson(change, text)
        if status in (408, 409, 429) or status >= 500:
            delay = _retry_after(exc)
            if delay is None:
                delay = retry_delay_in_body(getattr(exc, "body", None), text)
            if delay is None:
                delay = _backoff(ledger.retries)
            return _Retry(f"HTTP {status}: {_short(text)}", delay)
        if status in (400, 404, 422):
            return LLMRequestRejected(f"the LLM rejected the request: HTTP {status}: {_short(text)}")
        return LLMError(f"the LLM is unavailable: HTTP {status}: {_short(text)}")

    def _streaming_lesson(self, text: str) -> _Lesson | None:
        """A 400 that refuses the stream's usage chunk, or streaming itself: later calls go without it."""
        lowered = text.lower()
        if "stream_options" in lowered or "include_usage" in lowered:
            self._usage_in_stream = False
            return _Lesson({}, text, note="stream without usage")
        if "stream" in lowered.replace("stream_options", ""):
            self._stream_refused = True
            return _Lesson({}, text, note="no streaming")
        return None


class _CallState:
    """What one logical call has learned and spent across its attempts."""

    def __init__(self, client: OpenAIChat, tools: list[ToolSpec] | None):
        self.client = client
        self.tool_names = {t["function"]["name"] for t in tools or [] if "function" in t}
        self.retries = 0
        self.provider_errors = 0
        self.lessons = 0
        self.lengthened = False
        self.learned_timeout = client.capabilities.get(client.model).call_timeout_s or 0.0
        self.timeout_cap = max(client.timeout, self.learned_timeout)
        self.first_token_s: float | None = None  # the attempt's wait for its first data (set per attempt)

    def attempt_timeout(self, deadline: Deadline) -> float:
        remaining = deadline.remaining_for_llm()
        timeout = min(self.timeout_cap, remaining)
        if remaining - timeout < timeout + MIN_CALL_S:
            timeout = remaining  # no room for a retry after a cut-short attempt: let this one finish
        if timeout < MIN_CALL_S:
            raise LLMDeadlineExceeded(f"the turn's budget is spent ({deadline.budget_s:.1f} s)")
        # One long wait for the first token (a reasoning model thinks silently), not several short ones.
        self.first_token_s = timeout
        return timeout

    def learn_from_duration(self, took: float, ledger: LLMLedger) -> None:
        client = self.client
        if took > SLOW_CALL_SHARE * max(client.timeout, self.learned_timeout):
            # This model writes slowly: later calls get a timeout that lets such an answer finish.
            self.learned_timeout = round(took * SLOW_CALL_MARGIN, 3)
            client.capabilities.learn(
                client.model, {"call_timeout_s": self.learned_timeout}, f"a call took {took:.1f} s"
            )
            ledger.lessons.append(f"call_timeout_s={self.learned_timeout:g}")

    def needs_room_to_think(
        self, reply: LLMReply, caps: ModelCapabilities, deadline: Deadline, ledger: LLMLedger
    ) -> bool:
        """Thinking used up the output limit (an empty answer cut by "length"): a larger limit, for this call
        and the model's later ones. True when the call is tried once more with it."""
        client = self.client
        limit_now = caps.output_tokens or client.max_tokens
        if reply.content or reply.tool_calls or reply.finish_reason != "length" or self.lengthened:
            return False
        if limit_now >= MAX_OUTPUT_TOKENS:
            return False
        self.lengthened = True
        limit = min(MAX_OUTPUT_TOKENS, max(4 * limit_now, 8000))
        client.capabilities.learn(client.model, {"output_tokens": limit}, "empty answer cut by the limit")
        ledger.lessons.append(f"output_tokens={limit}")
        if deadline.remaining_for_llm() >= MIN_CALL_S * 2:
            ledger.retries += 1
            return True
        return False


class _Lesson(Exception):
    """Internal: the endpoint refused something it named; send again without it."""

    def __init__(self, change: dict[str, Any], reason: str, note: str = ""):
        super().__init__(reason)
        self.change = change
        self.reason = _short(reason)
        self.note = note


def cache_marked(messages: list[LLMMessage]) -> list[LLMMessage]:
    """The messages with the system prompt (the stable prefix, sent first) marked as a cache breakpoint:
    Anthropic-style `cache_control` on its last text part, which OpenRouter passes on."""
    marked = list(messages)
    for index, message in enumerate(marked):
        if message.get("role") != "system":
            continue
        content = message.get("content")
        parts: list[ContentPart] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        )
        last = parts[-1] if parts else None
        if last is not None and last["type"] == "text":
            parts[-1] = {"type": "text", "text": last["text"], "cache_control": {"type": "ephemeral"}}
            marked[index] = {**message, "content": parts}
        break
    return marked


def _cut(stream: Any) -> None:
    """End a stream from the watchdog's thread: a read blocked on a silent socket wakes only when the socket
    is shut down (closing the response does not interrupt it)."""
    import socket

    network = getattr(getattr(stream, "response", None), "extensions", {}).get("network_stream")
    sock = network.get_extra_info("socket") if network is not None else None
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError as exc:  # already closed
            logger.debug("shutting the stream's socket down failed: %s", exc)
    stream.close()


def _backoff(attempt: int) -> float:
    return min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2**attempt) * (0.75 + random.random() / 2)  # nosec B311 - retry jitter, not security


def _retry_after(exc: openai.APIStatusError) -> float | None:
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


def _short(text: str) -> str:
    return text.replace("\n", " ")[:400]


def _error_in_body(completion: Any) -> str | None:
    """An error reported inside an HTTP 200: `choices: null` with an `error` object, or a choice that
    finished with "error"."""
    error = getattr(completion, "error", None)
    if error is None:
        error = (getattr(completion, "model_extra", None) or {}).get("error")
    choices = getattr(completion, "choices", None)
    if not choices:
        if isinstance(error, dict):
            return _short(str(error.get("message") or error))
        return _short(str(error)) if error else "no choices in the answer"
    choice = choices[0]
    if getattr(choice, "finish_reason", None) == "error":
        choice_error = (getattr(choice, "model_extra", None) or {}).get("error") or error
        return _short(str(choice_error or "finish_reason error"))
    if getattr(choice, "message", None) is None:
        return "a choice without a message"
    return None


def _reply_from(completion: Any, model: str, tool_names: set[str] | None) -> LLMReply:
    choice = completion.choices[0]
    message = normalise_message(choice.message, tool_names)
    return LLMReply(
        content=message.content,
        tool_calls=[ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls],
        usage=usage_of(getattr(completion, "usage", None)),
        model=completion.model or model,
        finish_reason=choice.finish_reason,
        refusal=getattr(choice.message, "refusal", None),
        reasoning=message.reasoning,
        reasoning_details=message.reasoning_details,
    )


def llm_from_settings(settings: Settings) -> ChatLLM | None:
    """The configured chat LLM, or None when no key is set (offline mode)."""
    if settings.offline:
        return None
    llm = settings.llm
    stated = parse_capabilities(llm.capabilities)
    if llm.response_format:
        stated.setdefault(
            "response_format", parse_capabilities(f"response_format={response_format_mode(llm)}")["response_format"]
        )
    return OpenAIChat(
        api_key=llm.api_key or "",
        base_url=llm.base_url,
        model=llm.model,
        timeout=llm.timeout_s or DEFAULT_CALL_TIMEOUT_S,
        max_retries=llm.max_retries,
        capabilities=CapabilityRegistry({llm.model: stated} if stated else None),
        stream=llm.stream,
        stall_timeout=llm.stream_stall_s,
    )


def response_format_mode(llm: LLMSettings) -> str:
    """`json_schema` (default), `json_object` or `none`: the strongest JSON request to try first."""
    return llm.response_format or "json_schema"
