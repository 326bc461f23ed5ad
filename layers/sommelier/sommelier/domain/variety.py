"""A varied trio (issue 37, item 7): the wines of one answer differ where the request leaves room (colour,
sweetness, country, grape, a price step), never near-copies of each other. What counts as a near-copy is data
(language/data/similar.json `near_copy`); the order of the wines is otherwise kept, so the top pick of a request
stays the same from one chat to the next."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from sommelier.domain.wine import Wine

ANSWER_SIZE = 3


@cache
def _rule() -> tuple[tuple[str, ...], float]:
    from sommelier import language

    rule: dict[str, Any] = language.data("similar.json")["near_copy"]
    return tuple(rule["same"]), float(rule["price_ratio"])


def _fact(wine: Wine, name: str) -> object:
    if name == "grape":
        from sommelier.language.grape_names import grape_key, parse_grape

        first = wine.grape_varieties[0] if wine.grape_varieties else ""
        return grape_key(parse_grape(first)[0]) if first else None
    if name == "country":
        return (wine.country or wine.region.rsplit(",", 1)[-1]).strip().casefold()
    return getattr(wine, name, None)


def near_copies(a: Wine, b: Wine) -> bool:
    """Do two wines say the same thing in one answer (the same style, place and grape at about the same price)?"""
    same, ratio = _rule()
    if any(_fact(a, name) != _fact(b, name) for name in same):
        return False
    low, high = sorted((float(a.price_rub), float(b.price_rub)))
    return low > 0 and high <= low * ratio


def spread(wines: Iterable[Wine], count: int = ANSWER_SIZE) -> list[Wine]:
    """The wines with the first ``count`` places given to wines that are no near-copy of one already placed (the
    first wine always first); the rest follow in their order. Nothing is dropped."""
    pool = list(wines)
    placed: list[Wine] = []
    while pool and len(placed) < count:
        pick = next((w for w in pool if not any(near_copies(w, p) for p in placed)), pool[0])
        placed.append(pick)
        pool.remove(pick)
    return placed + pool
