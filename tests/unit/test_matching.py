"""The matching rules of docs/matching.md, as pure functions (sommelier.tools.matching, sommelier.text)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sommelier.text import escape_like, normalize, stem, stems, words
from sommelier.tools import matching
from sommelier.tools.arguments import ArgumentError, optional_price, search_filters, semantic_request

CATALOG = Path(__file__).resolve().parents[2] / "data" / "catalog" / "wines.json"


# ---------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("Лёгкое", "легкое"),
        ("  КАБЕРНЕ   Совиньон ", "каберне совиньон"),
        ("Трентино-Альто-Адидже", "трентино альто адидже"),
        ("semi_dry", "semi dry"),
        ("Ёлка\tи\nЁж", "елка и еж"),
        ("", ""),
    ],
)
def test_normalize(raw, expected):
    assert normalize(raw) == expected


def test_words_keep_letters_and_digits_only():
    assert words("Вино 2020 года, 🍷 «Шабли»!") == ["вино", "2020", "года", "шабли"]
    assert words("'; DROP TABLE wines; --") == ["drop", "table", "wines"]
    assert words("_%") == []


@pytest.mark.parametrize(
    "word,expected",
    [
        ("стейку", "стейк"),
        ("стейк", "стейк"),
        ("рыбе", "рыб"),
        ("рыба", "рыб"),
        ("мясо", "мяс"),
        ("мясу", "мяс"),
        ("летнего", "летн"),
        ("устрицам", "устриц"),
        ("шашлыку", "шашлык"),
        ("сыр", "сыр"),
        ("фуа", "фуа"),
        ("steak", "steak"),
        ("2020", "2020"),
        ("", ""),
    ],
)
def test_stem(word, expected):
    assert stem(word) == expected


def test_stem_keeps_at_least_three_letters():
    assert stem("еда") == "еда" and stem("утка") == "утк" and stem("уха") == "уха"
    assert stems("к стейку") == ["к", "стейк"]


def test_escape_like():
    assert escape_like("100%_\\") == "100\\%\\_\\\\"
    assert escape_like("тоскана") == "тоскана"


# ---------------------------------------------------------------- countries


@pytest.mark.parametrize(
    "phrase,country",
    [
        ("США", "США"),
        ("сша", "США"),
        ("USA", "США"),
        ("usa", "США"),
        ("Штаты", "США"),
        ("американское", "США"),
        ("Америка", "США"),
        ("United States", "США"),
        ("Калифорния", "США"),
        ("Россия", "Россия"),
        ("РФ", "Россия"),
        ("российское", "Россия"),
        ("Крым", "Россия"),
        ("кубань", "Россия"),
        ("France", "Франция"),
        ("французское", "Франция"),
        ("Italy", "Италия"),
        ("итальянские", "Италия"),
        ("испанское", "Испания"),
        ("Germany", "Германия"),
        ("немецкое", "Германия"),
        ("Грузия", "Грузия"),
        ("грузинское", "Грузия"),
        ("New Zealand", "Новая Зеландия"),
        ("новозеландское", "Новая Зеландия"),
        ("South Africa", "ЮАР"),
        ("ЮАР", "ЮАР"),
        ("Чили", "Чили"),
        ("чилийское", "Чили"),
        ("Молдавия", "Молдова"),
        ("  аргентинское ", "Аргентина"),
    ],
)
def test_country_aliases(phrase, country):
    assert matching.canonical_country(phrase) == country
    assert matching.country_keys(phrase) == [normalize(country)]


def test_unknown_country_is_kept_as_written():
    assert matching.canonical_country("  Атлантида ") == "Атлантида"
    assert matching.country_keys("Атлантида") == ["атлантида"]


def test_every_country_of_the_shipped_catalogue_is_known():
    countries = {w["country"] for w in json.loads(CATALOG.read_text("utf-8"))["wines"]}
    assert countries <= set(matching.known_countries())
    for country in countries:  # the catalogue name is its own alias
        assert matching.canonical_country(country) == country


def test_country_alias_table_has_no_conflicts():
    aliases = matching.country_aliases()
    assert all(key == normalize(key) for key in aliases)
    assert set(aliases.values()) == set(matching.known_countries())


# ---------------------------------------------------------------- grapes


@pytest.mark.parametrize(
    "phrase,must_include",
    [
        ("Каберне Совиньон", ["каберне совиньон", "cabernet sauvignon"]),
        ("CABERNET SAUVIGNON", ["cabernet sauvignon", "каберне совиньон"]),
        ("Shiraz", ["shiraz", "сира"]),
        ("Шираз", ["шираз", "сира", "syrah"]),
        ("Сира", ["сира", "shiraz"]),
        ("Pinot Noir", ["pinot noir", "пино нуар"]),
        ("Pinot Grigio", ["pinot grigio", "пино гриджио", "пино гри"]),
        ("Пино Гри", ["пино гри", "пино гриджио"]),
        ("Grüner Veltliner", ["grüner veltliner", "грюнер вельтлинер"]),
        ("просекко", ["просекко", "глера"]),
        ("Цимлянский", ["цимлянский", "цимлянский черный"]),
    ],
)
def test_grape_keys_cover_every_spelling_of_the_group(phrase, must_include):
    keys = matching.grape_keys(phrase)
    assert keys[0] == must_include[0], "the customer's own words come first"
    assert set(must_include) <= set(keys)
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("phrase", ["каберне", "Неизвестный сорт"])
def test_grape_keys_of_unknown_words_are_the_words(phrase):
    assert matching.grape_keys(phrase) == [phrase.lower()]


def test_grape_alias_table_is_normalised():
    aliases = matching.grape_aliases()
    assert all(key == normalize(key) for key in aliases)
    assert aliases["shiraz"] == aliases["syrah"] == aliases["шираз"] == "Сира"


# ---------------------------------------------------------------- food


def test_food_patterns_single_dish():
    assert matching.food_patterns("стейк") == [["стейк"]]
    assert matching.food_patterns("к стейку") == [["стейк"]]
    assert matching.food_patterns("под шашлык") == [["шашлык"]]


def test_food_patterns_phrase_needs_every_word():
    assert matching.food_patterns("стейк из говядины") == [["стейк", "говядин"]]
    assert matching.food_patterns("Рыба на гриле") == [["рыб", "грил"]]


def test_food_patterns_broad_words_expand():
    meat = matching.food_patterns("мясо")
    assert meat[0] == ["мяс"]
    assert ["стейк"] in meat and ["шашлык"] in meat and ["барбекю"] in meat
    assert matching.food_patterns("к мясу") == meat
    fish = matching.food_patterns("рыба")
    assert ["лосос"] in fish and ["стейк"] not in fish
    assert ["куриц"] in matching.food_patterns("птица")
    assert ["устриц"] in matching.food_patterns("морепродукты")
    assert ["торт"] in matching.food_patterns("десерт")
    # a phrase is specific: it does not expand
    assert matching.food_patterns("мясо на гриле") == [["мяс", "грил"]]


def test_food_patterns_without_words():
    assert matching.food_patterns("") == []
    assert matching.food_patterns("_%") == []
    assert matching.food_patterns("к и с") == []


def test_food_patterns_have_no_duplicates():
    for phrase in ("мясо", "рыба", "сыр", "закуски", "десерты"):
        alternatives = matching.food_patterns(phrase)
        assert len(alternatives) == len({tuple(a) for a in alternatives})


# ---------------------------------------------------------------- regions


@pytest.mark.parametrize(
    "phrase,key",
    [
        ("Tuscany", "тоскана"),
        ("toscana", "тоскана"),
        ("Тоскана", "тоскана"),
        ("Piedmont", "пьемонт"),
        ("Bordeaux", "бордо"),
        ("Burgundy", "бургундия"),
        ("bourgogne", "бургундия"),
        ("Champagne", "шампань"),
        ("Rioja", "риоха"),
        ("Mendoza", "мендоса"),
        ("Mosel", "мозель"),
        ("Кубань", "кубань"),
        ("Napa Valley", "napa valley"),
        ("Трентино-Альто-Адидже", "трентино альто адидже"),
    ],
)
def test_region_key(phrase, key):
    assert matching.region_key(phrase) == key


# ---------------------------------------------------------------- argument rules (enums and prices)


@pytest.mark.parametrize(
    "phrase,value",
    [
        ("red", "red"),
        ("RED", "red"),
        (" red ", "red"),
        ("красное", "red"),
        ("белое", "white"),
        ("розовое", "rose"),
        ("rosé", "rose"),
        ("игристое", "sparkling"),
        ("шампанское", "sparkling"),
        ("purple", None),
        ("", None),
        (5, None),
    ],
)
def test_wine_type_leniency(phrase, value):
    assert search_filters({"wine_type": phrase}).wine_type == value


@pytest.mark.parametrize(
    "phrase,value",
    [
        ("dry", "dry"),
        ("сухое", "dry"),
        ("брют", "dry"),
        ("brut", "dry"),
        ("semi-dry", "semi_dry"),
        ("полусухое", "semi_dry"),
        ("off-dry", "semi_dry"),
        ("semi-sweet", "semi_sweet"),
        ("полусладкое", "semi_sweet"),
        ("сладкое", "sweet"),
        ("extra brut", None),
    ],
)
def test_sweetness_leniency(phrase, value):
    assert search_filters({"sweetness": phrase}).sweetness == value


@pytest.mark.parametrize(
    "raw,value",
    [
        (1500, 1500.0),
        ("1500", 1500.0),
        ("1 500 ₽", 1500.0),
        ("1\u00a0500", 1500.0),
        ("99,90", 99.9),
        (0, None),
        (-5, None),
        ("", None),
        (None, None),
        (float("nan"), None),
        ("inf", None),
        (5e12, 1e9),
    ],
)
def test_price_rules(raw, value):
    assert optional_price({"p": raw}, "p") == value


@pytest.mark.parametrize("raw", [True, False, "дёшево", [1], {"v": 1}])
def test_price_wrong_types(raw):
    with pytest.raises(ArgumentError, match="p must be a number"):
        optional_price({"p": raw}, "p")


def test_price_min_above_price_max_is_dropped():
    filters = search_filters({"price_min": 3000, "price_max": 1000})
    assert (filters.price_min, filters.price_max) == (None, 1000)
    filters = search_filters({"price_min": 1000, "price_max": 1000})
    assert (filters.price_min, filters.price_max) == (1000, 1000)


def test_text_filters_fold_whitespace_and_drop_empty():
    filters = search_filters({"grape_variety": "  пино\n нуар ", "country": " ", "region": ""})
    assert (filters.grape_variety, filters.country, filters.region) == ("пино нуар", None, None)


def test_semantic_request_keeps_only_its_schema_filters():
    request = semantic_request(
        {
            "query": " лёгкое ",
            "embedding": [0.5] * 1536,
            "embedding_model": "m",
            "wine_type": "white",
            "price_max": 2000,
            "country": "Франция",
            "price_min": 10,
        }
    )
    assert request.query == "лёгкое"
    assert (request.filters.wine_type, request.filters.price_max) == ("white", 2000)
    assert request.filters.country is None and request.filters.price_min is None
