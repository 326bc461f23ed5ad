"""The glossary: wine terms explained (glossary.json), and the topic a question asks about."""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from sommelier.language.vocabulary import data


class GlossaryTopic(NamedTuple):
    key: str
    title: str
    asked_by: re.Pattern[str]
    answer: str


@cache
def _glossary() -> dict[str, GlossaryTopic]:
    return {
        t["key"]: GlossaryTopic(
            t["key"], t["title"], re.compile(r"(?<![a-zа-я0-9])(?:" + t["asked_by"] + r")"), t["answer"]
        )
        for t in data("glossary.json")["topics"]
    }


def glossary_topics() -> list[GlossaryTopic]:
    return list(_glossary().values())


def glossary_topic(key: str) -> GlossaryTopic | None:
    return _glossary().get(key)


def glossary_topic_asked(text: str) -> GlossaryTopic | None:
    """The topic the text asks about: the one named earliest, so the subject of «чем брют отличается от
    сухого» (брют) wins over what it is compared with; the longer words at the same place."""
    prepared = " ".join((text or "").lower().replace("ё", "е").replace("-", " ").split())
    best: tuple[int, int, GlossaryTopic] | None = None
    for topic in _glossary().values():
        found = topic.asked_by.search(prepared)
        if found is None:
            continue
        candidate = (found.start(), -(found.end() - found.start()), topic)
        if best is None or candidate[:2] < best[:2]:
            best = candidate
    return best[2] if best else None
