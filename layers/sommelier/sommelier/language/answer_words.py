"""The words a written sentence is checked for (language/data/answer_checks.json): claims nobody may make
(stock counts, discounts, promo codes, delivery, online sale), other shops, instructions planted in a catalogue
text; and the contacts (links, @handles, e-mail addresses, phone numbers) and numbers (prices, years,
percentages, volumes, quantities) a text carries. Used by the agent's answer checks and by the importer's
report; plain Python on the vocabulary, so either can read it.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from sommelier.language.text import normalize
from sommelier.language.vocabulary import data

# Contacts: what a link, a handle, an e-mail address or a phone number looks like in any language.
_URL = re.compile(
    r"(?:https?://|www\.|tg://)\S+|\b[\w-]+(?:\.[\w-]+)*\.(?:ru|рф|com|net|org|info|shop|store|wine|su|by|kz|io|me|ly|link|site|online)\b(?:/\S*)?",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")
_HANDLE = re.compile(r"(?<![\w@])@[A-Za-z][A-Za-z0-9_]{3,}\b")
_PHONE = re.compile(r"(?<![\w+])(?:\+7|8)[\s(-]*\d{3}[\s)-]*\d{3}[\s-]*\d{2}[\s-]*\d{2}(?!\d)|\+\d[\d\s()-]{8,}\d")
_PROMO_TOKEN = re.compile(r"\b(?=[A-ZА-ЯЁ0-9]*\d)(?=[A-ZА-ЯЁ0-9]*[A-ZА-ЯЁ])[A-ZА-ЯЁ0-9]{4,}\b")


def contacts(text: str) -> list[str]:
    """The links, e-mail addresses, @handles and phone numbers in a text, as written."""
    found: list[str] = []
    for pattern in (_EMAIL, _URL, _HANDLE, _PHONE):
        found += [m.group(0).rstrip(".,;:!?)»") for m in pattern.finditer(text)]
    return found


def promo_tokens(text: str) -> list[str]:
    """Code-like tokens: capitals mixed with digits («VINO20»)."""
    return _PROMO_TOKEN.findall(text)


def _phrase_pattern(phrase: str) -> str:
    parts = []
    for word in phrase.split():
        if word == "#":
            parts.append(r"\d[\d\s.,]*")
        elif word.endswith("*"):
            parts.append(re.escape(normalize(word[:-1])) + r"[\w-]*")
        else:
            parts.append(re.escape(normalize(word)))
    return (
        r"(?<![\w-])" + r"\s+".join(parts) + r"(?![\w])"
        if not phrase.endswith("*")
        else r"(?<![\w-])" + r"\s+".join(parts)
    )


@cache
def _compiled(group: str, key: str) -> re.Pattern[str]:
    phrases = data("answer_checks.json")[group][key]
    return re.compile("|".join(f"(?:{_phrase_pattern(p)})" for p in phrases), re.IGNORECASE)


def claim(text: str) -> str | None:
    """The kind of claim a sentence makes that only the shop may make (stock, discount, promo, delivery,
    online), or None."""
    folded = normalize(text)
    for kind in data("answer_checks.json")["claims"]:
        if _compiled("claims", kind).search(folded):
            return str(kind)
    return None


_QUOTED = re.compile(r"«([^«»]{2,60})»|\"([^\"]{2,60})\"|“([^“”]{2,60})”")


def other_shop(text: str, ours: list[str]) -> str | None:
    """Another shop named in a sentence: a known chain, or a quoted name next to a shop word or a «go there»
    comparison, that is not one of ``ours`` (the shop's own name, the shown wines and producers)."""
    folded = normalize(text)
    own = [normalize(name) for name in ours if name]
    for name in data("answer_checks.json")["competitors"]["known"]:
        key = normalize(name)
        if re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", folded) and not any(key in o for o in own):
            return str(name)
    cue = _compiled("competitors", "store_words").search(folded) or _compiled("competitors", "redirect_words").search(
        folded
    )
    if cue is None:
        return None
    for match in _QUOTED.finditer(text):
        quoted = normalize(next(g for g in match.groups() if g))
        if not any(quoted in o or o in quoted for o in own if o):
            return quoted
    return None


def reads_like_instruction(text: str) -> bool:
    """A catalogue text addressed to the assistant: an instruction marker («ВАЖНО ДЛЯ СОМЕЛЬЕ:», «ignore
    previous instructions»), or an imperative next to a word that names the assistant."""
    folded = normalize(text)
    if _compiled("instructions", "markers").search(folded):
        return True
    return bool(_compiled("instructions", "imperatives").search(folded)) and bool(
        _compiled("instructions", "addressed").search(folded)
    )


class Number(NamedTuple):
    value: float
    kind: str  # "money", "percent", "volume", "quantity", "year", "bare"
    text: str


_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+|\d+)(?:[.,](\d+))?(?![\d])")


@cache
def _unit_pattern() -> re.Pattern[str]:
    budget = data("budget.json")["units"]
    units = data("answer_checks.json")["units"]
    groups = {
        "thousand": [*budget["thousand_words"], *budget["thousand_short"]],
        "money": budget["money"],
        "percent": units["percent"],
        "volume": units["volume"],
        "quantity": units["quantity"],
    }
    alternatives = []
    for kind, words in groups.items():
        body = "|".join(
            re.escape(w[:-1]) + r"[\w-]*"
            if w.endswith("*")
            else re.escape(w) + (r"(?![\w])" if w[-1].isalnum() else "")
            for w in sorted(words, key=len, reverse=True)
        )
        alternatives.append(f"(?P<{kind}>{body})")
    return re.compile(r"\s?(?:" + "|".join(alternatives) + ")", re.IGNORECASE)


def numbers(text: str) -> list[Number]:
    """The numbers of a text with what they count: money (₽, руб, «2 тыс.»), percent, volume, quantity, a year
    (1900–2099 standing alone) or bare."""
    found: list[Number] = []
    pattern = _unit_pattern()
    for match in _NUMBER.finditer(text):
        whole = re.sub(r"\D", "", match.group(1))
        value = float(f"{whole}.{match.group(2)}") if match.group(2) else float(whole)
        unit = pattern.match(text, match.end())
        kind = "bare"
        if unit is not None:
            kind = next(k for k, v in unit.groupdict().items() if v)
            if kind == "thousand":
                value, kind = value * 1000, "money"
                after = pattern.match(text, unit.end())
                if after is not None and after.lastgroup not in (None, "money"):
                    kind = "bare"
        elif match.group(2) is None and 1900 <= value <= 2099:
            kind = "year"
        found.append(Number(value, kind, match.group(0)))
    return found
