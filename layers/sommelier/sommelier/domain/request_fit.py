"""What a customer's request binds an answer to: its hard constraints, whether a wine keeps them, and the
model's search arguments held to them (docs/architecture.md §6).

The constraints are the request's filters as the project's own reader read them (the offline reader's
searches, agent/prefetch.py), limited to the filters the filters' table marks `binding`
(language/data/filter_words.json): colour, sweetness, budget, country, region, grape, and what the customer
ruled out; a wine must also be for sale. A dish, a mood or a sort order binds nothing.

A wine is judged on the catalogue's facts with the language layer's matching, the same normalised keys the
search compares (grape keys, country codes, a region's spellings); a fact the wine does not have breaks
nothing. The model's tool arguments may narrow a search but never loosen what the customer stated: a bound
left out, bent or given in thousands, a colour or a place left out or changed, an exclusion dropped, are put
back to the customer's, and every change is named so it can be logged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sommelier.domain.wine import Wine
from sommelier.language import filter_words, matching, normalize

# No bottle costs less than this many roubles: a bound below it was written in thousands («до 2 тысяч» → 2).
MIN_BOTTLE_PRICE = 100
PRICE_KEYS = ("price_min", "price_max")
ENUM_KEYS = ("wine_type", "sweetness", "exclude_wine_type", "exclude_sweetness")
# What is asked for and what rules the same kind of value out.
_RULED_OUT = filter_words.ruled_out_by()


def _number(value: Any) -> float | None:
    """A positive finite number as written (a string with spaces, «₽» or a decimal comma too)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.replace(" ", "").replace("\u00a0", "").replace("₽", "").replace(",", "."))
        except ValueError:
            return None
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return None
    return float(value)


def _price(value: Any) -> float | None:
    """A price in roubles: a number below any bottle's price was written in thousands."""
    number = _number(value)
    if number is None:
        return None
    return number * 1000 if number < MIN_BOTTLE_PRICE else number


def _enum(key: str, value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    spellings = filter_words.value_spellings(key)
    lowered = value.strip().lower()
    return spellings.get(lowered, spellings.get(normalize(lowered), lowered))


def _same(key: str, left: Any, right: Any) -> bool:
    """Two values of one filter that mean the same («Italy» and «Италия», «белое» and white)."""
    if key in PRICE_KEYS:
        return _price(left) == _price(right)
    if key in ENUM_KEYS:
        return _enum(key, left) == _enum(key, right)
    if not isinstance(left, str) or not isinstance(right, str):
        return False
    if key == "exclude_country":  # the same countries ruled out, in any order
        return {_country_key(c) for c in matching.countries_listed(left)} == {
            _country_key(c) for c in matching.countries_listed(right)
        }
    if key == "country":
        return _country_key(left) == _country_key(right)
    if key in ("grape_variety", "exclude_grape"):
        return set(matching.grape_keys(left)) == set(matching.grape_keys(right))
    return normalize(left) == normalize(right)


def _country_key(country: str) -> str:
    """A country by its code, or as written when the vocabulary does not know it."""
    return matching.country_code(country) or normalize(country)


def _rules_out(excluded: str, ruled_out: Any, wanted: str, value: Any) -> bool:
    """Whether a value asked for is one the customer ruled out («Франция» of «кроме Италии и Франции»)."""
    return any(_same(wanted, value, item) for item in matching.listed(excluded, ruled_out))


def _grape_keys(wine: Wine) -> set[str]:
    return set(matching.normalised_columns(wine.country or "", wine.grape_varieties, [])["grape_keys"])


def _names_place(wine: Wine, region: str) -> bool | None:
    """Whether the wine's region, appellation or name names the place, as whole words of any of its spellings
    (None: the catalogue says nothing of where the wine comes from)."""
    place = [p for p in (wine.region_name or wine.region, wine.appellation) if p]
    if not place:
        return None
    text = f" {' '.join(normalize(p) for p in (*place, wine.name))} "
    phrases = matching.region_phrases(region)
    return any(f" {phrase} " in text for phrase in phrases) if phrases else None


def _from_country(wine: Wine, country: str) -> bool | None:
    """Whether the wine comes from the country (None: the catalogue does not say where it comes from)."""
    if not wine.country:
        return None
    code = matching.country_code(country)
    if code is not None and matching.country_code(wine.country) is not None:
        return matching.country_code(wine.country) == code
    return normalize(wine.country) == normalize(country)


@dataclass(frozen=True)
class RequestConstraints:
    """The hard constraints of one request, by filter key (the search's own argument names and values)."""

    values: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any] | None) -> RequestConstraints:
        """The binding filters among a search's arguments (the reader's own searches)."""
        values: dict[str, Any] = {}
        for key in filter_words.binding_keys():
            value = (arguments or {}).get(key)
            if key in PRICE_KEYS:
                value = _price(value)
            elif key in ENUM_KEYS:
                value = _enum(key, value)
            elif not isinstance(value, str) or not value.strip():
                value = None
            if value is not None:
                values[key] = value
        low, high = values.get("price_min"), values.get("price_max")
        if low is not None and high is not None and low > high:
            values["price_min"], values["price_max"] = high, low
        return cls(values)

    def __bool__(self) -> bool:
        return bool(self.values)

    def broken_by(self, wine: Wine) -> list[str]:
        """The constraints the wine breaks (empty: it fits), by filter key; «available» when it is not for sale."""
        broken = [key for key, value in self.values.items() if self._breaks(key, value, wine)]
        if wine.available is False:
            broken.append("available")
        return broken

    def fits(self, wine: Wine) -> bool:
        return not self.broken_by(wine)

    @staticmethod
    def _breaks(key: str, value: Any, wine: Wine) -> bool:
        if key == "wine_type":
            return bool(wine.wine_type != value)
        if key == "sweetness":
            return bool(wine.sweetness != value)
        if key == "exclude_wine_type":
            return bool(wine.wine_type == value)
        if key == "exclude_sweetness":
            return bool(wine.sweetness == value)
        if key == "price_min":
            return float(wine.price_rub) < float(value)
        if key == "price_max":
            return float(wine.price_rub) > float(value)
        if key == "grape_variety":
            return set(matching.grape_keys(value)).isdisjoint(_grape_keys(wine))
        if key == "exclude_grape":
            return not set(matching.grape_keys(value)).isdisjoint(_grape_keys(wine))
        if key == "country":
            return _from_country(wine, value) is False
        if key == "exclude_country":  # «кроме Италии и Франции»: from none of them
            return any(_from_country(wine, country) is True for country in matching.countries_listed(value))
        if key == "region":
            return _names_place(wine, value) is False
        if key == "exclude_region":
            return _names_place(wine, value) is True
        return False

    def search_arguments(self) -> dict[str, Any]:
        """The project's own search for wines that keep every constraint (search_wines' arguments)."""
        return dict(self.values)

    def bind(self, arguments: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The model's search arguments held to the request: what it left out, bent or loosened is put back
        to the customer's; a swapped range and a budget in thousands are read as meant. Returns the arguments
        and one line per change (for the log)."""
        bound = dict(arguments)
        changes: list[str] = []
        for key in PRICE_KEYS:  # a range the model wrote in thousands or the wrong way round
            value = bound.get(key)
            price = _price(value)
            if price is not None and price != _number(value):
                bound[key] = price
                changes.append(f"{key} {value!r} read as {price:g}")
        low, high = _price(bound.get("price_min")), _price(bound.get("price_max"))
        if low is not None and high is not None and low > high:
            bound["price_min"], bound["price_max"] = high, low
            changes.append(f"price range {low:g}–{high:g} swapped")
        for key, value in self.values.items():
            given = bound.get(key)
            if given is None or not _same(key, given, value):
                bound[key] = value
                changes.append(f"{key} {given!r} → {value!r}")
        for wanted, excluded in _RULED_OUT.items():  # a value asked for that the customer ruled out
            if (
                excluded in self.values
                and bound.get(wanted) is not None
                and _rules_out(excluded, self.values[excluded], wanted, bound[wanted])
            ):
                changes.append(f"{wanted} {bound.pop(wanted)!r} dropped: ruled out")
        return bound, changes


class RequestFit(NamedTuple):
    """What the project read in one request: whether it asks for wines, and its hard constraints."""

    wants_wines: bool = False
    constraints: RequestConstraints = RequestConstraints()

    def admits(self) -> Callable[[Wine], bool] | None:
        """The streamed path's check of a wine before its card goes out (None: nothing to check)."""
        return self.constraints.fits if self.constraints else None

    @classmethod
    def of_searches(cls, searches: Sequence[Mapping[str, Any]], said: str = "") -> RequestFit:
        """From the arguments of the reader's searches for the request (each carries the request's filters) and
        what the customer wrote. It asks for wines when it states a hard constraint: a colour, a place, a
        grape, an exclusion, or a budget in the customer's own figures. To a bare «вино», «расскажи про сыр»
        or a «подешевле» with nothing before it (a budget the reader inferred from a word) a question back or
        a story is a fair answer."""
        searches = [s for s in searches if "name" not in s]  # a wine asked for by name binds no filter
        if not searches:
            return cls()
        constraints = RequestConstraints.from_arguments(searches[-1])
        stated = set(constraints.values) - (set() if any(c.isdigit() for c in said) else set(PRICE_KEYS))
        return cls(bool(stated), constraints)
