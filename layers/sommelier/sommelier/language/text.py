"""Text as the language layer compares it: lower case, ё→е, accents off Latin letters, words, and their
Snowball stems (one stemmer per thread); and a regular expression for exact phrases."""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, cast

WORD = re.compile(r"[a-zа-я0-9]+")
SPACES = re.compile(r"\s+")
# Words that never carry meaning in a dish or place phrase.
LINKING = frozenset({"к", "с", "со", "из", "на", "под", "для", "и", "в", "во", "или", "по"})
# The personal pronouns' forms: never another word by its stem («меня» is not the grape «Менье», «нам» no «Нами»).
PRONOUNS = frozenset(
    "я меня мне мной мною ты тебя тебе тобой он его ему им нем нём она ее её ей ею нее неё ней нею "
    "мы нас нам нами вы вас вам вами они их ими них ним ними нему него".split()
)


def _latin_fold_table() -> dict[int, str]:
    """Accented Latin letters → their base letter, one for one («Médoc» → «medoc», «Grüner» → «gruner»), so
    offsets into a text stay put; Cyrillic is left alone («й» must not become «и»)."""
    table: dict[int, str] = {}
    for code in range(0xC0, 0x250):
        base = unicodedata.normalize("NFKD", chr(code))[:1]
        if base.isascii() and base.isalpha() and base != chr(code):
            table[code] = base
    return table


_LATIN_FOLD = _latin_fold_table()


def fold_accents(text: str) -> str:
    """«Pérignon» → «Perignon», «Moët» → «Moet»: Latin letters lose their accents, one character for one (so
    offsets hold); Cyrillic («й», «ё») is left alone."""
    return text.translate(_LATIN_FOLD)


def fold(text: str) -> str:
    """Lower case, ё→е and accents off Latin letters, keeping every character where it was."""
    return fold_accents(text.lower().replace("ё", "е"))


def normalize(text: str) -> str:
    """Lower case, ё→е, accents off Latin letters, hyphens and underscores as spaces, single spaces."""
    lowered = fold(text).replace("-", " ").replace("_", " ")
    return SPACES.sub(" ", lowered).strip()


def words(text: str) -> list[str]:
    return WORD.findall(normalize(text))


if TYPE_CHECKING:
    from typing import Protocol

    class _Stemmer(Protocol):
        def stemWord(self, word: str) -> str: ...  # noqa: N802 - snowballstemmer's own name


_per_thread = threading.local()


def _stemmer() -> _Stemmer:
    """This thread's stemmer: a Snowball stemmer keeps the word it works on in the instance, so threads
    sharing one corrupt each other's stems (turns run concurrently under `serve` and in the agent)."""
    stemmer = cast("_Stemmer | None", getattr(_per_thread, "stemmer", None))
    if stemmer is None:
        import snowballstemmer

        stemmer = _per_thread.stemmer = cast("_Stemmer", snowballstemmer.stemmer("russian"))
    return stemmer


@cache
def stem(word: str) -> str:
    """The Snowball (Porter) Russian stem of one normalised word; other scripts are returned as they are."""
    return _stemmer().stemWord(word) if word else word


def alternation(phrases: Iterable[str], *, word_start: bool = True) -> str:
    """A regular expression for exact phrases (longest first; spaces match any run of spaces; a phrase must
    end a word, and start one unless `word_start` is off, for a unit right after a number: «5к»).
    For the grammar around words: «до» before a number, «не» before a style."""
    parts = []
    for phrase in sorted({normalize(p) for p in phrases}, key=len, reverse=True):
        body = r"\s*".join(re.escape(w) for w in phrase.split(" "))
        if word_start and re.match(r"[a-zа-я0-9]", phrase):
            body = r"\b" + body
        if re.search(r"[a-zа-я0-9]$", phrase):
            body += r"\b"
        parts.append(body)
    return "(?:" + "|".join(parts) + ")"
