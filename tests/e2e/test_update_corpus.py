"""The corpus of real update shapes (tests/data/telegram_updates, >= 150) through the webhook and the consumer.

Every update gets a 200 from the webhook; every Bot API call the bot makes is accepted by the fake
(which refuses what Telegram refuses); each update gets what its file expects: a reply in its chat
(in its forum topic), nothing at all, or only the callback answered.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bot_harness import configure_bot, make_bot
from tests.fakes.telegram_updates import webhook_event

CORPUS = Path(__file__).resolve().parents[1] / "data" / "telegram_updates"
SENDS = {"sendMessage", "sendPhoto", "sendChatAction", "sendMessageDraft"}


def load_corpus() -> list[tuple[str, dict]]:
    files = [(path.stem, json.loads(path.read_text(encoding="utf-8"))) for path in CORPUS.glob("*.json")]
    return sorted(files, key=lambda item: item[1]["update"]["update_id"])  # albums and edit pairs in order


def test_the_corpus_is_big_and_varied():
    corpus = load_corpus()
    assert len(corpus) >= 150
    kinds = {key for _, case in corpus for key in case["update"] if key != "update_id"}
    assert {
        "message",
        "edited_message",
        "channel_post",
        "edited_channel_post",
        "business_message",
        "business_connection",
        "callback_query",
        "my_chat_member",
        "chat_member",
        "message_reaction",
        "message_reaction_count",
        "inline_query",
        "poll_answer",
        "chat_join_request",
    } <= kinds
    assert {case["expect"] for _, case in corpus} == {"reply", "silent", "callback"}


@pytest.fixture
def environment(monkeypatch, telegram, fresh_memory, state_dir):
    configure_bot(monkeypatch, telegram, fresh_memory, unset=("QUEUE_URL", "IDEMPOTENCY_TABLE", "OPENAI_API_KEY"))
    monkeypatch.setenv("BUSINESS_OWNER_IDS", "5551001")  # the corpus's Business account is the shop's own
    yield


def _chat_of(update: dict) -> int | None:
    for key in ("message", "edited_message", "business_message"):
        if key in update:
            return update[key]["chat"]["id"]
    return None


def _thread_of(update: dict) -> int | None:
    for key in ("message", "edited_message"):
        body = update.get(key) or {}
        if body.get("is_topic_message"):
            return body.get("message_thread_id")
    return None


def test_every_update_of_the_corpus(environment, fresh_memory, telegram):
    corpus = load_corpus()
    for _, case in corpus:  # the forum topics the corpus talks in exist (open)
        body = case["update"].get("message") or case["update"].get("edited_message") or {}
        if body.get("chat", {}).get("is_forum") and body.get("is_topic_message"):
            telegram.open_forum(body["chat"]["id"], body["message_thread_id"])
        connection = case["update"].get("business_connection")
        if connection:  # the Business accounts the corpus talks in are connected (Telegram knows them)
            can_reply = (connection.get("rights") or {}).get("can_reply", connection.get("can_reply", False))
            telegram.connect_business(
                connection["id"], connection["user_chat_id"], can_reply=can_reply, enabled=connection["is_enabled"]
            )
    bot = make_bot(fresh_memory, telegram, rate=100_000)
    problems: list[str] = []
    tally = {"reply": 0, "silent": 0, "callback": 0}
    for name, case in corpus:
        update, expect = case["update"], case["expect"]
        before = len(telegram.calls)
        response = bot.webhook(webhook_event(update), None)
        queued, bot.inbox.items = bot.inbox.items, []
        for item, _ in queued:
            bot.process(item)
        calls = telegram.calls[before:]
        if response["statusCode"] != 200:
            problems.append(f"{name}: webhook answered {response['statusCode']}")
        refused = [(c.method, c.response.get("description")) for c in calls if c.http_status != 200]
        if refused:
            problems.append(f"{name}: the Bot API refused {refused}")
        sends = [c for c in calls if c.method in SENDS]
        answered = [c for c in calls if c.method == "answerCallbackQuery"]
        if expect == "reply":
            chat = _chat_of(update)
            messages = [
                c for c in sends if c.method in ("sendMessage", "sendPhoto") and c.params.get("chat_id") == chat
            ]
            if not messages:
                problems.append(f"{name}: expected a reply in chat {chat}, got {[c.method for c in calls]}")
            thread = _thread_of(update)
            if any(c.params.get("message_thread_id") != thread for c in sends):
                problems.append(f"{name}: a send outside the topic {thread}")
            business = (update.get("business_message") or {}).get("business_connection_id")
            if any(c.params.get("business_connection_id") != business for c in sends):
                problems.append(f"{name}: a send without the business connection {business}")
        elif expect == "silent":
            if sends or answered:
                problems.append(f"{name}: expected silence, got {[c.method for c in calls]}")
        elif expect == "callback":
            query_id = update["callback_query"]["id"]
            if [c.params.get("callback_query_id") for c in answered] != [query_id]:
                problems.append(f"{name}: the callback was answered {len(answered)} times")
            if sends:
                problems.append(f"{name}: a callback sent {[c.method for c in sends]}")
            if update["callback_query"].get("inline_message_id") and len(calls) != 1:
                problems.append(f"{name}: an inline-message callback did more than answer: {[c.method for c in calls]}")
            if (update["callback_query"].get("message") or {}).get("date") == 0 and len(calls) != 1:
                problems.append(f"{name}: a callback on an inaccessible message did more than answer")
        tally[expect] += 1
    assert problems == [], "\n".join(problems)
    assert sum(tally.values()) == len(corpus) and all(tally.values())
