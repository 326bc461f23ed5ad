"""Flood waits across retries (local worker and SQS in moto), forum topics, closed topics and lost chats.

The fake Bot API over loopback, the in-memory store, the offline responder (no LLM): a recommendation
of "красное сухое к стейку до 3000" is an intro, photos and a closing with buttons.
"""

from __future__ import annotations

import json
import logging
import time

import boto3
import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from moto import mock_aws
from sommelier.telegram.consumer import FloodWait, retry_delay

from tests.bot_harness import database_url, deliver, make_bot
from tests.fakes.telegram_updates import TEST_BOT, TEST_CHAT, TEST_WEBHOOK_SECRET, text_update, user

ASK = "красное сухое к стейку до 3000"
FORUM = -1009876543210
TOPIC = 77


@pytest.fixture
def environment(monkeypatch, telegram, fresh_memory, state_dir):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", TEST_WEBHOOK_SECRET)
    monkeypatch.setenv("DATABASE_URL", database_url(fresh_memory))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    for name in ("QUEUE_URL", "IDEMPOTENCY_TABLE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    yield


def shown(telegram, chat_id=TEST_CHAT) -> list[tuple[str, str]]:
    return [(c.method, c.result.get("text") or c.result.get("caption") or "") for c in telegram.sent_messages(chat_id)]


def second_photo_floods(telegram, seconds: int) -> None:
    state = {"photos": 0}

    def second_photo(call) -> bool:
        if call.method != "sendPhoto":
            return False
        state["photos"] += 1
        return state["photos"] == 2

    telegram.fail_when(second_photo, status=429, retry_after=seconds, times=1)


def reference_answer(fresh_memory, telegram) -> list[tuple[str, str]]:
    """The answer as it arrives without any flood (another chat, same question)."""
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, text_update(1, ASK, chat_id=777001))
    return shown(telegram, 777001)


def topic_update(update_id: int, text: str, *, thread: int = TOPIC, chat_id: int = FORUM) -> dict:
    mention = f"@{TEST_BOT}"
    return {
        "update_id": update_id,
        "message": {
            "message_id": 500 + update_id,
            "message_thread_id": thread,
            "is_topic_message": True,
            "from": user(TEST_CHAT),
            "chat": {"id": chat_id, "type": "supergroup", "title": "Винный клуб", "is_forum": True},
            "date": 1763800000,
            "text": f"{mention} {text}",
            "entities": [{"type": "mention", "offset": 0, "length": len(mention)}],
        },
    }


# ---------------------------------------------------------------- flood waits


def test_a_40_second_flood_on_the_second_photo_is_waited_out_locally(environment, fresh_memory, telegram):
    expected = reference_answer(fresh_memory, telegram)
    assert sum(1 for method, _ in expected if method == "sendPhoto") >= 2
    bot = make_bot(fresh_memory, telegram)
    second_photo_floods(telegram, 40)
    deliver(bot, text_update(2, ASK))
    assert 40 in bot.sleeps  # the worker waited Telegram's retry_after (a virtual sleep)
    assert shown(telegram) == expected  # the whole answer, once, in order
    assert not any("Простите" in text for _, text in shown(telegram))


def test_a_flood_is_never_apologised_for_even_on_the_last_attempt(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram, max_receives=1)
    bot.wait_out_floods = False
    telegram.fail_when(lambda call: call.method == "sendMessage", status=429, retry_after=40, times=100)
    with pytest.raises(FloodWait) as flood:
        bot.process(text_update(3, "что такое танины?"), attempt=1)
    assert flood.value.retry_after == 40
    assert shown(telegram) == []
    assert len(telegram.calls_of("sendMessage")) == 1  # no apology attempted inside the flood window


@pytest.fixture
def queue(monkeypatch):
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    with mock_aws():
        sqs = boto3.client("sqs")
        url = sqs.create_queue(
            QueueName="turns.fifo",
            # Visible again at once unless the consumer pushes the visibility out itself.
            Attributes={"FifoQueue": "true", "VisibilityTimeout": "0"},
        )["QueueUrl"]
        monkeypatch.setenv("QUEUE_URL", url)
        yield sqs, url


def receive(sqs, url) -> dict | None:
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1, AttributeNames=["All"]).get("Messages", [])
    return got[0] if got else None


def lambda_event(message: dict) -> dict:
    attrs = message["Attributes"]
    return {
        "Records": [
            {
                "messageId": message["MessageId"],
                "receiptHandle": message["ReceiptHandle"],
                "body": message["Body"],
                "attributes": {
                    "ApproximateReceiveCount": attrs["ApproximateReceiveCount"],
                    "MessageGroupId": attrs["MessageGroupId"],
                    "MessageDeduplicationId": attrs["MessageDeduplicationId"],
                    "SequenceNumber": attrs.get("SequenceNumber", "1"),
                    "SentTimestamp": attrs["SentTimestamp"],
                    "SenderId": attrs["SenderId"],
                    "ApproximateFirstReceiveTimestamp": attrs["ApproximateFirstReceiveTimestamp"],
                },
                "messageAttributes": {},
                "md5OfBody": message["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:eu-central-1:123456789012:turns.fifo",
                "awsRegion": "eu-central-1",
            }
        ]
    }


def test_in_lambda_the_sqs_message_comes_back_after_the_flood_wait(
    environment, fresh_memory, telegram, queue, monkeypatch
):
    import sommelier.telegram.consumer as consumer

    sqs, url = queue
    expected = reference_answer(fresh_memory, telegram)
    bot = make_bot(fresh_memory, telegram)
    bot.wait_out_floods = False  # as bot_from_environment() decides when QUEUE_URL is set
    agent = consumer.AgentContainer(bot=bot)
    update = text_update(4, ASK)
    sqs.send_message(
        QueueUrl=url, MessageBody=json.dumps(update), MessageGroupId=str(TEST_CHAT), MessageDeduplicationId="4"
    )
    second_photo_floods(telegram, 40)

    first = receive(sqs, url)
    with pytest.raises(BatchProcessingError):  # a batch whose every record failed: Lambda returns them all
        agent.handle_sqs(lambda_event(first))
    assert 40 not in bot.sleeps  # Lambda does not sleep through a long flood wait
    assert receive(sqs, url) is None  # the visibility was pushed out past the wait (the queue's own is 0 s)
    assert retry_delay(1, 40) == 41

    # The wait is over: the message is visible again and comes back as attempt 2 (41 s later).
    later = time.monotonic() + 41
    monkeypatch.setattr(bot.floods, "_clock", lambda: later)
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=0)
    second = receive(sqs, url)
    assert second["Attributes"]["ApproximateReceiveCount"] == "2"
    result = agent.handle_sqs(lambda_event(second))
    assert result["batchItemFailures"] == []
    assert shown(telegram) == expected  # whole, once, no apology
    assert not any("Простите" in text for _, text in shown(telegram))


def test_the_flood_wait_is_capped():
    assert retry_delay(1, 4000) == 900
    assert retry_delay(2) == 40  # an ordinary failure keeps its short backoff


# ---------------------------------------------------------------- forum topics


def test_in_a_forum_topic_every_send_carries_the_thread_id(environment, fresh_memory, telegram):
    telegram.open_forum(FORUM, TOPIC)
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, topic_update(10, ASK))
    sends = [c for c in telegram.calls if c.params.get("chat_id") == FORUM]
    methods = {c.method for c in sends}
    assert {"sendChatAction", "sendMessage", "sendPhoto"} <= methods
    assert all(c.params.get("message_thread_id") == TOPIC for c in sends)
    assert all(c.delivered for c in sends)


def test_a_closed_topic_ends_the_turn_with_a_log_line_and_no_retry(
    environment, fresh_memory, telegram, llm, caplog, monkeypatch
):
    import sommelier.telegram.consumer as consumer

    events: list[str] = []
    monkeypatch.setattr(consumer, "record_event", events.append)
    telegram.open_forum(FORUM, TOPIC)
    telegram.close_topic(FORUM, TOPIC)
    bot = make_bot(fresh_memory, telegram)
    with caplog.at_level(logging.WARNING):
        deliver(bot, topic_update(11, ASK))  # returns: nothing to retry
    forum_calls = [c for c in telegram.calls if c.params.get("chat_id") == FORUM]
    assert len(forum_calls) == 1 and "TOPIC_CLOSED" in forum_calls[0].response["description"]
    assert "the turn ends" in caplog.text and "TOPIC_CLOSED" in caplog.text
    assert events == ["TelegramChatUnavailable"]  # the metric


def test_a_lost_chat_ends_the_turn_without_a_retry_storm(environment, fresh_memory, telegram, caplog):
    telegram.lose_chat(-4001)
    bot = make_bot(fresh_memory, telegram)
    update = topic_update(12, ASK, chat_id=-4001)
    update["message"]["chat"] = {"id": -4001, "type": "group", "title": "Ушедшая группа"}
    del update["message"]["message_thread_id"], update["message"]["is_topic_message"]
    with caplog.at_level(logging.WARNING):
        for attempt in (1, 2, 3):
            bot.process(update, attempt=attempt)  # never raises: a lost chat is not retried
    assert len([c for c in telegram.calls if c.params.get("chat_id") == -4001]) == 3  # one try per delivery
    assert "chat not found" in caplog.text
    assert not any(c.params.get("text", "").startswith("Простите") for c in telegram.calls_of("sendMessage"))
