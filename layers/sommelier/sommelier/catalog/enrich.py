"""Facts a thin shop row leaves out, inferred at import from its name, legal name and category with the
language layer's wine knowledge (appellations, grapes, the words of Russian legal names):

- an appellation in the name («Шабли Премье Крю», «Кьянти Классико», «DOCa Rioja») gives the country, the
  region, the principal grapes (those of the wine's colour) and the colour when the appellation makes one;
- the legal name's style words («сухое белое», «игристое брют») give the colour and the sweetness;
- a grape in the name gives the grape; «год урожая 2020» gives the vintage.

Only empty fields are filled, and each filled one is listed in the row's `inferred`: the shop's own value
always wins. A field an export listed as inferred stays marked while it still holds what would be inferred;
a value the owner changed is the owner's.
"""

from __future__ import annotations

import re
from typing import Any

from sommelier import language
from sommelier.language.name_line import without_size

INFERABLE = ("wine_type", "sweetness", "country", "region", "appellation", "grape_varieties", "vintage_year")
_TRAILING_YEAR = re.compile(r"(?:^|[\s,(])((?:19|20)\d{2})\s*(?:г\.?|год)?\s*\)?\s*$", re.IGNORECASE)
_LEADING_YEAR = re.compile(r"^((?:19|20)\d{2})\s")  # «2024 Riesling QbA feinherb»
ASSUMED_SWEETNESS = "dry"
_NUMBER_ONLY = re.compile(r"-?\d+(?:[.,]\d+)?")
_COLOUR_GRAPES = {"red": ("red",), "rose": ("red", "rose"), "white": ("white",), "sparkling": ("white", "red")}


def empty(value: Any) -> bool:
    return value is None or value == "" or value == []


def _appellation(texts: list[str]) -> Any:
    """The appellation the texts name; when they name several, the one named as written (not a word that
    only stems alike: «Лоден» is not Лоди), then the one the others agree with (its country named again:
    «Кот-дю-Рон (Долина Роны)»), then a named appellation over a country or wide region, one that is not
    its own region («Шабли» over «Бургундия»), then the last named (a legal name gives the region first,
    «региона Бургундия», and the appellation in the quoted product name)."""
    for text in texts:
        found = language.appellations_in(text) if text else []
        if found:
            return max(found, key=_rank_of(text, found))[1]
    return None


def _rank_of(text: str, found: list[tuple[Any, Any]]) -> Any:
    said = language.words(language.fold_accents(text))
    countries = [place.country for _, place in found]

    def rank(hit: tuple[Any, Any]) -> tuple[bool, int, bool, bool, int]:
        match, place = hit
        exact = said[match.start : match.end] == language.words(match.phrase)
        agreeing = countries.count(place.country) - 1
        return (exact, agreeing, place.level != "region", place.name != place.region, match.end)

    return rank


def _grapes_named(name: str) -> list[str]:
    grapes: list[str] = []
    for _, grape in language.grapes_in(name):
        if grape.name not in grapes:
            grapes.append(grape.name)
    return grapes


def _said(kind: str, text: str) -> str | None:
    """The one wine type or sweetness a text names anywhere in it («Other Red», «Muga Rioja Rosé»)."""
    values = {m.value for m in language.style_cues(kind).find(language.normalize(text))}
    if kind == "wine_types" and "sparkling" in values:
        return "sparkling"  # «Игристое белое»: the catalogue's types put sparkling before colour
    return values.pop() if len(values) == 1 else None


def _style(texts: list[str]) -> tuple[str | None, str | None]:
    """(wine_type, sweetness) the legal name, the category or a colour cell says: the first text that says
    each, read by the legal words, then by the style words anywhere in it (shorthand written out first)."""
    wine_type = sweetness = None
    sparkling = False
    for text in texts:
        if not text:
            continue
        text = language.expand_shorthand(text)
        reading = language.legal_reading(text)
        said_type = "sparkling" if reading.sparkling else reading.colour
        said_sugar = _said("sweetness", reading.sweetness.replace("_", " ")) if reading.sweetness else None
        said = (said_type if said_type in _COLOUR_GRAPES else None) or _said("wine_types", text)
        wine_type = wine_type or said
        sparkling = sparkling or said == "sparkling"
        sweetness = sweetness or said_sugar or _said("sweetness", text)
    # «Blanc de Blancs» filed under «Mehurčki» (bubbles): the catalogue's types put sparkling before colour
    return ("sparkling" if sparkling else wine_type), sweetness


def _vintage(name: str) -> int | None:
    name = without_size(name)  # «… 2021 0,75 л»: the year is last once the size is left out
    found = language.harvest_year_pattern().search(name) or _TRAILING_YEAR.search(name) or _LEADING_YEAR.search(name)
    return int(found.group(1)) if found else None


def _grapes_of_colour(grapes: tuple[str, ...] | list[str], wine_type: str | None) -> list[str]:
    """The appellation's principal grapes that make a wine of this colour (all of them if none says)."""
    if not wine_type:
        return list(grapes)
    wanted = _COLOUR_GRAPES.get(wine_type, ())
    chosen = []
    for name in grapes:
        known = language.grape(name, fuzzy=False)
        if known is None or known.colour in wanted:
            chosen.append(name)
    return chosen


def _sweetness_of_style(style: tuple[str, ...] | list[str]) -> str | None:
    for word in style:
        _, sugar = language.style_in_words(word)
        if sugar:
            return sugar
    return None


def _place_facts(place: Any) -> dict[str, Any]:
    facts: dict[str, Any] = {"appellation": place.name}
    country = language.country_by_code(place.country)
    if country is not None:
        facts["country"] = country.name
    if place.region:
        facts["region"] = place.region
    return facts


def _colour_of_grapes(grapes: list[str]) -> str | None:
    """«Каберне Совиньон» alone: a red wine; grapes of both colours say nothing."""
    colours = {g.colour for g in (language.grape(n, fuzzy=False) for n in grapes) if g is not None}
    colour = colours.pop() if len(colours) == 1 else None
    return colour if colour in ("red", "white") else None


def inferred_facts(item: dict[str, Any], category: str) -> dict[str, Any]:
    """Every fact of INFERABLE the row's texts say (whether or not the row has it)."""
    name = str(item.get("name") or "")
    wine_type, sweetness = _style([name, category, str(item.get("wine_type") or "")])
    own_type = item.get("wine_type") if item.get("wine_type") in _COLOUR_GRAPES else None  # read by enrich()
    place = _appellation([name, str(item.get("appellation") or "")])  # not the region: a wider place
    grapes = _grapes_named(name) or _grapes_named(category)  # a shop's section may be a grape: «Chardonnay»
    facts: dict[str, Any] = _place_facts(place) if place is not None else {}
    if place is not None:
        wine_type, sweetness, grapes = _with_place(place, wine_type, sweetness, grapes, own_type)
    wine_type = wine_type or (_colour_of_grapes(grapes) if grapes else None)
    if grapes:
        facts["grape_varieties"] = (_grapes_of_colour(grapes, own_type or wine_type) or grapes)[:20]
    return {**facts, **_style_facts(wine_type, sweetness, name)}


def _with_place(
    place: Any, wine_type: str | None, sweetness: str | None, grapes: list[str], own_type: str | None
) -> tuple[str | None, str | None, list[str]]:
    """(wine_type, sweetness, grapes) completed by the appellation the texts name: its only colour, its style's
    sweetness, and the grapes it is made of."""
    colours = [c for c in place.colours if c in _COLOUR_GRAPES]
    wine_type = wine_type or (colours[0] if len(colours) == 1 else None)
    sweetness = sweetness or _sweetness_of_style(place.style)
    # A grape the name shares with the appellation is surely meant («Кьянти Санджовезе»); another one
    # may be a word of a place or a producer («Севр-э-Мен» is not Пино Менье).
    grapes = (
        [g for g in grapes if g in place.grapes] or grapes or _grapes_of_colour(place.grapes, own_type or wine_type)
    )
    return wine_type, sweetness, grapes


def _style_facts(wine_type: str | None, sweetness: str | None, name: str) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    if wine_type:
        facts["wine_type"] = wine_type
        # A wine whose names say no sweetness is taken as dry (brut, for a sparkling one): most wines are,
        # and the value is marked inferred, so `catalog stats` and `export` show it was not the shop's.
        facts["sweetness"] = sweetness or ASSUMED_SWEETNESS
    elif sweetness:
        facts["sweetness"] = sweetness
    if (year := _vintage(name)) is not None:
        facts["vintage_year"] = year
    return facts


def enrich(item: dict[str, Any], category: str) -> dict[str, Any]:
    """The row with its empty INFERABLE fields filled from its texts, and `inferred` listing them."""
    out = _own_sugar_scale(dict(item))
    type_cell = out.get("wine_type")
    if isinstance(type_cell, str) and type_cell.strip():
        # The shop's own colour cell, read as the catalogue's words: «Белое», or a whole legal phrase
        # «Вино сортовое ординарное сухое белое», whose sweetness is the shop's too.
        own_type, own_sugar = _style([type_cell])
        out["wine_type"] = own_type or type_cell
        if own_sugar and empty(out.get("sweetness")):
            out["sweetness"] = own_sugar
    if out.get("wine_type") in ("red", "white", "rose"):
        # A colour cell («Белое») next to a legal name «Вино игристое … брют»: the colour is the shop's, kept
        # in `colour`; the catalogue's type puts sparkling before colour.
        if _style([str(out.get("name") or "")])[0] == "sparkling":
            out.setdefault("colour", out["wine_type"])
            out["wine_type"] = ""
    blend = _blend_only(out.get("grape_varieties"))
    if blend:
        out["grape_varieties"] = []  # «Купаж»: a blend whose grapes the file does not name
    was_inferred = set(out.pop("inferred", None) or [])
    facts = inferred_facts(out, category)
    inferred: list[str] = []
    for field in INFERABLE:
        if field not in facts:
            continue
        if empty(out.get(field)):
            out[field] = facts[field]
            inferred.append(field)
        elif field in was_inferred and out.get(field) == facts[field]:
            inferred.append(field)  # an export's inferred value, unchanged by the owner
    if blend and len(out.get("grape_varieties") or []) < 2:
        # A blend stays a blend: the word first, then the one grape known to be in it, if any.
        out["grape_varieties"] = [blend, *(out.get("grape_varieties") or [])]
    out["inferred"] = inferred
    return out


def _own_sugar_scale(out: dict[str, Any]) -> dict[str, Any]:
    """A sweetness on the shop's own scale («0»…«5»): no word says which end is dry, so it is kept as written
    (`sweetness_as_written`) and the sweetness read from the names instead (and marked inferred)."""
    sugar_cell = out.get("sweetness")
    if isinstance(sugar_cell, int | float | str) and _NUMBER_ONLY.fullmatch(str(sugar_cell).strip()):
        out["sweetness_as_written"] = sugar_cell
        out["sweetness"] = ""
    return out


def _blend_only(grapes: Any) -> str | None:
    """The shop's blend word when its grape cell says only that («Купаж»)."""
    cells = [grapes] if isinstance(grapes, str) else grapes
    if isinstance(cells, list) and cells and all(isinstance(g, str) and language.blend_word(g) for g in cells):
        return "Купаж"
    return None
