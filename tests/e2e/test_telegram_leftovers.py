"""What else Telegram carries (issue 37, item 8), end to end through the real webhook and the fake Bot API: a voice
note heard as nothing with a wine request as its caption, a checklist sent as a request (and the service messages
about its tasks), and a comment in a discussion group's thread (a supergroup that is no forum), answered under the
comment without ``message_thread_id``, which the fake refuses there as the Bot API documents.

Which wines were shown is read from the photo captions the fake Bot API recorded, their facts from the catalogue
file (data/catalog/wines.json), never from the code under test."""

from __future__ import annotations

import httpx2 as httpx
import pytest
from sommelier.telegram.router import VOICE_NOT_HEARD

from tests.bot_harness import configure_bot, deliver, make_bot
from tests.e2e.shipped_rows import row
from tests.e2e.test_voice_messages import AUDIO, voice_update
from tests.fakes.telegram_updates import TEST_CHAT, private_chat, user

GROUP = -1001234567890  # the shop channel's discussion group: a supergroup, not a forum
SENDS = {"sendMessage", "sendPhoto", "sendChatAction", "sendMessageDraft", "sendMediaGroup"}


def _shown(telegram, chat: int = TEST_CHAT) -> list[dict]:
    return [row(c.params["caption"]) for c in telegram.sent_messages(chat) if c.method == "sendPhoto"]


def _texts(telegram, chat: int = TEST_CHAT) -> list[str]:
    return [c.params.get("text") or c.params.get("caption") or "" for c in telegram.sent_messages(chat)]


@pytest.fixture
def heard(monkeypatch, telegram, llm, fresh_memory, state_dir):
    """Offline answers, speech to text on the fake OpenAI-compatible endpoint."""
    configure_bot(monkeypatch, telegram, fresh_memory, unset=("QUEUE_URL", "IDEMPOTENCY_TABLE", "OPENAI_API_KEY"))
    monkeypatch.setenv("STT_API_KEY", "stt-test-key-not-secret")
    monkeypatch.setenv("STT_BASE_URL", llm.base_url)
    return make_bot(fresh_memory, telegram, rate=1000)


def test_a_voice_note_heard_as_nothing_answers_its_caption(heard, telegram, llm):
    update = voice_update(3701, caption="красное сухое к шашлыку до 2000")
    telegram.add_file(update["message"]["voice"]["file_id"], AUDIO)
    llm.hear(AUDIO, "")  # a note with nothing said
    deliver(heard, update)
    said = _texts(telegram)
    assert VOICE_NOT_HEARD not in said and not any(t.startswith("🎙") for t in said), said
    shown = _shown(telegram)
    assert shown and all(w["wine_type"] == "red" and w["sweetness"] == "dry" and w["price_rub"] <= 2000 for w in shown)


def test_the_transcript_and_the_caption_together_are_the_request(heard, telegram, llm):
    update = voice_update(3702, caption="до 1500")
    telegram.add_file(update["message"]["voice"]["file_id"], AUDIO)
    llm.hear(AUDIO, "белое сухое к рыбе")
    deliver(heard, update)
    assert _texts(telegram)[0] == "🎙 Я услышал: «белое сухое к рыбе»"
    shown = _shown(telegram)
    assert shown and all(
        w["wine_type"] == "white" and w["sweetness"] == "dry" and w["price_rub"] <= 1500 for w in shown
    )


def test_without_speech_to_text_the_caption_is_still_answered(heard, telegram, monkeypatch, fresh_memory):
    monkeypatch.delenv("STT_API_KEY")
    deliver(make_bot(fresh_memory, telegram, rate=1000), voice_update(3703, caption="игристое до 3000"))
    shown = _shown(telegram)
    assert shown and all(w["wine_type"] == "sparkling" and w["price_rub"] <= 3000 for w in shown)


def _checklist_message(update_id: int, **content) -> dict:
    message = {"message_id": 5000 + update_id, "from": user(TEST_CHAT), "chat": private_chat(), "date": 1787911500}
    return {"update_id": update_id, "message": {**message, **content}}


def test_a_checklist_is_read_as_the_request_and_its_ticks_stay_silent(heard, telegram):
    checklist = {
        "title": "К новогоднему столу",
        "tasks": [{"id": 1, "text": "игристое брют"}, {"id": 2, "text": "до 2500"}],
        "others_can_mark_tasks_as_done": True,
    }
    deliver(heard, _checklist_message(3711, checklist=checklist))
    shown = _shown(telegram)
    assert shown and all(w["wine_type"] == "sparkling" and w["price_rub"] <= 2500 for w in shown), _texts(telegram)
    before = len(telegram.calls)
    done = {
        "checklist_message": {"message_id": 8711, "date": 1787911500, "chat": private_chat(), "checklist": checklist}
    }
    deliver(heard, _checklist_message(3712, checklist_tasks_done={**done, "marked_as_done_task_ids": [1]}))
    added = {"tasks": [{"id": 3, "text": "сырная тарелка"}]}
    deliver(heard, _checklist_message(3713, checklist_tasks_added=added))
    assert not [c.method for c in telegram.calls[before:] if c.method in SENDS], "a tick or an added task: silence"
    deliver(heard, _checklist_message(3714, checklist={"title": 5, "tasks": "игристое"}))  # a broken one: no crash
    assert not [c for c in telegram.calls if c.http_status >= 500]


def test_the_fake_bot_api_refuses_a_thread_id_in_a_supergroup_that_is_no_forum(telegram):
    url = f"{telegram.base_url}/bot{telegram.token}"
    refused = httpx.post(f"{url}/sendMessage", json={"chat_id": GROUP, "text": "x", "message_thread_id": 77})
    assert refused.status_code == 400 and "thread" in refused.json()["description"]
    typing = httpx.post(f"{url}/sendChatAction", json={"chat_id": GROUP, "action": "typing", "message_thread_id": 77})
    assert typing.status_code == 200, "a chat action takes a thread id in any supergroup"
    plain = httpx.post(f"{url}/sendMessage", json={"chat_id": GROUP, "text": "x"})
    assert plain.status_code == 200


def test_a_comment_in_a_discussion_thread_is_answered_under_it_without_a_thread_id(heard, telegram):
    post = {
        "message_id": 77,
        "date": 1787911000,
        "chat": {"id": GROUP, "type": "supergroup", "title": "Обсуждение канала магазина"},
        "sender_chat": {"id": -1009876543210, "type": "channel", "title": "Винный магазин"},
        "is_automatic_forward": True,
        "text": "Новое поступление: вина Грузии",
    }
    comment = {
        "message_id": 81,
        "date": 1787911100,
        "chat": {"id": GROUP, "type": "supergroup", "title": "Обсуждение канала магазина"},
        "from": user(5087654321),
        "message_thread_id": 77,
        "reply_to_message": post,
        "text": "а что из красного сухого посоветуете до 2000?",
    }
    deliver(heard, {"update_id": 3721, "message": comment})
    calls = [c for c in telegram.calls if c.method in SENDS]
    assert calls and all(c.http_status == 200 for c in calls), [(c.method, c.response) for c in calls]
    assert not [
        c.method for c in calls if "message_thread_id" in c.params and c.params["message_thread_id"] is not None
    ]
    messages = [c for c in calls if c.method in ("sendMessage", "sendPhoto", "sendMediaGroup")]
    assert messages[0].params["reply_parameters"]["message_id"] == 81, "the first part answers the comment"
    shown = _shown(telegram, GROUP)
    assert shown and all(w["wine_type"] == "red" and w["price_rub"] <= 2000 for w in shown)
