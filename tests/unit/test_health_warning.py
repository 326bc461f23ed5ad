"""The health warning: in the closing message of every answer that shows wine, configurable, switchable off."""

from __future__ import annotations

import uuid

import pytest
from sommelier.domain.answer import SommelierResponse, WineRecommendation
from sommelier.shop.health import DEFAULT_HEALTH_WARNING, health_warning
from sommelier.telegram.render import render_answer

WINE = {"id": str(uuid.uuid4()), "name": "Malbec", "producer": "Luigi Bosca", "price_rub": 2490, "image_key": None}


def response(wines: bool) -> SommelierResponse:
    return SommelierResponse(
        response_type="recommendation" if wines else "informational",
        intro="Вот:",
        wines=[WineRecommendation(wine_name="Malbec", wine_id=WINE["id"], description="Сочное.")] if wines else [],
        closing="Подобрать ещё?",
    )


def test_default_text_when_unset(monkeypatch):
    monkeypatch.delenv("SOMMELIER_HEALTH_WARNING", raising=False)
    assert health_warning() == DEFAULT_HEALTH_WARNING == "Чрезмерное употребление алкоголя вредит вашему здоровью"


@pytest.mark.parametrize(
    ("raw", "expected"), [("", None), ("   ", None), ("  Пейте  ответственно ", "Пейте ответственно")]
)
def test_configured_or_switched_off(monkeypatch, raw, expected):
    monkeypatch.setenv("SOMMELIER_HEALTH_WARNING", raw)
    assert health_warning() == expected


def test_warning_ends_the_closing_message_of_a_recommendation():
    parts = render_answer(response(True), {WINE["id"]: WINE}, "42", footer=DEFAULT_HEALTH_WARNING)
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
