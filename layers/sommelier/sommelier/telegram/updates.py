"""Telegram Update models (the fields the bot uses, strictly typed; unknown fields allowed) and routing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

MAX_TEXT = 4096

_Loose = ConfigDict(extra="allow", strict=True, populate_by_name=True)


class User(BaseModel):
    model_config = _Loose
    id: int
    is_bot: bool = False
    first_name: str = ""
    last_name: str | None = None
    username: str | None = None
    language_code: str | None = None


class Chat(BaseModel):
    model_config = _Loose
    id: int
    type: str
    title: str | None = None
    username: str | None = None
    first_name: str | None = None


class MessageEntity(BaseModel):
    model_config = _Loose
    type: str
    offset: int
    length: int


class Message(BaseModel):
    model_config = _Loose
    message_id: int
    date: int
    chat: Chat
    from_user: User | None = Field(default=None, alias="from")
    text: str | None = Field(default=None, max_length=MAX_TEXT * 2)
    caption: str | None = None
    entities: list[MessageEntity] = Field(default_factory=list)
    reply_to_message: dict[str, Any] | None = None
    message_thread_id: int | None = None
    is_topic_message: bool | None = None


class CallbackQuery(BaseModel):
    model_config = _Loose
    id: str
    from_user: User = Field(alias="from")
    message: dict[str, Any] | None = None
    data: str | None = Field(default=None, max_length=64)
    chat_instance: str | None = None


class ChatMemberStatus(BaseModel):
    model_config = _Loose
    status: str
    user: User


class ChatMemberUpdated(BaseModel):
    model_config = _Loose
    chat: Chat
    from_user: User = Field(alias="from")
    date: int
    old_chat_member: ChatMemberStatus
    new_chat_member: ChatMemberStatus


class Update(BaseModel):
    model_config = _Loose
    update_id: int = Field(ge=0)
    message: Message | None = None
    edited_message: Message | None = None
    callback_query: CallbackQuery | None = None
    my_chat_member: ChatMemberUpdated | None = None


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


def _addressed(message: Message, bot_username: str | None) -> bool:
    """Groups: answer only a command, a reply to the bot, or a mention of it."""
    if message.chat.type not in ("group", "supergroup"):
        return True
    text = message.text or ""
    if text.startswith("/"):
        target = text.split()[0].partition("@")[2]
        # Unknown username (getMe failed): match loosely, as mentions are, rather than drop every command.
        return not target or bot_username is None or target.lower() == bot_username.lower()
    replied_from = (message.reply_to_message or {}).get("from") or {}
    if replied_from.get("is_bot") and (
        bot_username is None or replied_from.get("username", "").lower() == bot_username.lower()
    ):
        return True
    for entity in message.entities:
        if entity.type == "mention":
            mention = text[entity.offset : entity.offset + entity.length]
            if bot_username is None or mention.lstrip("@").lower() == bot_username.lower():
                return True
    return False


def needs_bot_username(update: Update) -> bool:
    """Only group messages are routed by the bot's username (private chats are always addressed)."""
    message = update.message or update.edited_message
    return message is not None and message.chat.type in ("group", "supergroup")


def _strip_mention(text: str, bot_username: str | None) -> str:
    if bot_username:
        text = text.replace(f"@{bot_username}", " ")
    return " ".join(text.split())


def route(update: Update, bot_username: str | None = None) -> Routed:
    if update.callback_query is not None:
        query = update.callback_query
        chat = (query.message or {}).get("chat") or {}
        chat_id = chat.get("id") if isinstance(chat.get("id"), int) else query.from_user.id
        return Routed(
            kind="callback",
            update_id=update.update_id,
            chat_id=chat_id,
            user=query.from_user,
            callback_id=query.id,
            callback_data=query.data or "",
            message_id=(query.message or {}).get("message_id"),
            chat_type=chat.get("type"),
            thread_id=topic_of(query.message),
        )
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
    base = dict(
        update_id=update.update_id,
        chat_id=message.chat.id,
        user=message.from_user,
        message_id=message.message_id,
        chat_type=message.chat.type,
        edited=edited,
        thread_id=topic_of(message),
    )
    if message.from_user is not None and message.from_user.is_bot:
        return Routed(kind="ignored", **base)
    addressed = _addressed(message, bot_username)
    if message.text is None:
        # In groups, photos and stickers not addressed to the bot are none of its business.
        return Routed(kind="non_text" if message.chat.type == "private" else "ignored", **base)
    if not addressed:
        return Routed(kind="ignored", addressed=False, **base)
    text = message.text.strip()
    if text.startswith("/"):
        command = text.split()[0].partition("@")[0].lower()
        return Routed(kind="command", command=command, text=text, **base)
    return Routed(kind="text", text=_strip_mention(text, bot_username), **base)
