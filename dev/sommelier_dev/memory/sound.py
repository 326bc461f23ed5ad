"""How a name sounds, for the in-memory catalogue: the words and the name query of migrations 0010 and 0011
(`sommelier_sound_words`, `sommelier_sound_query`) on the sound key the layer defines (sommelier.language.sound),
so that it finds «Шато Латур» under «Château Latour» as the SQL does. The SQL functions are the definition;
tests/contract checks the two against each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import NamedTuple

from sommelier.language.sound import skeleton, sound, word_prefixes

from sommelier_dev.memory.text_search import tokens

__all__ = ["has_sound_phrase", "name_query", "skeleton", "sound", "sound_phrase", "sound_sequence", "sound_words"]


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
        terms.append(NameTerm(sounded, word_prefixes(sounded)))
    return NameQuery(tuple(terms))


def sound_phrase(value: str) -> tuple[str, ...]:
    """`phraseto_tsquery('simple', sommelier_sound(value))`: the sounded words in order."""
    return tuple(sound(value).split())
