"""A shop's file read as rows (catalog/reader.py), each row in the catalogue's terms and sorted into wine or
not (catalog/shop_rows.py), and its missing facts inferred (catalog/enrich.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sommelier.catalog.enrich import enrich
from sommelier.catalog.reader import CatalogFileError, read_rows
from sommelier.catalog.shop_rows import RowKind, in_stock, row_kind, shop_row

ROW = {"name": "Вино Шабли сухое белое", "price": 2000}


@pytest.mark.parametrize("key", ["items", "products", "offers", "data", "wines", "Товары"])
def test_json_rows_under_any_top_level_key(tmp_path, key):
    path = tmp_path / "shop.json"
    path.write_text(json.dumps({"updated": "2026-02-28", key: [ROW, ROW]}, ensure_ascii=False), encoding="utf-8")
    rows = read_rows(path)
    assert [(r.row, r.line, r.item["name"]) for r in rows] == [(1, 0, ROW["name"]), (2, 0, ROW["name"])]


def test_json_rows_nested_or_grouped_by_category(tmp_path):
    nested = tmp_path / "nested.json"
    nested.write_text(json.dumps({"result": {"data": {"items": [ROW]}}}), encoding="utf-8")
    assert [r.item for r in read_rows(nested)] == [ROW]
    grouped = tmp_path / "grouped.json"
    grouped.write_text(json.dumps({"rotweine": [ROW], "weissweine": [ROW, ROW]}), encoding="utf-8")
    assert [(r.row, r.group) for r in read_rows(grouped)] == [(1, "rotweine"), (2, "weissweine"), (3, "weissweine")]


def test_pretty_json_rows_keep_their_lines(tmp_path):
    path = tmp_path / "pretty.json"
    path.write_text(json.dumps({"items": [ROW, ROW]}, ensure_ascii=False, indent=2), encoding="utf-8")
    assert [r.line for r in read_rows(path)] == [3, 7]


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_csv_with_any_delimiter(tmp_path, delimiter):
    path = tmp_path / "shop.csv"
    path.write_text(
        delimiter.join(["Артикул", "Наименование", "Цена"]) + "\nA1" + delimiter + "Риоха" + delimiter + "990\n"
    )
    [row] = read_rows(path)
    assert row.item == {"Артикул": "A1", "Наименование": "Риоха", "Цена": "990"} and (row.row, row.line) == (1, 2)


def test_yml_with_entities_is_refused(tmp_path):
    path = tmp_path / "feed.yml"
    path.write_text(
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><yml_catalog><shop><offers>'
        "<offer id='1'><name>&a;</name></offer></offers></shop></yml_catalog>"
    )
    with pytest.raises(CatalogFileError, match="не читается как YML"):
        read_rows(path)


def test_a_shops_columns_id_and_stock():
    row = shop_row({"id": "РТ-00000455", "name": "X", "price": 1, "qty": 0.0, "wineColor": "Белое", "category": "Вино"})
    assert row.item["sku"] == "РТ-00000455" and "id" not in row.item
    assert row.item["wine_type"] == "Белое" and row.category == "Вино" and row.available is False
    nested = shop_row({"RPC": "u-1", "title": "Y", "metadata": {"Страна": "Италия"}, "stock": {"in_stock": True}})
    assert (nested.item["sku"], nested.item["name"], nested.item["country"], nested.available) == (
        "u-1",
        "Y",
        "Италия",
        True,
    )
    assert shop_row({"name": "Z", "color": "—"}).item["wine_type"] == ""


@pytest.mark.parametrize(
    ("cell", "said"),
    [(0, False), ("3.0", True), ("нет в наличии", False), ("В наличии", True), ("", None), (True, True)],
)
def test_stock_cells(cell, said):
    assert in_stock(cell) is said


@pytest.mark.parametrize(
    ("name", "category", "colour", "kind"),
    [
        ('Вино выдержанное сухое красное регион Тоскана "Поджио ай Джинепри"', "Джин", "", RowKind.WINE),
        ("Вино полусухое белое «Рислинг»", "Безалкогольное", "", RowKind.WINE),
        ("Кавалан Шерри Оак, 0.7 Л", "Крепкий алкоголь / Виски", "", RowKind.NOT_WINE),
        ('Виски зерновой "Буллет Бурбон"', "Виски", "", RowKind.NOT_WINE),
        ('Портвейн крепкий марочный регион Дору "ЛБВ"', "Другое", "", RowKind.FORTIFIED),
        ("Элиас Мора Крианса, 0.75 Л, Красное", "Вино / Вино тихое", "Красное", RowKind.WINE),
        ('Печенье "Амаретти" 170гр', "Другое", "", RowKind.UNKNOWN),
        ('Чипсы "San Carlo" лайм и розовый перец', "Другое", "", RowKind.NOT_WINE),
        ('Приправа для шашлыка 44 г "Розовая"', "Другое", "", RowKind.UNKNOWN),
        ("Le Black Creation Brut в подарочной упаковке", "", "sparkling", RowKind.WINE),
        ("Truchard", "Chardonnay", "", RowKind.WINE),
        ("Caymus Napa 1L", "International Red", "", RowKind.WINE),
        ("Malbec", "", "", RowKind.WINE),
    ],
)
def test_what_is_wine(name, category, colour, kind):
    assert row_kind(name, category, colour) == kind


def test_enrichment_fills_only_what_is_empty_and_marks_it():
    item = {
        "name": 'Вино сортовое ординарное сухое белое региона Бургундия "Шабли АОС", год урожая 2023',
        "country": "Франция",
    }
    out = enrich(item, "Вино")
    assert (out["wine_type"], out["sweetness"], out["appellation"], out["region"]) == (
        "white",
        "dry",
        "Шабли",
        "Бургундия",
    )
    assert out["grape_varieties"] == ["Шардоне"] and out["vintage_year"] == 2023
    assert out["country"] == "Франция" and "country" not in out["inferred"]  # the shop's value, not a guess
    assert set(out["inferred"]) == {
        "wine_type",
        "sweetness",
        "appellation",
        "region",
        "grape_varieties",
        "vintage_year",
    }


def test_an_exported_inferred_value_keeps_its_mark_until_the_owner_changes_it():
    first = enrich({"name": "Вино Кьянти Классико красное сухое"}, "")
    unchanged = enrich({**first}, "")
    assert set(unchanged["inferred"]) == set(first["inferred"])
    edited = enrich({**first, "region": "Кьянти"}, "")
    assert edited["region"] == "Кьянти" and "region" not in edited["inferred"]


def test_shorthand_and_a_sparkling_legal_name():
    assert enrich({"name": "Вино Кастильони 21 кр.сух"}, "")["wine_type"] == "red"
    sparkling = enrich({"name": 'Вино игристое "Кава Брют" белое брют', "wine_type": "Белое"}, "Вино")
    assert (sparkling["wine_type"], sparkling["colour"], sparkling["country"]) == ("sparkling", "white", "Испания")


# A German winery's price list (tests/data/catalogues/SOURCES.md), grouped under German category keys; the
# expectations are read off the file by hand: the colour from the group (a name that states its own colour
# wins: «weiß gekeltert», pressed white), the sweetness from the name's German word where there is one.
FELLBACHER = Path(__file__).resolve().parents[1] / "data" / "catalogues" / "fellbacher_wines.json"
_GROUP_COLOUR = {"weißweine": "white", "rotweine": "red", "roséweine": "rose"}
_GERMAN_SWEETNESS = {"trocken": "dry", "feinherb": "semi_dry"}


def test_a_german_price_list_is_all_wine_with_colour_and_sweetness_from_its_words():
    from sommelier.catalog.importer import prepare_rows

    groups = json.loads(FELLBACHER.read_text(encoding="utf-8"))
    expected = {}
    for group, items in groups.items():
        for item in items:
            colour = "white" if "weiß gekeltert" in item["name"] else _GROUP_COLOUR[group]
            words = item["name"].split()
            sweetness = next((_GERMAN_SWEETNESS[w] for w in words if w in _GERMAN_SWEETNESS), None)
            expected[item["name"]] = (colour, sweetness)

    prepared = prepare_rows(read_rows(FELLBACHER), FELLBACHER.parent)

    assert dict(prepared.skipped) == {}
    assert len(prepared.records) == len(expected) == 29
    for record in prepared.records:
        colour, sweetness = expected[record.name]
        assert record.wine_type == colour, record.name
        if sweetness is not None:
            assert record.sweetness == sweetness, record.name
        assert "wine_type" in record.inferred and "sweetness" in record.inferred  # neither was a cell of the file


@pytest.mark.parametrize(
    ("category", "colour"),
    [
        ("Vini Rossi", "red"),
        ("Vins rouges", "red"),
        ("Vinos tintos", "red"),
        ("Rotweine", "red"),
        ("Vini Bianchi", "white"),
        ("Vins blancs", "white"),
        ("Vinos blancos", "white"),
        ("Weißweine", "white"),
        ("Rosati", "rose"),
        ("Vinos rosados", "rose"),
        ("Roséweine", "rose"),
    ],
)
def test_an_importers_category_in_its_own_language_says_wine_and_colour(category, colour):
    """A distributor's list filed under «Vini Rossi» or «Vins blancs»: a name without style words is wine."""
    row = shop_row({"name": "2021 Tenuta Nuova Riserva", "price": 1900, "category": category})
    assert row.category == category
    assert row_kind(row.item["name"], row.category, row.item.get("wine_type") or "") == RowKind.WINE
    assert enrich(row.item, row.category)["wine_type"] == colour
