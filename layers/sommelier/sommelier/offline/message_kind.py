"""What kind of message it is, before the previous request is taken into account (the reader's rules 1-3):
small talk (a greeting, thanks, a help request, a reaction), a definitional question, a request for wines,
or something off the topic; and the cue lists of dialogue.json the other readers share."""

from __future__ import annotations

import re

from sommelier import language
from sommelier.offline.intent import Kind, Reading
from sommelier.offline.message import words_of

_DIALOGUE = language.data("dialogue.json")
GREETING = language.cues("dialogue.json", "greeting")
THANKS = language.cues("dialogue.json", "thanks")
_HELP = language.cues("dialogue.json", "help")
ASK_VERB = language.cues("dialogue.json", "ask")
OFF_TOPIC = language.cues("dialogue.json", "off_topic")
MORE = language.cues("dialogue.json", "more")
WINE_WORD = language.cues("wine_words.json", "wine")
_PARTICLES = frozenset(_DIALOGUE["particles"])
_INFO = re.compile(r"(?:^|\s)(?:" + "|".join(_DIALOGUE["informational"]) + r")(?=\s|$|[?,.!])")
_TELL_ABOUT = re.compile(r"(?:^|\s)(?:" + "|".join(_DIALOGUE["tell_about"]) + r")\s")


def content_left(t: str, *cue_lists: language.Cues) -> list[str]:
    """The words of the message that none of the cue lists explains (particles aside)."""
    rest = t
    for cues in cue_lists:
        rest = cues.remove(rest)
    return [w for w in words_of(rest) if w not in _PARTICLES]


def kind_without_previous(raw: str, t: str, reading: Reading) -> tuple[Kind, str | None]:
    """The kind of a message read alone (rules 1-3), and the glossary topic of an informational one."""
    small_talk = _small_talk(t, reading)
    if small_talk is not None:
        return small_talk, None
    if _INFO.search(t):
        return _definitional_kind(raw, t, reading)
    topic = language.glossary_topic_asked(raw)
    if topic and not reading.strong and not reading.weak and not ASK_VERB.search(t):
        return "informational", topic.key
    if reading.strong:
        return "recommendation", None
    if OFF_TOPIC.search(t):
        return "off_topic", None
    if reading.weak or reading.more or ASK_VERB.search(t):
        return "recommendation", None
    if topic:
        return "informational", topic.key
    return "off_topic", None


def _small_talk(t: str, reading: Reading) -> Kind | None:
    """A reaction, greeting, thanks or help request with nothing else in it (rule 1), else None."""
    if not words_of(t):
        # "👍", "🙏", "🍷": a reaction; "", "?": the customer needs a hint
        return "help" if not t.strip(" ?!.,") else "thanks"
    if not content_left(t, GREETING):
        return "greeting"
    if not content_left(t, THANKS, GREETING):  # "спасибо!", "ок, понятно", "отлично"
        return "thanks"
    if _HELP.search(t) and not reading.strong and not reading.weak and not ASK_VERB.search(t):
        return "help"
    return None


def _definitional_kind(raw: str, t: str, reading: Reading) -> tuple[Kind, str | None]:
    """A definitional question (rule 2): the glossary topic; «расскажи о …» with filters or a mood asks for wines."""
    topic = language.glossary_topic_asked(raw)
    if topic:
        return "informational", topic.key
    if _TELL_ABOUT.search(t) and (reading.filters or reading.mood):
        return "recommendation", None
    return "informational", None
