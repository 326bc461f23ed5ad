"""The chat LLM port, on the openai SDK (OpenRouter or any OpenAI-compatible endpoint)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

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
    ):
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries)
        self._response_format_supported = True

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict] | None = None,
        response_format: dict | None = None,
    ) -> LLMReply:
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
        try:
            completion = self._client.chat.completions.create(**request)
        except openai.BadRequestError as exc:
            message = str(exc).lower()
            if "response_format" in request and ("response_format" in message or "json_schema" in message):
                # Some providers reject json_schema; ask again and parse tolerantly.
                logger.info("response_format rejected by the provider; falling back to plain JSON instructions")
                self._response_format_supported = False
                return self.complete(messages, tools=tools, response_format=None)
            raise LLMRequestRejected(f"the LLM rejected the request: {_short(exc)}") from exc
        except (openai.NotFoundError, openai.UnprocessableEntityError) as exc:
            raise LLMRequestRejected(f"the LLM rejected the request: {_short(exc)}") from exc
        except openai.OpenAIError as exc:
            raise LLMError(f"the LLM is unavailable: {type(exc).__name__}: {_short(exc)}") from exc
        except (json.JSONDecodeError, ValueError) as exc:  # a 200 with a body that is not JSON
            raise LLMError(f"the LLM answered an unreadable body: {exc}") from exc
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
    )


def response_format_mode() -> str:
    """`json_schema` (default), `json_object` or `none`: how to ask for JSON."""
    return (env("LLM_RESPONSE_FORMAT") or "json_schema").lower()
