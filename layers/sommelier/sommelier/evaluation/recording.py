"""Recorders for the evaluation harness: decorators, not mocks.

`RecordingTools` wraps any `ToolClient` (in-process or Lambda) and forwards every call unchanged,
keeping its name, arguments (without the embedding vector) and a compact copy of the result.
`RecordingLLM` wraps a `ChatLLM` and keeps each reply (content, tool calls, usage), so the
evaluation can also judge the model's own first answer, before the agent validates it.

Both record into the current *turn*; the harness calls `start_turn()` before each agent turn.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from sommelier.agent.llm import ChatLLM, LLMReply
from sommelier.tools.client import ToolClient

# Tools whose results are candidate wines (the ones a recommendation may come from).
CANDIDATE_TOOLS = ("search_wines", "semantic_search", "get_list")
_WINE_FIELDS = (
    "id",
    "name",
    "producer",
    "region",
    "wine_type",
    "sweetness",
    "price_rub",
    "grape_varieties",
    "food_pairings",
    "similarity_score",
)


@dataclass
class ToolCallRecord:
    name: str
    arguments: dict[str, Any]
    duration_ms: float
    error: str | None = None
    wines: list[dict[str, Any]] = field(default_factory=list)  # candidate tools only, in the tool's order
    filters_applied: dict[str, Any] | None = None
    found: int | None = None

    @property
    def is_search(self) -> bool:
        return self.name in ("search_wines", "semantic_search")

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "arguments": self.arguments, "duration_ms": self.duration_ms}
        if self.error is not None:
            data["error"] = self.error
        if self.name in CANDIDATE_TOOLS:
            data["found"] = self.found
            data["filters_applied"] = self.filters_applied
            data["wines"] = [
                {k: w.get(k) for k in ("id", "name", "producer", "price_rub", "similarity_score") if k in w}
                for w in self.wines
            ]
        return data


MAX_RECORDED_TEXT = 300


def _visible_arguments(arguments: Any) -> dict[str, Any]:
    """The arguments without the embedding vector; long texts (a saved answer) are shortened."""
    if not isinstance(arguments, dict):
        return {"_raw": repr(arguments)[:200]}
    return {
        k: (v[:MAX_RECORDED_TEXT] + "…" if isinstance(v, str) and len(v) > MAX_RECORDED_TEXT else v)
        for k, v in arguments.items()
        if k != "embedding"
    }


class RecordingTools:
    """A `ToolClient` that forwards to `inner` and records every call of the current turn."""

    def __init__(self, inner: ToolClient):
        self.inner = inner
        self.calls: list[ToolCallRecord] = []

    def start_turn(self) -> None:
        self.calls = []

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        result = self.inner.call(name, arguments)
        record = ToolCallRecord(
            name=name,
            arguments=_visible_arguments(arguments),
            duration_ms=round((time.perf_counter() - started) * 1000, 2),
        )
        if isinstance(result, dict):
            if "error" in result:
                record.error = str(result["error"])[:300]
            if name in CANDIDATE_TOOLS:
                record.wines = [
                    {k: w.get(k) for k in _WINE_FIELDS if k in w}
                    for w in result.get("wines") or []
                    if isinstance(w, dict) and w.get("id")
                ]
                record.found = result.get("found", len(record.wines))
                applied = result.get("filters_applied")
                record.filters_applied = dict(applied) if isinstance(applied, dict) else None
        else:
            record.error = "the tool answered something that is not an object"
        self.calls.append(record)
        return result


@dataclass
class LLMCallRecord:
    content: str | None
    tool_calls: list[dict[str, Any]]
    prompt_tokens: int
    completion_tokens: int
    duration_ms: float
    offered_tools: bool
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "content": (self.content or "")[:4000] if self.content is not None else None,
            "tool_calls": self.tool_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "duration_ms": self.duration_ms,
            "offered_tools": self.offered_tools,
            **({"error": self.error} if self.error else {}),
        }


class RecordingLLM:
    """A `ChatLLM` that forwards to `inner` and records each reply of the current turn."""

    def __init__(self, inner: ChatLLM):
        self.inner = inner
        self.calls: list[LLMCallRecord] = []

    @property
    def model(self) -> str:
        return self.inner.model

    def start_turn(self) -> None:
        self.calls = []

    def complete(self, messages, *, tools=None, **options) -> LLMReply:
        started = time.perf_counter()
        try:
            reply = self.inner.complete(messages, tools=tools, **options)
        except Exception as exc:
            self.calls.append(
                LLMCallRecord(
                    None,
                    [],
                    0,
                    0,
                    round((time.perf_counter() - started) * 1000, 2),
                    bool(tools),
                    error=f"{type(exc).__name__}: {str(exc)[:200]}",
                )
            )
            raise
        self.calls.append(
            LLMCallRecord(
                content=reply.content,
                tool_calls=[{"name": c.name, "arguments": c.arguments} for c in reply.tool_calls],
                prompt_tokens=reply.usage.prompt_tokens,
                completion_tokens=reply.usage.completion_tokens,
                duration_ms=round((time.perf_counter() - started) * 1000, 2),
                offered_tools=bool(tools),
            )
        )
        return reply
