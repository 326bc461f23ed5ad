"""Fixtures of the hardening tests: an environment pointing every adapter at the loopback fakes (tests/conftest.py)
and the data at the in-memory store; a test of the database's own faults passes its `fresh_db` to the bot."""

from __future__ import annotations

import pytest

from tests.bot_harness import database_url
from tests.hardening.support import BOT, SECRET


@pytest.fixture
def environment(monkeypatch, telegram, fresh_memory, state_dir):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("TELEGRAM_BOT_USERNAME", BOT)
    monkeypatch.setenv("DATABASE_URL", database_url(fresh_memory))
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
