"""Groups, forum topics, edits, albums, service messages and stickers, end to end (webhook → consumer)."""

from __future__ import annotations

import json

import pytest
from sommelier.telegram.router import LABEL_AS_TEXT, NON_TEXT_REPLY, RATE_NOTICE

from tests.bot_harness import configure_bot, deliver, make_bot
from tests.fakes.openai_server import reply
from tests.fakes.telegram_updates import TEST_BOT, TEST_CHAT, private_chat, user, webhook_event

GROUP = -1003334445556
FORUM = -1004445556667
TOPIC = 42


@pytest.fixture
def environment(monkeypatch, telegram, fresh_memory, state_dir):
    configure_bot(monkeypatch, telegram, fresh_memory, unset=("QUEUE_URL", "IDEMPOTENCY_TABLE", "OPENAI_API_KEY"))
    yield


def echo(body: dict):
    """Fake LLM: an informational answer quoting what the customer said."""
    prompt = body["messages"][1]["content"]
    said = prompt.rsplit("<<<\n", 1)[1].split("\n>>>", 1)[0]
    answer = {"response_type": "informational", "intro": f"Ответ на: {said}", "wines": [], "closing": "Ещё?"}
    return reply(json.dumps({**answer, "guard_type": None}, ensure_ascii=False))


def message(update_id: int, chat: dict, *, key: str = "message", **fields) -> dict:
    body = {"message_id": fields.pop("message_id", update_id), "date": 1763800000, "chat": chat, "from": user()}
    body.update(fields)
    return {"update_id": update_id, key: body}


def sent(telegram, chat_id) -> list[str]:
    return [c.params.get("text") or c.params.get("caption") or "" for c in telegram.sent_messages(chat_id)]


GROUP_CHAT = {"id": GROUP, "type": "supergroup", "title": "Винный клуб"}


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


# ---------------------------------------------------------------- groups and topics


@pytest.mark.parametrize(
    "command", ["/help@sommelier_test_bot", "/help@Sommelier_Test_Bot", "/HELP@SOMMELIER_TEST_BOT"]
)
def test_a_group_command_with_the_bot_username_in_any_case_is_answered(environment, fresh_memory, telegram, command):
    bot = make_bot(fresh_memory, telegram)
    entities = [{"type": "bot_command", "offset": 0, "length": len(command)}]
    deliver(bot, message(1, GROUP_CHAT, text=command, entities=entities))
    assert sent(telegram, GROUP) and "Как со мной говорить" in sent(telegram, GROUP)[0]


def test_a_command_for_another_bot_is_left_alone(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    deliver(
        bot,
        message(1, GROUP_CHAT, text="/help@other_bot", entities=[{"type": "bot_command", "offset": 0, "length": 15}]),
    )
    assert sent(telegram, GROUP) == []


def test_a_mention_after_emoji_is_found_by_utf16_offsets(environment, fresh_memory, telegram, llm, monkeypatch):
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.default = echo
    prefix = "🍷🍷 "
    text = f"{prefix}@{TEST_BOT} что такое танины?"
    mention = {"type": "mention", "offset": utf16(prefix), "length": utf16(f"@{TEST_BOT}")}
    assert mention["offset"] == 5 and len(prefix) == 3  # Telegram's offset, not Python's
    deliver(bot, message(2, GROUP_CHAT, text=text, entities=[mention]))
    assert sent(telegram, GROUP) and "Ответ на: 🍷🍷 что такое танины?" in sent(telegram, GROUP)[0]


def test_a_mention_of_someone_else_after_emoji_is_not_the_bot(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    prefix = "🍷🍷 "
    text = f"{prefix}@anna_sommelier_test_bot и @{TEST_BOT}x, привет"
    mention = {"type": "mention", "offset": utf16(prefix), "length": utf16("@anna_sommelier_test_bot")}
    deliver(bot, message(3, GROUP_CHAT, text=text, entities=[mention]))
    assert sent(telegram, GROUP) == []


def test_a_reply_to_the_bot_is_answered(environment, fresh_memory, telegram, llm, monkeypatch):
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.default = echo
    bot_message = {
        "message_id": 77,
        "date": 1763800000,
        "chat": GROUP_CHAT,
        "text": "Вот вина",
        "from": {"id": 123456, "is_bot": True, "first_name": "Sommelier", "username": TEST_BOT},
    }
    deliver(bot, message(4, GROUP_CHAT, text="а подешевле?", reply_to_message=bot_message))
    assert sent(telegram, GROUP) and "Ответ на: а подешевле?" in sent(telegram, GROUP)[0]


def test_an_anonymous_admin_addressing_the_bot_is_answered(environment, fresh_memory, telegram, llm, monkeypatch):
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.default = echo
    anonymous = {"id": 1087968824, "is_bot": True, "first_name": "Group", "username": "GroupAnonymousBot"}
    text = f"@{TEST_BOT} что такое танины?"
    update = message(
        5, GROUP_CHAT, text=text, entities=[{"type": "mention", "offset": 0, "length": utf16(f"@{TEST_BOT}")}]
    )
    update["message"].update(
        {"from": anonymous, "sender_chat": {"id": GROUP, "type": "supergroup", "title": "Винный клуб"}}
    )
    deliver(bot, update)
    assert sent(telegram, GROUP) and "Ответ на: что такое танины?" in sent(telegram, GROUP)[0]


def test_a_photo_whose_caption_mentions_the_bot_is_answered_by_its_caption(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    caption = f"🍷 @{TEST_BOT} красное сухое к шашлыку до 2000"
    photo = [{"file_id": "AgACAgIAAxkBAAIBQ2", "file_unique_id": "AQADq", "width": 90, "height": 90}]
    entity = {"type": "mention", "offset": utf16("🍷 "), "length": utf16(f"@{TEST_BOT}")}
    deliver(bot, message(6, GROUP_CHAT, photo=photo, caption=caption, caption_entities=[entity]))
    answer = sent(telegram, GROUP)
    assert answer and NON_TEXT_REPLY not in answer  # the caption is the customer's request
    deliver(bot, message(7, GROUP_CHAT, photo=photo, caption="просто фото"))  # not addressed: none of its business
    assert sent(telegram, GROUP) == answer


def test_a_command_in_a_forum_topic_is_answered_in_that_topic(environment, fresh_memory, telegram):
    telegram.open_forum(FORUM, TOPIC)
    bot = make_bot(fresh_memory, telegram)
    forum = {"id": FORUM, "type": "supergroup", "title": "Клуб", "is_forum": True}
    command = f"/start@{TEST_BOT}"
    update = message(
        8,
        forum,
        text=command,
        entities=[{"type": "bot_command", "offset": 0, "length": len(command)}],
        message_thread_id=TOPIC,
        is_topic_message=True,
    )
    deliver(bot, update)
    calls = [c for c in telegram.calls if c.params.get("chat_id") == FORUM]
    assert calls and all(c.params.get("message_thread_id") == TOPIC and c.delivered for c in calls)
    assert {"sendMessage", "sendChatAction"} <= {c.method for c in calls}


# ---------------------------------------------------------------- edits


def test_an_edit_of_an_answered_message_gets_no_new_turn(environment, fresh_memory, telegram, llm, monkeypatch):
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.default = echo
    deliver(bot, message(10, private_chat(), text="что такое танины?", message_id=50))
    deliver(
        bot,
        message(
            11, private_chat(), key="edited_message", text="что такое кислотность?", message_id=50, edit_date=1763800100
        ),
    )
    assert len(llm.chat_requests) == 1
    assert sent(telegram, TEST_CHAT) == ["Ответ на: что такое танины?", "Ещё?"]


def test_an_edit_of_a_waiting_message_replaces_it(environment, fresh_memory, telegram, llm, monkeypatch):
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.default = echo
    original = message(20, private_chat(), text="что такое тонины?", message_id=60)
    edited = message(
        21, private_chat(), key="edited_message", text="что такое танины?", message_id=60, edit_date=1763800100
    )
    # Both reach the webhook before the consumer gets to the original (as with a busy SQS FIFO group).
    bot.webhook(webhook_event(original), None)
    bot.webhook(webhook_event(edited), None)
    queued, bot.inbox.items = bot.inbox.items, []
    assert [item["update_id"] for item, _ in queued] == [20, 21]
    for item, _ in queued:
        bot.process(item)
    assert len(llm.chat_requests) == 1  # one turn, for the edited text
    assert sent(telegram, TEST_CHAT) == ["Ответ на: что такое танины?", "Ещё?"]


# ---------------------------------------------------------------- albums, service messages, stickers


def test_an_album_gets_one_reply(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    for i in range(4):
        photo = [{"file_id": f"AgACAgIAAxkBAAIB{i}", "file_unique_id": f"AQAD{i}", "width": 90, "height": 90}]
        deliver(bot, message(30 + i, private_chat(), photo=photo, media_group_id="13612345678901234"))
    assert sent(telegram, TEST_CHAT) == [LABEL_AS_TEXT]  # one answer for the album: a label photo asks for the name


@pytest.mark.parametrize(
    "service",
    [
        {
            "pinned_message": {
                "message_id": 5,
                "date": 1763800000,
                "chat": {"id": GROUP, "type": "supergroup"},
                "text": "x",
            }
        },
        {"message_auto_delete_timer_changed": {"message_auto_delete_time": 86400}},
        {"write_access_allowed": {"from_request": True}},
        {
            "chat_background_set": {
                "type": {"type": "fill", "fill": {"type": "solid", "color": 0}, "dark_theme_dimming": 0}
            }
        },
        {"new_chat_members": [{"id": 42, "is_bot": False, "first_name": "Иван"}]},
        {"forum_topic_created": {"name": "Вина", "icon_color": 7322096}},
    ],
)
def test_service_messages_are_ignored(environment, fresh_memory, telegram, service):
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, message(40, private_chat(), **service))
    deliver(bot, message(41, GROUP_CHAT, **service))
    assert telegram.sent_messages(TEST_CHAT) == [] and telegram.sent_messages(GROUP) == []


def test_stickers_count_toward_the_rate_limit(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram, rate=3)
    sticker = {
        "file_id": "CAACAgIAAxkBAAIC",
        "file_unique_id": "AgAD",
        "type": "regular",
        "width": 512,
        "height": 512,
        "is_animated": False,
        "is_video": False,
    }
    for i in range(15):
        deliver(bot, message(100 + i, private_chat(), sticker=sticker))
    replies = sent(telegram, TEST_CHAT)
    assert replies.count(NON_TEXT_REPLY) == 3 and replies.count(RATE_NOTICE) == 1 and len(replies) == 4
