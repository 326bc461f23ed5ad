"""Where an answer goes in Telegram: the chat and everything a send there must carry.

A plain chat needs only its id. A forum topic needs ``message_thread_id`` (a comment thread takes none); a chat of a
connected Business account needs ``business_connection_id`` on every call (chat actions too); a channel's
direct-messages chat needs ``direct_messages_topic_id`` and takes no chat actions; a comment under a channel
post is answered as a reply to it. One value carries all of it, from the update to every send.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Place(NamedTuple):
    chat_id: int
    thread_id: int | None = None  # message_thread_id: a forum topic or a private topic (a comment thread: reply_to)
    business_connection_id: str | None = None
    direct_messages_topic_id: int | None = None
    reply_to: int | None = None  # the message answered under (a comment in a channel's discussion group)

    @property
    def takes_chat_actions(self) -> bool:
        """Channel direct-messages chats take no sendChatAction."""
        return self.direct_messages_topic_id is None

    def send_params(self) -> dict[str, Any]:
        """What sendMessage and sendPhoto carry besides chat_id (Nones are dropped by the client)."""
        params: dict[str, Any] = {
            "message_thread_id": self.thread_id,
            "business_connection_id": self.business_connection_id,
            "direct_messages_topic_id": self.direct_messages_topic_id,
        }
        if self.reply_to is not None:
            params["reply_parameters"] = {"message_id": self.reply_to, "allow_sending_without_reply": True}
        return params

    def action_params(self) -> dict[str, Any]:
        """What sendChatAction carries besides chat_id."""
        return {"message_thread_id": self.thread_id, "business_connection_id": self.business_connection_id}

    def moved_to(self, chat_id: int) -> Place:
        """The same place in the supergroup a basic group became (a basic group has no topics)."""
        return self._replace(chat_id=chat_id)
