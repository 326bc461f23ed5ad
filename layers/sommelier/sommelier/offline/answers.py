"""The answers about wines: a recommendation (its intro, up to three cards and a closing offer), an honest
"nothing fits" with the one condition to relax, and a wine asked for by name, found, absent or unknown."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sommelier.domain.answer import MAX_CLOSING, MAX_INTRO, SommelierResponse
from sommelier.domain.wine import SWEETNESS_PLURAL_RU, Wine
from sommelier.language import matching
from sommelier.offline.closings import Offer, closing_question
from sommelier.offline.intent import QueryIntent
from sommelier.offline.intros import intro_for, relaxed_sentence
from sommelier.offline.request_words import country_genitive, genitive_phrase, request_summary
from sommelier.offline.wine_cards import cards, wine_label
from sommelier.offline.wording import clip, count_phrase, format_price, pick, plain


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
    items = cards([w for i, w in enumerate(first) if names[i] not in names[:i]], intent, query)
    intro = intro_for(intent, len(items), query)
    if relaxed is not None:
        intro = relaxed_sentence(relaxed[0], intent, relaxed[1], query) + " " + intro
    return SommelierResponse(
        response_type="recommendation",
        intro=clip(intro, MAX_INTRO),
        wines=items,
        closing=clip(closing_question(intent, query, ask, can_offer), MAX_CLOSING),
    )


def nothing_found(
    intent: QueryIntent, *, query: str, blocker: str | None = None, nearest_price: float | None = None
) -> SommelierResponse:
    """Honest "nothing fits". `blocker` is a filter whose removal does find wines (the responder probes for it)."""
    f = intent.filters
    summary = request_summary(intent)
    if intent.more:
        intro = pick(
            [
                f"Больше вин по этому запросу ({summary}) в каталоге нет — вы уже видели всё, что подходит.",
                f"Похоже, по запросу «{summary}» вы уже видели всё, что есть в каталоге.",
            ],
            query,
            "none-more",
        )
    else:
        genitive = genitive_phrase(summary)
        intro = pick(
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
        response_type="informational", intro=clip(intro, MAX_INTRO), closing=clip(suggestion, MAX_CLOSING)
    )


def _wines_answer(intro: str, wines: list[Wine], intent: QueryIntent, query: str) -> SommelierResponse:
    """An answer about a wine asked for by name: the intro, the wines' cards and the usual closing offer."""
    return SommelierResponse(
        response_type="recommendation",
        intro=clip(intro, MAX_INTRO),
        wines=cards(wines, intent, query),
        closing=clip(closing_question(intent, query), MAX_CLOSING),
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
            f"{plain(name)} в нашем каталоге есть, но не под ваши условия ({request_summary(unmet)}): "
            f"{wine_label(wines[0])}{price}."
        )
    elif intent.wine_vintage and intent.wine_vintage not in years and years:
        other = ", ".join(str(y) for y in years)
        intro = f"{plain(name)} урожая {intent.wine_vintage} года в каталоге нет, но есть другой урожай — {other}."
    elif len(wines) == 1:
        intro = f"Да, {plain(name)} в нашем каталоге есть: {wine_label(wines[0])}."
    else:
        intro = f"Да, по названию «{plain(name)}» в каталоге есть {count_phrase(len(wines[:3]))} — вот они."
    return _wines_answer(intro, wines, intent, query)


def named_absent(intent: QueryIntent, wines: list[Wine], *, query: str, name: str) -> SommelierResponse:
    """The named wine is not in the catalogue: say so, then the nearest wines by what its name tells
    (`intent.filters` are the attributes that found them)."""
    summary = request_summary(intent)
    lead = pick(
        [
            f"{plain(name)} в нашем каталоге нет, и выдавать за него другое вино я не стану.",
            f"Честно скажу: {plain(name)} у нас в каталоге нет.",
        ],
        query,
        "absent",
    )
    intro = f"{lead} Ближе всего по стилю — {summary}: {count_phrase(len(wines[:3]))} из того, что есть."
    return _wines_answer(intro, wines, intent, query)


def named_unknown(name: str, *, query: str) -> SommelierResponse:
    """A wine named that the catalogue lacks and whose name tells nothing: say so and ask what to look for."""
    intro = pick(
        [
            f"{plain(name)} в нашем каталоге нет — придумывать его я не буду.",
            f"Вина «{plain(name)}» в нашем каталоге не нашлось.",
        ],
        query,
        "unknown-name",
    )
    closing = (
        "Расскажите, что вам в нём нравится — цвет, сорт, страна или бюджет, — и я предложу похожие вина из каталога."
    )
    return SommelierResponse(response_type="informational", intro=clip(intro, MAX_INTRO), closing=closing)
