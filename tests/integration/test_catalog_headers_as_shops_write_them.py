"""Headers and cells as shops write them (issue 38, item 3): padded to a fixed width, prices under other names
(`price_reg`, «Цена, руб.», «Розница»), stock under «Остаток, шт.», «Кол-во», «В наличии» or as the words
«нет в наличии», and a title repeated with another colour, volume or price: separate wines, each with a
generated article, never a refusal. Every expectation is written by hand from the rows below."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from sommelier.catalog.importer import prepare_rows, read_catalog


def prepared(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return prepare_rows(read_catalog(path), tmp_path)


def by_name(records) -> dict[str, object]:
    return {r.name: r for r in records}


def test_a_list_padded_to_a_fixed_width_with_its_price_under_price_reg(tmp_path):
    # A St Petersburg shop's list: every header and cell padded with spaces to the column's width.
    text = (
        "  art   ;name                                   ;color   ;price_reg ;  qty \n"
        "  1001  ;Вино Мукузани красное сухое             ;красное ;   1290   ;   4  \n"
        "  1002  ;Вино Цинандали белое сухое              ;белое   ;    990   ;   0  \n"
        "  1003  ;Вино Кокур десертный белый              ;белое   ;    790   ;   2  \n"
    )
    result = prepared(tmp_path, "spb.csv", text)
    wines = {r.sku: r for r in result.records}
    assert set(wines) == {"1001", "1002"}  # the Кокур is a dessert wine, left out as fortified
    assert dict(result.skipped) == {"fortified": 1}
    assert (wines["1001"].name, str(wines["1001"].price_rub), wines["1001"].wine_type) == (
        "Вино Мукузани красное сухое",
        "1290",
        "red",
    )
    assert wines["1001"].available and not wines["1002"].available  # qty 0: in the catalogue, not offered
    assert not result.problems


@pytest.mark.parametrize("price_header", ["Цена, руб.", "Розница", "Цена розн., руб.", "Розничная цена, ₽", "РРЦ"])
def test_a_price_under_the_names_shops_give_it(tmp_path, price_header):
    text = f"Наименование;Цвет;Сахар;{price_header}\nВино Саперави;красное;сухое;1 450 руб.\n"
    result = prepared(tmp_path, "price.csv", text)
    assert [(r.name, str(r.price_rub)) for r in result.records] == [("Вино Саперави", "1450")]


@pytest.mark.parametrize(
    ("stock_header", "cells", "available"),
    [
        ("Остаток, шт.", ["12", "0"], [True, False]),
        ("Кол-во", ["3", "0"], [True, False]),
        ("В наличии", ["да", "нет в наличии"], [True, False]),
        ("Наличие", ["есть в наличии", "нет на складе"], [True, False]),
        ("Остаток", ["много", "под заказ"], [True, False]),
    ],
)
def test_stock_under_the_names_shops_give_it(tmp_path, stock_header, cells, available):
    text = (
        f"Наименование;Цвет;Сахар;Цена;{stock_header}\n"
        f"Вино Ркацители;белое;сухое;700;{cells[0]}\n"
        f"Вино Красностоп;красное;сухое;900;{cells[1]}\n"
    )
    result = prepared(tmp_path, "stock.csv", text)
    assert [r.available for r in result.records] == available


def test_nyet_v_nalichii_as_a_cell_of_an_excel_list_under_a_title(tmp_path):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Прайс-лист на 01.12.2026"])
    sheet.append([])
    sheet.append(["  Артикул ", " Наименование ", "Цена, руб.", "Остаток, шт."])
    sheet.append(["ВЛ-0101", "Вино Шардоне белое сухое", 1200, 6])
    sheet.append(["ВЛ-0102", "Вино Пино Нуар красное сухое", 1900, "нет в наличии"])
    sheet.append(["ВЛ-0103", "Вино Рислинг белое полусухое", "  980 ", 0])
    book.save(tmp_path / "price.xlsx")
    result = prepare_rows(read_catalog(tmp_path / "price.xlsx"), tmp_path)
    assert {r.sku: r.available for r in result.records} == {"ВЛ-0101": True, "ВЛ-0102": False, "ВЛ-0103": False}
    assert str({r.sku: r for r in result.records}["ВЛ-0103"].price_rub) == "980"


def test_a_title_repeated_with_another_colour_volume_or_price_is_another_wine(tmp_path):
    text = (
        "Наименование;Цвет;Сахар;Объём, л;Цена\n"
        "Вино Шато Тамань;красное;сухое;0,75;650\n"  # the first
        "Вино Шато Тамань;белое;сухое;0,75;650\n"  # another colour
        "Вино Шато Тамань;красное;сухое;1,5;1200\n"  # another bottle size
        "Вино Шато Тамань;красное;сухое;0,75;690\n"  # another price (another batch)
        "Вино Шато Тамань;красное;сухое;0,75;650\n"  # the first again, word for word: listed, not a second wine
    )
    result = prepared(tmp_path, "repeats.csv", text)
    assert len(result.records) == 4
    skus = [r.sku for r in result.records]
    assert skus[0] is None and len(set(skus[1:])) == 3 and all(s.startswith("АВТО-") for s in skus[1:])
    assert [r.wine_type for r in result.records] == ["red", "white", "red", "red"]
    assert [str(r.price_rub) for r in result.records] == ["650", "650", "1200", "690"]
    assert len(result.problems) == 1 and "повтор" in str(result.problems[0]) and "строка 6" in str(result.problems[0])
    again = prepared(tmp_path, "repeats.csv", text)
    assert [r.sku for r in again.records] == skus  # the same rows get the same articles at the next import


def test_an_empty_colour_cell_is_not_a_missing_colour_column(tmp_path):
    text = "name;color;price\nВино Совиньон Блан белое сухое;;800\nМоя марка;;900\n"
    result = prepared(tmp_path, "colour.csv", text)
    assert [r.name for r in result.records] == ["Вино Совиньон Блан белое сухое"]
    assert len(result.problems) == 1
    assert "колонка «color»: пусто" in str(result.problems[0]) and "нет колонки «цвет" not in str(result.problems[0])
