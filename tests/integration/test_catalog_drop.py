"""Catalogue drops through the Lambda handler: files put into a moto S3 bucket under catalog/incoming/,
the EventBridge "Object Created" event, a real database, and the fake Bot API as the shop's admin chat."""

from __future__ import annotations

import importlib.util
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

import boto3
import psycopg
import pytest
from moto import mock_aws

ROOT = Path(__file__).resolve().parents[2]
APP_PATH = ROOT / "functions" / "catalog_drop" / "app.py"
EXAMPLE = json.loads((ROOT / "docs" / "examples" / "catalog-example.json").read_text("utf-8"))
PHOTO = next((ROOT / "data" / "catalog" / "photos").glob("*.png"))
BUCKET = "sommelier-photos-test"
ADMIN_CHAT = -100424242


@dataclass
class Context:
    function_name: str = "sommelier-catalog-drop"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:eu-central-1:123456789012:function:sommelier-catalog-drop"
    aws_request_id: str = "3f1f9a52-6c1e-4b7e-9a40-000000000042"


@pytest.fixture
def drop(monkeypatch, fresh_db, telegram):
    monkeypatch.setenv("DATABASE_URL", fresh_db.conninfo)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    monkeypatch.setenv("IMAGES_BUCKET", BUCKET)
    monkeypatch.setenv("ADMIN_CHAT_ID", str(ADMIN_CHAT))
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "eu-central-1"})
        loaded = []

        def cold_start():
            """The function's module, loaded at the first upload: a test's environment is set by then, as
            a Lambda's is before its container starts (the module reads it once)."""
            if not loaded:
                spec = importlib.util.spec_from_file_location("catalog_drop_app_under_test", APP_PATH)
                loaded.append(importlib.util.module_from_spec(spec))
                spec.loader.exec_module(loaded[0])
            return loaded[0]

        def upload(key: str, body: bytes) -> dict:
            app = cold_start()
            s3.put_object(Bucket=BUCKET, Key=key, Body=body)
            event = {
                "version": "0",
                "source": "aws.s3",
                "detail-type": "Object Created",
                "detail": {"bucket": {"name": BUCKET}, "object": {"key": key, "size": len(body)}},
            }
            result = app.handler(event, Context())
            json.dumps(result)
            return result

        def report(key: str) -> str:
            return s3.get_object(Bucket=BUCKET, Key=key + ".report.txt")["Body"].read().decode("utf-8")

        yield upload, report, s3


def wines_table(db) -> tuple:
    with psycopg.connect(db.conninfo) as conn:
        return conn.execute("SELECT count(*), md5(string_agg(w::text, '|' ORDER BY w.id)) FROM wines w").fetchone()


def admin_texts(telegram) -> list[str]:
    return [c.result["text"] for c in telegram.sent_messages(ADMIN_CHAT)]


def test_a_dropped_json_is_imported_and_reported_to_the_admin_chat(drop, fresh_db, telegram):
    upload, report, _ = drop
    before = wines_table(fresh_db)[0]
    key = "catalog/incoming/2026-11-autumn.json"
    result = upload(key, json.dumps(EXAMPLE, ensure_ascii=False).encode("utf-8"))
    assert result == {"files": [{"key": key, "imported": True}]}
    assert wines_table(fresh_db)[0] == before + len(EXAMPLE["wines"])
    text = report(key)
    assert text.startswith("✅") and f"{len(EXAMPLE['wines'])} вин" in text
    assert admin_texts(telegram) == [text]


def test_a_zip_with_photos_uploads_them_to_the_bucket(drop, fresh_db, telegram):
    upload, report, s3 = drop
    rows = [dict(EXAMPLE["wines"][0], image="photos/label.png")]
    bundle = io.BytesIO()
    with zipfile.ZipFile(bundle, "w") as archive:
        archive.writestr("autumn/wines.json", json.dumps({"wines": rows}, ensure_ascii=False))
        archive.writestr("autumn/photos/label.png", PHOTO.read_bytes())
        archive.writestr("__MACOSX/autumn/._wines.json", b"resource fork")
    key = "catalog/incoming/autumn.zip"
    assert upload(key, bundle.getvalue())["files"][0]["imported"] is True
    with psycopg.connect(fresh_db.conninfo) as conn:
        (image_key,) = conn.execute("SELECT image_key FROM wines WHERE name = %s", (rows[0]["name"],)).fetchone()
    assert image_key.startswith("wines/") and image_key.endswith("label.png")
    assert s3.get_object(Bucket=BUCKET, Key=image_key)["Body"].read() == PHOTO.read_bytes()
    assert "фото: 1" in report(key)


def test_a_bad_file_changes_nothing_and_says_why(drop, fresh_db, telegram):
    upload, report, _ = drop
    before = wines_table(fresh_db)
    rows = [dict(w) for w in EXAMPLE["wines"]]
    rows[1]["price_rub"] = -5  # one bad row: nothing is imported
    key = "catalog/incoming/broken.json"
    assert upload(key, json.dumps({"wines": rows}, ensure_ascii=False).encode())["files"][0]["imported"] is False
    assert wines_table(fresh_db) == before
    text = report(key)
    assert text.startswith("❌") and "ничего не изменилось" in text and "price_rub" in text and "запись 2" in text
    assert admin_texts(telegram) == [text]


@pytest.mark.parametrize(
    ("name", "body", "reason"),
    [
        ("notes.txt", b"hello", "неподдерживаемый тип"),
        ("broken.zip", b"PK\x03\x04 not really", "повреждён"),
        ("two.zip", "two", "ровно один файл каталога"),
        ("evil.zip", "evil", "недопустимый путь"),
        ("cp1251.json", "не utf-8".encode("cp1251"), "UTF-8"),
    ],
)
def test_bad_uploads_are_refused_with_a_reason(drop, fresh_db, name, body, reason):
    upload, report, _ = drop
    if body == "two":
        bundle = io.BytesIO()
        with zipfile.ZipFile(bundle, "w") as archive:
            archive.writestr("a.json", json.dumps(EXAMPLE))
            archive.writestr("b.csv", "name\n")
        body = bundle.getvalue()
    elif body == "evil":
        bundle = io.BytesIO()
        with zipfile.ZipFile(bundle, "w") as archive:
            archive.writestr("../../etc/wines.json", json.dumps(EXAMPLE))
        body = bundle.getvalue()
    before = wines_table(fresh_db)
    key = f"catalog/incoming/{name}"
    assert upload(key, body)["files"][0]["imported"] is False
    assert reason in report(key) and "catalog-drop-" not in report(key), "no temporary paths in the report"
    assert wines_table(fresh_db) == before


def test_reports_and_other_prefixes_are_not_imported(drop, telegram):
    upload, _, s3 = drop
    assert upload("catalog/incoming/x.json.report.txt", b"a report")["files"] == []
    assert upload("wines/abc-label.png", PHOTO.read_bytes())["files"] == []
    assert admin_texts(telegram) == []


def test_without_an_admin_chat_only_the_report_is_written(drop, monkeypatch, telegram):
    monkeypatch.delenv("ADMIN_CHAT_ID")
    upload, report, _ = drop
    key = "catalog/incoming/quiet.json"
    upload(key, json.dumps(EXAMPLE, ensure_ascii=False).encode("utf-8"))
    assert report(key).startswith("✅") and telegram.sent_messages() == []


def test_replace_mode_retires_the_wines_not_in_the_file(drop, fresh_db, monkeypatch):
    monkeypatch.setenv("CATALOG_DROP_MODE", "replace")
    upload, report, _ = drop
    key = "catalog/incoming/only-these.json"
    assert upload(key, json.dumps(EXAMPLE, ensure_ascii=False).encode("utf-8"))["files"][0]["imported"] is True
    with psycopg.connect(fresh_db.conninfo) as conn:
        available = conn.execute("SELECT count(*) FROM wines WHERE available").fetchone()[0]
        retired = conn.execute("SELECT count(*) FROM wines WHERE NOT available").fetchone()[0]
    assert available == len(EXAMPLE["wines"]) and retired == 64
    assert "замена каталога" in report(key) and "Сняты с продажи (их нет в файле): 64." in report(key)


def test_an_unknown_drop_mode_is_refused(drop, fresh_db, monkeypatch):
    monkeypatch.setenv("CATALOG_DROP_MODE", "append")
    upload, report, _ = drop
    before = wines_table(fresh_db)
    upload("catalog/incoming/x.json", json.dumps(EXAMPLE, ensure_ascii=False).encode("utf-8"))
    assert "CATALOG_DROP_MODE" in report("catalog/incoming/x.json") and wines_table(fresh_db) == before


def test_a_bad_setting_leaves_the_file_with_a_report_naming_it(drop, fresh_db, monkeypatch):
    monkeypatch.setenv("EMBEDDING_PROVIDER", "word2vec")  # unreadable: the function cannot import at all
    upload, report, _ = drop
    before = wines_table(fresh_db)
    key = "catalog/incoming/spring.json"
    assert upload(key, json.dumps(EXAMPLE, ensure_ascii=False).encode("utf-8"))["files"] == [
        {"key": key, "imported": False}
    ]
    assert report(key).startswith("❌") and "EMBEDDING_PROVIDER" in report(key)
    assert wines_table(fresh_db) == before
