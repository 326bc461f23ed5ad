"""pymorphy3, only where it is paid for: a word's dictionary forms (for requests) and a phrase in a
grammatical case (for the offline wording). Neither is in the Lambda layer's hot path: without pymorphy3
installed, callers fall back (no lemma; a quoted form)."""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import TYPE_CHECKING, cast

from sommelier.language.text import normalize

if TYPE_CHECKING:
    from typing import Protocol

    class _Tag(Protocol):
        POS: str | None

        def __contains__(self, grammeme: object) -> bool: ...

    class _Parse(Protocol):
        normal_form: str
        tag: _Tag
        word: str

        def inflect(self, grammemes: set[str]) -> _Parse | None: ...

    class _Analyser(Protocol):
        def parse(self, word: str) -> list[_Parse]: ...

        def word_is_known(self, word: str) -> bool: ...


_LINKING_WORDS = ("из", "с", "со", "на", "в", "под", "по")


@cache
def analyser() -> _Analyser | None:
    try:
        import pymorphy3
    except ImportError:  # not in the Lambda layer: callers fall back to a quoted form
        return None
    return cast("_Analyser", pymorphy3.MorphAnalyzer())


@lru_cache(maxsize=4096)
def known_word(word: str) -> bool | None:
    """Whether the dictionary knows the word; None without pymorphy3 (the Lambda layer)."""
    morph = analyser()
    return None if morph is None else morph.word_is_known(word)


@lru_cache(maxsize=4096)
def parts_of_speech(word: str) -> tuple[str, ...]:
    """The parts of speech the dictionary reads the word as (OpenCorpora tags: NOUN, INFN, ADVB…); () without it."""
    morph = analyser()
    if morph is None:
        return ()
    return tuple(dict.fromkeys(str(p.tag.POS) for p in morph.parse(word) if p.tag.POS))


@lru_cache(maxsize=4096)
def lemmas(word: str) -> tuple[str, ...]:
    """A word's dictionary forms (its two likeliest readings), once per word: several indices ask."""
    morph = analyser()
    if morph is None:
        return ()
    return tuple(dict.fromkeys(normalize(p.normal_form) for p in morph.parse(word)[:2]))


def inflect(phrase: str, case: str) -> str | None:
    """The phrase in a grammatical case («азиатская кухня», "datv" → «азиатской кухне»), inflecting the
    words before the first linking word («паста с морепродуктами» → «пасте с морепродуктами»).
    None when pymorphy3 is not installed or a word can't be inflected (foreign names: use «сорта X»)."""
    morph = analyser()
    if morph is None:
        return None
    out: list[str] = []
    inflecting = True
    for word in phrase.split():
        if word.lower() in _LINKING_WORDS:
            inflecting = False
        if not inflecting or not re.fullmatch(r"[а-яё]+", word.lower()):
            out.append(word)
            continue
        parsed = morph.parse(word)[0]
        if parsed.tag.POS not in {"NOUN", "ADJF"} or "Fixd" in parsed.tag:
            out.append(word)
            continue
        changed = parsed.inflect({case})
        if changed is None:
            return None
        out.append(changed.word)
    return " ".join(out)
