"""A shop's own wording in a catalogue row: Russian type and sweetness words, grape cells with commas."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sommelier.domain.records import WineRecord

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


@pytest.mark.parametrize(
    ("wine_type", "sweetness", "expected"),
    [
        ("Белое", "Брют", ("sparkling", "dry")),  # only a sparkling wine is brut
        ("Розовое", "экстра брют", ("sparkling", "dry")),
        ("Игристое", "Брют натюр", ("sparkling", "dry")),
        ("Игристое", "Extra Dry", ("sparkling", "semi_dry")),
        ("Белое", "Сухое", ("white", "dry")),
    ],
)
def test_a_sugar_column_in_sparkling_words(wine_type, sweetness, expected):
    record = WineRecord.model_validate({**ROW, "wine_type": wine_type, "sweetness": sweetness})
    assert (record.wine_type, record.sweetness) == expected


@pytest.mark.parametrize("cell", ["Оранжевое сухое", "Красное белое", "Креплёное", "Вино"])
def test_a_style_cell_with_an_unknown_word_or_two_colours_is_an_error_naming_it(cell):
    row = {k: v for k, v in ROW.items() if k != "sweetness"}
    with pytest.raises(ValidationError) as caught:
        WineRecord.model_validate({**row, "wine_type": cell})
    assert cell in str(caught.value)


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
        ("Каберне Совиньон/Мерло", ["Каберне Совиньон", "Мерло"]),
        ("Каберне Совиньон + Мерло & Каберне Фран", ["Каберне Совиньон", "Мерло", "Каберне Фран"]),
    ],
)
def test_a_grape_cell_splits_on_commas_and_semicolons_but_not_inside_a_share(cell, grapes):
    assert WineRecord.model_validate({**ROW, "grape_varieties": cell}).grape_varieties == grapes


def test_pairings_split_on_semicolons_only():
    record = WineRecord.model_validate({**ROW, "food_pairings": "Закуски, салаты и антипасто; Дичь"})
    assert record.food_pairings == ["Закуски, салаты и антипасто", "Дичь"]


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("Красное сухое", ("red", "dry")),
        ("Игристое брют", ("sparkling", "dry")),
        ("полусладкое белое", ("white", "semi_sweet")),
        ("Игристое белое брют", ("sparkling", "dry")),
        ("Вино красное сухое", ("red", "dry")),
        ("Розовое, полусухое", ("rose", "semi_dry")),
        ("Игристое розовое экстра брют", ("sparkling", "dry")),
        ("Белое игристое деми-сек", ("sparkling", "semi_sweet")),
        ("Prosecco Extra Dry", ("sparkling", "semi_dry")),
    ],
)
def test_type_and_sweetness_in_one_cell(cell, expected):
    row = {k: v for k, v in ROW.items() if k != "sweetness"}
    record = WineRecord.model_validate({**row, "wine_type": cell})
    assert (record.wine_type, record.sweetness) == expected


def test_a_shops_own_column_names_are_read(tmp_path):
    from sommelier.catalog.importer import read_catalog, validate_rows

    path = tmp_path / "export.csv"
    path.write_text(
        "\ufeffАртикул;Наименование;Производитель;Страна;Год урожая;Сорт винограда;Цвет;Цена, руб.;Описание;"
        "Гастрономия;Объём, л;name\n"
        "A-1;Crianza;Bodegas Test;Испания;2020;Темпранильо 85%, Гарнача 15%;Красное сухое;1 590;Риоха.;"
        '"Красное мясо; Паста и пицца";0,75;\n',
        encoding="utf-8",
    )
    [record] = validate_rows(read_catalog(path), tmp_path)
    assert (record.sku, record.name, record.producer, record.vintage_year) == ("A-1", "Crianza", "Bodegas Test", 2020)
    assert (record.wine_type, record.sweetness, str(record.price_rub)) == ("red", "dry", "1590")
    assert record.grape_varieties == ["Темпранильо 85%", "Гарнача 15%"]
    assert record.food_pairings == ["Красное мясо", "Паста и пицца"]
    own = record.extra.pop("shop_columns")  # the shop's headers, kept for an export in its own columns
    assert (own["sku"], own["name"], own["price_rub"], own["wine_type"]) == (
        "Артикул",
        "Наименование",
        "Цена, руб.",
        "Цвет",
    )
    assert record.extra == {"Объём, л": "0,75"}  # a column the catalogue does not model is kept as written


def test_a_field_given_under_its_own_name_wins_over_a_shop_column():
    from sommelier.catalog.shop_rows import canonical_keys

    item = canonical_keys({"name": "Reserva", "Наименование": "Резерва", "Цвет": "красное"})
    assert item == {"name": "Reserva", "Наименование": "Резерва", "wine_type": "красное"}


@pytest.mark.parametrize(
    ("written", "price"),
    [
        ("1 590,00", "1590.00"),
        ("4\u202f990 ₽", "4990"),
        ("4\u00a0990 руб.", "4990"),
        ("1290.50", "1290.50"),
        ("1890р", "1890"),
        ("1 890 р.", "1890"),
        ("1890 RUB", "1890"),
        ("2 490,00 рублей", "2490.00"),
        ("₽ 990", "990"),
    ],
)
def test_prices_as_shops_write_them(written, price):
    assert str(WineRecord.model_validate({**ROW, "price_rub": written}).price_rub) == price


@pytest.mark.parametrize(
    ("written", "year"), [("2019", 2019), ("2019 г.", 2019), ("2019г", 2019), ("2019 год", 2019), ("б/г", None)]
)
def test_vintages_as_shops_write_them(written, year):
    assert WineRecord.model_validate({**ROW, "vintage_year": written}).vintage_year == year


def test_a_vintage_with_other_text_is_still_an_error():
    with pytest.raises(ValidationError):
        WineRecord.model_validate({**ROW, "vintage_year": "урожай 2019"})


@pytest.mark.parametrize("written", ["по запросу", "1890 долларов", "р.", "руб1890руб", "-1890 р.", "0 ₽"])
def test_a_price_that_is_not_an_amount_in_roubles_is_an_error_naming_it(written):
    with pytest.raises(ValidationError) as caught:
        WineRecord.model_validate({**ROW, "price_rub": written})
    assert "price_rub" in str(caught.value)


@pytest.mark.parametrize(
    ("written", "code"),
    [("Великобритания", "GB"), ("Англия", "GB"), ("Чешская Республика", "CZ"), ("Кипр", "CY"), ("РФ", "RU")],
)
def test_countries_a_russian_shop_sells_are_known_by_any_of_their_names(written, code):
    from sommelier.language.matching import normalised_columns

    assert normalised_columns(written, ["Шардоне"], [])["country_code"] == code
