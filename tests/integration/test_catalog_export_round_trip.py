"""The file back in the owner's format (issue 38, item 7): `catalog export FILE.xlsx` and `.csv` write that
format in the owner's own columns; the file is edited as an owner would (openpyxl, as Excel saves it) and
imported back, and the import lists what changed. Expectations written by hand from the rows below."""

from __future__ import annotations

import csv

import openpyxl
import pytest

pytestmark = pytest.mark.database

OWNER_FILE = (
    "Артикул;Наименование;Цвет;Сахар;Цена, руб.;Остаток, шт.;Объём\n"
    "ВЛ-0101;Вино Саперави;красное;сухое;1290;5;0,75\n"
    "ВЛ-0102;Вино Ркацители;белое;сухое;890;2;0,75\n"
    "ВЛ-0103;Вино Цимлянский Чёрный;красное;полусладкое;990;0;0,75\n"
    "ВЛ-0104;Игристое вино Абрау брют;игристое;сухое;1100;7;0,75\n"
)
OWN_COLUMNS = ["Артикул", "Наименование", "Цвет", "Сахар", "Цена, руб.", "Остаток, шт.", "Объём"]


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


def stored(db) -> dict[str, tuple]:
    with db.connection() as conn:
        rows = conn.execute("SELECT sku, id::text, price_rub, available, name FROM wines").fetchall()
    return {sku: (id_, float(price), available, name) for sku, id_, price, available, name in rows}


def imported(db, tmp_path, cli) -> dict[str, tuple]:
    (tmp_path / "shop.csv").write_text(OWNER_FILE, encoding="utf-8")
    code, output = cli(db, "catalog", "import", tmp_path / "shop.csv", "--replace")
    assert code == 0, output
    return stored(db)


def test_an_excel_export_in_the_owners_columns_edited_and_imported_back_lists_what_changed(empty_db, tmp_path, cli):
    before = imported(empty_db, tmp_path, cli)
    code, output = cli(empty_db, "catalog", "export", tmp_path / "catalogue.xlsx", "--all")
    assert code == 0 and "выгружено вин: 4" in output, output

    book = openpyxl.load_workbook(tmp_path / "catalogue.xlsx")  # a real workbook Excel opens
    sheet = book.worksheets[0]
    header = [c.value for c in sheet[1]]
    assert all(column in header for column in OWN_COLUMNS), header
    col = {name: header.index(name) + 1 for name in header}
    rows = {sheet.cell(r, col["Артикул"]).value: r for r in range(2, sheet.max_row + 1)}
    assert set(rows) == {"ВЛ-0101", "ВЛ-0102", "ВЛ-0103", "ВЛ-0104"}
    assert sheet.cell(rows["ВЛ-0101"], col["Цвет"]).value == "красное"
    assert sheet.cell(rows["ВЛ-0101"], col["Цена, руб."]).value == 1290
    # the owner's edits: a new price, one sold out, one back in stock, one row deleted, a new wine added
    sheet.cell(rows["ВЛ-0102"], col["Цена, руб."]).value = 950
    sheet.cell(rows["ВЛ-0101"], col["Остаток, шт."]).value = 0
    sheet.cell(rows["ВЛ-0103"], col["Остаток, шт."]).value = 12
    sheet.delete_rows(rows["ВЛ-0104"])
    new = sheet.max_row + 1
    for name, value in {
        "Артикул": "ВЛ-0105",
        "Наименование": "Вино Кокур белое сухое",
        "Цвет": "белое",
        "Сахар": "сухое",
        "Цена, руб.": 780,
        "Остаток, шт.": 4,
    }.items():
        sheet.cell(new, col[name]).value = value
    book.save(tmp_path / "edited.xlsx")

    code, output = cli(empty_db, "catalog", "import", tmp_path / "edited.xlsx", "--replace")
    assert code == 0, output
    assert (
        "изменения: новые — 1; сняты с продажи (нет в файле) — 1; цена изменилась — 1; снова в наличии — 1;"
        " закончились — 1" in output
    ), output
    assert "цена изменилась: Вино Ркацители: 890 ₽ → 950 ₽" in output
    assert "снова в наличии: Вино Цимлянский Чёрный" in output and "закончились: Вино Саперави" in output
    assert "сняты с продажи (нет в файле): Игристое вино Абрау брют" in output
    after = stored(empty_db)
    assert {sku: after[sku][0] for sku in before} == {sku: before[sku][0] for sku in before}  # the same wines
    assert {sku: (v[1], v[2]) for sku, v in after.items()} == {
        "ВЛ-0101": (1290.0, False),
        "ВЛ-0102": (950.0, True),
        "ВЛ-0103": (990.0, True),
        "ВЛ-0104": (1100.0, False),
        "ВЛ-0105": (780.0, True),
    }


def test_a_csv_export_opens_as_russian_excel_saves_it_and_imports_back_unchanged(empty_db, tmp_path, cli):
    before = imported(empty_db, tmp_path, cli)
    code, output = cli(empty_db, "catalog", "export", tmp_path / "catalogue.csv", "--all")
    assert code == 0, output
    raw = (tmp_path / "catalogue.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # a BOM: Excel reads the Cyrillic as UTF-8
    with (tmp_path / "catalogue.csv").open(encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f, delimiter=";"))
    assert len(rows) == 4 and all(column in rows[0] for column in OWN_COLUMNS)
    assert {r["Артикул"]: r["Остаток, шт."] for r in rows} == {
        "ВЛ-0101": "5",
        "ВЛ-0102": "2",
        "ВЛ-0103": "0",
        "ВЛ-0104": "7",
    }
    code, output = cli(empty_db, "catalog", "import", tmp_path / "catalogue.csv", "--replace")
    assert code == 0, output
    assert "импортировано вин: 4 (новых 0, обновлено 4)" in output and "изменения:" not in output, output
    assert stored(empty_db) == before


@pytest.mark.parametrize("name", ["catalogue.pdf", "catalogue.xls", "catalogue"])
def test_another_extension_is_refused_in_russian_and_nothing_is_written(empty_db, tmp_path, cli, name):
    code, output = cli(empty_db, "catalog", "export", tmp_path / name)
    assert code == 1
    assert "выгрузка пишет файлы .xlsx (Excel), .csv или .json" in output, output
    assert not (tmp_path / name).exists()


def test_the_json_export_still_round_trips(empty_db, tmp_path, cli):
    before = imported(empty_db, tmp_path, cli)
    code, output = cli(empty_db, "catalog", "export", tmp_path / "catalogue.json", "--all")
    assert code == 0, output
    code, output = cli(empty_db, "catalog", "import", tmp_path / "catalogue.json", "--replace")
    assert code == 0 and "изменения:" not in output, output
    assert stored(empty_db) == before
    code, output = cli(empty_db, "catalog", "export", tmp_path / "again.json", "--all")
    assert code == 0, output
    again = (tmp_path / "again.json").read_text("utf-8")
    assert again == (tmp_path / "catalogue.json").read_text("utf-8")  # the shop's headers carried on too
    assert '"price_rub": "Цена, руб."' in again


def test_export_writes_a_table_importable_by_its_own_headers(tmp_path):
    # Each default header reads back as its field: no column of the export is lost on import.
    from sommelier import language
    from sommelier_dev.catalog_export import _default_headers

    technical = {"id", "image_key", "available", "inferred"}
    assert {f: language.catalog_column(h) for f, h in _default_headers().items() if f not in technical} == {
        f: f for f in _default_headers() if f not in technical
    }
