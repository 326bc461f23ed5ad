"""What a chat model's endpoint accepts, learned from its refusals and remembered per process.

Providers differ in what an OpenAI-compatible request may carry: some reject ``json_schema``
(DeepSeek), some want ``max_completion_tokens`` and no temperature (OpenAI reasoning models), some
reject any request with tools (vLLM without auto tool choice, llama.cpp without --jinja), some need
the tools defined whenever the history holds tool calls (Bedrock). Each refusal names the parameter;
the registry turns it into a lesson so the next request, and every later turn of this process, is
sent in a form the endpoint accepts. Capabilities can also be stated in config (``LLM_CAPABILITIES``).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from sommelier.agent.llm.port import ContentPart, LLMMessage
    from sommelier.domain.answer import SchemaLengths

logger = logging.getLogger(__name__)

ResponseFormatMode = Literal["json_schema", "json_object", "none"]
FinalTools = Literal["omit", "none_choice"]
TokenParameter = Literal["max_tokens", "max_completion_tokens"]
PromptCache = Literal["auto", "cache_control"]

RESPONSE_FORMAT_STEPS: tuple[ResponseFormatMode, ...] = ("json_schema", "json_object", "none")
MAX_OUTPUT_TOKENS = 16000


@dataclass(frozen=True)
class ModelCapabilities:
    response_format: ResponseFormatMode = "json_schema"  # the strongest structured output accepted
    tools: bool = True  # native tool calling accepted
    final_tools: FinalTools = "omit"  # final calls: no tools, or the tools with tool_choice "none"
    token_parameter: TokenParameter = "max_tokens"
    temperature: bool = True
    parallel_tool_calls: bool = True  # whether `parallel_tool_calls: false` may be sent
    output_tokens: int | None = None  # a larger limit, learned when thinking used up the default one
    call_timeout_s: float | None = None  # a longer per-request timeout, learned from a slow model's answers
    vision: bool = True  # image parts accepted (a label photo); learned false from a refusal, or stated
    thinking_off: str | None = None  # the switch sent as false on non-streamed calls (DashScope's enable_thinking)
    # "cache_control": the stable system prompt marked as a cache breakpoint (Anthropic-style, through
    # OpenRouter); "auto": nothing to ask (OpenAI, DeepSeek and Gemini cache a repeated prefix by themselves).
    prompt_cache: PromptCache = "auto"
    # The answer's schema on a tool round too (the one-call turn answers there); false where guided decoding
    # (vLLM) would win over the tool calls.
    tool_round_schema: bool = True
    # How the schema states its lengths: maxLength, or an anchored pattern where strict mode refuses maxLength.
    schema_lengths: SchemaLengths = "max_length"

    def describe(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


# Known models whose needs are documented; config and lessons still override them.
KNOWN_MODELS: tuple[tuple[re.Pattern[str], dict[str, Any]], ...] = (
    (
        re.compile(r"(?:^|/)(?:o\d(?:-[\w.-]+)?|gpt-5[\w.-]*)$", re.IGNORECASE),
        {"token_parameter": "max_completion_tokens", "temperature": False},  # nosec B105 - a parameter name, not a secret
    ),
    (re.compile(r"deepseek", re.IGNORECASE), {"response_format": "json_object"}),
    (re.compile(r"(?:^|/)(?:anthropic/)?claude", re.IGNORECASE), {"prompt_cache": "cache_control"}),
    # OpenAI's strict structured outputs take `pattern` on strings, not maxLength.
    (re.compile(r"(?:^|/)(?:openai/)?(?:gpt-|o\d)", re.IGNORECASE), {"schema_lengths": "pattern"}),
)

_BOOL = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def parse_capabilities(text: str | None) -> dict[str, Any]:
    """`LLM_CAPABILITIES`, e.g. "response_format=json_object, final_tools=none_choice, temperature=false".

    Raises ValueError naming the bad entry, so a typo stops the process at start instead of being ignored.
    """
    if not text:
        return {}
    known = {f.name: f for f in fields(ModelCapabilities)}
    allowed: dict[str, tuple[str, ...]] = {
        "response_format": RESPONSE_FORMAT_STEPS,
        "final_tools": ("omit", "none_choice"),
        "token_parameter": ("max_tokens", "max_completion_tokens"),
        "prompt_cache": ("auto", "cache_control"),
        "schema_lengths": ("max_length", "pattern"),
    }
    result: dict[str, Any] = {}
    for entry in re.split(r"[,;]", text):
        if not entry.strip():
            continue
        name, sep, value = (part.strip() for part in entry.partition("="))
        if not sep or name not in known:
            raise ValueError(f"LLM_CAPABILITIES: unknown entry {entry.strip()!r}; known: {', '.join(known)}")
        if name in allowed:
            if value not in allowed[name]:
                raise ValueError(f"LLM_CAPABILITIES: {name} must be one of {allowed[name]}, got {value!r}")
            result[name] = value
        elif name == "output_tokens":
            result[name] = int(value)
        elif name == "call_timeout_s":
            result[name] = float(value)
        elif name == "thinking_off":
            if not re.fullmatch(r"[A-Za-z_][\w.]*", value):
                raise ValueError(f"LLM_CAPABILITIES: thinking_off must be a parameter name, got {value!r}")
            result[name] = value
        else:
            if value.lower() not in _BOOL:
                raise ValueError(f"LLM_CAPABILITIES: {name} must be true or false, got {value!r}")
            result[name] = _BOOL[value.lower()]
    return result


class CapabilityRegistry:
    """Per-process memory of what each model accepts (owned by the LLM adapter; thread-safe)."""

    def __init__(self, stated: dict[str, dict[str, Any]] | None = None):
        self._stated = {model: dict(values) for model, values in (stated or {}).items()}
        self._models: dict[str, ModelCapabilities] = {}
        self._lock = threading.Lock()

    def get(self, model: str) -> ModelCapabilities:
        with self._lock:
            caps = self._models.get(model)
            if caps is None:
                caps = ModelCapabilities()
                for pattern, values in KNOWN_MODELS:
                    if pattern.search(model):
                        caps = replace(caps, **values)
                caps = replace(caps, **self._stated.get(model, {}))
                self._models[model] = caps
            return caps

    def learn(self, model: str, lesson: dict[str, Any], reason: str) -> ModelCapabilities:
        current = self.get(model)
        with self._lock:
            updated = replace(current, **lesson)
            self._models[model] = updated
        logger.info("model %s: learned %s (%s)", model, lesson, reason[:200])
        return updated


# The keys under which documented error bodies carry their cause, at any depth: OpenAI's and Mistral's
# `message`, OpenRouter's `metadata.raw` and `provider_name`, Gemini's list-shaped body with `status` and
# `details[].fieldViolations[].description`, DashScope's `code`.
_CAUSE_KEYS = ("message", "raw", "description", "detail", "reason", "status", "code", "provider_name", "msg")
_MAX_CAUSES = 12


def error_causes(body: Any, depth: int = 0) -> list[str]:
    """Every cause an error body states, whatever its shape (an object, a list of objects, nested JSON text)."""
    if depth > 6:
        return []
    if isinstance(body, str):
        return _text_causes(body, depth)
    causes: list[str] = []
    if isinstance(body, list):
        for item in body[:_MAX_CAUSES]:
            causes += error_causes(item, depth + 1)
    elif isinstance(body, dict):
        causes = _object_causes(body, depth)
    unique: list[str] = []
    for cause in causes:
        if cause and cause not in unique:
            unique.append(cause)
    return unique[:_MAX_CAUSES]


def _text_causes(text: str, depth: int) -> list[str]:
    """A text body: the causes of the JSON it holds, or the text itself."""
    stripped = text.strip()
    if stripped[:1] in "[{":
        try:
            return error_causes(json.loads(stripped), depth + 1) or [stripped]
        except ValueError:
            return [stripped]
    return [stripped] if stripped else []


def _object_causes(body: dict[str, Any], depth: int) -> list[str]:
    """An object body: the value under each cause key, and the causes of every object or list inside."""
    causes: list[str] = []
    for key, value in body.items():
        if key in _CAUSE_KEYS and isinstance(value, (str, int)) and not isinstance(value, bool):
            causes.append(f"provider {value}" if key == "provider_name" else str(value))
        elif isinstance(value, (dict, list)):
            causes += error_causes(value, depth + 1)
    return causes


def provider_error_text(exc: Exception) -> str:
    """Everything an error says: the message and every cause in its body, whatever the body's shape.

    The openai SDK's str(exc) carries only `error.message` ("Provider returned error") of an object-shaped
    body; the reason is often deeper (OpenRouter's `metadata.raw`) or in a list (Gemini).
    """
    parts = [str(exc)]
    parts += error_causes(getattr(exc, "body", None))
    response = getattr(exc, "response", None)
    if len(parts) == 1 and response is not None:
        try:
            parts += error_causes(response.text[:4000])
        except Exception as exc_reading:  # the body could not be read: the message alone
            logger.debug("the error body could not be read: %s", exc_reading)
    return " | ".join(p for p in parts if p)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$")
_RETRY_IN_TEXT = re.compile(
    r"(?:retry|try again)\s+(?:in|after)\s+(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|sec(?:ond)?s?)\b", re.IGNORECASE
)
_DELAY_KEYS = {"retryDelay": 1.0, "retry_delay": 1.0, "retry_after": 1.0, "retryAfter": 1.0, "retry_after_ms": 0.001}


def retry_delay_in_body(body: Any, text: str = "") -> float | None:
    """The wait an error body asks for, in seconds: Gemini's RetryInfo `retryDelay` ("28s", in a list-shaped
    body), a `retry_after`/`retry_after_ms` field, or "retry in 28.9s" in the message."""
    found = _delay_field(body, 0)
    if found is not None:
        return found
    match = _RETRY_IN_TEXT.search(text)
    if match:
        value = float(match.group(1))
        return value / 1000 if match.group(2).lower().startswith("m") else value
    return None


def _delay_field(body: Any, depth: int) -> float | None:
    if depth > 6:
        return None
    items: list[Any] = []
    if isinstance(body, dict):
        for key, value in body.items():
            if key in _DELAY_KEYS and isinstance(value, (str, int, float)) and not isinstance(value, bool):
                match = _DURATION.match(str(value))
                if match:
                    scale = 0.001 if (match.group(2) == "ms" or key.endswith("_ms")) else 1.0
                    return float(match.group(1)) * scale
            items.append(value)
    elif isinstance(body, list):
        items = body
    for item in items:
        if isinstance(item, (dict, list)):
            found = _delay_field(item, depth + 1)
            if found is not None:
                return found
    return None


_TOOL = r"(?:tools?\b|tool[_ ]?use|tool[_ ]?choice|tool[_ ]?calling|function[_ ]?call\w*)"
# The endpoint cannot do tool calling at all (vLLM without auto tool choice, llama.cpp without --jinja, ...).
_TOOLS_UNSUPPORTED = re.compile(
    rf"{_TOOL}[^.]{{0,60}}(?:not (?:be )?supported|unsupported|requires|not available|disabled)|"
    rf"(?:not support|n't support|no endpoints found that support)[^.]{{0,40}}{_TOOL}|"
    r"--enable-auto-tool-choice|--jinja",
    re.IGNORECASE,
)
# The endpoint needs the tools defined because the history holds tool calls (Bedrock).
_TOOLS_REQUIRED = re.compile(
    rf"toolconfig|{_TOOL}[^.]{{0,40}}(?:required|must be (?:defined|provided|specified))|"
    rf"(?:requires?|must define)[^.]{{0,20}}{_TOOL}",
    re.IGNORECASE,
)
_SCHEMA_WORDS = re.compile(
    r"response_format|json_schema|json schema|response schema|additionalproperties|structured output", re.I
)


# A text-only model refusing an image part ("does not support image input", "image_url is not supported",
# "multimodal content not allowed", "Invalid content type. image_url is only supported by certain models").
_IMAGES_REFUSED = re.compile(r"image|vision|multimodal|multi-modal", re.IGNORECASE)

# What a model that cannot see is told in place of the photo (it then asks for the wine's name).
IMAGE_NOT_SEEN = (
    "[Покупатель прислал фото (скорее всего, этикетки), но вы не можете его увидеть. Не угадывайте вино: "
    "попросите написать его название текстом — производителя, сорт, год.]"
)


def has_images(messages: list[LLMMessage]) -> bool:
    return any(part["type"] == "image_url" for part in _parts(messages))


def _parts(messages: list[LLMMessage]) -> list[ContentPart]:
    found: list[ContentPart] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            found += content
    return found


def without_images(messages: list[LLMMessage]) -> list[LLMMessage]:
    """The messages for a model that cannot see: each image part becomes IMAGE_NOT_SEEN, content plain text."""
    plain: list[LLMMessage] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            texts = [IMAGE_NOT_SEEN if part["type"] == "image_url" else part["text"] for part in content]
            message = {**message, "content": "\n\n".join(t for t in texts if t)}
        plain.append(message)
    return plain


# A parameter the request sent and the refusal names, and the lesson: what to send instead.
_NAMED_PARAMETER_LESSONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("max_tokens", {"token_parameter": "max_completion_tokens"}),  # nosec B105 - a parameter name, not a secret
    ("temperature", {"temperature": False}),
    ("parallel_tool_calls", {"parallel_tool_calls": False}),
)


# A thinking switch the provider wants off for calls that do not stream (DashScope's Qwen3: "parameter.
# enable_thinking must be set to false for non-streaming calls").
_THINKING_SWITCH = re.compile(
    r"\b(?:parameter\.)?(\w*think\w*)\b[^.|]{0,60}?\b(?:false|disabled?|off)\b[^.|]{0,60}?non[- ]?stream", re.IGNORECASE
)


def lesson_from_error(
    text: str, request: dict[str, Any], caps: ModelCapabilities, *, final: bool
) -> dict[str, Any] | None:
    """The capability change that a refusal of `request` asks for, or None when it names nothing we sent."""
    lowered = text.lower()
    if "thought_signature" in lowered:
        return None  # the reasoning_details of a message were not sent back: no parameter to change
    lesson = _content_lesson(text, request, caps) or _parameter_lesson(lowered, request, caps)
    if lesson is not None:
        return lesson
    if final:
        return _final_tools_lesson(lowered, request, caps)
    if "tools" in request and caps.tools and _TOOLS_UNSUPPORTED.search(lowered):
        return {"tools": False}
    return None


def _content_lesson(text: str, request: dict[str, Any], caps: ModelCapabilities) -> dict[str, Any] | None:
    """A refusal of what the messages carry or how they are sent: images, a cache mark, thinking."""
    lowered = text.lower()
    if caps.vision and has_images(request.get("messages") or []) and _IMAGES_REFUSED.search(lowered):
        return {"vision": False}
    if caps.prompt_cache == "cache_control" and "cache_control" in lowered:
        return {"prompt_cache": "auto"}
    switch = _THINKING_SWITCH.search(text)
    if switch and not request.get("stream") and caps.thinking_off != switch.group(1):
        return {"thinking_off": switch.group(1)}
    return None


def _parameter_lesson(lowered: str, request: dict[str, Any], caps: ModelCapabilities) -> dict[str, Any] | None:
    """A refusal of a parameter the request sent: the next response format, or the parameter's own lesson."""
    if "response_format" in request and caps.schema_lengths == "max_length" and "maxlength" in lowered:
        return {"schema_lengths": "pattern"}
    if "response_format" in request and _SCHEMA_WORDS.search(lowered):
        step = RESPONSE_FORMAT_STEPS.index(caps.response_format)
        if step + 1 < len(RESPONSE_FORMAT_STEPS):
            return {"response_format": RESPONSE_FORMAT_STEPS[step + 1]}
    for parameter, change in _NAMED_PARAMETER_LESSONS:
        if parameter in request and parameter in lowered:
            return dict(change)
    return None


def _final_tools_lesson(lowered: str, request: dict[str, Any], caps: ModelCapabilities) -> dict[str, Any] | None:
    """A final call (no tool may be called) refused for its tool_choice, or for lacking the tools the history's
    tool calls need: the other way of sending it, unless that is the way already in use."""
    if "tool_choice" in request and ("tool_choice" in lowered or _TOOLS_UNSUPPORTED.search(lowered)):
        return {"final_tools": "omit"} if caps.final_tools != "omit" else None
    if "tools" not in request and _TOOLS_REQUIRED.search(lowered) and caps.final_tools != "none_choice":
        return {"final_tools": "none_choice"}
    return None
