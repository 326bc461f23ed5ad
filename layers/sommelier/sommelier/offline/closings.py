"""The closing questions of an answer and what a yes to each does (`Offer`): the responder reads the offer back
from the saved answer text (`pending_offer`), so each sentence is written here once and is its own marker."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sommelier.offline.intent import QueryIntent
from sommelier.offline.wording import pick


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


def closing_question(
    intent: QueryIntent, query: str, ask: str | None = None, can_offer: Callable[[Offer], bool] | None = None
) -> str:
    """The closing question: one of the offers that fit the request, and (with `can_offer`, the responder's
    check against the catalogue) only one the catalogue can keep."""
    if ask in _ASK_AGAIN:
        return _ASK_AGAIN[ask]
    offers = [o for o in _closing_offers(intent, query) if can_offer is None or can_offer(_CLOSING[o])]
    return pick(offers, query, "closing") if offers else NO_OFFER_CLOSING


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
        offers.append(pick(["Поискать варианты подешевле?", "Показать что-нибудь посолиднее?"], query, "price"))
    elif f.get("price_min") is None:
        offers.append("Есть ли бюджет, в который нужно уложиться?")
    if not f.get("food_pairing"):
        offers.append("К какому блюду будете подавать? Подберу точнее.")
    else:
        offers.append("Показать ещё варианты к этому блюду?")
    offers.append("Какое из них вам ближе — или показать ещё варианты?")
    return offers


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
