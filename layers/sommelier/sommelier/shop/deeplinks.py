"""Deep links to a wine: ``https://t.me/<bot>?start=w_<sku or id>`` (the shelf QR codes point here).

Telegram passes the part after ``start=`` to the bot as ``/start <payload>``; a payload is 1-64
characters of A-Z, a-z, 0-9, _ and -. A shop's article written otherwise («ВЛ-0101», «12.345/A») is sent
as ``wb_`` and its UTF-8 in unpadded base64url, which uses only those characters: up to 45 bytes (about 22
Cyrillic letters) fit. A longer one does not fit at all; the label then links the wine by its catalogue id.
"""

from __future__ import annotations

import base64
import binascii
import re

WINE_PREFIX = "w_"
ENCODED_PREFIX = "wb_"  # the sku in base64url (Cyrillic, spaces, dots…)
MAX_PAYLOAD = 64
_PAYLOAD = re.compile(rf"^[A-Za-z0-9_-]{{1,{MAX_PAYLOAD}}}$")


class DeepLinkError(ValueError):
    pass


def wine_payload(ref: str) -> str:
    """The /start payload for a wine's sku or id: as written when Telegram allows it, else base64url."""
    ref = ref.strip()
    if not ref:
        raise DeepLinkError("пустой артикул: нужен артикул магазина или id вина")
    payload = f"{WINE_PREFIX}{ref}"
    if _PAYLOAD.match(payload):
        return payload
    encoded = ENCODED_PREFIX + base64.urlsafe_b64encode(ref.encode("utf-8")).decode("ascii").rstrip("=")
    if len(encoded) > MAX_PAYLOAD:
        raise DeepLinkError(
            f"артикул «{ref[:40]}» слишком длинный для ссылки Telegram (до {MAX_PAYLOAD} знаков в ссылке):"
            " метка сошлётся на вино по его id"
        )
    return encoded


def wine_link(bot_username: str, ref: str) -> str:
    bot = bot_username.strip().lstrip("@")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{3,31}", bot):
        raise DeepLinkError(f"«{bot_username}» — не имя бота в Telegram (латиница, цифры и _, 5–32 знака)")
    return f"https://t.me/{bot}?start={wine_payload(ref)}"


def wine_ref_from_start(argument: str | None) -> str | None:
    """The wine's sku or id from a ``/start`` argument, or None when the argument is not a wine link."""
    if not argument:
        return None
    argument = argument.strip()
    if not _PAYLOAD.match(argument):
        return None
    if argument.startswith(ENCODED_PREFIX):
        body = argument[len(ENCODED_PREFIX) :]
        try:
            ref = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("utf-8").strip()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
        return ref or None
    if not argument.startswith(WINE_PREFIX):
        return None
    return argument[len(WINE_PREFIX) :] or None
