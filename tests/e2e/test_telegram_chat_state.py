"""Active/blocked per (user, chat), end to end: webhook → consumer → tools → the conversation store (in memory)."""

from __future__ import annotations

import pytest

from tests.bot_harness import configure_bot, deliver, make_bot, repositories_for
from tests.fakes.telegram_updates import TEST_BOT, text_update, user

ANNA = 5551001
GROUP = -1002223334445


@pytest.fixture
def environment(monkeypatch, telegram, fresh_memory, state_dir):
    configure_bot(monkeypatch, telegram, fresh_memory, unset=("QUEUE_URL", "IDEMPOTENCY_TABLE", "OPENAI_API_KEY"))
    yield


def group_mention(update_id: int, text: str) -> dict:
    mention = f"@{TEST_BOT}"
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "from": user(ANNA),
            "chat": {"id": GROUP, "type": "supergroup", "title": "Винный клуб"},
            "date": 1763800000,
            "text": f"{mention} {text}",
            "entities": [{"type": "mention", "offset": 0, "length": len(mention)}],
        },
    }


def member_update(update_id: int, chat: dict, old: str, new: str) -> dict:
    bot = {"id": 123456, "is_bot": True, "first_name": "Sommelier", "username": TEST_BOT}
    return {
        "update_id": update_id,
        "my_chat_member": {
            "chat": chat,
            "from": user(ANNA),
            "date": 1763800100,
            "old_chat_member": {"status": old, "user": bot},
            "new_chat_member": {"status": new, "user": bot, "until_date": 0}
            if new == "kicked"
            else {"status": new, "user": bot},
        },
    }


def chats(db) -> dict[int, bool]:
    state = repositories_for(db).chat.chat_state(ANNA)
    return {c.chat_id: c.is_active for c in state}


def test_a_private_block_a_group_kick_and_an_unblock_each_change_only_their_chat(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    private = {"id": ANNA, "type": "private", "first_name": "Анна"}
    group = {"id": GROUP, "type": "supergroup", "title": "Винный клуб"}
    deliver(bot, text_update(1, "что такое танины?", chat_id=ANNA))
    deliver(bot, group_mention(2, "что такое танины?"))
    assert chats(fresh_memory) == {GROUP: True, ANNA: True}

    deliver(bot, member_update(3, private, "member", "kicked"))  # Anna blocks the bot privately
    assert chats(fresh_memory) == {GROUP: True, ANNA: False}

    deliver(bot, group_mention(4, "а белое?"))  # the group still gets answers
    assert any(c.params.get("chat_id") == GROUP for c in telegram.calls_of("sendMessage")[-2:])
    assert chats(fresh_memory) == {GROUP: True, ANNA: False}

    deliver(bot, member_update(5, group, "member", "left"))  # the bot is removed from the group
    assert chats(fresh_memory) == {GROUP: False, ANNA: False}

    deliver(bot, member_update(6, private, "kicked", "member"))  # Anna unblocks it
    assert chats(fresh_memory) == {GROUP: False, ANNA: True}


def test_a_403_in_a_group_leaves_the_private_chat_active(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, text_update(11, "что такое танины?", chat_id=ANNA))
    deliver(bot, group_mention(10, "привет"))
    assert chats(fresh_memory) == {GROUP: True, ANNA: True}
    telegram.fail_when(
        lambda call: call.params.get("chat_id") == GROUP,
        status=403,
        times=100,
        description="Forbidden: bot was kicked from the supergroup chat",
    )
    deliver(bot, group_mention(12, "что такое танины?"))
    assert chats(fresh_memory) == {GROUP: False, ANNA: True}
