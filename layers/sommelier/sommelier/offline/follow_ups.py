"""The dialogue's follow-ups (the reader's rule 4): a message that follows up the previous recommendation
(«а подешевле?», «а белое?», «ещё», «из Италии?») keeps the previous request and changes what it names; a
yes to the bot's own offer («Показать для сравнения что-нибудь белое?» → «да») is read the same way."""

from __future__ import annotations

import math
import re
from typing import Any

from sommelier import language
from sommelier.language import matching
from sommelier.offline.budget import CHEAP_PRICE_MAX, SOLID_PRICE_MIN, round_price
from sommelier.offline.intent import EXCLUSIONS, FILTER_KEYS, Kind, PriceDirection, QueryIntent, Reading
from sommelier.offline.message import words_of
from sommelier.offline.message_kind import GREETING, THANKS, WINE_WORD, content_left
from sommelier.offline.party import with_total
from sommelier.offline.places import REGION_COUNTRY

_DIALOGUE = language.data("dialogue.json")


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(r"(?<![a-zа-я0-9])(?:" + pattern + r")(?![a-zа-я0-9])")


_FOLLOW_START = re.compile(r"^" + language.alternation(_DIALOGUE["follow_up_openers"]) + r"(?=\s|$|[?,.!])")
_PREVIOUS_REQUEST = _rx(_DIALOGUE["previous_request"])


def continues_previous(kind: Kind, t: str, reading: Reading, previous: QueryIntent | None) -> bool:
    """Is the message a follow-up of the previous recommendation (rule 4)? Even one read as off-topic
    («а из Чили?») or as thanks with more in it («спасибо, а подешевле?»); thanks alone is not."""
    if kind not in ("recommendation", "off_topic", "thanks") or not _is_follow_up(t, reading, previous):
        return False
    return kind != "thanks" or bool(content_left(t, THANKS, GREETING))


def _is_follow_up(t: str, reading: Reading, previous: QueryIntent | None) -> bool:
    if previous is None or previous.kind != "recommendation":
        return False
    if _FOLLOW_START.search(t) or reading.direction is not None:
        return True
    words = words_of(t)
    if reading.more and (len(words) <= 6 or not reading.filters or _PREVIOUS_REQUEST.search(t)):
        return True
    if reading.party is not None and not reading.filters:
        return True  # «сколько бутылок взять на 8 человек?» after a recommendation
    # A bare change of one parameter: "белое", "до 1500", "из Италии?" (not "мальбек из Аргентины").
    keys = {"price" if k.startswith("price") else k for k in reading.filters}
    return len(words) <= 2 and len(keys) == 1 and reading.mood is None and not WINE_WORD.search(t)


def _resolve_direction(filters: dict[str, Any], direction: PriceDirection, previous: QueryIntent | None) -> None:
    shown = [float(p) for p in (previous.shown_prices if previous else []) if p]
    if direction == "cheaper":
        if shown:
            new_max = max(1.0, math.ceil(min(shown)) - 1)
        elif previous and previous.filters.get("price_max"):
            new_max = round(float(previous.filters["price_max"]) * 0.7)
        else:
            new_max = CHEAP_PRICE_MAX
        filters["price_max"] = round_price(new_max)
        filters.pop("price_min", None)  # "подешевле" lifts the old floor
        filters.pop("sort", None)
    else:
        if shown:
            new_min = math.floor(max(shown)) + 1
        elif previous and previous.filters.get("price_min"):
            new_min = round(float(previous.filters["price_min"]) * 1.4)
        elif previous and previous.filters.get("price_max"):
            new_min = math.floor(float(previous.filters["price_max"])) + 1
        else:
            new_min = SOLID_PRICE_MIN
        filters["price_min"] = round_price(new_min)
        filters.pop("price_max", None)  # "подороже" lifts the old budget
        filters.pop("sort", None)


def _merge(previous: QueryIntent, reading: Reading) -> dict[str, Any]:
    """The previous request's filters with the message's: what it names wins, and takes with it what no
    longer fits (the grape of another colour, the region of another country, the old budget)."""
    merged = {k: v for k, v in previous.filters.items() if k in FILTER_KEYS}
    new = reading.filters
    _drop_what_a_new_colour_or_place_replaces(merged, new)
    if "price_min" in new or "price_max" in new or reading.direction is not None:
        merged.pop("price_min", None)
        merged.pop("price_max", None)
        if "sort" not in new:
            merged.pop("sort", None)  # «а подешевле?» after «самое дорогое»: a budget, not the top of the shelf
    for key, excluded in EXCLUSIONS.items():
        if key in new:
            merged.pop(excluded, None)  # «а сухое?» after «не сухое»
        if excluded in new and merged.get(key) in matching.listed(key, new[excluded]):
            merged.pop(key, None)  # «а не красное?» after «красное», «а не из Италии?» after «итальянское»
    ruled_out = [str(v) for v in (merged.get("exclude_country"), new.get("exclude_country")) if v]
    merged.update(new)
    if len(ruled_out) > 1:  # «только не из Аргентины» … «а не из Чили?»: neither
        merged["exclude_country"] = ", ".join(dict.fromkeys(c for v in ruled_out for c in matching.countries_listed(v)))
    return merged


def _drop_what_a_new_colour_or_place_replaces(merged: dict[str, Any], new: dict[str, Any]) -> None:
    """A new colour takes the grape with it (and a sweetness to or from sparkling); a new country its region
    and grape; a region of another country the country."""
    if "wine_type" in new and new["wine_type"] != merged.get("wine_type"):
        merged.pop("grape_variety", None)  # grapes belong to a colour
        if new["wine_type"] == "sparkling" or merged.get("wine_type") == "sparkling":
            merged.pop("sweetness", None)
    if "country" in new and new["country"] != merged.get("country"):
        merged.pop("region", None)  # the old region belongs to the old country
        merged.pop("grape_variety", None)
    if "region" in new and "country" not in new:
        if merged.get("country") and REGION_COUNTRY.get(new["region"]) != merged["country"]:
            merged.pop("country", None)


def recommendation(reading: Reading, follows: QueryIntent | None) -> QueryIntent:
    """A request for wines; `follows` is the previous request when this message follows it up (it keeps
    what the message does not change), else None."""
    stated = tuple(k for k in FILTER_KEYS if k in reading.filters)
    if follows is not None:
        filters = _merge(follows, reading)
        mood = reading.mood or follows.mood
    else:
        filters = dict(reading.filters)
        mood = reading.mood
    direction = reading.direction
    if direction is not None:
        _resolve_direction(filters, direction, follows)
        stated = tuple(dict.fromkeys((*stated, "price_max" if direction == "cheaper" else "price_min")))
    more = reading.more and (follows is not None or not reading.filters)
    party = reading.party
    if party is not None:
        party, filters = with_total(party, filters)
    # «ещё» after a wine asked for by name: more wines near it (the responder loosens as it did for the first).
    near_name = follows if more and follows is not None and not reading.filters else None
    return QueryIntent(
        kind="recommendation",
        filters=filters,
        mood=mood,
        topic=None,
        follow_up=follows is not None,
        more=more,
        price_direction=direction,
        stated=stated,
        wine_name=near_name.wine_name if near_name else None,
        known_wine=near_name.known_wine if near_name else None,
        party=party,
    )


def offered(
    previous: QueryIntent,
    *,
    filters: dict[str, Any] | None = None,
    direction: PriceDirection | None = None,
    more: bool = False,
) -> QueryIntent:
    """The previous request changed the way an offer the customer said yes to says («Показать для сравнения
    что-нибудь белое?» → «да»): the same merge rules as a typed follow-up («а белое?», «подешевле», «ещё»)."""
    change = dict(filters or {})
    reading = Reading(filters=change, mood=None, strong=True, weak=True, direction=direction, more=more)
    merged = _merge(previous, reading)
    stated = tuple(k for k in FILTER_KEYS if k in change)
    if direction is not None:
        _resolve_direction(merged, direction, previous)
        stated = (*stated, "price_max" if direction == "cheaper" else "price_min")
    return QueryIntent(
        kind="recommendation",
        filters=merged,
        mood=previous.mood,
        follow_up=True,
        more=more,
        price_direction=direction,
        stated=stated,
        wine_name=previous.wine_name if more and not change else None,  # more wines near a wine asked for
        known_wine=previous.known_wine if more and not change else None,
    )
