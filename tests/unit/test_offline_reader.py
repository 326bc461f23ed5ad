"""The offline reader: Russian phrasings → kind, search_wines filters, mood; follow-ups; the glossary."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from sommelier import language
from sommelier.offline.reader import QueryIntent, read_query

# (message, expected kind, expected filters (exactly), mood: None = no mood, str = a stem the mood contains)
CASES: list[tuple[str, str, dict, str | None]] = [
    # wine type in any case / gender
    ("Посоветуй красное", "recommendation", {"wine_type": "red"}, None),
    ("хочу красного", "recommendation", {"wine_type": "red"}, None),
    ("бутылку белого, пожалуйста", "recommendation", {"wine_type": "white"}, None),
    ("БЕЛОЕ ВИНО", "recommendation", {"wine_type": "white"}, None),
    ("розовое", "recommendation", {"wine_type": "rose"}, None),
    ("есть розе?", "recommendation", {"wine_type": "rose"}, None),
    ("игристое", "recommendation", {"wine_type": "sparkling"}, None),
    ("бутылку шампанского", "recommendation", {"wine_type": "sparkling"}, None),
    ("брют", "recommendation", {"wine_type": "sparkling", "sweetness": "dry"}, None),
    ("просекко", "recommendation", {"wine_type": "sparkling", "grape_variety": "Глера"}, None),
    ("розовое игристое", "recommendation", {"wine_type": "sparkling"}, None),
    ("красное или белое — не знаю", "recommendation", {}, None),
    ("вино из Красностопа", "recommendation", {"grape_variety": "Красностоп"}, None),
    # sweetness
    ("сухое красное", "recommendation", {"wine_type": "red", "sweetness": "dry"}, None),
    ("полусухое белое", "recommendation", {"wine_type": "white", "sweetness": "semi_dry"}, None),
    ("полусладкое", "recommendation", {"sweetness": "semi_sweet"}, None),
    ("что-нибудь сладкое", "recommendation", {"sweetness": "sweet"}, None),
    ("десертное вино", "recommendation", {"sweetness": "sweet"}, None),
    ("не сладкое белое", "recommendation", {"wine_type": "white", "sweetness": "dry"}, None),
    # prices
    ("красное до 2000", "recommendation", {"wine_type": "red", "price_max": 2000}, None),
    ("вино до 2 000 ₽", "recommendation", {"price_max": 2000}, None),
    ("белое до 2000 рублей", "recommendation", {"wine_type": "white", "price_max": 2000}, None),
    ("не дороже 1500", "recommendation", {"price_max": 1500}, None),
    ("что-нибудь дешевле полутора тысяч", "recommendation", {"price_max": 1500}, None),
    ("вино дешевле тысячи", "recommendation", {"price_max": 1000}, None),
    ("до трёх тысяч", "recommendation", {"price_max": 3000}, None),
    ("около 3к", "recommendation", {"price_min": 2250, "price_max": 3750}, None),
    ("примерно 3000", "recommendation", {"price_min": 2250, "price_max": 3750}, None),
    ("в районе 3 тысяч", "recommendation", {"price_min": 2250, "price_max": 3750}, None),
    ("от 1000 до 2000", "recommendation", {"price_min": 1000, "price_max": 2000}, None),
    ("от 1 до 2 тысяч", "recommendation", {"price_min": 1000, "price_max": 2000}, None),
    ("красное 1500-2000", "recommendation", {"wine_type": "red", "price_min": 1500, "price_max": 2000}, None),
    ("от 5000", "recommendation", {"price_min": 5000}, None),
    ("что-то дороже 5000", "recommendation", {"price_min": 5000}, None),
    ("вино за 1,5к", "recommendation", {"price_min": 1125, "price_max": 1875}, None),
    ("бюджетное красное", "recommendation", {"wine_type": "red", "price_max": 1500}, None),
    ("недорогое белое", "recommendation", {"wine_type": "white", "price_max": 1500}, None),
    ("премиальное красное", "recommendation", {"wine_type": "red", "price_min": 5000}, None),
    ("на подарок солидное", "recommendation", {"price_min": 3000}, "подар"),
    ("красное урожая 2015 года", "recommendation", {"wine_type": "red"}, None),
    ("игристое на 6 человек", "recommendation", {"wine_type": "sparkling"}, None),
    # grapes with case forms
    ("что-нибудь из мальбека", "recommendation", {"grape_variety": "Мальбек"}, None),
    ("бутылку пино нуара", "recommendation", {"grape_variety": "Пино Нуар"}, None),
    ("каберне", "recommendation", {"grape_variety": "Каберне"}, None),
    ("шираз", "recommendation", {"grape_variety": "Сира"}, None),
    ("Pinot Grigio", "recommendation", {"grape_variety": "Пино Гриджио"}, None),
    (
        "совиньон блан из Новой Зеландии",
        "recommendation",
        {"grape_variety": "Совиньон Блан", "country": "Новая Зеландия"},
        None,
    ),
    # countries and regions
    ("бутылку итальянского", "recommendation", {"country": "Италия"}, None),
    ("что-нибудь из Франции", "recommendation", {"country": "Франция"}, None),
    ("грузинское полусладкое", "recommendation", {"country": "Грузия", "sweetness": "semi_sweet"}, None),
    ("американское красное", "recommendation", {"country": "США", "wine_type": "red"}, None),
    ("вино из Тосканы", "recommendation", {"region": "Тоскана"}, None),
    ("бордо", "recommendation", {"region": "Бордо"}, None),
    ("белое бургундское", "recommendation", {"wine_type": "white", "region": "Бургундия"}, None),
    ("риоха", "recommendation", {"region": "Риоха"}, None),
    ("мальбек из Мендосы", "recommendation", {"grape_variety": "Мальбек", "region": "Мендоса"}, None),
    ("кубанское белое", "recommendation", {"wine_type": "white", "region": "Кубань"}, None),
    ("крымское вино", "recommendation", {"region": "Крым"}, None),
    # food
    ("красное к стейку", "recommendation", {"wine_type": "red", "food_pairing": "стейк"}, None),
    ("что взять под шашлык", "recommendation", {"food_pairing": "шашлык"}, None),
    ("белое к рыбе", "recommendation", {"wine_type": "white", "food_pairing": "рыба"}, None),
    ("вино с сыром", "recommendation", {"food_pairing": "сыр"}, None),
    ("к морепродуктам", "recommendation", {"food_pairing": "морепродукты"}, None),
    ("что-нибудь к пасте", "recommendation", {"food_pairing": "паста"}, None),
    ("вино к пицце", "recommendation", {"food_pairing": "пицца"}, None),
    ("к утке", "recommendation", {"food_pairing": "утка"}, None),
    ("сладкое к десерту", "recommendation", {"sweetness": "sweet", "food_pairing": "десерт"}, None),
    (
        "сухое красное к шашлыку до 2000",
        "recommendation",
        {"wine_type": "red", "sweetness": "dry", "food_pairing": "шашлык", "price_max": 2000},
        None,
    ),
    # mood
    ("что-нибудь лёгкое на летний вечер", "recommendation", {}, "летн"),
    ("вино для романтического ужина", "recommendation", {}, "романт"),
    ("красное для уютного вечера у камина", "recommendation", {"wine_type": "red"}, "камин"),
    ("игристое на праздник до 3000", "recommendation", {"wine_type": "sparkling", "price_max": 3000}, "праздн"),
    ("вино на пикник", "recommendation", {}, "пикник"),
    ("посоветуй вино", "recommendation", {}, None),
    # English / translit
    ("red wine under 2000", "recommendation", {"wine_type": "red", "price_max": 2000}, None),
    ("dry white for fish", "recommendation", {"wine_type": "white", "sweetness": "dry", "food_pairing": "рыба"}, None),
    ("krasnoe suhoe", "recommendation", {"wine_type": "red", "sweetness": "dry"}, None),
    # other kinds
    ("привет", "greeting", {}, None),
    ("Здравствуйте!", "greeting", {}, None),
    ("добрый вечер", "greeting", {}, None),
    ("привет, посоветуй красное", "recommendation", {"wine_type": "red"}, None),
    ("спасибо!", "thanks", {}, None),
    ("Спасибо большое, очень помогли", "thanks", {}, None),
    ("ок, понятно", "thanks", {}, None),
    ("👍", "thanks", {}, None),
    ("ок, а белое?", "recommendation", {"wine_type": "white"}, None),
    ("какую роль играет кислотность в белом?", "informational", {}, None),
    ("Покажи другие варианты по моему предыдущему запросу", "recommendation", {}, None),
    ("что ты умеешь?", "help", {}, None),
    ("/help", "help", {}, None),
    ("что такое танины", "informational", {}, None),
    ("чем брют отличается от сухого", "informational", {}, None),
    ("что значит терруар?", "informational", {}, None),
    ("при какой температуре подавать красное", "informational", {}, None),
    ("как хранить вино", "informational", {}, None),
    ("какая погода завтра в Москве", "off_topic", {}, None),
    ("кто победит на выборах?", "off_topic", {}, None),
    ("напиши код на python", "off_topic", {}, None),
    ("реши уравнение 2x + 3 = 7", "off_topic", {}, None),
    ("посоветуй хороший смартфон", "off_topic", {}, None),
    ("как приготовить борщ", "off_topic", {}, None),
    ("открыть счёт в банке", "off_topic", {}, None),
    ("что открыть к вареникам?", "recommendation", {}, None),  # a dish the layer does not know: still a wine ask
    ("вино к пельменям", "recommendation", {"food_pairing": "пельмени"}, None),
    ("что-нибудь к гусю", "recommendation", {"food_pairing": "гусь"}, None),
    # a food after «нотки», «аромат», «привкус» is a taste, not a dish to pair with
    ("Вино с нотками шоколада или какао", "recommendation", {}, "шоколада"),
    ("Что-нибудь с ароматом клубники", "recommendation", {}, "клубники"),
    ("Красное с оттенком вишни", "recommendation", {"wine_type": "red"}, "вишни"),
    ("Красное с нотами ванили к стейку", "recommendation", {"wine_type": "red", "food_pairing": "стейк"}, "ванили"),
    ("белое с привкусом груши, к рыбе", "recommendation", {"wine_type": "white", "food_pairing": "рыба"}, "груши"),
    ("красное к шоколаду", "recommendation", {"wine_type": "red", "food_pairing": "шоколад"}, None),
]


@pytest.mark.parametrize(("text", "kind", "filters", "mood"), CASES, ids=[c[0] for c in CASES])
def test_read_query(text, kind, filters, mood):
    intent = read_query(text)
    assert intent.kind == kind
    assert intent.filters == filters
    if mood is None:
        assert intent.mood is None
    else:
        assert intent.mood and mood in intent.mood
    assert not intent.follow_up


def test_table_is_large_enough():
    assert len(CASES) >= 40


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("что такое танины", "tannins"),
        ("чем брют отличается от сухого", "brut"),
        ("что значит терруар?", "terroir"),
        ("при какой температуре подавать красное", "serving_temperature"),
        ("как хранить вино", "storage"),
        ("что такое декантация?", "decanting"),
        ("что значит DOCG на этикетке", "appellation"),
        ("что такое купаж", "blend"),
        ("что означает NV на бутылке", "non_vintage"),
        ("что такое шампанский метод", "traditional_method"),
        ("какие бокалы нужны для игристого?", "glasses"),
    ],
)
def test_informational_topics(text, topic):
    intent = read_query(text)
    assert intent.kind == "informational"
    assert intent.topic == topic


PREVIOUS = read_query("красное сухое к стейку до 2000")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("а белое?", {"wine_type": "white", "sweetness": "dry", "food_pairing": "стейк", "price_max": 2000}),
        (
            "а что-нибудь из Италии?",
            {"wine_type": "red", "sweetness": "dry", "food_pairing": "стейк", "price_max": 2000, "country": "Италия"},
        ),
        ("а полусладкое?", {"wine_type": "red", "sweetness": "semi_sweet", "food_pairing": "стейк", "price_max": 2000}),
        ("а к рыбе?", {"wine_type": "red", "sweetness": "dry", "food_pairing": "рыба", "price_max": 2000}),
        ("а до 1000?", {"wine_type": "red", "sweetness": "dry", "food_pairing": "стейк", "price_max": 1000}),
        ("до 1500", {"wine_type": "red", "sweetness": "dry", "food_pairing": "стейк", "price_max": 1500}),
    ],
)
def test_follow_ups_change_one_thing(text, expected):
    intent = read_query(text, PREVIOUS)
    assert intent.kind == "recommendation"
    assert intent.follow_up
    assert intent.filters == expected


def test_cheaper_uses_the_cheapest_shown_price():
    previous = replace(PREVIOUS, shown_prices=[1890.0, 1790.0, 1390.0])
    for text in ("а подешевле?", "подешевле", "спасибо, а есть подешевле?", "а есть что-то дешевле?"):
        intent = read_query(text, previous)
        assert intent.follow_up and intent.price_direction == "cheaper", text
        assert intent.filters["price_max"] == 1389
        assert intent.filters["wine_type"] == "red" and intent.filters["food_pairing"] == "стейк"


def test_cheaper_without_shown_prices_lowers_the_budget():
    intent = read_query("а подешевле?", PREVIOUS)
    assert intent.filters["price_max"] < 2000


def test_cheaper_drops_a_price_floor_above_the_new_ceiling():
    previous = replace(read_query("красное около 3000"), shown_prices=[2490.0, 2690.0])
    intent = read_query("а подешевле?", previous)
    assert intent.filters == {"wine_type": "red", "price_max": 2489}


def test_pricier_lifts_the_budget():
    previous = replace(PREVIOUS, shown_prices=[1890.0, 1790.0])
    intent = read_query("а подороже?", previous)
    assert intent.price_direction == "pricier"
    assert intent.filters["price_min"] == 1891
    assert "price_max" not in intent.filters


@pytest.mark.parametrize(
    "text",
    [
        "ещё",
        "Ещё варианты",
        "другие варианты",
        "а есть что-нибудь ещё?",
        "покажи другие",
        "Покажи другие варианты по моему предыдущему запросу",
    ],
)
def test_more_keeps_the_request(text):
    intent = read_query(text, PREVIOUS)
    assert intent.follow_up and intent.more
    assert intent.filters == PREVIOUS.filters


def test_follow_up_keeps_the_mood():
    previous = read_query("красное для уютного зимнего вечера")
    intent = read_query("а подешевле?", replace(previous, shown_prices=[3000.0]))
    assert intent.mood == previous.mood
    assert intent.filters == {"wine_type": "red", "price_max": 2999}


def test_changing_colour_drops_the_grape():
    previous = read_query("мальбек к стейку")
    intent = read_query("а белое?", previous)
    assert intent.filters == {"wine_type": "white", "food_pairing": "стейк"}


def test_changing_country_drops_the_region():
    previous = read_query("красное из Тосканы")
    intent = read_query("а из Испании?", previous)
    assert intent.filters == {"wine_type": "red", "country": "Испания"}


def test_a_full_new_request_is_not_a_follow_up():
    intent = read_query("мальбек из Аргентины", PREVIOUS)
    assert not intent.follow_up
    assert intent.filters == {"grape_variety": "Мальбек", "country": "Аргентина"}


def test_greeting_and_questions_are_not_follow_ups():
    assert read_query("привет", PREVIOUS).kind == "greeting"
    assert read_query("спасибо", PREVIOUS).kind == "thanks"
    assert read_query("что такое танины?", PREVIOUS).kind == "informational"


def test_more_without_previous_is_a_plain_recommendation():
    intent = read_query("ещё")
    assert intent.kind == "recommendation" and intent.more and intent.filters == {}


def test_intent_is_a_plain_dataclass():
    intent = QueryIntent(kind="greeting", filters={}, mood=None, topic=None)
    assert intent.follow_up is False


# --------------------------------------------------------------------------- glossary


def test_glossary_has_enough_entries():
    assert len(language.glossary_topics()) >= 15
    required = {
        "tannins",
        "acidity",
        "body",
        "terroir",
        "brut",
        "sweetness",
        "decanting",
        "serving_temperature",
        "oak",
        "blend",
        "sommelier",
        "enoteca",
        "appellation",
        "vintage",
        "non_vintage",
        "traditional_method",
        "storage",
        "glasses",
    }
    assert required <= {t.key for t in language.glossary_topics()}


@pytest.mark.parametrize("key", [t.key for t in language.glossary_topics()])
def test_glossary_answers_are_short_plain_russian(key):
    entry = language.glossary_topic(key)
    sentences = re.findall(r"[.!?…](?=\s|$)", entry.answer)
    assert 2 <= len(sentences) <= 4, entry.answer
    assert len(entry.answer) <= 1000
    assert re.search(r"[а-я]", entry.answer)
    assert not re.search(r"[*_`<>#]", entry.answer)


def test_glossary_lookup_prefers_the_subject():
    assert language.glossary_topic_asked("чем брют отличается от сухого").key == "brut"
    assert language.glossary_topic_asked("Чем сухое отличается от брюта?").key == "sweetness"
    assert language.glossary_topic_asked("расскажи про погоду") is None


# --------------------------------------------------------------------------- robustness

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_VOCABULARY = (
    "красное белое розовое игристое брют сухое полусладкое до от около 2000 3к тысяч полутора к стейку "
    "рыбе под шашлык из Италии грузинское мальбека пино нуара лёгкое летний вечер подарок а ещё подешевле "
    "подороже что такое танины привет спасибо погода ? , ! - ₽ 1,5к 2 000"
).split()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_VOCABULARY), max_size=12), st.booleans())
def test_reader_never_fails_on_word_salad(parts, with_previous):
    previous = PREVIOUS if with_previous else None
    intent = read_query(" ".join(parts), previous)
    assert intent.kind in ("recommendation", "greeting", "thanks", "informational", "off_topic", "help")
    assert set(intent.filters) <= {
        "wine_type",
        "sweetness",
        "grape_variety",
        "price_min",
        "price_max",
        "country",
        "region",
        "food_pairing",
    }
    if "price_min" in intent.filters and "price_max" in intent.filters:
        assert intent.filters["price_min"] <= intent.filters["price_max"]
    if intent.kind != "recommendation":
        assert intent.filters == {}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_reader_reads_any_text_into_a_consistent_intent(text):
    intent = read_query(text)
    if intent.kind != "recommendation":
        assert intent.filters == {}
    if "price_min" in intent.filters and "price_max" in intent.filters:
        assert intent.filters["price_min"] <= intent.filters["price_max"]


@pytest.mark.parametrize(
    "text,wine_type",
    [
        ("Забудь про красное, давай белое к рыбе", "white"),
        ("вместо красного хочу розовое", "rose"),
        ("красное не хочу, давай белое", "white"),
        ("не надо красное, лучше игристое", "sparkling"),
    ],
)
def test_a_rejected_colour_gives_way_to_the_wanted_one(text, wine_type):
    assert read_query(text).filters.get("wine_type") == wine_type


@pytest.mark.parametrize(
    "text,price_min,price_max",
    [
        ("подарок начальнику, тысяч до пяти", None, 5000),
        ("красное тысячи за три", 2250, 3750),
        ("в пределах пятёрки", None, 5000),
        ("что-нибудь до пятихатки", None, 500),
        ("белое в пределах трёшки", None, 3000),
        ("около полутора", 1125, 1875),
        ("не дороже двух с половиной", None, 2500),
        ("за две с половиной тысячи", 1875, 3125),
        ("красное до пяти тысяч", None, 5000),
    ],
)
def test_budget_phrases_in_words(text, price_min, price_max):
    filters = read_query(text).filters
    assert (filters.get("price_min"), filters.get("price_max")) == (price_min, price_max), filters


@pytest.mark.parametrize("text", ["три бутылки красного", "вина на двух человек", "красное, пять бокалов"])
def test_number_words_without_a_budget_word_are_not_prices(text):
    filters = read_query(text).filters
    assert "price_min" not in filters and "price_max" not in filters, filters


@pytest.mark.parametrize(
    "text", ["Что-нибудь лёгкое и освежающее на жаркий летний день", "белое на жаркое лето", "в жаркую погоду"]
)
def test_hot_weather_is_a_mood_not_a_roast(text):
    # «жаркий» and the dish «жаркое» share a stem: only «жаркое из …» / «в горшочках» name the dish
    assert "food_pairing" not in read_query(text).filters


def test_a_roast_named_with_its_meat_is_food():
    assert read_query("красное к жаркому из говядины").filters.get("food_pairing")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # inflections and diminutives through the stems of wine_words.json, not an ending table
        ("хочу красного", {"wine_type": "red"}),
        ("красненькое к ужину", {"wine_type": "red"}),
        ("что-нибудь сухим и игристым", {"wine_type": "sparkling", "sweetness": "dry"}),
        ("несладкое белое", {"wine_type": "white", "sweetness": "dry"}),
        ("не сладкое розовое", {"wine_type": "rose", "sweetness": "dry"}),
        ("полусладенькое", {"sweetness": "semi_sweet"}),
        ("кремана бутылку", {"wine_type": "sparkling"}),
        ("krasnoe suhoe", {"wine_type": "red", "sweetness": "dry"}),
        # grapes in any case through language.grape_names_in
        ("вино к мерло", {"grape_variety": "Мерло"}),
        ("бутылку Пино Нуаром", {"grape_variety": "Пино Нуар"}),
        ("каберне совиньона до 3000", {"grape_variety": "Каберне Совиньон", "price_max": 3000}),
        ("мускатное", {"grape_variety": "Мускат"}),
    ],
)
def test_style_and_grape_words_in_any_form(text, expected):
    assert read_query(text).filters == expected


@pytest.mark.parametrize("text", ["аромат розы", "какую роль играет кислотность", "кот дю рон"])
def test_words_that_share_a_stem_with_a_style_or_grape_are_not_one(text):
    filters = read_query(text).filters
    assert "wine_type" not in filters and "grape_variety" not in filters, filters


# --------------------------------------------------------------------------- a wine asked for by name


@pytest.mark.parametrize(
    "text, name, vintage, filters",
    [
        (
            "Есть у вас Petrus 2010?",
            "Petrus 2010",
            2010,
            {"wine_type": "red", "grape_variety": "Мерло", "region": "Бордо"},
        ),
        ("Посоветуй Opus One", "Opus One", None, {"wine_type": "red", "region": "Долина Напа", "country": "США"}),
        ("есть Шато Марго?", "Шато Марго", None, {"wine_type": "red", "region": "Бордо"}),
        ("Dom Pérignon в наличии?", "Dom Pérignon", None, {"wine_type": "sparkling", "region": "Шампань"}),
        ("Есть у вас Vina Tondonia?", "Vina Tondonia", None, {}),
        ("Посоветуйте «Золотая балка»", "Золотая балка", None, {}),
        ("Сассикайя до 5000 есть?", "Сассикайя", None, {"region": "Тоскана", "price_max": 5000}),
    ],
)
def test_a_wine_asked_for_by_name(text, name, vintage, filters):
    intent = read_query(text)
    assert intent.kind == "recommendation"
    assert intent.wine_name == name and intent.wine_vintage == vintage
    assert filters.items() <= intent.filters.items(), intent.filters


@pytest.mark.parametrize(
    "text",
    [
        "Dan, посоветуй вино к утке",  # a Latin word in a request that states what it wants
        "Посоветуй Pinot Noir",  # a grape
        "есть у вас brut nature?",  # style words
        "Есть ли у вас Chianti Classico до 3000?",  # a place and a budget: a request, not a name
        "Напиши код на Python для сортировки списка",  # off-topic stays off-topic
        "что такое DOCG",
        "a dry red under 2000 please",  # an English request is not a name
        "моет ли вино посуду",  # «моет» is not Moët
    ],
)
def test_words_that_are_not_a_wine_name(text):
    assert read_query(text).wine_name is None, text


def test_every_named_wine_points_at_what_the_layer_knows():
    from sommelier import language

    for item in language.data("named_wines.json")["wines"]:
        assert item["wine_type"] in ("red", "white", "rose", "sparkling"), item["name"]
        assert item["grape"] is None or language.grape(item["grape"], fuzzy=False), item["name"]
        assert language.region(item["region"]) is not None, item["name"]
        assert language.region(item["region"]).country == item["country"], item["name"]
        assert language.named_wines_in(item["name"])[0][1].name == item["name"]


@pytest.mark.parametrize(
    "text, name", [("Хочу Brunello di Montalcino", "Brunello di Montalcino"), ("Ищу Cloudy Bay", "Cloudy Bay")]
)
def test_a_wine_looked_for_by_name(text, name):
    assert read_query(text).wine_name == name


@pytest.mark.parametrize(
    "text, country",
    [
        ("хочу наше вино", "Россия"),
        ("вина наших виноделов", "Россия"),
        ("вино к нашему ужину", None),  # «наш» alone is not Russia
        ("для нашей годовщины", None),
        ("Покажи мальбек из нашего каталога", None),
    ],
)
def test_our_is_russia_only_with_a_wine_word(text, country):
    assert read_query(text).filters.get("country") == country
