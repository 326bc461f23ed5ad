"""Connected Telegram Business accounts: may the bot answer in a chat of this connection?

A shop owner connects the bot to their Business account (docs/shop.md); Telegram then sends the
customers' messages as ``business_message`` with the connection's id, and every answer must carry that
id. Whether the bot may answer comes from the connection: enabled, and ``rights.can_reply``. The
``business_connection`` update says so when it changes; a process that has not seen it (another Lambda
instance, a restart) asks ``getBusinessConnection`` once and keeps the answer for a while.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sommelier.telegram.client import BadRequest, TelegramClient
from sommelier.telegram.models import BusinessConnection

logger = logging.getLogger(__name__)

KNOWN_FOR_SECONDS = 600.0  # a connection looked up is trusted this long (its updates may reach another process)


class BusinessConnections:
    def __init__(self, client: TelegramClient, clock: Callable[[], float] = time.monotonic):
        self._client = client
        self._clock = clock
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

    def may_reply(self, connection_id: str) -> bool:
        connection = self.get(connection_id)
        return connection is not None and connection.may_reply
