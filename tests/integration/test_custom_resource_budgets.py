"""Custom resources answer CloudFormation before the function's timeout, whatever the outside world does.

Each case gives the handler a context with a few seconds to live (BudgetedContext) and a hostile
peer: a database that accepts TCP but never answers, a migration lock held by someone else, work
that ignores every timeout. The recorded answer must be there, SUCCESS or FAILED, and it must have
arrived before the context's deadline.
"""

from __future__ import annotations

import importlib.util
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import psycopg
import pytest
from sommelier.deploy.custom_resource import ANSWER_RESERVE_S, ANSWER_RESERVE_SHARE, FAILED, SUCCESS, Budget, respond

from tests.fakes.cloudformation import BudgetedContext, CloudFormationResponses, SilentServer

ROOT = Path(__file__).resolve().parents[2]
LIFETIME_S = 4.0  # the fake function's timeout: small, so the tests stay fast


@pytest.fixture
def cloudformation():
    server = ThreadingHTTPServer(("127.0.0.1", 0), CloudFormationResponses)
    server.responses = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _event(server, request_type: str, **extra) -> dict:
    host, port = server.server_address
    return {
        "RequestType": request_type,
        "ResponseURL": f"http://{host}:{port}/cfn-response?X-Amz-Signature=abc",
        "StackId": "arn:aws:cloudformation:eu-central-1:123456789012:stack/sommelier/1f2e3d4c",
        "RequestId": "0b1c2d3e-aaaa-4bbb-8ccc-ddddeeeeffff",
        "ResourceType": "Custom::DatabaseMigrations",
        "LogicalResourceId": "DatabaseMigrations",
        "ResourceProperties": {},
        **extra,
    }


def _answer_in_time(server, context: BudgetedContext) -> dict:
    assert len(server.responses) == 1, server.responses
    response = server.responses[0]
    assert response["received_at"] < context.deadline, "CloudFormation heard back before the function's timeout"
    return response["body"]


def _load(relative: str, name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_budget_keeps_a_reserve_for_the_answer():
    context = BudgetedContext(LIFETIME_S)
    budget = Budget(context)
    assert budget.reserve_s == pytest.approx(min(ANSWER_RESERVE_S, budget.total_s * ANSWER_RESERVE_SHARE))
    assert budget.total_s <= LIFETIME_S
    assert budget.work_deadline <= context.deadline - budget.reserve_s
    assert budget.timeout(60) <= LIFETIME_S - budget.reserve_s
    assert Budget(BudgetedContext(900)).reserve_s == ANSWER_RESERVE_S  # a long function keeps 5 s, not 225


@pytest.mark.parametrize("request_type,status", [("Create", FAILED), ("Update", FAILED), ("Delete", SUCCESS)])
def test_work_that_ignores_every_timeout_still_gets_an_answer(cloudformation, request_type, status):
    stuck = threading.Event()

    def hangs(event, budget):
        stuck.wait(timeout=60)  # a socket read without a timeout, say
        raise AssertionError("released only after the test")

    context = BudgetedContext(LIFETIME_S)
    try:
        respond(_event(cloudformation, request_type, PhysicalResourceId="res-1"), context, hangs, physical_id="res-1")
    finally:
        stuck.set()
    body = _answer_in_time(cloudformation, context)
    assert body["Status"] == status and body["PhysicalResourceId"] == "res-1"
    assert ("budget" in body["Reason"]) or ("left as is" in body["Reason"])


@pytest.fixture
def migrate(monkeypatch):
    monkeypatch.delenv("DATABASE_SECRET_ARN", raising=False)
    monkeypatch.delenv("APP_DATABASE_SECRET_ARN", raising=False)
    yield _load("functions/migrate/app.py", "migrate_budget_under_test")


def test_a_database_that_accepts_tcp_but_never_answers_fails_the_migration_in_time(
    cloudformation, migrate, monkeypatch
):
    with SilentServer() as silent:
        monkeypatch.setenv(
            "DATABASE_URL", f"postgresql://sommelier:pw@127.0.0.1:{silent.port}/sommelier?sslmode=disable"
        )
        context = BudgetedContext(LIFETIME_S)
        migrate.handler(_event(cloudformation, "Create"), context)
    body = _answer_in_time(cloudformation, context)
    assert body["Status"] == FAILED
    assert "OperationalError" in body["Reason"] or "budget" in body["Reason"]
    assert "pw@" not in body["Reason"]


def test_a_held_migration_lock_fails_the_migration_in_time(cloudformation, migrate, monkeypatch, fresh_db):
    from sommelier.db.migrations import _ADVISORY_LOCK_KEY

    monkeypatch.setenv("DATABASE_URL", fresh_db.conninfo)
    with psycopg.connect(fresh_db.conninfo, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (_ADVISORY_LOCK_KEY,))  # another deploy is migrating
        context = BudgetedContext(LIFETIME_S)
        migrate.handler(_event(cloudformation, "Update", PhysicalResourceId="sommelier-db-migrations"), context)
    body = _answer_in_time(cloudformation, context)
    assert body["Status"] == FAILED
    assert "LockNotAvailable" in body["Reason"] or "lock timeout" in body["Reason"], body["Reason"]
    assert body["PhysicalResourceId"] == "sommelier-db-migrations"


def test_with_the_lock_free_the_same_migration_succeeds(cloudformation, migrate, monkeypatch, fresh_db):
    monkeypatch.setenv("DATABASE_URL", fresh_db.conninfo)
    context = BudgetedContext(30)
    migrate.handler(_event(cloudformation, "Update", PhysicalResourceId="sommelier-db-migrations"), context)
    body = _answer_in_time(cloudformation, context)
    assert body["Status"] == SUCCESS, body["Reason"]
    assert body["Data"] == {"Applied": ""}  # the test database is migrated already
