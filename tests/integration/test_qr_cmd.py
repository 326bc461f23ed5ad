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
    assert "no-such-sku" in capsys.readouterr().err
    assert not out.exists()


def test_qr_refuses_a_ref_that_cannot_be_a_link(catalog_env, tmp_path, capsys):
    assert main(["qr", "bad sku!", "--out", str(tmp_path), "--bot", TEST_BOT]) == 1
    assert "can't be put in a Telegram link" in capsys.readouterr().err


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
