"""The chat LLM port: what the agent asks of a chat model, the reply it gets, and the turn's accounting.

The adapter is `agent/llm/client.py` (the openai SDK); the composition root builds it only when a key is
set, so an offline turn never loads the SDK or its HTTP client.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, Required, TypedDict, TypeVar

from sommelier.domain.conversation import Deadline

if TYPE_CHECKING:
    from sommelier.domain.wire import JSONObject, JSONValue

T = TypeVar("T")


class LLMError(RuntimeError):
    """The model could not be reached or answered something unusable (after the retries that fit)."""


class LLMRequestRejected(LLMError):
    """The endpoint refused the request itself, in a way no known capability fallback fixes."""


class ToolsUnsupported(LLMRequestRejected):
    """The endpoint does not accept tools (learned from its refusal, or stated in config)."""


class LLMDeadlineExceeded(LLMError):
    """The turn's budget has no room for another request."""


class GenerationsSpent(LLMDeadlineExceeded):
    """The turn has been billed its share of generations (MAX_GENERATIONS_PER_TURN): answer from what it has."""


class UnusableEndpoint(LLMError):
    """The endpoint answered a page that is not the API (an HTML gateway or login page): no retry helps."""


# The chat-completions messages the port carries (the OpenAI wire, which every provider here speaks).
class FunctionCall(TypedDict):
    name: str
    arguments: str  # JSON text


class ToolCallJSON(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class CacheControl(TypedDict):
    type: Literal["ephemeral"]


class TextPart(TypedDict, total=False):
    type: Required[Literal["text"]]
    text: Required[str]
    cache_control: CacheControl  # a prompt-cache breakpoint (Anthropic-style, through OpenRouter)


class ImageURL(TypedDict):
    url: str  # a data: URL of the label photo


class ImagePart(TypedDict):
    type: Literal["image_url"]
    image_url: ImageURL


ContentPart = TextPart | ImagePart


class LLMMessage(TypedDict, total=False):
    role: Required[Literal["system", "user", "assistant", "tool"]]
    content: str | list[ContentPart] | None
    tool_calls: list[ToolCallJSON]
    tool_call_id: str
    reasoning_details: list[JSONValue]  # a provider's own, sent back unchanged (Gemini's thought signatures)


class FunctionSpec(TypedDict, total=False):
    name: Required[str]
    description: str
    parameters: JSONObject  # a JSON schema


class ToolSpec(TypedDict):
    type: Literal["function"]
    function: FunctionSpec


class ToolCall(NamedTuple):
    id: str
    name: str
    arguments: str  # JSON text ("{}" for a call without arguments)


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0  # the part of prompt_tokens read from the provider's prompt cache
    cost_usd: float | None = None  # what the provider says the call cost (OpenRouter's usage.cost)

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.cached_tokens += other.cached_tokens
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd


@dataclass
class LLMLedger:
    """Honest accounting of one turn's LLM use: logical calls, real HTTP requests, generations paid for."""

    logical_calls: int = 0
    http_requests: int = 0
    generations: int = 0  # requests that produced (or timed out producing) a completion
    timeouts: int = 0
    provider_errors: int = 0
    retries: int = 0
    usage: Usage = field(default_factory=Usage)
    lessons: list[str] = field(default_factory=list)
    calls: list[Usage] = field(default_factory=list)  # each generation's usage, in order
    unusable_endpoint: str | None = None  # the endpoint answered something that is not an API (an HTML page)

    def as_metadata(self) -> dict[str, Any]:
        return {
            "llm_calls": self.logical_calls,
            "llm_http_requests": self.http_requests,
            "llm_generations": self.generations,
            "llm_timeouts": self.timeouts,
            "llm_provider_errors": self.provider_errors,
            "llm_retries": self.retries,
            "capabilities_learned": list(self.lessons),
            "llm_call_tokens": [
                {"prompt": u.prompt_tokens, "cached": u.cached_tokens, "completion": u.completion_tokens}
                | ({"cost_usd": round(u.cost_usd, 6)} if u.cost_usd is not None else {})
                for u in self.calls
            ],
        }


@dataclass
class LLMReply:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = None
    refusal: str | None = None
    reasoning: str | None = None  # never shown to the customer
    reasoning_details: list[JSONValue] | None = None  # sent back with the message (Gemini's thought signatures)

    def assistant_message(self) -> LLMMessage:
        """The reply as a message to append to the conversation (never an empty assistant text)."""
        # Never a null content: some servers (llama.cpp, LM Studio) reject it beside tool calls.
        message: LLMMessage = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.reasoning_details:
            message["reasoning_details"] = self.reasoning_details
        return message


class ChatLLM(Protocol):
    """The chat model port: a whole answer, or one that streams its content as values."""

    @property
    def model(self) -> str: ...

    @property
    def streams(self) -> bool: ...

    def complete(
        self,
        messages: list[LLMMessage],
        *,
        tools: list[ToolSpec] | None = None,
        final: bool = False,
        response_format: JSONObject | None = None,
        deadline: Deadline | float | None = None,
        ledger: LLMLedger | None = None,
    ) -> LLMReply: ...

    def stream(
        self,
        messages: list[LLMMessage],
        *,
        tools: list[ToolSpec] | None = None,
        final: bool = False,
        response_format: JSONObject | None = None,
        deadline: Deadline | float | None = None,
        ledger: LLMLedger | None = None,
    ) -> Generator[str, None, LLMReply]: ...


def drain(generator: Generator[Any, None, T]) -> T:
    """Run a generator to its end, dropping what it yields; its return value."""
    while True:
        try:
            next(generator)
        except StopIteration as done:
            result: T = done.value
            return result
