"""A Telegram update read into what the bot acts on (`Routed`): parsing, the kind of update, who is addressed."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

from pydantic import ValidationError

from sommelier.settings import TelegramSettings
from sommelier.telegram.models import BusinessConnection, CallbackQuery, Message, MessageEntity, Update, User
from sommelier.telegram.place import Place

logger = logging.getLogger(__name__)


class UpdateError(ValueError):
    """The body is not a usable Telegram Update."""


def parse_update(data: Any) -> Update:
    if not isinstance(data, dict):
        raise UpdateError("an Update must be a JSON object")
    try:
        return Update.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UpdateError(f"invalid Update at {where}: {first['msg']}") from None


Kind = Literal["text", "command", "voice", "photo", "non_text", "callback", "member", "business", "ignored"]

# What a customer may send that the bot reads: a message is a turn when it carries one of these fields. A
# message with none of them is a service message (a join, a pin, a gift, a topic, a payment...) or a kind
# added to the Bot API after this list: silence. Listing what is understood, not what is not, keeps the
# next Bot API version's service messages silent instead of answered.
TEXT_FIELDS = frozenset({"text", "caption", "checklist"})  # a checklist's title and tasks are read as its text
MEDIA_FIELDS = frozenset(
    {
        "photo",
        "live_photo",
        "video",
        "animation",
        "document",
        "audio",
        "voice",
        "video_note",
        "sticker",
        "contact",
        "location",
        "venue",
        "dice",
        "poll",
        "story",
        "game",
        "paid_media",
    }
)
SPOKEN_FIELDS = ("voice", "video_note")  # transcribed: the customer asks aloud
# Content that is not the sommelier's to take up: a suggested post in a channel's direct messages is for
# the channel's admins.
NOT_FOR_THE_BOT = frozenset({"suggested_post_info"})


class Routed(NamedTuple):
    kind: Kind
    update_id: int
    chat_id: int | None = None
    user: User | None = None
    text: str = ""
    command: str | None = None
    callback_id: str | None = None
    callback_data: str | None = None
    message_id: int | None = None
    chat_type: str | None = None
    member_status: str | None = None
    edited: bool = False
    addressed: bool = True  # in groups: was the bot mentioned, replied to, or commanded?
    thread_id: int | None = None  # the forum topic to answer in (message_thread_id of a topic message)
    media_group_id: str | None = None  # an album: one reply for all its messages
    inline: bool = False  # a callback from an inline message (no chat to answer in)
    inaccessible: bool = False  # a callback whose message is too old to see or edit (date 0)
    business_connection_id: str | None = None  # a chat of a connected Business account
    direct_messages_topic_id: int | None = None  # a channel's direct-messages chat: the customer's topic
    reply_to: int | None = None  # the message to answer under (a comment under a channel post)
    media: str | None = None  # "voice", "video_note" or "photo": what the bot may read beyond the text
    file_id: str | None = None  # that media's file (the largest photo size)
    file_size: int | None = None
    duration: int | None = None  # seconds of a voice or video note
    business: BusinessConnection | None = None  # a business_connection update: the connection as it is now

    @property
    def chat(self) -> int:
        """The chat to answer in; only routed updates (a route was found) are answered, and they have one."""
        if self.chat_id is None:
            raise UpdateError("this update has no chat to answer in")
        return self.chat_id

    @property
    def place(self) -> Place:
        """Where the answer goes, with everything each send there must carry."""
        return Place(
            chat_id=self.chat,
            thread_id=self.thread_id,
            business_connection_id=self.business_connection_id,
            direct_messages_topic_id=self.direct_messages_topic_id,
            reply_to=self.reply_to,
        )


def topic_of(message: dict[str, Any] | Message | None) -> int | None:
    """The forum topic a message belongs to; None outside topics (General and plain chats take no thread id)."""
    if isinstance(message, Message):
        thread, in_topic = message.message_thread_id, message.is_topic_message
    elif isinstance(message, dict):
        thread, in_topic = message.get("message_thread_id"), message.get("is_topic_message")
    else:
        return None
    if in_topic is True and isinstance(thread, int) and not isinstance(thread, bool):
        return thread
    return None


def entity_text(text: str, entity: MessageEntity) -> str:
    """The text an entity covers. Telegram counts offsets in UTF-16 code units (an emoji before it counts 2)."""
    units = text.encode("utf-16-le")
    return units[2 * entity.offset : 2 * (entity.offset + entity.length)].decode("utf-16-le", errors="ignore")


def _same_bot(name: str | None, bot_username: str | None) -> bool:
    # Unknown username (getMe failed): match loosely, rather than drop every group message.
    return bot_username is None or (name or "").lstrip("@").lower() == bot_username.lower()


def _addressed(message: Message, bot_username: str | None) -> bool:
    """Groups: answer only a command, a reply to the bot, or a mention of it (in the text or a caption)."""
    if message.chat.type not in ("group", "supergroup") or message.chat.is_direct_messages:
        return True  # a private chat, or a channel's direct messages: every message is to the shop
    text = message.text or ""
    if text.startswith("/"):
        target = text.split()[0].partition("@")[2]
        return not target or _same_bot(target, bot_username)
    replied = message.reply_to_message or {}
    replied_from = replied.get("from") or {}
    if _replies_to_bot(message, replied) and _same_bot(replied_from.get("username"), bot_username):
        return True
    if _comment_on_channel_post(message):
        return True
    for body, entities in ((text, message.entities), (message.caption or "", message.caption_entities)):
        for entity in entities:
            if entity.type == "mention" and _same_bot(entity_text(body, entity), bot_username):
                return True
    return False


def _replies_to_bot(message: Message, replied: dict[str, Any]) -> bool:
    """A reply to one of the bot's messages. In a forum topic every message without an explicit reply still
    carries the topic's creation message as ``reply_to_message``: that is where it was written, not whom
    it answers (even in a topic the bot opened)."""
    if not (replied.get("from") or {}).get("is_bot"):
        return False
    if "forum_topic_created" in replied:
        return False
    return not (message.is_topic_message and replied.get("message_id") == message.message_thread_id)


def _comment_on_channel_post(message: Message) -> bool:
    """A comment right under the shop channel's post, in its discussion group: a question to the shop."""
    replied = message.reply_to_message or {}
    return message.chat.type == "supergroup" and replied.get("is_automatic_forward") is True


def _comment_thread(message: Message) -> int | None:
    """The comment thread (the channel post's copy in the discussion group) a message was written in. The answer
    goes under the comment by ``reply_parameters``, never with ``message_thread_id``: the Bot API takes that for
    the topics of a forum supergroup and of a bot's private chat only, and this group is no forum."""
    thread = message.message_thread_id
    if message.chat.type != "supergroup" or message.is_topic_message or message.chat.is_forum:
        return None
    return thread if isinstance(thread, int) else None


def needs_bot_username(update: Update) -> bool:
    """Only group messages are routed by the bot's username (private chats are always addressed)."""
    message = update.message or update.edited_message or update.business_message
    return message is not None and message.chat.type in ("group", "supergroup")


def _strip_mention(text: str, bot_username: str | None) -> str:
    if bot_username:
        text = re.sub(rf"@{re.escape(bot_username)}\b", " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())


def checklist_text(checklist: dict[str, Any]) -> str:
    """A checklist (Bot API 9.1: a title and tasks) as the customer's request: «title: task, task»; "" when it
    carries no text. Its ticked and added tasks come as service messages, which stay silent."""
    title = checklist.get("title")
    tasks = checklist.get("tasks")
    said = (
        [t["text"].strip() for t in tasks if isinstance(t, dict) and isinstance(t.get("text"), str)]
        if isinstance(tasks, list)
        else []
    )
    head = title.strip().rstrip(":").strip() if isinstance(title, str) else ""
    body = ", ".join(t for t in said if t)
    return f"{head}: {body}" if head and body else (head or body)


def _fields(message: Message) -> set[str]:
    """The fields the message carries, declared and not."""
    declared = {name for name in type(message).model_fields if getattr(message, name) not in (None, [], "")}
    return declared | set(message.model_extra or {})


def _media(message: Message) -> tuple[str | None, str | None, int | None, int | None]:
    """(kind, file_id, size, duration) of the media the bot may read: a voice, a video note or a photo."""
    for kind in SPOKEN_FIELDS:
        body = getattr(message, kind)
        if isinstance(body, dict) and isinstance(body.get("file_id"), str):
            size, duration = body.get("file_size"), body.get("duration")
            return (
                kind,
                body["file_id"],
                size if isinstance(size, int) and not isinstance(size, bool) else None,
                duration if isinstance(duration, int) and not isinstance(duration, bool) else None,
            )
    if message.photo:
        best = max(message.photo, key=lambda s: (s.width * s.height, s.file_size or 0))
        return "photo", best.file_id, best.file_size, None
    return None, None, None, None


def _speaker(message: Message) -> User | None:
    """Who wrote: the user, or for an anonymous group admin (or a channel speaking in a group) that chat."""
    sender_chat = message.sender_chat
    if sender_chat is not None:
        return User(id=sender_chat.id, is_bot=False, first_name=sender_chat.title or "", username=sender_chat.username)
    return message.from_user


def _callback(update: Update, query: CallbackQuery) -> Routed:
    message = query.message or {}
    chat = message.get("chat") or {}
    chat_id = chat.get("id") if isinstance(chat.get("id"), int) else query.from_user.id
    return Routed(
        kind="callback",
        update_id=update.update_id,
        chat_id=chat_id,
        user=query.from_user,
        callback_id=query.id,
        callback_data=query.data or "",
        message_id=message.get("message_id"),
        chat_type=chat.get("type"),
        thread_id=topic_of(message),
        inline=query.message is None and query.inline_message_id is not None,
        # InaccessibleMessage: an old message the bot can no longer see; its date is always 0.
        inaccessible=query.message is not None and message.get("date") == 0,
    )


def route(update: Update, bot_username: str | None = None) -> Routed:
    if update.callback_query is not None:
        return _callback(update, update.callback_query)
    if update.my_chat_member is not None:
        member = update.my_chat_member
        return Routed(
            kind="member",
            update_id=update.update_id,
            chat_id=member.chat.id,
            user=member.from_user,
            member_status=member.new_chat_member.status,
            chat_type=member.chat.type,
        )
    if update.business_connection is not None:
        connection = update.business_connection
        return Routed(
            kind="business",
            update_id=update.update_id,
            chat_id=connection.user_chat_id,
            user=connection.user,
            chat_type="private",
            business=connection,
        )
    if update.business_message is not None:
        return _business(update, update.business_message, bot_username)
    message = update.message or update.edited_message
    if message is None:  # channel posts, edited business messages, reactions, polls, payments...
        return Routed(kind="ignored", update_id=update.update_id)
    return _message(update, message, bot_username, edited=update.message is None)


def _business(update: Update, message: Message, bot_username: str | None) -> Routed:
    """A message in a chat of a connected Business account: only the customer's own are the bot's to answer
    (not the owner's replies, nor what the bot itself sent on the account's behalf)."""
    routed = _message(update, message, bot_username, edited=False)
    speaker = message.from_user
    customer = speaker is not None and speaker.id == message.chat.id and message.sender_business_bot is None
    if message.chat.type != "private" or not customer or message.business_connection_id is None:
        return routed._replace(kind="ignored")
    return routed


def _message(update: Update, message: Message, bot_username: str | None, *, edited: bool) -> Routed:
    media, file_id, file_size, duration = _media(message)
    dm_topic = message.direct_messages_topic
    comment_thread = _comment_thread(message)
    ignored = Routed(
        kind="ignored",
        update_id=update.update_id,
        chat_id=message.chat.id,
        user=_speaker(message),
        message_id=message.message_id,
        chat_type=message.chat.type,
        edited=edited,
        thread_id=topic_of(message),
        media_group_id=message.media_group_id,
        business_connection_id=message.business_connection_id,
        direct_messages_topic_id=dm_topic.topic_id if dm_topic is not None else None,
        reply_to=message.message_id if comment_thread is not None else None,
        media=media,
        file_id=file_id,
        file_size=file_size,
        duration=duration,
    )
    fields = _fields(message)
    if message.is_automatic_forward or not fields & (MEDIA_FIELDS | TEXT_FIELDS) or fields & NOT_FOR_THE_BOT:
        return ignored  # a channel post mirrored into its group; a pin, a join, a gift, a newer service kind...
    if message.sender_chat is None and message.from_user is not None and message.from_user.is_bot:
        return ignored
    if not _addressed(message, bot_username):
        return ignored._replace(addressed=False)
    text = (message.text if message.text is not None else message.caption or "").strip()
    if not text and message.checklist is not None:  # «к новогоднему столу: игристое, белое к рыбе»
        text = checklist_text(message.checklist)
    if media in SPOKEN_FIELDS:
        return ignored._replace(kind="voice", text=_strip_mention(text, bot_username))
    if not text:
        # A photo with no caption may be a label to read; a sticker, a location... are no request.
        return ignored._replace(kind="photo" if media == "photo" else "non_text")
    if message.text is not None and text.startswith("/"):
        command = text.split()[0].partition("@")[0].lower()
        return ignored._replace(kind="command", command=command, text=text)
    return ignored._replace(kind="text", text=_strip_mention(text, bot_username))


# ---------------------------------------------------------------------------
# The bot's own @username, known wherever an update is routed (the webhook edge and the consumer).
#
# "Addressed to the bot" in a group (`/start@bot`, `@bot …`) depends on it, and both sides must decide
# it alike: TELEGRAM_BOT_USERNAME when set, else one `getMe` (``lookup``, given where there is a Bot API
# client: `telegram.identity`), cached. A failed `getMe` is retried at
# most once a minute; meanwhile routing matches group commands and mentions loosely (None).
# ---------------------------------------------------------------------------
RETRY_AFTER_FAILURE_S = 60.0


class NoToken(LookupError):
    """No bot token here (the deployed webhook never has one): TELEGRAM_BOT_USERNAME is the way."""


def _no_lookup() -> str | None:
    raise NoToken("no way to ask getMe here; set TELEGRAM_BOT_USERNAME")


class BotUsername:
    def __init__(
        self,
        settings: TelegramSettings,
        lookup: Callable[[], str | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._configured = settings.bot_username
        self._lookup = lookup or _no_lookup
        self._clock = clock
        self._lock = threading.Lock()
        self._known: str | None = None
        self._failed_at: float | None = None

    def get(self) -> str | None:
        if self._configured:
            return self._configured
        with self._lock:
            if self._known is not None:
                return self._known
            if self._failed_at is not None and self._clock() - self._failed_at < RETRY_AFTER_FAILURE_S:
                return None
            try:
                self._known = (self._lookup() or "").lstrip("@") or None
            except Exception as exc:  # no token, Telegram down: route loosely for now
                level = logging.INFO if isinstance(exc, NoToken) else logging.WARNING
                logger.log(level, "bot username unknown (%s); group commands and mentions are matched loosely", exc)
                self._failed_at = self._clock()
                return None
            return self._known
