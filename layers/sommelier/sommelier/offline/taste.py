"""What a message says of the customer's own taste (issue 37, item 6): «понравилось второе», «беру первое»,
«не люблю кислое», «обожаю пино нуар», read into a `TasteNote` the conversation store folds into their profile
(domain/taste.py). Only the first person counts: «сладкое она не пьёт» is a constraint of this request, not the
customer's taste. The words are language/data/taste.json's."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from sommelier import language
from sommelier.domain.taste import TasteNote
from sommelier.domain.wine import Wine
from sommelier.offline.message import prepare, words_of
from sommelier.offline.table import points_at

_BARE = 2  # a statement with at most this many other words («очень понравилось, спасибо») is of the whole answer


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], language.Cues, re.Pattern[str]]:
    data = language.data("taste.json")
    traits = {word: trait for trait, words in data["traits"].items() for word in words}
    breaks = "|".join(map(re.escape, data["clause_breaks"]))
    return (
        re.compile(language.alternation(data["dislikes"])),
        re.compile(language.alternation(data["likes"])),
        language.Cues(traits),
        re.compile(rf"[.!?;\n]+|,?\s+(?:{breaks})\s+"),  # a clause ends at a stop or a «но», «а»
    )


def speaks_of_taste(text: str) -> bool:
    """Does the message have a word of a like or a dislike? (Cheap: read before the shown wines are loaded.)"""
    dislike, like, _, _ = _patterns()
    _, t = prepare(text or "")
    return bool(dislike.search(t) or like.search(t))


def _clause_note(clause: str, shown: list[Wine]) -> TasteNote | None:
    dislike, like, traits, _ = _patterns()
    disliked = list(dislike.finditer(clause))
    rest = dislike.sub(" ", clause)
    liked = [] if disliked else list(like.finditer(rest))
    if not disliked and not liked:
        return None
    sign = -1 if disliked else 1
    found_traits = {str(m.value): sign for m in traits.find(clause)}
    grapes = {grape.name: sign for _, grape in language.grapes_in(clause)}
    wines = [w.id for w in points_at(clause, shown)]
    leftover = words_of(like.sub(" ", rest))
    if not wines and not found_traits and not grapes and shown and len(leftover) <= _BARE:
        wines = [w.id for w in shown]  # «очень понравилось!»: the answer as a whole, as a 👍 under it
    return TasteNote(
        liked=wines if sign > 0 else [], disliked=wines if sign < 0 else [], traits=found_traits, grapes=grapes
    )


def read_taste(text: str, shown: Callable[[], list[Wine]]) -> TasteNote | None:
    """The note a message makes, clause by clause (a later clause wins for the same trait or wine); ``shown``
    gives the wines of the last answer that showed any (called only when the message speaks of taste)."""
    if not speaks_of_taste(text):
        return None
    _, t = prepare(text)
    table = shown()
    liked: list[str] = []
    disliked: list[str] = []
    traits: dict[str, int] = {}
    grapes: dict[str, int] = {}
    for clause in _patterns()[3].split(t):
        note = _clause_note(clause, table) if clause.strip() else None
        if note is None:
            continue
        liked = [*(w for w in liked if w not in note.disliked), *note.liked]
        disliked = [*(w for w in disliked if w not in note.liked), *note.disliked]
        traits.update(note.traits)
        grapes.update(note.grapes)
    note = TasteNote(
        liked=list(dict.fromkeys(liked)), disliked=list(dict.fromkeys(disliked)), traits=traits, grapes=grapes
    )
    return None if note.empty else note
