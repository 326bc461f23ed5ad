"""A customer's message prepared for reading: lower case, ё→е, single spaces, misspelt style words put right;
and the character ranges of it that a filter has already explained."""

from __future__ import annotations

import re

from sommelier import language

_ZERO_WIDTH = re.compile("[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]")
_WS = re.compile(r"\s+")
WORD = re.compile(r"[a-zа-я0-9]+")


_EMOJI: dict[str, str] = {k: v for k, v in language.data("dialogue.json")["emoji"].items() if not k.startswith("_")}
_REACTIONS = frozenset(language.data("dialogue.json")["emoji"]["_reaction"])
_EMOJI_RX = re.compile("|".join(map(re.escape, sorted(_EMOJI, key=len, reverse=True))))


def emoji_as_words(text: str) -> str:
    """«🥩🍷» → « стейк  вино »: food and wine emoji as their words, when one of them is not only a reaction."""
    found = set(_EMOJI_RX.findall(text))
    if not found - _REACTIONS:
        return text
    return _EMOJI_RX.sub(lambda m: f" {_EMOJI[m.group(0)]} ", text)


def prepare(text: str) -> tuple[str, str]:
    """(raw, t): lower case, ё→е, single spaces, food emoji as words. `t` also turns hyphens into spaces."""
    raw = _ZERO_WIDTH.sub("", emoji_as_words(text or "")).lower().replace("ё", "е")
    raw = _WS.sub(" ", raw).strip()
    t = language.correct_spelling(raw.replace("-", " ").replace("_", " "))
    return raw, t


def words_of(text: str) -> list[str]:
    """The words of a prepared text."""
    return WORD.findall(text)


class Spans:
    """Character ranges of `t` already explained by a filter (they don't count as mood words)."""

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int]] = []

    def add(self, start: int, end: int) -> None:
        self.ranges.append((start, end))

    def covers(self, start: int, end: int) -> bool:
        return any(s < end and start < e for s, e in self.ranges)


def first_named(hits: list[tuple[int, str]]) -> str | None:
    """The value named first in the message ("Франция или Италия" → Франция), None when nothing was."""
    return min(hits)[1] if hits else None
