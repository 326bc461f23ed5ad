"""Personal data in a customer's words, masked: e-mail addresses, card numbers, phone numbers, @handles and
profile links, street addresses and people's names (`mask_personal`). What is looked for is data
(`language/data/personal_data.json`: the masks, the street and house words, the phrases that introduce a
name); the words are razdel's tokens, and a name is a word whose likeliest reading in pymorphy3's dictionary
is a first name, a surname or a patronymic (the Name, Surn and Patr grammemes), unless the wine vocabulary
knows it (Мальбек, Санджовезе).

The owner's reports and the logs carry the masked text (docs/shop.md): a masked line still says what was
asked. Without pymorphy3 (the shared Lambda layer does not carry it; the report function does), names are
found by the phrases that introduce them and by a capital letter inside a sentence.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from sommelier.language.text import fold, normalize, stem
from sommelier.language.vocabulary import data

NAME_GRAMMEMES = frozenset({"Name", "Surn", "Patr"})
NAME_MIN_SCORE = 0.3  # a capitalised word inside a sentence is a name when its likeliest reading is one, this sure
LOWER_CASE_NAME_MIN_SCORE = 0.75  # elsewhere the name reading must be near certain (иван, ольги; not лев, роза)
_DIGITS = re.compile(r"\d")


class _Patterns(NamedTuple):
    email: re.Pattern[str]
    card: re.Pattern[str]
    phone: re.Pattern[str]
    grouped_card: re.Pattern[str]
    grouped_phone: re.Pattern[str]
    link: re.Pattern[str]
    handle: re.Pattern[str]
    address: re.Pattern[str]
    house: re.Pattern[str]
    cue: re.Pattern[str]


def _table() -> dict[str, object]:
    table: dict[str, object] = data("personal_data.json")
    return table


def masks() -> dict[str, str]:
    found: dict[str, str] = _table()["masks"]  # type: ignore[assignment]
    return found


def _words(key: str) -> list[str]:
    found: list[str] = _table()[key]  # type: ignore[assignment]
    return found


def _either(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def _inflected(words: list[str]) -> str:
    """Each word in its forms: the word, or its stem before the last letter with a noun's ending of up to three
    letters («улица», «улицу», «улицей»; not «аллергия» for «аллея»)."""
    forms = []
    for word in sorted(words, key=len, reverse=True):
        body = re.escape(word[:-1] if len(word) >= 5 else word).replace("ё", "[её]")
        forms.append(body + r"[а-яё]{0,3}" if len(word) >= 5 else body)
    return rf"(?:{'|'.join(forms)})(?![\w-])"


def _abbreviated(words: list[str]) -> str:
    """An abbreviation as written, with its dot or a space after it («ул.», «ул Ленина», «д.5»)."""
    return rf"(?:{_either(words)})(?:\.|(?=\s))"


@cache
def _patterns() -> _Patterns:
    street = f"{_inflected(_words('street_words'))}|{_abbreviated(_words('street_abbreviations'))}"
    house = f"{_inflected(_words('house_words'))}|{_abbreviated(_words('house_abbreviations'))}"
    hosts = _either(_words("profile_link_hosts"))
    number = r"\d{1,4}[а-яa-z]?\d{0,3}(?:\s?/\s?\d{1,4}[а-яa-z]?)?(?![\d:.,]\d)"
    house_part = rf"(?:(?:{house})\s*№?\s*{number})"
    capital = r"(?-i:[А-ЯЁA-Z0-9])"
    # A street's name: up to three capitalised words («Большая Дмитровка», «8 Марта»), or one word.
    lower = r"[^\W\d][\w\-ёЁ]*"
    street_name = (
        rf"(?:{capital}[\w\-ёЁ.]*(?:\s+(?-i:[А-ЯЁA-Z])[\w\-ёЁ]*){{0,2}}"
        rf"|{lower}(?:\s+{lower})?(?=,?\s*\d)|{lower})"
    )
    return _Patterns(
        email=re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-zа-я]{2,}", re.IGNORECASE),
        # 13 to 19 digits, spaced or dashed in any groups: a payment card's number (before the phone).
        card=re.compile(r"(?<![\d+])\d(?:[ -]?\d){12,18}(?!\d)"),
        # +7 / 8 and ten digits, however grouped; any + and 10-14 digits; a city number 123-45-67.
        phone=re.compile(
            r"(?:\+\s?\d(?:[\s().-]{0,2}\d){9,13}"
            r"|(?<![\d])[78](?:[\s().-]{0,2}\d){10}(?!\d)"
            r"|(?<![\d])\d(?:[\s().-]{0,2}\d){9}(?!\d)"
            r"|(?<![\d-])\d{3}-\d{2}-\d{2}(?![\d-]))"
        ),
        # In a log line a bare run of digits is an id (a chat, a user, an update): only written numbers count.
        grouped_card=re.compile(r"(?<![\d+])\d{4}(?:[ -]\d{4}){2,3}(?:[ -]\d{1,3})?(?![\d])"),
        grouped_phone=re.compile(
            r"(?:\+\s?\d(?:[\s().-]{0,2}\d){9,13}"
            r"|(?<![\d])[78][\s(-]{1,2}\d{3}[\s)-]{1,2}\d{3}[\s-]?\d{2}[\s-]?\d{2}(?!\d)"
            r"|(?<![\d-])\d{3}-\d{2}-\d{2}(?![\d-]))"
        ),
        link=re.compile(rf"(?:https?://)?(?:www\.)?(?:{hosts})/[\w.@+-]+", re.IGNORECASE),
        handle=re.compile(r"(?<![\w@.])@[A-Za-z][A-Za-z0-9_]{3,31}\b"),
        # A street word with the street's name, then its house and flat: «ул. Ленина, д. 5, кв. 12», «пр-т
        # Мира 7к2», or the name first: «Тверская улица, 12».
        address=re.compile(
            rf"(?:(?<![\w-])(?:{street})\s*{street_name}"
            rf"|(?-i:[А-ЯЁ])[\w\-ёЁ]+\s+(?:{street})(?![\w-]))"
            rf"(?:,?\s*{number})?(?:,?\s*{house_part})*",
            re.IGNORECASE,
        ),
        house=re.compile(rf"(?<![\w-]){house_part}(?:,?\s*{house_part})*", re.IGNORECASE),
        cue=re.compile(rf"(?<![\w])(?:{_either(_words('name_cues'))})[\s,:—-]+", re.IGNORECASE),
    )


@cache
def _wine_words() -> frozenset[str]:
    """The stems of the one-word entries of the wine vocabulary (grapes, style words, dishes): never a person."""
    stems: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if not str(key).startswith("_"):
                    walk(key)
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, str) and re.fullmatch(r"[a-zа-я]+", normalize(node)):
            stems.add(stem(normalize(node)))  # one-word entries only: «мария ардонья» is a grape, «Мария» a person

    for name in _words("not_names_from"):
        walk(data(name))
    return frozenset(stems)


def _name_score(word: str) -> float:
    """How likely the dictionary reads this word as a person's name (0 without pymorphy3 or when it is not)."""
    from sommelier.language.morphology import analyser

    morph = analyser()
    if morph is None or not getattr(morph, "word_is_known", lambda _: True)(word):
        return 0.0  # a word the dictionary only guesses at («Сассикайя», «санжовезе») is no one's name
    parses = morph.parse(word)
    if not parses or not (NAME_GRAMMEMES & _grammemes(parses[0].tag)):
        return 0.0
    return float(getattr(parses[0], "score", 1.0))


def _grammemes(tag: object) -> frozenset[str]:
    return frozenset(g for g in NAME_GRAMMEMES if g in tag)  # type: ignore[operator]


def _is_name(word: str, *, inside_sentence: bool) -> bool:
    """A name by the dictionary: likely enough when capitalised inside a sentence (where a capital says
    little else), very likely at a sentence's start or in lower case («лев», «роза» are animals and flowers)."""
    if len(word) < 2 or not word.isalpha() or stem(fold(word)) in _wine_words():
        return False
    from sommelier.language.morphology import analyser

    capital = word[0].isupper() and not word.isupper()
    if analyser() is None:  # no dictionary: a capitalised word inside a sentence
        return capital and inside_sentence
    threshold = NAME_MIN_SCORE if capital and inside_sentence else LOWER_CASE_NAME_MIN_SCORE
    return _name_score(word) >= threshold


_MASKED = re.compile(r"\[[^\[\]]{1,40}\]")
_SENTENCE_END = frozenset({".", "!", "?", "…"})


def _mask_names(text: str) -> str:
    """Names among razdel's tokens: a dictionary name anywhere, and the words a name cue introduces (the
    first whatever its case, then capitalised ones: «меня зовут иван», «с уважением, Анна Петрова»)."""
    from razdel import tokenize

    name_mask = masks()["name"]
    cue_ends = {m.end() for m in _patterns().cue.finditer(text)}
    spans: list[tuple[int, int]] = []
    introduced = 0  # words after a cue taken as the name
    sentence_start = True
    for token in tokenize(text):
        word = token.text
        if token.start in cue_ends:
            introduced = 1
        if not word[:1].isalpha():
            introduced = 0
            sentence_start = word in _SENTENCE_END
            continue
        if introduced and (introduced == 1 or word[0].isupper()) and stem(fold(word)) not in _wine_words():
            spans.append((token.start, token.stop))
            introduced = introduced + 1 if introduced < 3 else 0
        elif _is_name(word, inside_sentence=not sentence_start):
            spans.append((token.start, token.stop))
            introduced = 0
        else:
            introduced = 0
        sentence_start = False
    masked = text
    for begin, end in reversed(spans):
        if not _MASKED.search(text[max(begin - 1, 0) : end + 1]):  # a word of a mask already put there
            masked = masked[:begin] + name_mask + masked[end:]
    return _merge_masks(masked, name_mask)


def _merge_masks(text: str, mask: str) -> str:
    """«[имя] [имя]» → «[имя]»: a first name and a surname are one person."""
    doubled = re.compile(rf"{re.escape(mask)}(?:\s+{re.escape(mask)})+")
    return doubled.sub(mask, text)


def mask_personal(text: str, *, names: bool = True, bare_numbers: bool = True) -> str:
    """The text with personal data replaced by its masks. For a log line: ``names=False`` (the patterns only:
    a log line must not pay for the dictionary) and ``bare_numbers=False`` (a bare run of ten digits or more
    is a chat's or a user's id there; a phone or a card written in groups is still masked)."""
    if not text:
        return text
    found = masks()
    patterns = _patterns()
    masked = patterns.email.sub(found["email"], text)
    masked = patterns.link.sub(found["link"], masked)
    masked = patterns.handle.sub(found["handle"], masked)
    if _DIGITS.search(masked):
        card, phone = (
            (patterns.card, patterns.phone) if bare_numbers else (patterns.grouped_card, patterns.grouped_phone)
        )
        masked = card.sub(found["card"], masked)
        masked = phone.sub(found["phone"], masked)
    masked = patterns.address.sub(found["address"], masked)
    masked = patterns.house.sub(found["address"], masked)
    if names:
        masked = _mask_names(masked)
    return masked
