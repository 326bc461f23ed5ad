"""The offline reader on what customers say beyond plain filters: negations, superlatives, numbers in words,
and a wine named in an availability question. Expectations written out by hand."""

from __future__ import annotations

import pytest
from sommelier.offline.reader import read_query

CASES = [
    ("красное, но не сухое", {"wine_type": "red", "exclude_sweetness": "dry"}),
    ("игристое, но не брют", {"wine_type": "sparkling", "exclude_sweetness": "dry"}),
    ("красное до 2000, только не итальянское", {"wine_type": "red", "price_max": 2000, "exclude_country": "Италия"}),
    ("белое без шардоне", {"wine_type": "white", "exclude_grape": "Шардоне"}),
    ("итальянское красное, но не кьянти", {"wine_type": "red", "country": "Италия", "exclude_region": "Кьянти"}),
    ("красное, но не кьянти классико", {"wine_type": "red", "exclude_region": "Кьянти Классико"}),
    ("белое, только не шабли", {"wine_type": "white", "exclude_region": "Шабли"}),
    ("белое, но не из бургундии", {"wine_type": "white", "exclude_region": "Бургундия"}),
    ("красное не тоскана", {"wine_type": "red", "exclude_region": "Тоскана"}),
    ("красное не из италии", {"wine_type": "red", "exclude_country": "Италия"}),
    ("не из россии белое", {"wine_type": "white", "exclude_country": "Россия"}),
    ("тоскана, но не дороже 2000", {"region": "Тоскана", "price_max": 2000}),
    ("вино из италии", {"country": "Италия"}),
    ("кроме розового что-нибудь к рыбе", {"food_pairing": "рыба", "exclude_wine_type": "rose"}),
    ("самое дорогое красное", {"wine_type": "red", "sort": "price_desc"}),
    ("самые дорогие вина", {"sort": "price_desc"}),
    ("самое дешёвое игристое", {"wine_type": "sparkling", "sort": "price_asc"}),
    ("лучшее белое до 3000", {"wine_type": "white", "price_max": 3000, "sort": "price_desc"}),
    ("бюджетное белое до тысячи трёхсот", {"wine_type": "white", "price_max": 1300}),
    ("до двух тысяч пятисот", {"price_max": 2500}),
    ("красное до полторы тысячи", {"wine_type": "red", "price_max": 1500}),
    ("до двух с половиной тысяч", {"price_max": 2500}),
    ("в пределах пятёрки", {"price_max": 5000}),
    ("санжовезе", {"grape_variety": "Санджовезе"}),
    ("небиоло", {"grape_variety": "Неббиоло"}),
    ("брунелло ди монтальчино", {"region": "Брунелло ди Монтальчино"}),
]


@pytest.mark.parametrize(("text", "filters"), CASES, ids=[t for t, _ in CASES])
def test_the_reader_reads_it(text, filters):
    intent = read_query(text)
    assert intent.kind == "recommendation" and intent.filters == filters, intent.filters


def test_a_cheap_superlative_is_no_price_level():
    """«самое дешёвое» orders by price; it is not «дешёвое» (a ceiling of 1 500 ₽)."""
    assert "price_max" not in read_query("самое дешёвое красное").filters
    assert "price_min" not in read_query("самое дорогое белое").filters


def test_a_follow_up_takes_back_what_it_names():
    first = read_query("красное, но не сухое")
    assert read_query("а сухое?", first).filters == {"wine_type": "red", "sweetness": "dry"}
    dearest = read_query("самое дорогое красное")
    assert "sort" not in read_query("а подешевле?", dearest).filters


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Есть Шабли Премье Крю Вайон?", "Шабли Премье Крю Вайон"),
        ("Брунелло ди Монтальчино есть?", "Брунелло ди Монтальчино"),
        ("Есть Мукузани?", "Мукузани"),
        ("Chateau Latour есть в наличии?", "Chateau Latour"),
    ],
)
def test_a_capitalised_name_in_an_availability_question(text, name):
    assert read_query(text).wine_name == name


@pytest.mark.parametrize("text", ["Есть ли у вас Мерло?", "есть красное до 2000?", "Есть ли у вас что-нибудь к рыбе?"])
def test_known_words_are_no_wine_name(text):
    assert read_query(text).wine_name is None
