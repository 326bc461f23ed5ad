"""The judge of outgoing Bot API calls catches what Telegram (and aiogram's models) would not take."""

from __future__ import annotations

import pytest

from tests.bot_api_judge import violations

DM = -1002345678901


@pytest.mark.slow
def test_a_correct_send_passes():
    params = {"chat_id": 5, "text": "Привет", "parse_mode": "HTML", "business_connection_id": "abc"}
    assert violations("sendMessage", params, result={"text": "Привет"}) == []


@pytest.mark.slow
def test_what_the_judge_catches():
    assert violations("sendMessage", {"chat_id": 5, "text": "x", "thread": 3})  # unknown parameter
    assert violations("sendMessage", {"chat_id": 5})  # no text
    assert violations("sendChatAction", {"chat_id": 5, "action": "typing", "business_connection_id": 7})
    assert violations("sendMessage", {"chat_id": 5, "text": "x"}, result={"text": "я" * 4097})
    assert violations("sendPhoto", {"chat_id": 5, "photo": "id"}, result={"caption": "я" * 1025})
    button = {"text": "ok", "callback_data": "x" * 65}
    assert violations("sendMessage", {"chat_id": 5, "text": "x", "reply_markup": {"inline_keyboard": [[button]]}})
    assert violations("sendChatAction", {"chat_id": DM, "action": "typing"}, direct_chats=frozenset({DM}))
    assert violations("sendMessage", {"chat_id": DM, "text": "x"}, direct_chats=frozenset({DM}))
    assert violations("sendMessage", {"chat_id": -100, "text": "x", "message_thread_id": 1})
    assert violations("sendMessageDraft", {"chat_id": -100, "draft_id": 1, "text": ""})
    assert violations("sendTelepathy", {"chat_id": 5})
