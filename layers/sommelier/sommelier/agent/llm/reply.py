"""A provider's chat completion made uniform: tool calls, reasoning and content, whatever the model's habits.

Real models differ in small ways that each broke a turn: tool-call ids that are empty (Gemini),
arguments sent as a JSON object or as "" for a call without arguments (Claude), tool calls written
as text in the content (a bare JSON object, or ``<tool_call>{…}</tool_call>``), reasoning in
``reasoning`` / ``reasoning_content`` fields or as ``<think>…</think>`` inside the content. This module
turns every such shape into one: ids present and unique, arguments a JSON string, reasoning apart
from the content.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sommelier.agent.llm.port import LLMReply, ToolCall, Usage

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|$)", re.DOTALL | re.IGNORECASE)
_STRAY_THINK_END = re.compile(r"^.*?</(?:think|thinking|reasoning)>", re.DOTALL | re.IGNORECASE)
_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL | re.IGNORECASE)
# Channel markup (gpt-oss's harmony format, left in the content by servers without its parser): each
# message is `<|channel|>NAME<|message|>TEXT` closed by <|end|>, <|return|>, <|call|> or the next <|start|>.
_CHANNEL_MESSAGE = re.compile(
    r"(?:<\|start\|>\s*\w*\s*)?<\|channel\|>\s*(\w+)[^<]*(?:<\|constrain\|>[^<]*)?<\|message\|>"
    r"(.*?)(?=<\|end\|>|<\|return\|>|<\|call\|>|<\|start\|>|$)",
    re.DOTALL,
)
_CHANNEL_TOKEN = re.compile(r"<\|(?:start|end|return|call|channel|message|constrain)\|>")
ANSWER_CHANNELS = ("final",)


class NormalisedCall(NamedTuple):
    id: str
    name: str
    arguments: str


@dataclass
class NormalisedMessage:
    content: str | None
    tool_calls: list[NormalisedCall] = field(default_factory=list)
    reasoning: str | None = None
    reasoning_details: list[Any] | None = None
    calls_from_text: bool = False


def content_text(content: Any) -> tuple[str | None, str | None]:
    """(answer text, reasoning text) of a message's content, whatever its shape: a string, or a list of parts
    (Mistral's `text` and `thinking` chunks, OpenAI-style `{"type": "text", "text": …}` parts)."""
    if content is None or isinstance(content, str):
        return content, None
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return str(content), None
    texts: list[str] = []
    thoughts: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = str(part.get("type") or "text")
        if kind in ("thinking", "reasoning", "redacted_thinking"):
            inner, _ = content_text(part.get("thinking", part.get("text", part.get("reasoning"))))
            if inner:
                thoughts.append(inner)
        elif isinstance(part.get("text"), str) and kind in ("text", "output_text"):
            texts.append(part["text"])
    return "".join(texts), "\n".join(thoughts) or None


def strip_channels(content: str) -> tuple[str, str | None]:
    """(the final channel's text, the other channels' text) of content in channel markup; unchanged without it."""
    if "<|channel|>" not in content and "<|message|>" not in content:
        return content, None
    answers: list[str] = []
    others: list[str] = []
    for match in _CHANNEL_MESSAGE.finditer(content):
        (answers if match.group(1).lower() in ANSWER_CHANNELS else others).append(match.group(2).strip())
    if not answers and not others:
        return _CHANNEL_TOKEN.sub("", content).strip(), None
    return "\n".join(answers), "\n".join(others) or None


def strip_reasoning(content: Any) -> tuple[str | None, str | None]:
    """(content without <think> blocks or reasoning channels, the reasoning text found in them); content may
    be a list of parts."""
    content, part_thoughts = content_text(content)
    if not content:
        return content, part_thoughts
    content, channel_thoughts = strip_channels(content)
    if part_thoughts or channel_thoughts:
        cleaned, think = strip_reasoning(content)
        joined = "\n".join(t for t in (part_thoughts, channel_thoughts, think) if t)
        return cleaned, joined or None
    thoughts = [m.group(0) for m in _THINK.finditer(content)]
    cleaned = _THINK.sub("", content)
    if "</think>" in cleaned.lower() or "</thinking>" in cleaned.lower():  # the opening tag was in the prompt
        match = _STRAY_THINK_END.match(cleaned)
        if match:
            thoughts.append(match.group(0))
            cleaned = cleaned[match.end() :]
    reasoning = "\n".join(thoughts) or None
    return cleaned.strip(), reasoning


def arguments_text(arguments: Any) -> str:
    """Arguments as the JSON text the tools expect: an object is encoded, "" or None is a call without any."""
    if arguments is None:
        return "{}"
    if isinstance(arguments, (dict, list)):
        return json.dumps(arguments, ensure_ascii=False)
    text = str(arguments)
    return text if text.strip() else "{}"


def synthesized_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def calls_from_text(content: str, tool_names: set[str]) -> list[NormalisedCall]:
    """Tool calls a model wrote as text: `<tool_call>{…}</tool_call>` blocks, or the whole content as one
    bare JSON object `{"name": …, "arguments": …}` naming one of `tool_names`."""
    candidates = [m.group(1) for m in _TOOL_CALL_TAG.finditer(content)]
    if not candidates:
        stripped = content.strip()
        if stripped.startswith("```"):
            stripped = re.sub(r"^```\w*\s*|\s*```$", "", stripped)
        if stripped.startswith("{"):
            candidates = [stripped]
    calls = []
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if not isinstance(data, dict):
            continue
        if isinstance(data.get("function"), dict):  # {"type": "function", "function": {...}}
            data = data["function"]
        name = data.get("name")
        if not isinstance(name, str) or name not in tool_names:
            continue
        arguments = data.get("arguments", data.get("parameters"))
        calls.append(NormalisedCall(id=synthesized_id(), name=name, arguments=arguments_text(arguments)))
    return calls


def usage_of(raw: Any) -> Usage:
    """A response's usage in any documented shape: cached prompt tokens as OpenAI's
    `prompt_tokens_details.cached_tokens` or DeepSeek's `prompt_cache_hit_tokens`, OpenRouter's `cost`."""
    if raw is None:
        return Usage()
    details = _field(raw, "completion_tokens_details")
    reasoning = _field(details, "reasoning_tokens") if details is not None else None
    prompt_details = _field(raw, "prompt_tokens_details")
    cached = _field(prompt_details, "cached_tokens") if prompt_details is not None else None
    if not cached:
        cached = _field(raw, "prompt_cache_hit_tokens")
    cost = _field(raw, "cost")
    return Usage(
        _int(_field(raw, "prompt_tokens")),
        _int(_field(raw, "completion_tokens")),
        _int(reasoning),
        _int(cached),
        float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
    )


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _field(obj: Any, name: str) -> Any:
    """A field of an SDK model, declared or extra (providers add fields the SDK does not declare)."""
    if isinstance(obj, dict):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None) or {}
        value = extra.get(name)
    return value


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(exclude_none=True)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def normalise_message(message: Any, tool_names: set[str] | None) -> NormalisedMessage:
    """One assistant message from the SDK, made uniform. `tool_names`: the tools offered (None: none)."""
    content, think = strip_reasoning(_field(message, "content"))
    reasoning_parts = [_field(message, "reasoning"), _field(message, "reasoning_content"), think]
    reasoning = "\n".join(str(p) for p in reasoning_parts if p) or None
    details = _field(message, "reasoning_details")
    calls: list[NormalisedCall] = []
    seen: set[str] = set()
    for raw in _field(message, "tool_calls") or []:
        function = _field(raw, "function")
        name = _field(function, "name") if function is not None else None
        if not name:
            continue
        call_id = _field(raw, "id") or ""
        if not call_id or call_id in seen:
            call_id = synthesized_id()
        seen.add(call_id)
        calls.append(
            NormalisedCall(id=call_id, name=str(name), arguments=arguments_text(_field(function, "arguments")))
        )
    from_text = False
    if not calls and tool_names and content:
        calls = calls_from_text(content, tool_names)
        if calls:
            from_text = True
            content = _TOOL_CALL_TAG.sub("", content).strip() or None
            if content and content.lstrip().startswith(("{", "```")):
                content = None
    return NormalisedMessage(
        content=content,
        tool_calls=calls,
        reasoning=reasoning,
        reasoning_details=_plain(details) if details else None,
        calls_from_text=from_text,
    )


def reply_from(completion: Any, model: str, tool_names: set[str] | None) -> LLMReply:
    """A whole completion's first choice as the port's reply (`model`: when the completion names none)."""
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
