"""Fixtures of the hardening tests: an environment pointing every adapter at the loopback fakes (tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.hardening.support import BOT, SECRET


@pytest.fixture
def environment(monkeypatch, telegram, fresh_db, state_dir):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("TELEGRAM_BOT_USERNAME", BOT)
    monkeypatch.setenv("DATABASE_URL", fresh_db.conninfo)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    for name in (
        "QUEUE_URL",
        "IDEMPOTENCY_TABLE",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "IMAGES_BUCKET",
        "TOOL_FUNCTION_NAME",
        "SOMMELIER_SECRETS_ARN",
    ):
        monkeypatch.delenv(name, raising=False)
    yield
