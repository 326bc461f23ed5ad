"""How a name sounds: the sound key of migrations 0010 and 0011 (`sommelier_sound`, its skeleton and the
name query), in Python, so that the in-memory catalogue finds «Шато Латур» under «Château Latour» as the
SQL does. The SQL functions are the definition; tests/contract checks the two against each other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import NamedTuple

from sommelier_dev.memory.text_search import tokens

_ACCENTED = "àáâãäåāèéêëēìíîïòóôõöøùúûüýÿçñšžё"
_PLAIN = "aaaaaaaeeeeeiiiiooooooouuuuyycnsze"
# translate() drops a character that has no partner: PostgreSQL's does the same.
_FOLD_ACCENTS = {ord(a): p for a, p in zip(_ACCENTED, _PLAIN, strict=False)} | {
    ord(a): None for a in _ACCENTED[len(_PLAIN) :]
}
_CYRILLIC_PAIRS = (("щ", "sh"), ("ш", "sh"), ("ч", "ch"), ("ж", "zh"), ("ц", "ts"), ("х", "h"), ("ю", "u"), ("я", "ia"))
_CYRILLIC = "абвгдезийклмнопрстуфыэьъ"
_LATIN = "abvgdeziiklmnoprstufie"
_TRANSLITERATE = {ord(c): p for c, p in zip(_CYRILLIC, _LATIN, strict=False)} | {
    ord(c): None for c in _CYRILLIC[len(_LATIN) :]
}

# PostgreSQL's \M (the end of a word) is a lookahead for a character that is not a letter, digit or underscore.
_END = r"(?!\w)"
_SILENT_ENDING = re.compile(rf"([aeiou])[tsdx]{_END}|(n)c{_END}")
# The folding steps of sommelier_spelling_sound, in order, on text that is only a-z, digits and spaces.
_SPELLING = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"[^a-z0-9 ]+", " "),
        (r"([tgrk])h", r"\1"),
        (r"(eau|au)", "o"),
        (r"ou", "u"),
        (r"oi", "ua"),
        (r"(ier(?![a-z0-9_])|a[iy](?![a-z0-9_]))", "e"),
        (r"(cch|ch(?=i[aeou]))", "k"),
        (r"(dzh|dj|zh|g(?=[eiy]))", "j"),
        (r"(tsch|tsh|sch|ch|sh|ts|tz|z|ci(?=[aou])|c(?=[eiy]))", "s"),
        (r"(ck|kh|c|q|x)", "k"),
        (r"gn", "n"),
        (r"ph", "f"),
        (r"[yj]", "i"),
        (r"w", "v"),
        (r"([a-z])\1+", r"\1"),
    )
)
_SILENT_T = re.compile(r"nt(?=[b-df-hj-np-tv-x])")
_VOWELS_AFTER = re.compile(r"([a-z0-9])[aeiou]+")
_LAST_VOWEL = re.compile(r"(...)[aeiou]$")


@cache
def sound(value: str) -> str:
    """`sommelier_sound`: a name in a small Latin alphabet, alike in either script and in common misspellings."""
    text = _SILENT_ENDING.sub(r"\1\2", value.lower().translate(_FOLD_ACCENTS))
    for cyrillic, latin in _CYRILLIC_PAIRS:
        text = text.replace(cyrillic, latin)
    text = text.translate(_TRANSLITERATE)
    for pattern, replacement in _SPELLING:
        text = pattern.sub(replacement, text)
    return _SILENT_T.sub("n", text.strip())


def skeleton(sounded: str) -> str:
    """`sommelier_skeleton`: each word's consonants after its first letter, marked with a z."""
    return " ".join(f"z{word}" for word in _VOWELS_AFTER.sub(r"\1", sounded).split())


@cache
def sound_sequence(value: str) -> tuple[str, ...]:
    """`sommelier_sound_words` in order: a name's sounded words, then their skeletons (a phrase is read on it)."""
    sounded = sound(value)
    return (*sounded.split(), *skeleton(sounded).split())


@cache
def sound_words(value: str) -> frozenset[str]:
    """`sommelier_sound_words`: every sounded word of a name and its skeleton."""
    return frozenset(sound_sequence(value))


def has_sound_phrase(sequence: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    """`name_sound @@ phraseto_tsquery('simple', sound)`: the phrase's sounded words one after another."""
    span = len(phrase)
    return span > 0 and any(sequence[start : start + span] == phrase for start in range(len(sequence) - span + 1))


class NameTerm(NamedTuple):
    """One word of a customer's name: found as a prefix of a wine's sounded words, by its sound or (when it
    has three consonants) by its skeleton."""

    sound: str
    prefixes: tuple[str, ...]

    def found_in(self, words: Iterable[str]) -> bool:
        return any(word.startswith(prefix) for word in words for prefix in self.prefixes)


class NameQuery(NamedTuple):
    """`sommelier_sound_query`: every term must be found; a name of four terms or more may miss one."""

    terms: tuple[NameTerm, ...]

    def matched_terms(self, words: frozenset[str]) -> int:
        return sum(term.found_in(words) for term in self.terms)

    def matches(self, words: frozenset[str]) -> bool:
        if not self.terms:
            return False  # an empty query matches nothing
        allowed_misses = 1 if len(self.terms) >= 4 else 0
        return self.matched_terms(words) >= len(self.terms) - allowed_misses


@cache
def name_query(value: str) -> NameQuery:
    terms: list[NameTerm] = []
    for sounded in sorted({sound(token) for token in tokens(value)}):
        if len(sounded) < 3 or " " in sounded:
            continue
        prefix = _LAST_VOWEL.sub(r"\1", sounded)
        consonants = skeleton(sounded)
        prefixes = (prefix, consonants) if len(consonants) >= 4 else (prefix,)
        terms.append(NameTerm(sounded, prefixes))
    return NameQuery(tuple(terms))


def sound_phrase(value: str) -> tuple[str, ...]:
    """`phraseto_tsquery('simple', sommelier_sound(value))`: the sounded words in order."""
    return tuple(sound(value).split())
