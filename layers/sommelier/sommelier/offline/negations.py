"""Is a word of a message negated? A negation before it («не красное», «забудь про красное», «вместо
красного», «не из Италии») or after it («красное не хочу») rejects it (dialogue.json `negation`)."""

from __future__ import annotations

import re

from sommelier import language

_NEGATION = language.data("dialogue.json")["negation"]
_NEGATION_BEFORE = re.compile(
    r"(?:^|\s)"
    + language.alternation(_NEGATION["before"])
    + r"\s+(?:"
    + language.alternation(_NEGATION["softeners"])
    + r"\s+)?(?:"
    + language.alternation(_NEGATION["origin"])
    + r"\s+)?$"
)
# «красное не хочу», «сладкое она не пьёт», «кислое мы вообще не любим»: up to two words of who between.
_NEGATION_AFTER = re.compile(
    r"^\w*\s+(?:"
    + language.alternation(_NEGATION["subjects"])
    + r"\s+){0,2}"
    + language.alternation(_NEGATION["after"])
)
# «не обязательно Бордо», «страна не важна»: what follows is a preference, not a rule (to the clause's end).
_NOT_REQUIRED = re.compile(
    r"(?:^|\s)" + language.alternation(_NEGATION["not_required"]) + r"[^,.;!?]*?(?=[,.;!?]|\s(?:но|а)\s|$)"
)


def negated(t: str, start: int, end: int | None = None) -> bool:
    """A negation before the word ("не красное", "забудь про красное", "вместо красного") or after it
    ("красное не хочу") rejects it (the negation words: dialogue.json)."""
    if _NEGATION_BEFORE.search(t[max(0, start - 30) : start]):
        return True
    return end is not None and bool(_NEGATION_AFTER.search(t[start : end + 30]))


# Between two items of one list: a joiner («и», «или», a comma), and again the negation or the word of origin
# («кроме Италии и не из Франции»).
_JOINED = re.compile(
    r"^\s*(,\s*)?(?:"
    + language.alternation(_NEGATION["list_joiners"])
    + r"\s+)?(?:"
    + language.alternation(_NEGATION["before"])
    + r"\s+)?(?:"
    + language.alternation(_NEGATION["origin"])
    + r"\s+)?$"
)
_AGREEING_ENDING = 2  # «Италии, Франции»: the letters two items of a list by commas alone share


def negated_in_list(t: str, spans: list[tuple[int, int]], *, commas: bool = False) -> set[tuple[int, int]]:
    """Which of the spans of one kind of word (every country a message names, in text order) a negation
    rules out: one negated itself, and one that continues a list after a negated item («кроме Италии и
    Франции», «без шардоне или совиньона»). With `commas` (places, which a list puts in one case), items
    joined by a comma alone continue it when their endings agree («кроме Италии, Франции»); a colour after
    a comma corrects the one before («не красное, белое»)."""
    ruled_out: set[tuple[int, int]] = set()
    previous: tuple[int, int] | None = None
    for start, end in sorted(spans):
        joined = previous is not None and previous in ruled_out and _continues(t, previous, (start, end), commas)
        if joined or negated(t, start, end):
            ruled_out.add((start, end))
        previous = (start, end)
    return ruled_out


def _continues(t: str, previous: tuple[int, int], item: tuple[int, int], commas: bool) -> bool:
    gap = _JOINED.match(t[previous[1] : item[0]])
    if gap is None or previous[1] > item[0]:
        return False
    if gap.group(0).strip() not in ("", ","):
        return True  # a joining word
    return commas and t[previous[1] - _AGREEING_ENDING : previous[1]] == t[item[1] - _AGREEING_ENDING : item[1]]


def without_preferences(t: str) -> str:
    """The message with what it says is no rule blanked out («красное, не обязательно Бордо» → «красное»):
    the same length, so offsets hold."""
    return _NOT_REQUIRED.sub(lambda m: " " * len(m.group(0)), t)
