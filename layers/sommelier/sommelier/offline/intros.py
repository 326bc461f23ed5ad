"""An answer's intro: what the request names, in one of the wordings of language/data/intros.json («Тогда …»
in front of a follow-up's), or the move it made (cheaper, pricier, the dearest first, more of the same), and
the sentence that says which condition was relaxed to find wines."""

from __future__ import annotations

import re
import string
from dataclasses import replace
from typing import Any

from sommelier import language
from sommelier.language import matching
from sommelier.offline.intent import QueryIntent
from sommelier.offline.mood import mood_occasions
from sommelier.offline.places import REGION_GENITIVE
from sommelier.offline.request_words import (
    country_genitive,
    food_dative,
    grape_genitive,
    price_phrase,
    request_summary,
    style_phrase,
)
from sommelier.offline.wording import cap, count_phrase, format_price, pick, seed

# Intro wordings, by what the request names (language/data/intros.json).
_INTROS = language.data("intros.json")
_FIELDS = string.Formatter()
_FIELD_FIRST = re.compile(r"\{(\w+)\}")


def relaxed_sentence(key: str, intent: QueryIntent, relaxed_value: Any, query: str) -> str:
    country = matching.canonical_country(str(relaxed_value)) if key == "country" else ""
    food = food_dative(str(relaxed_value))
    return pick(_INTROS["relaxed"][key], query, key).format(
        food=food,
        Food=cap(food),
        region=REGION_GENITIVE.get(str(relaxed_value), str(relaxed_value)),
        grape=grape_genitive(str(relaxed_value)),
        country=country_genitive(country),
    )


def intro_for(intent: QueryIntent, n: int, query: str) -> str:
    f = intent.filters
    summary = request_summary(intent)
    count = count_phrase(n)
    if intent.price_direction == "cheaper" and f.get("price_max") is not None:
        return pick(
            [
                f"Вот варианты подешевле — все не дороже {format_price(f['price_max'])}.",
                f"Нашлись и более доступные вина: {count} до {format_price(f['price_max'])}.",
            ],
            query,
            "cheaper",
        )
    if intent.price_direction == "pricier" and f.get("price_min") is not None:
        return pick(
            [
                f"Если хочется чего-то посерьёзнее, вот {count} от {format_price(f['price_min'])}.",
                f"Поднимаемся по цене: {count} дороже {format_price(f['price_min'])}.",
            ],
            query,
            "pricier",
        )
    if f.get("sort") in ("price_desc", "price_asc"):
        extreme = "самое дорогое" if f["sort"] == "price_desc" else "самое доступное"
        return pick(
            [
                f"Первым ставлю {extreme} из того, что есть в каталоге по запросу «{summary}», дальше — по цене.",
                f"{cap(extreme)} в каталоге по запросу «{summary}» — первое в списке; вот {count} по порядку цены.",
            ],
            query,
            "superlative",
        )
    if intent.more:
        return pick(
            [
                f"Вот ещё {count} по тому же запросу — {summary}.",
                f"Другие варианты ({summary}): {count}, которые вы ещё не видели.",
                f"Держите ещё {count}: {summary}.",
            ],
            query,
            "more",
        )
    if summary == "вино" or (intent.mood and summary == request_summary(replace(intent, mood=None))):
        if intent.mood:
            return pick(
                [
                    f"По вашему описанию лучше всего подходят эти {count}.",
                    f"Под такое настроение я бы предложил {count} — вот они.",
                ],
                query,
                "mood",
            )
        return pick(
            [
                f"Вот {count} из нашего каталога, с которых приятно начать знакомство.",
                f"Для начала предлагаю {count} разных стилей — от них легко оттолкнуться.",
            ],
            query,
            "generic",
        )
    fields = intro_fields(intent, n, summary)
    template = pick(_intro_templates(n, fields, query), query, "intro")
    if not intent.follow_up:
        return template.format(**fields)
    # «Тогда к утке…», «Тогда Пино Нуар…»: a field up front keeps its own case, a word of the wording is lowered
    opening = _FIELD_FIRST.match(template)
    if opening:
        return "Тогда " + (template[: opening.start(1)] + opening.group(1).lower() + template[opening.end(1) :]).format(
            **fields
        )
    return "Тогда " + template[:1].lower() + template[1:].format(**fields)


def intro_fields(intent: QueryIntent, n: int, summary: str) -> dict[str, str]:
    """What the request names, in the words an intro template puts in (empty when it names nothing such)."""
    f = intent.filters
    place = ""
    if f.get("region"):
        place = f"из {REGION_GENITIVE.get(f['region'], f['region'])}"
    elif f.get("country"):
        place = f"из {country_genitive(matching.canonical_country(str(f['country'])))}"
    grape = str(f.get("grape_variety") or "")
    fields = {
        "summary": summary,
        "count": count_phrase(n),
        "food": food_dative(str(f["food_pairing"])) if f.get("food_pairing") else "",
        "occasion": " и ".join(mood_occasions(intent.mood)),
        "place": place,
        "grape": grape,
        "grape_of": grape_genitive(grape) if grape else "",
        "price": price_phrase(f),
        "style": style_phrase(f.get("wine_type"), f.get("sweetness")),
    }
    return {**fields, **{cap(key): cap(value) for key, value in fields.items()}}


_INTRO_GROUPS = (
    ("food", "food"),
    ("occasion", "occasion"),
    ("place", "place"),
    ("grape", "grape"),
    ("budget", "price"),
    ("style", "style"),
)


def _intro_templates(n: int, fields: dict[str, str], query: str) -> list[str]:
    """The wordings for this request: one of the groups it names (the dish, the occasion, the place, the grape,
    the budget, the style) or the general one, picked by the query; only templates with all fields filled."""
    if n == 1:
        return [pick(_INTROS["one"], query, "intro-one")]
    groups = [
        usable
        for group in ("any", *(group for group, field in _INTRO_GROUPS if fields[field]))
        if (usable := [t for t in _INTROS["many"][group] if _filled(t, fields)])
    ]
    return groups[seed(query, "intro-group") % len(groups)]


def _filled(template: str, fields: dict[str, str]) -> bool:
    return all(fields.get(name) for _, name, _, _ in _FIELDS.parse(template) if name)
