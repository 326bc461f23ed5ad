"""The wording's tools: a choice among wordings that stays the same for the same query (a hash of it, so tests
are stable), prices in roubles, a capital letter, a text clipped at a sentence, catalogue text without markup."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from typing import Any


def seed(*parts: Any) -> int:
    return zlib.crc32("\x1f".join(str(p) for p in parts).encode("utf-8"))


def pick(options: Sequence[str], *parts: Any) -> str:
    return options[seed(*parts) % len(options)]


def format_price(value: Any) -> str:
    number = float(value)
    if number.is_integer():
        text = f"{int(number):,}".replace(",", " ")
    else:
        text = f"{number:,.2f}".replace(",", " ").replace(".", ",")
    return f"{text} ₽"


def cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if end > limit // 2:
        return cut[: end + 1]
    return cut.rsplit(" ", 1)[0].rstrip(",;:—-") + "…"


_MARKUP = re.compile(r"[*_`<>#\[\]]")


def plain(text: str) -> str:
    """Catalogue text without characters a renderer could take for markup."""
    return _MARKUP.sub("", text or "").strip()


def count_phrase(n: int) -> str:
    return {1: "одно вино", 2: "два вина", 3: "три вина"}.get(n, f"{n} вина")
