"""The request in words, as the answers say it back: «лёгкое сухое красное вино из Италии к пасте для
летнего вечера до 2 000 ₽», with what the customer ruled out («но не сухое», «не из Италии», «без Шардоне»),
and the pieces it is made of (a style, a price, a place's and a grape's genitive, a dish's dative)."""

from __future__ import annotations

import re
from typing import Any

from sommelier import language
from sommelier.domain.wine import SWEETNESS_RU, WINE_TYPE_RU
from sommelier.language import matching
from sommelier.offline.intent import QueryIntent
from sommelier.offline.mood import mood_adjectives, mood_occasions
from sommelier.offline.places import REGION_GENITIVE
from sommelier.offline.wording import format_price

grape_genitive = language.grape_genitive


def country_genitive(name: str) -> str:
    """«из Франции»: the genitive from the language layer; an unknown country as written."""
    known = language.country(name, fuzzy=False)
    return known.genitive if known else name


def food_dative(food: str) -> str:
    """«к стейку»: the phrase from the language layer, else the dish inflected (pymorphy3), else quoted."""
    phrase: str | None = language.data("dishes.json")["dative"].get(food)
    if phrase:
        return phrase
    inflected = language.inflect(food, "datv")
    return f"к {inflected}" if inflected else f"к блюду «{food}»"


def style_phrase(wine_type: str | None, sweetness: str | None) -> str:
    """ "сухое красное", "игристое брют", "полусладкое игристое"."""
    type_ru = WINE_TYPE_RU.get(wine_type or "", "")
    sweet_ru = SWEETNESS_RU.get(sweetness or "", "")
    if wine_type == "sparkling":
        if sweetness == "dry":
            return "игристое брют"
        return f"{sweet_ru} игристое".strip()
    return f"{sweet_ru} {type_ru}".strip()


def price_phrase(filters: dict[str, Any]) -> str:
    low, high = filters.get("price_min"), filters.get("price_max")
    if low is not None and high is not None:
        return f"от {format_price(low)} до {format_price(high)}"
    if high is not None:
        return f"до {format_price(high)}"
    if low is not None:
        return f"от {format_price(low)}"
    return ""


# --------------------------------------------------------------------------- request summary


def request_summary(intent: QueryIntent, *, with_price: bool = True, with_mood: bool = True) -> str:
    """The request in words: "лёгкое сухое красное вино из Италии к пасте для летнего вечера до 2 000 ₽"."""
    f = intent.filters
    adjectives = mood_adjectives(intent.mood)[:1] if with_mood else []
    purposes = mood_occasions(intent.mood) if with_mood else []
    style = style_phrase(f.get("wine_type"), f.get("sweetness"))
    head = " ".join([*adjectives, style]).strip()
    if f.get("grape_variety") and not head:
        parts: list[str] = [str(f["grape_variety"])]  # "Мальбек из Аргентины"
    else:
        parts = [head if f.get("wine_type") == "sparkling" else f"{head} вино".strip()]  # «игристое», not «… вино»
        if f.get("grape_variety"):
            parts.append(f"из {grape_genitive(str(f['grape_variety']))}")
    if f.get("region"):
        parts.append(f"из {REGION_GENITIVE.get(f['region'], f['region'])}")
    elif f.get("country"):
        country = matching.canonical_country(str(f["country"]))
        parts.append(f"из {country_genitive(country)}")
    if f.get("food_pairing"):
        parts.append(food_dative(f["food_pairing"]))
    parts.extend(_exclusion_phrases(f))
    if purposes:
        parts.append(" и ".join(purposes))
    if with_price:
        price = price_phrase(f)
        if price:
            parts.append(price)
    return " ".join(p for p in parts if p).replace(" но не ", ", но не ")


def _exclusion_phrases(f: dict[str, Any]) -> list[str]:
    """What the customer ruled out, as said back: «не сухое», «не Кьянти», «не из Италии», «без Шардоне»."""
    phrases: list[str] = []
    ruled_out = [
        WINE_TYPE_RU.get(str(f.get("exclude_wine_type"))),
        "брют"
        if f.get("exclude_sweetness") == "dry" and f.get("wine_type") == "sparkling"
        else SWEETNESS_RU.get(str(f.get("exclude_sweetness"))),
        f.get("exclude_region"),  # «но не Кьянти», as the customer named the place
    ]
    if any(ruled_out):
        phrases.append("но не " + " и не ".join(word for word in ruled_out if word))
    if f.get("exclude_country"):
        countries = [country_genitive(c) for c in matching.countries_listed(str(f["exclude_country"]))]
        listed = ", ".join(countries[:-1]) + f" и {countries[-1]}" if len(countries) > 1 else countries[0]
        phrases.append(f"не из {listed}")  # «не из Италии и Франции»
    if f.get("exclude_grape"):
        phrases.append(f"без {grape_genitive(str(f['exclude_grape']))}")
    return phrases


_HEAD_WORD = re.compile(r"[а-яё]+", re.IGNORECASE)
_HEAD_ENDS = frozenset({*language.LINKING, "до", "от", "но", "не", "без"})


def genitive_phrase(phrase: str) -> str | None:
    """«полусухое розовое вино из Италии» → «полусухого розового вина из Италии» (pymorphy3): the words before
    the first linking word inflected, the rest as written; None when a head word can't be inflected."""
    words = phrase.split(" ")
    head: list[str] = []
    for word in words:
        bare = word.rstrip(",;:")
        if not _HEAD_WORD.fullmatch(bare) or bare.lower() in _HEAD_ENDS:
            break
        head.append(bare)
        if bare != word:
            break  # «красное вино, но не сухое»: the head ends at the comma
    if not head or any(w[:1].isupper() for w in head):
        return None  # a grape's or a place's own name («Пино Нуар») is not declined by the dictionary
    inflected = language.inflect(" ".join(head), "gent")
    if not inflected:
        return None
    rest = words[len(head) :]
    tail = words[len(head) - 1][len(head[-1]) :]  # the comma the head ended at, if any
    return " ".join([inflected + tail, *rest])
