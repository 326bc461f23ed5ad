"""Filter accuracy's comparison: a search call's arguments in comparable form (enum synonyms, country, grape
and region aliases of the language layer, food words by stem, prices as numbers), and the expected filters a
call did not send (the definition: `metrics`' docstring, eval/README.md)."""

from __future__ import annotations

import math
from typing import Any

from sommelier import language
from sommelier.language import normalize, stem, words

# Linking words and «блюдо» name no dish (the language layer's).
_NOT_A_DISH = {stem(w) for w in (*language.LINKING, *language.data("dishes.json")["dish_words"])}


def _price(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        value = value.replace(" ", "").replace("\u00a0", "").replace("₽", "").replace(",", ".")
        try:
            value = float(value)
        except ValueError:
            return None
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return None
    return float(value)


def _grape(value: str) -> str:
    known = language.grape(value)
    return normalize(known.name if known else value)


def _country(value: str) -> str:
    known = language.country(value)
    return normalize(known.name if known else value)


def _region(value: str) -> str:
    known = language.region(value)
    return normalize(known.name) if known else normalize(value)


def _food_stems(value: str) -> set[str]:
    return {stem(w) for w in words(value) if stem(w) not in _NOT_A_DISH}


def normalise_filters(arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments in comparable form (unknown keys and empty values dropped)."""
    out: dict[str, Any] = {}
    if not isinstance(arguments, dict):
        return out
    for key, table in (
        ("wine_type", language.enum_words("wine_types")),
        ("sweetness", language.enum_words("sweetness")),
    ):
        value = arguments.get(key)
        if isinstance(value, str) and table.get(normalize(value)):
            out[key] = table[normalize(value)]
    for key in ("price_min", "price_max"):
        price = _price(arguments.get(key))
        if price is not None:
            out[key] = price
    for key in ("grape_variety", "country", "region", "food_pairing"):
        value = arguments.get(key)
        if not isinstance(value, str) or not value.strip():
            continue
        if key == "grape_variety":
            out[key] = _grape(value)
        elif key == "country":
            out[key] = _country(value)
        elif key == "region":
            out[key] = _region(value)
        else:
            out[key] = _food_stems(value)
    return out


def _stems_cover(expected: set[str], sent: set[str]) -> bool:
    return all(any(s.startswith(e) or e.startswith(s) for s in sent if len(s) >= 3) for e in expected)


def _filter_matches(key: str, expected: Any, sent: dict[str, Any]) -> bool:
    if key not in sent:
        return False
    value = sent[key]
    if key in ("price_min", "price_max"):
        if isinstance(expected, list):
            return bool(float(expected[0]) <= value <= float(expected[1]))
        return bool(abs(value - float(expected)) <= 1.0)
    alternatives = expected if isinstance(expected, list) else [expected]
    for alt in alternatives:
        if key in ("wine_type", "sweetness"):
            if value == alt:
                return True
        elif key == "grape_variety":
            want = _grape(alt)
            if value == want or value.startswith(want + " "):
                return True
        elif key == "country":
            if value == _country(alt):
                return True
        elif key == "region":
            want = _region(alt)
            if want in value or value in want:
                return True
        elif key == "food_pairing":
            if _stems_cover(_food_stems(alt), value):
                return True
    return False


def missing_filters(expected: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    sent = normalise_filters(arguments)
    return [key for key, value in expected.items() if not _filter_matches(key, value, sent)]
