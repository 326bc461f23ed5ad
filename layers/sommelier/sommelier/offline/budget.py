"""How a message states a budget: amounts in digits or words («до 3000», «1500-2000», «от 1 до 2 тысяч»,
«около 3к», «тысяч до пяти», «в пределах пятёрки»), a price level in words («бюджетное», «премиальное»), a
move from the prices shown («подешевле», «подороже»), and an order by price («самое дорогое»). The words are
budget.json's; the grammar of how they combine with numbers is here."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sommelier import language
from sommelier.offline.intent import PriceDirection
from sommelier.offline.message import Spans
from sommelier.offline.negations import negated

# The prices the level words mean (budget.json `levels`; the structure words of a wine use the same ones).
_LEVELS = language.data("budget.json")["levels"]
CHEAP_PRICE_MAX = _LEVELS["cheap"]["max"]
SOLID_PRICE_MIN = _LEVELS["solid"]["min"]
PREMIUM_PRICE_MIN = _LEVELS["premium"]["min"]
APPROX_LOW, APPROX_HIGH = 0.75, 1.25  # "около 3к" → 2250..3750

_BUDGET = language.data("budget.json")
_NUMERALS = _BUDGET["numerals"]
_UNITS = _BUDGET["units"]
_RELATIONS = _BUDGET["relations"]
_THOUSAND_WORDS: dict[str, float] = _NUMERALS["thousands"]
_HUNDRED_WORDS: dict[str, float] = _NUMERALS["hundreds"]
# Number words that alone, after "до"/"за"/"около"…, mean thousands ("до пяти", "около полутора").
_BARE_THOUSANDS = {w: v for w, v in _THOUSAND_WORDS.items() if v >= 1.5 and w not in _NUMERALS["not_alone"]}
# Slang for round sums: "в пределах пятёрки", "трёшка", "десятка" (stems).
_SLANG_THOUSANDS: dict[str, float] = _NUMERALS["slang_thousands"]
_THOUSAND_UNITS = {language.normalize(u) for u in (*_UNITS["thousand_words"], *_UNITS["thousand_short"])}
_MONEY_UNITS = {language.normalize(u) for u in _UNITS["money"]}
_THOUSAND_WORD = language.alternation(_UNITS["thousand_words"])
_NUMBER_WORD = language.alternation(_THOUSAND_WORDS)
_UNIT_FIRST = {language.normalize(p): rel for rel, phrases in _RELATIONS["unit_first"].items() for p in phrases}
_AMOUNT = re.compile(
    r"(?<![\w.,])(?:"
    r"(?P<n>\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
    r"(?:\s*(?P<u>" + language.alternation(_THOUSAND_UNITS | _MONEY_UNITS, word_start=False) + r"))?"
    # "двух с половиной (тысяч)"
    r"|(?P<half>"
    + _NUMBER_WORD
    + r")\s+"
    + language.alternation([_NUMERALS["half"]])
    + r"(?:\s+"
    + _THOUSAND_WORD
    + r")?"
    # the unit first: "тысяч до пяти", "тысячи за три"
    r"|" + _THOUSAND_WORD + r"\s+(?P<rel>" + language.alternation(_UNIT_FIRST) + r")\s+(?P<after>" + _NUMBER_WORD + r")"
    # the unit first, then digits: "тысяч 5", "тысячи до 3"
    r"|"
    + _THOUSAND_WORD
    + r"\s+(?:(?P<rel_n>"
    + language.alternation(_UNIT_FIRST)
    + r")\s+)?(?P<after_n>\d{1,2}(?:[.,]5)?)(?!\d|[.,]\d)"
    # "две тысячи", "тысячи трёхсот", "две тысячи пятьсот": thousands and the hundreds after them
    r"|(?:(?P<w>" + _NUMBER_WORD + r")\s+)?(?P<th>" + _THOUSAND_WORD + r")"
    r"(?:\s+(?P<h2>" + language.alternation(_HUNDRED_WORDS) + r"))?"
    r"|(?P<h>" + language.alternation(_HUNDRED_WORDS) + r")"
    r"|(?P<slang>(?:" + "|".join(map(re.escape, _SLANG_THOUSANDS)) + r")[а-я]*)"
    r"|(?P<bare>" + language.alternation(_BARE_THOUSANDS) + r")"
    r")(?:\s*(?P<money>" + language.alternation(_MONEY_UNITS, word_start=False) + r"))?"
)
# What may not follow a number that is a price, and what says the number before is a year.
_NOT_PRICE_AFTER = re.compile(r"^\s*" + language.alternation(_UNITS["not_price"]))
_YEAR_BEFORE = re.compile(language.alternation(_UNITS["year_before"]) + r"\s*$")
_THAN = r"\s*(?:" + language.alternation([_RELATIONS["than"]]) + r"\s*)?$"
_BEFORE_RULES: list[tuple[str, re.Pattern[str]]] = [
    (name, re.compile(language.alternation(phrases) + _THAN)) for name, phrases in _RELATIONS["before"]
]
_AFTER_RULES: list[tuple[str, re.Pattern[str]]] = [
    (name, re.compile(r"^\s*" + language.alternation(phrases))) for name, phrases in _RELATIONS["after"]
]
_RANGE_DASH = re.compile(r"^\s*[-–—]\s*$")
_RANGE_TO = re.compile(r"^\s*" + language.alternation([_RELATIONS["range_to"]]) + r"\s*$")
_RANGE_FROM = re.compile(r"(?:^|\s)" + language.alternation([_RELATIONS["range_from"]]) + r"\s*$")

_CHEAP = language.cues("budget.json", "cheap")
_PREMIUM = language.cues("budget.json", "premium")
_SOLID = language.cues("budget.json", "solid")
_CHEAPER = language.cues("budget.json", "cheaper")
_DEAREST = language.cues("budget.json", "dearest")
_CHEAPEST = language.cues("budget.json", "cheapest")
_BEST_WITHIN = language.cues("budget.json", "best_within")
_PRICIER = language.cues("budget.json", "pricier")


@dataclass
class _Amount:
    start: int
    end: int
    value: float
    thousand_unit: bool
    money_unit: bool
    relation: str | None = None  # said inside the amount: "тысяч до пяти"
    bare: bool = False  # a number word alone ("до пяти"): a price only after a relation word


def _amounts(raw: str) -> list[_Amount]:
    found: list[_Amount] = []
    for m in _AMOUNT.finditer(raw):
        if m.group("n"):
            number = float(re.sub(r"[ \u00a0\u202f]", "", m.group("n")).replace(",", "."))
            unit = language.normalize(m.group("u") or "")
            thousand = unit in _THOUSAND_UNITS
            money = bool(unit) and not thousand or bool(m.group("money"))
            if thousand and number < 1000:
                number *= 1000
        elif m.group("half"):
            found.append(_Amount(m.start(), m.end(), 1000.0 * (_THOUSAND_WORDS[m.group("half")] + 0.5), True, True))
            continue
        elif m.group("after"):
            relation = _UNIT_FIRST[language.normalize(m.group("rel"))]
            value = 1000.0 * _THOUSAND_WORDS[m.group("after")]
            found.append(_Amount(m.start(), m.end(), value, True, True, relation=relation))
            continue
        elif m.group("after_n"):
            relation = _UNIT_FIRST[language.normalize(m.group("rel_n"))] if m.group("rel_n") else None
            value = 1000.0 * float(m.group("after_n").replace(",", "."))
            found.append(_Amount(m.start(), m.end(), value, True, True, relation=relation))
            continue
        elif m.group("slang"):
            stem_ = next(k for k in _SLANG_THOUSANDS if m.group("slang").startswith(k))
            found.append(_Amount(m.start(), m.end(), 1000.0 * _SLANG_THOUSANDS[stem_], True, True))
            continue
        elif m.group("bare"):
            found.append(_Amount(m.start(), m.end(), 1000.0 * _BARE_THOUSANDS[m.group("bare")], True, True, bare=True))
            continue
        elif m.group("th"):
            number = 1000.0 * _THOUSAND_WORDS.get(m.group("w") or "", 1) + _HUNDRED_WORDS.get(m.group("h2") or "", 0)
            thousand, money = True, True
        else:
            number = float(_HUNDRED_WORDS[m.group("h")])
            thousand, money = False, True
        found.append(_Amount(m.start(), m.end(), number, thousand, money))
    return found


def _read_price(raw: str, spans: Spans) -> tuple[float | None, float | None]:
    """Price bounds stated with numbers: a range («1500-2000», «от 1 до 2 тысяч») sets both, then each
    other amount bounds the price the way the words around it say («до 3000», «от 2к», «около 3к»)."""
    amounts = _amounts(raw)
    price_min: float | None = None
    price_max: float | None = None
    used: set[int] = set()
    for i in range(len(amounts) - 1):
        bounds = _range_between(raw, amounts[i], amounts[i + 1])
        if bounds is None:
            continue
        price_min, price_max = bounds
        used.update((i, i + 1))
        spans.add(amounts[i].start, amounts[i + 1].end)
    for i, amount in enumerate(amounts):
        if i in used:
            continue
        relation = _single_price_relation(raw, amount)
        if relation is None:
            continue
        spans.add(amount.start, amount.end)
        price_min, price_max = _bound_by(relation, amount.value, price_min, price_max)
    return price_min, price_max


def _has_unit(*amounts: _Amount) -> bool:
    return any(a.money_unit or a.thousand_unit for a in amounts)


def _range_between(raw: str, a: _Amount, b: _Amount) -> tuple[float, float] | None:
    """(low, high) when two neighbouring amounts make a range: "1500-2000", "1-2 тысячи", "от 1 до 2 тысяч"."""
    between = raw[a.end : b.start]
    is_dash = bool(_RANGE_DASH.match(between))
    is_from_to = bool(_RANGE_TO.match(between)) and bool(_RANGE_FROM.search(raw[max(0, a.start - 10) : a.start]))
    if not (is_dash or is_from_to):
        return None
    low, high = a.value, b.value
    if b.thousand_unit and not a.thousand_unit and low < 100:
        low *= 1000  # "1-2 тысячи": the unit of the second number is the first's too
    # Small numbers are no prices ("2-3 бокала"); a bare dash between plain numbers needs a price's size.
    if high < 100 or (not is_from_to and not _has_unit(a, b) and high < 300):
        return None
    return (high, low) if low > high else (low, high)


def _single_price_relation(raw: str, amount: _Amount) -> str | None:
    """How one amount bounds the price: the relation the words around it say ("до" → "max", "от" → "min"),
    else "approx" (a sum alone, "около 3к"). None when the number is not a price at all."""
    before, after = raw[max(0, amount.start - 40) : amount.start], raw[amount.end : amount.end + 40]
    if _NOT_PRICE_AFTER.match(after) and not _has_unit(amount):
        return None
    relation = amount.relation or _stated_relation(before, after)
    if amount.bare and relation is None:
        return None  # "три бутылки", "на двух": a number, not a budget
    if not _has_unit(amount) and not _plain_number_is_price(amount.value, relation, before):
        return None
    return relation or "approx"


def _stated_relation(before: str, after: str) -> str | None:
    """The relation word before the amount ("до", "не дороже"), else after it ("и меньше")."""
    for name, pattern in _BEFORE_RULES:
        if pattern.search(before):
            return name
    for name, pattern in _AFTER_RULES:
        if pattern.match(after):
            return name
    return None


def _plain_number_is_price(value: float, relation: str | None, before: str) -> bool:
    """A number without a money or thousand unit is a price only when it is big enough and no year."""
    if value < 100:
        return False  # "до 5", "18 градусов": not a price
    if 1900 <= value <= 2035 and (relation is None or _YEAR_BEFORE.search(before)):
        return False  # a vintage year, not a price
    return relation is not None or value >= 300


def _bound_by(
    relation: str, value: float, price_min: float | None, price_max: float | None
) -> tuple[float | None, float | None]:
    """The bounds after one more amount: a "max" or "min" narrows its bound, an approximate sum sets both."""
    if relation == "max":
        return price_min, (value if price_max is None else min(price_max, value))
    if relation == "min":
        return (value if price_min is None else max(price_min, value)), price_max
    return round(value * APPROX_LOW), round(value * APPROX_HIGH)


def _price_words(t: str, spans: Spans) -> tuple[float | None, float | None]:
    """Price bounds said in words: "бюджетное" → max, "премиальное"/"солидное" → min."""
    m = _CHEAP.search(t)
    if m and not spans.covers(m.start_char, m.end_char):
        spans.add(m.start_char, m.end_char)
        return None, CHEAP_PRICE_MAX
    m = _PREMIUM.search(t)
    if m and not negated(t, m.start_char) and not spans.covers(m.start_char, m.end_char):
        spans.add(m.start_char, m.end_char)
        return PREMIUM_PRICE_MIN, None
    m = _SOLID.search(t)
    if m and not negated(t, m.start_char) and not spans.covers(m.start_char, m.end_char):
        spans.add(m.start_char, m.end_char)
        return SOLID_PRICE_MIN, None
    return None, None


_DIRECTIONS: tuple[tuple[PriceDirection, language.Cues], ...] = (("cheaper", _CHEAPER), ("pricier", _PRICIER))


def read_budget(raw: str, t: str, spans: Spans) -> tuple[float | None, float | None, PriceDirection | None]:
    """(price_min, price_max, direction): a price stated with numbers; else a move from the previous prices
    ("подешевле", "подороже"); else a price level in words ("бюджетное", "премиальное")."""
    price_min, price_max = _read_price(raw, spans)
    if price_min is not None or price_max is not None:
        return price_min, price_max, None
    for direction, cues in _DIRECTIONS:
        m = cues.search(t)
        if m and not spans.covers(m.start_char, m.end_char):
            spans.add(m.start_char, m.end_char)
            return None, None, direction
    price_min, price_max = _price_words(t, spans)
    return price_min, price_max, None


def price_filters(price_min: float | None, price_max: float | None) -> dict[str, Any]:
    """The bounds as filters; a floor above the ceiling is dropped and the ceiling kept."""
    filters: dict[str, Any] = {}
    if price_min is not None:
        filters["price_min"] = round_price(price_min)
    if price_max is not None:
        filters["price_max"] = round_price(price_max)
    if "price_min" in filters and "price_max" in filters and filters["price_min"] > filters["price_max"]:
        del filters["price_min"]
    return filters


def round_price(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(float(value), 2)


def read_superlative(t: str, spans: Spans) -> str | None:
    """«самое дорогое» → price_desc, «самое дешёвое» → price_asc: an order, not a price level; «лучшее» is
    "best_within" (the dearest first, when a budget caps it)."""
    for value, cues in (("price_desc", _DEAREST), ("price_asc", _CHEAPEST), ("best_within", _BEST_WITHIN)):
        m = cues.search(t)
        if m and not negated(t, m.start_char):
            spans.add(m.start_char, m.end_char)
            return value
    return None
