"""The bot's own @username for a webhook entry point (the Lambda handler, `sommelier serve`, tests).

TELEGRAM_BOT_USERNAME when set; else, where there is a token (a local run), one `getMe`, whose Bot API
client loads only when it is asked. The deployed webhook has no token: it routes group commands loosely
until the username is configured. The edge itself never imports this module (an import contract): its
entry point hands it the result.
"""

from __future__ import annotations

from sommelier.settings import TelegramSettings
from sommelier.telegram.updates import BotUsername, NoToken


def webhook_bot_username(settings: TelegramSettings) -> BotUsername:
    if not settings.bot_token:
        return BotUsername(settings)
    return BotUsername(settings, lambda: get_me_username(settings))


def get_me_username(settings: TelegramSettings) -> str | None:
    """The bot's username by one getMe."""
    if not settings.bot_token:
        raise NoToken("no bot token to ask getMe with; set TELEGRAM_BOT_USERNAME")
    from sommelier.telegram.client import TelegramClient

    with TelegramClient.from_settings(settings) as client:
        return client.get_me().username
