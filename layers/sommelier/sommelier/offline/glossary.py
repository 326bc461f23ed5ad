"""A small built-in Russian wine glossary for informational questions in offline mode.

The topics, the words that ask for each and the answers live in the language layer
(`language/data/glossary.json`). `lookup(text)` finds the topic asked for earliest in the text
("чем брют отличается от сухого" → брют), so the subject of the question wins over what it is
compared with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sommelier import language


@dataclass(frozen=True)
class Entry:
    key: str
    title: str
    triggers: re.Pattern[str]
    answer: str


ENTRIES: tuple[Entry, ...] = tuple(
    Entry(t["key"], t["title"], re.compile(r"(?<![a-zа-я0-9])(?:" + t["asked_by"] + r")"), t["answer"])
    for t in language.data("glossary.json")["topics"]
)
_BY_KEY = {entry.key: entry for entry in ENTRIES}


def _prepare(text: str) -> str:
    return " ".join((text or "").lower().replace("ё", "е").replace("-", " ").split())


def lookup(text: str) -> tuple[str, str] | None:
    """(key, answer) of the entry the text asks about, or None."""
    prepared = _prepare(text)
    best: tuple[int, int, Entry] | None = None
    for entry in ENTRIES:
        m = entry.triggers.search(prepared)
        if m is None:
            continue
        candidate = (m.start(), -(m.end() - m.start()), entry)
        if best is None or candidate[:2] < best[:2]:
            best = candidate
    if best is None:
        return None
    return best[2].key, best[2].answer


def get(key: str) -> Entry | None:
    return _BY_KEY.get(key)


def topics() -> list[str]:
    return [entry.key for entry in ENTRIES]
