"""Phrase matching on stems: an index of phrases (any number of words) → values that finds the longest
non-overlapping phrases in a text at word boundaries, never inside a word («паста» is not in
«антипасто»), and the cue lists of the data files built on it. A misspelt word («мальбэк») is caught by
rapidfuzz when it is installed (it is not in the Lambda layer: the tool function matches exact stems)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from typing import Any, NamedTuple

from sommelier.language.morphology import lemmas
from sommelier.language.text import LINKING, PRONOUNS, WORD, fold, normalize, stem, words
from sommelier.language.vocabulary import data

FUZZY_MIN_SCORE = 84
FUZZY_MIN_LENGTH = 5


class Match(NamedTuple):
    start: int  # word index in the text
    end: int
    value: Any
    phrase: str  # the vocabulary phrase that matched
    start_char: int = 0  # where the words are in the text as given
    end_char: int = 0


class PhraseIndex:
    """Phrases (any number of words) → values; finds the longest non-overlapping phrases in a text.
    Words match on their stems, or as written with `exact` (for words whose stem is another word's)."""

    def __init__(self, entries: dict[str, Any], *, exact: bool = False):
        self._key: Callable[[str], str] = _as_written if exact else stem
        self._by_stems: dict[tuple[str, ...], list[tuple[str, Any]]] = {}
        self._longest = 1
        for phrase, value in entries.items():
            key = tuple(self._key(w) for w in words(phrase) if w not in LINKING) or tuple(
                self._key(w) for w in words(phrase)
            )
            if not key:
                continue
            self._by_stems.setdefault(key, []).append((phrase, value))
            self._longest = max(self._longest, len(key))
        self._single_words = sorted({normalize(p) for p in entries if len(words(p)) == 1 and len(p) >= 4})

    def find(self, text: str, *, fuzzy: bool = False) -> list[Match]:
        if not self._by_stems:
            return []
        tokens, offsets, keep = _tokens(text)
        content = [self._key(tokens[i]) for i in keep]
        found: list[Match] = []
        i = 0
        while i < len(content):
            for size in range(min(self._longest, len(content) - i), 0, -1):
                hit = self._by_stems.get(tuple(content[i : i + size]))
                if hit and size == 1 and self._key is stem and tokens[keep[i]] in PRONOUNS:
                    hit = [(p, v) for p, v in hit if normalize(p) == tokens[keep[i]]]  # only the pronoun itself
                if hit:
                    first, last = keep[i], keep[i + size - 1]
                    for phrase, value in hit:
                        found.append(Match(first, last + 1, value, phrase, offsets[first][0], offsets[last][1]))
                    i += size
                    break
            else:
                if fuzzy:
                    guess = self._lemma(tokens[keep[i]]) or self._fuzzy(tokens[keep[i]])
                    if guess is not None:
                        at = keep[i]
                        for phrase, value in self._by_stems[(self._key(guess),)]:
                            found.append(Match(at, at + 1, value, phrase, offsets[at][0], offsets[at][1]))
                i += 1
        return found

    def _lemma(self, word: str) -> str | None:
        """The dictionary form of a word whose cases the stemmer splits («гусь» → «гу», «гусю» → «гус»;
        «лосось»/«лососю», «ягнёнок»/«ягнёнку»), when that form is in the index. pymorphy3 is loaded here,
        for requests only (fuzzy), and only for a word nothing else matched."""
        if self._key is not stem or len(word) < 3 or not word.isalpha():
            return None
        for lemma in lemmas(word):
            if lemma != word and (self._key(lemma),) in self._by_stems:
                return lemma
        return None

    def _fuzzy(self, word: str) -> str | None:
        if len(word) < FUZZY_MIN_LENGTH or not self._single_words:
            return None
        try:
            from rapidfuzz import fuzz, process
        except ImportError:  # not in the Lambda layer; exact stems still match there
            return None
        best = process.extractOne(word, self._single_words, scorer=fuzz.ratio, score_cutoff=FUZZY_MIN_SCORE)
        return best[0] if best else None


@lru_cache(maxsize=64)
def _tokens(text: str) -> tuple[tuple[str, ...], tuple[tuple[int, int], ...], tuple[int, ...]]:
    """The words of a text, their offsets and which of them are not linking words (cached: a message is
    matched against a dozen word lists in a row)."""
    # Lower case and ё→е keep every character where it was: the offsets point into `text`.
    found = list(WORD.finditer(fold(text)))
    tokens = tuple(m.group(0) for m in found)
    keep = tuple(i for i, w in enumerate(tokens) if w not in LINKING)
    return tokens, tuple((m.start(), m.end()) for m in found), keep


def _as_written(word: str) -> str:
    return word


class Cues:
    """Words and phrases → values, matched on stems at word boundaries, except `exact` ones (as written)."""

    def __init__(self, entries: dict[str, Any], exact: frozenset[str] = frozenset()):
        self._stemmed = PhraseIndex({p: v for p, v in entries.items() if normalize(p) not in exact})
        self._exact = PhraseIndex({p: v for p, v in entries.items() if normalize(p) in exact}, exact=True)

    def find(self, text: str) -> list[Match]:
        """Every match, in text order (a stemmed and an exact match may overlap)."""
        found = self._stemmed.find(text) + self._exact.find(text)
        return sorted(found, key=lambda m: (m.start_char, -m.end_char))

    def search(self, text: str) -> Match | None:
        found = self.find(text)
        return found[0] if found else None

    def covers(self, text: str) -> bool:
        """The text has words and every one of them is one of the cues («да, покажи» for the yes-words)."""
        return bool(words(text)) and not words(self.remove(normalize(text)))

    def remove(self, text: str) -> str:
        """The text with every match blanked out (the same length, so offsets hold)."""
        return blank_out(text, self.find(text))


def blank_out(text: str, matches: Iterable[Match]) -> str:
    """The text with each match's characters replaced by spaces: the same length, so offsets still hold."""
    for m in matches:
        text = text[: m.start_char] + " " * (m.end_char - m.start_char) + text[m.end_char :]
    return text


@cache
def cues(file: str, name: str) -> Cues:
    """A cue list of a data file (`{"words": [...], "forms": [...]}`): words in any inflection, forms as written."""
    spec = data(file)[name]
    entries = {phrase: name for phrase in (*spec["words"], *spec["forms"])}
    return Cues(entries, frozenset(normalize(f) for f in spec["forms"]))
