"""Real shops' files, imported raw with `sommelier catalog import FILE --replace`: a 1C stock list, a
scraped retailer catalogue, a distributor's CSV, a shop's Excel price list, GetMyWine's seed and a YML feed
(tests/data/catalogues, sources in SOURCES.md there). Exactly the wine rows become available wines.
"""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest
from sommelier.catalog.importer import CatalogImportError, export_catalog, import_catalog
from sommelier.embeddings.local import LocalHashingEmbeddings
from sommelier.photos.store import LocalPhotoStore
from sommelier.repositories.adapters import in_process_repositories
from sommelier.toolfn.handler import handle

DATA = Path(__file__).resolve().parents[1] / "data" / "catalogues"

# The 1C list's wines filed under another category (read by hand: each name is «Вино …» with its style).
VINOTEKA_MISFILED_WINES = {
    "РТ-00000196", "РТ-00000202", "РТ-00000204", "РТ-00000205", "РТ-00000208",
    "РТ-00000298", "РТ-00000553", "РТ-00000754", "РТ-00000834",
}  # fmt: skip


def vinoteka_wine_skus() -> set[str]:
    items = json.loads((DATA / "vinoteka34_inventory.json").read_text("utf-8"))["items"]
    return {i["id"] for i in items if i["category"] == "Вино"} | VINOTEKA_MISFILED_WINES


def alkoteka_wine_skus() -> tuple[set[str], set[str]]:
    """(in stock, out of stock) of the retailer's still and sparkling grape wines, by its sections and its «Вид»
    (an alcohol-free wine and a fruit drink filed under «Вино» are not offered as wine)."""
    rows = json.loads((DATA / "alkoteka_every8th.json").read_text("utf-8"))
    wines = [
        r
        for r in rows
        if r["section"][0] in ("Вино", "Шампанское и игристое")
        and r["section"][1] not in ("Вино крепленое", "Вермут")
        and not any(word in r["metadata"].get("Вид", "") for word in ("безалкогольное", "Плодово-ягодный"))
    ]
    return {r["RPC"] for r in wines if r["stock"]["in_stock"]}, {r["RPC"] for r in wines if not r["stock"]["in_stock"]}


def run_import(path: Path, db, tmp_path: Path, *, replace: bool = True, strict: bool = False):
    return import_catalog(
        path,
        catalog=in_process_repositories(db).catalog,
        embedder=LocalHashingEmbeddings(),
        photos=LocalPhotoStore(tmp_path / "store"),
        replace=replace,
        strict=strict,
    )


def wines(db, where: str = "true") -> list[dict]:
    with db.connection() as conn:
        cur = conn.execute(f"SELECT * FROM wines WHERE {where} ORDER BY sku")  # nosec B608 - test SQL
        columns = [c.name for c in cur.description]
        return [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]


@pytest.fixture
def cli(monkeypatch, tmp_path, capsys):
    from sommelier_dev.cli.main import main

    def run(db, *args: str) -> tuple[int, str]:
        monkeypatch.setenv("DATABASE_URL", db.conninfo)
        monkeypatch.setenv("SOMMELIER_STATE_DIR", str(tmp_path / "state"))
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, " ".join((captured.out + captured.err).split())

    return run


@pytest.mark.parametrize(
    ("name", "available", "unavailable"),
    [
        ("vinoteka34_inventory.json", vinoteka_wine_skus(), set()),
        ("alkoteka_every8th.json", *alkoteka_wine_skus()),
    ],
)
def test_a_shops_raw_file_imports_in_one_command_and_exactly_its_wines_are_for_sale(
    fresh_db, cli, name, available, unavailable
):
    code, output = cli(fresh_db, "catalog", "import", DATA / name, "--replace")
    assert code == 0, output
    assert "пропущено строк не с вином" in output and "не вино" in output
    assert {w["sku"] for w in wines(fresh_db, "available")} == available
    assert {w["sku"] for w in wines(fresh_db, "NOT available AND sku IS NOT NULL")} >= unavailable


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("wine-assistant_dw_sample_products.csv", 16),  # 17 rows, one a grappa
        ("winestyle-parser_old.xlsx", 67),
        ("getmywine_wines_seed.json", 50),
        ("hand_written_market.yml", 6),  # 11 offers: a whisky, a corkscrew, a port; one unavailable, one at 0
    ],
)
def test_other_kinds_of_files_import_raw(empty_db, cli, name, expected):
    code, output = cli(empty_db, "catalog", "import", DATA / name, "--replace")
    assert code == 0, output
    assert len(wines(empty_db, "available")) == expected


def test_getmywine_seed_with_relative_photos_imports_without_them_and_says_so(empty_db, tmp_path):
    report = run_import(DATA / "getmywine_wines_seed.json", empty_db, tmp_path)
    assert report.rows == 50 and report.photos_uploaded == 0
    assert len(report.photos_failed) == 50
    assert all("/static/images/wines/" in line and "не веб-адрес" in line for line in report.photos_failed)
    stored = wines(empty_db)
    assert all(w["image_key"] is None and w["image_url"] is None for w in stored)
    assert all(w["extra"]["image_url_as_written"].startswith("/static/") for w in stored)


def test_the_1c_list_minified_imports_and_a_bad_row_is_named_by_position_and_sku(empty_db, tmp_path):
    document = json.loads((DATA / "vinoteka34_inventory.json").read_text("utf-8"))
    minified = tmp_path / "inventory.json"
    minified.write_text(json.dumps(document, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    assert "\n" not in minified.read_text("utf-8")
    assert run_import(minified, empty_db, tmp_path).rows == len(vinoteka_wine_skus())

    document["items"][4]["price"] = "бесплатно"
    minified.write_text(json.dumps(document, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    # by default the bad row is skipped and listed; its wine, already stored, keeps its price and stays for sale
    report = run_import(minified, empty_db, tmp_path)
    assert report.rows == len(vinoteka_wine_skus()) - 1 and report.changes.kept and not report.changes.delisted
    [problem] = report.problems
    assert problem.startswith("запись 5, «") and "sku РТ-00000077" in problem
    assert "колонка «price»: «бесплатно» — не цена" in problem
    assert [w["available"] for w in wines(empty_db, "sku = 'РТ-00000077'")] == [True]
    with pytest.raises(CatalogImportError) as info:  # --strict: all or nothing
        run_import(minified, empty_db, tmp_path, strict=True)
    [error] = info.value.errors
    assert str(error) == problem


def test_the_1c_list_is_enriched_and_the_owner_sees_coverage(empty_db, tmp_path, cli):
    run_import(DATA / "vinoteka34_inventory.json", empty_db, tmp_path)
    by_sku = {w["sku"]: w for w in wines(empty_db)}
    chablis = by_sku["РТ-00000228"]  # «Вино сортовое ординарное сухое белое региона Бургундия "Шабли АОС"…»
    assert (chablis["country"], chablis["region"], chablis["appellation"]) == ("Франция", "Бургундия", "Шабли")
    assert chablis["grape_varieties"] == ["Шардоне"] and chablis["vintage_year"] == 2023
    assert (chablis["wine_type"], chablis["sweetness"]) == ("white", "dry")
    assert "wine_type" not in chablis["inferred"]  # the shop's wineColor column said it
    assert {"country", "region", "appellation", "grape_varieties", "vintage_year"} <= set(chablis["inferred"])
    # one wine under two article codes (two volumes or vintages the name does not show): two wines
    same_name = [w for w in by_sku.values() if w["name"] == 'Вино игристое "Шампань Ля Фюзьонель. Г.Ришом" брют белое']
    assert len(same_name) == 3 and all(w["wine_type"] == "sparkling" for w in same_name)
    assert same_name[0]["extra"]["colour"] == "white"

    code, output = cli(empty_db, "catalog", "stats")
    assert code == 0
    coverage = handle({"tool": "catalog_stats", "arguments": {}}, empty_db)["coverage"]
    total = len(vinoteka_wine_skus())
    assert all(sum(counts.values()) == total for counts in coverage.values())
    assert coverage["producer"] == {"given": 0, "inferred": 0, "unknown": total}
    assert coverage["wine_type"]["given"] == total - coverage["wine_type"]["inferred"]
    assert coverage["country"]["inferred"] > total * 0.6 and coverage["grape_varieties"]["inferred"] > total * 0.6
    assert "поля вин в продаже (из файла / выведено из названий / неизвестно):" in output
    assert f"вин в каталоге: {total} — в продаже {total}, нет в продаже 0" in output
    # what to improve first: the largest gap, the producer no row names
    assert f"что улучшить первым: 1. производитель: нет у {total} из {total} вин в продаже" in output


def test_export_shows_inferred_values_and_carries_the_sku_so_an_edit_round_trips(empty_db, tmp_path):
    run_import(DATA / "hand_written_market.yml", empty_db, tmp_path)
    exported = export_catalog(in_process_repositories(empty_db).catalog, include_unavailable=True)["wines"]
    by_sku = {w["sku"]: w for w in exported}
    barolo = by_sku["W-1003"]
    assert barolo["available"] is False and barolo["region"] == "Пьемонт"
    assert {"country", "region", "grape_varieties"} <= set(barolo["inferred"])
    barolo["region"] = "Ланге"  # the owner corrects one inferred value
    (tmp_path / "edited.json").write_text(json.dumps({"wines": exported}, ensure_ascii=False), encoding="utf-8")
    report = run_import(tmp_path / "edited.json", empty_db, tmp_path)
    assert (report.inserted, report.updated) == (0, len(exported))
    [stored] = wines(empty_db, "sku = 'W-1003'")
    assert stored["region"] == "Ланге" and "region" not in stored["inferred"]
    assert {"country", "grape_varieties"} <= set(stored["inferred"]) and stored["available"] is False


def test_stock_zero_makes_a_wine_unavailable_and_stock_back_makes_it_available(empty_db, tmp_path):
    path = tmp_path / "stock.csv"
    path.write_text("Артикул;Наименование;Цена;Остаток\nA1;Вино Кьянти красное сухое;1500;0\n", encoding="utf-8")
    run_import(path, empty_db, tmp_path, replace=False)
    assert [w["available"] for w in wines(empty_db)] == [False]
    path.write_text("Артикул;Наименование;Цена;Остаток\nA1;Вино Кьянти красное сухое;1500;6\n", encoding="utf-8")
    run_import(path, empty_db, tmp_path, replace=False)
    assert [w["available"] for w in wines(empty_db)] == [True]


def test_an_excel_price_list_with_a_title_above_its_header(empty_db, tmp_path):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Прайс-лист ООО «Вино»"])
    sheet.append(["на 20.11.2026"])
    sheet.append(["Код", "Номенклатура", "Цена, руб.", "Кол-во", "Группа"])
    sheet.append([1001.0, "Вино Бароло DOCG красное сухое", 5490.0, 3, "Вино"])
    sheet.append([1002.0, "Коньяк армянский 5 лет", 2100.0, 5, "Коньяк"])
    sheet.append([1003.0, "Вино Сансер белое сухое", 3200.0, 0, "Вино"])
    book.save(tmp_path / "price.xlsx")
    report = run_import(tmp_path / "price.xlsx", empty_db, tmp_path)
    assert report.rows == 2 and report.skipped == {"not wine": 1} and report.unavailable == 1
    assert [(w["sku"], w["appellation"], w["available"]) for w in wines(empty_db)] == [
        ("1001", "Бароло", True),
        ("1003", "Сансер", False),
    ]


def test_a_blend_is_a_blend(empty_db, tmp_path):
    from sommelier.offline.wine_cards import _grapes_phrase

    path = tmp_path / "blend.csv"
    path.write_text("name,price,color,grapes\nКупаж Красный,900,красное,Купаж\n", encoding="utf-8")
    run_import(path, empty_db, tmp_path)
    [stored] = wines(empty_db)
    assert stored["grape_varieties"] == ["Купаж"]
    for seed in (0, 1):
        phrase = _grapes_phrase(list(stored["grape_varieties"]), seed)
        assert phrase.startswith("купаж") and "моносорт" not in phrase and "сорт " not in phrase
    assert _grapes_phrase(["Купаж", "Мерло"], 0) == "купаж на основе Мерло"
