"""`sommelier serve`'s server (the deployed Starlette app under uvicorn) over real sockets.

Telegram opens up to 40 webhook connections at once: 40 real-shaped updates fired together must all
get a 200 with no connection reset, the acknowledgements must not wait for any turn, and each chat's
turns must run in the order its updates were accepted.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest
from sommelier.settings import load_settings
from sommelier_dev.cli.serve_cmd import build_local_server

from tests.fakes.telegram_updates import TEST_WEBHOOK_SECRET, text_update

CONNECTIONS = 40
CHATS = 10


@pytest.fixture
def environment(monkeypatch):
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", TEST_WEBHOOK_SECRET)
    monkeypatch.setenv("TELEGRAM_BOT_USERNAME", "sommelier_test_bot")
    for name in ("QUEUE_URL", "IDEMPOTENCY_TABLE", "SOMMELIER_SECRETS_ARN"):
        monkeypatch.delenv(name, raising=False)


class RecordingTurns:
    """Turns that wait for a signal: while they wait, every acknowledgement must still come back."""

    def __init__(self):
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.accepted: dict[int, list[int]] = {}  # per chat, in the order the app enqueued them
        self.processed: dict[int, list[int]] = {}

    def process(self, update: dict, attempt: int) -> None:
        assert self.release.wait(timeout=60), "never released"
        chat_id = update["message"]["chat"]["id"]
        with self.lock:
            self.processed.setdefault(chat_id, []).append(update["update_id"])


def test_40_simultaneous_updates_all_200_no_reset_order_kept_and_acks_never_wait(environment):
    turns = RecordingTurns()
    server, workers = build_local_server(load_settings(), process=turns.process, workers=4)

    original_enqueue = workers.enqueue

    def recording_enqueue(update, chat_id):  # the acceptance order, as the app handed them over
        with turns.lock:
            turns.accepted.setdefault(chat_id, []).append(update["update_id"])
            original_enqueue(update, chat_id)

    workers.enqueue = recording_enqueue
    server.start()
    updates = [text_update(100_000 + n, f"вино к ужину №{n}", chat_id=8_000 + n % CHATS) for n in range(CONNECTIONS)]
    start = threading.Barrier(CONNECTIONS)

    def post(update: dict) -> tuple[int, dict]:
        with httpx2.Client(timeout=30) as http:  # one connection each, opened together
            start.wait(timeout=30)
            response = http.post(
                f"{server.url}/telegram/webhook",
                json=update,
                headers={"X-Telegram-Bot-Api-Secret-Token": TEST_WEBHOOK_SECRET},
            )
            return response.status_code, response.json()

    try:
        with ThreadPoolExecutor(max_workers=CONNECTIONS) as pool:
            answers = list(pool.map(post, updates))  # a reset would raise here
        # every ack is back while all turns are still blocked: nothing waited for a turn
        assert not turns.release.is_set() and sum(map(len, turns.processed.values())) == 0
        assert answers == [(200, {"ok": True})] * CONNECTIONS
        turns.release.set()
        assert workers.wait_idle(timeout=60)
    finally:
        turns.release.set()
        server.stop()
        workers.shutdown()
    assert workers.dead_letters == []
    assert sum(map(len, turns.processed.values())) == CONNECTIONS
    assert turns.processed == turns.accepted, "each chat's turns ran in the order they were accepted"
    assert len(turns.processed) == CHATS


def test_health_reveals_configuration_but_no_secret(environment, monkeypatch):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:health-check-token-0123456789abcdefgh")
    monkeypatch.setenv("SOMMELIER_GIT_REVISION", "abc1234")
    server, workers = build_local_server(load_settings(), process=lambda update, attempt: None)
    server.start()
    try:
        response = httpx2.get(f"{server.url}/health", timeout=30)
        posted_get = httpx2.get(f"{server.url}/telegram/webhook", timeout=30)
    finally:
        server.stop()
        workers.shutdown()
    from sommelier import __version__

    assert response.status_code == 200
    assert response.json() == {
        "ok": True,
        "version": __version__,
        "revision": "abc1234",
        "queue": False,
        "mode": "inline",
        "idempotency_table": False,
        "bot_token": True,
        "bot_username": True,
        "webhook_secret": True,
    }
    assert "health-check-token" not in response.text and TEST_WEBHOOK_SECRET not in response.text
    assert posted_get.status_code == 405


def test_health_through_the_lambda_handler(environment, monkeypatch):
    """GET /health as API Gateway hands it to the function (Mangum): the same answer, no secret in it."""
    import json

    from tests.fakes.telegram_updates import webhook_function

    monkeypatch.setenv("QUEUE_URL", "https://sqs.eu-central-1.amazonaws.com/123456789012/turns.fifo")
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    event = {
        "version": "2.0",
        "routeKey": "GET /health",
        "rawPath": "/health",
        "rawQueryString": "",
        "headers": {"host": "abc.execute-api.eu-central-1.amazonaws.com"},
        "requestContext": {"http": {"method": "GET", "path": "/health", "sourceIp": "203.0.113.9"}},
        "isBase64Encoded": False,
    }
    response = webhook_function()(event, None)
    assert response["statusCode"] == 200
    health = json.loads(response["body"])
    assert health["queue"] is True and health["mode"] == "queue" and health["bot_token"] is False
    assert "sqs" not in response["body"] and TEST_WEBHOOK_SECRET not in response["body"]
