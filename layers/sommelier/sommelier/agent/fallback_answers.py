"""The answers the agent words itself, when the model's cannot be used: one made from what the tools found
(the retries ran out, or the time did), and the apology when nothing can answer at all.
"""

from __future__ import annotations

from sommelier.agent.catalogue_rows import card_facts
from sommelier.agent.refs import ref_of
from sommelier.domain.answer import SommelierResponse, WineRecommendation
from sommelier.domain.wine import SWEETNESS_RU, WINE_TYPE_RU, Wine


def degraded_response(found: dict[str, Wine]) -> SommelierResponse:
    """Retries ran out: answer from what the tools found, or say honestly that nothing fits."""
    ranked = sorted(found.values(), key=lambda w: -(w.similarity_score or 1.0))[:3]
    if not ranked:
        return SommelierResponse(
            response_type="informational",
            intro="К сожалению, сейчас не получилось подобрать вино по вашему запросу.",
            closing="Попробуете описать, что хочется, чуть иначе — например, тип вина, бюджет или блюдо?",
        )
    wines = [catalogue_recommendation(w, ref_of(i)) for i, w in enumerate(ranked)]
    return SommelierResponse(
        response_type="recommendation",
        intro="Вот что я нашёл в каталоге по вашему запросу.",
        wines=wines,
        closing="Рассказать подробнее о каком-нибудь из них или подобрать другие варианты?",
    )


def catalogue_recommendation(wine: Wine, ref: str | None = None) -> WineRecommendation:
    """A wine recommended in the catalogue's own words (no model wrote about it)."""
    return WineRecommendation(wine_id=wine.id, wine_name=wine.name, description=_short_description(wine)).model_copy(
        update={"facts": card_facts(wine), "ref": ref}
    )


def _short_description(wine: Wine) -> str:
    """The card's line above the catalogue's text: the wine's style and place, from the catalogue only (the
    name, producer, vintage, region and price are the card's header; grapes and notes follow, `card_facts`)."""
    style = " ".join(w for w in (WINE_TYPE_RU.get(wine.wine_type), SWEETNESS_RU.get(wine.sweetness)) if w)
    style = style[:1].upper() + style[1:] if style else "Вино"
    return f"{style} из каталога магазина." if not wine.region else f"{style}, {wine.region}."


def apology_response() -> SommelierResponse:
    """The last link of the chain: the offline responder failed too."""
    return SommelierResponse(
        response_type="informational",
        intro="Простите, у меня сейчас технические трудности и я не могу заглянуть в каталог.",
        closing="Напишите мне, пожалуйста, через пару минут — я обязательно подберу вино.",
    )
