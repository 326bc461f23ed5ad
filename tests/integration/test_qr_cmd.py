"""`sommelier qr`: printable shelf labels whose QR codes decode (with zxing-cpp, an independent decoder)
back to the wine's deep link, with the wine's name printed under the code."""

from __future__ import annotations

import io

import psycopg
import pytest
import zxingcpp
from PIL import Image
from sommelier.shop.deeplinks import wine_ref_from_start
from sommelier_dev.cli.main import main

from tests.fakes.telegram_updates import TEST_BOT


@pytest.fixture
def catalog_env(monkeypatch, catalog_db, tmp_path):
    monkeypatch.setenv("DATABASE_URL", catalog_db.conninfo)
    monkeypatch.setenv("SOMMELIER_STATE_DIR", str(tmp_path / "state"))
    yield catalog_db


def wines(db, count):
    with psycopg.connect(db.conninfo) as conn:
        return conn.execute("SELECT id::text, name FROM wines ORDER BY name LIMIT %s", (count,)).fetchall()


def decode(path) -> str:
    image = Image.open(path)
    found = zxingcpp.read_barcodes(image)
    assert len(found) == 1, f"one readable code expected in {path.name}"
    assert found[0].format == zxingcpp.BarcodeFormat.QRCode
    return found[0].text


def test_qr_writes_scannable_labels_with_the_wines_name(catalog_env, tmp_path):
    chosen = wines(catalog_env, 2)
    out = tmp_path / "labels"
    assert main(["qr", *[wid for wid, _ in chosen], "--out", str(out), "--bot", f"@{TEST_BOT}"]) == 0
    files = sorted(out.glob("*.png"))
    assert len(files) == 2
    for wine_id, name in chosen:
        (path,) = [f for f in files if f.name.startswith(wine_id)]
        link = decode(path)
        assert link == f"https://t.me/{TEST_BOT}?start=w_{wine_id}"
        assert wine_ref_from_start(link.partition("start=")[2]) == wine_id  # what the bot reads back
        image = Image.open(path).convert("L")
        assert image.height > image.width, "a caption area under the square code"
        caption = image.crop((0, image.width, image.width, image.height))
        assert caption.getextrema()[0] < 100, f"the name of {name} is printed under the code"


def test_qr_for_an_unknown_wine_writes_nothing(catalog_env, tmp_path, capsys):
    ((wine_id, _),) = wines(catalog_env, 1)
    out = tmp_path / "labels"
    assert main(["qr", wine_id, "no-such-sku", "--out", str(out), "--bot", TEST_BOT]) == 1
    assert "нет в каталоге: no-such-sku" in capsys.readouterr().err
    assert not out.exists()


def test_qr_refuses_a_ref_that_names_no_wine_in_russian(catalog_env, tmp_path, capsys):
    assert main(["qr", "bad sku!", "--out", str(tmp_path / "labels"), "--bot", TEST_BOT]) == 1
    assert "нет в каталоге: bad sku! (файлы не записаны)" in " ".join(capsys.readouterr().err.split())
    assert not (tmp_path / "labels").exists()


@pytest.fixture
def shelf_env(monkeypatch, fresh_db, tmp_path):
    monkeypatch.setenv("DATABASE_URL", fresh_db.conninfo)
    monkeypatch.setenv("SOMMELIER_STATE_DIR", str(tmp_path / "state"))
    with psycopg.connect(fresh_db.conninfo) as conn:
        ids = [r[0] for r in conn.execute("SELECT id::text FROM wines ORDER BY name LIMIT 3").fetchall()]
        for wine_id, sku in zip(
            ids, ("ВЛ-0101", "12.345/A кр", "Артикул-очень-длинный-для-ссылки-телеграма-" * 2), strict=True
        ):
            conn.execute("UPDATE wines SET sku = %s WHERE id = %s", (sku, wine_id))
    yield fresh_db, ids


def test_qr_takes_the_shops_article_as_written_and_the_short_id_catalog_list_shows(shelf_env, tmp_path, capsys):
    db, (cyrillic, _, long_sku_wine) = shelf_env
    out = tmp_path / "labels"
    short = cyrillic[:8]  # what `catalog list` shows
    asked = ["ВЛ-0101", "12.345/A кр", short, "Артикул-очень-длинный-для-ссылки-телеграма-" * 2]
    assert main(["qr", *asked, "--out", str(out), "--bot", TEST_BOT]) == 0, capsys.readouterr().err
    files = sorted(out.glob("*.png"))
    assert len(files) == 4
    read_back = {}
    for path in files:
        link = decode(path)
        payload = link.partition("start=")[2]
        assert link.startswith(f"https://t.me/{TEST_BOT}?start=") and len(payload) <= 64
        read_back[path.name.split("-")[0]] = wine_ref_from_start(payload)
    assert "ВЛ" in read_back  # the file keeps the article's letters
    # the Cyrillic, dotted and short-id labels carry the article the bot finds the wine by;
    # an article too long for a link carries the wine's id
    assert sorted(read_back.values()) == sorted(["ВЛ-0101", "12.345/A кр", "ВЛ-0101", long_sku_wine])


def test_catalog_list_shows_the_short_id_qr_takes(shelf_env, capsys):
    db, (cyrillic, _, _) = shelf_env
    assert main(["catalog", "list"]) == 0
    listed = capsys.readouterr().err
    assert cyrillic[:8] in listed and "ВЛ-0101" in listed and "артикул" in listed


def test_qr_asks_telegram_for_the_bots_name(catalog_env, tmp_path, monkeypatch, telegram):
    monkeypatch.delenv("TELEGRAM_BOT_USERNAME", raising=False)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    ((wine_id, _),) = wines(catalog_env, 1)
    assert main(["qr", wine_id, "--out", str(tmp_path)]) == 0
    assert decode(next(tmp_path.glob("*.png"))).startswith(f"https://t.me/{TEST_BOT}?start=w_")


def test_label_png_is_a_printable_png():
    from sommelier_dev.qr import label_png

    data = label_png("https://t.me/x_bot?start=w_1", "Очень длинное название вина " * 8)
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG" and image.info.get("dpi", (0, 0))[0] >= 299
