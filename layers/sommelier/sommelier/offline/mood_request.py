"""The words of a mood request, for semantic_search: a message whose words begin with a mood's stem, a
mood cue or a comparative (occasions.json) asks by mood, and its words that no filter explained, less the
filler (stopwords, request and wine words, money words), are the mood."""

from __future__ import annotations

from sommelier import language
from sommelier.offline.message import WORD, Spans

_DIALOGUE = language.data("dialogue.json")
_UNITS = language.data("budget.json")["units"]
_RELATIONS = language.data("budget.json")["relations"]
# A word that begins with a mood stem, a mood cue or a comparative (occasions.json) makes a mood request.
_MOOD_CUES = language.mood_cue_pattern()
_COMPARATIVES: dict[str, str] = language.data("occasions.json")["comparatives"]
# Words left out of the mood search: as written, or (the ask and wine words) in any inflection.
_FILLER = {
    language.normalize(w)
    for w in (
        *language.data("occasions.json")["stopwords"],
        *_DIALOGUE["request_words"],
        *_DIALOGUE["ask"]["forms"],
        *_UNITS["money"],
        *_UNITS["thousand_words"],
        *(p for _, phrases in _RELATIONS["before"] for p in phrases if " " not in p),
    )
}
_WINE = language.data("wine_words.json")["wine"]
_FILLER |= {language.normalize(w) for w in _WINE["forms"]}
_FILLER_STEMS = {language.stem(language.normalize(w)) for w in (*_DIALOGUE["ask"]["words"], *_WINE["words"])}


def read_mood(t: str, spans: Spans) -> str | None:
    if not any(not spans.covers(m.start(), m.end()) for m in _MOOD_CUES.finditer(t)):
        return None
    kept: list[str] = []
    for m in WORD.finditer(t):
        word = m.group(0)
        if spans.covers(m.start(), m.end()) or word in _FILLER or word.isdigit():
            continue
        if len(word) < 2 or language.stem(word) in _FILLER_STEMS:
            continue
        kept.append(_COMPARATIVES.get(word, word))
    mood = " ".join(kept).strip()
    return mood or None
