"""Imports that can't be turned against the shop (issue 39, item 4): a spreadsheet is read streaming, with
its row, column and cell-size limits checked as it is read; a ZIP's members are unpacked in chunks within a
cap. Each limit refuses the file with a Russian message naming the limit and its setting, and nothing is
imported. (How fast and in how much memory the 300 000-row file is refused: bench/spreadsheet_bomb.py.)"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import openpyxl
import pytest
from sommelier.catalog.importer import CatalogImportError, import_catalog, read_catalog
from sommelier.catalog.limits import ReadLimits
from sommelier.embeddings.local import LocalHashingEmbeddings
from sommelier.photos.store import LocalPhotoStore
from sommelier.shop import catalog_drop
from sommelier_dev.memory import memory_repositories

from bench.spreadsheet_bomb import write_bomb

DATA = Path(__file__).resolve().parents[1] / "data" / "catalogues"
ROW = "Вино Саперави красное сухое;990\n"


def import_into_memory(path: Path, tmp_path: Path, limits: ReadLimits | None = None):
    repositories = memory_repositories()
    try:
        report = import_catalog(
            path,
            catalog=repositories.catalog,
            embedder=LocalHashingEmbeddings(),
            photos=LocalPhotoStore(tmp_path / "store"),
            limits=limits,
        )
    finally:
        stored = repositories.catalog.export_wines(include_unavailable=True)
    return report, stored


@pytest.mark.parametrize("declared", [True, False])
def test_a_100_kib_workbook_of_300_000_rows_is_refused_by_its_row_limit(tmp_path, declared):
    path = tmp_path / "price.xlsx"
    write_bomb(path, 300_000, declared=declared)
    assert path.stat().st_size < 120 * 1024
    repositories = memory_repositories()
    with pytest.raises(CatalogImportError) as info:
        import_catalog(
            path, catalog=repositories.catalog, embedder=LocalHashingEmbeddings(), photos=LocalPhotoStore(tmp_path)
        )
    assert str(info.value) == (
        "в файле строк: больше 20 000, а предел — 20 000 (CATALOG_MAX_ROWS): ничего не импортировано;"
        " разделите файл или увеличьте CATALOG_MAX_ROWS"
    )
    assert repositories.catalog.export_wines(include_unavailable=True) == []  # nothing half-imported


def test_the_same_workbook_within_the_limit_imports_every_row(tmp_path):
    path = tmp_path / "price.xlsx"
    write_bomb(path, 30, declared=False)
    assert len(read_catalog(path)) == 30


def test_a_sheet_declaring_fewer_rows_than_it_holds_loses_none(tmp_path):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Наименование", "Цена"])
    for n in range(12):
        sheet.append([f"Вино {n} красное сухое", 500 + n])
    book.save(tmp_path / "lying.xlsx")
    with zipfile.ZipFile(tmp_path / "lying.xlsx") as source, zipfile.ZipFile(tmp_path / "edited.xlsx", "w") as out:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = re.sub(rb"<dimension ref=\"[^\"]*\" ?/>", b'<dimension ref="A1:B3"/>', data)
                assert b'<dimension ref="A1:B3"/>' in data
            out.writestr(item, data)
    assert [r.item["Цена"] for r in read_catalog(tmp_path / "edited.xlsx")] == [500 + n for n in range(12)]


def test_too_many_columns(tmp_path):
    path = tmp_path / "wide.csv"
    header = ";".join(["Наименование", "Цена", *(f"колонка {n}" for n in range(400))])
    path.write_text(header + "\n" + ROW, encoding="utf-8")
    with pytest.raises(CatalogImportError, match=r"в строке колонок: 402, а предел — 300 \(CATALOG_MAX_COLUMNS\)"):
        read_catalog(path)


def test_a_cell_past_the_cell_limit(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("Наименование;Цена;Описание\n" + ROW.strip() + ";" + "я" * 120_000 + "\n", encoding="utf-8")
    with pytest.raises(CatalogImportError, match=r"в ячейке символов: 120 000, а предел — 100 000 \(CATALOG_MAX_CELL"):
        read_catalog(path)
    path.write_text("Наименование;Цена;Описание\n" + ROW.strip() + ";" + "я" * 200_000 + "\n", encoding="utf-8")
    with pytest.raises(CatalogImportError, match=r"CATALOG_MAX_CELL_CHARS"):
        read_catalog(path)


def test_a_json_list_past_the_row_limit_and_a_yml_feed_past_a_lowered_one(tmp_path):
    path = tmp_path / "many.json"
    path.write_text(json.dumps([{"name": f"Вино {n}", "price": 1} for n in range(20_001)]), encoding="utf-8")
    with pytest.raises(CatalogImportError, match=r"CATALOG_MAX_ROWS"):
        read_catalog(path)
    with pytest.raises(CatalogImportError, match=r"в файле строк: больше 5, а предел — 5 \(CATALOG_MAX_ROWS\)"):
        read_catalog(DATA / "hand_written_market.yml", ReadLimits.from_environment({"CATALOG_MAX_ROWS": "5"}))


def test_the_owner_changes_a_limit_by_its_setting(tmp_path, monkeypatch):
    path = tmp_path / "price.csv"
    path.write_text("Наименование;Цена\n" + ROW * 40, encoding="utf-8")
    monkeypatch.setenv("CATALOG_MAX_ROWS", "30")
    with pytest.raises(CatalogImportError, match=r"предел — 30 \(CATALOG_MAX_ROWS\)"):
        read_catalog(path)
    monkeypatch.setenv("CATALOG_MAX_ROWS", "50")
    assert len(read_catalog(path)) == 40
    monkeypatch.setenv("CATALOG_MAX_ROWS", "много")
    with pytest.raises(CatalogImportError, match="CATALOG_MAX_ROWS должен быть целым числом больше нуля, а не «много»"):
        read_catalog(path)


def test_the_file_size_and_the_unpacked_size(tmp_path):
    big = tmp_path / "big.csv"
    big.write_text("Наименование;Цена\n" + ROW * 40_000, encoding="utf-8")  # 2.1 MB
    with pytest.raises(CatalogImportError, match=r"файл весит 2,1 МБ, а предел — 1 МБ \(CATALOG_MAX_FILE_MB\)"):
        read_catalog(big, ReadLimits.from_environment({"CATALOG_MAX_FILE_MB": "1"}))
    packed = tmp_path / "packed.xlsx"
    write_bomb(packed, 300_000)  # 100 KiB that unpack to about 20 MB
    with pytest.raises(CatalogImportError, match=r"в распакованном виде файл занимает \d+ МБ, а предел — 5 МБ"):
        read_catalog(packed, ReadLimits.from_environment({"CATALOG_MAX_UNZIPPED_MB": "5"}))


def test_a_zip_drop_member_past_its_cap_is_refused_and_nothing_imported(tmp_path, monkeypatch):
    monkeypatch.setattr(catalog_drop, "MAX_MEMBER_BYTES", 1024 * 1024)
    bundle = tmp_path / "drop.zip"
    with zipfile.ZipFile(bundle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("catalogue.csv", "Наименование;Цена\n" + ROW)
        archive.writestr("photos/huge.png", b"\x00" * (3 * 1024 * 1024))  # 3 MB of zeros: a few KiB packed
    repositories = memory_repositories()
    result = catalog_drop.process_drop(
        "catalog/incoming/drop.zip",
        lambda path: shutil.copyfile(bundle, path),
        size=bundle.stat().st_size,
        catalog=repositories.catalog,
        embedder=LocalHashingEmbeddings(),
        photos=LocalPhotoStore(tmp_path / "store"),
    )
    assert not result.ok
    assert "файл архива «photos/huge.png» больше 1 МБ в распакованном виде (предел одного файла архива)" in result.text
    assert repositories.catalog.export_wines(include_unavailable=True) == []
