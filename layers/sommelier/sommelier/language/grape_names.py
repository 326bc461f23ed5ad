"""Grapes in any spelling (grapes.json): «Shiraz», «шираз» → Сира; «мальбэк» → Мальбек; «каберне», a first
word several grapes share; a share in a grape cell («мерло 83%»); a cell that says «a blend»."""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from sommelier.language.phrases import Match, PhraseIndex
from sommelier.language.text import normalize, words
from sommelier.language.vocabulary import data


class Grape(NamedTuple):
    name: str
    latin: str
    colour: str
    genitive: str = ""
    rare: bool = False  # seldom met outside its home: a wine made mostly from it is unusual
    # Typical structure of a dry varietal wine (None where the data has none).
    body: str | None = None  # light | medium | full
    acidity: str | None = None  # low | medium | high
    tannin: str | None = None  # none | low | medium | high
    aromas: tuple[str, ...] = ()


@cache
def _grapes() -> tuple[dict[str, Grape], PhraseIndex]:
    by_name: dict[str, Grape] = {}
    phrases: dict[str, str] = {}
    for item in data("grapes.json")["grapes"]:
        grape = Grape(
            item["name"],
            item["latin"],
            item["colour"],
            item["genitive"],
            item.get("rare", False),
            item.get("body"),
            item.get("acidity"),
            item.get("tannin"),
            tuple(item.get("aromas", ())),
        )
        by_name[grape.name] = grape
        for phrase in (item["name"], item["latin"], *item["aliases"]):
            phrases[phrase] = grape.name
    return by_name, PhraseIndex(phrases)


def grapes() -> list[Grape]:
    return list(_grapes()[0].values())


def grapes_in(text: str, *, fuzzy: bool = False) -> list[tuple[Match, Grape]]:
    by_name, index = _grapes()
    return [(m, by_name[m.value]) for m in index.find(text, fuzzy=fuzzy)]


def grape_aliases() -> dict[str, str]:
    """Every spelling of every grape (normalised) → its canonical name; a first word that several grapes
    share stands for them all («каберне» → «Каберне», which the grape filter widens to each Каберне)."""
    table: dict[str, str] = {}
    first_words: dict[str, set[str]] = {}
    for item in data("grapes.json")["grapes"]:
        for phrase in (item["name"], item["latin"], *item["aliases"]):
            table[normalize(phrase)] = item["name"]
        first_words.setdefault(item["name"].split()[0], set()).add(item["name"])
    for word, names in first_words.items():
        if len(names) > 1:
            table.setdefault(normalize(word), word)
    return table


@cache
def _grapes_in_messages() -> PhraseIndex:
    """Every spelling and shared first word («каберне») → the grape's name; without the aliases that are
    everyday words in a message (grapes.json `not_in_messages`)."""
    everyday = {normalize(w) for w in data("grapes.json")["not_in_messages"]}
    return PhraseIndex({alias: name for alias, name in grape_aliases().items() if alias not in everyday})


def grape_names_in(text: str) -> list[Match]:
    """Grapes a customer's message names; each Match.value is the canonical name («Пино Нуаром» → «Пино
    Нуар») or a first word several grapes share («каберне» → «Каберне»)."""
    return _grapes_in_messages().find(text)


def grape(text: str, *, fuzzy: bool = True) -> Grape | None:
    """The grape a whole value names, in any spelling («Shiraz», «шираз» → Сира; «мальбэк» → Мальбек)."""
    # Spellings that stem alike («Каберне Совиньон», «каберне-совиньон») are one hit, not an ambiguity.
    found = list({(m.start, m.end, g.name): (m, g) for m, g in grapes_in(text, fuzzy=fuzzy)}.values())
    if len(found) == 1 and found[0][0].start == 0 and found[0][0].end == len([w for w in words(text)]):
        return found[0][1]
    if len(found) == 1 and len(words(text)) == 1:
        return found[0][1]
    return None


def grape_genitive(name: str) -> str:
    """«из Мальбека», «из Пино Нуара» (grapes.json); a grape the data doesn't know: «из сорта X»."""
    known = _grapes()[0].get(name) or grape(name, fuzzy=False)
    if known and normalize(known.name) == normalize(name):
        return known.genitive
    return "сорта " + name


def grape_key(name: str) -> str:
    """The normalised key a grape is stored and searched under: the canonical name when it is known."""
    known = grape(name, fuzzy=False)
    return normalize(known.name if known else name)


def grape_keys_for_query(text: str) -> list[str]:
    """Keys that satisfy a grape filter: the grape itself, or every known grape the words begin
    («каберне» → Каберне Совиньон and Каберне Фран)."""
    known = grape(text)
    if known:
        return [normalize(known.name)]
    prefix = normalize(text)
    starting = [normalize(g.name) for g in grapes() if normalize(g.name).startswith(prefix + " ")]
    return starting or [prefix]


_SHARE = re.compile(r"(\d{1,3}(?:[.,]\d+)?)\s*%")


def parse_grape(entry: str) -> tuple[str, float | None]:
    """«мерло 83%» → ("Мерло", 83.0); «Каберне Совиньон» → ("Каберне Совиньон", None).
    A known grape gets its canonical name; an unknown one keeps its spelling, capitalised."""
    share: float | None = None
    match = _SHARE.search(entry)
    text = entry
    if match:
        share = float(match.group(1).replace(",", "."))
        text = (entry[: match.start()] + " " + entry[match.end() :]).strip(" -–—:,()")
    text = " ".join(text.split())
    known = grape(text, fuzzy=False)
    if known and normalize(known.name) == normalize(text):
        return known.name, share
    # A synonym stays as the shop wrote it (Масуэло is Кариньян to the filter, Масуэло on the label).
    return (text[:1].upper() + text[1:]), share


@cache
def _blend_words() -> frozenset[str]:
    return frozenset(normalize(w) for w in data("wine_words.json")["blend"])


def blend_word(text: str) -> bool:
    """A grape cell that says «a blend» («Купаж», «Red Blend») rather than naming a grape."""
    return normalize(text) in _blend_words()
