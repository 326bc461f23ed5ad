"""Connected Telegram Business accounts: may the bot answer in a chat of this connection?

A shop owner connects the bot to their Business account (docs/shop.md); Telegram then sends the
customers' messages as ``business_message`` with the connection's id, and every answer must carry that
id. Whether the bot may answer comes from the connection: its owner is one of the shop's own accounts
(BUSINESS_OWNER_IDS; anyone else's account may connect any bot, and must not get one that speaks in the
shop's name on the shop's LLM key), it is enabled, and ``rights.can_reply``. The
``business_connection`` update says so when it changes; a process that has not seen it (another Lambda
instance, a restart) asks ``getBusinessConnection`` once and keeps the answer for a while.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from typing import Literal

from sommelier.telegram.client import BadRequest, TelegramClient
from sommelier.telegram.models import BusinessConnection

logger = logging.getLogger(__name__)

# What someone else's Business account is told, once, in its owner's private chat with the bot.
STRANGER_REFUSAL = (
    "Здравствуйте! Этот бот — сомелье нашего магазина, и в чатах Telegram Business он отвечает только от имени "
    "самого магазина. В чатах вашего аккаунта он отвечать не будет: отключите его в настройках "
    "(Настройки → Telegram для бизнеса → Чат-боты). А подобрать вино для себя можно прямо здесь, в этом чате 🍷"
)


def stranger_report(connection: BusinessConnection) -> str:
    """What the shop's admin chat is told about a refused connection (the account's id, to add it if it is
    the shop's own)."""
    return (
        "⚠️ Бота подключили к чужому аккаунту Telegram Business "
        f"(пользователь {connection.user.id}). Там бот не отвечает и ключ LLM не тратит.\n"
        "Если это аккаунт магазина, добавьте этот номер в настройку BUSINESS_OWNER_IDS "
        "(параметр BusinessOwnerIds при развёртывании)."
    )


KNOWN_FOR_SECONDS = 600.0  # a connection looked up is trusted this long (its updates may reach another process)

# "serve": the shop's own account, enabled, may reply; "silent": gone, off or without the right to reply;
# "stranger": someone else's account (refused, whatever its rights).
Verdict = Literal["serve", "silent", "stranger"]


class BusinessConnections:
    def __init__(
        self, client: TelegramClient, clock: Callable[[], float] = time.monotonic, owners: Collection[int] = ()
    ):
        self._client = client
        self._clock = clock
        self.owners = frozenset(owners)
        self._known: dict[str, tuple[BusinessConnection | None, float]] = {}
        self._lock = threading.Lock()

    def remember(self, connection: BusinessConnection) -> None:
        """A business_connection update: the connection as it is now."""
        with self._lock:
            self._known[connection.id] = (connection, self._clock())
        logger.info(
            "business connection %s of user %s: enabled=%s, may reply=%s",
            connection.id,
            connection.user.id,
            connection.is_enabled,
            connection.may_reply,
        )

    def get(self, connection_id: str) -> BusinessConnection | None:
        """The connection (None: Telegram does not know it). Raises TelegramError when Telegram can't say now."""
        now = self._clock()
        with self._lock:
            known = self._known.get(connection_id)
        if known is not None and now - known[1] < KNOWN_FOR_SECONDS:
            return known[0]
        try:
            connection: BusinessConnection | None = self._client.get_business_connection(connection_id)
        except BadRequest as exc:  # "business connection not found": gone; other errors retry the update
            logger.warning("business connection %s not known to Telegram: %s", connection_id, exc)
            connection = None
        with self._lock:
            self._known[connection_id] = (connection, now)
        return connection

    def is_the_shops(self, connection: BusinessConnection) -> bool:
        """Is this connection one of the shop's own Business accounts (BUSINESS_OWNER_IDS)?"""
        return connection.user.id in self.owners

    def verdict(self, connection_id: str) -> Verdict:
        connection = self.get(connection_id)
        if connection is None:
            return "silent"
        if not self.is_the_shops(connection):
            return "stranger"
        return "serve" if connection.may_reply else "silent"

    def may_reply(self, connection_id: str) -> bool:
        return self.verdict(connection_id) == "serve"
