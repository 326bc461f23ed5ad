"""The scheduled functions of the template, through their Lambda handlers: the Monday report to the admin
chat (fake Bot API) and the nightly retention job (the tool function with the schedule's own input)."""

from __future__ import annotations

import importlib.util
import io
import json
from dataclasses import dataclass
from pathlib import Path

import cfnlint.decode as cfnlint_decode
import psycopg
import pytest
from PIL import Image
from sommelier.toolfn.handler import handle

ROOT = Path(__file__).resolve().parents[2]
ADMIN_CHAT = -100515151


@dataclass
class Context:
    function_name: str = "sommelier-scheduled"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:eu-central-1:123456789012:function:sommelier-scheduled"
    aws_request_id: str = "3f1f9a52-6c1e-4b7e-9a40-000000000043"


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def schedule_input(function: str, event: str) -> dict:
    template, _ = cfnlint_decode.decode(str(ROOT / "template.yaml"))
    body = template["Resources"][function]["Properties"]["Events"][event]["Properties"]["Input"]
    if isinstance(body, dict):  # !Sub with the parameter's default
        defaults = {k: str(v.get("Default")) for k, v in template["Parameters"].items()}
        body = body["Fn::Sub"]
        for name, value in defaults.items():
            body = body.replace("${" + name + "}", value)
    return json.loads(body)


@pytest.fixture
def database(monkeypatch, fresh_db, telegram):
    monkeypatch.setenv("DATABASE_URL", fresh_db.conninfo)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    yield fresh_db


def seed_turn(db, user: int, update_id: int, text: str) -> None:
    ids = [w["id"] for w in handle({"tool": "search_wines", "arguments": {"limit": 1}}, db)["wines"]]
    result = handle(
        {
            "tool": "save_turn",
            "arguments": {
                "chat_id": user,
                "user_id": user,
                "update_id": update_id,
                "user_text": text,
                "answer_text": "ответ",
                "wine_ids": ids,
                "response_type": "recommendation",
                "stats": {"mode": "llm", "llm_calls": 2, "prompt_tokens": 1000, "completion_tokens": 100},
            },
        },
        db,
    )
    assert "error" not in result


def test_the_monday_report_goes_to_the_admin_chat(database, telegram, monkeypatch):
    monkeypatch.setenv("ADMIN_CHAT_ID", str(ADMIN_CHAT))
    seed_turn(database, 91001, 1, "красное к стейку до 2000")
    app = load(ROOT / "functions" / "weekly_report" / "app.py", "weekly_report_under_test")
    result = app.handler(schedule_input("WeeklyReportFunction", "EveryMonday"), Context())
    assert result == {"sent": True, "turns": 1, "customers": 1}
    sent = telegram.sent_messages(ADMIN_CHAT)
    assert sent[0].method == "sendPhoto" and sent[0].meta.get("photo_source") == "upload"
    assert Image.open(io.BytesIO(sent[0].files["photo"])).format == "PNG"
    assert sent[1].result["text"].startswith("📊 Отчёт сомелье") and "Вопросов: 1" in sent[1].result["text"]


def test_the_report_goes_nowhere_but_the_admin_chat(database, telegram, monkeypatch):
    app = load(ROOT / "functions" / "weekly_report" / "app.py", "weekly_report_no_admin")
    assert app.handler({}, Context())["sent"] is False  # no ADMIN_CHAT_ID
    monkeypatch.setenv("ADMIN_CHAT_ID", str(ADMIN_CHAT))
    assert app.handler({"chat_id": 12345}, Context())["sent"] is False
    assert telegram.sent_messages() == []


def test_the_nightly_retention_job_deletes_old_messages(database):
    seed_turn(database, 92001, 1, "старое")
    seed_turn(database, 92001, 2, "новое")
    with psycopg.connect(database.conninfo) as conn:
        conn.execute("UPDATE messages SET created_at = now() - interval '181 days' WHERE update_id = 1")
    event = schedule_input("WineToolsFunction", "MessageRetention")
    assert event == {"tool": "purge_old_messages", "arguments": {"days": 180}, "scheduled": True}
    app = load(ROOT / "functions" / "wine_tools" / "app.py", "wine_tools_retention")
    assert app.handler(event, Context()) == {"deleted": 2, "days": 180}
    with psycopg.connect(database.conninfo) as conn:
        assert [r[0] for r in conn.execute("SELECT content FROM messages WHERE role = 'user'")] == ["новое"]


def test_a_failed_nightly_job_fails_its_invocation(database):
    """Asynchronous: an error answer would be read by nobody, so the invocation fails instead (Lambda retries
    it, then sends it to the failure destination that the JobFailuresAlarm watches)."""
    from sommelier.toolfn.handler import ScheduledJobFailed

    app = load(ROOT / "functions" / "wine_tools" / "app.py", "wine_tools_retention_failing")
    event = schedule_input("WineToolsFunction", "MessageRetention") | {"arguments": {"days": 0}}
    with pytest.raises(ScheduledJobFailed, match="purge_old_messages"):
        app.handler(event, Context())
    unscheduled = {"tool": "purge_old_messages", "arguments": {"days": 0}}
    assert "error" in app.handler(unscheduled, Context())  # a caller's error stays an answer


@pytest.mark.parametrize(
    ("variable", "bad"), [("ADMIN_CHAT_ID", "shop"), ("LLM_PRICE_PER_MTOK", "cheap"), ("DATABASE_POOL_SIZE", "many")]
)
def test_a_bad_setting_is_a_reason_not_a_crash(database, telegram, monkeypatch, variable, bad):
    monkeypatch.setenv("ADMIN_CHAT_ID", str(ADMIN_CHAT))
    monkeypatch.setenv(variable, bad)  # set before the container starts, as Lambda's environment is
    app = load(ROOT / "functions" / "weekly_report" / "app.py", f"weekly_report_bad_{variable.lower()}")
    assert variable in app.handler({}, Context())["reason"]
    assert telegram.sent_messages() == []
