"""The answer with wines like another (offline/similar.py): what the reference is, the similar wines' cards,
each saying first what makes it like the reference, and that the reference itself is left out."""

from __future__ import annotations

from sommelier.domain.answer import MAX_DESCRIPTION, MAX_INTRO, SommelierResponse, WineRecommendation
from sommelier.domain.wine import SWEETNESS_RU, WINE_TYPE_RU, Wine
from sommelier.offline.intent import QueryIntent
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
