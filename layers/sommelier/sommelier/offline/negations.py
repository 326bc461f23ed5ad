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


def without_preferences(t: str) -> str:
    """The message with what it says is no rule blanked out («красное, не обязательно Бордо» → «красное»):
    the same length, so offsets hold."""
    return _NOT_REQUIRED.sub(lambda m: " " * len(m.group(0)), t)
