"""Which wines an answer shows: the two search tools' hits merged (those both found first, by similarity),
then up to three picks with distinct names, preferably distinct producers (and types, for open requests)."""

from __future__ import annotations

from collections.abc import Callable

from sommelier.domain.variety import near_copies
from sommelier.domain.wine import Wine

MAX_PICKS = 3


def rank(structured: list[Wine], semantic: list[Wine], ran_structured: bool) -> list[Wine]:
    """Merge the two tools' hits (both already met every filter in SQL): wines found by both first, by
    similarity, then semantic-only hits, then the other structured hits in the tool's order."""
    if not semantic:
        return list(structured)
    if not ran_structured:
        return sorted(semantic, key=lambda w: -(w.similarity_score or 0.0))
    structured_ids = {w.id for w in structured}
    semantic_ids = {w.id for w in semantic}
    both = [w for w in structured if w.id in semantic_ids]
    both += [w for w in semantic if w.id not in structured_ids]
    both.sort(key=lambda w: -(w.similarity_score or 0.0))
    rest = [w for w in structured if w.id not in semantic_ids]
    return both + rest


def select(candidates: list[Wine], *, diversify: bool, count: int = MAX_PICKS) -> list[Wine]:
    """Up to `count` wines: distinct names, preferably distinct producers (and types, for open requests), and no
    near-copies of each other while the candidates allow (domain/variety.py)."""
    picked: list[Wine] = []
    names: set[str] = set()

    def take(predicate: Callable[[Wine], bool], pool: list[Wine]) -> None:
        for wine in pool:
            if len(picked) >= count:
                return
            name = wine.name.strip().casefold()
            if name in names or not predicate(wine):
                continue
            picked.append(wine)
            names.add(name)

    def fresh(wine: Wine) -> bool:
        return not any(near_copies(wine, p) for p in picked)

    head = candidates[:8]
    if diversify:
        take(
            lambda w: (
                w.wine_type not in {p.wine_type for p in picked}
                and w.producer not in {p.producer for p in picked}
                and fresh(w)
            ),
            head,
        )
    take(lambda w: w.producer not in {p.producer for p in picked} and fresh(w), head)
    take(fresh, candidates)
    take(lambda w: True, candidates)
    order = {id(w): i for i, w in enumerate(candidates)}
    return sorted(picked, key=lambda w: order[id(w)])
