"""The turns where the customer's age or health comes first, in both modes and every chat kind, before any
wine is looked for (docs/shop.md): a stated age under 18 gets no wine; pregnancy, medication or a health
condition gets no medical advice and no wine pushed; an allergy gets the honest word about sulfites and a
doctor; «безалкогольное» gets only what the catalogue has. The words are data (language/data/shop_words.json).
"""

from __future__ import annotations

import re
from functools import cache

from sommelier import language
from sommelier.domain.answer import SommelierResponse
from sommelier.domain.errors import PortError
from sommelier.domain.search import SearchFilters
from sommelier.repositories.ports import CatalogRepository

ADULT_AGE = 18
_WORD_NUMBERS: dict[str, int] = language.data("shop_words.json")["age_numbers"]

MINOR = (
    "Спасибо за честность! Советовать вино я могу только тем, кому уже исполнилось 18, поэтому ничего "
    "предлагать не буду."
)
MINOR_CLOSING = "Когда исполнится 18 — буду рад помочь с выбором 🙂"
PREGNANCY = (
    "Во время беременности и кормления грудью врачи советуют не пить алкоголь совсем, и вино здесь не "
    "исключение, поэтому предлагать его я не буду. Если есть вопросы о здоровье, лучше спросить вашего врача."
)
HEALTH = (
    "Я не врач и не могу советовать, можно ли вам вино с лекарствами или при болезни: это лучше спросить "
    "вашего врача. Предлагать вино в этом случае я не буду."
)
ALLERGY = (
    "Сульфиты (диоксид серы) есть практически в любом вине: немного их образуется при брожении, а почти "
    "все виноделы добавляют их ещё и для сохранности. Поэтому обещать, что какое-то вино вам не навредит, я "
    "не могу. При аллергии или непереносимости, пожалуйста, посоветуйтесь с врачом-аллергологом, прежде чем "
    "пить вино."
)
CARE_CLOSING = "Если захотите поговорить о вине просто так — о регионах, сортах, как его подают — спрашивайте."
NO_ALCOHOL_FREE = "Безалкогольного вина в нашем каталоге сейчас нет, а советовать то, чего у нас нет, я не хочу."
NO_ALCOHOL_FREE_CLOSING = "Если нужно что-то другое — расскажите, подберу."


@cache
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(language.data("shop_words.json")[name], re.IGNORECASE)


def _has(topic: str, normalised: str) -> bool:
    return language.cues("shop_words.json", topic).search(normalised) is not None


def stated_minor(text: str) -> bool:
    """Does the message say the customer (or whom the wine is for) is under 18?"""
    normalised = language.normalize(text)
    if _pattern("minor_words").search(normalised):
        return True
    for match in _pattern("minor_age").finditer(normalised):
        value = match.group(1)
        age = int(value) if value.isdigit() else _WORD_NUMBERS.get(value, ADULT_AGE)
        if 5 <= age < ADULT_AGE:
            return True
    return False


def care_kind(text: str) -> str | None:
    """Which care turn the message is: minor, pregnancy, health, allergy, alcohol_free; None: none."""
    if stated_minor(text):
        return "minor"
    normalised = language.normalize(text)
    if _has("pregnancy", normalised):
        return "pregnancy"
    if _has("medicine", normalised) or _has("condition", normalised):
        return "health"
    if _has("allergy", normalised):
        return "allergy"
    if _has("alcohol_free", normalised):
        return "alcohol_free"
    return None


_ALCOHOL_FREE_MARK = re.compile(language.data("shop_words.json")["alcohol_free_mark"], re.IGNORECASE)


def alcohol_free_in_catalogue(catalog: CatalogRepository) -> bool:
    """Does the catalogue have a wine it calls alcohol-free? (A catalogue that cannot be read now: let the
    ordinary turn try, and say what it finds.)"""
    try:
        found = catalog.search_wines(SearchFilters(name="безалкогольное", limit=5))
    except PortError:
        return True
    return any(_ALCOHOL_FREE_MARK.search(f"{w.name} {w.description or ''}") for w in found.wines)


def care_answer(kind: str) -> SommelierResponse:
    """The answer of a care turn (an «alcohol_free» one when the catalogue has none)."""
    intro, closing = {
        "minor": (MINOR, MINOR_CLOSING),
        "pregnancy": (PREGNANCY, CARE_CLOSING),
        "health": (HEALTH, CARE_CLOSING),
        "allergy": (ALLERGY, CARE_CLOSING),
        "alcohol_free": (NO_ALCOHOL_FREE, NO_ALCOHOL_FREE_CLOSING),
    }[kind]
    return SommelierResponse(response_type="informational", intro=intro, closing=closing)
