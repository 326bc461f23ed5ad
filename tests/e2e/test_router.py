"""The one router: group and forum-topic commands with @username, through the webhook edge and the bot.

The webhook and the consumer decide "addressed to the bot" with the same rules and the same username
(TELEGRAM_BOT_USERNAME, or getMe against the fake Bot API); the route table answers.
"""

from __future__ import annotations

import pytest
from sommelier.settings import Settings
from sommelier.telegram.dialog import Reply
from sommelier.telegram.render import render_text
from sommelier.telegram.router import Router, Turn, customer_router
from sommelier.telegram.updates import parse_update, route

from tests.bot_harness import database_url, deliver, make_bot
from tests.fakes.telegram_updates import TEST_BOT, TEST_WEBHOOK_SECRET, user

GROUP = {"id": -100777, "type": "supergroup", "title": "Винный клуб"}
FORUM = {"id": -100888, "type": "supergroup", "title": "Вино по темам", "is_forum": True}


@pytest.fixture
def environment(monkeypatch, telegram, fresh_memory, state_dir):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", TEST_WEBHOOK_SECRET)
    monkeypatch.setenv("DATABASE_URL", database_url(fresh_memory))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    monkeypatch.delenv("QUEUE_URL", raising=False)
    monkeypatch.delenv("IDEMPOTENCY_TABLE", raising=False)
    yield


def group_command(update_id: int, text: str, chat: dict = GROUP, **extra) -> dict:
    command = text.split()[0]
    message = {
        "message_id": update_id,
        "date": 1763800000,
        "chat": chat,
        "from": user(42),
        "text": text,
        "entities": [{"type": "bot_command", "offset": 0, "length": len(command)}],
        **extra,
    }
    return {"update_id": update_id, "message": message}


def topic_command(update_id: int, text: str) -> dict:
    """A command in a forum topic: Telegram marks it a topic message and makes it a reply to the topic's start."""
    created = {
        "message_id": 7,
        "date": 1763790000,
        "chat": FORUM,
        "from": user(43),
        "forum_topic_created": {"name": "Красное", "icon_color": 7322096},
        "message_thread_id": 7,
        "is_topic_message": True,
    }
    return group_command(
        update_id, text, chat=FORUM, message_thread_id=7, is_topic_message=True, reply_to_message=created
    )


@pytest.mark.parametrize("username_from", ["environment", "getMe"])
def test_group_start_and_topic_help_with_the_bots_username_are_answered(
    environment, fresh_memory, telegram, monkeypatch, username_from
):
    if username_from == "environment":
        monkeypatch.setenv("TELEGRAM_BOT_USERNAME", TEST_BOT)
    else:
        monkeypatch.delenv("TELEGRAM_BOT_USERNAME", raising=False)
    telegram.open_forum(FORUM["id"], 7)  # Telegram knows the chat is a forum with topic 7
    bot = make_bot(fresh_memory, telegram)

    response = deliver(bot, group_command(9001, f"/start@{TEST_BOT}"))
    assert response["statusCode"] == 200 and "ignored" not in response["body"], response
    welcome = telegram.sent_messages(GROUP["id"])
    assert welcome and "сомелье" in welcome[0].params["text"].lower()

    response = deliver(bot, topic_command(9002, f"/help@{TEST_BOT}"))
    assert response["statusCode"] == 200 and "ignored" not in response["body"], response
    assert "/reset" in telegram.sent_messages(FORUM["id"])[-1].params["text"]
    if username_from == "getMe":
        assert telegram.calls_of("getMe"), "the edge learnt the username from getMe"


def test_a_command_for_another_bot_is_ignored_at_the_edge(environment, fresh_memory, telegram, monkeypatch):
    monkeypatch.setenv("TELEGRAM_BOT_USERNAME", TEST_BOT)
    bot = make_bot(fresh_memory, telegram)
    response = deliver(bot, group_command(9010, "/start@someone_elses_bot"))
    assert response["statusCode"] == 200 and '"ignored"' in response["body"]
    assert telegram.sent_messages(GROUP["id"]) == []


def test_edge_and_consumer_agree_on_every_shape_of_command():
    """The same `route` with the same username: what the webhook keeps, the consumer answers."""
    for text, addressed in [
        (f"/start@{TEST_BOT}", True),
        (f"/START@{TEST_BOT.upper()}", True),
        ("/help", True),
        ("/help@other_bot", False),
        ("просто болтовня", False),
    ]:
        routed = route(parse_update(group_command(1, text)), TEST_BOT)
        assert (routed.kind != "ignored") is addressed, text
        if addressed and text.startswith("/"):
            assert customer_router().route_for(routed) is not None and routed.command in ("/start", "/help")


class RecordingChannel:
    def __init__(self, allowed: bool = True):
        from sommelier.telegram.state import RateDecision

        self.decision = RateDecision(allowed=allowed, notify=True)
        self.calls: list[str] = []

    def allow(self):
        self.calls.append("allow")
        return self.decision

    def typing(self):
        self.calls.append("typing")

    def shown(self):
        return None

    def answer_callback(self, text):
        self.calls.append(f"toast:{text}")

    def edit_buttons(self, message_id, keyboard):
        self.calls.append("buttons")

    def set_active(self, active):
        self.calls.append(f"active:{active}")

    def file(self, file_id, max_bytes):
        return None


def test_a_new_command_a_guard_and_the_rate_limit_extend_the_table():
    router = Router()
    seen: list[str] = []

    @router.command("/stats", rate_limited=False, typing=False)
    def stats(turn: Turn) -> Reply:
        seen.append(turn.args)
        return Reply(parts=render_text(f"статистика {turn.args}"))

    @router.command("/deep")
    def deep(turn: Turn) -> Reply:
        return Reply(parts=render_text("глубоко"))

    @router.before
    def age_gate(turn: Turn, matched) -> Reply | None:
        return Reply(parts=render_text("18+?")) if matched.name == "/deep" and turn.args != "ok" else None

    def turn_for(text: str, channel: RecordingChannel) -> Turn:
        routed = route(parse_update(group_command(5, text)), TEST_BOT)
        return Turn(routed=routed, dialog=None, repositories=None, channel=channel, settings=Settings())  # none needed

    channel = RecordingChannel()
    reply = router.dispatch(turn_for(f"/stats@{TEST_BOT} week", channel))
    assert reply.parts[0].plain == "статистика week" and seen == ["week"] and channel.calls == []

    assert router.dispatch(turn_for("/deep", channel)).parts[0].plain == "18+?"
    assert router.dispatch(turn_for("/deep ok", channel)).parts[0].plain == "глубоко"
    assert channel.calls == ["allow", "typing"]

    refused = RecordingChannel(allowed=False)
    assert "быстро" in router.dispatch(turn_for("/deep ok", refused)).parts[0].plain
    assert refused.calls == ["allow"]
    assert router.dispatch(turn_for("/nothing", channel)) is None, "no unknown-command route registered"
    assert router.command_names() == ["/deep", "/stats"]


def test_group_start_and_topic_help_are_answered_by_serve(environment, fresh_memory, telegram, monkeypatch):
    """The same commands over real sockets to `sommelier serve`'s server (uvicorn), turns on its workers."""
    import httpx2
    from sommelier_dev.cli.serve_cmd import build_local_server

    monkeypatch.setenv("TELEGRAM_BOT_USERNAME", TEST_BOT)
    telegram.open_forum(FORUM["id"], 7)  # Telegram knows the chat is a forum with topic 7
    bot = make_bot(fresh_memory, telegram)
    server, workers = build_local_server(bot.settings, process=bot.process, workers=2)
    server.start()
    try:
        with httpx2.Client(timeout=30) as http:
            for update in (group_command(9101, f"/start@{TEST_BOT}"), topic_command(9102, f"/help@{TEST_BOT}")):
                answer = http.post(
                    f"{server.url}/telegram/webhook",
                    json=update,
                    headers={"X-Telegram-Bot-Api-Secret-Token": TEST_WEBHOOK_SECRET},
                )
                assert answer.status_code == 200 and answer.json() == {"ok": True}
        assert workers.wait_idle(timeout=60)
    finally:
        server.stop()
        workers.shutdown()
    assert workers.dead_letters == []
    assert "сомелье" in telegram.sent_messages(GROUP["id"])[0].params["text"].lower()
    assert "/reset" in telegram.sent_messages(FORUM["id"])[-1].params["text"]
