"""Deep links to a wine: ``https://t.me/<bot>?start=w_<sku or id>`` (the shelf QR codes point here).

Telegram passes the part after ``start=`` to the bot as ``/start <payload>``; a payload is 1-64
characters of A-Z, a-z, 0-9, _ and -.
"""

from __future__ import annotations

import re

WINE_PREFIX = "w_"
_PAYLOAD = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class DeepLinkError(ValueError):
    pass


def wine_payload(ref: str) -> str:
    """The /start payload for a wine's sku or id."""
    payload = f"{WINE_PREFIX}{ref.strip()}"
    if not ref.strip() or not _PAYLOAD.match(payload):
        raise DeepLinkError(
            f"{ref!r} can't be put in a Telegram link: use 1-62 letters, digits, '_' or '-' (a sku or a wine id)"
        )
    return payload


def wine_link(bot_username: str, ref: str) -> str:
    bot = bot_username.strip().lstrip("@")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{3,31}", bot):
        raise DeepLinkError(f"{bot_username!r} is not a Telegram bot username")
    return f"https://t.me/{bot}?start={wine_payload(ref)}"


def wine_ref_from_start(argument: str | None) -> str | None:
    """The wine's sku or id from a ``/start`` argument, or None when the argument is not a wine link."""
    if not argument:
        return None
    argument = argument.strip()
    if not _PAYLOAD.match(argument) or not argument.startswith(WINE_PREFIX):
        return None
    ref = argument[len(WINE_PREFIX) :]
    return ref or None
