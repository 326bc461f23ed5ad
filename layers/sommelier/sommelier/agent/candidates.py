"""The wines put in an LLM turn's prompt: the prefetched candidates before the first call (agent.prefetch),
or, for a model that cannot call tools, the offline reader's search else a slice of the catalogue.

The offline responder comes from a factory called inside the guard: failing to build it costs only the
candidates, never the turn.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sommelier.agent.llm.port import LLMError
from sommelier.agent.prefetch import Prefetched, prefetch
from sommelier.agent.turn import Fallback, Found, TurnTrace
from sommelier.domain.conversation import ChatMessage
from sommelier.domain.errors import PortError
from sommelier.domain.wine import Wine
from sommelier.domain.wire import to_wire
from sommelier.repositories.ports import CatalogRepository

logger = logging.getLogger(__name__)

CATALOG_FALLBACK_SIZE = 20


def prefetched(
    offline: Callable[[], Fallback],
    catalog: CatalogRepository,
    text: str,
    history: list[ChatMessage],
    exclude_ids: list[str],
    trace: TurnTrace,
) -> Prefetched:
    """The request's candidates before the first call; none when the search fails (the model searches)."""
    started = time.perf_counter()
    try:
        found = prefetch(offline(), catalog, text, history, exclude_ids)
    except Exception as exc:  # the model's own tools still serve the turn
        logger.warning("prefetch failed; the model searches itself: %s", exc)
        trace.tool_errors.append(f"prefetch: {type(exc).__name__}")
        return Prefetched()
    finally:
        trace.add_stage("prefetch", started)
    trace.prefetched = len(found.wines)
    if found.searched:
        trace.tools_used.append("prefetch")
    return found


def catalogue_for_prompt(
    offline: Callable[[], Fallback],
    catalog: CatalogRepository,
    text: str,
    history: list[ChatMessage],
    exclude_ids: list[str],
    trace: TurnTrace,
) -> Found:
    """Candidates for a model that cannot call tools: the offline reader's search for this query,
    else a slice of the catalogue. Raises LLMError when neither can be had."""
    started = time.perf_counter()
    try:
        answer = offline().respond(text, history, exclude_ids=exclude_ids)
        candidates = [] if answer.error else answer.found_wines[:CATALOG_FALLBACK_SIZE]
    except Exception as exc:  # the catalogue slice below still serves the model
        logger.warning("offline retrieval for the catalogue prompt failed: %s", exc)
        candidates = []
    finally:
        trace.add_stage("tools", started)
    if candidates:
        trace.tools_used.append("offline_retrieval")
        return {w.id: replace(w, found_by=w.found_by or "offline_retrieval") for w in candidates}
    try:
        wines = catalog.fallback_list(limit=CATALOG_FALLBACK_SIZE, exclude_ids=exclude_ids)
    except PortError as exc:
        raise LLMError(f"the catalogue is unavailable too: {exc}") from exc
    trace.tools_used.append("get_list")
    return {w.id: replace(w, found_by="get_list") for w in wines}


def model_view(wine: Wine) -> dict[str, Any]:
    """A wine as the model sees it in a catalogue prompt (no scores, photo keys or availability)."""
    view: dict[str, Any] = to_wire(wine)
    for key in ("similarity_score", "image_key", "telegram_file_id", "available"):
        view.pop(key, None)
    return view


def table_for_prompt(
    offline: Callable[[], Fallback], catalog: CatalogRepository, text: str, history: list[ChatMessage], trace: TurnTrace
) -> list[Wine]:
    """The wines on the table, in the order they were shown, when the message asks about them («сколько стоит
    первое?», «какое из них легче?»): read by get_wines (no search), for the prompt. [] otherwise or on failure."""
    started = time.perf_counter()
    try:
        ids = offline().table_ids(text, history)
        wines = {w.id: w for w in catalog.get_wines(ids).wines} if ids else {}
    except Exception as exc:  # the model still has the history's text
        logger.warning("the wines on the table could not be read: %s", exc)
        trace.tool_errors.append(f"table: {type(exc).__name__}")
        return []
    finally:
        trace.add_stage("table", started)
    if wines:
        trace.tools_used.append("get_wines")
    return [replace(wines[i], found_by="get_wines") for i in ids if i in wines]
