"""`sommelier catalog import/export`: validated, all-or-nothing, upserting import of JSON and CSV catalogues."""

from __future__ import annotations

import csv
import io
import ipaddress
import json
import shutil
from pathlib import Path

import pytest
from sommelier.catalog.importer import CatalogImportError, export_catalog, import_catalog
from sommelier.catalog.photo_fetch import PhotoFetcher
from sommelier.embeddings.local import LOCAL_MODEL_NAME, LocalHashingEmbeddings
from sommelier.photos.store import LocalPhotoStore
from sommelier.repositories.adapters import in_process_repositories
from sommelier.toolfn.handler import handle

from tests.conftest import expected_photo_key

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_PHOTOS = ROOT / "data" / "catalog" / "photos"
CSV_HEADER = [
    "name",
    "producer",
    "country",
    "region",
    "appellation",
    "vintage_year",
    "grape_varieties",
    "wine_type",
    "sweetness",
    "body",
    "tannins",
    "acidity",
    "price_rub",
    "description",
    "tasting_notes",
    "food_pairings",
    "image",
]


def wine(**changes) -> dict:
    base = {
        "name": "Тестовое красное",
        "producer": "Тестовая винодельня",
        "country": "Россия",
        "region": "Кубань",
        "appellation": None,
        "vintage_year": 2021,
        "grape_varieties": ["Каберне Совиньон", "Мерло"],
        "wine_type": "red",
        "sweetness": "dry",
        "body": 4,
        "tannins": 4,
        "acidity": 3,
        "price_rub": 1500,
        "description": "Плотное красное вино с нотами вишни.",
        "tasting_notes": "Вишня, слива, дуб.",
        "food_pairings": ["стейк", "шашлык"],
    }
    base.update(changes)
    return base


def fingerprint(db) -> tuple:
    with db.connection() as conn:
        return conn.execute(
            "SELECT count(*), md5(coalesce(string_agg(w::text, '|' ORDER BY w.id), '')) FROM wines w"
        ).fetchone()


def run_import(path: Path, db, photo_root: Path, *, strict: bool = False, photo_fetcher=None):
    return import_catalog(
        path,
        catalog=in_process_repositories(db).catalog,
        embedder=LocalHashingEmbeddings(),
        photos=LocalPhotoStore(photo_root),
        strict=strict,
        photo_fetcher=photo_fetcher,
    )


def write_json_one_per_line(path: Path, items: list) -> dict[int, int]:
    """{"wines": [...]} with element i on line i + 2; returns element index → line."""
    lines = ['{"wines": [']
    for i, item in enumerate(items):
        lines.append("  " + json.dumps(item, ensure_ascii=False) + ("," if i < len(items) - 1 else ""))
    lines.append("]}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {i: i + 2 for i in range(len(items))}


def csv_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ";".join(value)
    return str(value)


def write_csv(path: Path, rows: list[dict], header: list[str] = CSV_HEADER) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_cell(row.get(column)) for column in header])
    path.write_text(buffer.getvalue(), encoding="utf-8")


def with_photo(folder: Path) -> str:
    """Copy one shipped photo next to the test catalogue; return its relative path."""
    source = sorted(SHIPPED_PHOTOS.glob("*.png"))[0]
    (folder / "photos").mkdir(exist_ok=True)
    shutil.copy(source, folder / "photos" / source.name)
    return f"photos/{source.name}"


def errors_by_line(exc: CatalogImportError) -> dict[int, str]:
    result: dict[int, str] = {}
    for error in exc.errors:
        assert error.line not in result, f"line {error.line} reported twice"
        result[error.line] = error.reason
    return result


# ---------------------------------------------------------------- bad rows change nothing


def test_bad_json_rows_are_all_named_and_nothing_changes(fresh_db, tmp_path):
    photo = with_photo(tmp_path)
    items = [
        wine(name="Хорошее 1", image=photo),  # 0 fine
        wine(name="Плохой тип", wine_type="purple"),  # 1
        wine(name="Тело 7", body=7),  # 2
        {k: v for k, v in wine().items() if k != "name"},  # 3 missing name
        wine(name="Минус", price_rub=-100),  # 4
        wine(name="Плохой год", vintage_year=1700),  # 5
        wine(name="Хорошее 1", image=photo),  # 6 duplicate of 0
        wine(name="Без фото", image="photos/no-such-file.png"),  # 7
        "не объект",  # 8
        wine(name="Старое", vintage_year=1800),  # 9
        wine(name="Хорошее 2"),  # 10 fine
        [1, 2],  # 11 not an object either
        wine(name="Год строкой", vintage_year="двадцать первый"),  # 12
    ]
    lines = write_json_one_per_line(tmp_path / "bad.json", items)
    before = fingerprint(fresh_db)
    with pytest.raises(CatalogImportError) as info:
        run_import(tmp_path / "bad.json", fresh_db, tmp_path / "store", strict=True)
    reported = errors_by_line(info.value)
    expected_fragments = {
        1: "колонка «wine_type»: «purple» — не цвет",
        2: "колонка «body»: «7»",
        3: "колонка «название»: пусто",
        4: "колонка «price_rub»: «-100» — цена должна быть больше нуля",
        5: "«1700» — не год урожая",
        6: f"повтор вина (строка {lines[0]})",
        7: "no-such-file.png",
        8: "объектом",
        9: "колонка «vintage_year»: «1800»",
        11: "объектом",
        12: "«двадцать первый» — не год урожая",
    }
    assert set(reported) == {lines[i] for i in expected_fragments}
    for index, fragment in expected_fragments.items():
        assert fragment in reported[lines[index]], (index, reported[lines[index]])
    assert "ничего не импортировано" in str(info.value)
    assert fingerprint(fresh_db) == before
    assert not (tmp_path / "store").exists() or not any((tmp_path / "store").rglob("*"))  # no photo uploaded


def test_bad_rows_in_pretty_printed_json_name_the_line_where_the_wine_starts(empty_db, tmp_path):
    items = [wine(name="Первое"), wine(name="Второе", sweetness="очень сухое"), wine(name="Третье", acidity=0)]
    text = json.dumps({"wines": items}, ensure_ascii=False, indent=2)
    (tmp_path / "pretty.json").write_text(text, encoding="utf-8")
    lines = text.splitlines()

    def start_of(name: str) -> int:
        index = next(i for i, line in enumerate(lines) if f'"name": "{name}"' in line)
        assert lines[index - 1].strip() == "{"
        return index  # the 1-based number of the "{" line

    with pytest.raises(CatalogImportError) as info:
        run_import(tmp_path / "pretty.json", empty_db, tmp_path / "store", strict=True)
    reported = errors_by_line(info.value)
    assert set(reported) == {start_of("Второе"), start_of("Третье")}
    assert "«очень сухое» — не сахар" in reported[start_of("Второе")]
    assert "колонка «acidity»: «0»" in reported[start_of("Третье")]
    assert fingerprint(empty_db)[0] == 0


def test_bad_csv_rows_are_all_named_and_nothing_changes(fresh_db, tmp_path):
    photo = with_photo(tmp_path)
    rows = [
        wine(name="CSV хорошее", image=photo),  # line 2
        wine(name="CSV тип", wine_type="orange"),  # 3
        wine(name="CSV тело", body=7),  # 4
        wine(name=""),  # 5 missing name
        wine(name="CSV цена", price_rub=-1),  # 6
        wine(name="CSV хорошее", image=photo),  # 7 duplicate of line 2
        wine(name="CSV фото", image="photos/missing.jpg"),  # 8
        wine(name="CSV год", vintage_year="MMXX"),  # 9
        wine(name="CSV без цены", price_rub=None),  # 10
        wine(name="CSV без сортов", grape_varieties=[]),  # 11 fine: grapes are optional
        wine(name="CSV хорошее 2", vintage_year=None),  # 12 fine (NV)
    ]
    write_csv(tmp_path / "bad.csv", rows)
    with (tmp_path / "bad.csv").open("a", encoding="utf-8") as f:
        f.write("Лишние ячейки,X,Россия,,,2020,Мерло,red,dry,3,3,3,900,d,,,,extra,cells\n")  # line 13
    before = fingerprint(fresh_db)
    with pytest.raises(CatalogImportError) as info:
        run_import(tmp_path / "bad.csv", fresh_db, tmp_path / "store", strict=True)
    reported = errors_by_line(info.value)
    expected_fragments = {
        3: "колонка «wine_type»: «orange» — не цвет",
        4: "колонка «body»: «7»",
        5: "колонка «name»: пусто",
        6: "колонка «price_rub»: «-1» — цена должна быть больше нуля",
        7: "повтор вина (строка 2)",
        8: "missing.jpg",
        9: "«MMXX» — не год урожая",
        10: "колонка «price_rub»: пусто",
        13: "ячеек больше",
    }
    assert set(reported) == set(expected_fragments)
    for line, fragment in expected_fragments.items():
        assert fragment in reported[line], (line, reported[line])
    assert fingerprint(fresh_db) == before


def test_unknown_columns_are_kept_in_extra_and_reported(empty_db, tmp_path):
    header = [*CSV_HEADER, "colour", "price_range"]
    rows = [wine(name="A", colour="red", price_range="1000-2000"), wine(name="B", colour="", price_range="до 1500")]
    write_csv(tmp_path / "extra.csv", rows, header)
    report = run_import(tmp_path / "extra.csv", empty_db, tmp_path / "store")
    assert report.rows == 2 and report.unknown_fields == {"colour": 1, "price_range": 2}
    with empty_db.connection() as conn:
        extras = dict(conn.execute("SELECT name, extra FROM wines ORDER BY name").fetchall())
    assert extras == {"A": {"colour": "red", "price_range": "1000-2000"}, "B": {"price_range": "до 1500"}}


@pytest.mark.parametrize(
    "name,content,fragment",
    [
        ("broken.json", '{"wines": [\n  {"name": "x",\n', "файл JSON повреждён"),
        ("object.json", '{"vines": []}', "wines"),
        ("number.json", "42", "списком вин"),
        ("empty.json", '{"wines": []}', "нет ни одной строки"),
        ("empty.csv", "", "заголовков"),
        ("header-only.csv", ",".join(CSV_HEADER) + "\n", "нет ни одной строки"),
        ("catalogue.xlsx", "binary", "не читается как Excel"),
        ("catalogue.xls", "binary", "сохраните файл как .xlsx"),
        ("catalogue.pdf", "binary", "неподдерживаемый тип"),
    ],
)
def test_unreadable_files_are_refused(empty_db, tmp_path, name, content, fragment):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CatalogImportError) as info:
        run_import(path, empty_db, tmp_path / "store")
    assert any(fragment in str(e) for e in info.value.errors) or fragment in str(info.value)
    assert fingerprint(empty_db)[0] == 0


def test_invalid_json_names_its_line(empty_db, tmp_path):
    (tmp_path / "broken.json").write_text('{"wines": [\n  {"name": "x"},\n  {"name": }\n]}', encoding="utf-8")
    with pytest.raises(CatalogImportError) as info:
        run_import(tmp_path / "broken.json", empty_db, tmp_path / "store")
    assert [e.line for e in info.value.errors] == [3]


def test_not_utf8_json_and_missing_file(empty_db, tmp_path):
    (tmp_path / "latin1.json").write_bytes('{"wines": [{"name": "Côte"}]}'.encode("latin-1"))
    with pytest.raises(CatalogImportError, match="UTF-8"):
        run_import(tmp_path / "latin1.json", empty_db, tmp_path / "store")
    with pytest.raises(CatalogImportError, match="не удалось прочитать"):
        run_import(tmp_path / "nope.json", empty_db, tmp_path / "store")


# ---------------------------------------------------------------- a good CSV


def test_russian_excel_csv_semicolons_and_windows_1251(empty_db, tmp_path):
    """Excel in a Russian locale writes ";"-separated CSV in Windows-1251, quoting cells with ";" in them."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=";", lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    row = wine(name="Саперави Кубани")
    writer.writerow([csv_cell(row.get(column)) for column in CSV_HEADER])
    (tmp_path / "excel.csv").write_bytes(buffer.getvalue().encode("cp1251"))
    report = run_import(tmp_path / "excel.csv", empty_db, tmp_path / "store")
    assert report.inserted == 1
    exported = export_catalog(in_process_repositories(empty_db).catalog)["wines"][0]
    assert exported["name"] == "Саперави Кубани" and exported["grape_varieties"] == ["Каберне Совиньон", "Мерло"]


def test_good_csv_imports_lists_photos_and_embeddings(empty_db, tmp_path):
    photo = with_photo(tmp_path)
    rows = [
        wine(
            name="Кубанское красное",
            grape_varieties=["Каберне Совиньон", "Мерло"],
            food_pairings=["стейк из говядины", "твёрдые сыры"],
            image=photo,
        ),
        wine(
            name="Кубанское белое",
            wine_type="white",
            grape_varieties=["Шардоне"],
            food_pairings=["рыба"],
            vintage_year=None,
            appellation="Кубань IGP",
            price_rub="1290.50",
            body=2,
            tannins=1,
        ),
    ]
    write_csv(tmp_path / "good.csv", rows)
    # a cell may have spaces around the separators and a trailing separator
    text = (tmp_path / "good.csv").read_text("utf-8").replace("Каберне Совиньон;Мерло", " Каберне Совиньон ; Мерло ;")
    (tmp_path / "good.csv").write_text(text, encoding="utf-8")
    report = run_import(tmp_path / "good.csv", empty_db, tmp_path / "store")
    assert (report.rows, report.inserted, report.updated, report.photos_uploaded) == (2, 2, 0, 1)
    assert report.embedding_model == LOCAL_MODEL_NAME

    exported = {w["name"]: w for w in export_catalog(in_process_repositories(empty_db).catalog)["wines"]}
    red, white = exported["Кубанское красное"], exported["Кубанское белое"]
    assert red["grape_varieties"] == ["Каберне Совиньон", "Мерло"]
    assert red["food_pairings"] == ["стейк из говядины", "твёрдые сыры"]
    assert white["vintage_year"] is None and white["appellation"] == "Кубань IGP" and white["price_rub"] == 1290.5
    photo_name = Path(photo).name
    assert red["image_key"].startswith("wines/") and red["image_key"].endswith("-" + photo_name)
    assert white["image_key"] is None
    stored = tmp_path / "store" / red["image_key"]
    assert stored.read_bytes() == (tmp_path / photo).read_bytes()
    stats = handle({"tool": "catalog_stats", "arguments": {}}, empty_db)
    coverage = stats.pop("coverage")
    assert coverage["photo"] == {"given": 1, "inferred": 0, "unknown": 1}
    assert coverage["country"] == {"given": 2, "inferred": 0, "unknown": 0}
    assert stats == {
        "wines": 2,
        "available": 2,
        "unavailable": 0,
        "with_photo": 1,
        "unknown_country": 0,
        "by_type": {"red": 1, "white": 1},
        "by_country": {"Россия": 2},
        "price_rub": {"min": 1290.5, "median": 1395.25, "max": 1500},
        "embedding_models": {LOCAL_MODEL_NAME: 2},
    }
    found = handle({"tool": "search_wines", "arguments": {"grape_variety": "мерло", "food_pairing": "стейк"}}, empty_db)
    assert [w["name"] for w in found["wines"]] == ["Кубанское красное"]


def test_progress_is_reported(empty_db, tmp_path):
    write_csv(tmp_path / "good.csv", [wine(name=f"Вино {i}") for i in range(40)])
    seen: list[tuple[str, int, int]] = []
    import_catalog(
        tmp_path / "good.csv",
        catalog=in_process_repositories(empty_db).catalog,
        embedder=LocalHashingEmbeddings(),
        photos=LocalPhotoStore(tmp_path / "store"),
        on_progress=lambda *a: seen.append(a),
    )
    assert ("embeddings", 40, 40) in seen and ("database", 40, 40) in seen


# ---------------------------------------------------------------- upsert


def test_reimport_updates_instead_of_duplicating(empty_db, tmp_path):
    rows = [
        wine(name="Винтажное", vintage_year=2020),
        wine(name="Без года", vintage_year=None),
        wine(name="Без года", producer="Другой производитель", vintage_year=None),
    ]
    write_csv(tmp_path / "c.csv", rows)
    first = run_import(tmp_path / "c.csv", empty_db, tmp_path / "store")
    assert (first.inserted, first.updated) == (3, 0)
    again = run_import(tmp_path / "c.csv", empty_db, tmp_path / "store")
    assert (again.inserted, again.updated) == (0, 3)
    assert fingerprint(empty_db)[0] == 3

    rows[1]["price_rub"] = 999  # an NV wine is matched by name and producer
    rows[0]["description"] = "Новое описание."
    rows.append(wine(name="Винтажное", vintage_year=2021))  # another vintage is another wine
    write_csv(tmp_path / "c.csv", rows)
    third = run_import(tmp_path / "c.csv", empty_db, tmp_path / "store")
    assert (third.inserted, third.updated) == (1, 3)
    exported = export_catalog(in_process_repositories(empty_db).catalog)["wines"]
    assert len(exported) == 4
    nv = [w for w in exported if w["name"] == "Без года" and w["producer"] == "Тестовая винодельня"]
    assert len(nv) == 1 and nv[0]["price_rub"] == 999
    assert next(w for w in exported if w["vintage_year"] == 2020)["description"] == "Новое описание."


def test_reimport_keeps_ids_and_the_cached_photo_unless_the_photo_changes(empty_db, tmp_path):
    photo = with_photo(tmp_path)
    write_csv(tmp_path / "c.csv", [wine(image=photo)])
    run_import(tmp_path / "c.csv", empty_db, tmp_path / "store")
    wine_id = handle({"tool": "search_wines", "arguments": {}}, empty_db)["wines"][0]["id"]
    handle({"tool": "cache_photo", "arguments": {"wine_id": wine_id, "file_id": "cached-file-id"}}, empty_db)

    run_import(tmp_path / "c.csv", empty_db, tmp_path / "store")  # same photo
    same = handle({"tool": "get_wines", "arguments": {"ids": [wine_id]}}, empty_db)["wines"][0]
    assert same["telegram_file_id"] == "cached-file-id"

    other = sorted(SHIPPED_PHOTOS.glob("*.png"))[1]
    shutil.copy(other, tmp_path / "photos" / other.name)
    write_csv(tmp_path / "c.csv", [wine(image=f"photos/{other.name}")])
    run_import(tmp_path / "c.csv", empty_db, tmp_path / "store")
    changed = handle({"tool": "get_wines", "arguments": {"ids": [wine_id]}}, empty_db)["wines"][0]
    assert changed["image_key"] == expected_photo_key(other)
    assert "telegram_file_id" not in changed  # a new photo must be sent again

    write_csv(tmp_path / "c.csv", [wine()])  # no photo in the file: the stored one stays
    run_import(tmp_path / "c.csv", empty_db, tmp_path / "store")
    kept = handle({"tool": "get_wines", "arguments": {"ids": [wine_id]}}, empty_db)["wines"][0]
    assert kept["image_key"] == expected_photo_key(other)


# ---------------------------------------------------------------- export → import


def test_export_import_round_trip(catalog_db, empty_db, tmp_path, shipped_wines):
    exported = export_catalog(in_process_repositories(catalog_db).catalog)
    assert len(exported["wines"]) == len(shipped_wines)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(exported, ensure_ascii=False, indent=2), encoding="utf-8")
    report = run_import(path, empty_db, tmp_path / "store")
    assert (report.inserted, report.updated, report.photos_uploaded) == (len(shipped_wines), 0, 0)
    assert export_catalog(in_process_repositories(empty_db).catalog) == exported
    # the embeddings were recomputed, so semantic search ranks the same way
    vector = LocalHashingEmbeddings().embed(["игристое для праздника"])[0]
    args = {"query": "игристое для праздника", "embedding": vector, "embedding_model": LOCAL_MODEL_NAME}
    original = handle({"tool": "semantic_search", "arguments": args}, catalog_db)
    copied = handle({"tool": "semantic_search", "arguments": args}, empty_db)
    assert [w["name"] for w in copied["wines"]] == [w["name"] for w in original["wines"]]


def test_export_rows_are_valid_import_rows(catalog_db, shipped_wines):
    from sommelier.domain.records import WineRecord

    exported = export_catalog(in_process_repositories(catalog_db).catalog)["wines"]
    by_key = {(w["name"], w["producer"], w["vintage_year"]): w for w in shipped_wines}
    for row in exported:
        WineRecord.model_validate(row)
        source = by_key[(row["name"], row["producer"], row["vintage_year"])]
        assert row["price_rub"] == source["price_rub"] and row["country"] == source["country"]
        assert row["image_key"] == expected_photo_key(ROOT / "data" / "catalog" / source["image"])


def test_shipped_catalogue_photos_exist(shipped_wines):
    for item in shipped_wines:
        assert item.get("image"), item["name"]
        assert (ROOT / "data" / "catalog" / item["image"]).is_file(), item["image"]


# ---------------------------------------------------------------- the CLI


@pytest.fixture
def cli_env(monkeypatch, tmp_path):

    def use(db):
        monkeypatch.setenv("DATABASE_URL", db.conninfo)
        monkeypatch.setenv("SOMMELIER_STATE_DIR", str(tmp_path / "state"))

    yield use


def test_cli_import_prints_every_bad_row(fresh_db, tmp_path, capsys, cli_env):
    from sommelier_dev.cli.main import main

    cli_env(fresh_db)
    items = [
        wine(name="Хорошее"),
        wine(name="Плохой тип", wine_type="purple"),
        wine(name="Тело", body=7),
        {k: v for k, v in wine().items() if k != "name"},
        wine(name="Длинное", description="Очень длинное описание. " * 1000),  # 23 999 once its padding is cut
    ]
    lines = write_json_one_per_line(tmp_path / "bad.json", items)
    before = fingerprint(fresh_db)
    code = main(["catalog", "import", str(tmp_path / "bad.json")])
    captured = capsys.readouterr()
    output = " ".join((captured.out + captured.err).split())
    assert code == 1
    # four bad rows of five: the file looks misread, so it is refused, every bad row named in Russian
    assert "импорт не выполнен: из 5 строк с вином прочитаны только 1, с ошибками 4" in output
    for index, fragment in (
        (1, "«Плохой тип» (Тестовая винодельня, 2021): колонка «wine_type»: «purple» — не цвет"),
        (2, "«Тело» (Тестовая винодельня, 2021): колонка «body»: «7»"),
        (3, ": колонка «название»: пусто"),
        (
            4,
            "«Длинное» (Тестовая винодельня, 2021): колонка «description»: слишком длинно (23 999 символов, можно 20 000)",
        ),
    ):
        assert f"строка {lines[index]}{'' if fragment.startswith(':') else ', '}{fragment}" in output, output
    assert f"строка {lines[0]}," not in output
    assert fingerprint(fresh_db) == before


def test_cli_import_of_a_good_file(empty_db, tmp_path, capsys, cli_env):
    from sommelier_dev.cli.main import main

    cli_env(empty_db)
    photo = with_photo(tmp_path)
    write_csv(tmp_path / "good.csv", [wine(image=photo), wine(name="Второе", vintage_year=None)])
    assert main(["catalog", "import", str(tmp_path / "good.csv")]) == 0
    output = " ".join(capsys.readouterr().err.split())
    assert "импортировано вин: 2 (новых 2, обновлено 0); фото: 1" in output
    assert (tmp_path / "state" / "photos" / expected_photo_key(tmp_path / photo)).is_file()
    assert main(["catalog", "import", str(tmp_path / "good.csv")]) == 0
    assert "(новых 0, обновлено 2)" in " ".join(capsys.readouterr().err.split())


def test_cli_export_to_file_and_stdout(catalog_db, tmp_path, capsys, cli_env, shipped_wines):
    from sommelier_dev.cli.main import main

    cli_env(catalog_db)
    assert main(["catalog", "export", str(tmp_path / "out.json")]) == 0
    written = json.loads((tmp_path / "out.json").read_text("utf-8"))
    assert len(written["wines"]) == len(shipped_wines)
    capsys.readouterr()
    assert main(["catalog", "export"]) == 0
    assert json.loads(capsys.readouterr().out) == written


def test_cli_import_prints_rows_with_brackets(empty_db, tmp_path, capsys, cli_env):
    from sommelier_dev.cli.main import main

    cli_env(empty_db)
    write_json_one_per_line(
        tmp_path / "bad.json", [wine(image="photos/[/]label.png"), wine(name="Второе", image="photos/[bold]x.png")]
    )
    assert main(["catalog", "import", str(tmp_path / "bad.json")]) == 1
    output = capsys.readouterr().err
    assert "photos/[/]label.png" in output and "photos/[bold]x.png" in output


# ---------------------------------------------------------------- real shop exports (issue 14)


def shop_wine(**changes) -> dict:
    """A row as a shop's export writes it: official country name, shares, category pairings, extra fields."""
    base = wine(
        name="Шато Тест",
        producer="Тестовый дом",
        country="Французская Республика",
        grape_varieties=["мерло 83%", "Каберне Фран 17 %"],
        food_pairings=["Говядина", "Закуски, салаты и антипасто", "Выдержанный сыр"],
        description="Рубиновый цвет. " + "Долгое описание терруара и выдержки. " * 70,
        tasting_notes="Рубиновый цвет. Слива, вишня и кедр.",
        price_range="3000-5000",
        sku="SKU-1",
    )
    base.update(changes)
    return base


def test_shop_export_with_extra_fields_long_descriptions_and_shares(empty_db, tmp_path):
    items = [
        shop_wine(),
        shop_wine(name="Второе", sku="SKU-2", grape_varieties="мальбек 100%", country="США", food_pairings=["Рыба"]),
    ]
    assert len(items[0]["description"]) > 2000
    write_json_one_per_line(tmp_path / "shop.json", items)
    report = run_import(tmp_path / "shop.json", empty_db, tmp_path / "store")
    assert report.inserted == 2 and report.unknown_fields == {"price_range": 2}
    with empty_db.connection() as conn:
        rows = conn.execute(
            "SELECT name, country, country_code, grape_varieties, grape_shares::float8[], grape_keys,"
            " food_categories, sku, extra, char_length(description) FROM wines ORDER BY sku"
        ).fetchall()
    first, second = rows
    assert first[1:9] == (
        "Французская Республика",
        "FR",
        ["Мерло", "Каберне Фран"],
        [83.0, 17.0],
        ["каберне фран", "мерло"],
        ["выдержанный сыр", "говядина", "закуски", "мясные деликатесы", "салаты"],
        "SKU-1",
        {"price_range": "3000-5000"},
    )
    assert first[9] == len(items[0]["description"].strip())  # stored in full
    assert second[3:5] == (["Мальбек"], [100.0]) and second[2] == "US"
    # official names, shares and category pairings all reach the filters
    for arguments in ({"country": "Франция"}, {"grape_variety": "merlot"}, {"food_pairing": "к стейку"}):
        found = handle({"tool": "search_wines", "arguments": arguments}, empty_db)
        assert [w["name"] for w in found["wines"]] == ["Шато Тест"], arguments
    pasta = handle({"tool": "search_wines", "arguments": {"food_pairing": "паста"}}, empty_db)
    assert pasta["found"] == 0  # «антипасто» is not «паста»
    # tool results carry a shortened description and notes without the colour sentence
    shown = handle({"tool": "search_wines", "arguments": {"country": "Франция"}}, empty_db)["wines"][0]
    assert len(shown["description"]) <= 600 and shown["tasting_notes"] == "Слива, вишня и кедр."


def test_replace_makes_the_catalogue_exactly_the_file(fresh_db, tmp_path, shipped_wines):
    with fresh_db.connection() as conn:
        some_id = conn.execute("SELECT id FROM wines ORDER BY name LIMIT 1").fetchone()[0]
        conn.execute(
            "INSERT INTO messages (chat_id, role, content, wine_ids) VALUES (1, 'assistant', 'x', ARRAY[%s]::uuid[])",
            (some_id,),
        )
        conn.execute("INSERT INTO feedback (chat_id, user_id, wine_id, rating) VALUES (1, 1, %s, 1)", (some_id,))
        conn.commit()
    items = [shop_wine(), shop_wine(name="Второе", sku="SKU-2")]
    write_json_one_per_line(tmp_path / "shop.json", items)
    report = import_catalog(
        tmp_path / "shop.json",
        catalog=in_process_repositories(fresh_db).catalog,
        embedder=LocalHashingEmbeddings(),
        photos=LocalPhotoStore(tmp_path / "store"),
        replace=True,
    )
    assert report.inserted == 2 and report.retired == len(shipped_wines)
    stats = handle({"tool": "catalog_stats", "arguments": {}}, fresh_db)
    assert (stats["available"], stats["unavailable"]) == (2, len(shipped_wines))
    # nothing unavailable is ever found again, by any tool
    everything = handle({"tool": "search_wines", "arguments": {"limit": 20}}, fresh_db)
    assert {w["name"] for w in everything["wines"]} == {"Шато Тест", "Второе"} and everything["matched"] == 2
    listing = handle({"tool": "get_list", "arguments": {}}, fresh_db)
    assert {w["name"] for w in listing["wines"]} == {"Шато Тест", "Второе"}
    exported = export_catalog(in_process_repositories(fresh_db).catalog)["wines"]
    assert [w["name"] for w in exported] == ["Второе", "Шато Тест"]
    # history and feedback still point at the retired wine, which get_wines still describes
    with fresh_db.connection() as conn:
        assert conn.execute("SELECT count(*) FROM feedback WHERE wine_id = %s", (some_id,)).fetchone()[0] == 1
    old = handle({"tool": "get_wines", "arguments": {"ids": [str(some_id)]}}, fresh_db)["wines"][0]
    assert old["available"] is False


def test_export_edit_import_round_trips_by_id_and_sku(empty_db, tmp_path):
    write_json_one_per_line(tmp_path / "shop.json", [shop_wine(), shop_wine(name="Без артикула", sku=None)])
    run_import(tmp_path / "shop.json", empty_db, tmp_path / "store")
    exported = export_catalog(in_process_repositories(empty_db).catalog)["wines"]
    assert all(w["id"] for w in exported) and {w["sku"] for w in exported} == {"SKU-1", None}
    assert exported[1]["grape_varieties"] == ["Мерло 83%", "Каберне Фран 17%"]
    assert exported[1]["price_range"] == "3000-5000"  # extra fields come back where they were
    # rename both wines: the id (and the sku) keep them the same wines
    for item in exported:
        item["name"] += " (новая этикетка)"
        item["price_rub"] = 999
    (tmp_path / "edited.json").write_text(json.dumps({"wines": exported}, ensure_ascii=False), encoding="utf-8")
    report = run_import(tmp_path / "edited.json", empty_db, tmp_path / "store")
    assert (report.inserted, report.updated) == (0, 2)
    again = export_catalog(in_process_repositories(empty_db).catalog)["wines"]
    assert {w["id"] for w in again} == {w["id"] for w in exported}
    assert {w["name"] for w in again} == {w["name"] for w in exported} and {w["price_rub"] for w in again} == {999}
    # the sku alone finds the wine too, e.g. from a shop's next export without ids
    write_json_one_per_line(tmp_path / "next.json", [shop_wine(name="Совсем другое имя", price_rub=1234)])
    assert run_import(tmp_path / "next.json", empty_db, tmp_path / "store").updated == 1


def test_csv_with_semicolons_and_a_byte_order_mark(empty_db, tmp_path):
    buffer = io.StringIO()
    header = [*CSV_HEADER, "sku", "price_range"]
    out = csv.writer(buffer, delimiter=";", lineterminator="\r\n")
    out.writerow(header)
    out.writerow([csv_cell(shop_wine().get(column)) for column in header])
    (tmp_path / "excel.csv").write_bytes(b"\xef\xbb\xbf" + buffer.getvalue().encode("utf-8"))
    report = run_import(tmp_path / "excel.csv", empty_db, tmp_path / "store")
    assert report.inserted == 1 and report.unknown_fields == {"price_range": 1}
    exported = export_catalog(in_process_repositories(empty_db).catalog)["wines"][0]
    assert exported["sku"] == "SKU-1" and exported["grape_varieties"] == ["Мерло 83%", "Каберне Фран 17%"]


def test_duplicate_sku_in_a_file_names_both_rows(empty_db, tmp_path):
    lines = write_json_one_per_line(tmp_path / "dup.json", [shop_wine(), shop_wine(name="Другое")])
    with pytest.raises(CatalogImportError) as info:
        run_import(tmp_path / "dup.json", empty_db, tmp_path / "store", strict=True)
    assert f"артикул «SKU-1» уже у другого вина (строка {lines[0]})" in errors_by_line(info.value)[lines[1]]


class _PhotoServer:
    """A real HTTP server on 127.0.0.2 (the web, for the fetcher these tests trust it to): /label.png is a photo,
    /page is HTML, /big is over the size limit."""

    def __init__(self, photo: bytes):
        import http.server
        import threading

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the standard library's name
                if self.path == "/label.png":
                    self._send(200, "image/png", photo)
                elif self.path == "/page":
                    self._send(200, "text/html", b"<html></html>")
                elif self.path == "/big":
                    self._send(200, "image/jpeg", b"\xff" * (5 * 1024 * 1024 + 1))
                else:
                    self._send(404, "text/plain", b"not found")

            def _send(self, status, content_type, body):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.2", 0), Handler)
        self.url = f"http://127.0.0.2:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_image_url_is_downloaded_and_failures_are_reported(empty_db, tmp_path):
    photo = sorted(SHIPPED_PHOTOS.glob("*.png"))[0].read_bytes()
    server = _PhotoServer(photo)
    try:
        # a closed port: connection refused at once
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.2", 0))
            closed = f"http://127.0.0.2:{probe.getsockname()[1]}/x.png"
        items = [
            shop_wine(name="С фото", sku="A", image_url=f"{server.url}/label.png"),
            shop_wine(name="Нет файла", sku="B", image_url=f"{server.url}/missing.png"),
            shop_wine(name="Не картинка", sku="C", image_url=f"{server.url}/page"),
            shop_wine(name="Огромное", sku="D", image_url=f"{server.url}/big"),
            shop_wine(name="Недоступно", sku="E", image_url=closed),
        ]
        write_json_one_per_line(tmp_path / "photos.json", items)
        web = PhotoFetcher(trusted=frozenset({ipaddress.ip_address("127.0.0.2")}))
        report = run_import(tmp_path / "photos.json", empty_db, tmp_path / "store", photo_fetcher=web)
    finally:
        server.close()
    assert report.inserted == 5 and report.photos_uploaded == 1
    failures = "\n".join(report.photos_failed)
    assert len(report.photos_failed) == 4
    for fragment in ("«Нет файла»", "HTTP 404", "не картинка PNG", "больше 5 МБ", "«Недоступно»", "сервер недоступен"):
        assert fragment in failures, fragment
    with empty_db.connection() as conn:
        keys = dict(conn.execute("SELECT name, image_key FROM wines").fetchall())
    import hashlib

    assert keys["С фото"] == f"wines/{hashlib.sha256(photo).hexdigest()[:12]}-label.png"
    assert (tmp_path / "store" / keys["С фото"]).read_bytes() == photo
    assert all(keys[name] is None for name in ("Нет файла", "Не картинка", "Огромное", "Недоступно"))


def test_cli_replace_list_and_stats(fresh_db, tmp_path, capsys, cli_env, shipped_wines):
    from sommelier_dev.cli.main import main

    cli_env(fresh_db)
    write_json_one_per_line(tmp_path / "shop.json", [shop_wine(), shop_wine(name="Второе", sku="SKU-2")])
    assert main(["catalog", "import", str(tmp_path / "shop.json"), "--replace"]) == 0
    output = " ".join(capsys.readouterr().err.split())
    assert "импортировано вин: 2 (новых 2, обновлено 0)" in output
    assert f"новые — 2; сняты с продажи (нет в файле) — {len(shipped_wines)}" in output
    assert "сохранено как есть (колонки, которые каталог не использует): price_range (2)" in output
    assert main(["catalog", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["wines"]
    assert [(w["name"], w["sku"]) for w in listed] == [("Второе", "SKU-2"), ("Шато Тест", "SKU-1")]
    assert main(["catalog", "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["available"] == 2 and stats["unavailable"] == len(shipped_wines)
    assert main(["catalog", "list", "--all"]) == 0
    assert f"вин: {len(shipped_wines) + 2}" in " ".join(capsys.readouterr().err.split())


def test_rows_written_before_the_normalised_columns_are_filled_after_migrating(fresh_db, shipped_wines):
    from sommelier.db.migrations import apply_migrations
    from sommelier.db.migrations import backfill_normalised_columns as backfill

    with fresh_db.connection() as conn:
        conn.execute(
            "UPDATE wines SET lexicon_version = NULL, country_code = NULL, grape_keys = '{}', food_categories = '{}',"
            " country = 'Соединенные Штаты Америки', grape_varieties = ARRAY['зинфандель 85%', 'Пти Сира 15%']"
            " WHERE name = 'Old Vine Zin'"
        )
        conn.commit()
        assert backfill(conn) == 1
        row = conn.execute(
            "SELECT country_code, grape_varieties, grape_shares::float8[], grape_keys, food_categories, lexicon_version"
            " FROM wines WHERE name = 'Old Vine Zin'"
        ).fetchone()
        assert backfill(conn) == 0  # every row is current now
    assert row[:4] == ("US", ["Зинфандель", "Пти Сира"], [85.0, 15.0], ["зинфандель", "пти сира"])
    assert {"говядина", "свинина"} <= set(row[4]) and row[5]
    apply_migrations(fresh_db.conninfo)  # idempotent, and runs the same step
    found = handle(
        {
            "tool": "search_wines",
            "arguments": {"country": "американское", "grape_variety": "zinfandel", "wine_type": "red"},
        },
        fresh_db,
    )
    assert [w["name"] for w in found["wines"]] == ["Old Vine Zin"]


SHOP_EXPORT = ROOT / "data" / "catalog" / "shop-export-example.json"


def test_the_shop_export_example_replaces_the_catalogue_in_one_import(fresh_db, tmp_path, shipped_wines):
    """The second catalogue: official country names, shares, category pairings, long descriptions, extra
    fields, photos on an unreachable host, and wines the shipped catalogue has under another vintage."""
    shop = json.loads(SHOP_EXPORT.read_text("utf-8"))["wines"]
    assert len(shop) >= 60 and sum(len(w["description"]) > 2000 for w in shop) >= 5
    shipped_labels = {(w["name"], w["producer"]) for w in shipped_wines}
    assert sum((w["name"], w["producer"]) in shipped_labels for w in shop) >= 5  # same wine, other vintage
    report = import_catalog(
        SHOP_EXPORT,
        catalog=in_process_repositories(fresh_db).catalog,
        embedder=LocalHashingEmbeddings(),
        photos=LocalPhotoStore(tmp_path / "store"),
        replace=True,
    )
    same_key = {(w["name"], w["producer"], w["vintage_year"]) for w in shipped_wines} & {
        (w["name"], w["producer"], w["vintage_year"]) for w in shop
    }
    assert same_key  # NV wines such as Asti are the same wine in both files: updated, not duplicated
    assert (report.inserted, report.updated) == (len(shop) - len(same_key), len(same_key))
    assert report.retired == len(shipped_wines) - len(same_key)
    assert set(report.unknown_fields) == {"price_range", "volume_l", "alcohol"}
    assert len(report.photos_failed) == len(shop)  # .invalid never resolves; every wine is still imported
    exported = export_catalog(in_process_repositories(fresh_db).catalog)["wines"]
    assert sorted(w["sku"] for w in exported) == sorted(w["sku"] for w in shop)  # exactly the file
    with fresh_db.connection() as conn:
        unknown = conn.execute("SELECT count(*) FROM wines WHERE available AND country_code IS NULL").fetchone()[0]
    assert unknown == 0


def test_replace_in_several_chunks_keeps_every_chunk(fresh_db, tmp_path, shipped_wines, monkeypatch):
    """Through Lambda an import goes in chunks; --replace must retire only the wines in no chunk."""
    import sommelier.catalog.importer as importer

    monkeypatch.setattr(importer, "IN_PROCESS_IMPORT_CHUNK", 7)
    items = [shop_wine(name=f"Вино {i}", sku=f"CH-{i}") for i in range(30)]
    write_json_one_per_line(tmp_path / "chunks.json", items)
    report = import_catalog(
        tmp_path / "chunks.json",
        catalog=in_process_repositories(fresh_db).catalog,
        embedder=LocalHashingEmbeddings(),
        photos=LocalPhotoStore(tmp_path / "store"),
        replace=True,
    )
    assert (report.inserted, report.retired) == (30, len(shipped_wines))
    stats = handle({"tool": "catalog_stats", "arguments": {}}, fresh_db)
    assert (stats["available"], stats["unavailable"]) == (30, len(shipped_wines))


def test_a_shop_that_does_not_grade_body_tannins_or_acidity_imports_and_nothing_is_claimed(empty_db, tmp_path):
    from sommelier.offline.responder import OfflineResponder

    header = [c for c in CSV_HEADER if c not in ("body", "tannins", "acidity")]
    buffer = io.StringIO()
    out = csv.writer(buffer, delimiter=";", lineterminator="\r\n")
    out.writerow(header)
    out.writerow([csv_cell(wine().get(column)) for column in header])
    (tmp_path / "ungraded.csv").write_bytes(b"\xef\xbb\xbf" + buffer.getvalue().encode("utf-8"))
    report = run_import(tmp_path / "ungraded.csv", empty_db, tmp_path / "store")
    assert report.inserted == 1

    found = handle({"tool": "search_wines", "arguments": {"wine_type": "red"}}, empty_db)["wines"]
    assert [(w["body"], w["tannins"], w["acidity"]) for w in found] == [(None, None, None)]
    answer = OfflineResponder(in_process_repositories(empty_db).catalog, LocalHashingEmbeddings()).respond(
        "красное сухое к шашлыку"
    )
    card = answer.response.wines[0].description
    assert "Тестовое красное" == answer.response.wines[0].wine_name
    for graded in ("полноты", "лёгкое", "насыщенное", "танин", "кислотн"):
        assert graded not in card, card  # no grade the shop did not give
    assert exported_grades(empty_db) == [None, None, None]


def exported_grades(db) -> list:
    exported = export_catalog(in_process_repositories(db).catalog)["wines"][0]
    return [exported["body"], exported["tannins"], exported["acidity"]]
