"""Wines known by name (named_wines.json): «Есть у вас Petrus?», «Сассикайя», and what each name tells of
the nearest wines to offer instead."""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from sommelier.language.phrases import Match, PhraseIndex
from sommelier.language.text import fold_accents
from sommelier.language.vocabulary import data


class NamedWine(NamedTuple):
    """A famous wine and what its name tells: the attributes of the nearest wines to offer instead."""

    name: str
    wine_type: str | None  # None: a place known for more than one colour
    sweetness: str | None
    grape: str | None
    region: str | None
    country: str | None  # ISO code


@cache
def _named_wines() -> PhraseIndex:
    entries: dict[str, NamedWine] = {}
    for item in data("named_wines.json")["wines"]:
        wine = NamedWine(
            item["name"], item["wine_type"], item["sweetness"], item["grape"], item["region"], item["country"]
        )
        for spelling in (item["name"], *item["names"]):
            entries[fold_accents(spelling)] = wine
    return PhraseIndex(entries)


def named_wines_in(text: str) -> list[tuple[Match, NamedWine]]:
    """Famous wines named in a text («Есть у вас Petrus?», «Сассикайя»)."""
    found: dict[tuple[int, int], tuple[Match, NamedWine]] = {}
    for m in _named_wines().find(fold_accents(text)):
        found.setdefault((m.start_char, m.end_char), (m, m.value))
    return list(found.values())
