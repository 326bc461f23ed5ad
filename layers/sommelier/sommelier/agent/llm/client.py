"""The chat LLM adapter (agent/llm/port.py), on the openai SDK (OpenRouter or any OpenAI-compatible endpoint).

One `complete` (a whole answer) or `stream` (a generator of content deltas that returns the reply; SSE read
by agent.llm.stream) is one logical call. It may take several HTTP requests: a re-send in a form the
endpoint accepts (a learned capability), a retry of a transport error, a 429/5xx (after Retry-After)
or an HTTP-200 error body. Every request gets its timeout from the turn's deadline, and no retry is
started that cannot finish within it. The SDK's own retries are off: they know nothing of the deadline.

The parts of a call live beside it: the request body (`agent.llm.request`), one HTTP request
(`agent.llm.transport`), what a failure asks for (`agent.llm.failures`) and the attempts' accounting
(`agent.llm.attempts`). This module keeps the loop of attempts and the provider's streaming quirks.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import httpx2

from sommelier.agent.llm.attempts import MAX_GENERATIONS_PER_TURN, CallState, call_deadline
from sommelier.agent.llm.capabilities import (
    CapabilityRegistry,
    ModelCapabilities,
    parse_capabilities,
    provider_error_text,
)
from sommelier.agent.llm.failures import Lesson, Retry, backoff, short, status_failure
from sommelier.agent.llm.port import (
    ChatLLM,
    GenerationsSpent,
    LLMError,
    LLMLedger,
    LLMMessage,
    LLMReply,
    ToolSpec,
    ToolsUnsupported,
    UnusableEndpoint,
    drain,
)
from sommelier.agent.llm.request import request_body
from sommelier.agent.llm.transport import open_stream, read_streamed, whole_completion
from sommelier.domain.conversation import Deadline
from sommelier.observability.telemetry import subsegment
from sommelier.outbound import tls_context
from sommelier.settings import LLMSettings, Settings

if TYPE_CHECKING:  # the SDK itself loads on the first OpenAIChat (~650 ms a cold start without an LLM skips)
    import openai

    from sommelier.domain.wire import JSONObject

logger = logging.getLogger(__name__)

DEFAULT_CALL_TIMEOUT_S = 30.0


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

        http_client = openai.DefaultHttpxClient(event_hooks={"request": [self._count_request]}, verify=tls_context())
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

    def _count_request(self, _request: object) -> None:
        ledger: LLMLedger | None = getattr(self._local, "ledger", None)
        if ledger is not None:
            ledger.http_requests += 1

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
        """The attempts of one logical call, until one gives a reply or a failure ends the call."""
        import openai  # loaded by __init__; this binds the name for the except clause

        turn_deadline = call_deadline(deadline, self.timeout, self.max_retries)
        ledger = ledger if ledger is not None else LLMLedger()
        if ledger.unusable_endpoint:
            raise UnusableEndpoint(f"not asked again this turn: {ledger.unusable_endpoint}")
        ledger.logical_calls += 1
        state = CallState(
            model=self.model,
            capabilities=self.capabilities,
            timeout=self.timeout,
            max_tokens=self.max_tokens,
            max_retries=self.max_retries,
            tools=tools,
        )
        self._local.ledger = ledger
        try:
            while True:
                caps = self.capabilities.get(self.model)
                if tools and not final and not caps.tools:
                    raise ToolsUnsupported(f"{self.model} does not accept tools at this endpoint")
                request = request_body(
                    self.model,
                    messages,
                    tools=tools,
                    final=final,
                    response_format=response_format,
                    caps=caps,
                    temperature=self.temperature,
                    max_tokens=self.max_tokens,
                )
                timeout = state.attempt_timeout(turn_deadline)
                if ledger.generations >= MAX_GENERATIONS_PER_TURN:
                    raise GenerationsSpent(f"{ledger.generations} generations billed this turn; no more")
                streaming = stream and self.streams
                self._add_stream_options(request, caps, streaming=streaming)
                started = time.monotonic()
                try:
                    completion = self._send(request, timeout, ledger, final=final, streaming=streaming)
                except UnusableEndpoint as exc:
                    raise self._unusable(exc, ledger) from None
                except (openai.APITimeoutError, Retry, Lesson) as exc:
                    state.recover(exc, turn_deadline, ledger, started)
                    continue
                ledger.generations += 1
                if streaming:
                    reader = read_streamed(
                        completion,
                        model=self.model,
                        deadline=turn_deadline,
                        stall_s=self.stall_timeout,
                        first_token_s=state.first_token_s,
                        tool_names=state.tool_names or None,
                    )
                    reply = yield from state.streamed_reply(reader, turn_deadline, ledger)
                else:
                    reply = state.whole_reply(completion, turn_deadline, ledger)
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

    def _add_stream_options(self, request: dict[str, Any], caps: ModelCapabilities, *, streaming: bool) -> None:
        """The attempt's streaming fields, in the form this provider accepts."""
        if streaming:
            request["stream"] = True
            if self._usage_in_stream:
                request["stream_options"] = {"include_usage": True}
        elif caps.thinking_off:
            # The provider refuses thinking on non-streamed calls: its own switch, off.
            request["extra_body"] = {caps.thinking_off: False}

    # ------------------------------------------------------------------ one request
    def _send(
        self, request: dict[str, Any], timeout: float, ledger: LLMLedger, *, final: bool, streaming: bool = False
    ) -> Any:
        """One HTTP request. Raises Lesson, Retry, LLMError or openai.APITimeoutError."""
        import openai

        try:
            with subsegment("llm", model=str(request.get("model", ""))):
                if streaming:
                    return open_stream(self._client, request, timeout)
                return whole_completion(self._client, request, timeout)
        except (openai.APITimeoutError, UnusableEndpoint):
            raise
        except httpx2.TransportError as exc:  # the body broke off after the headers
            raise Retry(f"connection: {type(exc).__name__}", backoff(ledger.retries)) from exc
        except openai.APIConnectionError as exc:
            raise Retry(f"connection: {type(exc).__name__}", backoff(ledger.retries)) from exc
        except openai.APIStatusError as exc:
            raise self._status_failure(exc, request, ledger, final=final, streaming=streaming) from exc
        except openai.OpenAIError as exc:
            raise LLMError(f"the LLM is unavailable: {type(exc).__name__}: {short(str(exc))}") from exc
        except (json.JSONDecodeError, ValueError) as exc:  # a 200 with a body that is not JSON
            raise Retry(f"unreadable body: {short(str(exc))}", backoff(ledger.retries)) from exc

    def _unusable(self, exc: UnusableEndpoint, ledger: LLMLedger) -> UnusableEndpoint:
        """Remembered for the rest of the turn: the same address gives the same page."""
        ledger.unusable_endpoint = str(exc)
        logger.warning("the LLM endpoint answered something that is not its API: %s", exc)
        return exc

    def _status_failure(
        self, exc: openai.APIStatusError, request: dict[str, Any], ledger: LLMLedger, *, final: bool, streaming: bool
    ) -> Exception:
        """What an error status asks for, to raise; a 400 that refuses streaming is this client's to remember."""
        text = provider_error_text(exc)
        if streaming and exc.status_code == 400:
            lesson = self._streaming_lesson(text)
            if lesson is not None:
                return lesson
        return status_failure(exc, text, request, self.capabilities.get(self.model), ledger.retries, final=final)

    def _streaming_lesson(self, text: str) -> Lesson | None:
        """A 400 that refuses the stream's usage chunk, or streaming itself: later calls go without it."""
        lowered = text.lower()
        if "stream_options" in lowered or "include_usage" in lowered:
            self._usage_in_stream = False
            return Lesson({}, text, note="stream without usage")
        if "stream" in lowered.replace("stream_options", ""):
            self._stream_refused = True
            return Lesson({}, text, note="no streaming")
        return None


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
