"""The answers the agent words itself, when the model's cannot be used: one made from what the tools found
(the retries ran out, or the time did), and the apology when nothing can answer at all.
"""

from __future__ import annotations

from sommelier.domain.answer import SommelierResponse, WineRecommendation
from sommelier.domain.wine import Wine


def degraded_response(found: dict[str, Wine]) -> SommelierResponse:
    """Retries ran out: answer from what the tools found, or say honestly that nothing fits."""
    ranked = sorted(found.values(), key=lambda w: -(w.similarity_score or 1.0))[:3]
    if not ranked:
        return SommelierResponse(
            response_type="informational",
            intro="К сожалению, сейчас не получилось подобрать вино по вашему запросу.",
            closing="Попробуете описать, что хочется, чуть иначе — например, тип вина, бюджет или блюдо?",
        )
    wines = [catalogue_recommendation(w) for w in ranked]
    return SommelierResponse(
        response_type="recommendation",
        intro="Вот что я нашёл в каталоге по вашему запросу.",
        wines=wines,
        closing="Рассказать подробнее о каком-нибудь из них или подобрать другие варианты?",
    )


def catalogue_recommendation(wine: Wine) -> WineRecommendation:
    """A wine recommended in the catalogue's own words (no model wrote about it)."""
    return WineRecommendation(wine_id=wine.id, wine_name=wine.name, description=_short_description(wine))


def _short_description(wine: Wine) -> str:
    price = f"{int(wine.price_rub):,}".replace(",", " ")
    text = f"{wine.producer}, {wine.region}. {wine.description} Цена: {price} ₽."
    return text if len(text) <= 780 else text[:777].rsplit(" ", 1)[0] + "…"


def apology_response() -> SommelierResponse:
    """The last link of the chain: the offline responder failed too."""
    return SommelierResponse(
        response_type="informational",
        intro="Простите, у меня сейчас технические трудности и я не могу заглянуть в каталог.",
        closing="Напишите мне, пожалуйста, через пару минут — я обязательно подберу вино.",
    )
