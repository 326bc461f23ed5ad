"""Russian-aware text normalisation and a light stemmer, shared by matching, embeddings and the offline reader."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-zа-я0-9]+")
_SPACES = re.compile(r"\s+")

# Longest first, so "ого" wins over "о". Enough to fold the common case endings of
# nouns and adjectives ("стейку" → "стейк", "летнего" → "летн"); not a full stemmer.
_ENDINGS = tuple(
    sorted(
        """ыми ими ого его ому ему ая яя ое ее ые ие ый ий ой ам ям ах ях ом ем ов ев ей ую юю ию ия ии ью ья
        а я о е ы и у ю ь й""".split(),
        key=len,
        reverse=True,
    )
)
_MIN_STEM = 3


def normalize(text: str) -> str:
    """Lower case, ё→е, hyphens and underscores as spaces, single spaces."""
    lowered = text.lower().replace("ё", "е").replace("-", " ").replace("_", " ")
    return _SPACES.sub(" ", lowered).strip()


def words(text: str) -> list[str]:
    return _WORD.findall(normalize(text))


def stem(word: str) -> str:
    if not word or not ("а" <= word[0] <= "я"):
        return word
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= _MIN_STEM:
            return word[: -len(ending)]
    return word


def stems(text: str) -> list[str]:
    return [stem(w) for w in words(text)]


def escape_like(value: str) -> str:
    """Escape LIKE wildcards so user text matches literally (with the default backslash escape)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
