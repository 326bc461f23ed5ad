"""A wine description's sentences: segmented by razdel (abbreviations such as «12 мес.» end none), the
sentence that only names the colour, and a brief of whole sentences within a limit."""

from __future__ import annotations

import re
from functools import cache

from sommelier.language.text import LINKING, stem, words
from sommelier.language.vocabulary import data

_COLOUR_SENTENCE_WORDS = 12
_COLOUR_OPENING_WORDS = 6  # a colour noun among a sentence's first words: the sentence opens with the colour


@cache
def _colour_words() -> tuple[frozenset[str], frozenset[str]]:
    """Stems of the words that name a colour, and of those a colour sentence may be made of (hues, shades)."""
    spec = data("wine_words.json")["colour"]
    nouns = frozenset(stem(w) for w in spec["nouns"])
    return nouns, frozenset(stem(w) for w in (*spec["hues"], *spec["shades"])) | nouns


def sentences(text: str) -> list[str]:
    """The sentences of a text, by razdel's Russian segmenter (abbreviations such as «12 мес.» and «Dr.» do
    not end one), never split inside a quoted name («Château St. Jean»)."""
    from razdel import sentenize

    out: list[str] = []
    pending = ""
    for part in sentenize(" ".join((text or "").split())):
        pending = f"{pending} {part.text}".strip() if pending else part.text.strip()
        if pending and not _open_quote(pending):
            out.append(pending)
            pending = ""
    if pending:
        out.append(pending)
    return out


def _open_quote(text: str) -> bool:
    return text.count("«") > text.count("»") or text.count('"') % 2 == 1 or text.count("“") > text.count("”")


def is_colour_sentence(sentence: str) -> bool:
    """«Рубиновый цвет.», «Цвет соломенно-жёлтый с зеленоватыми отблесками.», «Рубиновое, с гранатовым
    ободком.»: a short sentence that names the colour, or is made only of hues and shades."""
    kept = [w for w in words(sentence) if w not in LINKING]
    tokens = [stem(w) for w in kept]
    if not tokens:
        return False
    nouns, colour = _colour_words()
    flowers = frozenset(data("wine_words.json")["colour"]["flowers"])
    named = [t in nouns and w not in flowers for t, w in zip(tokens, kept, strict=True)]
    if any(named[:_COLOUR_OPENING_WORDS]):
        return True  # «Вино блестящего нежно-розового цвета с ароматом муската…» opens with the colour
    if len(tokens) > _COLOUR_SENTENCE_WORDS:
        return False
    return any(named) or all(t in colour for t in tokens)


_FULL_STOP = (".", "!", "?", "…", ")", "»", '"')
_CYRILLIC_WORD = re.compile(r"^[а-яё]{3,}$")


def is_cut(text: str) -> bool:
    """A catalogue text cut in the shop's export («…вино c золотисто-соло»): it ends without a full stop, and
    its length is a usual field width (language/data/answer_checks.json) or its last word is one the
    dictionary does not know (where pymorphy3 is installed)."""
    text = (text or "").strip()
    if not text or text.endswith(_FULL_STOP):
        return False
    if len(text) in data("answer_checks.json")["cut_field_widths"]:
        return True
    last = words(text)[-1] if words(text) else ""
    if not _CYRILLIC_WORD.match(last):
        return False
    from sommelier.language.morphology import known_word

    return known_word(last) is False


def written_sentences(text: str) -> list[str]:
    """A catalogue text's sentences without a final fragment the shop's export cut (``is_cut``)."""
    parts = sentences(text)
    if parts and is_cut(text):
        parts = parts[:-1]
    return parts


def brief(text: str, limit: int, *, skip_colour: bool = False) -> str:
    """Whole sentences from the start of `text` up to `limit` characters (one clipped sentence if the
    first is longer); with `skip_colour`, a leading colour sentence is left out."""
    # Only the text's start can make the brief: a 20 000-character description is not segmented whole (its
    # last part read here is cut, but the parts before it already pass the limit, so it is never kept).
    parts = sentences((text or "")[: 2 * limit + 200])
    if skip_colour and len(parts) > 1 and is_colour_sentence(parts[0]):
        parts = parts[1:]
    out = ""
    for part in parts:
        candidate = f"{out} {part}".strip()
        if len(candidate) > limit:
            break
        out = candidate
    if not out and parts:
        clipped = parts[0][: max(1, limit - 1)].rsplit(" ", 1)[0].rstrip(",;:—- ")
        out = clipped + "…"
    return out
