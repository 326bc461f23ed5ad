"""The migrate custom-resource handler (functions/migrate/app.py).

A tiny HTTP server on 127.0.0.1 stands in for CloudFormation's pre-signed S3 ResponseURL.
The migrations themselves are replaced by stubs: this is about the CloudFormation protocol.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import threading
import types
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.fakes.cloudformation import CloudFormationResponses

ROOT = Path(__file__).resolve().parents[2]
APP_PATH = ROOT / "functions" / "migrate" / "app.py"
LAYER_PATH = ROOT / "layers" / "sommelier"


@pytest.fixture
def response_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), CloudFormationResponses)
    server.responses = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def app(monkeypatch):
    """Load app.py by path with stand-in sommelier.db modules (restored after the test)."""
    fake_migrations = types.ModuleType("sommelier.db.migrations")
    fake_migrations.apply_migrations = lambda conninfo, **timeouts: pytest.fail("apply_migrations not stubbed")
    fake_url = types.ModuleType("sommelier.db.url")
    fake_url.resolve_database_url = lambda settings: pytest.fail("resolve_database_url not stubbed")
    monkeypatch.setitem(sys.modules, "sommelier.db.migrations", fake_migrations)
    monkeypatch.setitem(sys.modules, "sommelier.db.url", fake_url)
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "sommelier")
    spec = importlib.util.spec_from_file_location("migrate_app_under_test", APP_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.fake_migrations, module.fake_url = fake_migrations, fake_url  # the work imports these at run time
    monkeypatch.setattr("time.sleep", lambda _seconds: None)
    return module


class _Context:
    function_name = "sommelier-MigrateFunction-abc"
    function_version = "$LATEST"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:eu-central-1:123456789012:function:sommelier-MigrateFunction-abc"
    aws_request_id = "5f0c2d4e-0000-4000-8000-000000000001"
    log_group_name = "/aws/lambda/sommelier-MigrateFunction-abc"
    log_stream_name = "2025/01/01/[$LATEST]0123456789abcdef"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 300_000


def _event(server, request_type: str, **extra) -> dict:
    host, port = server.server_address
    event = {
        "RequestType": request_type,
        "ServiceToken": _Context.invoked_function_arn,
        "ResponseURL": f"http://{host}:{port}/cfn-response?X-Amz-Signature=abc",
        "StackId": "arn:aws:cloudformation:eu-central-1:123456789012:stack/sommelier/1f2e3d4c",
        "RequestId": "0b1c2d3e-aaaa-4bbb-8ccc-ddddeeeeffff",
        "ResourceType": "Custom::DatabaseMigrations",
        "LogicalResourceId": "DatabaseMigrations",
        "ResourceProperties": {"ServiceToken": _Context.invoked_function_arn, "SchemaVersion": "1"},
    }
    event.update(extra)
    return event


def _stub_migrations(monkeypatch, app, applied):
    calls = []

    def apply_migrations(conninfo, *, connect_timeout_s=None, lock_timeout_s=None, statement_timeout_s=None):
        calls.append(conninfo)
        assert 0 < connect_timeout_s <= 10 and 0 < lock_timeout_s < statement_timeout_s, "every wait is bounded"
        return applied

    monkeypatch.setattr(
        app.fake_url, "resolve_database_url", lambda settings: "postgresql://u:p@db.internal:5432/sommelier"
    )
    monkeypatch.setattr(app.fake_migrations, "apply_migrations", apply_migrations)
    return calls


def _only_response(server) -> dict:
    assert len(server.responses) == 1, server.responses
    request = server.responses[0]
    assert request["path"] == "/cfn-response?X-Amz-Signature=abc"
    assert request["content_type"] == ""  # the pre-signed URL is signed without a content type
    return request["body"]


def test_create_applies_migrations_and_reports_success(app, response_server, monkeypatch):
    calls = _stub_migrations(monkeypatch, app, ["0001", "0002"])
    event = _event(response_server, "Create")

    assert app.handler(event, _Context()) is None

    assert calls == ["postgresql://u:p@db.internal:5432/sommelier"]
    body = _only_response(response_server)
    assert body["Status"] == "SUCCESS"
    assert body["PhysicalResourceId"] == "sommelier-db-migrations"
    assert body["StackId"] == event["StackId"]
    assert body["RequestId"] == event["RequestId"]
    assert body["LogicalResourceId"] == "DatabaseMigrations"
    assert body["Data"] == {"Applied": "0001,0002"}
    assert _Context.log_stream_name in body["Reason"]


def test_update_reruns_migrations_and_keeps_the_physical_id(app, response_server, monkeypatch):
    calls = _stub_migrations(monkeypatch, app, [])  # nothing new: still a success
    event = _event(
        response_server,
        "Update",
        PhysicalResourceId="sommelier-db-migrations",
        OldResourceProperties={"ServiceToken": _Context.invoked_function_arn, "SchemaVersion": "0"},
    )

    app.handler(event, _Context())

    assert len(calls) == 1
    body = _only_response(response_server)
    assert body["Status"] == "SUCCESS"
    assert body["PhysicalResourceId"] == "sommelier-db-migrations"
    assert body["Data"] == {"Applied": ""}


def test_delete_does_nothing_and_reports_success(app, response_server, monkeypatch):
    def must_not_run(*_args, **_kwargs):
        raise AssertionError("Delete must not touch the database")

    monkeypatch.setattr(app.fake_migrations, "apply_migrations", must_not_run)
    monkeypatch.setattr(app.fake_url, "resolve_database_url", must_not_run)

    app.handler(_event(response_server, "Delete", PhysicalResourceId="sommelier-db-migrations"), _Context())

    body = _only_response(response_server)
    assert body["Status"] == "SUCCESS"
    assert body["PhysicalResourceId"] == "sommelier-db-migrations"


def test_failure_reports_failed_with_a_one_line_reason(app, response_server, monkeypatch):
    monkeypatch.setattr(
        app.fake_url, "resolve_database_url", lambda settings: "postgresql://u:p@db.internal:5432/sommelier"
    )

    def broken(conninfo, **timeouts):
        raise RuntimeError('relation "wines" already exists\nDETAIL: a long multi-line\ndiagnostic')

    monkeypatch.setattr(app.fake_migrations, "apply_migrations", broken)

    app.handler(_event(response_server, "Create"), _Context())  # must not raise

    body = _only_response(response_server)
    assert body["Status"] == "FAILED"
    assert body["Reason"].startswith('RuntimeError: relation "wines" already exists')
    assert "\n" not in body["Reason"] and "Traceback" not in body["Reason"]
    assert "DETAIL" not in body["Reason"]
    assert _Context.log_stream_name in body["Reason"]
    assert body["PhysicalResourceId"] == "sommelier-db-migrations"
    assert "u:p@" not in body["Reason"]  # the URL (with the password) never leaks into the reason


def test_secret_lookup_failure_is_reported_too(app, response_server, monkeypatch):
    def no_secret(settings):
        raise PermissionError("AccessDeniedException when calling GetSecretValue")

    monkeypatch.setattr(app.fake_url, "resolve_database_url", no_secret)
    monkeypatch.setattr(
        app.fake_migrations, "apply_migrations", lambda conninfo, **timeouts: pytest.fail("must not be reached")
    )

    app.handler(_event(response_server, "Update", PhysicalResourceId="sommelier-db-migrations"), _Context())

    body = _only_response(response_server)
    assert body["Status"] == "FAILED"
    assert body["Reason"].startswith("PermissionError: AccessDeniedException")


def test_broken_layer_fails_create_but_lets_delete_succeed(app, response_server, monkeypatch):
    monkeypatch.setitem(sys.modules, "sommelier.db.migrations", None)  # the import fails, as with a broken layer

    app.handler(_event(response_server, "Create"), _Context())
    app.handler(_event(response_server, "Delete", PhysicalResourceId="sommelier-db-migrations"), _Context())

    statuses = [r["body"]["Status"] for r in response_server.responses]
    assert statuses == ["FAILED", "SUCCESS"]
    assert "ModuleNotFoundError" in response_server.responses[0]["body"]["Reason"]
    assert "sommelier.db.migrations" in response_server.responses[0]["body"]["Reason"]


def test_unreachable_response_url_does_not_raise(app, monkeypatch):
    calls = _stub_migrations(monkeypatch, app, ["0001"])
    event = {**_event(types.SimpleNamespace(server_address=("127.0.0.1", 9)), "Create")}

    assert app.handler(event, _Context()) is None  # logged, retried, never raised
    assert len(calls) == 1, "the migrations ran even though CloudFormation can't be told"


def test_real_layer_modules_match_the_contract(monkeypatch):
    """The layer's modules have the names app.py imports, in the expected shape."""
    monkeypatch.syspath_prepend(str(LAYER_PATH))
    migrations = importlib.import_module("sommelier.db.migrations")
    url = importlib.import_module("sommelier.db.url")
    parameters = inspect.signature(migrations.apply_migrations).parameters
    timeouts = ("connect_timeout_s", "lock_timeout_s", "statement_timeout_s")
    assert list(parameters) == ["conninfo", *timeouts]
    assert all(parameters[name].kind is inspect.Parameter.KEYWORD_ONLY for name in timeouts)
    # app.py calls resolve_database_url(settings): one positional parameter, the rest optional.
    required = [
        p.name
        for p in inspect.signature(url.resolve_database_url).parameters.values()
        if p.default is inspect.Parameter.empty
    ]
    assert required == ["settings"]
