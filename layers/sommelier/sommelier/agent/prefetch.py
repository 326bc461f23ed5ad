"""Prefetch: the candidates the project can find for a request by itself, put before the model at once.

Before the first LLM call the request is read by the language layer and searched with the catalogue's own
operations (the offline responder does both: its filters, its hybrid of structured and semantic search, its
relaxation of the softest constraint). The candidates go into that call's prompt as compact rows, so a
typical turn is one call: the model answers from them, and calls a tool only to look further. Kept apart
so that a better reader or search plugs in here unchanged (LLM_PREFETCH=off: the model searches itself).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from sommelier.domain.conversation import ChatMessage
from sommelier.domain.wine import Wine

logger = logging.getLogger(__name__)

PREFETCH_ROWS = 8  # enough to choose three from, few enough to keep the prompt short
NOTES_CHARS = 160
FOOD_ITEMS = 4
PREFETCH_SOURCE = "prefetch"


class CandidateAnswer(Protocol):
    found_wines: list[Wine]
    tool_calls: list[dict[str, Any]]
    error: str | None


class CandidateFinder(Protocol):
    """What reads a request and searches the catalogue for it (sommelier.offline.OfflineResponder)."""

    def respond(
        self, text: str, history: list[ChatMessage] | None = None, exclude_ids: list[str] | None = None
    ) -> Any: ...


@dataclass
class Prefetched:
    """The candidates of one request: the wines by id (each with found_by), and how they were found."""

    wines: dict[str, Wine] = field(default_factory=dict)
    searches: list[dict[str, Any]] = field(default_factory=list)  # [{"name": tool, "arguments": {...}}]

    @property
    def searched(self) -> bool:
        return bool(self.searches)

    def rows(self) -> list[dict[str, Any]]:
        return [compact_wine(wine) for wine in self.wines.values()]

    def filters(self) -> dict[str, Any]:
        """The filters the reader understood (the first search's), for the prompt."""
        for search in self.searches:
            arguments = {k: v for k, v in (search.get("arguments") or {}).items() if k not in ("exclude_ids", "limit")}
            if arguments:
                return arguments
        return {}


def prefetch(finder: CandidateFinder, text: str, history: list[ChatMessage], exclude_ids: list[str]) -> Prefetched:
    """The candidates for this request, best first; empty when the reader saw no wine request (a greeting,
    a question about wine) or the catalogue could not be searched."""
    answer = finder.respond(text, history, exclude_ids=exclude_ids)
    searches = [c for c in answer.tool_calls if c.get("name") in ("search_wines", "semantic_search")]
    if answer.error or not searches:
        return Prefetched()
    picked = [rec.wine_id for rec in getattr(answer.response, "wines", []) if rec.wine_id]
    by_id = {wine.id: wine for wine in answer.found_wines}
    order = picked + [wine_id for wine_id in by_id if wine_id not in picked]
    wines = {
        wine_id: replace(by_id[wine_id], found_by=by_id[wine_id].found_by or PREFETCH_SOURCE)
        for wine_id in order[:PREFETCH_ROWS]
        if wine_id in by_id
    }
    return Prefetched(wines=wines, searches=searches)


def compact_wine(wine: Wine) -> dict[str, Any]:
    """A wine as the model needs it to choose and explain: no scores, photo keys or long texts."""
    notes = " ".join(part.strip() for part in (wine.tasting_notes, wine.description) if part and part.strip())
    if len(notes) > NOTES_CHARS:
        notes = notes[:NOTES_CHARS].rsplit(" ", 1)[0] + "…"
    row: dict[str, Any] = {
        "id": wine.id,
        "name": wine.name,
        "producer": wine.producer,
        "wine_type": wine.wine_type,
        "sweetness": wine.sweetness,
        "grapes": ", ".join(wine.grape_varieties),
        "region": wine.region,
        "vintage": wine.vintage_year,
        "price_rub": wine.price_rub,
        "notes": notes,
        "food": ", ".join(wine.food_pairings[:FOOD_ITEMS]),
    }
    return {k: v for k, v in row.items() if v not in (None, "", [])}


def compact_result(view: Mapping[str, Any], wines: list[Wine]) -> dict[str, Any]:
    """A search tool's result as the model reads it: the counts and filters, the wines as compact rows."""
    result = {k: v for k, v in view.items() if k not in ("wines", "photos")}
    result["wines"] = [compact_wine(wine) for wine in wines]
    return result
