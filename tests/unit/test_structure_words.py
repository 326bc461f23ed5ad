"""A wine's structure in mood words (sommelier.language.structure, language/data/structure.json), and the text
its embedding is computed from."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from sommelier import language
from sommelier.domain.records import WineRecord
from sommelier.language.structure import main_grape_is_rare, structure_words
from sommelier.language.vocabulary import DATA_FILES

SHIPPED = Path(__file__).resolve().parents[2] / "data" / "catalog" / "wines.json"
BASE = {"wine_type": "red", "sweetness": "dry", "price_rub": 2000, "grape_varieties": ["Мерло"]}


def said(**wine) -> str:
    return " | ".join(structure_words({**BASE, **wine}))


def test_an_ungraded_wine_gets_no_structural_words():
    assert said(body=None, tannins=None, acidity=None) == ""


def test_graded_body_tannins_and_acidity_speak_as_a_sommelier_would():
    light = said(body=2, tannins=1, acidity=4)
    assert "лёгкое" in light and "свежее" in light and "охлажд" in light and "насыщенное" not in light
    full = said(body=5, tannins=4, acidity=3)
    assert "насыщенное" in full and "мощное" in full and "согревающее" in full and "с плотными танинами" in full
    assert "лёгкое" not in full and "свежее" not in full
    soft = said(body=3, tannins=2, acidity=3)
    assert "бархатистое" in soft and "с мягкими танинами" in soft and "плотными" not in soft


def test_a_grade_of_one_attribute_says_nothing_about_another():
    only_acidity = said(body=None, tannins=None, acidity=5)
    assert only_acidity == "свежее"  # no body: not «лёгкое», not «освежающее», not «бархатистое»


def test_style_sweetness_rare_grapes_and_price():
    assert "для праздника" in said(wine_type="sparkling")
    assert "на аперитив" in said(wine_type="sparkling") and "на аперитив" not in said(
        wine_type="sparkling", sweetness="sweet"
    )
    assert "десертное" in said(wine_type="white", sweetness="sweet")
    assert "необычное" in said(grape_varieties=["Красностоп 100%"]) and "необычное" not in said()
    levels = language.data("budget.json")["levels"]  # the prices the reader gives «недорогое», «премиальное»
    cheap, premium = levels["cheap"]["max"], levels["premium"]["min"]
    assert "на каждый день" in said(price_rub=cheap) and "на каждый день" not in said(price_rub=cheap + 1)
    assert "для подарка" in said(price_rub=premium) and "для подарка" not in said(price_rub=premium - 1)


@pytest.mark.parametrize(
    ("grapes", "rare"),
    [
        (["Цимлянский черный 70%", "Плечистик 30%"], True),  # the main grape, in a shop's spelling
        (["Темпранильо 90%", "Грасиано 7%", "Масуэло 3%"], False),  # a rare grape in a small share is not
        (["Мерло 20%", "Пинотаж 80%"], True),  # the largest share, wherever it is listed
        (["Пинотаж", "Мерло"], True),  # no shares: the first listed
        (["Неизвестный сорт"], False),
        ([], False),
    ],
)
def test_the_main_grape_decides_rarity(grapes, rare):
    assert main_grape_is_rare(grapes) is rare


def test_every_rare_grape_is_a_known_grape_and_the_rules_name_known_conditions():
    rare = [g for g in language.grapes() if g.rare]
    assert len(rare) >= 10 and not any(g.name in ("Мерло", "Шардоне", "Каберне Совиньон") for g in rare)
    conditions = {key for rule in language.data("structure.json")["rules"] for key in rule["when"]}
    known = {"body", "tannins", "acidity", "price_rub", "price_level", "wine_type", "sweetness", "main_grape_rare"}
    assert conditions <= known
    assert "structure.json" in DATA_FILES  # its words count as the layer's vocabulary


def test_the_embedded_text_carries_the_structure_words_and_the_prose():
    wine = json.loads(SHIPPED.read_text("utf-8"))["wines"][0]
    record = WineRecord.model_validate({k: v for k, v in wine.items() if k != "image"})
    text = record.embedding_text()
    for words in structure_words(record.model_dump()):
        assert words in text
    assert record.name in text and record.description[:100] in text
    ungraded = record.model_copy(update={"body": None, "tannins": None, "acidity": None, "price_rub": Decimal(2000)})
    assert all(w not in ungraded.embedding_text() for w in ("лёгкое", "насыщенное", "свежее", "бархатистое"))
