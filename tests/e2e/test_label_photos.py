"""Label photos end to end over real sockets: the fake Bot API serves the photo (getFile and the download of
its largest size), the fake OpenAI-compatible server plays a model that sees (or one that refuses images),
the real openai SDK carries the photo as an image_url content part (a data URL)."""

from __future__ import annotations

import base64
import json

import pytest
from sommelier.agent.llm.capabilities import IMAGE_NOT_SEEN
from sommelier.telegram.router import LABEL_AS_TEXT, LABEL_QUESTION

from bench.agent_harness import found_wines, tool_results
from tests.bot_harness import deliver, make_bot
from tests.fakes.openai_server import error, reply, streamed, tool_calls
from tests.fakes.telegram_updates import TEST_BOT, TEST_CHAT, TEST_WEBHOOK_SECRET, private_chat, user

LABEL = b"\xff\xd8\xff\xe0" + b"a label: Alma Valley Chardonnay 2022" * 40  # the largest size, a JPEG
THUMB = b"\xff\xd8\xff\xe0small"
READ_ON_THE_LABEL = ("search_wines", {"grape_variety": "Шардоне", "country": "Россия"})


@pytest.fixture
def environment(monkeypatch, telegram, fresh_memory, state_dir):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", TEST_WEBHOOK_SECRET)
    monkeypatch.setenv("TELEGRAM_BOT_USERNAME", TEST_BOT)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    monkeypatch.setenv("TELEGRAM_PROGRESSIVE", "off")
    for name in ("QUEUE_URL", "IDEMPOTENCY_TABLE", "STT_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def photo_update(update_id: int, telegram, caption: str | None = None) -> dict:
    small, large = f"AgACAgIAAxkBAAIP{update_id}s", f"AgACAgIAAxkBAAIP{update_id}L"
    telegram.add_file(small, THUMB)
    telegram.add_file(large, LABEL)
    message = {
        "message_id": 300 + update_id,
        "from": user(TEST_CHAT),
        "chat": private_chat(),
        "date": 1787910000,
        "photo": [
            {"file_id": small, "file_unique_id": "AQADs", "width": 90, "height": 120, "file_size": len(THUMB)},
            {"file_id": large, "file_unique_id": "AQADL", "width": 960, "height": 1280, "file_size": len(LABEL)},
        ],
    }
    if caption:
        message["caption"] = caption
    return {"update_id": update_id, "message": message}


def images(body: dict) -> list[str]:
    return [
        part["image_url"]["url"]
        for message in body.get("messages", [])
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]


def user_text(body: dict) -> str:
    content = next(m for m in body["messages"] if m["role"] == "user")["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


def the_answer(body: dict, intro: str) -> str:
    wines = found_wines(body)[:1]
    return json.dumps(
        {
            "response_type": "recommendation" if wines else "informational",
            "intro": intro,
            "wines": [{"wine_id": w["id"], "wine_name": w["name"], "description": "То самое вино."} for w in wines],
            "closing": "Подобрать что-то к нему?",
            "guard_type": None,
        },
        ensure_ascii=False,
    )


def sees_the_label(body: dict):
    """A model that reads the label: it names the wine and looks for it with the tools."""
    if body.get("tools") and not tool_results(body):
        return streamed(tool_calls(READ_ON_THE_LABEL))
    return streamed(reply(the_answer(body, "На этикетке Alma Valley Шардоне — оно у нас есть.")))


def texts(telegram) -> list[str]:
    return [c.result.get("text") or c.result.get("caption") or "" for c in telegram.sent_messages(TEST_CHAT)]


def test_a_label_photo_is_shown_to_a_model_that_sees_and_the_wine_is_found(
    environment, fresh_memory, telegram, llm, monkeypatch
):
    llm.default = sees_the_label
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    deliver(bot, photo_update(1, telegram))
    first = llm.chat_requests[0]
    assert images(first) == ["data:image/jpeg;base64," + base64.b64encode(LABEL).decode()]  # the largest size
    assert LABEL_QUESTION in user_text(first)
    shown = texts(telegram)
    assert shown[0].startswith("На этикетке Alma Valley") and any("Шардоне" in t for t in shown[1:])
    downloads = [c.params["file_id"] for c in telegram.calls_of("getFile")]
    assert downloads == [photo_update(1, telegram)["message"]["photo"][-1]["file_id"]]


def test_a_caption_goes_with_its_photo(environment, fresh_memory, telegram, llm, monkeypatch):
    llm.default = sees_the_label
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    deliver(bot, photo_update(2, telegram, caption="У вас такое есть? До 2000"))
    first = llm.chat_requests[0]
    assert len(images(first)) == 1 and "У вас такое есть? До 2000" in user_text(first)


def test_a_model_that_refuses_images_is_remembered_and_the_customer_asked_for_the_name(
    environment, fresh_memory, telegram, llm, monkeypatch
):
    def text_only(body: dict):
        if images(body):
            return error(400, "This model does not support image input.", code="invalid_request_error")
        return streamed(reply(the_answer(body, "Я не вижу фото — напишите, пожалуйста, название вина.")))

    llm.default = text_only
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    deliver(bot, photo_update(3, telegram))
    refused, retried = llm.chat_requests[0], llm.chat_requests[1]
    assert images(refused) and not images(retried) and IMAGE_NOT_SEEN in user_text(retried)
    assert texts(telegram)[0].startswith("Я не вижу фото")
    asked = len(llm.chat_requests)
    deliver(bot, photo_update(4, telegram))  # learned: no image goes to this model again
    assert texts(telegram)[-1] == LABEL_AS_TEXT and len(llm.chat_requests) == asked


def test_a_model_stated_blind_or_offline_asks_for_the_name_without_downloading(
    environment, fresh_memory, telegram, llm, monkeypatch
):
    monkeypatch.setenv("LLM_CAPABILITIES", "vision=false")
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    deliver(bot, photo_update(5, telegram))
    assert texts(telegram) == [LABEL_AS_TEXT] and llm.chat_requests == [] and telegram.calls_of("getFile") == []
