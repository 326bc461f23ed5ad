"""`sommelier catalog import/export`: validated, all-or-nothing, upserting import of JSON and CSV catalogues."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from sommelier.catalog.importer import CatalogImportError, export_catalog, import_catalog
from sommelier.embeddings.local import LOCAL_MODEL_NAME, LocalHashingEmbeddings
from sommelier.storage.photos import LocalPhotoStore
from sommelier.tools.client import InProcessTools
from sommelier.tools.handler import handle

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


def run_import(path: Path, db, photo_root: Path):
    return import_catalog(
        path, tools=InProcessTools(db), embedder=LocalHashingEmbeddings(), photos=LocalPhotoStore(photo_root)
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
        wine(name="Лишний ключ", colour="red"),  # 5
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
        run_import(tmp_path / "bad.json", fresh_db, tmp_path / "store")
    reported = errors_by_line(info.value)
    expected_fragments = {
        1: "wine_type",
        2: "body",
        3: "name",
        4: "price_rub",
        5: "colour",
        6: f"duplicate of line {lines[0]}",
        7: "no-such-file.png",
        8: "object",
        9: "vintage_year",
        11: "object",
        12: "vintage_year",
    }
    assert set(reported) == {lines[i] for i in expected_fragments}
    for index, fragment in expected_fragments.items():
        assert fragment in reported[lines[index]], (index, reported[lines[index]])
    assert "nothing was imported" in str(info.value)
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
        run_import(tmp_path / "pretty.json", empty_db, tmp_path / "store")
    reported = errors_by_line(info.value)
    assert set(reported) == {start_of("Второе"), start_of("Третье")}
    assert "sweetness" in reported[start_of("Второе")] and "acidity" in reported[start_of("Третье")]
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
        wine(name="CSV без сортов", grape_varieties=[]),  # 11
        wine(name="CSV хорошее 2", vintage_year=None),  # 12 fine (NV)
    ]
    write_csv(tmp_path / "bad.csv", rows)
    with (tmp_path / "bad.csv").open("a", encoding="utf-8") as f:
        f.write("Лишние ячейки,X,Россия,,,2020,Мерло,red,dry,3,3,3,900,d,,,,extra,cells\n")  # line 13
    before = fingerprint(fresh_db)
    with pytest.raises(CatalogImportError) as info:
        run_import(tmp_path / "bad.csv", fresh_db, tmp_path / "store")
    reported = errors_by_line(info.value)
    expected_fragments = {
        3: "wine_type",
        4: "body",
        5: "name",
        6: "price_rub",
        7: "duplicate of line 2",
        8: "missing.jpg",
        9: "vintage_year",
        10: "price_rub",
        11: "grape",
        13: "cells",
    }
    assert set(reported) == set(expected_fragments)
    for line, fragment in expected_fragments.items():
        assert fragment in reported[line], (line, reported[line])
    assert fingerprint(fresh_db) == before


def test_csv_with_an_unknown_column_names_every_row(empty_db, tmp_path):
    header = [*CSV_HEADER, "colour"]
    write_csv(tmp_path / "extra.csv", [wine(name="A", colour="red"), wine(name="B", colour="red")], header)
    with pytest.raises(CatalogImportError) as info:
        run_import(tmp_path / "extra.csv", empty_db, tmp_path / "store")
    reported = errors_by_line(info.value)
    assert set(reported) == {2, 3} and all("colour" in reason for reason in reported.values())


@pytest.mark.parametrize(
    "name,content,fragment",
    [
        ("broken.json", '{"wines": [\n  {"name": "x",\n', "invalid JSON"),
        ("object.json", '{"vines": []}', "wines"),
        ("number.json", "42", "wines"),
        ("empty.json", '{"wines": []}', "no wines"),
        ("empty.csv", "", "header"),
        ("header-only.csv", ",".join(CSV_HEADER) + "\n", "no wines"),
        ("catalogue.xlsx", "binary", "unsupported"),
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
    with pytest.raises(CatalogImportError, match="cannot read"):
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
    exported = export_catalog(InProcessTools(empty_db))["wines"][0]
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

    exported = {w["name"]: w for w in export_catalog(InProcessTools(empty_db))["wines"]}
    red, white = exported["Кубанское красное"], exported["Кубанское белое"]
    assert red["grape_varieties"] == ["Каберне Совиньон", "Мерло"]
    assert red["food_pairings"] == ["стейк из говядины", "твёрдые сыры"]
    assert white["vintage_year"] is None and white["appellation"] == "Кубань IGP" and white["price_rub"] == 1290.5
    photo_name = Path(photo).name
    assert red["image_key"].startswith("wines/") and red["image_key"].endswith("-" + photo_name)
    assert white["image_key"] is None
    stored = tmp_path / "store" / red["image_key"]
    assert stored.read_bytes() == (tmp_path / photo).read_bytes()
    assert handle({"tool": "catalog_stats", "arguments": {}}, empty_db) == {
        "wines": 2,
        "embedding_models": {LOCAL_MODEL_NAME: 2},
    }
    found = handle({"tool": "search_wines", "arguments": {"grape_variety": "мерло", "food_pairing": "стейк"}}, empty_db)
    assert [w["name"] for w in found["wines"]] == ["Кубанское красное"]


def test_progress_is_reported(empty_db, tmp_path):
    write_csv(tmp_path / "good.csv", [wine(name=f"Вино {i}") for i in range(40)])
    seen: list[tuple[str, int, int]] = []
    import_catalog(
        tmp_path / "good.csv",
        tools=InProcessTools(empty_db),
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
    exported = export_catalog(InProcessTools(empty_db))["wines"]
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
    assert changed["telegram_file_id"] is None  # a new photo must be sent again

    write_csv(tmp_path / "c.csv", [wine()])  # no photo in the file: the stored one stays
    run_import(tmp_path / "c.csv", empty_db, tmp_path / "store")
    kept = handle({"tool": "get_wines", "arguments": {"ids": [wine_id]}}, empty_db)["wines"][0]
    assert kept["image_key"] == expected_photo_key(other)


# ---------------------------------------------------------------- export → import


def test_export_import_round_trip(catalog_db, empty_db, tmp_path, shipped_wines):
    exported = export_catalog(InProcessTools(catalog_db))
    assert len(exported["wines"]) == len(shipped_wines)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(exported, ensure_ascii=False, indent=2), encoding="utf-8")
    report = run_import(path, empty_db, tmp_path / "store")
    assert (report.inserted, report.updated, report.photos_uploaded) == (len(shipped_wines), 0, 0)
    assert export_catalog(InProcessTools(empty_db)) == exported
    # the embeddings were recomputed, so semantic search ranks the same way
    vector = LocalHashingEmbeddings().embed(["игристое для праздника"])[0]
    args = {"query": "игристое для праздника", "embedding": vector, "embedding_model": LOCAL_MODEL_NAME}
    original = handle({"tool": "semantic_search", "arguments": args}, catalog_db)
    copied = handle({"tool": "semantic_search", "arguments": args}, empty_db)
    assert [w["name"] for w in copied["wines"]] == [w["name"] for w in original["wines"]]


def test_export_rows_are_valid_import_rows(catalog_db, shipped_wines):
    from sommelier.catalog.models import WineRecord

    exported = export_catalog(InProcessTools(catalog_db))["wines"]
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
    from sommelier.db.pool import reset_default_database

    def use(db):
        monkeypatch.setenv("DATABASE_URL", db.conninfo)
        monkeypatch.setenv("SOMMELIER_STATE_DIR", str(tmp_path / "state"))
        reset_default_database()

    yield use
    reset_default_database()


def test_cli_import_prints_every_bad_row(fresh_db, tmp_path, capsys, cli_env):
    from sommelier.cli.main import main

    cli_env(fresh_db)
    items = [
        wine(name="Хорошее"),
        wine(name="Плохой тип", wine_type="purple"),
        wine(name="Тело", body=7),
        {k: v for k, v in wine().items() if k != "name"},
        wine(name="Лишнее", colour="red"),
    ]
    lines = write_json_one_per_line(tmp_path / "bad.json", items)
    before = fingerprint(fresh_db)
    code = main(["catalog", "import", str(tmp_path / "bad.json")])
    captured = capsys.readouterr()
    output = " ".join((captured.out + captured.err).split())
    assert code == 1
    assert "4 bad row(s); nothing was imported" in output
    for index, fragment in ((1, "wine_type"), (2, "body"), (3, "name"), (4, "colour")):
        assert f"line {lines[index]}: {fragment}" in output, output
    assert f"line {lines[0]}:" not in output
    assert fingerprint(fresh_db) == before


def test_cli_import_of_a_good_file(empty_db, tmp_path, capsys, cli_env):
    from sommelier.cli.main import main

    cli_env(empty_db)
    photo = with_photo(tmp_path)
    write_csv(tmp_path / "good.csv", [wine(image=photo), wine(name="Второе", vintage_year=None)])
    assert main(["catalog", "import", str(tmp_path / "good.csv")]) == 0
    output = " ".join(capsys.readouterr().err.split())
    assert "imported 2 wines: 2 new, 0 updated, 1 photos" in output
    assert (tmp_path / "state" / "photos" / expected_photo_key(tmp_path / photo)).is_file()
    assert main(["catalog", "import", str(tmp_path / "good.csv")]) == 0
    assert "0 new, 2 updated" in " ".join(capsys.readouterr().err.split())


def test_cli_export_to_file_and_stdout(catalog_db, tmp_path, capsys, cli_env, shipped_wines):
    from sommelier.cli.main import main

    cli_env(catalog_db)
    assert main(["catalog", "export", str(tmp_path / "out.json")]) == 0
    written = json.loads((tmp_path / "out.json").read_text("utf-8"))
    assert len(written["wines"]) == len(shipped_wines)
    capsys.readouterr()
    assert main(["catalog", "export"]) == 0
    assert json.loads(capsys.readouterr().out) == written


def test_cli_import_prints_rows_with_brackets(empty_db, tmp_path, capsys, cli_env):
    from sommelier.cli.main import main

    cli_env(empty_db)
    write_json_one_per_line(
        tmp_path / "bad.json", [wine(image="photos/[/]label.png"), wine(name="Второе", image="photos/[bold]x.png")]
    )
    assert main(["catalog", "import", str(tmp_path / "bad.json")]) == 1
    output = capsys.readouterr().err
    assert "photos/[/]label.png" in output and "photos/[bold]x.png" in output
