"""Countries and regions in any spelling (countries.json, regions.json): «Соединенные Штаты Америки»,
«USA», «американское» → США; «Tuscany» → Тоскана, «Болгери» a subregion of it."""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from sommelier.language.phrases import Match, PhraseIndex
from sommelier.language.vocabulary import data


class Country(NamedTuple):
    code: str
    name: str
    genitive: str
    adjective: str


class Region(NamedTuple):
    name: str
    country: str  # ISO code
    genitive: str


@cache
def _countries() -> tuple[dict[str, Country], PhraseIndex]:
    by_code: dict[str, Country] = {}
    phrases: dict[str, str] = {}
    for item in data("countries.json")["countries"]:
        adjectives = item["adjectives"]
        country = Country(item["code"], item["name"], item["genitive"], adjectives[0] if adjectives else "")
        by_code[country.code] = country
        for phrase in (item["name"], item["genitive"], *item["official"], *adjectives, *item["aliases"]):
            phrases[phrase] = country.code
    return by_code, PhraseIndex(phrases)


def countries() -> list[Country]:
    return list(_countries()[0].values())


def country_by_code(code: str | None) -> Country | None:
    return _countries()[0].get(code or "")


def countries_in(text: str, *, fuzzy: bool = False) -> list[tuple[Match, Country]]:
    by_code, index = _countries()
    return [(m, by_code[m.value]) for m in index.find(text, fuzzy=fuzzy)]


def country(text: str, *, fuzzy: bool = True) -> Country | None:
    """The country a whole value names («Соединенные Штаты Америки», «USA», «американское» → США)."""
    found = countries_in(text, fuzzy=fuzzy)
    if found and len({c.code for _, c in found}) == 1:
        return found[0][1]
    if not found:  # a region stands for its country («Крым», «Tuscany»)
        place = region(text)
        if place:
            return country_by_code(place.country)
    return None


@cache
def _regions() -> tuple[dict[str, Region], PhraseIndex]:
    by_name: dict[str, Region] = {}
    phrases: dict[str, tuple[str, bool]] = {}  # phrase → (region name, is a subregion)
    for item in data("regions.json")["regions"]:
        region = Region(item["name"], item["country"], item["genitive"])
        by_name[region.name] = region
        for phrase in (item["name"], item["genitive"], *item["aliases"]):
            phrases[phrase] = (region.name, False)
        for phrase in item["subregions"]:
            phrases[phrase] = (region.name, True)
    return by_name, PhraseIndex(phrases)


def regions() -> list[Region]:
    return list(_regions()[0].values())


def regions_in(text: str) -> list[tuple[Match, Region, bool]]:
    """(match, region, whether the words name a subregion of it: «Болгери» → Тоскана, True)."""
    by_name, index = _regions()
    return [(m, by_name[m.value[0]], m.value[1]) for m in index.find(text)]


def region(text: str) -> Region | None:
    """The region a value names in any spelling («Tuscany» → Тоскана); a subregion is not the region."""
    found = [r for _, r, sub in regions_in(text) if not sub]
    return found[0] if found else None


def region_spellings(place: Region) -> list[str]:
    """Every way the vocabulary writes a region (name, genitive, aliases) and the places inside it
    (Тоскана → тоскана, tuscany, toscana, …, кьянти, chianti, болгери): a wine from any of them is from it."""
    item = next(i for i in data("regions.json")["regions"] if i["name"] == place.name)
    return [item["name"], item["genitive"], *item["aliases"], *item["subregions"]]
