"""A local webhook (no queue: turns run inline) without TELEGRAM_BOT_TOKEN: a 503 so that Telegram
redelivers, and one clear log line naming the missing setting, not a traceback."""

from __future__ import annotations

import json

from tests.fakes.telegram_updates import TEST_WEBHOOK_SECRET, text_update, webhook_event, webhook_function


def test_inline_webhook_without_a_bot_token_asks_for_it(fresh_db, state_dir, monkeypatch, caplog):
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    monkeypatch.delenv("SOMMELIER_SECRETS_ARN", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", TEST_WEBHOOK_SECRET)
    monkeypatch.delenv("QUEUE_URL", raising=False)  # no queue: the turn runs inline
    monkeypatch.setenv("DATABASE_URL", fresh_db.conninfo)
    response = webhook_function()(webhook_event(text_update(4242, "красное к стейку")), None)
    assert response["statusCode"] == 503
    assert json.loads(response["body"]) == {"ok": False, "error": "try again"}
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    [message] = [r.getMessage() for r in errors]
    assert message.startswith("could not process the update: TELEGRAM_BOT_TOKEN is not set")
    assert message.endswith("set it to answer (Telegram will redeliver)")
    assert errors[0].exc_info is None  # a configuration problem, not a traceback
