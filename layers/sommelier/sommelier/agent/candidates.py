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

from sommelier.agent.llm.port import LLMError
from sommelier.agent.prefetch import Opening, Prefetched, from_answers, prefetch
from sommelier.agent.turn import Fallback, Found, TurnTrace
from sommelier.domain.conversation import ChatMessage
from sommelier.domain.errors import PortError
from sommelier.domain.request_fit import RequestFit
from sommelier.domain.search import ToolRequest
from sommelier.domain.wine import Wine
from sommelier.domain.wire import SEMANTIC_SEARCH
from sommelier.embeddings import EmbeddingProvider, embed_one
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
    opening: Opening | None = None,
) -> Prefetched:
    """The request's candidates before the first call; none when the search fails (the model searches).
    With an ``opening`` the searches already ran with the turn's beginning, and are used when the history does
    not change what the message asks for (a follow-up does: then they run again)."""
    started = time.perf_counter()
    try:
        found = _opened(offline(), opening, text, history, exclude_ids, trace) if opening is not None else None
        if found is None:
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


def _opened(
    reader: Fallback,
    opening: Opening,
    text: str,
    history: list[ChatMessage],
    exclude_ids: list[str],
    trace: TurnTrace,
) -> Prefetched | None:
    """The opening's candidates, if the message with its history reads as it did alone (else None)."""
    reading = reader.candidate_searches(text, history, exclude_ids=exclude_ids, embedded=False)
    if [_unembedded(r) for r in reading] != [_unembedded(r) for r in opening.searches]:
        trace.tool_errors.append("prefetch: the history changed the request; searched again")
        return None
    return from_answers(opening.searches, opening.results, text)


def _unembedded(request: ToolRequest) -> tuple[str, dict[str, object]]:
    return request.tool, {k: v for k, v in request.arguments.items() if k not in ("embedding", "embedding_model")}


def opening_searches(
    offline: Callable[[], Fallback], embedder: EmbeddingProvider, text: str, exclude_ids: list[str]
) -> list[ToolRequest]:
    """The prefetch's searches read from the message alone (the history comes with the turn's beginning),
    embedded here, to run with the turn's beginning in one invocation. None when the reader sees no wine
    request or cannot read it."""
    try:
        reading = offline().candidate_searches(text, [], exclude_ids=exclude_ids, embedded=False)
    except Exception as exc:  # the prefetch runs after the beginning instead
        logger.warning("the request could not be read before the turn began: %s", exc)
        return []
    searches: list[ToolRequest] = []
    for request in reading:
        query = request.arguments.get("query")
        if request.tool != SEMANTIC_SEARCH.name or not isinstance(query, str):
            searches.append(request)
            continue
        try:
            vector = embed_one(embedder, query)
        except Exception as exc:  # no embeddings: the structured search still runs
            logger.warning("the opening could not embed the query: %s", exc)
            return []  # the prefetch after the beginning words it without the vector
        searches.append(
            ToolRequest(request.tool, {**request.arguments, "embedding": vector, "embedding_model": embedder.model})
        )
    return searches


def request_fit(
    offline: Callable[[], Fallback], text: str, history: list[ChatMessage], exclude_ids: list[str]
) -> RequestFit:
    """What the request binds the answer to, read without the prefetch (LLM_PREFETCH=off): the reader's
    searches, not run."""
    try:
        requests = offline().candidate_searches(text, history, exclude_ids=exclude_ids, embedded=False)
    except Exception as exc:  # the answer is still grounded; only the request's constraints go unchecked
        logger.warning("the request could not be read for its constraints: %s", exc)
        return RequestFit()
    return RequestFit.of_searches([r.arguments for r in requests], text)


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
