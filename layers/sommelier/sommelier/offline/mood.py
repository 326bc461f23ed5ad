"""The customer's mood in the offline writer's words (occasions.json, mood_reasons.json in the language layer).

What the mood words name — occasions ("для летнего вечера"), a taste adjective for the request summary, the
local embedding's concepts — and why a picked wine fits them. A reason is said only when the wine's rated
attributes bear the concept out, and each wording at most once per answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from sommelier import language
from sommelier.domain.wine import Wine
from sommelier.embeddings.local import CONCEPTS
from sommelier.language import normalize, stem, words
from sommelier.language.structure import structure_words
from sommelier.offline.budget import CHEAP_PRICE_MAX, SOLID_PRICE_MIN

# Occasions the customer named → how to say it ("для летнего вечера"), most specific first; taste words →
# the adjective for the summary; which concept explains a pick best. All from the language layer.
_OCCASIONS: tuple[tuple[re.Pattern[str], str, frozenset[str]], ...] = tuple(
    (re.compile(o["pattern"]), o["phrase"], frozenset(o["groups"])) for o in language.occasions()
)
_ADJECTIVES: tuple[tuple[str, str], ...] = tuple(
    (a["start"], a["adjective"]) for a in language.data("occasions.json")["taste_adjectives"]
)
_CONCEPT_PRIORITY = tuple(language.data("occasions.json")["concept_priority"])


def mood_concepts(mood: str | None) -> list[str]:
    """The local embedding's concepts evoked by the mood words, occasions first."""
    if not mood:
        return []
    found = _concepts_in(mood)
    return [c for c in _CONCEPT_PRIORITY if c in found]


def mood_occasions(mood: str | None) -> list[str]:
    if not mood:
        return []
    text = normalize(mood)
    phrases: list[str] = []
    covered: set[str] = set()
    for pattern, phrase, groups in _OCCASIONS:
        if pattern.search(text) and not groups & covered:
            phrases.append(phrase)
            covered |= groups
    return phrases[:2]


def mood_adjectives(mood: str | None) -> list[str]:
    if not mood:
        return []
    found: list[str] = []
    for word in words(mood):
        for prefix, adjective in _ADJECTIVES:
            if word.startswith(prefix) and adjective not in found:
                found.append(adjective)
                break
    return found[:2]


def _concepts_in(text: str) -> set[str]:
    found: set[str] = set()
    for word in words(text):
        token = stem(word)
        found |= {
            name for name, prefixes in CONCEPTS.items() if token.startswith(prefixes) or word.startswith(prefixes)
        }
    return found


# --------------------------------------------------------------------------- why a wine fits the mood


def grade(value: Any) -> int | None:
    """A 1–5 grade, or None when the shop did not grade it."""
    try:
        graded = int(value)
    except (TypeError, ValueError):
        return None
    return graded if 1 <= graded <= 5 else None


def _medium(value: Any) -> int:
    """The grade, an ungraded attribute counted as medium (3): no reason below claims a medium grade."""
    return grade(value) or 3


def _price(wine: Wine) -> float:
    return float(wine.price_rub or 0)


# When a wine bears a mood concept out: (concept, wording key in mood_reasons.json, the test on the wine's rated
# attributes), tried in order; the first test that holds for the concept gives the key.
# Taste concepts are stated only through the attributes the catalogue rates; a word picked out of the
# description («…есть то, что вы ищете: «танины»») proved random on real shop texts, so none is quoted.
_REASONS: tuple[tuple[str, str, Callable[[Wine], bool]], ...] = (
    ("light", "light", lambda w: _medium(w.body) <= 2),
    (
        "summer",
        "summer",
        lambda w: w.wine_type in ("white", "rose", "sparkling") or _medium(w.body) <= 2 or _medium(w.acidity) >= 4,
    ),
    ("winter", "winter", lambda w: _medium(w.body) >= 4),
    ("romance", "romance_bright", lambda w: w.wine_type in ("sparkling", "rose")),
    ("romance", "romance_soft", lambda w: w.sweetness in ("semi_sweet", "sweet") or _medium(w.tannins) <= 2),
    ("celebration", "celebration_sparkling", lambda w: w.wine_type == "sparkling"),
    ("celebration", "celebration", lambda w: True),
    ("gift", "gift_solid", lambda w: _price(w) >= SOLID_PRICE_MIN),
    ("gift", "gift_modest", lambda w: True),
    ("picnic", "picnic", lambda w: grade(w.body) in (1, 2, 3)),  # a graded body only
    ("everyday", "everyday", lambda w: _price(w) <= CHEAP_PRICE_MAX),
    ("bubbles", "bubbles", lambda w: w.wine_type == "sparkling"),
    ("sweet", "sweet", lambda w: w.sweetness in ("semi_sweet", "sweet")),
    ("rich", "rich", lambda w: _medium(w.body) >= 4),
    ("elegant", "elegant", lambda w: _medium(w.body) <= 3 and _medium(w.acidity) >= 3),
    # The same rules as the wine's embedded text (structure.json): tannins of 3 or less.
    ("soft", "soft", lambda w: "soft" in _concepts_in(", ".join(structure_words(asdict(w))))),
)

_MOOD_REASONS = language.data("mood_reasons.json")


def _wordings(key: str, occasion: str | None = None) -> list[str]:
    when = occasion or _MOOD_REASONS["default_when"].get(key.split("_")[0], "")
    return [w.format(when=when) for w in _MOOD_REASONS["wordings"][key]]


def _mood_reasons(concept: str, wine: Wine, occasion: str | None = None) -> list[str]:
    """Why the wine fits the mood, in a few wordings (mood_reasons.json; each said at most once per answer);
    empty when the wine's rated attributes don't bear the concept out."""
    key = next((key for name, key, holds in _REASONS if name == concept and holds(wine)), None)
    return _wordings(key, occasion) if key else []


def _say_once(options: list[str], used: set[str]) -> str | None:
    """The first wording not yet said in this answer (remembered among its used sentences), or None."""
    for option in options:
        said = "reason: " + option
        if said not in used:
            used.add(said)
            return option
    return None


def mood_reason(wine: Wine, mood: str | None, used: set[str]) -> str | None:
    """Why the wine fits the mood, in a wording this answer (`used`) has not said yet: the first of the mood's
    concepts the wine bears out; else, for a wine the mood search found, that it is close to the description.
    None when there is nothing (new) to say: no reason twice in one answer, the intro has said it."""
    occasions = mood_occasions(mood)
    occasion = occasions[0] if occasions else None
    for concept in mood_concepts(mood):
        options = _mood_reasons(concept, wine, occasion)
        if options:
            return _say_once(options, used)
    if mood and wine.similarity_score is not None:
        return _say_once(_wordings("similar"), used)
    return None
