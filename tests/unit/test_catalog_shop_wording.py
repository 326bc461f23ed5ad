"""A shop's own wording in a catalogue row: Russian type and sweetness words, grape cells with commas."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sommelier.catalog.models import WineRecord

ROW = {
    "name": "Crianza",
    "producer": "Bodegas Test",
    "country": "Испания",
    "grape_varieties": "Темпранильо 85%, Гарнача 15%",
    "wine_type": "Красное",
    "sweetness": "сухое",
    "body": 3,
    "tannins": 3,
    "acidity": 3,
    "price_rub": "1 590,00",
    "description": "Риоха.",
}


@pytest.mark.parametrize(
    ("wine_type", "sweetness", "expected"),
    [
        ("Красное", "Сухое", ("red", "dry")),
        ("белое", "полусладкое", ("white", "semi_sweet")),
        ("игристое", "брют", ("sparkling", "dry")),
        ("розовое", "полусухое", ("rose", "semi_dry")),
        ("white", "semi_dry", ("white", "semi_dry")),
    ],
)
def test_type_and_sweetness_in_the_shops_words(wine_type, sweetness, expected):
    record = WineRecord.model_validate({**ROW, "wine_type": wine_type, "sweetness": sweetness})
    assert (record.wine_type, record.sweetness) == expected


def test_a_word_the_layer_does_not_know_is_still_an_error_naming_the_value():
    with pytest.raises(ValidationError) as caught:
        WineRecord.model_validate({**ROW, "wine_type": "оранжевое"})
    assert "оранжевое" in str(caught.value)


@pytest.mark.parametrize(
    ("cell", "grapes"),
    [
        ("Темпранильо 85%, Гарнача 15%", ["Темпранильо 85%", "Гарнача 15%"]),
        ("Мерло 83,5%; Каберне Фран 16,5%", ["Мерло 83,5%", "Каберне Фран 16,5%"]),
        (["Сира 70%, Гренаш 30%"], ["Сира 70%", "Гренаш 30%"]),
    ],
)
def test_a_grape_cell_splits_on_commas_and_semicolons_but_not_inside_a_share(cell, grapes):
    assert WineRecord.model_validate({**ROW, "grape_varieties": cell}).grape_varieties == grapes


def test_pairings_split_on_semicolons_only():
    record = WineRecord.model_validate({**ROW, "food_pairings": "Закуски, салаты и антипасто; Дичь"})
    assert record.food_pairings == ["Закуски, салаты и антипасто", "Дичь"]
