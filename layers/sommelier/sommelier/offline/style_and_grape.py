"""The wine a message describes by its strong cues: its type and sweetness (every spelling of
wine_words.json, matched on stems: «красного», «сухим», «игристым», «несладкое») and its grape."""

from __future__ import annotations

from sommelier import language
from sommelier.language.filter_words import value_cues
from sommelier.offline.message import Spans, first_named
from sommelier.offline.negations import negated_in_list

# The words of the enum filters (the filters' table: wine_words.json), matched on stems.
_TYPE_CUES = value_cues("wine_type")
_SWEETNESS_CUES = value_cues("sweetness")


def read_wine_type(t: str, spans: Spans) -> str | None:
    """The wine type named and not negated: «розовое игристое» is sparkling, «красное или белое» none."""
    return _pick_enum(t, _TYPE_CUES, spans)


def _pick_enum(t: str, cues: language.Cues, spans: Spans) -> str | None:
    found: list[tuple[int, str]] = []
    named = cues.find(t)
    ruled_out = negated_in_list(t, [(m.start_char, m.end_char) for m in named])  # «кроме красного и розового»
    for m in named:
        if spans.covers(m.start_char, m.end_char):
            continue
        spans.add(m.start_char, m.end_char)
        if (m.start_char, m.end_char) not in ruled_out:
            found.append((m.start_char, m.value))
    values = {v for _, v in found}
    if not values:
        return None
    if len(values) == 1:
        return values.pop()
    if "sparkling" in values:  # "розовое игристое", "белое игристое брют"
        return "sparkling"
    return None  # "красное или белое": leave it open


def read_grape(t: str, spans: Spans) -> str | None:
    """The grape named first and not negated; its words are claimed unless they name a type too («просекко»)."""
    hits: list[tuple[int, str]] = []
    named = language.grape_names_in(t)
    ruled_out = negated_in_list(t, [(m.start_char, m.end_char) for m in named])  # «без шардоне и совиньона»
    for m in named:
        if spans.covers(m.start_char, m.end_char):
            continue
        if not _TYPE_CUES.find(m.phrase):  # "просекко" also says "sparkling"
            spans.add(m.start_char, m.end_char)
        if (m.start_char, m.end_char) not in ruled_out:
            hits.append((m.start_char, m.value))
    return first_named(hits)


def read_sweetness(t: str, spans: Spans) -> str | None:
    """The sweetness named and not negated, from words the type has claimed too («брют»)."""
    # "брют" is both sparkling and dry: let the sweetness words see it again.
    sweet_spans = Spans()
    sweet_spans.ranges = [r for r in spans.ranges if not _SWEETNESS_CUES.find(t[r[0] : r[1]])]
    sweetness = _pick_enum(t, _SWEETNESS_CUES, sweet_spans)
    spans.ranges = sweet_spans.ranges + [r for r in spans.ranges if r not in sweet_spans.ranges]
    return sweetness
