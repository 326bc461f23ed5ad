"""Occasions and moods (occasions.json): the entries, and the words that make a message a mood request."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from sommelier.language.vocabulary import data


def occasions() -> list[dict[str, Any]]:
    return list(data("occasions.json")["occasions"])


def moods() -> list[dict[str, Any]]:
    return list(data("occasions.json")["moods"])


@cache
def mood_cue_pattern() -> re.Pattern[str]:
    """Words that begin with a mood's stem (not a dish's or a style's), a mood cue or a comparative
    (occasions.json): a mood request."""
    spec = data("occasions.json")
    moods = [m for m in spec["moods"] if m["concept"] not in spec["not_cues"]]
    starts = {s for m in moods for s in m["stems"]} | set(spec["cues"]) | set(spec["comparatives"])
    body = "|".join(r"\s+".join(map(re.escape, s.split())) for s in sorted(starts, key=len, reverse=True))
    return re.compile(r"(?<![a-zа-я0-9])(?:" + body + r")[a-zа-я0-9]*")
