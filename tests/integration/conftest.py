"""Fixtures shared by the integration tests that talk to the fake Bot API with the real client."""

from __future__ import annotations

import pytest
from sommelier.telegram.client import TelegramClient

from tests.fakes.telegram_server import FakeTelegram


@pytest.fixture(scope="module")
def server():
    """One fake Bot API per test module (a module may override it, e.g. with its own token)."""
    with FakeTelegram() as fake:
        yield fake


@pytest.fixture
def fake(server):
    server.reset()
    yield server
    server.reset()


@pytest.fixture
def client(fake):
    with TelegramClient(fake.token, fake.base_url) as c:
        yield c
