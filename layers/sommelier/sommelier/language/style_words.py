"""The words of a wine's type and sweetness (wine_words.json): every spelling → its enum value, matched on
stems in a message, and a shop's style cell read whole («Игристое белое брют» → sparkling, dry)."""

from __future__ import annotations

from functools import cache

from sommelier.language.phrases import Cues, Match, blank_out, cues
from sommelier.language.text import LINKING, normalize, words
from sommelier.language.vocabulary import data

STYLE_KINDS = ("wine_types", "sweetness")


@cache
def style_cues(kind: str) -> Cues:
    """Every spelling of a wine type (`"wine_types"`) or sweetness (`"sweetness"`) → its enum value."""
    spec = data("wine_words.json")
    entries = {word: value for value, spellings in spec[kind].items() for word in spellings}
    return Cues(entries, frozenset(normalize(f) for f in spec["exact_forms"]))


def enum_words(kind: str) -> dict[str, str]:
    """Every spelling of a wine type (`kind="wine_types"`) or sweetness (`"sweetness"`) → its enum value."""
    return {normalize(word): value for value, spellings in data("wine_words.json")[kind].items() for word in spellings}


def style_in_words(cell: str) -> tuple[str | None, str | None]:
    """The wine type and sweetness a shop's style cell names, read whole: «Игристое белое брют», «Вино красное
    сухое», «экстра брют». A sparkling word makes the type sparkling whatever the colour (the catalogue's types
    are red, white, rose, sparkling). Either is None when the cell names two of it, and both are None when the
    cell has any other word, so an unknown word («оранжевое») stays an error that names it."""
    text = normalize(cell)
    kept = _style_words_in(text)
    left = blank_out(text, (match for match, _ in kept))
    if [w for w in words(left) if w not in LINKING] or not kept:
        return None, None
    types = {m.value for m, kind in kept if kind == "wine_types"}
    sugar = {m.value for m, kind in kept if kind == "sweetness"}
    wine_type = "sparkling" if "sparkling" in types else _only(types)
    return wine_type, _only(sugar)


def _style_words_in(text: str) -> list[tuple[Match, str]]:
    """The type, sweetness and wine words of a text, each with its kind; a longer phrase wins over the words
    inside it («demi sec» over «sec»)."""
    found = [(m, kind) for kind in STYLE_KINDS for m in style_cues(kind).find(text)]
    found += [(m, "wine") for m in cues("wine_words.json", "wine").find(text)]
    kept: list[tuple[Match, str]] = []
    for match, kind in sorted(found, key=lambda f: f[0].start_char - f[0].end_char):
        span = match.end_char - match.start_char
        if not any(
            k.start_char <= match.start_char and match.end_char <= k.end_char and k.end_char - k.start_char > span
            for k, _ in kept
        ):
            kept.append((match, kind))
    return kept


def _only(values: set[str]) -> str | None:
    """The one value named, or None when none or several were."""
    return next(iter(values)) if len(values) == 1 else None
