"""The bot's own @username, known wherever an update is routed (the webhook edge and the consumer).

"Addressed to the bot" in a group (`/start@bot`, `@bot …`) depends on it, and both sides must decide
it alike: TELEGRAM_BOT_USERNAME when set, else one `getMe`, cached. A failed `getMe` is retried at
most once a minute; meanwhile routing matches group commands and mentions loosely (None).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sommelier.config import env

logger = logging.getLogger(__name__)

RETRY_AFTER_FAILURE_S = 60.0


class NoToken(LookupError):
    """No bot token here (the deployed webhook never has one): TELEGRAM_BOT_USERNAME is the way."""


def _get_me_username() -> str | None:
    from sommelier.config import load_settings
    from sommelier.telegram.client import TelegramClient  # httpx2: only when the name is not configured

    settings = load_settings()
    if not settings.telegram_bot_token:
        raise NoToken("no bot token to ask getMe with; set TELEGRAM_BOT_USERNAME")
    with TelegramClient.from_settings(settings) as client:
        return client.get_me().username


class BotUsername:
    def __init__(
        self,
        lookup: Callable[[], str | None] = _get_me_username,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._lookup = lookup
        self._clock = clock
        self._lock = threading.Lock()
        self._known: str | None = None
        self._failed_at: float | None = None

    def get(self) -> str | None:
        configured = env("TELEGRAM_BOT_USERNAME")
        if configured:
            return configured.lstrip("@")
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
