"""A whole menu (the reader's rule 8): «на ужин салат с креветками, утка и сырная тарелка» names several courses;
each is a dish of its own, read from its part of the message (the parts split where table.json `courses` says).
The responder answers with a wine per course, and says which one wine would carry the whole meal when one suits
every course."""

from __future__ import annotations

import re

from sommelier import language
from sommelier.offline.food import read_food
from sommelier.offline.message import Spans, prepare

_SEPARATORS = re.compile(
    r"\s*(?:[,;]|\s" + language.alternation(language.data("table.json")["courses"]) + r"(?=\s))\s*"
)
MAX_COURSES = 3


def courses(text: str) -> list[str]:
    """The dishes of a menu, one per course in the order named; fewer than two when it is no menu."""
    _, t = prepare(text or "")
    found: list[str] = []
    for part in _SEPARATORS.split(t):
        dish = read_food(part, Spans()) if part.strip() else None
        if dish and dish not in found:
            found.append(dish)
    return found[:MAX_COURSES]
