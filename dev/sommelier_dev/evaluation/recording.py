"""Recorders for the evaluation harness: decorators, not mocks.

`RecordingCatalog` wraps any `CatalogRepository` (in-process or Lambda) and forwards every call unchanged,
keeping its name, arguments (without the embedding vector) and a compact copy of the result.
`RecordingLLM` wraps a `ChatLLM` and keeps each reply (content, tool calls, usage), so the
evaluation can also judge the model's own first answer, before the agent validates it.

Both record into the current *turn*; the harness calls `start_turn()` before each agent turn.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from sommelier.agent.llm.port import ChatLLM, LLMLedger, LLMMessage, LLMReply, ToolSpec
from sommelier.domain.catalog import CatalogStats, ExportedWine
from sommelier.domain.catalog_writes import EmbeddingText, ImportSummary, WineEmbedding
from sommelier.domain.conversation import Deadline
from sommelier.domain.errors import PortError
from sommelier.domain.search import SearchFilters, SearchResult, SemanticRequest, ToolRequest, WineList
from sommelier.domain.wine import Wine, WineListing
from sommelier.domain.wire import JSONObject, to_wire
from sommelier.repositories.ports import CatalogRepository

if TYPE_CHECKING:
    from sommelier.domain.records import ImportRow

T = TypeVar("T")

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


class RecordingCatalog:
    """A `CatalogRepository` that forwards to `inner` and records every call of the current turn."""

    def __init__(self, inner: CatalogRepository):
        self.inner = inner
        self.counter = inner.counter
        self.calls: list[ToolCallRecord] = []

    def start_turn(self) -> None:
        self.calls = []

    def run_llm_tools(self, calls: Sequence[ToolRequest]) -> list[SearchResult | PortError]:
        started = time.perf_counter()
        answers = self.inner.run_llm_tools(calls)
        duration = round((time.perf_counter() - started) * 1000 / max(len(calls), 1), 2)
        for call, answer in zip(calls, answers, strict=True):
            self._record(call.tool, call.arguments, answer, duration)
        return answers

    def search_wines(self, filters: SearchFilters) -> SearchResult:
        return self._recorded("search_wines", to_wire(filters), lambda: self.inner.search_wines(filters))

    def semantic_search(self, request: SemanticRequest) -> SearchResult:
        return self._recorded("semantic_search", request.as_arguments(), lambda: self.inner.semantic_search(request))

    def get_wines(self, ids: Sequence[str]) -> WineList:
        return self._recorded("get_wines", {"ids": list(ids)}, lambda: self.inner.get_wines(ids))

    def fallback_list(self, *, limit: int, exclude_ids: Sequence[str] = ()) -> list[Wine]:
        arguments = {"limit": limit, "exclude_ids": list(exclude_ids)}

        def run() -> SearchResult:
            wines = self.inner.fallback_list(limit=limit, exclude_ids=exclude_ids)
            return SearchResult(found=len(wines), matched=len(wines), wines=wines)

        return self._recorded("get_list", arguments, run).wines

    def stats(self) -> CatalogStats:
        return self.inner.stats()

    def export_wines(self, *, include_unavailable: bool = False) -> list[ExportedWine]:
        return self.inner.export_wines(include_unavailable=include_unavailable)

    def list_wines(self, *, include_unavailable: bool = False, limit: int = 1000) -> list[WineListing]:
        return self.inner.list_wines(include_unavailable=include_unavailable, limit=limit)

    def import_wines(
        self, rows: Sequence[ImportRow], *, replace: bool = False, replace_since: str | None = None
    ) -> ImportSummary:
        return self.inner.import_wines(rows, replace=replace, replace_since=replace_since)

    def embedding_texts(self) -> list[EmbeddingText]:
        return self.inner.embedding_texts()

    def update_embeddings(self, model: str, items: Sequence[WineEmbedding]) -> int:
        return self.inner.update_embeddings(model, items)

    def _recorded(self, name: str, arguments: dict[str, Any], run: Callable[[], T]) -> T:
        started = time.perf_counter()
        try:
            result = run()
        except PortError as exc:
            self._record(name, arguments, exc, round((time.perf_counter() - started) * 1000, 2))
            raise
        self._record(name, arguments, result, round((time.perf_counter() - started) * 1000, 2))
        return result

    def _record(self, name: str, arguments: Any, result: object, duration_ms: float) -> None:
        record = ToolCallRecord(name=name, arguments=_visible_arguments(arguments), duration_ms=duration_ms)
        if isinstance(result, Exception):
            record.error = str(result)[:300]
        elif isinstance(result, SearchResult) and name in CANDIDATE_TOOLS:
            record.wines = [{k: v for k, v in to_wire(w).items() if k in _WINE_FIELDS} for w in result.wines if w.id]
            record.found = result.found
            record.filters_applied = dict(result.filters_applied)
        self.calls.append(record)


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

    @property
    def streams(self) -> bool:
        return False  # the evaluation reads whole answers

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
        reply = self.complete(
            messages, tools=tools, final=final, response_format=response_format, deadline=deadline, ledger=ledger
        )
        if reply.content:
            yield reply.content
        return reply

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
        started = time.perf_counter()
        try:
            reply = self.inner.complete(
                messages, tools=tools, final=final, response_format=response_format, deadline=deadline, ledger=ledger
            )
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
