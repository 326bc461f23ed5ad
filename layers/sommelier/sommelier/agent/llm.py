"""The chat LLM port, on the openai SDK (OpenRouter or any OpenAI-compatible endpoint)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx2
import openai

from sommelier.config import Settings, env, env_int

logger = logging.getLogger(__name__)


class LLMError(RuntimeError):
    """The model could not be reached or answered something unusable (after the SDK's retries)."""


class LLMRequestRejected(LLMError):
    """The endpoint refused the request itself (e.g. tools or response_format not supported)."""


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text, as the model wrote it


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens


@dataclass
class LLMReply:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = None
    refusal: str | None = None

    def assistant_message(self) -> dict[str, Any]:
        """The reply as a message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


class ChatLLM(Protocol):
    model: str

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict] | None = None,
        response_format: dict | None = None,
    ) -> LLMReply: ...


class OpenAIChat:
    """Chat completions with tools. The SDK retries 408/409/429/5xx and connection errors with backoff."""

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
        stream: bool = True,
        stall_timeout: float = 20.0,
    ):
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.stall_timeout = stall_timeout
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries)
        self._response_format_supported = True
        self._stream_wanted = stream
        self._stream_refused = False  # the provider rejected `stream`: remembered for this client's life
        self._usage_in_stream = True  # stream_options.include_usage, until a provider rejects it

    @property
    def streams(self) -> bool:
        """Whether calls given an ``on_content`` callback stream (config on, provider not refusing)."""
        return self._stream_wanted and not self._stream_refused

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict] | None = None,
        response_format: dict | None = None,
        on_content: Callable[[str], None] | None = None,
        deadline: float | None = None,
    ) -> LLMReply:
        """One chat completion. With ``on_content`` (and streaming on) it streams: every content delta goes
        to ``on_content`` as it arrives, and a stream that breaks or stalls raises StreamBroken.
        ``deadline`` (time.monotonic) bounds a streamed call as a whole."""
        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if tools:
            request["tools"] = tools
            request["parallel_tool_calls"] = False
        if response_format and self._response_format_supported:
            request["response_format"] = response_format
        streaming = on_content is not None and self.streams
        if streaming:
            request["stream"] = True
            if self._usage_in_stream:
                request["stream_options"] = {"include_usage": True}
            # A stream that produces no bytes for stall_timeout fails (httpx2's read timeout between chunks).
            request["timeout"] = httpx2.Timeout(self.timeout, read=self.stall_timeout)
        try:
            completion = self._client.chat.completions.create(**request)
        except openai.BadRequestError as exc:
            message = str(exc).lower()
            if streaming and ("stream_options" in message or "include_usage" in message):
                logger.info("stream_options rejected by the provider; streaming without usage")
                self._usage_in_stream = False
                return self.complete(
                    messages, tools=tools, response_format=response_format, on_content=on_content, deadline=deadline
                )
            if streaming and "stream" in message.replace("stream_options", ""):
                logger.info("streaming rejected by the provider; answering without it from now on")
                self._stream_refused = True
                return self.complete(messages, tools=tools, response_format=response_format)
            if "response_format" in request and ("response_format" in message or "json_schema" in message):
                # Some providers reject json_schema; ask again and parse tolerantly.
                logger.info("response_format rejected by the provider; falling back to plain JSON instructions")
                self._response_format_supported = False
                return self.complete(
                    messages, tools=tools, response_format=None, on_content=on_content, deadline=deadline
                )
            raise LLMRequestRejected(f"the LLM rejected the request: {_short(exc)}") from exc
        except (openai.NotFoundError, openai.UnprocessableEntityError) as exc:
            raise LLMRequestRejected(f"the LLM rejected the request: {_short(exc)}") from exc
        except openai.OpenAIError as exc:
            raise LLMError(f"the LLM is unavailable: {type(exc).__name__}: {_short(exc)}") from exc
        except (json.JSONDecodeError, ValueError) as exc:  # a 200 with a body that is not JSON
            raise LLMError(f"the LLM answered an unreadable body: {exc}") from exc
        if streaming:
            from sommelier.agent.streaming import read_stream  # imports jiter only where streams are read

            return read_stream(
                completion,
                model=self.model,
                on_content=on_content,
                deadline=deadline,
                close=completion.close,
                clock=time.monotonic,
            )
        return _reply_from(completion, self.model)


def _short(exc: Exception) -> str:
    return str(exc).replace("\n", " ")[:300]


def _reply_from(completion: Any, model: str) -> LLMReply:
    if not getattr(completion, "choices", None):
        raise LLMError("the LLM answered with no choices")
    choice = completion.choices[0]
    message = choice.message
    calls = [
        ToolCall(id=c.id or f"call_{i}", name=c.function.name, arguments=c.function.arguments or "{}")
        for i, c in enumerate(message.tool_calls or [])
        if getattr(c, "function", None) is not None
    ]
    usage = Usage()
    if completion.usage is not None:
        usage = Usage(completion.usage.prompt_tokens or 0, completion.usage.completion_tokens or 0)
    return LLMReply(
        content=message.content,
        tool_calls=calls,
        usage=usage,
        model=completion.model or model,
        finish_reason=choice.finish_reason,
        refusal=getattr(message, "refusal", None),
    )


def llm_from_settings(settings: Settings) -> ChatLLM | None:
    """The configured chat LLM, or None when no key is set (offline mode)."""
    if settings.offline:
        return None
    return OpenAIChat(
        api_key=settings.openai_api_key or "",
        base_url=settings.openai_base_url,
        model=settings.llm_model,
        timeout=float(env_int("LLM_TIMEOUT_S", 30)),
        max_retries=env_int("LLM_MAX_RETRIES", 2),
        stream=(env("LLM_STREAM") or "on").lower() not in {"0", "false", "no", "off"},
        stall_timeout=float(env_int("LLM_STREAM_STALL_S", 20)),
    )


def response_format_mode() -> str:
    """`json_schema` (default), `json_object` or `none`: how to ask for JSON."""
    return (env("LLM_RESPONSE_FORMAT") or "json_schema").lower()
