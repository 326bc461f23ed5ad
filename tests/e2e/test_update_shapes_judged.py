"""Current update shapes (devsets/telegram: Bot API 8.x-10.x and public libraries' test data) through the
webhook and the consumer, every outgoing call judged by aiogram's models and the documented limits.

Each update gets what devsets/telegram/INDEX.md expects of a shop's sommelier (a reply in its chat, in its
topic, Business connection or direct-messages topic; silence; or only the callback answered), except
where this bot's policy differs: those rows are listed in POLICY with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bot_api_judge import violations
from tests.bot_harness import database_url, make_bot
from tests.fakes.telegram_updates import TEST_WEBHOOK_SECRET, webhook_event

DEVSET = Path(__file__).resolve().parents[2] / "devsets" / "telegram"
BOT = "sommelier_test_bot"  # the devset's bot
SENDS = {"sendMessage", "sendPhoto", "sendChatAction", "sendMessageDraft"}

# Where this bot answers otherwise than the devset's row, and why.
POLICY = {
    "forum_topic_message.json": ("silent", "groups: answered only when addressed; the topic is not the bot's"),
    "sticker.json": ("reply", "a short hint of what the bot reads (the row allows it)"),
    "album_document_1.json": ("reply", "an album is answered once, by its first item (here: a hint)"),
    "album_document_2.json": ("silent", "an album is answered once, by its first item"),
    "album_photo_2.json": ("silent", "an album is answered once"),
    "album_photo_3.json": ("silent", "an album is answered once"),
    "svc_successful_payment.json": ("silent", "the shop takes no payments through the bot"),
    "shipping_query.json": ("silent", "not in allowed_updates: the bot sells nothing through invoices"),
    "pre_checkout_query.json": ("silent", "not in allowed_updates"),
    "inline_query.json": ("silent", "inline mode is off"),
    "guest_message.json": ("silent", "guest mode is off"),
    "stopped_message_generation.json": ("silent", "not in allowed_updates"),
    "callback_query.json": ("callback", "an unknown button: the toast only"),
    "checklist.json": (
        "reply",
        "a checklist sent to the bot is a request: its title and tasks are read as text (issue 37)",
    ),
}


def expectation(row: dict) -> str:
    if row["name"] in POLICY:
        return POLICY[row["name"]][0]
    if row["update_type"] == "callback_query":
        return "callback"
    said = row["expected"].lower()
    quiet = ("ignore silently", "mark", "record group", "store connection", "update stored")
    return "silent" if said.startswith(quiet) or "no message sent" in said else "reply"


def load() -> list[tuple[dict, dict]]:
    """The rows in update order; the Business account is disconnected last, and a customer who writes after
    that gets no answer (the connection's state is respected)."""
    rows = json.loads((DEVSET / "index.json").read_text(encoding="utf-8"))
    cases = [(row, json.loads((DEVSET / "updates" / row["name"]).read_text(encoding="utf-8"))) for row in rows]
    cases.sort(key=lambda case: (case[0]["name"] == "business_connection_disabled.json", case[1]["update_id"]))
    row, update = next(case for case in cases if case[0]["name"] == "business_message_text.json")
    after = json.loads(json.dumps(update))
    after["update_id"] = max(u["update_id"] for _, u in cases) + 1
    after["business_message"]["message_id"] += 1000
    cases.append(({**row, "name": "business_message_after_disconnect", "expected": "ignore silently"}, after))
    return cases


def chat_kind(body: dict) -> str:
    chat = body.get("chat") or {}
    if chat.get("is_forum") or chat.get("is_direct_messages"):
        return "forum" if chat.get("is_forum") else "direct"
    return chat.get("type", "")


def _message(update: dict) -> dict:
    for key in ("message", "edited_message", "business_message"):
        if key in update:
            return update[key]
    return {}


@pytest.fixture
def environment(monkeypatch, telegram, llm, fresh_memory, state_dir):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", TEST_WEBHOOK_SECRET)
    monkeypatch.setenv("TELEGRAM_BOT_USERNAME", BOT)
    monkeypatch.setenv("DATABASE_URL", database_url(fresh_memory))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    for name in ("QUEUE_URL", "IDEMPOTENCY_TABLE", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    # Voice is heard (a transcription endpoint over a real socket); the chat model is the offline responder.
    monkeypatch.setenv("STT_API_KEY", "stt-test-key-not-secret")
    monkeypatch.setenv("STT_BASE_URL", llm.base_url)
    monkeypatch.setenv("BUSINESS_OWNER_IDS", "290011223")  # the devset's Business account is the shop's own


def _the_world_the_devset_talks_in(telegram, llm, cases) -> frozenset[int]:
    """Forum topics open, Business connections known to Telegram, direct-messages chats marked, the voice
    messages' files served and what is said in them heard."""
    direct: set[int] = set()
    for _, update in cases:
        body = _message(update)
        for kind in ("voice", "video_note"):
            if kind in body:
                audio = f"OggS {body[kind]['file_unique_id']}".encode()
                telegram.add_file(body[kind]["file_id"], audio)
                llm.hear(audio, "красное сухое к шашлыку, тысячи за две")
        chat = body.get("chat") or {}
        if chat.get("is_forum") and body.get("is_topic_message"):
            telegram.open_forum(chat["id"], body["message_thread_id"])
        if chat.get("is_direct_messages"):
            direct.add(chat["id"])
            telegram.direct_messages_chat(chat["id"])
    enabled = next(u["business_connection"] for _, u in cases if u.get("business_connection", {}).get("is_enabled"))
    telegram.connect_business(enabled["id"], enabled["user_chat_id"], can_reply=enabled["rights"]["can_reply"])
    return frozenset(direct)


def test_the_devset_is_current_and_varied():
    cases = load()
    assert len(cases) >= 120
    kinds = {row["update_type"] for row, _ in cases}
    assert {"business_message", "business_connection", "message", "callback_query", "guest_message"} <= kinds
    assert {expectation(row) for row, _ in cases} == {"reply", "silent", "callback"}
    assert all(reason for _, reason in POLICY.values())


def test_every_current_update_shape_judged_by_aiogram(environment, fresh_memory, telegram, llm):
    cases = load()
    direct = _the_world_the_devset_talks_in(telegram, llm, cases)
    bot = make_bot(fresh_memory, telegram, rate=100_000)
    problems: list[str] = []
    judged = 0
    for row, update in cases:
        name, expect = row["name"], expectation(row)
        before = len(telegram.calls)
        response = bot.webhook(webhook_event(update), None)
        queued, bot.inbox.items = bot.inbox.items, []
        for item, _ in queued:
            bot.process(item)
        calls = telegram.calls[before:]
        if response["statusCode"] != 200:
            problems.append(f"{name}: webhook answered {response['statusCode']}")
        for call in calls:
            judged += 1
            wrong = violations(call.method, call.params, files=call.files, result=call.result, direct_chats=direct)
            problems += [f"{name}: {w}" for w in wrong]
            if call.http_status != 200:
                problems.append(f"{name}: the Bot API refused {call.method}: {call.response.get('description')}")
        problems += _behaviour(name, expect, update, calls)
    assert problems == [], "\n".join(problems)
    assert judged > 150  # the judge saw real traffic (183 calls when written)
    assert len(llm.transcription_requests) == 5  # every voice message and video note was heard


def _behaviour(name: str, expect: str, update: dict, calls) -> list[str]:
    sends = [c for c in calls if c.method in SENDS]
    messages = [c for c in sends if c.method in ("sendMessage", "sendPhoto")]
    answered = [c for c in calls if c.method == "answerCallbackQuery"]
    if expect == "silent":
        return [f"{name}: expected silence, got {[c.method for c in calls]}"] if sends or answered else []
    if expect == "callback":
        return [] if len(answered) == 1 and not sends else [f"{name}: expected the callback answered once"]
    body = _message(update)
    problems = [] if messages else [f"{name}: expected a reply, got {[c.method for c in calls]}"]
    chat = body.get("chat", {}).get("id")
    thread = body.get("message_thread_id") if body.get("is_topic_message") else None
    business = body.get("business_connection_id")
    topic = (body.get("direct_messages_topic") or {}).get("topic_id")
    in_comments = chat_kind(body) == "supergroup" and not body.get("is_topic_message")
    comment = body.get("message_thread_id") if in_comments else None
    for call in sends:
        p = call.params
        if p.get("chat_id") != chat:
            problems.append(f"{name}: {call.method} to chat {p.get('chat_id')}, not {chat}")
        # A comment thread is no forum topic: the Bot API takes message_thread_id for the topics of a forum
        # supergroup and of a bot's private chat only, so the answer goes under the comment (reply_parameters).
        if p.get("message_thread_id") != thread:
            problems.append(f"{name}: {call.method} outside the thread {thread}")
        if p.get("business_connection_id") != business and call.method != "sendMessageDraft":
            problems.append(f"{name}: {call.method} without the business connection {business}")
        if call.method != "sendChatAction" and p.get("direct_messages_topic_id") != topic:
            problems.append(f"{name}: {call.method} outside the direct-messages topic {topic}")
    if comment is not None:
        under = [c.params.get("reply_parameters") for c in messages]
        wanted = {"message_id": body["message_id"], "allow_sending_without_reply": True}
        if not under or any(r != wanted for r in under):
            problems.append(f"{name}: not answered under the comment: {under}")
    return problems
