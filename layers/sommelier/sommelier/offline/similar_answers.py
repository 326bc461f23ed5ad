"""The answer with wines like another (offline/similar.py): what the reference is, the similar wines' cards,
each saying first what makes it like the reference, and that the reference itself is left out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sommelier.domain.answer import MAX_DESCRIPTION, MAX_INTRO, SommelierResponse, WineRecommendation
from sommelier.domain.wine import SWEETNESS_RU, WINE_TYPE_RU, Wine
from sommelier.offline import similar
from sommelier.offline.answers import nothing_found
from sommelier.offline.intent import QueryIntent, describe_filters
from sommelier.offline.selection import select
from sommelier.offline.similar import Reference, similarity
from sommelier.offline.wine_cards import cards
from sommelier.offline.wording import clip, count_phrase, format_price, pick, plain

_CLOSINGS = (
    "Спросите, чем они отличаются, — или выберу одно из них.",
    "Могу сравнить их между собой или выбрать одно.",
)


def _reference_style(reference: Reference) -> str:
    parts = [
        " ".join(
            p for p in (WINE_TYPE_RU.get(reference.wine_type or ""), SWEETNESS_RU.get(reference.sweetness or "")) if p
        ),
        ", ".join(reference.grapes),
        reference.region or reference.country or "",
    ]
    return ", ".join(p for p in parts if p)


def similar_wines(reference: Reference, wines: list[Wine], intent: QueryIntent, *, query: str) -> SommelierResponse:
    style = _reference_style(reference)
    name = plain(reference.said)
    left_out = "Само его в подборку не включаю. " if reference.ids else ""
    price = f", {format_price(reference.price)}" if reference.price else ""
    lead = pick([f"Близкие по стилю к вину «{name}»", f"Похожие на «{name}» вина"], query, "similar")
    intro = f"{lead} ({style}{price}): {count_phrase(len(wines[:3]))} из каталога. {left_out}".strip()
    items = [
        WineRecommendation(
            wine_name=card.wine_name,
            wine_id=card.wine_id,
            description=clip(f"{similarity(wine, reference, format_price)} {card.description}", MAX_DESCRIPTION),
        )
        for wine, card in zip(wines[:3], cards(wines, intent, query), strict=True)
    ]
    return SommelierResponse(
        response_type="recommendation",
        intro=clip(intro, MAX_INTRO),
        wines=items,
        closing=pick(_CLOSINGS, query, "similar-closing"),
    )


def like(
    text: str,
    exclude_ids: list[str],
    by_name: Callable[[str], list[Wine]],
    search: Callable[[dict[str, Any]], list[Wine]],
) -> tuple[SommelierResponse, QueryIntent] | None:
    """Wines like the one the message names: the catalogue's row of it (`by_name`), else the knowledge's, then
    one search of its colour (`search`) ranked by the style they share; None when the message asks no such thing."""
    request = similar.read_similar(text)
    if request is None:
        return None
    known = similar.from_knowledge(request.said)
    hits = by_name(request.said)
    reference = similar.from_catalogue(hits) if similar.agrees(known, hits) else known
    if reference is None:
        return None
    arguments = similar.search_arguments(reference, request, exclude_ids)
    picks = select(similar.ranked(search(arguments), reference, request), diversify=False)
    intent = QueryIntent(kind="recommendation", filters=describe_filters(arguments))
    if not picks:
        return nothing_found(intent, query=text), intent
    return similar_wines(reference, picks, intent, query=text), intent
