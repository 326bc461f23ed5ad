"""Wine knowledge as data: the appellations (language/data/appellations.json) and the words of Russian
legal wine names (language/data/legal_words.json), read and matched like the rest of the vocabulary.

The importer infers a thin row's country, region, grapes, colour and sweetness from them; the search and
the pairing read a wine's style from them. The tables' sources are in devsets/knowledge/SOURCES.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from sommelier import language


@dataclass(frozen=True)
class Appellation:
    name: str  # as Russian retail writes it («Шабли»)
    latin: str  # the original name («Chablis»)
    aliases: tuple[str, ...]
    level: str  # AOC, DOCG, DO, AVA, ЗНМП, region …
    country: str  # ISO code
    region: str  # the wider region, in Russian («Бургундия»)
    colours: tuple[str, ...]  # of red, white, rose, sparkling: what it is mainly known for
    grapes: tuple[str, ...]  # principal grapes, by their names in grapes.json
    style: tuple[str, ...]  # «сухое», «полнотелое», «танинное» …


@cache
def _appellations() -> tuple[tuple[Appellation, ...], language.PhraseIndex]:
    rows: list[Appellation] = []
    phrases: dict[str, int] = {}
    for item in language.data("appellations.json")["appellations"]:
        place = Appellation(
            item["name"],
            item["latin"],
            tuple(item["aliases"]),
            item["level"],
            item["country"],
            item["region"],
            tuple(item["colours"]),
            tuple(item["grapes"]),
            tuple(item["style"]),
        )
        for phrase in (place.name, place.latin, *place.aliases):
            # The first row to claim a spelling keeps it: the table lists the narrower name after the wider.
            phrases.setdefault(language.fold_accents(phrase), len(rows))
        rows.append(place)
    return tuple(rows), language.PhraseIndex(phrases)


def appellations() -> list[Appellation]:
    return list(_appellations()[0])


def appellations_in(text: str) -> list[tuple[language.Match, Appellation]]:
    """Appellations named in a text, longest first where they overlap («Шабли Премье Крю» is Шабли;
    «Chianti Classico» is Кьянти Классико, not Кьянти), in Cyrillic or Latin, accents ignored."""
    rows, index = _appellations()
    # Spellings that stem alike («Médoc», «медок») are one place found once.
    found = {(m.start, m.end, m.value): m for m in index.find(language.fold_accents(text))}
    return [(m, rows[m.value]) for m in found.values()]


def appellation(text: str) -> Appellation | None:
    """The one appellation a text names, or None when it names none or several different ones."""
    found = {a.name: a for _, a in appellations_in(text)}
    return next(iter(found.values())) if len(found) == 1 else None


# ---------------------------------------------------------------- Russian legal names


@dataclass(frozen=True)
class LegalReading:
    """What the words of a product's official name say; None where they say nothing."""

    is_wine: bool | None = None
    colour: str | None = None  # white | red | rose | orange
    sweetness: str | None = None  # dry | semi-dry | semi-sweet | sweet | brut | extra_brut | brut_nature | extra_dry
    sparkling: bool | None = None
    fortified: bool | None = None
    aged: bool | None = None
    varietal: bool | None = None


_READ_FIELDS = ("colour", "sweetness", "sparkling", "fortified", "aged", "varietal")


@cache
def _legal_index() -> language.PhraseIndex:
    spec = language.data("legal_words.json")
    entries: dict[str, dict[str, Any]] = {}
    for word in spec["wine_words"]:
        entries[word] = {"is_wine": True}
    for item in spec["fortified_wines"]:
        for form in item["forms"]:
            # a dessert wine (Commandaria) is counted with the fortified: the catalogue's styles don't describe it
            style = item.get("style", ())
            entries[form] = {"is_wine": True, "fortified": "креплёное" in style or "сладкое" in style}
    for item in spec["words"]:
        implies = dict(item["implies"])
        if "is_wine" not in implies and any(k in implies for k in _READ_FIELDS):
            implies.setdefault("style_word", True)
        for form in item["forms"]:
            entries[form] = implies
    for word in spec["non_wine_words"]:
        entries.setdefault(word, {"is_wine": False})
    return language.PhraseIndex({language.fold_accents(k): v for k, v in entries.items()})


def legal_reading(text: str) -> LegalReading:
    """«Вино сортовое ординарное сухое белое» → a wine, white, dry, varietal, not aged; «Шампанское брют» →
    sparkling, brut; «Виски купажированный» → not a wine. The longest phrase wins («вино безалкогольное» is
    not a wine, «брют натюр» is not «брют»); the first word to say a thing decides it."""
    said: dict[str, Any] = {}
    wine_said = non_wine_said = style_said = False
    for match in _legal_index().find(text):
        implies = match.value
        if implies.get("is_wine") is True:
            wine_said = True
        elif implies.get("is_wine") is False:
            non_wine_said = True
        style_said = style_said or bool(implies.get("style_word"))
        for field in _READ_FIELDS:
            if field in implies:
                said.setdefault(field, implies[field])
    is_wine: bool | None = None
    if wine_said and not non_wine_said:
        is_wine = True
    elif non_wine_said and not wine_said:
        is_wine = False
    elif wine_said and non_wine_said:
        is_wine = None  # «Набор: вино и бокалы», «Вино к сыру»: the words disagree; the category decides
    elif style_said and said.get("sparkling"):
        is_wine = True  # «Шампанское», «Игристое брют» name a wine without the word
    return LegalReading(is_wine=is_wine, **{f: said.get(f) for f in _READ_FIELDS})


@cache
def _apart_index() -> language.PhraseIndex:
    spec = language.data("legal_words.json")
    entries = {word: "fruit" for word in spec["fruit_wine_words"]}
    entries.update({word: "alcohol_free" for word in spec["alcohol_free_words"]})
    entries.update({word: "drink" for word in spec["wine_drink_words"]})
    return language.PhraseIndex({language.fold_accents(k): v for k, v in entries.items()})


def wine_apart(text: str) -> str | None:
    """«fruit» for a fruit or berry «вино» (гранатовое, сливовое, ежевичное), «alcohol_free» for an
    alcohol-free one, «drink» for a wine drink («винный напиток», «напиток слабоалкогольный»), else None (legal_words.json `fruit_wine_words`, `alcohol_free_words`)."""
    found = [match.value for match in _apart_index().find(text)]
    for kind in ("alcohol_free", "drink"):  # «Винный напиток …»: a drink made of wine, whatever its colour cell
        if kind in found:
            return kind
    return "fruit" if found else None


def non_wine(text: str) -> bool:
    """The name is of a spirit, a beer, a food or an accessory and not of a wine."""
    return legal_reading(text).is_wine is False
