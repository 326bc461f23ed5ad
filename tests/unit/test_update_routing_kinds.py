"""What an update is to the bot, on current shapes (devsets/telegram/updates): captions are text, voice is
speech, a message with no content kind the bot reads is silence, a topic's creation message is no reply
to the bot, and each answer knows where it goes (topic, Business connection, direct-messages topic, comment)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from sommelier.telegram.updates import parse_update, route

UPDATES = Path(__file__).resolve().parents[2] / "devsets" / "telegram" / "updates"
BOT = "sommelier_test_bot"


def load(name: str) -> dict:
    return json.loads((UPDATES / name).read_text(encoding="utf-8"))


def routed(update: dict):
    return route(parse_update(update), BOT)


@pytest.mark.parametrize(
    "name",
    [
        "photo_with_caption.json",
        "video_with_caption.json",
        "document_pdf_with_caption.json",
        "audio_with_caption.json",
        "animation_with_caption.json",
        "live_photo_with_caption.json",
    ],
)
def test_a_caption_is_the_customers_text(name):
    update = load(name)
    r = routed(update)
    assert r.kind == "text" and r.text == update["message"]["caption"].strip()


def test_a_voice_is_speech_and_its_caption_comes_along():
    plain, captioned = routed(load("voice.json")), routed(load("voice_with_caption.json"))
    assert plain.kind == captioned.kind == "voice"
    assert plain.media == "voice" and plain.file_id and plain.duration is not None
    assert captioned.text == load("voice_with_caption.json")["message"]["caption"]
    assert routed(load("video_note.json")).media == "video_note"


def test_a_label_photo_without_caption_is_a_photo_of_its_largest_size():
    update = load("photo_no_caption_label.json")
    r = routed(update)
    largest = max(update["message"]["photo"], key=lambda s: s["width"] * s["height"])
    assert r.kind == "photo" and r.file_id == largest["file_id"]


@pytest.mark.parametrize("path", sorted(UPDATES.glob("svc_*.json")), ids=lambda p: p.stem)
def test_service_messages_are_silence_whatever_their_kind(path):
    assert routed(json.loads(path.read_text(encoding="utf-8"))).kind == "ignored"


def test_a_service_kind_the_bot_api_adds_later_is_silence_too():
    update = load("svc_community_chat_removed.json")
    body = update["message"]
    body.pop("community_chat_removed")
    body["wine_tasting_scheduled_2031"] = {"date": 1}  # a made-up future service field
    assert routed(update).kind == "ignored"


def test_in_a_topic_the_bot_opened_the_creation_message_is_not_a_reply_to_the_bot():
    update = load("forum_topic_message.json")
    creation = update["message"]["reply_to_message"]
    creation["from"] = {"id": 8123456789, "is_bot": True, "first_name": "Sommelier", "username": BOT}
    r = routed(update)
    assert r.kind == "ignored" and r.addressed is False
    explicit = copy.deepcopy(update)
    reply = explicit["message"]["reply_to_message"]
    reply.pop("forum_topic_created")
    reply["message_id"] = 1044  # a message of the bot inside the topic: a real reply
    assert routed(explicit).kind == "text"


def test_business_messages_carry_their_connection_and_only_the_customers_are_answered():
    r = routed(load("business_message_text.json"))
    assert r.kind == "text" and r.place.business_connection_id == "Xy7kQm2pEAAAbC3dEfGhIjKlMn0"
    assert routed(load("business_message_from_owner.json")).kind == "ignored"
    assert routed(load("business_message_sent_by_bot_echo.json")).kind == "ignored"
    connection = routed(load("business_connection_readonly.json"))
    assert connection.kind == "business" and connection.business is not None
    assert connection.business.may_reply is False
    assert routed(load("business_connection_enabled.json")).business.may_reply is True


def test_a_channels_direct_messages_answer_in_the_customers_topic_without_chat_actions():
    place = routed(load("dm_topic_text.json")).place
    assert place.direct_messages_topic_id == 733445566 and not place.takes_chat_actions
    assert routed(load("dm_suggested_post.json")).kind == "ignored"


def test_a_comment_under_a_channel_post_is_answered_under_it():
    update = load("discussion_comment.json")
    place = routed(update).place
    # A comment thread is no forum topic: no message_thread_id (forum supergroups and bots' private topics only).
    assert place.thread_id is None and place.reply_to == update["message"]["message_id"]
    assert place.send_params()["reply_parameters"] == {"message_id": 515, "allow_sending_without_reply": True}
    assert place.send_params().get("message_thread_id") is None
