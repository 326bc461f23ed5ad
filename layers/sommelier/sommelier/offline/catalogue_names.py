"""The words of a message that may be a wine's own name in this shop's catalogue: a producer, a brand or a
cuvée no vocabulary knows («trapiche sauvignon blanc», «паддл крик совиньон», «есть шумринка?»). The reader
knows the famous names and the appellations (named_wines.json, appellations.json); a shop's own names are
only in its catalogue, so the responder asks the catalogue's name search for these words and believes it
only when a wine bears every one of them (offline/named_answers.py).

A message's words are of three sorts: words the vocabulary explains (a colour, a price, a dish, a question
word: «красное», «до», «есть»), words of a name the vocabulary knows (a grape, an appellation, a region, a
house word such as «Шато» or «Усадьба», a name particle such as «ди») and the rest, the free words. A run of
name words and free words with a free word in it is a candidate name; the free words alone are another.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, NamedTuple

from sommelier import language
from sommelier.language.morphology import known_word, parts_of_speech
from sommelier.offline.message import WORD

MAX_NAME_WORDS = 5  # a longer run is a sentence, not a wine's name
MAX_RUNS = 2  # a message names one or two wines; more runs of free words are a sentence
MIN_FREE_WORD = 4  # «вот», «там»: shorter free words are grammar the vocabulary does not list
# The data files whose words explain a message (their prose, `_about`, aside): what a customer says around
# a name — questions, prices, occasions, dishes, styles — and the words wines' names share with the wine
# knowledge («нуар», «классико», «долина»), never a shop's own name.
_PLAIN_WORD_FILES = (
    "grapes.json",
    "regions.json",
    "countries.json",
    "appellations.json",
    "legal_words.json",
    "dialogue.json",
    "budget.json",
    "occasions.json",
    "party.json",
    "wine_words.json",
    "dishes.json",
    "dish_styles.json",
    "filter_words.json",
    "structure.json",
)


class NameRun(NamedTuple):
    """Consecutive words of a message that may be a name: all of them, and the free ones among them."""

    words: tuple[str, ...]
    free: tuple[str, ...]


WHOLE_REGION = "region"  # appellations.json `level` of a region, not an appellation


def _walk(node: Any, into: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if not str(key).startswith("_"):
                _walk(key, into)
                _walk(value, into)
    elif isinstance(node, list):
        for item in node:
            _walk(item, into)
    elif isinstance(node, str):
        into.update(language.stem(w) for w in WORD.findall(language.normalize(node)))


@cache
def _plain_stems() -> frozenset[str]:
    """The stems of every word the plain vocabulary holds."""
    stems: set[str] = set()
    for file in _PLAIN_WORD_FILES:
        _walk(language.data(file), stems)
    return frozenset(stems)


@cache
def _house_words() -> frozenset[str]:
    """The words a wine's name shares with many others («шато», «усадьба», «bodega», «ди»): part of a name,
    never a name by themselves."""
    words = [*language.data("named_wines.json")["house_words"], *language.data("dialogue.json")["name_particles"]]
    return frozenset(language.normalize(language.fold_accents(w)) for w in words)


def _name_spans(t: str) -> list[tuple[int, int]]:
    """Where the vocabulary knows a name: grapes, appellations, regions, famous wines."""
    spans = [(m.start_char, m.end_char) for m in language.grape_names_in(t)]
    # A place the table lists as a whole region («Балаклава») names wines as a producer's word does: free.
    spans += [(m.start_char, m.end_char) for m, a in language.appellations_in(t) if a.level != WHOLE_REGION]
    spans += [(m.start_char, m.end_char) for m, _, _ in language.regions_in(t)]
    spans += [(m.start_char, m.end_char) for m, _ in language.named_wines_in(t)]
    return spans


def _explained_spans(t: str) -> list[tuple[int, int]]:
    """Where the vocabulary explains the words otherwise: countries, dishes."""
    spans = [(m.start_char, m.end_char) for m, _ in language.countries_in(t)]
    spans += [(m.start_char, m.end_char) for m in language.dishes_in(t)]
    return spans


def _inside(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(s <= start and end <= e for s, e in spans)


def name_runs(t: str) -> list[NameRun]:
    """The runs of name words and free words in a prepared message, each with a free word of
    MIN_FREE_WORD letters or more; none when the message has more runs than a message names wines."""
    names, explained = _name_spans(t), _explained_spans(t)
    regions = [(m.start_char, m.end_char) for m, a in language.appellations_in(t) if a.level == WHOLE_REGION]
    plain, house = _plain_stems(), _house_words()
    runs: list[NameRun] = []
    words: list[str] = []
    free: list[str] = []

    def close() -> None:
        if words and any(len(w) >= MIN_FREE_WORD for w in free):
            if len(words) <= MAX_NAME_WORDS:
                runs.append(NameRun(tuple(words), tuple(free)))
            elif len(free) <= MAX_NAME_WORDS:  # «мангуп мерло каберне совиньон каберне фран»: «мангуп»
                runs.append(NameRun(tuple(free), tuple(free)))
        words.clear()
        free.clear()

    last_end = 0
    for m in WORD.finditer(t):
        word, start, end = m.group(0), m.start(), m.end()
        if re.search(r"[,.;:!?()«»\"]", t[last_end:start]):
            close()  # punctuation ends a name
        last_end = end
        if word.isdigit() or _inside(start, end, explained):
            close()
        elif _inside(start, end, names) or word in house:
            words.append(word)
        elif (language.stem(word) in plain and not _inside(start, end, regions)) or len(word) < 3:
            close()
        else:
            words.append(word)
            free.append(word)
    close()
    return runs if len(runs) <= MAX_RUNS else []


def _may_be_a_name(word: str) -> bool:
    """A free word that the Russian dictionary knows only as a verb, an adverb or a function word («умножить»,
    «сколько») names no wine; nouns and adjectives may («Красная Горка»), and so may a Latin word or one the
    dictionary does not know («паддл», «шумринка»). Without the dictionary (the Lambda layer): any word."""
    if not _CYRILLIC_WORD.fullmatch(word) or known_word(word) is not True:
        return True
    return bool(set(parts_of_speech(word)) & _NAME_PARTS)


_NAME_PARTS = frozenset({"NOUN", "ADJF", "ADJS", "PRTF"})
_CYRILLIC_WORD = re.compile(r"[а-яё]+")


def candidate_names(t: str) -> list[str]:
    """What to ask the catalogue's name search for, most words first: each run, then its free words alone
    («trapiche sauvignon blanc», then «trapiche»)."""
    found: list[str] = []
    for run in name_runs(t):
        if not any(_may_be_a_name(w) for w in run.free):
            continue
        for words in (run.words, run.free):
            phrase = " ".join(words)
            if words and phrase not in found:
                found.append(phrase)
    return found


def as_written(source: str, phrase: str) -> str:
    """The phrase as the customer wrote it (their capitals and accents), else as read."""
    pattern = r"[\s\-–—_']+".join(re.escape(w) for w in phrase.split())
    folded = language.fold_accents(source).replace("ё", "е").replace("Ё", "Е")
    written = re.search(pattern, folded, re.IGNORECASE) if len(folded) == len(source) else None
    return source[written.start() : written.end()] if written else phrase
