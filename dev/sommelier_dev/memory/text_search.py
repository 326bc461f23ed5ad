"""PostgreSQL's text search as the catalogue's SQL uses it (toolfn/search.py), in Python.

Two configurations: simple (each word lower-cased, as written) and russian, whose dictionaries stem a
Latin word with the English Snowball stemmer and any other with the Russian one (the language layer's,
sommelier.language.stem), each after its own stop words. A stop word keeps its place in a phrase, as in
PostgreSQL: «Côtes du Rhône» and «Cote du Rhone» are three places each. Which words a wine has is decided
here; how PostgreSQL ranks them (ts_rank) is not reproduced (the contract tests fix only what matches).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from functools import cache

from sommelier import language

# PostgreSQL's parser splits on everything but letters and digits (an underscore splits too).
_TOKEN = re.compile(r"[^\W_]+")

# The stop words of PostgreSQL's dictionaries (share/tsearch_data/english.stop and russian.stop).
ENGLISH_STOP_WORDS = frozenset(
    """
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
hers herself it its itself they them their theirs themselves what which who whom this that these
those am is are was were be been being have has had having do does did doing a an the and but if or
because as until while of at by for with about against between into through during before after
above below to from up down in out on off over under again further then once here there when where
why how all any both each few more most other some such no nor not only own same so than too very s
t can will just don should now
""".split()
)
RUSSIAN_STOP_WORDS = frozenset(
    """
и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было
вот от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до вас
нибудь опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем
была сам чтоб без будто чего раз тоже себе под будет ж тогда кто этот того потому этого какой совсем
ним здесь этом один почти мой тем чтобы нее сейчас были куда зачем всех никогда можно при наконец
два об другой хоть после над больше тот через эти нас про всего них какая много разве три эту моя
впрочем хорошо свою этой перед иногда лучше чуть том нельзя такой им более всегда конечно всю между
""".split()
)

Lexemes = tuple[str | None, ...]  # a text's words in order; None where a stop word stood

_per_thread = threading.local()


def _english_stem(word: str) -> str:
    """The English Snowball stem; one stemmer per thread (a stemmer keeps its word in the instance)."""
    stemmer = getattr(_per_thread, "english", None)
    if stemmer is None:
        import snowballstemmer

        stemmer = _per_thread.english = snowballstemmer.stemmer("english")
    stem: str = stemmer.stemWord(word)
    return stem


@cache
def russian_lexeme(token: str) -> str | None:
    """One lower-case token as the russian configuration stores it, or None for a stop word."""
    if any(character.isdigit() for character in token):
        return token  # a number or a word with digits: kept as written
    if token.isascii():
        return None if token in ENGLISH_STOP_WORDS else _english_stem(token)
    return None if token in RUSSIAN_STOP_WORDS else language.stem(token)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def russian(text: str) -> Lexemes:
    """to_tsvector('russian', text): the words, in order."""
    return tuple(russian_lexeme(token) for token in tokens(text))


def simple(text: str) -> Lexemes:
    """to_tsvector('simple', text): every word as written, lower-cased."""
    return tuple(tokens(text))


def phrase(text: str) -> Lexemes:
    """phraseto_tsquery('russian', text): the words in order, stop words kept as gaps inside the phrase."""
    words = list(russian(text))
    while words and words[0] is None:
        words.pop(0)
    while words and words[-1] is None:
        words.pop()
    return tuple(words)


def has_phrase(words: Lexemes, wanted: Lexemes) -> bool:
    """words @@ phrase: the phrase's words one after another (a gap matches any word)."""
    if not wanted:
        return False
    span = len(wanted)
    return any(
        all(want is None or words[start + offset] == want for offset, want in enumerate(wanted))
        for start in range(len(words) - span + 1)
    )


def all_words(text: str) -> frozenset[str]:
    """plainto_tsquery('russian', text): every word the query needs (empty: only stop words)."""
    return frozenset(word for word in russian(text) if word is not None)


def lexeme_set(*texts: Lexemes) -> frozenset[str]:
    return frozenset(word for words in texts for word in words if word is not None)


def joined(parts: Sequence[str]) -> str:
    """array_to_string(parts, ' ')."""
    return " ".join(parts)
