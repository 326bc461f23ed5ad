"""Prefetch: the candidates the project can find for a request by itself, put before the model at once.

Before the first LLM call the request is read by the language layer (the offline reader: its filters, its
mood words for the semantic search, the history's chain of follow-ups) and its searches run together, in one
tool-function invocation, through the data port. The candidates go into that call's prompt as compact rows,
so a typical turn is one call: the model answers from them, and calls a tool only to look further. Kept
apart so that a better reader or search plugs in here unchanged (LLM_PREFETCH=off: the model searches first).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Protocol

from sommelier.agent.catalogue_rows import model_row
from sommelier.agent.refs import ref_of
from sommelier.domain.conversation import ChatMessage
from sommelier.domain.errors import PortError
from sommelier.domain.request_fit import RequestFit
from sommelier.domain.search import SearchResult, ToolRequest
from sommelier.domain.wine import Wine, wine_bears_name

logger = logging.getLogger(__name__)

PREFETCH_ROWS = 8  # enough to choose three from, few enough to keep the prompt short


class CandidateReader(Protocol):
    """What reads a request into the searches that would answer it (sommelier.offline.OfflineResponder)."""

    def candidate_searches(
        self,
        text: str,
        history: list[ChatMessage] | None = None,
        exclude_ids: list[str] | None = None,
        *,
        embedded: bool = True,
    ) -> list[ToolRequest]: ...


class ToolRunner(Protocol):
    def run_llm_tools(self, calls: Sequence[ToolRequest]) -> list[SearchResult | PortError]: ...


class Opening(NamedTuple):
    """The prefetch's searches as they went with the turn's beginning (open_turn), read from the message
    alone, and their answers in order."""

    searches: list[ToolRequest]
    results: list[SearchResult | PortError]


@dataclass
class Prefetched:
    """The candidates of one request, best first, by id (each with found_by), and the searches that found them."""

    wines: dict[str, Wine] = field(default_factory=dict)
    searches: list[dict[str, Any]] = field(default_factory=list)  # [{"name": tool, "arguments": {...}}]
    fit: RequestFit = RequestFit()  # what the request asks for and binds the answer to (domain/request_fit.py)

    @property
    def searched(self) -> bool:
        return bool(self.searches)

    def rows(self) -> list[dict[str, Any]]:
        return [compact_wine(wine, ref_of(i)) for i, wine in enumerate(self.wines.values())]

    def filters(self) -> dict[str, Any]:
        """What the reader understood (the searches' arguments), for the prompt."""
        understood: dict[str, Any] = {}
        for search in self.searches:
            understood.update(search["arguments"])
        return understood


def prefetch(
    reader: CandidateReader, tools: ToolRunner, text: str, history: list[ChatMessage], exclude_ids: list[str]
) -> Prefetched:
    """The candidates for this request: found by both searches first, then the structured search's, then the
    semantic one's. Empty and not `searched` when the reader saw no wine request or every search failed."""
    requests = reader.candidate_searches(text, history, exclude_ids=exclude_ids)
    if not requests:
        return Prefetched()
    return from_answers(requests, tools.run_llm_tools(requests), text)


def from_answers(requests: Sequence[ToolRequest], answers: Sequence[SearchResult | PortError], text: str) -> Prefetched:
    """The candidates of the reader's searches for ``text`` from their answers (run here, or with the turn's
    beginning)."""
    fit = RequestFit.of_searches([request.arguments for request in requests], text)
    found: dict[str, list[Wine]] = {}
    named: list[Wine] = []  # the wines that bear a name asked for: first
    searches: list[dict[str, Any]] = []
    for request, answer in zip(requests, answers, strict=True):
        if isinstance(answer, PortError):
            logger.warning("prefetch: %s failed: %s", request.tool, answer)
            continue
        rows = [replace(w, found_by=request.tool) for w in answer.wines_with_photos() if w.id]
        name = request.arguments.get("name")
        if isinstance(name, str):  # the name search (offline/named_answers.py): only a wine that bears it
            bearing = [w for w in rows if wine_bears_name(w, name)]
            named += bearing
            if not bearing and any("name" not in r.arguments for r in requests):
                continue  # the message's other words were no name of the shop's: say nothing of it
        else:
            found[request.tool] = rows
        shown = {
            k: v
            for k, v in request.arguments.items()
            if k not in ("embedding", "embedding_model", "limit", "exclude_ids")
        }
        searches.append({"name": request.tool, "arguments": shown})
    if not searches:
        return Prefetched(fit=fit)
    wines = {w.id: w for w in named[:PREFETCH_ROWS]}
    for wine in _ranked(found.get("search_wines", []), found.get("semantic_search", [])).values():
        if len(wines) < PREFETCH_ROWS:
            wines.setdefault(wine.id, wine)
    return Prefetched(wines=wines, searches=searches, fit=fit)


def _ranked(structured: list[Wine], semantic: list[Wine]) -> dict[str, Wine]:
    semantic_ids = {w.id for w in semantic}
    structured_ids = {w.id for w in structured}
    both = [w for w in semantic if w.id in structured_ids]
    order = (
        both + [w for w in structured if w.id not in semantic_ids] + [w for w in semantic if w.id not in structured_ids]
    )
    ranked: dict[str, Wine] = {}
    for wine in order:
        if len(ranked) < PREFETCH_ROWS:
            ranked.setdefault(wine.id, wine)
    return ranked


def compact_wine(wine: Wine, ref: str = "") -> dict[str, Any]:
    """A wine as the model needs it to choose and explain (agent.catalogue_rows: its reference, no id)."""
    return model_row(wine, ref)


def compact_result(view: Mapping[str, Any], wines: list[Wine], refs: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A search tool's result as the model reads it: the counts and filters, the wines as compact rows
    (each by its reference in the turn, ``refs``: agent.refs)."""
    result = {k: v for k, v in view.items() if k not in ("wines", "photos")}
    result["wines"] = [compact_wine(wine, (refs or {}).get(wine.id, "")) for wine in wines]
    return result
