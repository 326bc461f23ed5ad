"""Constraint satisfaction's check: which hard constraints of a golden case a catalogue row breaks, on the row
itself (type, sweetness, price, country, region, grape, food) and relative to earlier turns (not recommended
before, cheaper or pricier than the last picks)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sommelier.language import normalize


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _row_price(row: dict[str, Any]) -> float:
    return float(row.get("price_rub") or 0)


def _listed(field_name: str) -> Callable[[dict[str, Any], Any], str | None]:
    """A check that the row's `field_name` is the wanted value or one of the wanted list."""

    def check(row: dict[str, Any], wanted: Any) -> str | None:
        if row.get(field_name) in _as_list(wanted):
            return None
        return f"{field_name}={row.get(field_name)}"

    return check


def _price_at_least(row: dict[str, Any], wanted: Any) -> str | None:
    """price_min: the row costs no less than the bound."""
    price = _row_price(row)
    return f"price {price:g} < {wanted}" if price < float(wanted) else None


def _price_at_most(row: dict[str, Any], wanted: Any) -> str | None:
    """price_max: the row costs no more than the bound."""
    price = _row_price(row)
    return f"price {price:g} > {wanted}" if price > float(wanted) else None


def _country_is(row: dict[str, Any], wanted: Any) -> str | None:
    """country: the row's country is one of the wanted ones (normalised)."""
    allowed = {normalize(c) for c in _as_list(wanted)}
    if normalize(str(row.get("country") or "")) in allowed:
        return None
    return f"country={row.get('country')}"


def _region_is(row: dict[str, Any], wanted: Any) -> str | None:
    """region: a wanted region appears in the row's region or appellation."""
    haystack = normalize(f"{row.get('region') or ''} {row.get('appellation') or ''}")
    if any(normalize(r) in haystack for r in _as_list(wanted)):
        return None
    return f"region={row.get('region')}"


def _grape_is(row: dict[str, Any], wanted: Any) -> str | None:
    """grape: one of the row's grapes is a wanted grape (or a wanted grape followed by a qualifier)."""
    grapes = [normalize(g) for g in row.get("grape_varieties") or []]
    names = [normalize(g) for g in _as_list(wanted)]
    if any(g == w or g.startswith(w + " ") for g in grapes for w in names):
        return None
    return f"grapes={', '.join(row.get('grape_varieties') or [])}"


def _food_is(row: dict[str, Any], wanted: Any) -> str | None:
    """food: one of the row's pairings contains one of the wanted stems."""
    pairings = [normalize(p) for p in row.get("food_pairings") or []]
    if any(normalize(s) in p for p in pairings for s in wanted):
        return None
    return f"food={'; '.join(row.get('food_pairings') or [])}"


# The constraints on the catalogue row itself, in the order their violations are listed.
_ROW_CHECKS: dict[str, Callable[[dict[str, Any], Any], str | None]] = {
    "wine_type": _listed("wine_type"),
    "sweetness": _listed("sweetness"),
    "price_min": _price_at_least,
    "price_max": _price_at_most,
    "country": _country_is,
    "region": _region_is,
    "grape": _grape_is,
    "food": _food_is,
}


def _history_violations(
    price: float,
    constraints: dict[str, Any],
    *,
    previous_ids: set[str],
    previous_prices: list[float],
    wine_id: str,
) -> list[str]:
    """The constraints relative to earlier turns: not recommended before, cheaper or pricier than the last picks
    (the price direction is not checked when the previous turn recommended nothing)."""
    broken: list[str] = []
    if constraints.get("not_previous") and wine_id in previous_ids:
        broken.append("already recommended in an earlier turn")
    if constraints.get("cheaper_than_previous") and previous_prices and price >= min(previous_prices):
        broken.append(f"price {price:g} not below the previous picks (min {min(previous_prices):g})")
    if constraints.get("pricier_than_previous") and previous_prices and price <= max(previous_prices):
        broken.append(f"price {price:g} not above the previous picks (max {max(previous_prices):g})")
    return broken


def constraint_violations(
    row: dict[str, Any],
    constraints: dict[str, Any],
    *,
    previous_ids: set[str],
    previous_prices: list[float],
    wine_id: str,
) -> list[str]:
    """Which hard constraints a catalogue row breaks (empty list: it meets them all)."""
    price = _row_price(row)
    broken: list[str] = []
    for key, check in _ROW_CHECKS.items():
        if key in constraints:
            problem = check(row, constraints[key])
            if problem is not None:
                broken.append(problem)
    broken += _history_violations(
        price, constraints, previous_ids=previous_ids, previous_prices=previous_prices, wine_id=wine_id
    )
    return broken
