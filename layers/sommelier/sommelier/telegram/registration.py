"""What the bot registers with Telegram: the update kinds it handles and its command menu.

One place for both, read by `sommelier webhook set`, `sommelier poll` and the set-webhook custom
resource on deploy. Standard library only: the custom resource imports it without the bot's stack.
A command added here must have a route (`telegram.router` or `shop.routes`);
a test checks that every one does.
"""

from __future__ import annotations

# Exactly the update kinds `telegram.updates.route` handles; Telegram sends nothing else.
ALLOWED_UPDATES: tuple[str, ...] = (
    "message",
    "edited_message",
    "callback_query",
    "my_chat_member",
    "business_connection",
    "business_message",
)

# The menu (setMyCommands), in Russian: command -> description (1-256 characters; a command is 1-32
# characters of a-z, 0-9 and _).
MENU: dict[str, str] = {
    "start": "Начать: приветствие и подборка по сезону",
    "help": "Как со мной говорить",
    "reset": "Забыть наш разговор и начать заново",
    "profile": "Что я помню о вашем вкусе",
    "privacy": "Что я храню о вас и сколько",
    "forget": "Удалить всё, что я о вас помню",
}


def menu_commands() -> list[dict[str, str]]:
    """MENU as setMyCommands' BotCommand list."""
    return [{"command": name, "description": description} for name, description in MENU.items()]
