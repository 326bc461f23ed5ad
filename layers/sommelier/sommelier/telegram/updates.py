"""A Telegram update read into what the bot acts on (`Routed`): parsing, the kind of update, who is addressed."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import ValidationError

from sommelier.settings import TelegramSettings
from sommelier.telegram.models import CallbackQuery, Message, MessageEntity, Update, User

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


Kind = Literal["text", "command", "non_text", "callback", "member", "ignored"]

# Message fields that make it a service message (someone joined, a pin, a timer, a topic, a payment...):
# never a turn. Telegram sends them with no text; a caption-less one would otherwise look "non-text".
SERVICE_FIELDS = frozenset(
    {
        "new_chat_members",
        "left_chat_member",
        "new_chat_title",
        "new_chat_photo",
        "delete_chat_photo",
        "group_chat_created",
        "supergroup_chat_created",
        "channel_chat_created",
        "message_auto_delete_timer_changed",
        "migrate_to_chat_id",
        "migrate_from_chat_id",
        "pinned_message",
        "successful_payment",
        "refunded_payment",
        "users_shared",
        "chat_shared",
        "connected_website",
        "write_access_allowed",
        "passport_data",
        "proximity_alert_triggered",
        "boost_added",
        "chat_background_set",
        "checklist_tasks_done",
        "checklist_tasks_added",
        "direct_message_price_changed",
        "forum_topic_created",
        "forum_topic_edited",
        "forum_topic_closed",
        "forum_topic_reopened",
        "general_forum_topic_hidden",
        "general_forum_topic_unhidden",
        "giveaway_created",
        "giveaway_winners",
        "giveaway_completed",
        "paid_message_price_changed",
        "video_chat_scheduled",
        "video_chat_started",
        "video_chat_ended",
        "video_chat_participants_invited",
        "web_app_data",
        "gift",
        "unique_gift",
    }
)


@dataclass(frozen=True)
class Routed:
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

    @property
    def chat(self) -> int:
        """The chat to answer in; only routed updates (a route was found) are answered, and they have one."""
        if self.chat_id is None:
            raise UpdateError("this update has no chat to answer in")
        return self.chat_id


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
    if message.chat.type not in ("group", "supergroup"):
        return True
    text = message.text or ""
    if text.startswith("/"):
        target = text.split()[0].partition("@")[2]
        return not target or _same_bot(target, bot_username)
    replied_from = (message.reply_to_message or {}).get("from") or {}
    if replied_from.get("is_bot") and _same_bot(replied_from.get("username"), bot_username):
        return True
    for body, entities in ((text, message.entities), (message.caption or "", message.caption_entities)):
        for entity in entities:
            if entity.type == "mention" and _same_bot(entity_text(body, entity), bot_username):
                return True
    return False


def needs_bot_username(update: Update) -> bool:
    """Only group messages are routed by the bot's username (private chats are always addressed)."""
    message = update.message or update.edited_message
    return message is not None and message.chat.type in ("group", "supergroup")


def _strip_mention(text: str, bot_username: str | None) -> str:
    if bot_username:
        text = re.sub(rf"@{re.escape(bot_username)}\b", " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())


def _is_service(message: Message) -> bool:
    return bool(SERVICE_FIELDS.intersection(message.model_extra or {}))


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
    message = update.message or update.edited_message
    if message is None:
        return Routed(kind="ignored", update_id=update.update_id)
    edited = update.message is None
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
    )
    if message.is_automatic_forward or _is_service(message):
        return ignored  # a channel post mirrored into its group; a pin, a join, a timer...
    if message.sender_chat is None and message.from_user is not None and message.from_user.is_bot:
        return ignored
    addressed = _addressed(message, bot_username)
    if not addressed:
        return replace(ignored, addressed=False)
    if message.text is None:
        # A photo, sticker or voice in a private chat, or one whose caption mentions the bot in a group.
        return replace(ignored, kind="non_text")
    text = message.text.strip()
    if text.startswith("/"):
        command = text.split()[0].partition("@")[0].lower()
        return replace(ignored, kind="command", command=command, text=text)
    return replace(ignored, kind="text", text=_strip_mention(text, bot_username))


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
