"""The answer to a whole menu (offline/menu.py): a wine per course, each card saying its course, and the one
wine that suits every course when the catalogue has one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sommelier.domain.answer import MAX_DESCRIPTION, MAX_INTRO, SommelierResponse, WineRecommendation
from sommelier.domain.wine import Wine
from sommelier.offline.intent import QueryIntent, describe_filters
from sommelier.offline.menu import courses
from sommelier.offline.request_words import food_dative
from sommelier.offline.wine_cards import cards
from sommelier.offline.wording import cap, clip, plain

POOL = 10


def menu(
    text: str, intent: QueryIntent, exclude: list[str], search: Callable[[dict[str, Any]], list[Wine]]
) -> SommelierResponse | None:
    """A wine per course of the menu the message names (one search per course, the request's other filters
    kept); None when the message names fewer than two courses or no course finds a wine."""
    dishes = courses(text)
    if len(dishes) < 2:
        return None
    base = {k: v for k, v in describe_filters(intent.filters).items() if k != "food_pairing"}
    found: dict[str, list[Wine]] = {}
    for dish in dishes:
        found[dish] = search(
            {**base, "food_pairing": dish, "limit": POOL, **({"exclude_ids": exclude} if exclude else {})}
        )
    picks: list[tuple[str, Wine]] = []
    for dish in dishes:
        wine = next((w for w in found[dish] if w.id not in {p.id for _, p in picks}), None)
        if wine is not None:
            picks.append((dish, wine))
    if not picks:
        return None
    every = [w for w in found[dishes[0]] if all(w.id in {x.id for x in found[d]} for d in dishes[1:])]
    return _answer(dishes, picks, every[0] if every else None, intent, text)


def _answer(
    dishes: list[str], picks: list[tuple[str, Wine]], carry: Wine | None, intent: QueryIntent, query: str
) -> SommelierResponse:
    missing = [d for d in dishes if d not in {dish for dish, _ in picks}]
    intro = (
        "На такой ужин — по вину к каждому блюду: "
        + ", ".join(f"{food_dative(dish)} — {plain(wine.name)}" for dish, wine in picks)
        + "."
    )
    if missing:
        intro += " " + cap(", ".join(food_dative(d) for d in missing)) + " отдельного вина в каталоге не нашлось."
    if carry is not None:
        intro += f" А если одна бутылка на весь ужин — {plain(carry.name)}: оно подходит ко всем блюдам."
    items = [
        WineRecommendation(
            wine_name=card.wine_name,
            wine_id=card.wine_id,
            description=clip(f"{cap(food_dative(dish))}. {card.description}", MAX_DESCRIPTION),
        )
        for (dish, _), card in zip(picks, cards([w for _, w in picks], intent, query), strict=True)
    ]
    closing = "Подобрать к какому-то блюду другое вино — или одно на весь вечер?"
    return SommelierResponse(response_type="recommendation", intro=clip(intro, MAX_INTRO), wines=items, closing=closing)
