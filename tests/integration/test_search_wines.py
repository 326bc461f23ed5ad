"""search_wines against the shipped catalogue (docs/architecture.md, docs/matching.md).

Every expectation is computed independently in plain Python from the catalogue file
(`shipped_wines`), with small hand-written predicates. They spell out the intended rule
(which catalogue grape, country, region or dish a phrase should reach) instead of calling
`sommelier.language.matching`, so a regression in the SQL or in the alias tables shows up.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from sommelier.toolfn.handler import handle

from tests.food_oracle import (
    ASIAN,
    BEEF,
    CHARCUTERIE,
    FISH,
    GAME,
    HARD_CHEESE,
    LAMB,
    PORK_BBQ,
    POULTRY,
    SEAFOOD,
    SOFT_CHEESE,
    STARTERS,
)

MAX_LIMIT = 20
DEFAULT_LIMIT = 5
TYPICAL_PRICE = 2000

WINE_KEYS = {
    "id",
    "name",
    "producer",
    "region",
    "vintage_year",
    "grape_varieties",
    "wine_type",
    "sweetness",
    "body",
    "tannins",
    "acidity",
    "price_rub",
    "description",
    "tasting_notes",
    "food_pairings",
}


# ---------------------------------------------------------------- independent predicates


def norm(text: str | None) -> str:
    """Case-insensitive, ё→е, hyphens as spaces: how a customer's words are compared."""
    return " ".join((text or "").lower().replace("ё", "е").replace("-", " ").split())


def key(wine: dict) -> tuple:
    return (wine["name"], wine["producer"], wine["vintage_year"])


Predicate = Callable[[dict], bool]


def grape_is(*names: str) -> Predicate:
    """A grape equals one of `names`, or `names` is its first word(s) ("каберне" → Каберне Фран)."""
    wanted = [norm(n) for n in names]
    return lambda w: any(norm(g) == n or norm(g).startswith(n + " ") for g in w["grape_varieties"] for n in wanted)


def country_is(name: str) -> Predicate:
    return lambda w: norm(w["country"]) == norm(name)


def has_words(text: str | None, phrase: str) -> bool:
    """`phrase` as whole words of `text` (never inside a longer word)."""
    return re.search(rf"(?<!\w){re.escape(norm(phrase))}(?!\w)", norm(text)) is not None


def region_has(fragment: str) -> Predicate:
    return lambda w: has_words(w["region"], fragment) or has_words(w.get("appellation"), fragment)


def pairing_has(*alternatives: str | tuple[str, ...]) -> Predicate:
    """Some pairing contains every fragment of one alternative (a string is a one-fragment alternative)."""
    alts = [(a,) if isinstance(a, str) else a for a in alternatives]
    return lambda w: any(all(norm(f) in norm(p) for f in alt) for p in w["food_pairings"] for alt in alts)


def type_is(value: str) -> Predicate:
    return lambda w: w["wine_type"] == value


def sweetness_is(value: str) -> Predicate:
    return lambda w: w["sweetness"] == value


def price_at_least(value: float) -> Predicate:
    return lambda w: w["price_rub"] >= value


def price_at_most(value: float) -> Predicate:
    return lambda w: w["price_rub"] <= value


def pairing_in(*groups: frozenset[str]) -> Predicate:
    """Some pairing of the wine is one of the named pairings (written out by hand per food category)."""
    names = {norm(p) for group in groups for p in group}
    return lambda w: any(norm(p) in names for p in w["food_pairings"])


@dataclass(frozen=True)
class Case:
    arguments: dict
    predicate: Predicate
    label: str

    def __str__(self) -> str:  # pytest ids
        return self.label


# ---------------------------------------------------------------- helpers


def search(db, **arguments) -> dict:
    result = handle({"tool": "search_wines", "arguments": arguments}, db)
    assert "error" not in result, result
    json.dumps(result)  # JSON-ready, no Decimals or UUID objects
    return result


def expected(shipped: list[dict], predicate: Predicate) -> set[tuple]:
    return {key(w) for w in shipped if predicate(w)}


def result_keys(result: dict) -> list[tuple]:
    return [(w["name"], w["producer"], w["vintage_year"]) for w in result["wines"]]


def assert_matches(result: dict, shipped: list[dict], predicate: Predicate, limit: int = MAX_LIMIT) -> set[tuple]:
    """The full expected set when it fits in `limit`; else `limit` wines, all of them expected."""
    want = expected(shipped, predicate)
    got = result_keys(result)
    assert result["found"] == len(got)
    assert len(set(got)) == len(got), "a wine was returned twice"
    if len(want) <= limit:
        assert set(got) == want, f"missing {want - set(got)}, unexpected {set(got) - want}"
    else:
        assert len(got) == limit
        assert set(got) <= want, f"unexpected {set(got) - want}"
    return want


def by_key(shipped: list[dict]) -> dict[tuple, dict]:
    return {key(w): w for w in shipped}


# ---------------------------------------------------------------- the catalogue itself


def test_catalogue_is_loaded_in_full(catalog_db, shipped_wines):
    result = handle({"tool": "catalog_stats", "arguments": {}}, catalog_db)
    assert result["wines"] == len(shipped_wines) >= 40
    assert result["embedding_models"] == {"local-ngram-hash-v4": len(shipped_wines)}


# ---------------------------------------------------------------- each filter alone

SINGLE_FILTERS = [
    Case({"wine_type": "red"}, type_is("red"), "type-red"),
    Case({"wine_type": "white"}, type_is("white"), "type-white"),
    Case({"wine_type": "rose"}, type_is("rose"), "type-rose"),
    Case({"wine_type": "sparkling"}, type_is("sparkling"), "type-sparkling"),
    Case({"sweetness": "dry"}, sweetness_is("dry"), "sweetness-dry"),
    Case({"sweetness": "semi_dry"}, sweetness_is("semi_dry"), "sweetness-semi_dry"),
    Case({"sweetness": "semi_sweet"}, sweetness_is("semi_sweet"), "sweetness-semi_sweet"),
    Case({"sweetness": "sweet"}, sweetness_is("sweet"), "sweetness-sweet"),
    # grapes: exact, case-insensitive, first-word prefix, English names and synonyms
    Case({"grape_variety": "Каберне Совиньон"}, grape_is("Каберне Совиньон"), "grape-exact"),
    Case({"grape_variety": "каберне"}, grape_is("каберне"), "grape-first-word"),
    Case({"grape_variety": "КАБЕРНЕ"}, grape_is("каберне"), "grape-upper"),
    Case({"grape_variety": "CABERNET SAUVIGNON"}, grape_is("Каберне Совиньон"), "grape-english-upper"),
    Case({"grape_variety": "cabernet sauvignon"}, grape_is("Каберне Совиньон"), "grape-english"),
    Case({"grape_variety": "Shiraz"}, grape_is("Сира"), "grape-shiraz"),
    Case({"grape_variety": "Шираз"}, grape_is("Сира"), "grape-shiraz-ru"),
    Case({"grape_variety": "syrah"}, grape_is("Сира"), "grape-syrah"),
    Case({"grape_variety": "Pinot Noir"}, grape_is("Пино Нуар"), "grape-pinot-noir"),
    Case({"grape_variety": "пино"}, grape_is("пино"), "grape-pino-prefix"),
    Case({"grape_variety": "Malbec"}, grape_is("Мальбек"), "grape-malbec"),
    Case({"grape_variety": "riesling"}, grape_is("Рислинг"), "grape-riesling"),
    Case({"grape_variety": "Chardonnay"}, grape_is("Шардоне"), "grape-chardonnay"),
    Case({"grape_variety": "просекко"}, grape_is("Глера"), "grape-prosecco-glera"),
    Case({"grape_variety": "glera"}, grape_is("Глера"), "grape-glera-en"),
    Case({"grape_variety": "саперави"}, grape_is("Саперави"), "grape-saperavi"),
    Case({"grape_variety": "совиньон"}, grape_is("Совиньон Блан"), "grape-sauvignon-means-blanc"),
    Case({"grape_variety": "цимлянский"}, grape_is("Цимлянский черный"), "grape-tsimlyansky"),
    Case({"grape_variety": "Цимлянский чёрный"}, grape_is("Цимлянский черный"), "grape-yo"),
    Case({"grape_variety": "Мерло"}, grape_is("Мерло"), "grape-merlot"),
    # countries: names, English, adjectives, slang
    Case({"country": "США"}, country_is("США"), "country-usa-ru"),
    Case({"country": "USA"}, country_is("США"), "country-usa-en"),
    Case({"country": "Штаты"}, country_is("США"), "country-states"),
    Case({"country": "американское"}, country_is("США"), "country-american"),
    Case({"country": "сша"}, country_is("США"), "country-usa-lower"),
    Case({"country": "Италия"}, country_is("Италия"), "country-italy"),
    Case({"country": "italy"}, country_is("Италия"), "country-italy-en"),
    Case({"country": "итальянское"}, country_is("Италия"), "country-italian"),
    Case({"country": "Франция"}, country_is("Франция"), "country-france"),
    Case({"country": "россия"}, country_is("Россия"), "country-russia"),
    Case({"country": "российское"}, country_is("Россия"), "country-russian"),
    Case({"country": "Грузия"}, country_is("Грузия"), "country-georgia"),
    Case({"country": "грузинское"}, country_is("Грузия"), "country-georgian"),
    Case({"country": "South Africa"}, country_is("ЮАР"), "country-rsa"),
    Case({"country": "New Zealand"}, country_is("Новая Зеландия"), "country-nz"),
    Case({"country": "аргентина"}, country_is("Аргентина"), "country-argentina"),
    # regions: substring of region or appellation, English aliases
    Case({"region": "Тоскана"}, region_has("тоскана"), "region-tuscany-ru"),
    Case({"region": "тоскана"}, region_has("тоскана"), "region-tuscany-lower"),
    Case({"region": "Tuscany"}, region_has("тоскана"), "region-tuscany-en"),
    Case({"region": "Кубань"}, region_has("кубань"), "region-kuban"),
    Case({"region": "Бургундия"}, region_has("бургундия"), "region-burgundy"),
    Case({"region": "Burgundy"}, region_has("бургундия"), "region-burgundy-en"),
    Case({"region": "Шампань"}, region_has("шампань"), "region-champagne"),
    Case({"region": "Champagne"}, region_has("шампань"), "region-champagne-en"),
    Case({"region": "Мендоса"}, region_has("мендоса"), "region-mendoza"),
    Case({"region": "Piedmont"}, region_has("пьемонт"), "region-piedmont-en"),
    Case({"region": "Болгери"}, region_has("болгери"), "region-inner-part"),
    Case({"region": "Pauillac"}, region_has("pauillac"), "region-appellation"),
    Case({"region": "Napa"}, region_has("напа"), "region-napa"),
    Case({"region": "кахетия"}, region_has("кахетия"), "region-kakheti"),
    Case({"region": "Трентино-Альто-Адидже"}, region_has("трентино альто адидже"), "region-hyphens"),
    # food: stems, inflections, broad words
    Case({"food_pairing": "стейк"}, pairing_in(BEEF), "food-steak"),
    Case({"food_pairing": "к стейку"}, pairing_in(BEEF), "food-to-steak"),
    Case({"food_pairing": "стейку"}, pairing_in(BEEF), "food-steak-dative"),
    Case({"food_pairing": "Стейк из говядины"}, pairing_in(BEEF), "food-steak-phrase"),
    Case({"food_pairing": "шашлык"}, pairing_in(BEEF, LAMB, PORK_BBQ), "food-shashlik"),
    Case({"food_pairing": "под шашлык"}, pairing_in(BEEF, LAMB, PORK_BBQ), "food-under-shashlik"),
    Case({"food_pairing": "мясо"}, pairing_in(BEEF, LAMB, PORK_BBQ, GAME), "food-meat"),
    Case({"food_pairing": "к мясу"}, pairing_in(BEEF, LAMB, PORK_BBQ, GAME), "food-to-meat"),
    Case({"food_pairing": "рыба"}, pairing_in(FISH), "food-fish"),
    Case({"food_pairing": "к рыбе"}, pairing_in(FISH), "food-to-fish"),
    Case({"food_pairing": "устрицы"}, pairing_in(SEAFOOD), "food-oysters"),
    Case({"food_pairing": "к устрицам"}, pairing_in(SEAFOOD), "food-to-oysters"),
    Case({"food_pairing": "сыр"}, pairing_in(HARD_CHEESE, SOFT_CHEESE), "food-cheese"),
    Case({"food_pairing": "твёрдый сыр"}, pairing_in(HARD_CHEESE), "food-hard-cheese"),
    Case({"food_pairing": "суши"}, pairing_in(FISH, ASIAN), "food-sushi"),
    Case({"food_pairing": "утка"}, pairing_in(POULTRY), "food-duck"),
    Case({"food_pairing": "фуа-гра"}, pairing_in(CHARCUTERIE, STARTERS), "food-foie-gras-hyphen"),
    Case({"food_pairing": "ПИЦЦА"}, pairing_in({"пицца"}), "food-pizza-upper"),
    # prices
    Case({"price_max": 1000}, price_at_most(1000), "price-max"),
    Case({"price_max": 1190}, price_at_most(1190), "price-max-inclusive"),
    Case({"price_min": 10000}, price_at_least(10000), "price-min"),
    Case({"price_min": 12990}, price_at_least(12990), "price-min-inclusive"),
    Case({"price_min": 1000, "price_max": 1500}, lambda w: 1000 <= w["price_rub"] <= 1500, "price-range"),
    Case({"price_min": 2490, "price_max": 2490}, lambda w: w["price_rub"] == 2490, "price-exact"),
]


@pytest.mark.parametrize("case", SINGLE_FILTERS, ids=str)
def test_single_filter(catalog_db, shipped_wines, case):
    result = search(catalog_db, **case.arguments, limit=MAX_LIMIT)
    want = assert_matches(result, shipped_wines, case.predicate)
    assert want, f"{case.label}: the catalogue has no wine for this case; the test proves nothing"


def test_no_filters_returns_the_default_cap(catalog_db, shipped_wines):
    result = search(catalog_db)
    assert result["found"] == DEFAULT_LIMIT == len(result["wines"])
    assert result["filters_applied"] == {}


# ---------------------------------------------------------------- combinations

# Two representative values per filter; every pair of filters and every value combination.
COMBO_VALUES: dict[str, list[tuple[object, Predicate]]] = {
    "wine_type": [("red", type_is("red")), ("white", type_is("white"))],
    "sweetness": [("dry", sweetness_is("dry")), ("semi_sweet", sweetness_is("semi_sweet"))],
    "grape_variety": [("каберне", grape_is("каберне")), ("Pinot Noir", grape_is("Пино Нуар"))],
    "price_min": [(1500, price_at_least(1500)), (5000, price_at_least(5000))],
    "price_max": [(2000, price_at_most(2000)), (30000, price_at_most(30000))],
    "country": [("Италия", country_is("Италия")), ("российское", country_is("Россия"))],
    "region": [("Tuscany", region_has("тоскана")), ("кубань", region_has("кубань"))],
    "food_pairing": [("к стейку", pairing_in(BEEF)), ("рыба", pairing_in(FISH))],
}
PAIRS = list(itertools.combinations(COMBO_VALUES, 2))


@pytest.mark.parametrize("first,second", PAIRS, ids=lambda v: v)
def test_pairs_of_filters(catalog_db, shipped_wines, first, second):
    for (value1, pred1), (value2, pred2) in itertools.product(COMBO_VALUES[first], COMBO_VALUES[second]):
        arguments = {first: value1, second: value2}
        if first == "price_min" and second == "price_max" and value1 > value2:
            continue  # that rule has its own test (price_min is dropped)
        result = search(catalog_db, **arguments, limit=MAX_LIMIT)
        assert_matches(result, shipped_wines, lambda w, a=pred1, b=pred2: a(w) and b(w))
        assert set(result["filters_applied"]) == set(arguments), arguments


COMBINATIONS = [
    Case(
        {"wine_type": "red", "country": "Штаты", "price_max": 5000},
        lambda w: type_is("red")(w) and country_is("США")(w) and w["price_rub"] <= 5000,
        "red-usa-cheap",
    ),
    Case(
        {"wine_type": "red", "sweetness": "dry", "food_pairing": "стейк", "price_max": 3000},
        lambda w: (
            w["wine_type"] == "red" and w["sweetness"] == "dry" and pairing_in(BEEF)(w) and w["price_rub"] <= 3000
        ),
        "red-dry-steak-3000",
    ),
    Case(
        {"grape_variety": "каберне", "country": "Россия"},
        lambda w: grape_is("каберне")(w) and country_is("Россия")(w),
        "cabernet-russia",
    ),
    Case(
        {"grape_variety": "Каберне Совиньон", "region": "тоскана", "food_pairing": "стейк из говядины"},
        lambda w: grape_is("Каберне Совиньон")(w) and region_has("тоскана")(w) and pairing_in(BEEF)(w),
        "cabernet-tuscany-beef",
    ),
    Case(
        {"wine_type": "white", "food_pairing": "к рыбе", "price_min": 1000, "price_max": 3000},
        lambda w: w["wine_type"] == "white" and pairing_in(FISH)(w) and 1000 <= w["price_rub"] <= 3000,
        "white-fish-range",
    ),
    Case(
        {"wine_type": "sparkling", "country": "France", "region": "Champagne", "sweetness": "dry"},
        lambda w: (
            w["wine_type"] == "sparkling"
            and country_is("Франция")(w)
            and region_has("шампань")(w)
            and w["sweetness"] == "dry"
        ),
        "champagne",
    ),
    Case(
        {
            "wine_type": "red",
            "sweetness": "dry",
            "grape_variety": "саперави",
            "price_min": 1000,
            "price_max": 2000,
            "country": "Россия",
            "region": "Кубань",
            "food_pairing": "шашлык",
        },
        lambda w: (
            w["wine_type"] == "red"
            and w["sweetness"] == "dry"
            and grape_is("Саперави")(w)
            and 1000 <= w["price_rub"] <= 2000
            and country_is("Россия")(w)
            and region_has("кубань")(w)
            and pairing_in(BEEF, LAMB, PORK_BBQ)(w)
        ),
        "all-eight",
    ),
    Case(
        {"wine_type": "rose", "country": "испанское", "food_pairing": "курица"},
        lambda w: w["wine_type"] == "rose" and country_is("Испания")(w) and pairing_in(POULTRY)(w),
        "spanish-rose-chicken",
    ),
]


@pytest.mark.parametrize("case", COMBINATIONS, ids=str)
def test_combinations(catalog_db, shipped_wines, case):
    result = search(catalog_db, **case.arguments, limit=MAX_LIMIT)
    want = assert_matches(result, shipped_wines, case.predicate)
    assert want, f"{case.label}: no wine fits; the case proves nothing"
    assert set(result["filters_applied"]) == set(case.arguments)


def test_contradictory_filters_find_nothing(catalog_db):
    result = search(catalog_db, wine_type="white", grape_variety="Саперави")
    assert result == {
        "found": 0,
        "matched": 0,
        "wines": [],
        "filters_applied": {"wine_type": "white", "grape_variety": "Саперави"},
    }


# ---------------------------------------------------------------- real phrasing, spelled out


def _names(result: dict) -> set[str]:
    return {w["name"] for w in result["wines"]}


def test_kaberne_finds_cabernet_sauvignon(catalog_db, shipped_wines):
    result = search(catalog_db, grape_variety="каберне", limit=MAX_LIMIT)
    assert result["found"] > 0
    for wine in result["wines"]:
        assert any(norm(g).startswith("каберне") for g in wine["grape_varieties"])
    cabernet_sauvignon = {key(w) for w in shipped_wines if "Каберне Совиньон" in w["grape_varieties"]}
    assert cabernet_sauvignon <= set(result_keys(result))


def test_first_word_prefix_needs_a_whole_word(catalog_db):
    # "пин" is not the first word of "Пино Нуар", and "каберне сов" is not a grape name.
    assert search(catalog_db, grape_variety="пин")["found"] == 0
    assert search(catalog_db, grape_variety="каберне сов")["found"] == 0


def test_steak_finds_beef_steak(catalog_db, shipped_wines):
    beef_steak = {key(w) for w in shipped_wines if "стейк из говядины" in w["food_pairings"]}
    assert beef_steak, "the catalogue should pair some wine with 'стейк из говядины'"
    beef = {key(w) for w in shipped_wines if pairing_in(BEEF)(w)}
    for phrase in ("стейк", "к стейку", "стейку", "Стейк"):
        result = search(catalog_db, food_pairing=phrase, limit=MAX_LIMIT)
        assert result["matched"] == len(beef) > len(beef_steak), phrase  # every beef dish, not only steak
        assert set(result_keys(result)) <= beef, phrase
    for price in {w["price_rub"] for w in shipped_wines if key(w) in beef_steak}:
        result = search(catalog_db, food_pairing="стейк", price_min=price, price_max=price, limit=MAX_LIMIT)
        assert {k for k in beef_steak if by_key(shipped_wines)[k]["price_rub"] == price} <= set(result_keys(result))


def test_meat_finds_steak_and_shashlik(catalog_db, shipped_wines):
    result = search(catalog_db, food_pairing="мясо", wine_type="red", price_max=2000, limit=MAX_LIMIT)
    found = set(result_keys(result))
    steak_or_shashlik = {
        key(w)
        for w in shipped_wines
        if w["wine_type"] == "red"
        and w["price_rub"] <= 2000
        and any("стейк" in p or "шашлык" in p for p in w["food_pairings"])
    }
    assert steak_or_shashlik and steak_or_shashlik <= found
    for wine in result["wines"]:
        assert pairing_in(BEEF, LAMB, PORK_BBQ, GAME)(wine), wine["food_pairings"]


def test_usa_aliases_all_mean_the_same(catalog_db, shipped_wines):
    american = {key(w) for w in shipped_wines if w["country"] == "США"}
    assert american
    for phrase in ("США", "USA", "usa", "Штаты", "штаты", "американское", "Америка", "United States"):
        result = search(catalog_db, country=phrase, limit=MAX_LIMIT)
        assert set(result_keys(result)) == american, phrase
        assert result["filters_applied"] == {"country": "США"}, phrase


def test_unknown_country_is_compared_as_written(catalog_db):
    result = search(catalog_db, country="Атлантида")
    assert result == {"found": 0, "matched": 0, "wines": [], "filters_applied": {"country": "Атлантида"}}


def test_tuscany_in_english_and_russian(catalog_db, shipped_wines):
    tuscan = {key(w) for w in shipped_wines if "Тоскана" in w["region"]}
    assert tuscan
    for phrase in ("Tuscany", "tuscany", "Toscana", "тоскана", "ТОСКАНА", "Тоскана"):
        assert set(result_keys(search(catalog_db, region=phrase, limit=MAX_LIMIT))) == tuscan, phrase


# ---------------------------------------------------------------- regions on word boundaries


def test_a_region_inside_a_longer_word_is_not_that_region(catalog_db, shipped_wines):
    """«асти» is a substring of «Кастилия» (the Rueda's region) but a word only of «Asti DOCG»."""
    castile = [w for w in shipped_wines if "асти" in norm(w["region"])]
    assert castile and not any(has_words(w["region"], "асти") for w in castile)
    asti = {key(w) for w in shipped_wines if has_words(w.get("appellation"), "asti")}
    # «Асти» is «Asti» in the other alphabet (the name search's sound key), never «Кастилия»
    for phrase in ("Асти", "Asti"):
        assert asti and set(result_keys(search(catalog_db, region=phrase, limit=MAX_LIMIT))) == asti, phrase


def test_napa_is_not_found_inside_anapa(fresh_db, shipped_wines):
    """Анапа (a Kuban wine area) holds «напа»: a substring filter sent «Napa» customers to Kuban."""
    with fresh_db.connection() as conn:
        moved = conn.execute(
            "UPDATE wines SET region = 'Кубань (Анапа)' WHERE region = 'Кубань (Геленджик)' RETURNING name"
        ).fetchall()
    assert moved
    anapa = {name for (name,) in moved}
    napa = {w["name"] for w in shipped_wines if w["region"] == "Долина Напа"}
    for phrase in ("Напа", "Napa", "Долина Напа"):
        assert {w["name"] for w in search(fresh_db, region=phrase, limit=MAX_LIMIT)["wines"]} == napa, phrase
    assert {w["name"] for w in search(fresh_db, region="Анапа", limit=MAX_LIMIT)["wines"]} == anapa
    assert anapa <= {w["name"] for w in search(fresh_db, region="Кубань", limit=MAX_LIMIT)["wines"]}


def test_tuscany_as_the_catalogue_writes_it(catalog_db, shipped_wines):
    """«Тоскана», «Тоскана (Болгери)», «Toscana IGT», «Chianti Classico DOCG»: one region, any spelling."""
    tuscan = {key(w) for w in shipped_wines if w["region"].startswith("Тоскана")}
    written = {w.get("appellation") for w in shipped_wines if key(w) in tuscan} | {
        w["region"] for w in shipped_wines if key(w) in tuscan
    }
    assert {"Тоскана", "Тоскана (Болгери)", "Toscana IGT", "Chianti Classico DOCG"} <= written
    for phrase in ("Тоскана", "Тосканы", "из Тосканы", "Toscana", "Tuscany"):
        assert set(result_keys(search(catalog_db, region=phrase, limit=MAX_LIMIT))) == tuscan, phrase
    chianti = {key(w) for w in shipped_wines if has_words(w.get("appellation"), "chianti")}
    assert chianti and set(result_keys(search(catalog_db, region="Chianti", limit=MAX_LIMIT))) == chianti


def test_a_subregion_and_an_inflected_region_as_written(fresh_db):
    """A shop writes «Тоскана (Кьянти Классико)» and «Южный берег Крыма»: the subregion's words and the
    region in another case still match; words that only begin another word do not («Кьян»)."""
    with fresh_db.connection() as conn:
        chianti = conn.execute(
            "UPDATE wines SET region = 'Тоскана (Кьянти Классико)', appellation = NULL "
            "WHERE appellation = 'Chianti Classico DOCG' RETURNING id::text"
        ).fetchall()
        crimea = conn.execute(
            "UPDATE wines SET region = 'Южный берег Крыма' WHERE region = 'Крым (Южный берег)' RETURNING id::text"
        ).fetchall()
    assert chianti and crimea
    chianti_ids, crimea_ids = {i for (i,) in chianti}, {i for (i,) in crimea}

    def ids(region: str) -> set[str]:
        return {w["id"] for w in search(fresh_db, region=region, limit=MAX_LIMIT)["wines"]}

    for phrase in ("Кьянти", "Кьянти Классико", "кьянти классико", "Тоскана"):
        assert chianti_ids <= ids(phrase), phrase
    assert not chianti_ids & (ids("Кьян") | ids("Классико Кьянти"))
    for phrase in ("Крым", "Крыма", "крымское"):
        assert crimea_ids <= ids(phrase), phrase


def test_enum_synonyms_are_accepted(catalog_db, shipped_wines):
    for phrase, value in (
        ("красное", "red"),
        ("Red", "red"),
        (" white ", "white"),
        ("rosé", "rose"),
        ("игристое", "sparkling"),
        ("шампанское", "sparkling"),
    ):
        result = search(catalog_db, wine_type=phrase, limit=MAX_LIMIT)
        assert result["filters_applied"] == {"wine_type": value}
        assert {w["wine_type"] for w in result["wines"]} == {value}
    for phrase, value in (
        ("сухое", "dry"),
        ("полусладкое", "semi_sweet"),
        ("semi-dry", "semi_dry"),
        ("брют", "dry"),
        ("off-dry", "semi_dry"),
        ("SWEET", "sweet"),
    ):
        result = search(catalog_db, sweetness=phrase, limit=MAX_LIMIT)
        assert result["filters_applied"] == {"sweetness": value}
        assert_matches(result, shipped_wines, sweetness_is(value))


# ---------------------------------------------------------------- ordering


def test_price_max_lists_the_best_the_budget_buys_first(catalog_db, shipped_wines):
    result = search(catalog_db, price_max=3000, limit=MAX_LIMIT)
    prices = [w["price_rub"] for w in result["wines"]]
    assert prices == sorted(prices, reverse=True)
    # the most expensive wines within budget, none skipped
    within = sorted((w["price_rub"] for w in shipped_wines if w["price_rub"] <= 3000), reverse=True)
    assert prices == within[:MAX_LIMIT]


def test_price_range_is_ordered_by_price_descending(catalog_db):
    prices = [w["price_rub"] for w in search(catalog_db, price_min=1000, price_max=5000, limit=MAX_LIMIT)["wines"]]
    assert prices == sorted(prices, reverse=True) and len(prices) == MAX_LIMIT


def test_price_min_alone_lists_the_cheapest_first(catalog_db, shipped_wines):
    result = search(catalog_db, price_min=3000, limit=MAX_LIMIT)
    prices = [w["price_rub"] for w in result["wines"]]
    assert prices == sorted(prices)
    above = sorted(w["price_rub"] for w in shipped_wines if w["price_rub"] >= 3000)
    assert prices == above[:MAX_LIMIT]


def test_without_price_filter_typical_prices_come_first(catalog_db, shipped_wines):
    result = search(catalog_db, wine_type="red", limit=MAX_LIMIT)
    distances = [abs(math.log(w["price_rub"]) - math.log(TYPICAL_PRICE)) for w in result["wines"]]
    assert distances == sorted(distances)
    all_red = sorted(
        abs(math.log(w["price_rub"]) - math.log(TYPICAL_PRICE)) for w in shipped_wines if w["wine_type"] == "red"
    )
    assert distances == pytest.approx(all_red[:MAX_LIMIT])


def test_order_is_deterministic(catalog_db):
    first = search(catalog_db, food_pairing="мясо", limit=MAX_LIMIT)
    for _ in range(3):
        assert search(catalog_db, food_pairing="мясо", limit=MAX_LIMIT) == first


# ---------------------------------------------------------------- filters_applied, limit, exclude_ids


def test_filters_applied_reports_the_normalised_filters(catalog_db):
    result = search(
        catalog_db,
        wine_type=" Красное ",
        sweetness="DRY",
        grape_variety="  каберне   совиньон ",
        price_min="1 000",
        price_max=5000.0,
        country="Штаты",
        region="Napa",
        food_pairing="к стейку",
        limit=3,
        exclude_ids=[],
    )
    assert result["filters_applied"] == {
        "wine_type": "red",
        "sweetness": "dry",
        "grape_variety": "каберне совиньон",
        "price_min": 1000,
        "price_max": 5000,
        "country": "США",
        "region": "Napa",
        "food_pairing": "к стейку",
    }
    assert isinstance(result["filters_applied"]["price_max"], int)


def test_fractional_price_is_kept(catalog_db):
    assert search(catalog_db, price_max=1499.5)["filters_applied"] == {"price_max": 1499.5}


def test_limit_caps_and_clamps(catalog_db):
    assert search(catalog_db, limit=3)["found"] == 3
    assert search(catalog_db, limit=1)["found"] == 1
    assert search(catalog_db, limit=100)["found"] == MAX_LIMIT
    assert search(catalog_db, limit=0)["found"] == 1
    assert search(catalog_db, limit=7.9)["found"] == 7
    assert "limit" not in search(catalog_db, limit=3)["filters_applied"]


def test_exclude_ids_skips_wines_already_shown(catalog_db, shipped_wines):
    first = search(catalog_db, wine_type="red", limit=MAX_LIMIT)
    shown = [w["id"] for w in first["wines"][:3]]
    again = search(catalog_db, wine_type="red", exclude_ids=shown, limit=MAX_LIMIT)
    assert not set(shown) & {w["id"] for w in again["wines"]}
    assert "exclude_ids" not in again["filters_applied"]
    reds = [w for w in shipped_wines if w["wine_type"] == "red"]
    assert again["found"] == min(MAX_LIMIT, len(reds) - len(shown))
    # paging: the next page continues where the first stopped (same order, shown wines removed)
    assert [w["id"] for w in again["wines"]][: MAX_LIMIT - 3] == [w["id"] for w in first["wines"][3:]]


def test_exclude_every_match_gives_empty_result(catalog_db):
    first = search(catalog_db, country="США", limit=MAX_LIMIT)
    ids = [w["id"] for w in first["wines"]]
    again = search(catalog_db, country="США", exclude_ids=ids + ids)  # duplicates are harmless
    assert again == {"found": 0, "matched": 0, "wines": [], "filters_applied": {"country": "США"}}


def test_exclude_unknown_ids_changes_nothing(catalog_db):
    unknown = ["00000000-0000-0000-0000-000000000000", "6F9619FF-8B86-D011-B42D-00C04FC964FF"]
    assert search(catalog_db, wine_type="white", exclude_ids=unknown) == search(catalog_db, wine_type="white")


# ---------------------------------------------------------------- the response format


def test_response_format_is_seeds_002_plus_id(catalog_db, shipped_wines):
    catalogue = by_key(shipped_wines)
    result = search(catalog_db, limit=MAX_LIMIT)
    # plus "photos" (photo keys by wine id) when a wine found has one: the agent strips it before the model reads
    assert set(result) - {"photos"} == {"found", "matched", "wines", "filters_applied"}
    assert result["found"] == len(result["wines"]) == MAX_LIMIT
    for wine in result["wines"]:
        assert set(wine) == WINE_KEYS
        source = catalogue[(wine["name"], wine["producer"], wine["vintage_year"])]
        assert wine["region"] == ", ".join(p for p in (source["region"], source["country"]) if p)
        assert wine["grape_varieties"] == source["grape_varieties"]
        assert wine["food_pairings"] == [" ".join(p.split()) for p in source["food_pairings"]]
        for field in ("wine_type", "sweetness", "body", "tannins", "acidity"):
            assert wine[field] == source[field], field
        for field, limit in (("description", 600), ("tasting_notes", 400)):  # whole sentences, shortened
            assert 0 < len(wine[field]) <= limit and wine[field].rstrip("…") in " ".join(source[field].split())
        assert wine["price_rub"] == source["price_rub"]
        assert isinstance(wine["price_rub"], int) == float(source["price_rub"]).is_integer()
        assert isinstance(wine["id"], str) and len(wine["id"]) == 36


def test_region_field_reads_region_then_country(catalog_db):
    wine = search(catalog_db, grape_variety="Malbec", country="Аргентина")["wines"][0]
    assert wine["region"] == "Мендоса, Аргентина"


def test_nv_wines_have_null_vintage(catalog_db, shipped_wines):
    nv = {key(w) for w in shipped_wines if w["vintage_year"] is None}
    assert nv
    found = search(catalog_db, wine_type="sparkling", limit=MAX_LIMIT)
    assert any(w["vintage_year"] is None for w in found["wines"])


def test_ids_are_stable_across_calls_and_tools(catalog_db):
    wine = search(catalog_db, region="Мендоса")["wines"][0]
    fetched = handle({"tool": "get_wines", "arguments": {"ids": [wine["id"]]}}, catalog_db)
    assert fetched["wines"][0]["name"] == wine["name"]


# ---------------------------------------------------------------- known gaps in the broad dish words


@pytest.mark.parametrize(
    "broad,dishes",
    [
        ("мясо", ("телятин",)),
        ("сыр", ("пармезан", "пекорино", "сулугуни")),
        ("морепродукты", ("омар",)),
    ],
    ids=["meat-veal", "cheese-named-cheeses", "seafood-lobster"],
)
def test_broad_dish_words_cover_named_dishes(catalog_db, shipped_wines, broad, dishes):
    missed = []
    for wine in shipped_wines:
        if not pairing_has(*dishes)(wine):
            continue
        result = search(
            catalog_db,
            food_pairing=broad,
            country=wine["country"],
            price_min=wine["price_rub"],
            price_max=wine["price_rub"],
            limit=MAX_LIMIT,
        )
        if wine["name"] not in _names(result):
            missed.append(wine["name"])
    if not any(pairing_has(*dishes)(w) for w in shipped_wines):
        pytest.skip(f"the catalogue has no wine paired with {dishes}")
    assert not missed, f"'{broad}' misses {missed}"


@pytest.mark.parametrize("phrase", ["Pinot Grigio", "pinot gris", "Пино Гри"])
def test_pinot_grigio_by_its_usual_names(catalog_db, shipped_wines, phrase):
    result = search(catalog_db, grape_variety=phrase, limit=MAX_LIMIT)
    assert_matches(result, shipped_wines, grape_is("Пино Гриджио", "Пино Гри"))
    assert result["found"] > 0


ENGLISH_GRAPE_NAMES = [
    ("Gamay", "Гаме"),
    ("Verdejo", "Вердехо"),
    ("Petit Verdot", "Пти Вердо"),
    ("Furmint", "Фурминт"),
    ("Lambrusco", "Ламбруско"),
    ("Pinot Meunier", "Пино Менье"),
    ("Mourvedre", "Мурведр"),
    ("Vermentino", "Верментино"),
    ("Cinsault", "Сенсо"),
]


def test_english_names_of_catalogue_grapes(catalog_db, shipped_wines):
    missed = []
    for phrase, grape in ENGLISH_GRAPE_NAMES:
        assert expected(shipped_wines, grape_is(grape)), grape
        result = search(catalog_db, grape_variety=phrase, limit=MAX_LIMIT)
        if set(result_keys(result)) != expected(shipped_wines, grape_is(grape)):
            missed.append(phrase)
    assert not missed, f"not found by English name: {missed}"
