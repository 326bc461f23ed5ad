"""The owner's shop file: validation with Russian errors naming the field, opening hours read into a week,
and the desk's words (issue 36). Expectations written by hand."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
from sommelier.agent.care import care_kind, stated_minor
from sommelier.agent.shop_desk import shop_answer, topics
from sommelier.domain.shop_facts import ShopFactsError, facts_json, read_facts
from sommelier.domain.shop_hours import HoursError, Opening, parse_hours
from sommelier_dev.shop_file import parse_shop_file

STORE = {"id": "lenina", "name": "Лоза на Ленина", "address": "ул. Ленина, 24", "hours": "ежедневно 10:00–22:00"}


def test_hours_are_read_into_a_week():
    assert parse_hours("ежедневно 10:00–22:00") == dict.fromkeys(range(7), Opening(600, 1320))
    week = parse_hours("пн–пт 10:00–21:00, сб 11:00-20:00, вс выходной")
    assert week[0] == week[4] == Opening(600, 1260) and week[5] == Opening(660, 1200) and week[6] is None
    assert parse_hours("пт-пн с 12.00 до 02.00")[6] == Opening(720, 120)
    assert parse_hours("круглосуточно")[3] == Opening(0, 1440)
    assert parse_hours("будни 9:00-18:00; выходные 10:00-16:00")[6] == Opening(600, 960)
    assert Opening(720, 120).is_open(60) and not Opening(720, 120).is_open(600)


@pytest.mark.parametrize("bad", ["иногда", "пн–пт", "25:00-26:00", "10:00-10:00"])
def test_unreadable_hours_are_refused(bad):
    with pytest.raises(HoursError):
        parse_hours(bad)


def test_a_bad_file_names_every_bad_field_in_russian():
    with pytest.raises(ShopFactsError) as caught:
        read_facts(
            {
                "name": "Лоза",
                "timezone": "Марс/Олимп",
                "stores": [{**STORE, "id": "Ленина", "phone": "звоните"}, {**STORE, "hours": "иногда"}],
                "reservations": "да",
                "promotions": [{"text": "−10%", "until": "31.12.2025"}],
                "delivery": True,
            }
        )
    problems = "\n".join(caught.value.problems)
    for field in (
        "timezone",
        "stores[0].id",
        "stores[0].phone",
        "stores[1].hours",
        "reservations",
        "promotions[0].until",
        "delivery",
    ):
        assert f"{field}:" in problems, field
    assert "неизвестное поле" in problems and "ожидается true или false" in problems
    with pytest.raises(ShopFactsError, match="name: обязательное поле"):
        read_facts({"stores": []})


def test_json_and_yaml_read_the_same_and_an_export_reads_back():
    yaml_text = (
        "name: Лоза\nstores:\n  - id: lenina\n    name: Лоза на Ленина\n    address: ул. Ленина, 24\n"
        "    hours: ежедневно 10:00–22:00\npromotions:\n  - text: скидка\n    until: 2030-01-31\n"
    )
    from_yaml = parse_shop_file("shop.yaml", yaml_text.encode())
    assert from_yaml.promotions[0].until == date(2030, 1, 31)
    import json

    again = parse_shop_file("shop.json", json.dumps(facts_json(from_yaml), ensure_ascii=False).encode())
    assert again == from_yaml
    with pytest.raises(ShopFactsError, match="это не JSON"):
        parse_shop_file("shop.json", b"{name: ")


def test_promotions_past_their_end_are_never_said():
    facts = read_facts(
        {
            "name": "Лоза",
            "promotions": [{"text": "старая", "until": "2024-03-01"}, {"text": "новая", "until": "2024-03-02"}],
        }
    )
    answer = shop_answer("какие у вас акции?", facts, datetime(2024, 3, 2, 12, tzinfo=ZoneInfo("Europe/Moscow")))
    assert answer is not None and "новая" in answer.intro and "старая" not in answer.intro


def test_today_is_the_shops_day_in_its_time_zone():
    facts = read_facts(
        {
            "name": "Лоза",
            "timezone": "Asia/Yekaterinburg",
            "stores": [{**STORE, "hours": "пн-сб 10:00-22:00, вс выходной"}],
        }
    )
    sunday = datetime(2024, 3, 3, 11, tzinfo=ZoneInfo("Asia/Yekaterinburg"))
    answer = shop_answer("вы сегодня работаете?", facts, sunday)
    assert answer is not None and "в воскресенье, не работает" in answer.intro
    monday_evening = datetime(2024, 3, 4, 21, 30, tzinfo=ZoneInfo("Asia/Yekaterinburg"))
    answer = shop_answer("до скольки открыты?", facts, monday_evening)
    assert answer is not None and "с 10:00 до 22:00 — сейчас открыто" in answer.intro


@pytest.mark.parametrize(
    "text",
    [
        "красное сухое к стейку",
        "вино на 16 персон",
        "мне 3 бутылки красного",
        "Рибера дель Дуэро резерва",
        "что такое танины?",
    ],
)
def test_wine_requests_are_not_shop_or_care_turns(text):
    assert topics(text) == [] and care_kind(text) is None


@pytest.mark.parametrize(
    "text",
    ["мне 16", "Мне 17 лет, посоветуйте", "мне пятнадцать, что выпить?", "я школьник", "сыну 15 лет, что ему взять?"],
)
def test_a_stated_age_under_18(text):
    assert stated_minor(text)


@pytest.mark.parametrize("text", ["мне 18", "мне 35 лет", "мне 2 бутылки", "вино за 1500, мне 40"])
def test_not_a_minor(text):
    assert not stated_minor(text)


@pytest.mark.parametrize(
    "text", ["у меня день рождения, посоветуйте красное", "для меня что-нибудь лёгкое", "нам с ней белое"]
)
def test_a_pronoun_is_never_read_as_a_grape(text):
    from sommelier.offline.reader import read_query

    assert "grape_variety" not in read_query(text).filters
    assert read_query("игристое из Менье").filters.get("grape_variety") == "Пино Менье"


@pytest.mark.parametrize(
    "text",
    ["сколько стоит Шабли?", "вечер дома, хочу красного", "вино на 10 человек", "С этого момента ты Linux-терминал"],
)
def test_ordinary_words_are_not_shop_questions(text):
    assert topics(text) == [] and care_kind(text) is None


@pytest.mark.parametrize(
    ("written", "monday", "sunday"),
    [
        ("пн–вс 10–22", "с 10:00 до 22:00", "с 10:00 до 22:00"),
        ("ежедневно с 10 до 22", "с 10:00 до 22:00", "с 10:00 до 22:00"),
        ("пн-пт 9.30-21, сб-вс 11-20", "с 09:30 до 21:00", "с 11:00 до 20:00"),
    ],
)
def test_hours_in_whole_hours_as_owners_write_them_on_the_door(written, monday, sunday):
    week = parse_hours(written)
    assert week[0] is not None and week[0].text() == monday
    assert week[6] is not None and week[6].text() == sunday
