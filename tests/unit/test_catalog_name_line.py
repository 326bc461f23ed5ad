"""The caption's name line (issue 38, item 4): a shop's name carrying its vintage, producer, bottle size or
strength is shown without what the line says apart («— producer, vintage»); the catalogue keeps the name as
written. The lines a customer reads are taken from the fake Bot API."""

from __future__ import annotations

import pytest
from sommelier.catalog.importer import prepare_rows, read_catalog
from sommelier.domain.wine import Wine
from sommelier.language.name_line import name_line, volume_in
from sommelier.telegram.client import TelegramClient
from sommelier.telegram.render import render_wine

from tests.fakes.telegram_server import FakeTelegram


@pytest.mark.parametrize(
    ("name", "producer", "vintage", "line"),
    [
        (
            "Вино Красностоп Золотовский Ведерниковъ кр.сух. 2021",
            "Ведерниковъ",
            2021,
            "Вино Красностоп Золотовский красное сухое",
        ),
        ("Trapiche Sauvignon Blanc белое сухое 13.5%, 750мл", "Trapiche", None, "Sauvignon Blanc белое сухое"),
        ("Caymus Napa 1L", "", None, "Caymus Napa"),
        ("Chianti Classico DOCG 2019 г., 0,75 л", "", 2019, "Chianti Classico DOCG"),
        ("Кьянти (год урожая 2018)", "", 2018, "Кьянти"),
        ("Шато Тамань 2020", "", 2019, "Шато Тамань 2020"),  # another year than the vintage: the shop's, kept
        ("Шато Тамань", "Шато Тамань", None, "Шато Тамань"),  # the producer is the whole name: kept
        ("2021", "", 2021, "2021"),  # never empty
        ("Cielo Pinot Grigio Rose", "Cielo", 2022, "Pinot Grigio Rose"),
        ("Усадьба Мезыбь. Каберне Совиньон", "Мезыбь", None, "Усадьба Мезыбь. Каберне Совиньон"),  # inside the name
        ("Шабли Гран Крю АОС Водезир", "Шабли Гран Крю", None, "Шабли Гран Крю АОС Водезир"),  # less of a name left
    ],
)
def test_the_name_line_leaves_out_what_the_line_says_apart(name, producer, vintage, line):
    assert name_line(name, producer, vintage) == line


def test_a_size_in_the_name_is_read_as_written():
    assert [volume_in(n) for n in ("Каберне 0,75 л", "Merlot 750ml", "Caymus 1L", "Бордо 2019")] == [
        "0,75 л",
        "750ml",
        "1L",
        "",
    ]


def test_the_caption_of_an_imported_wine_whose_name_carries_its_producer_and_vintage(tmp_path):
    path = tmp_path / "list.csv"
    path.write_text(
        "Наименование;Производитель;Цена;Остаток, шт.\n"
        "Вино Красностоп Золотовский Ведерниковъ кр.сух. 2021 0,75 л;Ведерниковъ;1350;4\n"
        "Вино Красностоп Золотовский Ведерниковъ кр.сух. 2021 1,5 л;Ведерниковъ;2600;1\n",
        encoding="utf-8",
    )
    records = prepare_rows(read_catalog(path), tmp_path).records
    assert [(r.vintage_year, r.wine_type, r.sweetness, r.extra.get("volume")) for r in records] == [
        (2021, "red", "dry", "0,75 л"),
        (2021, "red", "dry", "1,5 л"),
    ]
    assert records[0].name.endswith("2021 0,75 л")  # the catalogue keeps the shop's name
    wine = Wine(**{**records[0].model_dump(exclude={"extra", "inferred", "image", "image_url", "sku"}), "id": "w1"})
    part = render_wine(wine, "Плотное и пряное.")
    with FakeTelegram() as fake, TelegramClient(fake.token, fake.base_url) as client:
        sent = client.send_message(77, part.html, parse_mode="HTML")
    first_line = sent.text.split("\n")[0]
    assert first_line == "Вино Красностоп Золотовский красное сухое — Ведерниковъ, 2021"
