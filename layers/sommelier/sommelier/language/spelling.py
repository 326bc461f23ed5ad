"""Misspelt style and grape words put right in place («крассное» → «красное», «рислинк» → «рислинг»), when
rapidfuzz is installed (it is not in the Lambda layer: there the text is read as written)."""

from __future__ import annotations

import re
from functools import cache

from sommelier.language.grape_names import grape_aliases
from sommelier.language.phrases import FUZZY_MIN_SCORE
from sommelier.language.style_words import STYLE_KINDS, enum_words
from sommelier.language.text import stem


def correct_spelling(text: str) -> str:
    """Misspelt style words put right («крассное» → «красное»), each kept at its place in the text: a
    corrected word is padded with spaces to the misspelling's length, so character offsets still hold.
    Without rapidfuzz the text is returned as it is."""
    try:
        from rapidfuzz import fuzz, process
    except ImportError:
        return text
    styles, grape_words = _spelling_targets()
    out = text
    for match in re.finditer(r"[а-яё]{5,}", text):
        word = match.group(0)
        if word in styles or word in grape_words:
            continue
        best = process.extractOne(word, styles, scorer=fuzz.ratio, score_cutoff=FUZZY_MIN_SCORE + 4)
        if not (best and best[0][:2] == word[:2]):
            # A grape misspelt by ear («рислинк», «савиньон»): one letter off, same first letter and length ±1.
            best = process.extractOne(word, grape_words, scorer=fuzz.ratio, score_cutoff=FUZZY_MIN_SCORE)
            if not (best and best[0][0] == word[0] and abs(len(best[0]) - len(word)) <= 1):
                continue
        # A correction one letter longer («санжовезе» → «санджовезе») is written as its stem, which fits and
        # matches the same («санджовез»).
        fixed = best[0] if len(best[0]) <= len(word) else stem(best[0])
        if len(fixed) <= len(word):
            out = out[: match.start()] + fixed.ljust(len(word)) + out[match.end() :]
    return out


@cache
def _spelling_targets() -> tuple[tuple[str, ...], frozenset[str]]:
    """Style words, and the Cyrillic words of grape names, long enough to be told apart from others."""
    styles = tuple(sorted({w for kind in STYLE_KINDS for w in enum_words(kind) if len(w) >= 5}))
    grape_words = {
        w for phrase in grape_aliases() for w in phrase.split() if len(w) >= 5 and re.fullmatch(r"[а-я]+", w)
    }
    return styles, frozenset(grape_words - set(styles))
