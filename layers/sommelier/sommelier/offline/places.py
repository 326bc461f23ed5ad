"""The places a message names: an appellation, a region or a subregion, a country; and, for the search and
the wording, each region's country and genitive (regions.json, countries.json)."""

from __future__ import annotations

from sommelier import language
from sommelier.offline.message import Spans, first_named
from sommelier.offline.negations import negated, negated_in_list


def _region_values() -> tuple[dict[str, str], dict[str, str]]:
    """Filter value → its country and its genitive: a region by any spelling is itself, a subregion is
    searched as written («Болгери», «Шабли»)."""
    countries = {c.code: c.name for c in language.countries()}
    country_of: dict[str, str] = {}
    genitive: dict[str, str] = {}
    for item in language.data("regions.json")["regions"]:
        country_of[item["name"]] = countries.get(item["country"], "")
        genitive[item["name"]] = item["genitive"]
        for phrase in item["subregions"]:
            title = subregion_title(phrase)
            country_of[title] = countries.get(item["country"], "")
            genitive[title] = title
    return country_of, genitive


def subregion_title(phrase: str) -> str:
    """A subregion as the search reads it and the wording says it: «болгери» → «Болгери»."""
    return " ".join(w[:1].upper() + w[1:] for w in phrase.split(" "))


REGION_COUNTRY, REGION_GENITIVE = _region_values()


def read_appellation(t: str, spans: Spans) -> str | None:
    """An appellation named in more words than any grape name it holds: the place, searched as a region."""
    grapes = language.grape_names_in(t)
    hits: list[tuple[int, str]] = []
    for m, place in language.appellations_in(t):
        inside = [g for g in grapes if m.start_char <= g.start_char and g.end_char <= m.end_char]
        if not inside or negated(t, m.start_char):
            continue
        if all(len(g.phrase.split()) < len(m.phrase.split()) for g in inside):
            spans.add(m.start_char, m.end_char)
            hits.append((m.start_char, place.name))
    return first_named(hits)


def read_region(t: str, spans: Spans) -> str | None:
    """The region named first and not negated: a region by its name, a subregion by its own («Болгери»)."""
    hits: list[tuple[int, str]] = []
    named = language.regions_in(t)
    ruled_out = negated_in_list(t, [(m.start_char, m.end_char) for m, _, _ in named], commas=True)
    for m, region, subregion in named:
        if spans.covers(m.start_char, m.end_char) or (m.start_char, m.end_char) in ruled_out:
            continue
        spans.add(m.start_char, m.end_char)
        hits.append((m.start_char, subregion_title(m.phrase) if subregion else region.name))
    return first_named(hits)


def read_country(t: str, spans: Spans) -> str | None:
    """The country named first and not negated («Франция или Италия» → Франция), by its Russian name."""
    hits: list[tuple[int, str]] = []
    named = language.countries_in(t)
    ruled_out = negated_in_list(t, [(m.start_char, m.end_char) for m, _ in named], commas=True)
    for m, country in named:
        if spans.covers(m.start_char, m.end_char):
            continue
        spans.add(m.start_char, m.end_char)
        if (m.start_char, m.end_char) not in ruled_out:
            hits.append((m.start_char, country.name))
    return first_named(hits)  # "Франция или Италия": keep the first one named
