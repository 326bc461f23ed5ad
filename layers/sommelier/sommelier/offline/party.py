"""How many people the wine is for, and a budget for all of them (the reader's rule 7): «на 8 человек», «на
свадьбу на 40 гостей», «нас будет шестеро», «бюджет 6000 на всех». An honest number of bottles by the rule of
thumb (party.json `rule`: a bottle for 2–3 guests at a dinner, for 1–2 over a long evening) and, from a total,
the budget of one bottle. The words are language/data/party.json's."""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

from sommelier import language
from sommelier.offline.message import Spans

_DATA = language.data("party.json")
_RULE = _DATA["rule"]
_WORDING: dict[str, list[str]] = _DATA["wording"]
_NUMBERS: dict[str, int] = {**_DATA["numbers"], **_DATA["collective"]}
_GUESTS = re.compile(
    r"(?<![\w.,])(?P<n>\d{1,4}|"
    + language.alternation(_DATA["numbers"])
    + r")\s+"
    + language.alternation(_DATA["guests"])
)
_COLLECTIVE = re.compile(language.alternation(_DATA["collective"]))
_LONG = re.compile(language.alternation(_DATA["long_evening"]))
_TOTAL = re.compile(language.alternation(_DATA["total"]))


class Party(NamedTuple):
    guests: int
    long_evening: bool
    total: float | None = None  # the budget for every bottle together


def read_party(t: str, spans: Spans) -> Party | None:
    """The number of guests the message names (its words marked as explained), whether the evening is long,
    and whether a budget is the sum for all (the budget itself is read by offline/budget.py)."""
    match = _GUESTS.search(t) or _COLLECTIVE.search(t)
    if match is None:
        return None
    said = match.group("n") if "n" in match.groupdict() else match.group(0)
    guests = int(said) if said.isdigit() else _NUMBERS.get(said.strip(), 0)
    if not 1 < guests <= _RULE["max_guests"]:
        return None
    spans.add(match.start(), match.end())
    total = _TOTAL.search(t)
    if total is not None:
        spans.add(total.start(), total.end())
    return Party(guests, bool(_LONG.search(t)), 0.0 if total is not None else None)


def bottles(party: Party) -> int:
    per_bottle = _RULE["long_evening_guests_per_bottle" if party.long_evening else "guests_per_bottle"]
    return max(1, math.ceil(party.guests / float(per_bottle)))


def with_total(party: Party, filters: dict[str, Any]) -> tuple[Party, dict[str, Any]]:
    """A budget said for all («6000 на всех») becomes the budget of one bottle: the total over the bottles."""
    if party.total is None or not (filters.get("price_max") or filters.get("price_min")):
        return party, filters
    low, high = filters.get("price_min"), filters.get("price_max")
    total = float((low + high) / 2 if low and high else high or low or 0)
    per_bottle = math.floor(total / bottles(party))
    changed = {k: v for k, v in filters.items() if k not in ("price_min", "price_max")}
    changed["price_max"] = max(per_bottle, 1)
    return party._replace(total=total), changed


def quantity_sentence(party: Party, format_price: Any) -> str:
    """The number of bottles with the rule said, and the budget of one from a total."""
    n = bottles(party)
    rule = "примерно бутылка на 1–2 гостей: вечер долгий" if party.long_evening else "примерно бутылка на 2–3 гостей"
    noun = _WORDING["bottle"][n_form(n) - 1]
    guests = _WORDING["guest"][n_form(party.guests) - 1]
    sentence = f"На {party.guests} {guests} возьмите {n} {noun} ({rule}; возьмите на одну-две больше про запас)."
    if party.total:
        sentence += f" Бюджет {format_price(party.total)} на всех — это до {format_price(math.floor(party.total / n))} за бутылку."
    return sentence


def n_form(n: int) -> int:
    """Which Russian plural a number takes: 1 «бутылка», 2 «бутылки», 3 «бутылок»."""
    if n % 10 == 1 and n % 100 != 11:
        return 1
    return 2 if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14 else 3
