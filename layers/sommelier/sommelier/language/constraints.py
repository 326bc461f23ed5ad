"""The hard constraints a free-text description states: country, colour, sweetness. `semantic_search`
applies them when the model passed none («американское вино» → США), so a description never returns
wines its own words rule out. A word after a negation («не сухое», «кроме итальянского») states nothing."""

from __future__ import annotations

import re
from functools import cache

from sommelier import language
from sommelier.language.filter_words import value_cues


@cache
def _negation_before() -> re.Pattern[str]:
    negation = language.data("dialogue.json")["negation"]
    return re.compile(
        r"(?:^|\s)"
        + language.alternation(negation["before"])
        + r"\s+(?:"
        + language.alternation(negation["softeners"])
        + r"\s+)?$"
    )


def _negated(text: str, start: int) -> bool:
    return bool(_negation_before().search(text[max(0, start - 30) : start]))


def _single(values: set[str]) -> str | None:
    """One value named, else nothing (a description that names two colours constrains neither)."""
    return next(iter(values)) if len(values) == 1 else None


def stated_constraints(text: str) -> dict[str, str]:
    """{"country": canonical Russian name, "wine_type": enum, "sweetness": enum}, each only when the text
    names exactly one, not negated."""
    t = language.normalize(text or "")
    found: dict[str, str] = {}
    countries = {c.name for m, c in language.countries_in(t) if not _negated(t, m.start_char)}
    types = {m.value for m in value_cues("wine_type").find(t) if not _negated(t, m.start_char)}
    if "sparkling" in types:
        types = {"sparkling"}  # «розовое игристое» is a sparkling wine
    sweetness = {m.value for m in value_cues("sweetness").find(t) if not _negated(t, m.start_char)}
    for key, value in (
        ("country", _single(countries)),
        ("wine_type", _single(types)),
        ("sweetness", _single(sweetness)),
    ):
        if value:
            found[key] = value
    return found
