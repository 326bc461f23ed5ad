"""The dish a message names (dishes.json), as the short name the search maps to its food categories; a food
word inside an aroma («с нотками шоколада») is a taste for the mood search, not a dish."""

from __future__ import annotations

import re

from sommelier import language
from sommelier.offline.message import Spans, first_named
from sommelier.offline.negations import negated

_AROMA_MARKERS = language.cues("occasions.json", "aroma_markers")
_AROMA_CHAIN_BREAK = re.compile(
    r"[,.;:!?]|" + language.alternation(language.data("occasions.json")["aroma_markers"]["breaks"])
)
AROMA_CHAIN_WORDS = 4  # «с нотками тёмного шоколада или какао»: the words between the marker and the food


def _names_an_aroma(t: str, start: int) -> bool:
    """Is the food word at `start` part of an aroma after «нотки», «аромат», «привкус»…? Not when a comma
    or a pairing word comes between («с нотами ванили к стейку»)."""
    for marker in _AROMA_MARKERS.find(t[:start]):
        gap = t[marker.end_char : start]
        if len(language.words(gap)) <= AROMA_CHAIN_WORDS and not _AROMA_CHAIN_BREAK.search(gap):
            return True
    return False


def _food_names() -> dict[str, str]:
    """Every dish, group and category name → the entry's first name, passed as food_pairing (the tools
    map it to the same categories)."""
    spec = language.data("dishes.json")
    names: dict[str, str] = {}
    for section in ("dishes", "groups"):
        for entry in spec[section]:
            first = entry.split("|")[0]
            for name in entry.split("|"):
                names.setdefault(language.normalize(name), first)
    for key in spec["categories"]:
        names.setdefault(language.normalize(key), key)
    return names


_FOOD_NAMES = _food_names()


def _food_value(phrase: str) -> str:
    return _FOOD_NAMES.get(language.normalize(phrase), phrase)


def read_food(t: str, spans: Spans) -> str | None:
    """The dish named first and not negated, by its entry's first name; a food word in an aroma is none."""
    hits: list[tuple[int, str]] = []
    for m in language.dishes_in(t, fuzzy=True):
        if spans.covers(m.start_char, m.end_char):
            continue
        if _names_an_aroma(t, m.start_char):
            continue  # «с нотками шоколада»: a taste for the mood search, not a dish
        spans.add(m.start_char, m.end_char)
        if not negated(t, m.start_char):
            hits.append((m.start_char, _food_value(m.phrase)))
    return first_named(hits)
