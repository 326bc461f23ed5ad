"""The Bot API's objects, one set for what arrives (updates) and what comes back (the client's answers).

Only the fields the bot uses, strictly typed; unknown fields are kept (``model_extra``), since Telegram
adds new ones in every Bot API version and a message's service fields are told apart by them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_TEXT = 4096


class _BotApiObject(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, populate_by_name=True)


class User(_BotApiObject):
    id: int
    is_bot: bool = False
    first_name: str = ""
    last_name: str | None = None
    username: str | None = None
    language_code: str | None = None


class Chat(_BotApiObject):
    id: int
    type: str
    title: str | None = None
    username: str | None = None
    first_name: str | None = None
    is_forum: bool | None = None
    is_direct_messages: bool | None = None


class MessageEntity(_BotApiObject):
    type: str
    offset: int
    length: int


class PhotoSize(_BotApiObject):
    file_id: str
    file_unique_id: str = ""
    width: int = 0
    height: int = 0
    file_size: int | None = None


class DirectMessagesTopic(_BotApiObject):
    topic_id: int
    user: User | None = None


class Message(_BotApiObject):
    message_id: int
    date: int
    chat: Chat
    from_user: User | None = Field(default=None, alias="from")
    text: str | None = Field(default=None, max_length=MAX_TEXT * 2)
    caption: str | None = None
    entities: list[MessageEntity] = Field(default_factory=list)
    caption_entities: list[MessageEntity] = Field(default_factory=list)
    photo: list[PhotoSize] | None = None
    reply_markup: dict[str, Any] | None = None
    reply_to_message: dict[str, Any] | None = None
    message_thread_id: int | None = None
    is_topic_message: bool | None = None
    sender_chat: Chat | None = None
    is_automatic_forward: bool | None = None
    media_group_id: str | None = None
    business_connection_id: str | None = None
    sender_business_bot: User | None = None
    direct_messages_topic: DirectMessagesTopic | None = None
    voice: dict[str, Any] | None = None
    video_note: dict[str, Any] | None = None
    checklist: dict[str, Any] | None = None  # read by updates.checklist_text: a bad one is no request, no failure

    @property
    def largest_file_id(self) -> str | None:
        """The file_id of the biggest photo size (the one to cache and resend)."""
        if not self.photo:
            return None
        best = max(self.photo, key=lambda s: (s.width * s.height, s.file_size or 0))
        return best.file_id


class CallbackQuery(_BotApiObject):
    id: str
    from_user: User = Field(alias="from")
    message: dict[str, Any] | None = None
    inline_message_id: str | None = None
    data: str | None = Field(default=None, max_length=64)
    chat_instance: str | None = None


class ChatMemberStatus(_BotApiObject):
    status: str
    user: User


class ChatMemberUpdated(_BotApiObject):
    chat: Chat
    from_user: User = Field(alias="from")
    date: int
    old_chat_member: ChatMemberStatus
    new_chat_member: ChatMemberStatus


class BusinessConnection(_BotApiObject):
    """A Business account connected to the bot: whose, since when, and what the bot may do there."""

    id: str
    user: User
    user_chat_id: int
    date: int
    rights: dict[str, Any] | None = None
    is_enabled: bool = False
    can_reply: bool | None = None  # before Bot API 9.0 (still sent by the reference server)

    @property
    def may_reply(self) -> bool:
        """Enabled, and allowed to answer the account's chats (``rights.can_reply``; before 9.0, ``can_reply``)."""
        if not self.is_enabled:
            return False
        if self.rights is not None:
            return self.rights.get("can_reply") is True
        return self.can_reply is True


class Update(_BotApiObject):
    update_id: int = Field(ge=0)
    message: Message | None = None
    edited_message: Message | None = None
    business_message: Message | None = None
    business_connection: BusinessConnection | None = None
    callback_query: CallbackQuery | None = None
    my_chat_member: ChatMemberUpdated | None = None


# The client's answers to getFile and getWebhookInfo: built on first use, so a function that never asks
# (the webhook's ingress) does not pay for them at its cold start.
class File(_BotApiObject):
    model_config = ConfigDict(defer_build=True)

    file_id: str
    file_unique_id: str = ""
    file_size: int | None = None
    file_path: str | None = None


class WebhookInfo(_BotApiObject):
    model_config = ConfigDict(defer_build=True)

    url: str = ""
    has_custom_certificate: bool = False
    pending_update_count: int = 0
    ip_address: str | None = None
    last_error_date: int | None = None
    last_error_message: str | None = None
    max_connections: int | None = None
    allowed_updates: list[str] | None = None
