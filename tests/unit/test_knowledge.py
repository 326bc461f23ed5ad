"""Wine knowledge as data (language/knowledge.py, language/data/appellations.json, grapes.json,
legal_words.json): sizes, internal consistency, and readings of real label words."""

from __future__ import annotations

import pytest
from sommelier import language


def test_the_tables_are_as_large_as_a_shop_needs():
    assert len(language.appellations()) >= 400
    structured = [g for g in language.grapes() if g.body and g.acidity and g.tannin]
    assert len(structured) >= 250
    levels = {a.level for a in language.appellations()}
    assert {"AOC", "DOCG", "DO", "AVA", "ЗНМП"} <= levels


def test_every_principal_grape_of_an_appellation_is_a_known_grape():
    unknown = {(a.name, g) for a in language.appellations() for g in a.grapes if language.grape(g, fuzzy=False) is None}
    assert not unknown


def test_structure_words_come_from_the_documented_scales():
    for grape in language.grapes():
        assert grape.body in {None, "light", "medium", "full"}
        assert grape.acidity in {None, "low", "medium", "high"}
        assert grape.tannin in {None, "none", "low", "medium", "high"}
        assert grape.colour in {"red", "white"}


@pytest.mark.parametrize(
    ("text", "name", "country"),
    [
        ("Вино сортовое ординарное сухое белое «Шабли Премье Крю Вайон»", "Шабли Премье Крю", "FR"),
        ("Chateau Latour AOC Pauillac", "Пойяк", "FR"),
        ("Кьянти Классико Ризерва", "Кьянти Классико", "IT"),
        ("Barolo DOCG 2018", "Бароло", "IT"),
        ("Médoc", "Медок", "FR"),
        ("Rioja Reserva", "Риоха", "ES"),
        ("вино Кубани", "Кубань", "RU"),
    ],
)
def test_an_appellation_is_found_in_either_script_and_any_case(text, name, country):
    found = language.appellation(text)
    assert found is not None and found.name == name and found.country == country


def test_a_style_word_of_russian_labels_is_not_a_place():
    # Russian sparkling and fortified wines are labelled «шампанское», «портвейн» by law and custom.
    places = {
        a.name
        for text in ("Российское шампанское брют", "Портвейн 777 белый")
        for _, a in language.appellations_in(text)
    }
    assert not places & {"Шампань", "Порто"}
    assert {a.country for _, a in language.appellations_in("Российское шампанское брют")} <= {"RU"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Вино сортовое ординарное сухое белое",
            {"is_wine": True, "colour": "white", "sweetness": "dry", "varietal": True, "aged": False},
        ),
        ("Вино игристое брют розовое", {"is_wine": True, "sparkling": True, "sweetness": "brut", "colour": "rose"}),
        ("Шампанское полусладкое", {"is_wine": True, "sparkling": True, "sweetness": "semi-sweet"}),
        ("Кава брют натюр", {"is_wine": True, "sweetness": "brut_nature"}),
        ("Вино ликёрное крепкое", {"is_wine": True, "fortified": True}),
        ("Портвейн красный", {"is_wine": True, "fortified": True, "colour": "red"}),
        ("Виски шотландский купажированный 40%", {"is_wine": False}),
        ("Пиво светлое нефильтрованное", {"is_wine": False}),
        ("Напиток винный газированный", {"is_wine": False}),
        ("Вино безалкогольное красное полусладкое", {"is_wine": False}),
        ("Сыр пармезан 200 г", {"is_wine": False}),
        ("Набор: вино и два бокала", {"is_wine": None}),
    ],
)
def test_a_legal_name_says_what_the_product_is(text, expected):
    reading = language.legal_reading(text)
    assert {key: getattr(reading, key) for key in expected} == expected


def test_a_wine_name_with_no_legal_words_says_nothing():
    assert language.legal_reading("Шато Марго 2015") == language.LegalReading()
    assert not language.non_wine("Шато Марго 2015")
