"""The matching rules of docs/matching.md, as pure functions (sommelier.language.matching, sommelier.language)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sommelier.agent.tools import LLM_TOOLS
from sommelier.domain.search import ArgumentError, optional_price, search_filters, semantic_request
from sommelier.language import matching, normalize, stem, words

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
    "forms",
    [
        ("стейк", "стейку", "стейка", "стейком"),
        ("рыба", "рыбе", "рыбу", "рыбой"),
        ("мясо", "мясу", "мяса"),
        ("устрицы", "устрицам", "устрицами"),
        ("шашлык", "шашлыку", "шашлыком"),
        ("летний", "летнего", "летнему"),
        ("французский", "французское", "французского"),
    ],
)
def test_stem_folds_case_endings(forms):
    assert len({stem(f) for f in forms}) == 1, {f: stem(f) for f in forms}


def test_stem_leaves_other_scripts_and_numbers():
    assert stem("steak") == "steak" and stem("2020") == "2020" and stem("") == ""
    assert [stem(w) for w in words("к стейку")] == ["к", "стейк"]


def test_no_hand_written_stemmer_is_left():
    import sommelier.language

    assert not hasattr(sommelier.language, "_ENDINGS")


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


def test_unknown_country_is_kept_as_written():
    assert matching.canonical_country("  Атлантида ") == "Атлантида"


def test_every_country_of_the_shipped_catalogue_is_known():
    countries = {w["country"] for w in json.loads(CATALOG.read_text("utf-8"))["wines"]}
    assert countries <= set(matching.known_countries())
    for country in countries:  # the catalogue name is its own alias
        assert matching.canonical_country(country) == country


def test_official_names_and_codes():
    assert matching.canonical_country("Соединенные Штаты Америки") == "США"
    assert matching.country_code("Соединённые Штаты Америки") == "US"
    assert matching.country_code("Французская Республика") == "FR"
    assert matching.country_code("Итальянская Республика") == "IT"
    assert matching.country_code("Королевство Испания") == "ES"
    assert matching.country_code("из Франции") == "FR"
    assert matching.country_code("Атлантида") is None


# ---------------------------------------------------------------- grapes


@pytest.mark.parametrize(
    "phrase,keys",
    [
        ("Каберне Совиньон", ["каберне совиньон"]),
        ("CABERNET SAUVIGNON", ["каберне совиньон"]),
        ("Shiraz", ["сира"]),
        ("Шираз", ["сира"]),
        ("syrah", ["сира"]),
        ("Pinot Grigio", ["пино гриджио"]),
        ("Пино Гри", ["пино гриджио"]),
        ("Grüner Veltliner", ["грюнер вельтлинер"]),
        ("просекко", ["глера"]),
        ("Цимлянский", ["цимлянский черный"]),
        ("Масуэло", ["кариньян"]),
        ("каберне", ["каберне совиньон", "каберне фран", "каберне дорса"]),
        ("мальбэк", ["мальбек"]),  # a misspelling, caught by rapidfuzz
        ("Неизвестный сорт", ["неизвестный сорт"]),
    ],
)
def test_grape_keys_are_canonical_names(phrase, keys):
    assert sorted(matching.grape_keys(phrase)) == sorted(keys)


# ---------------------------------------------------------------- food


@pytest.mark.parametrize(
    "phrase,categories",
    [
        ("стейк", {"говядина"}),
        ("к стейку", {"говядина"}),
        ("под шашлык", {"говядина", "баранина", "свинина"}),
        ("к шашлычку", {"говядина", "баранина", "свинина"}),
        ("бургер", {"говядина"}),
        ("к утке", {"птица"}),
        ("курица", {"птица"}),
        ("карбонара", {"паста"}),
        ("паста болоньезе", {"паста"}),
        ("суши", {"рыба", "азиатская кухня"}),
        ("мясо", {"говядина", "баранина", "свинина", "дичь"}),
        ("Выдержанный сыр", {"выдержанный сыр"}),
        ("Закуски, салаты и антипасто", {"закуски", "салаты", "мясные деликатесы"}),
        ("Азиатская кухня", {"азиатская кухня"}),
        ("Говядина", {"говядина"}),
        ("", set()),
        ("_%", set()),
        ("к и с", set()),
    ],
)
def test_food_categories(phrase, categories):
    assert set(matching.food_categories(phrase)) == categories


def test_pasta_never_matches_inside_antipasto():
    assert "паста" not in matching.food_categories("Закуски, салаты и антипасто")
    assert "паста" not in matching.food_categories("антипасти")


# ---------------------------------------------------------------- regions


@pytest.mark.parametrize(
    ("phrase", "included"),
    [
        ("Tuscany", {"тоскана", "toscana", "tuscany", "кьянти", "chianti", "болгери"}),
        ("toscana", {"тоскана", "toscana"}),
        ("из Тосканы", {"тоскана", "тосканы"}),
        ("Piedmont", {"пьемонт", "piemonte", "бароло", "barolo"}),
        ("Bordeaux", {"бордо", "bordeaux"}),
        ("Burgundy", {"бургундия", "bourgogne"}),
        ("Champagne", {"шампань", "champagne"}),
        ("Napa Valley", {"долина напа", "napa valley", "напа", "napa"}),
        ("Трентино-Альто-Адидже", {"трентино альто адидже"}),
    ],
)
def test_a_known_region_is_searched_in_every_spelling(phrase, included):
    assert included <= set(matching.region_phrases(phrase))


@pytest.mark.parametrize(
    ("phrase", "phrases"),
    [
        ("Болгери", ["болгери"]),  # a subregion is searched as written
        ("Pauillac", ["pauillac"]),
        ("Кьянти Классико", ["кьянти классико"]),
        ("Асти", ["асти"]),
        ("_-_", []),  # no words: not a filter
        ("%", []),
    ],
)
def test_a_subregion_or_an_unknown_place_is_searched_as_written(phrase, phrases):
    assert matching.region_phrases(phrase) == phrases


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
        ("extra brut", "dry"),
        ("extra dry", "semi_dry"),
        ("amber", None),
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


def test_semantic_request_applies_every_filter_of_search_wines():
    request = semantic_request(
        {
            "query": " лёгкое ",
            "embedding": [0.5] * 1536,
            "embedding_model": "m",
            "wine_type": "white",
            "sweetness": "сухое",
            "price_min": 10,
            "price_max": 2000,
            "grape_variety": "Рислинг",
            "country": "Германия",
            "region": "Мозель",
            "food_pairing": "рыба",
        }
    )
    assert request.query == "лёгкое"
    f = request.filters
    assert (f.wine_type, f.sweetness, f.price_min, f.price_max) == ("white", "dry", 10, 2000)
    assert (f.grape_variety, f.country, f.region, f.food_pairing) == ("Рислинг", "Германия", "Мозель", "рыба")


def test_semantic_search_offers_the_model_every_search_filter_with_the_query_first():
    search = LLM_TOOLS["search_wines"].json_schema()["function"]["parameters"]
    semantic = LLM_TOOLS["semantic_search"].json_schema()["function"]["parameters"]
    assert list(semantic["properties"])[0] == "query" and semantic["required"] == ["query"]
    assert {k: v for k, v in semantic["properties"].items() if k != "query"} == search["properties"]
    assert "limit" not in semantic["properties"] and "exclude_ids" not in semantic["properties"]


@pytest.mark.parametrize(
    "catalogue_country,shown",
    [
        ("Соединенные Штаты Америки", "Калифорния, США"),
        ("Южно-Африканская Республика", "Калифорния, ЮАР"),
        ("Франция", "Калифорния, Франция"),
        ("Атлантида", "Калифорния, Атлантида"),  # unknown: as the catalogue writes it
        ("", "Калифорния"),
    ],
)
def test_tool_results_name_the_country_as_customers_say_it(catalogue_country, shown):
    from decimal import Decimal

    from sommelier.toolfn.search import wine_for_tool

    row = {
        "id": "00000000-0000-0000-0000-000000000001",
        **dict.fromkeys(("name", "producer", "wine_type", "sweetness", "body", "tannins", "acidity"), "x"),
        **{"description": "", "tasting_notes": "", "vintage_year": 2020, "price_rub": Decimal("990")},
        **{"grape_varieties": [], "food_pairings": [], "region": "Калифорния", "country": catalogue_country},
    }
    assert wine_for_tool(row).region == shown
