"""What a message's negations rule out («но не сухое», «только не итальянское», «кроме розового», «без
шардоне», «но не кьянти»), as the exclusion filters of the search (EXCLUSIONS: wine_type → exclude_wine_type…)."""

from __future__ import annotations

from typing import Any

from sommelier import language
from sommelier.language.filter_words import value_cues
from sommelier.offline.intent import EXCLUSIONS
from sommelier.offline.negations import negated, negated_in_list
from sommelier.offline.places import subregion_title

# The words of the enum filters (the filters' table: wine_words.json), matched on stems.
_TYPE_CUES = value_cues("wine_type")
_SWEETNESS_CUES = value_cues("sweetness")


def _ruled_out(t: str, found: list[tuple[tuple[int, int], Any]], *, commas: bool = False) -> dict[tuple[int, int], Any]:
    """The values a negation rules out among the words of one kind, a list after it included."""
    ruled_out = negated_in_list(t, [span for span, _ in found], commas=commas)
    return {span: value for span, value in found if span in ruled_out}


def read_exclusions(t: str, filters: dict[str, Any]) -> dict[str, Any]:
    """What a negation rules out: «но не сухое», «только не итальянское», «кроме розового», «без шардоне»,
    «но не кьянти». A word that is both a colour and a sweetness («брют») rules out only the sweetness; a
    place that is also a grape's name rules out the grape. Every country of a list is ruled out («кроме
    Италии и Франции» → exclude_country «Италия, Франция»); of other kinds, the first."""
    sweet = _ruled_out(t, [((m.start_char, m.end_char), m.value) for m in _SWEETNESS_CUES.find(t)])
    types = {
        span: value
        for span, value in _ruled_out(t, [((m.start_char, m.end_char), m.value) for m in _TYPE_CUES.find(t)]).items()
        if span not in sweet
    }
    named = [((m.start_char, m.end_char), c.name) for m, c in language.countries_in(t)]
    countries = _ruled_out(t, named, commas=True)
    grapes = _ruled_out(t, [((m.start_char, m.end_char), m.value) for m in language.grape_names_in(t)])
    places = _ruled_out_places(t, taken=[*countries, *grapes])
    found: dict[str, Any] = {}
    kinds = (("wine_type", types), ("sweetness", sweet), ("grape_variety", grapes))
    for key, hits in (*kinds, ("region", places)):
        values = [v for _, v in sorted(hits.items()) if v != filters.get(key)]
        if values:
            found[EXCLUSIONS[key]] = values[0]
    ruled_out_countries = list(dict.fromkeys(v for _, v in sorted(countries.items()) if v != filters.get("country")))
    if ruled_out_countries:
        found[EXCLUSIONS["country"]] = ", ".join(ruled_out_countries)
    return found


def _ruled_out_places(t: str, taken: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """The regions and appellations a negation rules out, by the name the search reads (a place inside a
    region by its own name: «не кьянти» rules out Chianti, not Tuscany), outside what a country or a grape
    already took."""

    def free(start: int, end: int) -> bool:
        return not any(s <= start and end <= e for s, e in taken)

    named = [
        (m.start_char, m.end_char, True, subregion_title(m.phrase) if subregion else region.name)
        for m, region, subregion in language.regions_in(t)
    ]
    named += [(m.start_char, m.end_char, False, place.name) for m, place in language.appellations_in(t)]
    places: dict[tuple[int, int], str] = {}
    # The longest name first («кьянти классико» over «кьянти»); for the same words, the region's reading
    # («не тоскана» is Tuscany, not the appellation «Тоскана IGT»).
    for start, end, _, name in sorted(named, key=lambda n: (n[0] - n[1], not n[2])):
        overlaps = any(start < e and s < end for s, e in places)
        if negated(t, start) and free(start, end) and not overlaps:
            places[(start, end)] = name
    return places
