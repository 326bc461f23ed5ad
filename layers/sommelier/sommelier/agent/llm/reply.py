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
from typing import Any

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|$)", re.DOTALL | re.IGNORECASE)
_STRAY_THINK_END = re.compile(r"^.*?</(?:think|thinking|reasoning)>", re.DOTALL | re.IGNORECASE)
_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL | re.IGNORECASE)


@dataclass
class NormalisedCall:
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


def strip_reasoning(content: str | None) -> tuple[str | None, str | None]:
    """(content without <think> blocks, the reasoning text found in them)."""
    if not content:
        return content, None
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


def _field(obj: Any, name: str) -> Any:
    """A field of an SDK model, declared or extra (providers add fields the SDK does not declare)."""
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
