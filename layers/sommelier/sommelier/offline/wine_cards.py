"""A wine's card: what the wine is (its style, grapes, region, body, tannins and acidity), why it fits the
request (the dish, the mood, the price) and a tasting note no other card of the answer says."""

from __future__ import annotations

from typing import Any

from sommelier import language
from sommelier.domain.answer import MAX_DESCRIPTION, WineRecommendation
from sommelier.domain.wine import Wine
from sommelier.language import pairing
from sommelier.offline.intent import QueryIntent
from sommelier.offline.mood import grade, mood_reason
from sommelier.offline.request_words import food_dative, price_phrase, style_phrase
from sommelier.offline.wording import cap, clip, format_price, pick, plain, seed

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
        for sentence in (plain(s) for s in language.written_sentences(text)):  # never a fragment cut in the export
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
    why = cap("; ".join(reasons[:3])) + "." if reasons else ""

    if why in used:  # two wines with the same price and pairing: say it once per answer
        why = ""
    used.update(p for p in (identity, why) if p)
    note = _note(wine, used)
    text = " ".join(p for p in (identity, why, note) if p)
    if len(text) > MAX_DESCRIPTION:
        text = " ".join(p for p in (identity, why) if p)
    return clip(text, MAX_DESCRIPTION)


def _identity(wine: Wine, query: str, wid: str) -> str:
    style = style_phrase(wine.wine_type, wine.sweetness) or "вино"
    grapes = _grapes_phrase(list(wine.grape_varieties), seed(query, wid))
    body_words = _style_words(wine)
    templates = _IDENTITY_TEMPLATES if body_words else _IDENTITY_TEMPLATES_UNGRADED
    return pick(templates, query, wid, "identity").format(
        Style=cap(style),
        style=style,
        region=wine.region or "",
        grapes=grapes,
        Grapes=cap(grapes),
        body=body_words,
        Producer=plain(wine.producer or "") or cap(style),
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
    return pick(
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
        return pick(options, query, wid, "range")
    if has_max:
        options = [
            f"укладывается в бюджет: {price}",
            f"стоит {price} — в рамках бюджета {price_phrase(filters)}",
            f"цена {price}, бюджет соблюдён",
        ]
        return pick(options, query, wid, "budget")
    if has_min:
        options = [f"достойный уровень: {price}", f"цена {price} — вино серьёзного уровня"]
        return pick(options, query, wid, "premium")
    return pick([f"цена {price}", f"стоит {price}"], query, wid, "price")


def cards(wines: list[Wine], intent: QueryIntent, query: str) -> list[WineRecommendation]:
    used: set[str] = set()  # no sentence repeats across the cards of one answer
    return [
        WineRecommendation(wine_name=w.name.strip(), wine_id=w.id, description=describe_wine(w, intent, query, used))
        for w in wines[:3]
    ]


def wine_label(wine: Wine) -> str:
    """«Pure Malbec (Trapiche, 2024)»; a row without a producer or a year says only what it has."""
    said = [plain(wine.producer or ""), str(wine.vintage_year or "")]
    said = [s for s in said if s.strip()]
    return f"{plain(wine.name)} ({', '.join(said)})" if said else plain(wine.name)
