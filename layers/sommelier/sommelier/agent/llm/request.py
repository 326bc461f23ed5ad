"""The request body a model accepts, from what it is known to accept (agent.llm.capabilities): images only
to a model that sees them, the prompt-cache mark where the provider wants one, the tools and the answer's
JSON schema in the forms the endpoint takes. One place, so every attempt of a call is built alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sommelier.agent.llm.capabilities import ModelCapabilities, has_images, without_images
from sommelier.agent.llm.port import ContentPart, LLMMessage, ToolSpec
from sommelier.domain.answer import RESPONSE_JSON_SCHEMA, RESPONSE_JSON_SCHEMA_PATTERNS

if TYPE_CHECKING:
    from sommelier.domain.wire import JSONObject


def request_body(
    model: str,
    messages: list[LLMMessage],
    *,
    tools: list[ToolSpec] | None,
    final: bool,
    response_format: JSONObject | None,
    caps: ModelCapabilities,
    temperature: float,
    max_tokens: int,
) -> dict[str, Any]:
    """The chat-completions request for this model: messages, sampling, tools and the answer's format."""
    if not caps.vision and has_images(messages):
        messages = without_images(messages)
    if caps.prompt_cache == "cache_control":
        messages = cache_marked(messages)
    request: dict[str, Any] = {"model": model, "messages": messages}
    if caps.temperature:
        request["temperature"] = temperature
    request[caps.token_parameter] = caps.output_tokens or max_tokens
    request.update(_tool_fields(messages, tools, final, caps))
    if response_format and caps.response_format != "none" and (final or caps.tool_round_schema or not tools):
        # On a tool round too (the one-call turn answers there), unless guided decoding would win over the
        # tool calls (tool_round_schema=false).
        if caps.response_format == "json_schema":
            request["response_format"] = with_lengths(response_format, caps)
        else:
            request["response_format"] = {"type": "json_object"}
    return request


def with_lengths(response_format: JSONObject, caps: ModelCapabilities) -> JSONObject:
    """The answer's schema with its lengths as this model's strict mode takes them (maxLength or a pattern)."""
    if caps.schema_lengths == "max_length" or response_format.get("json_schema") != RESPONSE_JSON_SCHEMA:
        return response_format
    return {**response_format, "json_schema": RESPONSE_JSON_SCHEMA_PATTERNS}


def _tool_fields(
    messages: list[LLMMessage], tools: list[ToolSpec] | None, final: bool, caps: ModelCapabilities
) -> dict[str, Any]:
    """The tools on a tool round; on a final call only where the endpoint needs them to read the history's
    tool messages, with tool_choice "none"."""
    if not tools or not caps.tools:
        return {}
    if not final:
        return {"tools": tools, "parallel_tool_calls": False} if caps.parallel_tool_calls else {"tools": tools}
    history_has_tools = any(m.get("role") == "tool" or m.get("tool_calls") for m in messages)
    if caps.final_tools == "none_choice" and history_has_tools:
        return {"tools": tools, "tool_choice": "none"}
    return {}


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
