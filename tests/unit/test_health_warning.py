"""The health warning: in the closing message of every answer that shows wine, configurable, switchable off."""

from __future__ import annotations

import pytest
from sommelier.domain.answer import SommelierResponse, WineRecommendation
from sommelier.settings import DEFAULT_HEALTH_WARNING, load_settings
from sommelier.telegram.render import render_answer

from tests.wines import as_wine

WINE = as_wine(name="Malbec", producer="Luigi Bosca", price_rub=2490)


def response(wines: bool) -> SommelierResponse:
    return SommelierResponse(
        response_type="recommendation" if wines else "informational",
        intro="Вот:",
        wines=[WineRecommendation(wine_name="Malbec", wine_id=WINE.id, description="Сочное.")] if wines else [],
        closing="Подобрать ещё?",
    )


def health_warning(**environ: str) -> str | None:
    return load_settings(environ).shop.health_warning


def test_default_text_when_unset():
    assert health_warning() == DEFAULT_HEALTH_WARNING == "Чрезмерное употребление алкоголя вредит вашему здоровью"


@pytest.mark.parametrize(
    ("raw", "expected"), [("", None), ("   ", None), ("  Пейте  ответственно ", "Пейте ответственно")]
)
def test_configured_or_switched_off(raw, expected):
    assert health_warning(SOMMELIER_HEALTH_WARNING=raw) == expected


def test_warning_ends_the_closing_message_of_a_recommendation():
    parts = render_answer(response(True), {WINE.id: WINE}, "42", footer=DEFAULT_HEALTH_WARNING)
    closing = parts[-1]
    assert closing.plain == f"Подобрать ещё?\n\n{DEFAULT_HEALTH_WARNING}"
    assert closing.reply_markup is not None
    assert sum(DEFAULT_HEALTH_WARNING in p.plain for p in parts) == 1


def test_no_warning_without_wine():
    parts = render_answer(response(False), {}, "42", footer=DEFAULT_HEALTH_WARNING)
    assert all(DEFAULT_HEALTH_WARNING not in p.plain for p in parts)
    # A recommendation whose wine is not in the catalogue shows no wine either.
    parts = render_answer(response(True), {}, "42", footer=DEFAULT_HEALTH_WARNING)
    assert all(DEFAULT_HEALTH_WARNING not in p.plain for p in parts)
