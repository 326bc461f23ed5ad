"""Voice messages end to end over real sockets: the fake Bot API serves getFile and the file download, the
fake OpenAI-compatible server transcribes (POST /v1/audio/transcriptions through the openai SDK), and the
words are answered like a typed message, the answer beginning with what was heard."""

from __future__ import annotations

import pytest
from sommelier.telegram.router import VOICE_AS_TEXT, VOICE_NOT_HEARD

from tests.bot_harness import database_url, deliver, make_bot
from tests.fakes.telegram_updates import TEST_BOT, TEST_CHAT, TEST_WEBHOOK_SECRET, private_chat, user

AUDIO = b"OggS\x00\x02" + bytes(range(256)) * 8  # an Opus voice message, as far as anyone here can tell
SAID = "красное сухое к шашлыку, тысячи за две"


@pytest.fixture
def environment(monkeypatch, telegram, llm, fresh_memory, state_dir):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", TEST_WEBHOOK_SECRET)
    monkeypatch.setenv("TELEGRAM_BOT_USERNAME", TEST_BOT)
    monkeypatch.setenv("DATABASE_URL", database_url(fresh_memory))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    for name in ("QUEUE_URL", "IDEMPOTENCY_TABLE", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    # Speech to text on its own endpoint; the chat model stays offline (the rule-based responder answers).
    monkeypatch.setenv("STT_API_KEY", "stt-test-key-not-secret")
    monkeypatch.setenv("STT_BASE_URL", llm.base_url)


def voice_update(update_id: int, *, duration: int = 4, caption: str | None = None, kind: str = "voice") -> dict:
    body = {"file_id": f"AwACAgIAAxkBAAIV{update_id}", "file_unique_id": f"AgADV{update_id}", "duration": duration}
    body.update({"mime_type": "audio/ogg", "file_size": len(AUDIO)} if kind == "voice" else {"length": 240})
    message = {
        "message_id": 900 + update_id,
        "from": user(TEST_CHAT),
        "chat": private_chat(),
        "date": 1787910000,
        kind: body,
    }
    if caption:
        message["caption"] = caption
    return {"update_id": update_id, "message": message}


def texts(telegram) -> list[str]:
    return [c.result.get("text") or c.result.get("caption") or "" for c in telegram.sent_messages(TEST_CHAT)]


def test_a_voice_message_is_heard_and_answered_like_text(environment, fresh_memory, telegram, llm):
    update = voice_update(1, caption="на день рождения")
    telegram.add_file(update["message"]["voice"]["file_id"], AUDIO)
    llm.hear(AUDIO, SAID)
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, update)
    shown = texts(telegram)
    assert shown[0] == f"🎙 Я услышал: «{SAID}»"
    assert len(shown) >= 3 and "₽" in "".join(shown[1:])  # the wines for what was said, with their prices
    [request] = llm.transcription_requests
    assert request == {
        "model": "whisper-1",
        "filename": "voice.ogg",
        "size": len(AUDIO),
        "language": "ru",
        "content_type": request["content_type"],
    }
    assert [c.method for c in telegram.calls][:3] == ["sendChatAction", "getFile", "sendMessage"]


def test_a_video_note_is_heard_too(environment, fresh_memory, telegram, llm):
    update = voice_update(2, kind="video_note")
    telegram.add_file(update["message"]["video_note"]["file_id"], AUDIO)
    llm.hear(AUDIO, SAID)
    deliver(make_bot(fresh_memory, telegram), update)
    assert texts(telegram)[0] == f"🎙 Я услышал: «{SAID}»"
    assert llm.transcription_requests[0]["filename"] == "video_note.mp4"


def test_what_cannot_be_heard_gets_a_polite_request(environment, fresh_memory, telegram, llm, monkeypatch):
    bot = make_bot(fresh_memory, telegram)
    unknown = voice_update(3)
    telegram.add_file(unknown["message"]["voice"]["file_id"], b"not audio at all")  # the endpoint refuses it
    deliver(bot, unknown)
    deliver(bot, voice_update(4))  # a file Telegram no longer has
    long = voice_update(5, duration=3600)
    telegram.add_file(long["message"]["voice"]["file_id"], AUDIO)
    deliver(bot, long)  # over STT_MAX_SECONDS: not downloaded at all
    shown = texts(telegram)
    assert shown[:2] == [VOICE_NOT_HEARD, VOICE_NOT_HEARD] and "длинное" in shown[2] and len(shown) == 3
    assert len(llm.transcription_requests) == 1
    monkeypatch.delenv("STT_API_KEY")
    deliver(make_bot(fresh_memory, telegram), voice_update(6))  # no transcription endpoint configured
    assert texts(telegram)[-1] == VOICE_AS_TEXT
