"""Russian wording for the offline responder: a valid `SommelierResponse` from an intent and wines.

The text is specific (each description explains the pick from the wine's own data: grape,
region, style, price, pairings, tasting note) and varied (several templates per part,
chosen deterministically from a hash of the query and the wine id, so tests are stable).
The mood's part — its occasions and adjectives, and why a wine fits it — is worded in `offline.mood`.
No markdown or HTML: the Telegram renderer escapes the text.
"""

from __future__ import annotations

import re
import string
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sommelier import language
from sommelier.domain.answer import MAX_CLOSING, MAX_DESCRIPTION, MAX_INTRO, SommelierResponse, WineRecommendation
from sommelier.domain.wine import SWEETNESS_PLURAL_RU, SWEETNESS_RU, WINE_TYPE_RU, Wine
from sommelier.language import matching, pairing
from sommelier.offline.mood import grade, mood_adjectives, mood_occasions, mood_reason
from sommelier.offline.reader import REGION_GENITIVE, QueryIntent

# --------------------------------------------------------------------------- helpers


def _seed(*parts: Any) -> int:
    return zlib.crc32("\x1f".join(str(p) for p in parts).encode("utf-8"))


def _pick(options: Sequence[str], *parts: Any) -> str:
    return options[_seed(*parts) % len(options)]


def format_price(value: Any) -> str:
    number = float(value)
    if number.is_integer():
        text = f"{int(number):,}".replace(",", " ")
    else:
        text = f"{number:,.2f}".replace(",", " ").replace(".", ",")
    return f"{text} ₽"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if end > limit // 2:
        return cut[: end + 1]
    return cut.rsplit(" ", 1)[0].rstrip(",;:—-") + "…"


_MARKUP = re.compile(r"[*_`<>#\[\]]")


def _plain(text: str) -> str:
    """Catalogue text without characters a renderer could take for markup."""
    return _MARKUP.sub("", text or "").strip()


def country_genitive(name: str) -> str:
    """«из Франции»: the genitive from the language layer; an unknown country as written."""
    known = language.country(name, fuzzy=False)
    return known.genitive if known else name


def food_dative(food: str) -> str:
    """«к стейку»: the phrase from the language layer, else the dish inflected (pymorphy3), else quoted."""
    phrase = language.data("dishes.json")["dative"].get(food)
    if phrase:
        return phrase
    inflected = language.inflect(food, "datv")
    return f"к {inflected}" if inflected else f"к блюду «{food}»"


_BODY = {1: "очень лёгкое", 2: "лёгкое", 3: "средней полноты", 4: "насыщенное", 5: "мощное, полнотелое"}
_TANNINS = {
    2: "с мягкими танинами",
    3: "с умеренными танинами",
    4: "с заметными, крепкими танинами",
    5: "с мощными танинами",
}
_ACIDITY = {
    1: "с мягкой кислотностью",
    2: "с невысокой кислотностью",
    3: "со сбалансированной кислотностью",
    4: "со свежей кислотностью",
    5: "с яркой, высокой кислотностью",
}
grape_genitive = language.grape_genitive


def _count_phrase(n: int) -> str:
    return {1: "одно вино", 2: "два вина", 3: "три вина"}.get(n, f"{n} вина")


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
        phrases.append(f"не из {country_genitive(matching.canonical_country(str(f['exclude_country'])))}")
    if f.get("exclude_grape"):
        phrases.append(f"без {grape_genitive(str(f['exclude_grape']))}")
    return phrases


# --------------------------------------------------------------------------- wine descriptions


def _grapes_phrase(grapes: list[str], seed: int) -> str:
    named = [g for g in grapes if not language.blend_word(g)]  # «Купаж» in a grape column names no grape
    if len(named) < len(grapes) and len(named) < 2:
        return "купаж" + (f" на основе {language.grape_genitive(named[0])}" if named else "")
    grapes = named
    if not grapes:
        return ""
    if len(grapes) == 1:
        return ("сорт " if seed % 2 else "моносорт ") + grapes[0]
    listed = ", ".join(grapes[:-1]) + " и " + grapes[-1]
    return ("купаж: " if seed % 2 else "купаж из сортов ") + listed


def _style_words(wine: Wine) -> str:
    """Body, tannins and acidity in words, only those the catalogue grades (empty when none is graded)."""
    parts: list[str] = []
    body, tannins, acidity = (grade(v) for v in (wine.body, wine.tannins, wine.acidity))
    if body:
        parts.append(_BODY[body])
    if tannins in _TANNINS and (wine.wine_type == "red" or (tannins or 0) >= 2):
        parts.append(_TANNINS[tannins])
    if acidity:
        parts.append(_ACIDITY[acidity])
    if len(parts) == 3:
        return f"{parts[0]}, {parts[1]} и {parts[2]}"
    return ", ".join(parts)


def matching_pairings(wine: Wine, food: str) -> list[str]:
    """The wine's pairings whose food categories meet the request's (the rule the SQL applies)."""
    wanted = language.food_categories(food, fuzzy=True)
    return [p for p in wine.food_pairings if wanted & language.food_categories(p)]


def _vintage(wine: Wine) -> str:
    year = wine.vintage_year
    return f"урожая {year} года" if year else "без года урожая (NV)"


def _note(wine: Wine, used: set[str], limit: int = 320) -> str:
    """A sentence from the tasting notes (else the description) that is not about the colour and is
    not already in another card of the same answer."""
    for text in (wine.tasting_notes or "", wine.description or ""):
        for sentence in language.sentences(_plain(text)):
            if len(sentence) > limit or language.is_colour_sentence(sentence):
                continue
            sentence = sentence if sentence.endswith((".", "!", "?", "…")) else sentence + "."
            if sentence not in used:
                used.add(sentence)
                return sentence
    return ""


# The wine's identity sentence: with its body, tannins and acidity in words, or without them when the shop
# grades none of them.
_IDENTITY_TEMPLATES = (
    "{Style} из региона {region}, {grapes}: {body}.",
    "{Producer}, {region} — {style} {vintage}; {grapes}, по стилю {body}.",
    "Это {style} {vintage} из региона {region} ({grapes}): {body}.",
    "{Grapes} из региона {region}: {style}, {body}.",
)
_IDENTITY_TEMPLATES_UNGRADED = (
    "{Style} из региона {region}, {grapes}.",
    "{Producer}, {region} — {style} {vintage}; {grapes}.",
    "Это {style} {vintage} из региона {region} ({grapes}).",
    "{Grapes} из региона {region}: {style}.",
)


def describe_wine(wine: Wine, intent: QueryIntent, query: str, used: set[str] | None = None) -> str:
    """A card's text: what the wine is, why it fits the request (food, mood, price) and a tasting note.
    `used` holds the sentences the answer's other cards said already: none is said twice."""
    used = used if used is not None else set()
    wid = wine.id or wine.name
    identity = _identity(wine, query, wid)
    reasons = [
        reason
        for reason in (
            _food_reason(wine, intent.filters, query, wid),
            mood_reason(wine, intent.mood, used),
            _price_reason(wine, intent.filters, query, wid),
        )
        if reason
    ]
    why = _cap("; ".join(reasons[:3])) + "." if reasons else ""

    if why in used:  # two wines with the same price and pairing: say it once per answer
        why = ""
    used.update(p for p in (identity, why) if p)
    note = _note(wine, used)
    text = " ".join(p for p in (identity, why, note) if p)
    if len(text) > MAX_DESCRIPTION:
        text = " ".join(p for p in (identity, why) if p)
    return _clip(text, MAX_DESCRIPTION)


def _identity(wine: Wine, query: str, wid: str) -> str:
    style = style_phrase(wine.wine_type, wine.sweetness) or "вино"
    grapes = _grapes_phrase(list(wine.grape_varieties), _seed(query, wid))
    body_words = _style_words(wine)
    templates = _IDENTITY_TEMPLATES if body_words else _IDENTITY_TEMPLATES_UNGRADED
    return _pick(templates, query, wid, "identity").format(
        Style=_cap(style),
        style=style,
        region=wine.region or "",
        grapes=grapes,
        Grapes=_cap(grapes),
        body=body_words,
        Producer=_plain(wine.producer or "") or _cap(style),
        vintage=_vintage(wine),
    )


def _food_reason(wine: Wine, filters: dict[str, Any], query: str, wid: str) -> str | None:
    """The wine's own pairings that meet the dish asked for, when there are any."""
    if not filters.get("food_pairing"):
        return None
    hits = matching_pairings(wine, str(filters["food_pairing"]))
    dative = food_dative(filters["food_pairing"])
    if not hits:
        return _style_reason(wine, str(filters["food_pairing"]), dative)
    return _pick(
        [
            f"подходит {dative}: в списке сочетаний — {', '.join(hits[:2])}",
            f"хорошо ляжет {dative} (рекомендуемые сочетания: {', '.join(hits[:2])})",
            f"{dative} — то, что нужно: среди сочетаний есть {hits[0]}",
        ],
        query,
        wid,
        "food",
    )


def _style_reason(wine: Wine, food: str, dative: str) -> str | None:
    """Why a wine without the dish among its pairings suits it: the style the dish asks for, and what the
    wine's grape brings (language/data/dish_styles.json)."""
    style = pairing.dish_style(food)
    if style is None or wine.wine_type not in style.colours or wine.sweetness not in style.sweetness:
        return None
    structure = pairing.structure_words(style, list(wine.grape_varieties))
    return f"{dative} — {style.reason}" + (f" ({structure})" if structure else "")


def _price_reason(wine: Wine, filters: dict[str, Any], query: str, wid: str) -> str | None:
    """The price, said against the price the customer asked for: a range, a budget, a floor, or none."""
    if wine.price_rub is None:
        return None
    price = format_price(wine.price_rub)
    has_max, has_min = filters.get("price_max") is not None, filters.get("price_min") is not None
    if has_max and has_min:
        options = [f"цена {price} — в вашем диапазоне", f"стоит {price}, ровно в заданных рамках"]
        return _pick(options, query, wid, "range")
    if has_max:
        options = [
            f"укладывается в бюджет: {price}",
            f"стоит {price} — в рамках бюджета {price_phrase(filters)}",
            f"цена {price}, бюджет соблюдён",
        ]
        return _pick(options, query, wid, "budget")
    if has_min:
        options = [f"достойный уровень: {price}", f"цена {price} — вино серьёзного уровня"]
        return _pick(options, query, wid, "premium")
    return _pick([f"цена {price}", f"стоит {price}"], query, wid, "price")


# --------------------------------------------------------------------------- whole answers

# Intro wordings, by what the request names (language/data/intros.json).
_INTROS = language.data("intros.json")
_FIELDS = string.Formatter()
_FIELD_FIRST = re.compile(r"\{(\w+)\}")


def _relax_sentence(key: str, intent: QueryIntent, relaxed_value: Any, query: str) -> str:
    country = matching.canonical_country(str(relaxed_value)) if key == "country" else ""
    food = food_dative(str(relaxed_value))
    return _pick(_INTROS["relaxed"][key], query, key).format(
        food=food,
        Food=_cap(food),
        region=REGION_GENITIVE.get(str(relaxed_value), str(relaxed_value)),
        grape=grape_genitive(str(relaxed_value)),
        country=country_genitive(country),
    )


def _intro(intent: QueryIntent, n: int, query: str) -> str:
    f = intent.filters
    summary = request_summary(intent)
    count = _count_phrase(n)
    if intent.price_direction == "cheaper" and f.get("price_max") is not None:
        return _pick(
            [
                f"Вот варианты подешевле — все не дороже {format_price(f['price_max'])}.",
                f"Нашлись и более доступные вина: {count} до {format_price(f['price_max'])}.",
            ],
            query,
            "cheaper",
        )
    if intent.price_direction == "pricier" and f.get("price_min") is not None:
        return _pick(
            [
                f"Если хочется чего-то посерьёзнее, вот {count} от {format_price(f['price_min'])}.",
                f"Поднимаемся по цене: {count} дороже {format_price(f['price_min'])}.",
            ],
            query,
            "pricier",
        )
    if f.get("sort") in ("price_desc", "price_asc"):
        extreme = "самое дорогое" if f["sort"] == "price_desc" else "самое доступное"
        return _pick(
            [
                f"Первым ставлю {extreme} из того, что есть в каталоге по запросу «{summary}», дальше — по цене.",
                f"{_cap(extreme)} в каталоге по запросу «{summary}» — первое в списке; вот {count} по порядку цены.",
            ],
            query,
            "superlative",
        )
    if intent.more:
        return _pick(
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
            return _pick(
                [
                    f"По вашему описанию лучше всего подходят эти {count}.",
                    f"Под такое настроение я бы предложил {count} — вот они.",
                ],
                query,
                "mood",
            )
        return _pick(
            [
                f"Вот {count} из нашего каталога, с которых приятно начать знакомство.",
                f"Для начала предлагаю {count} разных стилей — от них легко оттолкнуться.",
            ],
            query,
            "generic",
        )
    fields = _intro_fields(intent, n, summary)
    template = _pick(_intro_templates(n, fields, query), query, "intro")
    if not intent.follow_up:
        return template.format(**fields)
    # «Тогда к утке…», «Тогда Пино Нуар…»: a field up front keeps its own case, a word of the wording is lowered
    opening = _FIELD_FIRST.match(template)
    if opening:
        return "Тогда " + (template[: opening.start(1)] + opening.group(1).lower() + template[opening.end(1) :]).format(
            **fields
        )
    return "Тогда " + template[:1].lower() + template[1:].format(**fields)


def _intro_fields(intent: QueryIntent, n: int, summary: str) -> dict[str, str]:
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
        "count": _count_phrase(n),
        "food": food_dative(str(f["food_pairing"])) if f.get("food_pairing") else "",
        "occasion": " и ".join(mood_occasions(intent.mood)),
        "place": place,
        "grape": grape,
        "grape_of": grape_genitive(grape) if grape else "",
        "price": price_phrase(f),
        "style": style_phrase(f.get("wine_type"), f.get("sweetness")),
    }
    return {**fields, **{_cap(key): _cap(value) for key, value in fields.items()}}


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
        return [_pick(_INTROS["one"], query, "intro-one")]
    groups = [
        usable
        for group in ("any", *(group for group, field in _INTRO_GROUPS if fields[field]))
        if (usable := [t for t in _INTROS["many"][group] if _filled(t, fields)])
    ]
    return groups[_seed(query, "intro-group") % len(groups)]


def _filled(template: str, fields: dict[str, str]) -> bool:
    return all(fields.get(name) for _, name, _, _ in _FIELDS.parse(template) if name)


@dataclass(frozen=True)
class Offer:
    """What a bare yes («да», «покажи», «давай») to an answer's closing question does.

    `action`: "drop" — the request without the filter `key` (for a budget: up to `price`); "set" — the request
    with `key` = `value` (the same merge rules as a follow-up such as «а белое?»); "cheaper" / "pricier" — the
    price moves past the wines shown; "more" — other wines for the same request. A question that asks rather
    than offers («Есть ли бюджет…?») is answered with more of the same, and `ask` says what to ask again.
    """

    action: str
    key: str | None = None
    value: str | None = None
    price: float | None = None
    ask: str | None = None


# The closing questions of a recommendation and what a yes to each does. The responder reads the offer back
# from the saved answer text (the messages table keeps the text, and a turn needs nothing else to carry it),
# so each sentence is written here once and is its own marker.
CLOSING_OFFERS: tuple[tuple[str, Offer], ...] = (
    ("Показать для сравнения что-нибудь белое?", Offer("set", "wine_type", "white")),
    ("Может, для сравнения посмотрим красное?", Offer("set", "wine_type", "red")),
    ("Хотите, покажу игристое для того же повода?", Offer("set", "wine_type", "sparkling")),
    ("Показать для сравнения полусладкое игристое?", Offer("set", "sweetness", "semi_sweet")),
    ("Показать для сравнения игристое брют?", Offer("set", "sweetness", "dry")),
    ("Поискать варианты подешевле?", Offer("cheaper")),
    ("Показать что-нибудь посолиднее?", Offer("pricier")),
    ("Есть ли бюджет, в который нужно уложиться?", Offer("more", ask="budget")),
    ("К какому блюду будете подавать? Подберу точнее.", Offer("more", ask="food")),
    ("Показать ещё варианты к этому блюду?", Offer("more")),
    ("Какое из них вам ближе — или показать ещё варианты?", Offer("more")),
)
_CLOSING = dict(CLOSING_OFFERS)
# After a yes to a question that asked rather than offered: more wines, and the question once more, plainly.
_ASK_AGAIN = {
    "budget": "Назовите сумму — подберу вина в её пределах.",
    "food": "Напишите блюдо — подберу вино именно к нему.",
}


# When the catalogue can keep none of the closing offers: a question that offers nothing a yes could hold.
NO_OFFER_CLOSING = "Хотите, уточним цвет, бюджет или блюдо, чтобы подобрать точнее?"


def _closing(
    intent: QueryIntent, query: str, ask: str | None = None, can_offer: Callable[[Offer], bool] | None = None
) -> str:
    """The closing question: one of the offers that fit the request, and (with `can_offer`, the responder's
    check against the catalogue) only one the catalogue can keep."""
    if ask in _ASK_AGAIN:
        return _ASK_AGAIN[ask]
    offers = [o for o in _closing_offers(intent, query) if can_offer is None or can_offer(_CLOSING[o])]
    return _pick(offers, query, "closing") if offers else NO_OFFER_CLOSING


def _closing_offers(intent: QueryIntent, query: str) -> list[str]:
    f = intent.filters
    offers: list[str] = []
    wine_type = f.get("wine_type")
    if wine_type == "red":
        offers.append("Показать для сравнения что-нибудь белое?")
    elif wine_type == "white":
        offers.append("Может, для сравнения посмотрим красное?")
    elif wine_type == "rose":
        offers.append("Хотите, покажу игристое для того же повода?")
    elif wine_type == "sparkling":
        if f.get("sweetness") in ("semi_sweet", "sweet"):
            offers.append("Показать для сравнения игристое брют?")
        else:
            offers.append("Показать для сравнения полусладкое игристое?")
    if f.get("price_max") is not None:
        offers.append(_pick(["Поискать варианты подешевле?", "Показать что-нибудь посолиднее?"], query, "price"))
    elif f.get("price_min") is None:
        offers.append("Есть ли бюджет, в который нужно уложиться?")
    if not f.get("food_pairing"):
        offers.append("К какому блюду будете подавать? Подберу точнее.")
    else:
        offers.append("Показать ещё варианты к этому блюду?")
    offers.append("Какое из них вам ближе — или показать ещё варианты?")
    return offers


def recommendation(
    intent: QueryIntent,
    wines: list[Wine],
    *,
    query: str,
    relaxed: tuple[str, Any] | None = None,
    ask: str | None = None,
    can_offer: Callable[[Offer], bool] | None = None,
) -> SommelierResponse:
    """`ask`: the question the customer said yes to without answering it (Offer.ask), asked once more;
    `can_offer`: whether the catalogue can keep an offer (only such offers close the answer)."""
    first = wines[:3]
    names = [w.name.strip().casefold() for w in first]
    items = _cards([w for i, w in enumerate(first) if names[i] not in names[:i]], intent, query)
    intro = _intro(intent, len(items), query)
    if relaxed is not None:
        intro = _relax_sentence(relaxed[0], intent, relaxed[1], query) + " " + intro
    return SommelierResponse(
        response_type="recommendation",
        intro=_clip(intro, MAX_INTRO),
        wines=items,
        closing=_clip(_closing(intent, query, ask, can_offer), MAX_CLOSING),
    )


# The offers nothing_found makes, each recognisable in the saved answer by its fixed words: a yes to it takes
# the previous request without that filter (for a budget: up to the price named).
OFFER_MARKERS: tuple[tuple[str, str], ...] = (
    ("Поднимем бюджет?", "price_max"),
    ("Посмотрим их?", "price_min"),
    ("Попробуем другой бюджет?", "price"),
    ("Если рассмотреть не только", "sweetness"),
    ("Без условия по сорту", "grape_variety"),
    ("Если рассмотреть вина не только из", "country"),
    ("Если не ограничиваться этим регионом", "region"),
    ("Без привязки к блюду", "food_pairing"),
    ("Вина другого цвета", "wine_type"),
)
_PRICE = re.compile(r"(\d[\d\u00a0\u202f ]*\d|\d)\s*₽")


def pending_offer(answer_text: str) -> Offer | None:
    """The offer an earlier answer made in its closing question, if it made one."""
    for marker, key in OFFER_MARKERS:
        if marker in answer_text:
            prices = _PRICE.findall(answer_text)
            return Offer("drop", key, price=float(re.sub(r"\D", "", prices[-1])) if prices else None)
    # The closing question is the answer's last sentence: a sentence quoted from a card earlier does not count.
    tail = answer_text.rstrip()
    for sentence, offer in CLOSING_OFFERS:
        if tail.endswith(sentence):
            return offer
    return None


def nothing_found(
    intent: QueryIntent, *, query: str, blocker: str | None = None, nearest_price: float | None = None
) -> SommelierResponse:
    """Honest "nothing fits". `blocker` is a filter whose removal does find wines (the responder probes for it)."""
    f = intent.filters
    summary = request_summary(intent)
    if intent.more:
        intro = _pick(
            [
                f"Больше вин по этому запросу ({summary}) в каталоге нет — вы уже видели всё, что подходит.",
                f"Похоже, по запросу «{summary}» вы уже видели всё, что есть в каталоге.",
            ],
            query,
            "none-more",
        )
    else:
        genitive = genitive_phrase(summary)
        intro = _pick(
            [
                *([f"Честно скажу: {genitive} в нашем каталоге сейчас нет."] if genitive else []),
                f"К сожалению, по запросу «{summary}» в каталоге сейчас ничего не нашлось.",
                f"Такого сочетания условий — {summary} — в каталоге пока нет, а придумывать я не буду.",
            ],
            query,
            "none",
        )
    country = matching.canonical_country(str(f.get("country") or ""))
    if blocker == "price_max" and nearest_price is not None:
        suggestion = f"Ближайшие подходящие вина стоят от {format_price(nearest_price)}. Поднимем бюджет?"
    elif blocker == "price_min" and nearest_price is not None:
        suggestion = f"Подходящие вина есть подешевле, до {format_price(nearest_price)}. Посмотрим их?"
    elif blocker in ("price_max", "price_min"):
        suggestion = "Если изменить ценовые рамки, варианты найдутся. Попробуем другой бюджет?"
    elif blocker == "sweetness":
        suggestion = (
            f"Если рассмотреть не только {SWEETNESS_PLURAL_RU.get(str(f.get('sweetness')), 'такие')} вина, "
            "варианты найдутся. Показать?"
        )
    elif blocker == "grape_variety":
        suggestion = f"Без условия по сорту ({f.get('grape_variety')}) подходящие вина есть. Показать близкие по стилю?"
    elif blocker == "country":
        suggestion = f"Если рассмотреть вина не только из {country_genitive(country)}, варианты найдутся. Показать?"
    elif blocker == "region":
        suggestion = "Если не ограничиваться этим регионом, варианты найдутся. Расширим поиск?"
    elif blocker == "food_pairing":
        suggestion = "Без привязки к блюду подходящие вина есть. Показать их?"
    elif blocker == "wine_type":
        suggestion = "Вина другого цвета с такими условиями есть. Посмотрим?"
    elif intent.more:
        suggestion = "Хотите, изменим условия — например, цвет, бюджет или страну?"
    elif f.get("price_max") is not None:
        suggestion = "Попробуем поднять бюджет или изменить другие условия?"
    else:
        suggestion = "Расскажите чуть иначе, что ищете, — попробую ещё раз?"
    return SommelierResponse(
        response_type="informational", intro=_clip(intro, MAX_INTRO), closing=_clip(suggestion, MAX_CLOSING)
    )


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


def _cards(wines: list[Wine], intent: QueryIntent, query: str) -> list[WineRecommendation]:
    used: set[str] = set()  # no sentence repeats across the cards of one answer
    return [
        WineRecommendation(wine_name=w.name.strip(), wine_id=w.id, description=describe_wine(w, intent, query, used))
        for w in wines[:3]
    ]


def _wine_label(wine: Wine) -> str:
    year = wine.vintage_year
    return f"{_plain(wine.name)} ({_plain(wine.producer or '')}{f', {year}' if year else ''})"


def _wines_answer(intro: str, wines: list[Wine], intent: QueryIntent, query: str) -> SommelierResponse:
    """An answer about a wine asked for by name: the intro, the wines' cards and the usual closing offer."""
    return SommelierResponse(
        response_type="recommendation",
        intro=_clip(intro, MAX_INTRO),
        wines=_cards(wines, intent, query),
        closing=_clip(_closing(intent, query), MAX_CLOSING),
    )


def named_found(
    intent: QueryIntent, wines: list[Wine], *, query: str, unmet: QueryIntent | None = None
) -> SommelierResponse:
    """The wine the customer named is in the catalogue: it, and only the wines that bear its name.
    `unmet`: the conditions the customer stated with the name that it does not meet («до 5000»)."""
    name = intent.wine_name or ""
    years = sorted({int(w.vintage_year) for w in wines if w.vintage_year})
    if unmet is not None:
        price = f", {format_price(wines[0].price_rub)}" if wines[0].price_rub is not None else ""
        intro = (
            f"{_plain(name)} в нашем каталоге есть, но не под ваши условия ({request_summary(unmet)}): "
            f"{_wine_label(wines[0])}{price}."
        )
    elif intent.wine_vintage and intent.wine_vintage not in years and years:
        other = ", ".join(str(y) for y in years)
        intro = f"{_plain(name)} урожая {intent.wine_vintage} года в каталоге нет, но есть другой урожай — {other}."
    elif len(wines) == 1:
        intro = f"Да, {_plain(name)} в нашем каталоге есть: {_wine_label(wines[0])}."
    else:
        intro = f"Да, по названию «{_plain(name)}» в каталоге есть {_count_phrase(len(wines[:3]))} — вот они."
    return _wines_answer(intro, wines, intent, query)


def named_absent(intent: QueryIntent, wines: list[Wine], *, query: str, name: str) -> SommelierResponse:
    """The named wine is not in the catalogue: say so, then the nearest wines by what its name tells
    (`intent.filters` are the attributes that found them)."""
    summary = request_summary(intent)
    lead = _pick(
        [
            f"{_plain(name)} в нашем каталоге нет, и выдавать за него другое вино я не стану.",
            f"Честно скажу: {_plain(name)} у нас в каталоге нет.",
        ],
        query,
        "absent",
    )
    intro = f"{lead} Ближе всего по стилю — {summary}: {_count_phrase(len(wines[:3]))} из того, что есть."
    return _wines_answer(intro, wines, intent, query)


def named_unknown(name: str, *, query: str) -> SommelierResponse:
    """A wine named that the catalogue lacks and whose name tells nothing: say so and ask what to look for."""
    intro = _pick(
        [
            f"{_plain(name)} в нашем каталоге нет — придумывать его я не буду.",
            f"Вина «{_plain(name)}» в нашем каталоге не нашлось.",
        ],
        query,
        "unknown-name",
    )
    closing = (
        "Расскажите, что вам в нём нравится — цвет, сорт, страна или бюджет, — и я предложу похожие вина из каталога."
    )
    return SommelierResponse(response_type="informational", intro=_clip(intro, MAX_INTRO), closing=closing)


def clarify(query: str) -> SommelierResponse:
    """A yes to a question that offered nothing concrete: ask what to look for instead of guessing."""
    intro = _pick(
        [
            "С удовольствием! Подскажите только, что поменять или уточнить — и я сразу подберу.",
            "Хорошо! Уточните, пожалуйста, что именно поискать.",
        ],
        query,
        "clarify",
    )
    closing = "Например: цвет и сладость, бюджет («до 2000»), страну или сорт, блюдо («к утке») или повод."
    return SommelierResponse(response_type="informational", intro=intro, closing=closing)


def greeting(query: str) -> SommelierResponse:
    intro = _pick(
        [
            "Здравствуйте! Я винный сомелье нашего магазина и помогу выбрать вино к ужину, на подарок или под настроение.",
            "Добрый день! Подберу вино из нашего каталога: по цвету и сладости, к блюду, по поводу или в рамках бюджета.",
            "Привет! Я помогаю выбрать вино — расскажите, что за повод, и я предложу пару-тройку бутылок из каталога.",
        ],
        query,
        "greeting",
    )
    closing = _pick(
        [
            "Что будем искать: вино к ужину, на праздник или просто на вечер?",
            "Какой повод и на какой бюджет ориентируемся?",
            "Красное, белое, розовое или игристое — с чего начнём?",
        ],
        query,
        "greeting-closing",
    )
    return SommelierResponse(response_type="informational", intro=intro, closing=closing)


def thanks(query: str) -> SommelierResponse:
    intro = _pick(
        [
            "Пожалуйста! Приятного вечера и хорошего вина.",
            "Всегда пожалуйста, обращайтесь!",
            "Рады помочь! Надеюсь, вино понравится.",
        ],
        query,
        "thanks",
    )
    closing = _pick(
        [
            "Если захочется подобрать что-то ещё — просто напишите.",
            "Понадобится вино к другому случаю — я здесь.",
        ],
        query,
        "thanks-closing",
    )
    return SommelierResponse(response_type="informational", intro=intro, closing=closing)


def help_answer(query: str) -> SommelierResponse:
    intro = (
        "Я помогаю выбрать вино из каталога нашего магазина. Напишите, что ищете: цвет и сладость, бюджет "
        "(«до 2000»), страну или сорт, блюдо («к стейку») или повод («на летний вечер», «в подарок»), "
        "а после ответа можно попросить «подешевле», «а белое?» или «ещё»."
    )
    closing = _pick(
        [
            "Ещё могу объяснить винные термины — например, что такое танины или терруар. С чего начнём?",
            "Могу и просто рассказать о вине: что такое декантация, как хранить бутылки. Что вам интересно?",
        ],
        query,
        "help",
    )
    return SommelierResponse(response_type="informational", intro=intro, closing=closing)


_INFO_CLOSINGS = {
    "tannins": "Показать красные вина с мягкими танинами?",
    "acidity": "Подобрать свежее вино с яркой кислотностью?",
    "body": "Подобрать для примера пару лёгких вин?",
    "brut": "Подобрать хороший брют?",
    "sweetness": "Показать для сравнения пару полусладких вин?",
    "serving_temperature": "Подобрать вино к ближайшему ужину?",
    "oak": "Показать вина с выдержкой в дубе?",
    "traditional_method": "Показать игристые, сделанные классическим методом?",
    "champagne": "Подобрать игристое к празднику?",
    "rose": "Показать пару сухих розовых вин?",
    "pinot_noir": "Показать Пино Нуар из каталога?",
    "cabernet_sauvignon": "Подобрать Каберне Совиньон к ужину?",
    "malbec": "Показать мальбек из каталога?",
    "chardonnay": "Показать шардоне в разных стилях?",
    "riesling": "Показать рислинги из каталога?",
    "saperavi": "Показать грузинские вина из Саперави?",
}


_INFO_DEFAULT_CLOSINGS = (
    "Хотите, подберу вино, на котором это хорошо чувствуется?",
    "Подобрать вино к ближайшему ужину?",
    "Если интересно, расскажу ещё о чём-нибудь или подберу вино.",
)


def info_offer(answer_text: str) -> str | None:
    """The closing question of a glossary answer, when the answer ends with one. Each is phrased as the
    request it offers («Показать Пино Нуар из каталога?»), so a yes to it is read as that request."""
    tail = answer_text.rstrip()
    questions = [q for q in (*_INFO_CLOSINGS.values(), *_INFO_DEFAULT_CLOSINGS) if q.endswith("?")]
    return next((q for q in questions if tail.endswith(q)), None)


def informational(topic: str | None, query: str) -> SommelierResponse:
    entry = language.glossary_topic(topic) if topic else None
    if entry is None:
        intro = _pick(
            [
                "На этот вопрос у меня нет короткой справки: в офлайн-режиме я знаю основные винные термины — танины, "
                "кислотность, терруар, декантацию, выдержку в дубе и другие.",
                "Подробно ответить на это сейчас не смогу, но объясню базовые понятия: танины, тело вина, аппелласьоны, "
                "температуру подачи, хранение.",
            ],
            query,
            "info-unknown",
        )
        closing = "Спросите о термине или расскажите, к какому случаю подобрать вино."
        return SommelierResponse(response_type="informational", intro=intro, closing=closing)
    closing = _INFO_CLOSINGS.get(entry.key) or _pick(_INFO_DEFAULT_CLOSINGS, query, "info-closing")
    return SommelierResponse(response_type="informational", intro=_clip(entry.answer, MAX_INTRO), closing=closing)


def off_topic(query: str) -> SommelierResponse:
    intro = _pick(
        [
            "Я винный сомелье и разбираюсь только в вине, так что с этим вопросом помочь не смогу.",
            "С этим, увы, не помогу: я здесь, чтобы подбирать вино и рассказывать о нём.",
            "Это немного не по моей части — я специализируюсь на вине из нашего каталога.",
        ],
        query,
        "off",
    )
    closing = _pick(
        [
            "Зато могу подобрать вино к ужину, на подарок или под настроение — что ищете?",
            "Давайте лучше подберём вино: какой повод?",
            "Если нужно вино к столу или в подарок — расскажите, подберу.",
        ],
        query,
        "off-closing",
    )
    return SommelierResponse(response_type="off_topic", guard_type="off_topic", intro=intro, closing=closing)


def tool_error(query: str) -> SommelierResponse:
    intro = _pick(
        [
            "Простите, сейчас не получается заглянуть в каталог: поиск вин временно недоступен.",
            "Извините, каталог вин сейчас не отвечает, и я не хочу советовать наугад.",
        ],
        query,
        "error",
    )
    return SommelierResponse(
        response_type="informational",
        intro=intro,
        closing="Попробуйте, пожалуйста, повторить запрос через минуту.",
    )
