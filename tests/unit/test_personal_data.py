"""A customer's personal data masked before the owner's reports and the logs (sommelier.language.personal).
Every expectation is written by hand from the message; the wine request around it must survive."""

from __future__ import annotations

import logging

import pytest
from sommelier.language.personal import mask_personal

MASKED = [
    (
        "Меня зовут Иван Петров, мой телефон +7 (916) 123-45-67, нужно красное сухое к стейку до 2000",
        "Меня зовут [имя], мой телефон [телефон], нужно красное сухое к стейку до 2000",
    ),
    ("доставьте на ул. Ленина, д. 5, кв. 12 бутылку Мальбека", "доставьте на [адрес] бутылку Мальбека"),
    ("пишите на ivan.petrov@mail.ru или @ivan_petrov, t.me/ivanp", "пишите на [e-mail] или [ник], [ссылка на профиль]"),
    ("карта 4276 1234 5678 9012, оплачу", "карта [номер карты], оплачу"),
    ("меня зовут ольга, хочу розе", "меня зовут [имя], хочу розе"),
    ("вино для мамы Ольги на юбилей, 8 916 123 45 67", "вино для мамы [имя] на юбилей, [телефон]"),
    ("привезите на Тверскую улицу, 12 к 19:00", "привезите на [адрес] к 19:00"),
    ("пр-т Мира 7к2, подъезд 3", "[адрес]"),
    ("С уважением, Анна", "С уважением, [имя]"),
    ("звоните 89161234567", "звоните [телефон]"),
    ("доставка на Ленинский проспект 45, кв 3, домофон 45К", "доставка на [адрес]"),
    ("на день рождения Саши, бюджет 5 тысяч", "на день рождения [имя], бюджет 5 тысяч"),
    ("игристое, мой номер 8-800-555-35-35", "игристое, мой номер [телефон]"),
    ("ул большая дмитровка 5 и красное вино", "[адрес] и красное вино"),
]

KEPT = [
    "Посоветуйте Санджовезе или Мальбек до 1500-2000",
    "Роза или белое?",
    "аромат розы и лев на этикетке",
    "красное сухое от 1000 до 3000 рублей, 2019 год",
    "Шабли 2020 и Бордо 2015, 3 бутылки",
    "Сассикайя до 5000 есть?",
    "кот дю рон к сыру",
    "белое к рыбе, 5 бутылок, дома праздник",
    "красное к пасте в 19.30",
    "Простое фруктовое вино на каждый день",
    "у меня аллергия на сульфиты, что посоветуете?",
    "Пино нуар из Бургундии, 2018",
]


@pytest.mark.parametrize(("message", "expected"), MASKED)
def test_personal_data_is_masked_and_the_request_kept(message, expected):
    assert mask_personal(message) == expected


@pytest.mark.parametrize("message", KEPT)
def test_a_wine_request_without_personal_data_is_left_as_it_is(message):
    assert mask_personal(message) == message


def test_a_log_line_keeps_its_ids_and_masks_what_a_customer_wrote():
    line = "chat 6011223344 update 880000126: +7 916 123-45-67, ivan@mail.ru"
    assert (
        mask_personal(line, names=False, bare_numbers=False) == "chat 6011223344 update 880000126: [телефон], [e-mail]"
    )


def test_every_log_record_is_masked(caplog):
    from sommelier.observability.redaction import install_record_redaction

    install_record_redaction()
    with caplog.at_level(logging.INFO):
        logging.getLogger("sommelier.test").info("tool failed for %r", "позвоните +7 (916) 123-45-67 или a.b@c.ru")
    assert "123-45-67" not in caplog.text and "a.b@c.ru" not in caplog.text
    assert "[телефон]" in caplog.text and "[e-mail]" in caplog.text
