"""Where shops talk: a basic group that became a supergroup, and Business accounts with and without the
right to reply. Real sockets: the fake Bot API refuses what Telegram refuses."""

from __future__ import annotations

import pytest

from tests.bot_harness import configure_bot, deliver, make_bot
from tests.fakes.telegram_updates import TEST_BOT

OLD_GROUP, SUPERGROUP = -4012345678, -1002567890123
CUSTOMER = 6011223344


@pytest.fixture
def environment(monkeypatch, telegram, fresh_memory, state_dir):
    configure_bot(monkeypatch, telegram, fresh_memory, unset=("QUEUE_URL", "IDEMPOTENCY_TABLE", "OPENAI_API_KEY"))
    monkeypatch.setenv("BUSINESS_OWNER_IDS", "290011223, 290011224")  # the shop's own Business accounts


def group_mention(update_id: int, chat_id: int, text: str) -> dict:
    mention = f"@{TEST_BOT}"
    return {
        "update_id": update_id,
        "message": {
            "message_id": 70 + update_id,
            "from": {"id": 5087654321, "is_bot": False, "first_name": "Марина"},
            "chat": {"id": chat_id, "type": "group", "title": "Винный клуб"},
            "date": 1787910000,
            "text": f"{mention} {text}",
            "entities": [{"type": "mention", "offset": 0, "length": len(mention)}],
        },
    }


def business_message(update_id: int, connection: str, text: str, *, sender: int = CUSTOMER) -> dict:
    return {
        "update_id": update_id,
        "business_message": {
            "business_connection_id": connection,
            "message_id": 5000 + update_id,
            "from": {"id": sender, "is_bot": False, "first_name": "Дмитрий"},
            "chat": {"id": CUSTOMER, "type": "private", "first_name": "Дмитрий"},
            "date": 1787910000,
            "text": text,
        },
    }


def test_a_group_that_became_a_supergroup_gets_the_answer_there_and_its_history_moves(
    environment, fresh_memory, telegram
):
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, group_mention(1, OLD_GROUP, "что такое танины?"))  # the group talks before it is upgraded
    before = [m.content for m in bot.repositories.chat.history(OLD_GROUP, 10)]
    assert before
    telegram.migrate_group(OLD_GROUP, SUPERGROUP)
    start = len(telegram.calls)
    deliver(bot, group_mention(2, OLD_GROUP, "красное сухое к стейку до 3000"))
    refused = [c for c in telegram.calls if c.params.get("chat_id") == OLD_GROUP and c.http_status == 400]
    assert refused and all("upgraded" in c.response["description"] for c in refused)
    assert telegram.sent_messages(SUPERGROUP)  # the whole answer, in the new chat
    assert not [c for c in telegram.calls[start:] if c.params.get("chat_id") == OLD_GROUP and c.delivered]
    moved = [m.content for m in bot.repositories.chat.history(SUPERGROUP, 10)]
    assert moved[: len(before)] == before and len(moved) > len(before)  # the old talk, then this turn
    assert bot.repositories.chat.history(OLD_GROUP, 10) == []


def test_a_business_account_that_may_reply_is_answered_with_its_connection_on_every_call(
    environment, fresh_memory, telegram
):
    telegram.connect_business("shop-ok", 290011223, can_reply=True)
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, business_message(1, "shop-ok", "красное сухое к стейку до 3000"))
    calls = [c for c in telegram.calls if c.params.get("chat_id") == CUSTOMER]
    assert telegram.sent_messages(CUSTOMER) and all(c.delivered for c in calls)
    assert {c.params.get("business_connection_id") for c in calls} == {"shop-ok"}
    assert "sendMessageDraft" not in {c.method for c in calls}  # drafts are the bot's own chats only
    deliver(bot, business_message(2, "shop-ok", "а белое?", sender=290011223))  # the owner's own reply
    assert len(telegram.calls_of("getBusinessConnection")) == 1  # asked once, then known
    assert len([c for c in telegram.calls if c.params.get("chat_id") == CUSTOMER]) == len(calls)


def test_a_business_account_without_the_right_to_reply_or_disabled_gets_no_answer(environment, fresh_memory, telegram):
    telegram.connect_business("shop-ro", 290011223, can_reply=False)
    telegram.connect_business("shop-off", 290011224, can_reply=True, enabled=False)
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, business_message(1, "shop-ro", "красное к стейку"))
    deliver(bot, business_message(2, "shop-off", "красное к стейку"))
    deliver(bot, business_message(3, "shop-unknown", "красное к стейку"))
    assert [c for c in telegram.calls if c.params.get("chat_id") == CUSTOMER] == []
    # The owner turns the bot's right to reply on: the business_connection update says so at once.
    connection = telegram.connect_business("shop-ro", 290011223, can_reply=True)
    deliver(bot, {"update_id": 4, "business_connection": connection})
    deliver(bot, business_message(5, "shop-ro", "красное сухое к стейку до 3000"))
    assert telegram.sent_messages(CUSTOMER)
