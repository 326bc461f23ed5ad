"""A wine's structured facts in the words customers use for moods (language/data/structure.json).

The rules are data; this module only checks their conditions against a wine's attributes. An ungraded
attribute (None) satisfies no condition, so an ungraded wine gets no structural words.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from functools import cache
from typing import Any

from sommelier import language

_GRADED = ("body", "tannins", "acidity", "price_rub")
_LISTED = ("wine_type", "sweetness")
_CONDITIONS = frozenset({*_GRADED, *_LISTED, "price_level", "main_grape_rare"})


@cache
def _rules() -> tuple[tuple[dict[str, Any], str], ...]:
    rules = language.data("structure.json")["rules"]
    levels = language.data("budget.json")["levels"]
    resolved = []
    for rule in rules:
        when = dict(rule["when"])
        unknown = set(when) - _CONDITIONS
        if unknown:
            raise ValueError(f"structure.json: unknown condition {sorted(unknown)} in {rule}")
        if "price_level" in when:  # the prices budget.json gives that level, as a price_rub range
            when["price_rub"] = levels[when.pop("price_level")]
        resolved.append((when, rule["say"]))
    return tuple(resolved)


def main_grape_is_rare(grape_varieties: Iterable[str]) -> bool:
    """The wine's main grape (the largest share, else the first listed) is `rare` in grapes.json."""
    parsed = [language.parse_grape(entry) for entry in grape_varieties]
    if not parsed:
        return False
    main = max(parsed, key=lambda item: item[1] or 0.0) if any(s for _, s in parsed) else parsed[0]
    known = language.grape(main[0], fuzzy=False)
    return bool(known and known.rare)


def _holds(condition: Any, value: Any) -> bool:
    if value is None:
        return False  # not graded: never guessed
    number = float(value) if isinstance(value, (int, float, Decimal)) else None
    if number is None:
        return False
    low, high = condition.get("min"), condition.get("max")
    return (low is None or number >= low) and (high is None or number <= high)


def structure_words(wine: Mapping[str, Any]) -> list[str]:
    """The `say` of every rule whose conditions the wine meets, in the data's order.

    `wine` holds the catalogue's fields: wine_type, sweetness, body, tannins, acidity, price_rub, grape_varieties.
    """
    rare = main_grape_is_rare(wine.get("grape_varieties") or ())
    said: list[str] = []
    for when, say in _rules():
        ok = True
        for key, condition in when.items():
            if key in _GRADED:
                ok = _holds(condition, wine.get(key))
            elif key in _LISTED:
                ok = wine.get(key) in condition
            else:
                ok = rare is bool(condition)
            if not ok:
                break
        if ok:
            said.append(say)
    return said
