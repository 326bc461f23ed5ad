"""Sender against the Bot API's 400s, forum topics and lost chats (fake Bot API over loopback HTTP)."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws
from sommelier.telegram.client import BadRequest, ServerError
from sommelier.telegram.delivery import DynamoDeliveryLog, InMemoryDeliveryLog, Sender
from sommelier.telegram.render import CAPTION_LIMIT, TEXT_LIMIT, Outgoing, feedback_keyboard, render_text, utf16_len

CHAT = 4343
FORUM = -1001234567890
TOPIC = 77
KEYBOARD = feedback_keyboard("42")


class NoPhotos:
    """A photo store with nothing in it: parts use their cached file_id only."""

    def presigned_url(self, key):
        return None

    def get(self, key):
        return None


@pytest.fixture
def sleeps():
    return []


@pytest.fixture(params=["memory", "dynamo"])
def log(request, monkeypatch):
    if request.param == "memory":
        yield InMemoryDeliveryLog()
        return
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    with mock_aws():
        ddb = boto3.client("dynamodb")
        ddb.create_table(
            TableName="sommelier-idempotency",
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield DynamoDeliveryLog("sommelier-idempotency", ddb)


@pytest.fixture
def sender(client, sleeps, log):
    return Sender(client, NoPhotos(), log, sleep=sleeps.append)


def visible(fake, chat=CHAT) -> list[tuple[str, str | None]]:
    out = []
    for call in fake.sent_messages(chat):
        result = call.result
        out.append((call.method, result.get("text") if call.method == "sendMessage" else result.get("caption")))
    return out


def photo_part(client, caption_plain: str, caption_html: str | None = None) -> Outgoing:
    file_id = client.send_photo(1, b"\x89PNG\r\n\x1a\n" + b"x" * 64).largest_file_id
    return Outgoing(
        kind="photo", html=caption_html or caption_plain, plain=caption_plain, file_id=file_id, wine_id="w1"
    )


def test_message_is_too_long_is_split_and_the_rest_follows(fake, sender):
    # Telegram counts the text after entity parsing; here it refuses a part we measured as fitting.
    text = "Первое предложение о вине. " * 60
    parts = render_text("Вступление.") + render_text(text.strip(), KEYBOARD)
    fake.fail_when(
        lambda c: c.method == "sendMessage" and utf16_len(str(c.params.get("text"))) > 1000,
        status=400,
        description="Bad Request: message is too long",
        times=1,
    )
    result = sender.deliver(CHAT, "long", parts)
    texts = [t for _, t in visible(fake)]
    assert texts[0] == "Вступление."
    assert len(texts) >= 3 and " ".join(texts[1:]).split() == text.split()  # every word, once, in order
    assert fake.sent_messages(CHAT)[-1].result["reply_markup"] == KEYBOARD  # the buttons on the last piece
    assert result.reshaped == [1] and result.refused == []


def test_a_text_the_fake_really_refuses_is_split(fake, sender):
    # 4096 «🍷» are 8192 UTF-16 units: the real API refuses that, and so does the fake.
    plain = "🍷" * (TEXT_LIMIT // 2 + 10)
    part = Outgoing(kind="text", html=plain, plain=plain)
    result = sender.deliver(CHAT, "emoji", [part])
    texts = [t for _, t in visible(fake)]
    assert "".join(texts) == plain and all(utf16_len(t) <= TEXT_LIMIT for t in texts)
    assert result.reshaped == [0]
    refused = [c for c in fake.calls_of("sendMessage") if not c.delivered]
    assert refused and refused[0].response["description"] == "Bad Request: message is too long"


def test_caption_too_long_sends_a_short_caption_and_the_text_on_its_own(fake, client, sender):
    description = "Долгое описание вина с нотами вишни и табака. " * 40
    header = "Кьянти — Домен, 2020\nТоскана · 1\u202f799\u202f₽"
    part = photo_part(
        client,
        f"{header}\n\n{description.strip()}",
        f"<b>Кьянти</b> — Домен, 2020\nТоскана · 1\u202f799\u202f₽\n\n{description.strip()}",
    )
    part.reply_markup = KEYBOARD
    assert utf16_len(part.plain) > CAPTION_LIMIT  # the fake really refuses it
    result = sender.deliver(CHAT, "caption", [part])
    shown = visible(fake)
    assert shown[0] == ("sendPhoto", header)
    assert [m for m, _ in shown[1:]] == ["sendMessage"] * (len(shown) - 1)
    assert " ".join(t for _, t in shown[1:]).split() == description.split()
    assert fake.sent_messages(CHAT)[-1].result["reply_markup"] == KEYBOARD
    assert result.reshaped == [0]


def test_unknown_400_skips_that_part_and_delivers_the_rest(fake, sender, caplog, monkeypatch):
    import sommelier.telegram.delivery as delivery

    events: list[str] = []
    monkeypatch.setattr(delivery, "record_event", events.append)
    parts = render_text("один") + render_text("два") + render_text("три", KEYBOARD)
    fake.fail_when(
        lambda c: c.params.get("text") == "два", status=400, description="Bad Request: SOMETHING_NEW_AND_ODD"
    )
    result = sender.deliver(CHAT, "odd", parts)
    assert [t for _, t in visible(fake)] == ["один", "три"]
    assert result.refused == [1] and result.sent == [0, 2]
    assert "SOMETHING_NEW_AND_ODD" in caplog.text
    assert events == ["TelegramPartRefused"]  # the metric
    # The refused part counts as done: a redelivery sends nothing again.
    again = sender.deliver(CHAT, "odd", parts)
    assert again.sent == [] and [t for _, t in visible(fake)] == ["один", "три"]


def test_a_retry_resumes_inside_a_split_part_without_duplicates(fake, sender):
    text = " ".join(f"слово{i}" for i in range(300))
    parts = render_text("Начало.") + render_text(text.strip())
    fake.fail_when(
        lambda c: c.method == "sendMessage" and utf16_len(str(c.params.get("text"))) > 1500,
        status=400,
        description="Bad Request: message is too long",
        times=1,
    )
    state = {"pieces": 0}

    def second_piece(call):
        if call.method != "sendMessage" or str(call.params.get("text")).startswith("Начало"):
            return False
        if utf16_len(str(call.params.get("text"))) > 1500:
            return False
        state["pieces"] += 1
        return state["pieces"] == 2

    fake.fail_when(second_piece, status=502, times=1)
    with pytest.raises(ServerError):
        sender.deliver(CHAT, "resume", parts)
    sender.deliver(CHAT, "resume", parts)
    texts = [t for _, t in visible(fake)]
    assert texts[0] == "Начало." and " ".join(texts[1:]).split() == text.split()
    assert len(texts) == len(set(texts))  # no piece twice


def test_every_send_in_a_topic_carries_its_thread_id(fake, client, sender):
    fake.open_forum(FORUM, TOPIC)
    parts = render_text("Вступление") + [photo_part(client, "Вино")] + render_text("Итог", KEYBOARD)
    sender.deliver(FORUM, "topic", parts, thread_id=TOPIC)
    sent = fake.sent_messages(FORUM)
    assert len(sent) == 3
    assert all(c.params.get("message_thread_id") == TOPIC for c in sent)
    assert all(c.result.get("message_thread_id") == TOPIC for c in sent)


def test_a_closed_topic_or_a_lost_chat_raises_at_once(fake, sender):
    fake.open_forum(FORUM, TOPIC)
    fake.close_topic(FORUM, TOPIC)
    with pytest.raises(BadRequest) as closed:
        sender.deliver(FORUM, "closed", render_text("a") + render_text("b"), thread_id=TOPIC)
    assert closed.value.is_chat_unavailable and "TOPIC_CLOSED" in closed.value.description
    assert len(fake.calls_of("sendMessage")) == 1  # no retry storm
    fake.lose_chat(-555)
    with pytest.raises(BadRequest) as lost:
        sender.deliver(-555, "lost", render_text("a") + render_text("b"))
    assert lost.value.is_chat_unavailable
    assert len(fake.calls_of("sendMessage")) == 2
