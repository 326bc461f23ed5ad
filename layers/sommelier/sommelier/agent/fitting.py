"""Every wine shown fits the request as the customer stated it (domain/request_fit.py), on both paths.

The request's constraints come from the project's own reading of it (the offline reader's searches, the same
that the prefetch runs: agent/prefetch.py). Three places hold the model to them:

- its search arguments (`agent.tool_rounds.prepare`, through `RequestConstraints.bind`): what it left out or
  bent is put back to the customer's, and logged;
- a streamed wine (`admits`, called by `agent.streaming.StreamedAnswer` before a card goes out): a wine that
  breaks a constraint is never sent;
- the answer (`fitted`): a wine that breaks a constraint is dropped and replaced from the project's own
  search, and an answer without wines (a «nothing found», an empty recommendation) is not accepted while that
  search finds fitting wines. When nothing in the catalogue fits, the answer says so instead of showing a wine
  that does not fit.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from sommelier.agent.fallback_answers import catalogue_recommendation, degraded_response
from sommelier.agent.turn import Found, OnlineTurn
from sommelier.domain.answer import MAX_WINES, SommelierResponse, WineRecommendation
from sommelier.domain.errors import PortError
from sommelier.domain.request_fit import RequestConstraints
from sommelier.domain.search import search_filters
from sommelier.domain.wine import Wine
from sommelier.repositories.ports import CatalogRepository

logger = logging.getLogger(__name__)

OWN_SEARCH = "request_search"  # found_by of a wine the project's own search added to an answer


def nothing_fits() -> SommelierResponse:
    return SommelierResponse(
        response_type="informational",
        intro="К сожалению, в каталоге сейчас нет вина, которое подходит под все ваши условия.",
        closing="Подобрать что-то близкое — например, чуть изменив бюджет или страну?",
    )


def fitted(
    answer: tuple[SommelierResponse, Found, bool], turn: OnlineTurn, catalog: CatalogRepository
) -> tuple[SommelierResponse, Found, bool]:
    """The answer with every wine that breaks the request dropped and replaced from the project's own
    search; an answer without wines filled from it when the customer asked for wines."""
    response, found, save = answer
    if response.response_type == "off_topic" or turn.trace.mode == "guard_output":
        return answer
    kept = _kept(response, found, turn)
    dropped = len(response.wines) - len(kept)
    if not dropped and (kept or not turn.fit.wants_wines):
        return answer
    room = (len(response.wines) if response.wines else MAX_WINES) - len(kept)
    extra = _replacements(turn, catalog, found, {rec.wine_id for rec in kept}, room)
    found = {**found, **{w.id: w for w in extra if w.id not in found}}
    wines = kept + [catalogue_recommendation(w) for w in extra]
    if not wines:
        # Nothing in the catalogue keeps every constraint: the model's «nothing found» is true; a wine that
        # broke the request is not shown.
        return (nothing_fits() if dropped else response), found, save
    if kept:
        return response.model_copy(update={"wines": wines}), found, save
    # Every wine the model wrote about is gone, or it named none: its intro and closing spoke of them.
    words = degraded_response({w.id: w for w in extra})
    return words.model_copy(update={"wines": wines}), found, save


def _kept(response: SommelierResponse, found: Found, turn: OnlineTurn) -> list[WineRecommendation]:
    """The model's picks that keep the request; each one dropped is logged with what it breaks."""
    kept: list[WineRecommendation] = []
    for rec in response.wines:
        wine = found.get(rec.wine_id or "")
        broken = turn.fit.constraints.broken_by(wine) if wine is not None else []
        if not broken:
            kept.append(rec)
            continue
        logger.warning("dropped «%s»: it breaks the request (%s)", rec.wine_name[:80], ", ".join(broken))
        turn.trace.corrections.append(f"dropped {rec.wine_id}: {', '.join(broken)}")
    return kept


def _replacements(
    turn: OnlineTurn, catalog: CatalogRepository, found: Found, taken: set[str | None], room: int
) -> list[Wine]:
    """Up to ``room`` fitting wines not yet in the answer: the turn's own first, then the project's search."""
    pool = _fitting(found, turn.fit.constraints, taken)
    if len(pool) < room:
        seen = taken | {w.id for w in pool}
        pool += [w for w in _own_search(turn, catalog, turn.fit.constraints) if w.id not in seen]
    extra = pool[:room]
    if extra:
        turn.trace.corrections.append(f"added {len(extra)} fitting wine(s) from the project's own search")
    return extra


def _fitting(found: Found, constraints: RequestConstraints, taken: set[str | None]) -> list[Wine]:
    """The turn's wines that keep the request, in the order they were found (the prefetch's ranking first)."""
    return [w for w in found.values() if w.id not in taken and constraints.fits(w)]


def _own_search(turn: OnlineTurn, catalog: CatalogRepository, constraints: RequestConstraints) -> list[Wine]:
    """The project's own search for the request (one invocation): what the model could not find."""
    arguments = {**constraints.search_arguments(), "limit": MAX_WINES * 2}
    if turn.request.exclude_ids:
        arguments["exclude_ids"] = turn.request.exclude_ids
    try:
        result = catalog.search_wines(search_filters(arguments))
    except PortError as exc:
        logger.warning("the request's own search failed: %s", exc)
        turn.trace.tool_errors.append(f"{OWN_SEARCH}: {exc}"[:300])
        return []
    turn.trace.tools_used.append(OWN_SEARCH)
    return [replace(w, found_by=w.found_by or OWN_SEARCH) for w in result.wines_with_photos() if constraints.fits(w)]
