"""How a name sounds: the sound key of migrations 0010 and 0011 (`sommelier_sound` and its skeleton), in
Python, so that «Шато Латур» and «Château Latour», «паддл крик» and «Paddle Creek» are one name wherever the
project compares names (the in-memory catalogue, the offline responder's check that a wine bears the name
asked for). The SQL functions are the definition; tests/contract checks the two against each other.
"""

from __future__ import annotations

import re
from functools import cache

from sommelier.language.text import LINKING
from sommelier.language.vocabulary import data

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
_TOKEN = re.compile(r"[^\W_]+")
MIN_SKELETON = 4  # a skeleton of fewer letters («zkr») says too little to stand for a word


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


def word_prefixes(sounded: str) -> tuple[str, ...]:
    """What a sounded word is found by (`sommelier_sound_query`): itself without its last vowel as a prefix
    («latura» finds «latur»), and its skeleton when that has enough consonants («sovinen» = «sovinon»)."""
    prefix = _LAST_VOWEL.sub(r"\1", sounded)
    consonants = skeleton(sounded)
    return (prefix, consonants) if len(consonants) >= MIN_SKELETON else (prefix,)


def tokens(text: str) -> list[str]:
    """The words of a text, lower-cased, as PostgreSQL's parser splits them."""
    return _TOKEN.findall(text.lower())


@cache
def _not_name_words() -> frozenset[str]:
    """Words around a name, not of it: «Malbec от Luigi Bosca», «вино Шумринка», «Chateau de Talu»."""
    words = (*data("occasions.json")["stopwords"], *data("dialogue.json")["name_particles"], *LINKING)
    return frozenset(w.lower().replace("ё", "е") for w in words)


def bears_name(name: str, *texts: str) -> bool:
    """Whether the texts (a wine's name, producer, places, grapes) hold every word of a name as a customer
    wrote it, in either script, by its sound: «Cloudy Bay» is not borne by «Cloudy Ridge», nor «Петрюс» by
    «Петроний», though the catalogue's name search (looser: its prefixes and skeletons find misspellings)
    finds them. Numbers and the small words around a name are not its words."""
    skip = _not_name_words()
    words = [sound(t) for t in tokens(name) if not t.isdigit() and t.replace("ё", "е") not in skip]
    words = [w for w in words if w and " " not in w]
    if not words:
        return False
    have = sound(" ".join(texts)).split()
    return all(any(_same_word(word, other) for other in have) for word in words)


MIN_INFLECTED = 6  # «шумринки» is «Шумринка»: a word this long may end in another vowel
MIN_MISSPELT = 4  # «крик» is «Creek» (krik, krek): a word this long may differ in one letter


def _same_word(word: str, other: str) -> bool:
    """One sounded word of a name and one of a wine's: the same word, its beginning, the same word in
    another case, or the same word with one letter misspelt."""
    if len(word) < 3:
        return word == other
    if other.startswith(word):
        return True
    if len(word) >= MIN_INFLECTED and other.startswith(_LAST_VOWEL.sub(r"\1", word)):
        return True
    return len(word) >= MIN_MISSPELT and abs(len(word) - len(other)) <= 1 and _one_edit(word, other)


def _one_edit(left: str, right: str) -> bool:
    """Whether two words differ by at most one letter changed, added or left out (written by hand: the
    Lambda layer ships without rapidfuzz)."""
    if len(left) > len(right):
        left, right = right, left
    i = 0
    while i < len(left) and left[i] == right[i]:
        i += 1
    if len(left) == len(right):
        return left[i + 1 :] == right[i + 1 :]
    return left[i:] == right[i + 1 :]
