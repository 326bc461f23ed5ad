"""Writes the corpus of Telegram update shapes (one JSON file per update) used by tests/e2e/test_update_corpus.py.

Each file: {"about": ..., "expect": "reply" | "silent" | "callback", "update": <the Update as Telegram sends it>}.
The shapes follow the Bot API reference (Update, Message, service messages, CallbackQuery,
ChatMemberUpdated, reactions, business connections, payments, inline mode) as of Bot API 9.x; the
values are made up. Run `python tests/data/telegram_updates/make_corpus.py` to rewrite the files.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
BOT = {"id": 123456, "is_bot": True, "first_name": "Sommelier", "username": "sommelier_test_bot"}
ANNA = {
    "id": 5551001,
    "is_bot": False,
    "first_name": "Анна",
    "last_name": "Петрова",
    "username": "anna",
    "language_code": "ru",
}
IVAN = {"id": 5551002, "is_bot": False, "first_name": "Иван", "language_code": "en", "is_premium": True}
ANON = {"id": 1087968824, "is_bot": True, "first_name": "Group", "username": "GroupAnonymousBot"}
SERVICE_USER = {"id": 777000, "is_bot": False, "first_name": "Telegram"}
PRIVATE = {"id": 5551001, "type": "private", "first_name": "Анна", "last_name": "Петрова", "username": "anna"}
GROUP = {"id": -4012345678, "type": "group", "title": "Дегустация", "all_members_are_administrators": True}
SUPER = {"id": -1001987654321, "type": "supergroup", "title": "Винный клуб", "username": "wine_club_test"}
FORUM = {"id": -1002468013579, "type": "supergroup", "title": "Клуб с темами", "is_forum": True}
CHANNEL = {"id": -1001122334455, "type": "channel", "title": "Новости магазина", "username": "wine_news_test"}
DATE = 1763800000
PHOTO = [
    {"file_id": "AgACAgIAAxkBAAIBZ2c-small", "file_unique_id": "AQADs1", "file_size": 1290, "width": 90, "height": 67},
    {
        "file_id": "AgACAgIAAxkBAAIBZ2c-medium",
        "file_unique_id": "AQADs2",
        "file_size": 16211,
        "width": 320,
        "height": 240,
    },
    {
        "file_id": "AgACAgIAAxkBAAIBZ2c-large",
        "file_unique_id": "AQADs3",
        "file_size": 70138,
        "width": 1280,
        "height": 960,
    },
]
STICKER = {
    "file_id": "CAACAgIAAxkBAAIBa2c",
    "file_unique_id": "AgADrQ",
    "type": "regular",
    "width": 512,
    "height": 512,
    "is_animated": False,
    "is_video": False,
    "emoji": "🍷",
    "set_name": "WineStickers",
    "file_size": 23410,
    "thumbnail": {"file_id": "AAMCAgADGQ", "file_unique_id": "AQADrQ", "file_size": 5412, "width": 128, "height": 128},
}

corpus: list[tuple[str, str, dict]] = []
_update_id = [880_000_000]
_message_id = [1000]


def next_update() -> int:
    _update_id[0] += 1
    return _update_id[0]


def next_message() -> int:
    _message_id[0] += 1
    return _message_id[0]


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def add(name: str, expect: str, about: str, body: dict) -> None:
    corpus.append((name, expect, {"about": about, "expect": expect, "update": {"update_id": next_update(), **body}}))


def msg(chat: dict, sender: dict | None = ANNA, **fields) -> dict:
    out = {"message_id": next_message()}
    if sender is not None:
        out["from"] = sender
    out.update({"chat": chat, "date": DATE})
    out.update(fields)
    return out


def mention_at(text: str, before: str, username: str = "sommelier_test_bot") -> dict:
    return {"type": "mention", "offset": utf16(before), "length": utf16("@" + username)}


def command(text: str) -> list[dict]:
    return [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]


def bot_message(chat: dict, text: str = "Вот три вина к стейку.") -> dict:
    return {"message_id": 900, "from": BOT, "chat": chat, "date": DATE - 60, "text": text}


# ---------------------------------------------------------------- private chat: text and commands
add("private_text", "reply", "plain text", {"message": msg(PRIVATE, text="красное сухое к стейку до 3000")})
add(
    "private_text_emoji",
    "reply",
    "emoji and Cyrillic",
    {"message": msg(PRIVATE, text="🍷🍷 что-нибудь лёгкое на летний вечер? 🌞")},
)
add(
    "private_text_entities",
    "reply",
    "bold, italic and a URL entity",
    {
        "message": msg(
            PRIVATE,
            text="Хочу вино как на сайте example.com, но дешевле",
            entities=[{"type": "url", "offset": 21, "length": 11}, {"type": "bold", "offset": 0, "length": 4}],
        )
    },
)
add(
    "private_text_link_preview",
    "reply",
    "text with link_preview_options",
    {
        "message": msg(
            PRIVATE,
            text="посоветуйте игристое https://example.com/x",
            link_preview_options={"is_disabled": True},
            entities=[{"type": "url", "offset": 21, "length": 21}],
        )
    },
)
add(
    "private_reply_to_bot",
    "reply",
    "a reply to the bot's answer",
    {"message": msg(PRIVATE, text="а подешевле?", reply_to_message=bot_message(PRIVATE))},
)
add(
    "private_quote_reply",
    "reply",
    "a reply with a quote",
    {
        "message": msg(
            PRIVATE,
            text="а это к рыбе подойдёт?",
            reply_to_message=bot_message(PRIVATE),
            quote={"text": "три вина", "position": 4, "is_manual": True},
        )
    },
)
add("private_start", "reply", "/start", {"message": msg(PRIVATE, text="/start", entities=command("/start"))})
add(
    "private_start_payload",
    "reply",
    "/start with a deep-link payload",
    {"message": msg(PRIVATE, text="/start wine_42", entities=command("/start"))},
)
add("private_help", "reply", "/help", {"message": msg(PRIVATE, text="/help", entities=command("/help"))})
add("private_reset", "reply", "/reset", {"message": msg(PRIVATE, text="/reset", entities=command("/reset"))})
add(
    "private_unknown_command",
    "reply",
    "an unknown command gets the help",
    {"message": msg(PRIVATE, text="/wines", entities=command("/wines"))},
)
add(
    "private_long_text",
    "reply",
    "a 4000-character question",
    {"message": msg(PRIVATE, text=("Расскажите про вино к ужину. " * 140)[:4000])},
)
add(
    "private_from_english_user",
    "reply",
    "language_code en, premium user",
    {
        "message": msg(
            {"id": IVAN["id"], "type": "private", "first_name": "Иван"}, IVAN, text="red wine for pasta please"
        )
    },
)
add(
    "private_forward_user",
    "reply",
    "a forwarded text (forward_origin user)",
    {
        "message": msg(
            PRIVATE,
            text="вот что мне посоветовали: Кьянти",
            forward_origin={"type": "user", "date": DATE - 3600, "sender_user": IVAN},
        )
    },
)
add(
    "private_forward_hidden",
    "reply",
    "a forward from a hidden user",
    {
        "message": msg(
            PRIVATE,
            text="какое вино к утке?",
            forward_origin={"type": "hidden_user", "date": DATE - 7200, "sender_user_name": "Мария"},
        )
    },
)
add(
    "private_forward_channel",
    "reply",
    "a forward from a channel",
    {
        "message": msg(
            PRIVATE,
            text="акция на риоху — что скажете?",
            forward_origin={
                "type": "channel",
                "date": DATE - 100,
                "chat": CHANNEL,
                "message_id": 55,
                "author_signature": "Редакция",
            },
        )
    },
)
add(
    "private_via_bot",
    "reply",
    "a message sent via an inline bot",
    {
        "message": msg(
            PRIVATE, text="белое к сыру", via_bot={"id": 98765, "is_bot": True, "first_name": "Gif", "username": "gif"}
        )
    },
)

# ---------------------------------------------------------------- private chat: non-text
NON_TEXT = {
    "photo": {"photo": PHOTO},
    "photo_caption": {"photo": PHOTO, "caption": "что за вино?"},
    "photo_spoiler": {"photo": PHOTO, "has_media_spoiler": True},
    "sticker": {"sticker": STICKER},
    "sticker_animated": {"sticker": {**STICKER, "is_animated": True, "file_id": "CAACAgIAAxkBAAIBa2d"}},
    "sticker_video": {"sticker": {**STICKER, "is_video": True, "file_id": "CAACAgIAAxkBAAIBa2e"}},
    "voice": {
        "voice": {
            "file_id": "AwACAgIAAxkBAAIBb2c",
            "file_unique_id": "AgADvw",
            "duration": 4,
            "mime_type": "audio/ogg",
            "file_size": 12045,
        }
    },
    "audio": {
        "audio": {
            "file_id": "CQACAgIAAxkBAAIBc2c",
            "file_unique_id": "AgADcw",
            "duration": 185,
            "performer": "Артист",
            "title": "Песня",
            "mime_type": "audio/mpeg",
            "file_size": 2964012,
        }
    },
    "video": {
        "video": {
            "file_id": "BAACAgIAAxkBAAIBd2c",
            "file_unique_id": "AgADdw",
            "width": 1280,
            "height": 720,
            "duration": 12,
            "mime_type": "video/mp4",
            "file_size": 1843123,
        }
    },
    "video_note": {
        "video_note": {
            "file_id": "DQACAgIAAxkBAAIBe2c",
            "file_unique_id": "AgADew",
            "length": 240,
            "duration": 6,
            "file_size": 312456,
        }
    },
    "document": {
        "document": {
            "file_id": "BQACAgIAAxkBAAIBf2c",
            "file_unique_id": "AgADfw",
            "file_name": "меню.pdf",
            "mime_type": "application/pdf",
            "file_size": 88123,
        }
    },
    "animation": {
        "animation": {
            "file_id": "CgACAgIAAxkBAAIBg2c",
            "file_unique_id": "AgADgw",
            "width": 320,
            "height": 240,
            "duration": 3,
            "file_name": "cheers.mp4",
            "mime_type": "video/mp4",
        },
        "document": {
            "file_id": "CgACAgIAAxkBAAIBg2c",
            "file_unique_id": "AgADgw",
            "file_name": "cheers.mp4",
            "mime_type": "video/mp4",
        },
    },
    "contact": {"contact": {"phone_number": "+79990001122", "first_name": "Иван", "user_id": 5551002}},
    "location": {"location": {"latitude": 55.7558, "longitude": 37.6173}},
    "live_location": {
        "location": {
            "latitude": 55.75,
            "longitude": 37.61,
            "live_period": 900,
            "heading": 90,
            "horizontal_accuracy": 12.5,
        }
    },
    "venue": {
        "venue": {"location": {"latitude": 55.75, "longitude": 37.61}, "title": "Винотека", "address": "Тверская, 1"},
        "location": {"latitude": 55.75, "longitude": 37.61},
    },
    "poll": {
        "poll": {
            "id": "5368301234567890",
            "question": "Красное или белое?",
            "options": [{"text": "Красное", "voter_count": 0}, {"text": "Белое", "voter_count": 0}],
            "total_voter_count": 0,
            "is_closed": False,
            "is_anonymous": True,
            "type": "regular",
            "allows_multiple_answers": False,
        }
    },
    "dice": {"dice": {"emoji": "🎲", "value": 4}},
    "story": {"story": {"chat": PRIVATE, "id": 17}},
    "game": {"game": {"title": "Угадай вино", "description": "игра", "photo": PHOTO}},
}
for name, fields in NON_TEXT.items():
    add(
        f"private_{name}",
        "reply",
        f"a {name.replace('_', ' ')} in a private chat: 'only text'",
        {"message": msg(PRIVATE, **fields)},
    )

# ---------------------------------------------------------------- private chat: service messages
add(
    "private_write_access_allowed",
    "silent",
    "write_access_allowed (a Web App or a login)",
    {"message": msg(PRIVATE, write_access_allowed={"from_request": True})},
)
add(
    "private_auto_delete_timer",
    "silent",
    "auto-delete timer set",
    {"message": msg(PRIVATE, message_auto_delete_timer_changed={"message_auto_delete_time": 86400})},
)
add(
    "private_chat_background",
    "silent",
    "chat background set",
    {
        "message": msg(
            PRIVATE,
            chat_background_set={
                "type": {
                    "type": "fill",
                    "fill": {"type": "gradient", "top_color": 16777215, "bottom_color": 0, "rotation_angle": 45},
                    "dark_theme_dimming": 20,
                }
            },
        )
    },
)
add(
    "private_users_shared",
    "silent",
    "users shared through a keyboard button",
    {"message": msg(PRIVATE, users_shared={"request_id": 1, "users": [{"user_id": 5551002, "first_name": "Иван"}]})},
)
add(
    "private_connected_website",
    "silent",
    "login on a website",
    {"message": msg(PRIVATE, connected_website="example.com")},
)
add(
    "private_successful_payment",
    "silent",
    "a payment went through",
    {
        "message": msg(
            PRIVATE,
            successful_payment={
                "currency": "XTR",
                "total_amount": 50,
                "invoice_payload": "gift",
                "telegram_payment_charge_id": "stxAbc",
            },
        )
    },
)
add(
    "private_gift",
    "silent",
    "a gift",
    {
        "message": msg(
            PRIVATE,
            gift={"gift": {"id": "5170145012310081615", "sticker": STICKER, "star_count": 15}, "owned_gift_id": "abc"},
        )
    },
)
add("private_pinned", "silent", "a pinned message", {"message": msg(PRIVATE, pinned_message=bot_message(PRIVATE))})
add(
    "private_from_a_bot",
    "silent",
    "a message from another bot (not the anonymous admin)",
    {"message": msg(PRIVATE, {"id": 98765, "is_bot": True, "first_name": "Other"}, text="hi")},
)

# ---------------------------------------------------------------- groups and supergroups
for chat_name, chat in (("group", GROUP), ("supergroup", SUPER)):
    add(
        f"{chat_name}_text_not_addressed",
        "silent",
        "group chatter, not for the bot",
        {"message": msg(chat, text="кто идёт на дегустацию в субботу?")},
    )
    text = "@sommelier_test_bot красное к стейку"
    add(
        f"{chat_name}_mention_first",
        "reply",
        "a mention at the start",
        {"message": msg(chat, text=text, entities=[mention_at(text, "")])},
    )
    text = "🍷🍷 @sommelier_test_bot что к утке?"
    add(
        f"{chat_name}_mention_after_emoji",
        "reply",
        "a mention after emoji: UTF-16 offsets",
        {"message": msg(chat, text=text, entities=[mention_at(text, "🍷🍷 ")])},
    )
    text = "Подскажи, @Sommelier_Test_Bot, белое к рыбе"
    add(
        f"{chat_name}_mention_other_case",
        "reply",
        "a mention in another letter case",
        {"message": msg(chat, text=text, entities=[mention_at(text, "Подскажи, ", "Sommelier_Test_Bot")])},
    )
    text = "👨‍👩‍👧 @anna и @ivan, идём?"
    add(
        f"{chat_name}_mention_others",
        "silent",
        "mentions of other people after a ZWJ emoji",
        {
            "message": msg(
                chat,
                text=text,
                entities=[mention_at(text, "👨‍👩‍👧 ", "anna"), mention_at(text, "👨‍👩‍👧 @anna и ", "ivan")],
            )
        },
    )
    add(
        f"{chat_name}_text_mention",
        "silent",
        "a text_mention of a user without a username",
        {
            "message": msg(
                chat,
                text="Иван, что скажешь?",
                entities=[{"type": "text_mention", "offset": 0, "length": 4, "user": IVAN}],
            )
        },
    )
    for cmd in ("/start@sommelier_test_bot", "/help@SOMMELIER_TEST_BOT", "/reset@Sommelier_test_bot", "/start"):
        add(
            f"{chat_name}_command_{cmd.strip('/').replace('@', '_at_').lower()}",
            "reply",
            f"{cmd} in a group",
            {"message": msg(chat, text=cmd, entities=command(cmd))},
        )
    add(
        f"{chat_name}_command_other_bot",
        "silent",
        "a command for another bot",
        {"message": msg(chat, text="/start@other_bot", entities=command("/start@other_bot"))},
    )
    add(
        f"{chat_name}_reply_to_bot",
        "reply",
        "a reply to the bot",
        {"message": msg(chat, text="а подешевле есть?", reply_to_message=bot_message(chat))},
    )
    add(
        f"{chat_name}_reply_to_person",
        "silent",
        "a reply to someone else",
        {"message": msg(chat, text="согласна", reply_to_message=msg(chat, IVAN, text="беру риоху"))},
    )
    text = "@sommelier_test_bot что к сыру?"
    add(
        f"{chat_name}_anonymous_admin_mention",
        "reply",
        "an anonymous admin (sender_chat) addresses the bot",
        {
            "message": msg(
                chat, ANON, sender_chat=chat, text=text, entities=[mention_at(text, "")], author_signature="Админ"
            )
        },
    )
    add(
        f"{chat_name}_anonymous_admin_chatter",
        "silent",
        "an anonymous admin not addressing the bot",
        {"message": msg(chat, ANON, sender_chat=chat, text="напоминаю о правилах")},
    )
    caption = "🍷 @sommelier_test_bot что это за вино?"
    add(
        f"{chat_name}_photo_caption_mention",
        "reply",
        "a photo whose caption mentions the bot: 'only text'",
        {"message": msg(chat, photo=PHOTO, caption=caption, caption_entities=[mention_at(caption, "🍷 ")])},
    )
    add(
        f"{chat_name}_photo_not_addressed",
        "silent",
        "a photo in the group",
        {"message": msg(chat, photo=PHOTO, caption="мы вчера")},
    )
    add(
        f"{chat_name}_sticker_not_addressed",
        "silent",
        "a sticker in the group",
        {"message": msg(chat, sticker=STICKER)},
    )
    add(
        f"{chat_name}_sticker_reply_to_bot",
        "reply",
        "a sticker in reply to the bot: 'only text'",
        {"message": msg(chat, sticker=STICKER, reply_to_message=bot_message(chat))},
    )

add(
    "supergroup_channel_speaks",
    "silent",
    "a linked channel's post mirrored into its group",
    {
        "message": msg(
            SUPER, SERVICE_USER, sender_chat=CHANNEL, is_automatic_forward=True, text="Новая поставка из Тосканы"
        )
    },
)
text = "@sommelier_test_bot посоветуй игристое"
add(
    "supergroup_as_channel_mention",
    "reply",
    "a user speaking as their channel addresses the bot",
    {
        "message": msg(
            SUPER,
            {"id": 136817688, "is_bot": True, "first_name": "Channel", "username": "Channel_Bot"},
            sender_chat=CHANNEL,
            text=text,
            entities=[mention_at(text, "")],
        )
    },
)

GROUP_SERVICE = {
    "new_chat_members_bot": {"new_chat_members": [BOT], "new_chat_member": BOT, "new_chat_participant": BOT},
    "new_chat_members_user": {"new_chat_members": [IVAN]},
    "left_chat_member": {"left_chat_member": IVAN},
    "new_chat_title": {"new_chat_title": "Винный клуб 2.0"},
    "new_chat_photo": {"new_chat_photo": PHOTO},
    "delete_chat_photo": {"delete_chat_photo": True},
    "group_chat_created": {"group_chat_created": True},
    "supergroup_chat_created": {"supergroup_chat_created": True},
    "migrate_to_chat_id": {"migrate_to_chat_id": -1009998887776},
    "migrate_from_chat_id": {"migrate_from_chat_id": -4012345678},
    "pinned_message": {"pinned_message": bot_message(SUPER)},
    "auto_delete_timer": {"message_auto_delete_timer_changed": {"message_auto_delete_time": 604800}},
    "video_chat_scheduled": {"video_chat_scheduled": {"start_date": DATE + 3600}},
    "video_chat_started": {"video_chat_started": {}},
    "video_chat_ended": {"video_chat_ended": {"duration": 1800}},
    "video_chat_invited": {"video_chat_participants_invited": {"users": [IVAN]}},
    "boost_added": {"boost_added": {"boost_count": 1}},
    "giveaway_created": {"giveaway_created": {"prize_star_count": 100}},
    "proximity_alert": {"proximity_alert_triggered": {"traveler": ANNA, "watcher": IVAN, "distance": 150}},
    "chat_background_set": {"chat_background_set": {"type": {"type": "chat_theme", "theme_name": "🍷"}}},
    "chat_shared": {"chat_shared": {"request_id": 2, "chat_id": -1001122334455}},
}
for name, fields in GROUP_SERVICE.items():
    add(
        f"supergroup_service_{name}",
        "silent",
        f"service message: {name.replace('_', ' ')}",
        {"message": msg(SUPER, **fields)},
    )

# ---------------------------------------------------------------- forum supergroup (topics)
TOPIC = 7
text = "@sommelier_test_bot что взять на пикник?"
add(
    "forum_topic_mention",
    "reply",
    "a mention inside a topic: the answer goes to the topic",
    {"message": msg(FORUM, text=text, entities=[mention_at(text, "")], message_thread_id=TOPIC, is_topic_message=True)},
)
add(
    "forum_topic_command",
    "reply",
    "/help@bot inside a topic",
    {
        "message": msg(
            FORUM,
            text="/help@sommelier_test_bot",
            entities=command("/help@sommelier_test_bot"),
            message_thread_id=TOPIC,
            is_topic_message=True,
        )
    },
)
text = "🥂 @sommelier_test_bot игристое до 2000"
add(
    "forum_topic_mention_after_emoji",
    "reply",
    "a mention after emoji in a topic",
    {
        "message": msg(
            FORUM, text=text, entities=[mention_at(text, "🥂 ")], message_thread_id=TOPIC, is_topic_message=True
        )
    },
)
add(
    "forum_topic_reply_to_bot",
    "reply",
    "a reply to the bot inside a topic",
    {
        "message": msg(
            FORUM,
            text="а белое?",
            message_thread_id=TOPIC,
            is_topic_message=True,
            reply_to_message={**bot_message(FORUM), "message_thread_id": TOPIC, "is_topic_message": True},
        )
    },
)
add(
    "forum_topic_chatter",
    "silent",
    "topic chatter",
    {"message": msg(FORUM, text="кто принесёт сыр?", message_thread_id=TOPIC, is_topic_message=True)},
)
text = "@sommelier_test_bot что к пицце?"
add(
    "forum_general_mention",
    "reply",
    "a mention in General (no thread id)",
    {"message": msg(FORUM, text=text, entities=[mention_at(text, "")])},
)
for name, fields in {
    "forum_topic_created": {"forum_topic_created": {"name": "Вина", "icon_color": 7322096}},
    "forum_topic_edited": {"forum_topic_edited": {"name": "Вина и сыры"}},
    "forum_topic_closed": {"forum_topic_closed": {}},
    "forum_topic_reopened": {"forum_topic_reopened": {}},
    "general_forum_topic_hidden": {"general_forum_topic_hidden": {}},
    "general_forum_topic_unhidden": {"general_forum_topic_unhidden": {}},
}.items():
    add(
        f"forum_service_{name}",
        "silent",
        f"service message: {name.replace('_', ' ')}",
        {"message": msg(FORUM, message_thread_id=TOPIC, is_topic_message=True, **fields)},
    )

# ---------------------------------------------------------------- channels, business, reactions, others
add(
    "channel_post_text",
    "silent",
    "a channel post (not a handled kind)",
    {"channel_post": msg(CHANNEL, None, sender_chat=CHANNEL, text="Новая поставка", author_signature="Редакция")},
)
add(
    "channel_post_photo",
    "silent",
    "a channel photo post",
    {"channel_post": msg(CHANNEL, None, sender_chat=CHANNEL, photo=PHOTO, caption="Кьянти")},
)
add(
    "channel_post_mention",
    "silent",
    "a channel post mentioning the bot",
    {
        "channel_post": msg(
            CHANNEL, None, sender_chat=CHANNEL, text="@sommelier_test_bot привет", entities=[mention_at("", "")]
        )
    },
)
add(
    "edited_channel_post",
    "silent",
    "an edited channel post",
    {"edited_channel_post": msg(CHANNEL, None, sender_chat=CHANNEL, text="Новая поставка!", edit_date=DATE + 60)},
)
add(
    "channel_chat_created",
    "silent",
    "a channel created",
    {"channel_post": msg(CHANNEL, None, sender_chat=CHANNEL, channel_chat_created=True)},
)
add(
    "channel_pinned",
    "silent",
    "a pin in a channel",
    {"channel_post": msg(CHANNEL, None, sender_chat=CHANNEL, pinned_message=msg(CHANNEL, None, text="закреп"))},
)
BUSINESS = {
    "id": "AbCdEfGh123",
    "user": ANNA,
    "user_chat_id": ANNA["id"],
    "date": DATE,
    "can_reply": True,
    "is_enabled": True,
}
add("business_connection", "silent", "a business account connected the bot", {"business_connection": BUSINESS})
add(
    "business_message",
    "silent",
    "a message in a connected business chat",
    {
        "business_message": msg(
            {"id": 5559999, "type": "private", "first_name": "Клиент"},
            {"id": 5559999, "is_bot": False, "first_name": "Клиент"},
            text="здравствуйте",
            business_connection_id="AbCdEfGh123",
        )
    },
)
add(
    "edited_business_message",
    "silent",
    "an edited business message",
    {
        "edited_business_message": msg(
            {"id": 5559999, "type": "private", "first_name": "Клиент"},
            {"id": 5559999, "is_bot": False, "first_name": "Клиент"},
            text="здравствуйте!",
            business_connection_id="AbCdEfGh123",
            edit_date=DATE + 5,
        )
    },
)
add(
    "deleted_business_messages",
    "silent",
    "business messages deleted",
    {
        "deleted_business_messages": {
            "business_connection_id": "AbCdEfGh123",
            "chat": {"id": 5559999, "type": "private", "first_name": "Клиент"},
            "message_ids": [1, 2],
        }
    },
)
add(
    "message_reaction",
    "silent",
    "a reaction to the bot's message",
    {
        "message_reaction": {
            "chat": PRIVATE,
            "message_id": 900,
            "user": ANNA,
            "date": DATE,
            "old_reaction": [],
            "new_reaction": [{"type": "emoji", "emoji": "👍"}],
        }
    },
)
add(
    "message_reaction_custom",
    "silent",
    "a custom-emoji reaction changed",
    {
        "message_reaction": {
            "chat": SUPER,
            "message_id": 901,
            "user": IVAN,
            "date": DATE,
            "old_reaction": [{"type": "emoji", "emoji": "🔥"}],
            "new_reaction": [{"type": "custom_emoji", "custom_emoji_id": "5368324170671202286"}],
        }
    },
)
add(
    "message_reaction_anonymous",
    "silent",
    "an anonymous reaction (actor_chat)",
    {
        "message_reaction": {
            "chat": SUPER,
            "message_id": 902,
            "actor_chat": SUPER,
            "date": DATE,
            "old_reaction": [],
            "new_reaction": [{"type": "paid"}],
        }
    },
)
add(
    "message_reaction_count",
    "silent",
    "reaction counts of a channel post",
    {
        "message_reaction_count": {
            "chat": CHANNEL,
            "message_id": 55,
            "date": DATE,
            "reactions": [{"type": {"type": "emoji", "emoji": "❤"}, "total_count": 12}],
        }
    },
)
add(
    "inline_query",
    "silent",
    "an inline query",
    {"inline_query": {"id": "4470000000000001", "from": ANNA, "query": "кьянти", "offset": "", "chat_type": "sender"}},
)
add(
    "chosen_inline_result",
    "silent",
    "a chosen inline result",
    {
        "chosen_inline_result": {
            "result_id": "1",
            "from": ANNA,
            "query": "кьянти",
            "inline_message_id": "AgAAAEkDAQBvdXNlcg",
        }
    },
)
add(
    "shipping_query",
    "silent",
    "a shipping query",
    {
        "shipping_query": {
            "id": "sq1",
            "from": ANNA,
            "invoice_payload": "order-1",
            "shipping_address": {
                "country_code": "RU",
                "state": "",
                "city": "Москва",
                "street_line1": "Тверская, 1",
                "street_line2": "",
                "post_code": "125009",
            },
        }
    },
)
add(
    "pre_checkout_query",
    "silent",
    "a pre-checkout query",
    {
        "pre_checkout_query": {
            "id": "pcq1",
            "from": ANNA,
            "currency": "XTR",
            "total_amount": 50,
            "invoice_payload": "gift",
        }
    },
)
add(
    "purchased_paid_media",
    "silent",
    "paid media bought",
    {"purchased_paid_media": {"from": ANNA, "paid_media_payload": "wine-photo"}},
)
add(
    "poll_state",
    "silent",
    "a poll's state",
    {
        "poll": {
            "id": "5368301234567890",
            "question": "Красное или белое?",
            "options": [{"text": "Красное", "voter_count": 3}, {"text": "Белое", "voter_count": 1}],
            "total_voter_count": 4,
            "is_closed": True,
            "is_anonymous": True,
            "type": "regular",
            "allows_multiple_answers": False,
        }
    },
)
add(
    "poll_answer",
    "silent",
    "a poll answer",
    {"poll_answer": {"poll_id": "5368301234567890", "user": ANNA, "option_ids": [0]}},
)
add(
    "chat_join_request",
    "silent",
    "a join request",
    {"chat_join_request": {"chat": SUPER, "from": IVAN, "user_chat_id": IVAN["id"], "date": DATE, "bio": "люблю вино"}},
)
add(
    "chat_boost",
    "silent",
    "a chat boost",
    {
        "chat_boost": {
            "chat": CHANNEL,
            "boost": {
                "boost_id": "b1",
                "add_date": DATE,
                "expiration_date": DATE + 86400 * 30,
                "source": {"source": "premium", "user": ANNA},
            },
        }
    },
)
add(
    "removed_chat_boost",
    "silent",
    "a boost removed",
    {
        "removed_chat_boost": {
            "chat": CHANNEL,
            "boost_id": "b1",
            "remove_date": DATE,
            "source": {"source": "premium", "user": ANNA},
        }
    },
)

# ---------------------------------------------------------------- edits and albums
add(
    "edited_private_new_message",
    "reply",
    "an edit of a message the bot never saw: answered once",
    {"edited_message": msg(PRIVATE, text="что такое танины?", edit_date=DATE + 30)},
)
add(
    "edited_group_not_addressed",
    "silent",
    "an edit of group chatter",
    {"edited_message": msg(SUPER, text="кто идёт?", edit_date=DATE + 30)},
)
text = "@sommelier_test_bot а к рыбе?"
add(
    "edited_group_now_addressed",
    "reply",
    "an edit that now mentions the bot",
    {"edited_message": msg(SUPER, text=text, entities=[mention_at(text, "")], edit_date=DATE + 30)},
)
add(
    "edited_caption",
    "silent",
    "an edited caption of a group photo",
    {"edited_message": msg(SUPER, photo=PHOTO, caption="вчера, исправлено", edit_date=DATE + 10)},
)
original = msg(PRIVATE, text="красное к стейку")
add("edit_pair_original", "reply", "a message ...", {"message": original})
add(
    "edit_pair_edit",
    "silent",
    "... and its edit after the answer: no new turn",
    {"edited_message": {**original, "text": "красное к стейку до 2000", "edit_date": DATE + 90}},
)
for i in range(3):
    add(
        f"album_photo_{i + 1}",
        "reply" if i == 0 else "silent",
        "an album of three photos: one reply",
        {
            "message": msg(
                PRIVATE,
                photo=PHOTO,
                media_group_id="13712345678901234",
                **({"caption": "что из этого взять?"} if i == 0 else {}),
            )
        },
    )
for i in range(2):
    add(
        f"album_document_{i + 1}",
        "reply" if i == 0 else "silent",
        "an album of two documents: one reply",
        {
            "message": msg(
                PRIVATE,
                document={
                    "file_id": f"BQACAgIAAxkBAAIBf2{i}",
                    "file_unique_id": f"AgADf{i}",
                    "file_name": f"чек{i}.pdf",
                },
                media_group_id="13712345678905678",
            )
        },
    )


# ---------------------------------------------------------------- callbacks
def callback(message: dict | None = None, data: str | None = "fb:1:12345", **extra) -> dict:
    body = {"id": f"4382{next_message()}", "from": ANNA, "chat_instance": "-5012345678901234567"}
    if message is not None:
        body["message"] = message
    if data is not None:
        body["data"] = data
    body.update(extra)
    return {"callback_query": body}


answer_message = {
    **bot_message(PRIVATE),
    "reply_markup": {"inline_keyboard": [[{"text": "👍", "callback_data": "fb:1:12345"}]]},
}
add("callback_feedback_up", "callback", "👍 under an answer", callback(answer_message, "fb:1:12345"))
add("callback_feedback_down", "callback", "👎 under an answer", callback(answer_message, "fb:-1:12345"))
add("callback_feedback_start", "callback", "👍 under the /start picks", callback(answer_message, "fb:1:start"))
add(
    "callback_more_unknown_answer",
    "callback",
    "«Ещё варианты» of an answer the chat no longer has",
    callback(answer_message, "more:12345"),
)
add("callback_unknown_data", "callback", "data this bot never made", callback(answer_message, "buy:42"))
add("callback_no_data", "callback", "a game button (no data)", callback(answer_message, None, game_short_name="guess"))
add(
    "callback_inaccessible",
    "callback",
    "a button on an inaccessible message (date 0)",
    callback({"chat": PRIVATE, "message_id": 17, "date": 0}, "fb:1:12345"),
)
add(
    "callback_inaccessible_more",
    "callback",
    "«Ещё варианты» on an inaccessible message",
    callback({"chat": PRIVATE, "message_id": 18, "date": 0}, "more:12345"),
)
add(
    "callback_inline_message",
    "callback",
    "a button under an inline message",
    callback(None, "more:12345", inline_message_id="AgAAAEkDAQBvdXNlcg"),
)
add(
    "callback_inline_feedback",
    "callback",
    "👍 under an inline message",
    callback(None, "fb:1:12345", inline_message_id="AgAAAEkDAQBvdXNlcm"),
)
add(
    "callback_group",
    "callback",
    "👍 in a group",
    callback({**bot_message(SUPER), "reply_markup": answer_message["reply_markup"]}, "fb:1:12345"),
)
add(
    "callback_forum_topic",
    "callback",
    "👍 in a forum topic",
    callback({**bot_message(FORUM), "message_thread_id": TOPIC, "is_topic_message": True}, "fb:-1:12345"),
)
add(
    "callback_photo_message",
    "callback",
    "a button under a photo",
    callback(
        {"message_id": 903, "from": BOT, "chat": PRIVATE, "date": DATE, "photo": PHOTO, "caption": "Кьянти"},
        "fb:1:12345",
    ),
)
add("callback_long_data", "callback", "64-byte data", callback(answer_message, "fb:-1:" + "9" * 58))
add(
    "callback_from_other_user_in_group",
    "callback",
    "another member presses",
    {
        "callback_query": {
            "id": "4382999",
            "from": IVAN,
            "chat_instance": "-1",
            "message": bot_message(SUPER),
            "data": "fb:-1:12345",
        }
    },
)


# ---------------------------------------------------------------- member updates
def member(
    chat: dict, old: str, new: str, who: dict = BOT, by: dict = ANNA, key: str = "my_chat_member", **extra
) -> dict:
    new_member = {"status": new, "user": who}
    if new == "kicked":
        new_member["until_date"] = 0
    if new == "administrator":
        new_member.update(
            can_be_edited=False,
            can_manage_chat=True,
            can_delete_messages=True,
            can_manage_video_chats=False,
            can_restrict_members=False,
            can_promote_members=False,
            can_change_info=False,
            can_invite_users=True,
            can_post_stories=False,
            can_edit_stories=False,
            can_delete_stories=False,
            is_anonymous=False,
        )
    if new == "restricted":
        new_member.update(is_member=True, can_send_messages=False, until_date=0)
    return {
        key: {
            "chat": chat,
            "from": by,
            "date": DATE,
            "old_chat_member": {"status": old, "user": who},
            "new_chat_member": new_member,
            **extra,
        }
    }


add("member_private_block", "silent", "the user blocks the bot", member(PRIVATE, "member", "kicked"))
add("member_private_unblock", "silent", "the user unblocks the bot", member(PRIVATE, "kicked", "member"))
add("member_group_added", "silent", "the bot is added to a group", member(GROUP, "left", "member"))
add("member_group_removed", "silent", "the bot is removed from a group", member(GROUP, "member", "left"))
add("member_supergroup_promoted", "silent", "the bot is made an admin", member(SUPER, "member", "administrator"))
add("member_supergroup_restricted", "silent", "the bot is restricted", member(SUPER, "member", "restricted"))
add(
    "member_supergroup_kicked",
    "silent",
    "the bot is banned from a supergroup",
    member(SUPER, "administrator", "kicked"),
)
add(
    "member_channel_added", "silent", "the bot is added to a channel as admin", member(CHANNEL, "left", "administrator")
)
add(
    "member_via_invite_link",
    "silent",
    "the bot joins through an invite link",
    member(
        SUPER,
        "left",
        "member",
        invite_link={
            "invite_link": "https://t.me/+AbC",
            "creator": ANNA,
            "creates_join_request": False,
            "is_primary": True,
            "is_revoked": False,
        },
    ),
)
add(
    "chat_member_joined",
    "silent",
    "someone else joins (chat_member)",
    member(SUPER, "left", "member", who=IVAN, by=IVAN, key="chat_member"),
)
add(
    "chat_member_left",
    "silent",
    "someone else leaves (chat_member)",
    member(SUPER, "member", "left", who=IVAN, by=IVAN, key="chat_member"),
)
add(
    "chat_member_promoted",
    "silent",
    "someone else is promoted (chat_member)",
    member(SUPER, "member", "administrator", who=IVAN, key="chat_member"),
)


def main() -> None:
    for old in HERE.glob("*.json"):
        old.unlink()
    for name, _, body in corpus:
        (HERE / f"{name}.json").write_text(json.dumps(body, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(corpus)} updates written to {HERE}")


if __name__ == "__main__":
    main()
