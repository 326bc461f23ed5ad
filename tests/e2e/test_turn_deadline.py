"""The agent function's remaining time is the turn's budget: a model that would answer too late is cut
off in time for the offline answer to be delivered, through the real SQS handler and the fake Bot API."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest
import sommelier.agent.loop as loop_module
import sommelier.telegram.consumer as consumer

from tests.bot_harness import database_url, make_bot
from tests.fakes.openai_server import delayed, reply
from tests.fakes.telegram_updates import TEST_WEBHOOK_SECRET, user

CHAT = 515151


@pytest.fixture
def environment(monkeypatch, telegram, fresh_memory, state_dir):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", TEST_WEBHOOK_SECRET)
    monkeypatch.setenv("DATABASE_URL", database_url(fresh_memory))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    monkeypatch.setenv("SOMMELIER_AGE_GATE", "0")
    monkeypatch.delenv("QUEUE_URL", raising=False)
    monkeypatch.delenv("IDEMPOTENCY_TABLE", raising=False)
    monkeypatch.delenv("LLM_TURN_BUDGET_S", raising=False)
    yield


def sqs_event(update: dict) -> dict:
    attributes = {
        "ApproximateReceiveCount": "1",
        "MessageGroupId": str(CHAT),
        "MessageDeduplicationId": str(update["update_id"]),
        "SequenceNumber": "1",
        "SentTimestamp": "1",
        "SenderId": "x",
        "ApproximateFirstReceiveTimestamp": "1",
    }
    record = {
        "messageId": "m1",
        "receiptHandle": "r1",
        "body": json.dumps(update),
        "attributes": attributes,
        "messageAttributes": {},
        "md5OfBody": "x",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:eu-central-1:123456789012:turns.fifo",
        "awsRegion": "eu-central-1",
    }
    return {"Records": [record]}


def test_the_invocations_remaining_time_bounds_the_turn(environment, fresh_memory, telegram, llm, monkeypatch):
    turns: list[dict] = []
    monkeypatch.setattr(loop_module, "record_turn", turns.append)
    monkeypatch.setenv("DELIVERY_RESERVE_S", "1")
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    agent = consumer.AgentContainer(bot=bot)
    llm.default = lambda body: delayed(reply("{}"), 60)  # a model that would answer in a minute
    ends_at = time.monotonic() + 4.0
    context = SimpleNamespace(get_remaining_time_in_millis=lambda: int((ends_at - time.monotonic()) * 1000))
    update = {
        "update_id": 777001,
        "message": {
            "message_id": 1,
            "date": 1,
            "chat": {"id": CHAT, "type": "private"},
            "from": user(CHAT),
            "text": "красное сухое к стейку до 3000",
        },
    }
    result = agent.handle_sqs(sqs_event(update), context)
    assert result["batchItemFailures"] == []
    assert len(turns) == 1
    metadata = turns[0]
    assert metadata["turn_budget_s"] == pytest.approx(3.0, abs=0.2), "remaining time minus the delivery reserve"
    assert metadata["mode"] == "offline_fallback" and metadata["recommendations"]
    assert metadata["llm_http_requests"] == 1, "the one slow generation was not retried: another could not fit"
    assert time.monotonic() < ends_at, "answered before the invocation's time ran out"
    assert telegram.sent_messages(CHAT), "the customer got the offline answer"
