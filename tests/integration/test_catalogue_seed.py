"""The CatalogueSeed custom resource (CatalogueUrl) through the catalogue drop function's handler: the shop's
file served over a local HTTP server, CloudFormation's answer at a loopback recorder, a real database, the
fake Bot API as the admin chat. A new stack's empty catalogue is filled; a filled one is never touched; a
bad file or an unreachable URL is reported and never fails the deploy."""

from __future__ import annotations

import importlib.util
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psycopg
import pytest

from tests.fakes.cloudformation import CloudFormationResponses

ROOT = Path(__file__).resolve().parents[2]
APP_PATH = ROOT / "functions" / "catalog_drop" / "app.py"
EXAMPLE = (ROOT / "docs" / "examples" / "catalog-example.json").read_bytes()
ADMIN_CHAT = -100434343


@dataclass
class Context:
    function_name: str = "sommelier-catalog-drop"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:eu-central-1:123456789012:function:sommelier-catalog-drop"
    aws_request_id: str = "3f1f9a52-6c1e-4b7e-9a40-000000000099"

    def get_remaining_time_in_millis(self) -> int:
        return 120_000


class _Files(BaseHTTPRequestHandler):
    files = {"/shop/catalog.json": EXAMPLE, "/shop/broken.json": b'{"wines": [{"name": ""}]}'}

    def do_GET(self):  # noqa: N802
        body = self.files.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, *args):
        pass


def _serve(handler) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.responses = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def seed(monkeypatch, telegram, tmp_path):
    files, files_url = _serve(_Files)
    recorder, recorder_url = _serve(CloudFormationResponses)
    for name, value in {
        "EMBEDDING_PROVIDER": "local",
        "ADMIN_CHAT_ID": str(ADMIN_CHAT),
        "TELEGRAM_BOT_TOKEN": telegram.token,
        "TELEGRAM_API_BASE_URL": telegram.base_url,
        "SOMMELIER_STATE_DIR": str(tmp_path),  # photos in a local folder (no IMAGES_BUCKET)
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("IMAGES_BUCKET", "TOOL_FUNCTION_NAME", "SOMMELIER_SECRETS_ARN", "MODEL_KEYS_SECRET_ARN"):
        monkeypatch.delenv(name, raising=False)

    def run(database, path: str, request_type: str = "Create") -> dict:
        monkeypatch.setenv("DATABASE_URL", database.conninfo)
        spec = importlib.util.spec_from_file_location(f"catalog_drop_seed_{request_type}", APP_PATH)
        app = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(app)  # a cold start in this test's environment
        event = {
            "RequestType": request_type,
            "ResponseURL": f"{recorder_url}/answer",
            "StackId": "arn:aws:cloudformation:eu-central-1:123456789012:stack/sommelier/1",
            "RequestId": "seed-1",
            "LogicalResourceId": "CatalogueSeed",
            "ResourceType": "Custom::CatalogueSeed",
            "ResourceProperties": {"ServiceToken": "arn", "Url": f"{files_url}{path}"},
        }
        assert app.handler(event, Context()) == {"status": "SUCCESS"}
        return recorder.responses[-1]["body"]

    yield run
    files.shutdown()
    recorder.shutdown()


def wines(database) -> int:
    with psycopg.connect(database.conninfo) as conn:
        return conn.execute("SELECT count(*) FROM wines").fetchone()[0]


def admin_texts(telegram) -> list[str]:
    return [c.result["text"] for c in telegram.sent_messages(ADMIN_CHAT)]


def test_an_empty_catalogue_gets_the_shops_file_on_deploy(seed, empty_db, telegram):
    answer = seed(empty_db, "/shop/catalog.json")
    expected = len(json.loads(EXAMPLE)["wines"])
    assert answer["Status"] == "SUCCESS" and answer["PhysicalResourceId"] == "sommelier-catalogue-seed"
    assert answer["Reason"].startswith("Imported")
    assert wines(empty_db) == expected
    (text,) = admin_texts(telegram)
    assert text.startswith("✅") and f"{expected} вин" in text


def test_a_catalogue_with_wines_is_never_touched(seed, fresh_db, telegram):
    before = wines(fresh_db)
    answer = seed(fresh_db, "/shop/catalog.json", request_type="Update")
    assert answer["Status"] == "SUCCESS" and "already has" in answer["Reason"]
    assert wines(fresh_db) == before and admin_texts(telegram) == []


def test_a_bad_file_or_a_missing_one_is_reported_and_the_deploy_goes_on(seed, empty_db, telegram):
    refused = seed(empty_db, "/shop/broken.json")
    assert refused["Status"] == "SUCCESS" and refused["Reason"].startswith("Refused")
    missing = seed(empty_db, "/shop/nowhere.json")
    assert missing["Status"] == "SUCCESS" and missing["Reason"].startswith("Refused")
    assert wines(empty_db) == 0
    texts = admin_texts(telegram)
    assert len(texts) == 2 and all(t.startswith("❌") for t in texts)
    deleted = seed(empty_db, "/shop/catalog.json", request_type="Delete")
    assert deleted["Status"] == "SUCCESS" and wines(empty_db) == 0  # Delete imports nothing, removes nothing
