"""A rule-based reading of a customer's message (docs/architecture.md, the offline responder).

`read_query(text, previous)` turns a Russian (or English / transliterated) message into a
`QueryIntent`: what kind of message it is, the `search_wines` filters it states, the mood
words for `semantic_search`, a glossary topic for informational questions, and how a short
follow-up ("а подешевле?", "а белое?", "ещё") changes the previous request.

The rules, in order:

1. Greetings, thanks and help requests with nothing else in them are answered as such.
2. A definitional question ("что такое танины", "при какой температуре подавать") is
   informational, even when it mentions wine styles.
3. Type, sweetness, grape and wine words are strong wine cues; price, country, region,
   food and mood are weak ones. A message about something else ("погода", "код",
   "телефон") is off-topic unless it has a strong wine cue; a message without any cue and
   without a request verb is off-topic too.
4. A follow-up (it starts with "а"/"и"/"тогда", asks for "ещё", "другие", "подешевле",
   "подороже", and a previous recommendation exists) keeps the previous filters and mood
   and overrides what it names.

Filter values are the catalogue's words: wine_type/sweetness enums, canonical Russian grape
and country names, Russian region names, a short dish word ("стейк", "рыба").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from sommelier import language

Kind = Literal["recommendation", "greeting", "thanks", "informational", "off_topic", "help"]
PriceDirection = Literal["cheaper", "pricier"]

FILTER_KEYS = (
    "wine_type",
    "sweetness",
    "grape_variety",
    "price_min",
    "price_max",
    "country",
    "region",
    "food_pairing",
    "exclude_wine_type",
    "exclude_sweetness",
    "exclude_country",
    "exclude_grape",
    "exclude_region",
    "sort",
)
# A value asked for and the same kind of value ruled out: naming one takes back the other.
EXCLUSIONS = {
    "wine_type": "exclude_wine_type",
    "sweetness": "exclude_sweetness",
    "country": "exclude_country",
    "grape_variety": "exclude_grape",
    "region": "exclude_region",
}

# The prices the level words mean (budget.json `levels`; the structure words of a wine use the same ones).
_LEVELS = language.data("budget.json")["levels"]
CHEAP_PRICE_MAX = _LEVELS["cheap"]["max"]
SOLID_PRICE_MIN = _LEVELS["solid"]["min"]
PREMIUM_PRICE_MIN = _LEVELS["premium"]["min"]
APPROX_LOW, APPROX_HIGH = 0.75, 1.25  # "около 3к" → 2250..3750
MAX_READ_CHARS = 2000  # a request longer than this is read from its beginning


@dataclass
class QueryIntent:
    kind: Kind
    filters: dict[str, Any] = field(default_factory=dict)  # search_wines arguments
    mood: str | None = None  # words for semantic_search (mood, occasion, taste)
    topic: str | None = None  # glossary key for informational questions
    follow_up: bool = False
    more: bool = False  # "ещё", "другие варианты": the same request, other wines
    price_direction: PriceDirection | None = None  # "подешевле" / "подороже"
    shown_prices: list[float] = field(default_factory=list)  # set by the responder on `previous`
    stated: tuple[str, ...] = ()  # filter keys this very message stated (the rest were inherited)
    wine_name: str | None = None  # a wine asked for by name («Есть у вас Petrus 2010?»), as written
    wine_vintage: int | None = None  # the vintage named with it
    known_wine: language.NamedWine | None = None  # what the language layer knows about that name

    @property
    def is_recommendation(self) -> bool:
        return self.kind == "recommendation"


# --------------------------------------------------------------------------- text preparation

_ZERO_WIDTH = re.compile("[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]")
_WS = re.compile(r"\s+")
_WORD = re.compile(r"[a-zа-я0-9]+")


def _prepare(text: str) -> tuple[str, str]:
    """(raw, t): lower case, ё→е, single spaces. `t` also turns hyphens into spaces (same length)."""
    raw = _ZERO_WIDTH.sub("", text or "").lower().replace("ё", "е")
    raw = _WS.sub(" ", raw).strip()
    t = language.correct_spelling(raw.replace("-", " ").replace("_", " "))
    return raw, t


class _Spans:
    """Character ranges of `t` already explained by a filter (they don't count as mood words)."""

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int]] = []

    def add(self, start: int, end: int) -> None:
        self.ranges.append((start, end))

    def covers(self, start: int, end: int) -> bool:
        return any(s < end and start < e for s, e in self.ranges)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(r"(?<![a-zа-я0-9])(?:" + pattern + r")(?![a-zа-я0-9])")


_DIALOGUE = language.data("dialogue.json")
_NEGATION = _DIALOGUE["negation"]
_NEGATION_BEFORE = re.compile(
    r"(?:^|\s)"
    + language.alternation(_NEGATION["before"])
    + r"\s+(?:"
    + language.alternation(_NEGATION["softeners"])
    + r"\s+)?(?:"
    + language.alternation(_NEGATION["origin"])
    + r"\s+)?$"
)
_NEGATION_AFTER = re.compile(r"^\w*\s+" + language.alternation(_NEGATION["after"]))


def _negated(t: str, start: int, end: int | None = None) -> bool:
    """A negation before the word ("не красное", "забудь про красное", "вместо красного") or after it
    ("красное не хочу") rejects it (the negation words: dialogue.json)."""
    if _NEGATION_BEFORE.search(t[max(0, start - 30) : start]):
        return True
    return end is not None and bool(_NEGATION_AFTER.search(t[start : end + 30]))


_AROMA_MARKERS = language.cues("occasions.json", "aroma_markers")
_AROMA_CHAIN_BREAK = re.compile(
    r"[,.;:!?]|" + language.alternation(language.data("occasions.json")["aroma_markers"]["breaks"])
)
AROMA_CHAIN_WORDS = 4  # «с нотками тёмного шоколада или какао»: the words between the marker and the food


def _names_an_aroma(t: str, start: int) -> bool:
    """Is the food word at `start` part of an aroma after «нотки», «аромат», «привкус»…? Not when a comma
    or a pairing word comes between («с нотами ванили к стейку»)."""
    for marker in _AROMA_MARKERS.find(t[:start]):
        gap = t[marker.end_char : start]
        if len(language.words(gap)) <= AROMA_CHAIN_WORDS and not _AROMA_CHAIN_BREAK.search(gap):
            return True
    return False


# --------------------------------------------------------------------------- wine type, sweetness

# Every spelling (wine_words.json), matched on stems: «красного», «сухим», «игристым», «несладкое».
_TYPE_CUES = language.style_cues("wine_types")
_SWEETNESS_CUES = language.style_cues("sweetness")


def _pick_enum(t: str, cues: language.Cues, spans: _Spans) -> str | None:
    found: list[tuple[int, str]] = []
    for m in cues.find(t):
        if spans.covers(m.start_char, m.end_char):
            continue
        spans.add(m.start_char, m.end_char)
        if not _negated(t, m.start_char, m.end_char):
            found.append((m.start_char, m.value))
    values = {v for _, v in found}
    if not values:
        return None
    if len(values) == 1:
        return values.pop()
    if "sparkling" in values:  # "розовое игристое", "белое игристое брют"
        return "sparkling"
    return None  # "красное или белое": leave it open


# --------------------------------------------------------------------------- price

# The words (budget.json); the grammar of how they combine with numbers stays here.
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
_BEFORE_RULES = [(name, re.compile(language.alternation(phrases) + _THAN)) for name, phrases in _RELATIONS["before"]]
_AFTER_RULES = [(name, re.compile(r"^\s*" + language.alternation(phrases))) for name, phrases in _RELATIONS["after"]]
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


def _read_price(raw: str, spans: _Spans) -> tuple[float | None, float | None]:
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


def _price_words(t: str, spans: _Spans) -> tuple[float | None, float | None]:
    """Price bounds said in words: "бюджетное" → max, "премиальное"/"солидное" → min."""
    m = _CHEAP.search(t)
    if m and not spans.covers(m.start_char, m.end_char):
        spans.add(m.start_char, m.end_char)
        return None, CHEAP_PRICE_MAX
    m = _PREMIUM.search(t)
    if m and not _negated(t, m.start_char) and not spans.covers(m.start_char, m.end_char):
        spans.add(m.start_char, m.end_char)
        return PREMIUM_PRICE_MIN, None
    m = _SOLID.search(t)
    if m and not _negated(t, m.start_char) and not spans.covers(m.start_char, m.end_char):
        spans.add(m.start_char, m.end_char)
        return SOLID_PRICE_MIN, None
    return None, None


# --------------------------------------------------------------------------- grapes, countries, regions, food


def _region_values() -> tuple[dict[str, str], dict[str, str]]:
    """Filter value → its country and its genitive: a region by any spelling is itself, a subregion is
    searched as written («Болгери», «Шабли»)."""
    countries = {c.code: c.name for c in language.countries()}
    country_of: dict[str, str] = {}
    genitive: dict[str, str] = {}
    for item in language.data("regions.json")["regions"]:
        country_of[item["name"]] = countries.get(item["country"], "")
        genitive[item["name"]] = item["genitive"]
        for phrase in item["subregions"]:
            title = _subregion_title(phrase)
            country_of[title] = countries.get(item["country"], "")
            genitive[title] = title
    return country_of, genitive


def _subregion_title(phrase: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in phrase.split(" "))


REGION_COUNTRY, REGION_GENITIVE = _region_values()


def _food_names() -> dict[str, str]:
    """Every dish, group and category name → the entry's first name, passed as food_pairing (the tools
    map it to the same categories)."""
    spec = language.data("dishes.json")
    names: dict[str, str] = {}
    for section in ("dishes", "groups"):
        for entry in spec[section]:
            first = entry.split("|")[0]
            for name in entry.split("|"):
                names.setdefault(language.normalize(name), first)
    for key in spec["categories"]:
        names.setdefault(language.normalize(key), key)
    return names


_FOOD_NAMES = _food_names()


def _food_value(phrase: str) -> str:
    return _FOOD_NAMES.get(language.normalize(phrase), phrase)


# --------------------------------------------------------------------------- mood

# A word that begins with a mood stem, a mood cue or a comparative (occasions.json) makes a mood request.
_MOOD_CUES = language.mood_cue_pattern()
_COMPARATIVES: dict[str, str] = language.data("occasions.json")["comparatives"]
# Words left out of the mood search: as written, or (the ask and wine words) in any inflection.
_FILLER = {
    language.normalize(w)
    for w in (
        *language.data("occasions.json")["stopwords"],
        *_DIALOGUE["request_words"],
        *_DIALOGUE["ask"]["forms"],
        *_UNITS["money"],
        *_UNITS["thousand_words"],
        *(p for _, phrases in _RELATIONS["before"] for p in phrases if " " not in p),
    )
}
_WINE = language.data("wine_words.json")["wine"]
_FILLER |= {language.normalize(w) for w in _WINE["forms"]}
_FILLER_STEMS = {language.stem(language.normalize(w)) for w in (*_DIALOGUE["ask"]["words"], *_WINE["words"])}

# --------------------------------------------------------------------------- kinds

_GREETING = language.cues("dialogue.json", "greeting")
_THANKS = language.cues("dialogue.json", "thanks")
_HELP = language.cues("dialogue.json", "help")
_ASK_VERB = language.cues("dialogue.json", "ask")
_OFF_TOPIC = language.cues("dialogue.json", "off_topic")
_MORE = language.cues("dialogue.json", "more")
_WINE_WORD = language.cues("wine_words.json", "wine")
_PARTICLES = frozenset(_DIALOGUE["particles"])
_INFO = re.compile(r"(?:^|\s)(?:" + "|".join(_DIALOGUE["informational"]) + r")(?=\s|$|[?,.!])")
_TELL_ABOUT = re.compile(r"(?:^|\s)(?:" + "|".join(_DIALOGUE["tell_about"]) + r")\s")
_FOLLOW_START = re.compile(r"^" + language.alternation(_DIALOGUE["follow_up_openers"]) + r"(?=\s|$|[?,.!])")
_PREVIOUS_REQUEST = _rx(_DIALOGUE["previous_request"])


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _content_left(t: str, *cue_lists: language.Cues) -> list[str]:
    rest = t
    for cues in cue_lists:
        rest = cues.remove(rest)
    return [w for w in _words(rest) if w not in _PARTICLES]


# --------------------------------------------------------------------------- reading


@dataclass
class _Reading:
    filters: dict[str, Any]
    mood: str | None
    strong: bool
    weak: bool
    direction: PriceDirection | None
    more: bool


def _read_filters(raw: str, t: str) -> _Reading:
    """The filters, mood and wine cues of a message. Each family marks the words it explains, so the order
    matters: a word read as a grape is no region or colour, and no word a filter explains is a mood word."""
    spans = _Spans()
    # An appellation longer than a grape's name inside it («Брунелло ди Монтальчино», not the grape «брунелло»).
    appellation = _read_appellation(t, spans)
    found = {
        # Grapes first: "Пино Нуар" must not be read as anything else, "Красностоп" is not "красное".
        "grape_variety": _read_grape(t, spans),
        "region": appellation or _read_region(t, spans),
        "wine_type": _pick_enum(t, _TYPE_CUES, spans),
        "sweetness": _read_sweetness(t, spans),
        "country": _read_country(t, spans),
        "food_pairing": _read_food(t, spans),
    }
    filters: dict[str, Any] = {k: v for k, v in found.items() if v is not None}
    filters.update(_read_exclusions(t, filters))
    sort = _read_superlative(t, spans)
    price_min, price_max, direction = _read_budget(raw, t, spans)
    filters.update(_price_filters(price_min, price_max))
    if sort == "best_within":
        sort = "price_desc" if "price_max" in filters else None
    if sort:
        filters["sort"] = sort

    more = bool(_MORE.search(t))
    mood = _read_mood(t, spans)
    strong = bool(
        {"wine_type", "sweetness", "grape_variety"} & filters.keys() or _WINE_WORD.search(t) or _TYPE_CUES.search(t)
    )
    weak = bool(filters) or mood is not None or direction is not None
    return _Reading(filters, mood, strong, weak, direction, more)


def _read_superlative(t: str, spans: _Spans) -> str | None:
    """«самое дорогое» → price_desc, «самое дешёвое» → price_asc: an order, not a price level; «лучшее» is
    "best_within" (the dearest first, when a budget caps it)."""
    for value, cues in (("price_desc", _DEAREST), ("price_asc", _CHEAPEST), ("best_within", _BEST_WITHIN)):
        m = cues.search(t)
        if m and not _negated(t, m.start_char):
            spans.add(m.start_char, m.end_char)
            return value
    return None


def _read_exclusions(t: str, filters: dict[str, Any]) -> dict[str, Any]:
    """What a negation rules out: «но не сухое», «только не итальянское», «кроме розового», «без шардоне»,
    «но не кьянти». A word that is both a colour and a sweetness («брют») rules out only the sweetness; a
    place that is also a grape's name rules out the grape."""
    sweet = {(m.start_char, m.end_char): m.value for m in _SWEETNESS_CUES.find(t) if _negated(t, m.start_char)}
    types = {
        (m.start_char, m.end_char): m.value
        for m in _TYPE_CUES.find(t)
        if _negated(t, m.start_char) and (m.start_char, m.end_char) not in sweet
    }
    countries = {(m.start_char, m.end_char): c.name for m, c in language.countries_in(t) if _negated(t, m.start_char)}
    grapes = {(m.start_char, m.end_char): m.value for m in language.grape_names_in(t) if _negated(t, m.start_char)}
    places = _ruled_out_places(t, taken=[*countries, *grapes])
    found: dict[str, Any] = {}
    kinds = (("wine_type", types), ("sweetness", sweet), ("country", countries), ("grape_variety", grapes))
    for key, hits in (*kinds, ("region", places)):
        values = [v for _, v in sorted(hits.items()) if v != filters.get(key)]
        if values:
            found[EXCLUSIONS[key]] = values[0]
    return found


def _ruled_out_places(t: str, taken: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """The regions and appellations a negation rules out, by the name the search reads (a place inside a
    region by its own name: «не кьянти» rules out Chianti, not Tuscany), outside what a country or a grape
    already took."""

    def free(start: int, end: int) -> bool:
        return not any(s <= start and end <= e for s, e in taken)

    named = [
        (m.start_char, m.end_char, True, _subregion_title(m.phrase) if subregion else region.name)
        for m, region, subregion in language.regions_in(t)
    ]
    named += [(m.start_char, m.end_char, False, place.name) for m, place in language.appellations_in(t)]
    places: dict[tuple[int, int], str] = {}
    # The longest name first («кьянти классико» over «кьянти»); for the same words, the region's reading
    # («не тоскана» is Tuscany, not the appellation «Тоскана IGT»).
    for start, end, _, name in sorted(named, key=lambda n: (n[0] - n[1], not n[2])):
        overlaps = any(start < e and s < end for s, e in places)
        if _negated(t, start) and free(start, end) and not overlaps:
            places[(start, end)] = name
    return places


def _first_named(hits: list[tuple[int, str]]) -> str | None:
    """The value named first in the message ("Франция или Италия" → Франция), None when nothing was."""
    return min(hits)[1] if hits else None


def _read_grape(t: str, spans: _Spans) -> str | None:
    hits: list[tuple[int, str]] = []
    for m in language.grape_names_in(t):
        if spans.covers(m.start_char, m.end_char):
            continue
        if not _TYPE_CUES.find(m.phrase):  # "просекко" also says "sparkling"
            spans.add(m.start_char, m.end_char)
        if not _negated(t, m.start_char):
            hits.append((m.start_char, m.value))
    return _first_named(hits)


def _read_appellation(t: str, spans: _Spans) -> str | None:
    """An appellation named in more words than any grape name it holds: the place, searched as a region."""
    grapes = language.grape_names_in(t)
    hits: list[tuple[int, str]] = []
    for m, place in language.appellations_in(t):
        inside = [g for g in grapes if m.start_char <= g.start_char and g.end_char <= m.end_char]
        if not inside or _negated(t, m.start_char):
            continue
        if all(len(g.phrase.split()) < len(m.phrase.split()) for g in inside):
            spans.add(m.start_char, m.end_char)
            hits.append((m.start_char, place.name))
    return _first_named(hits)


def _read_region(t: str, spans: _Spans) -> str | None:
    hits: list[tuple[int, str]] = []
    for m, region, subregion in language.regions_in(t):
        if spans.covers(m.start_char, m.end_char) or _negated(t, m.start_char):
            continue
        spans.add(m.start_char, m.end_char)
        hits.append((m.start_char, _subregion_title(m.phrase) if subregion else region.name))
    return _first_named(hits)


def _read_sweetness(t: str, spans: _Spans) -> str | None:
    # "брют" is both sparkling and dry: let the sweetness words see it again.
    sweet_spans = _Spans()
    sweet_spans.ranges = [r for r in spans.ranges if not _SWEETNESS_CUES.find(t[r[0] : r[1]])]
    sweetness = _pick_enum(t, _SWEETNESS_CUES, sweet_spans)
    spans.ranges = sweet_spans.ranges + [r for r in spans.ranges if r not in sweet_spans.ranges]
    return sweetness


def _read_country(t: str, spans: _Spans) -> str | None:
    hits: list[tuple[int, str]] = []
    for m, country in language.countries_in(t):
        if spans.covers(m.start_char, m.end_char):
            continue
        spans.add(m.start_char, m.end_char)
        if not _negated(t, m.start_char):
            hits.append((m.start_char, country.name))
    return _first_named(hits)  # "Франция или Италия": keep the first one named


def _read_food(t: str, spans: _Spans) -> str | None:
    hits: list[tuple[int, str]] = []
    for m in language.dishes_in(t, fuzzy=True):
        if spans.covers(m.start_char, m.end_char):
            continue
        if _names_an_aroma(t, m.start_char):
            continue  # «с нотками шоколада»: a taste for the mood search, not a dish
        spans.add(m.start_char, m.end_char)
        if not _negated(t, m.start_char):
            hits.append((m.start_char, _food_value(m.phrase)))
    return _first_named(hits)


_DIRECTIONS: tuple[tuple[PriceDirection, language.Cues], ...] = (("cheaper", _CHEAPER), ("pricier", _PRICIER))


def _read_budget(raw: str, t: str, spans: _Spans) -> tuple[float | None, float | None, PriceDirection | None]:
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


def _price_filters(price_min: float | None, price_max: float | None) -> dict[str, Any]:
    """The bounds as filters; a floor above the ceiling is dropped and the ceiling kept."""
    filters: dict[str, Any] = {}
    if price_min is not None:
        filters["price_min"] = _round_price(price_min)
    if price_max is not None:
        filters["price_max"] = _round_price(price_max)
    if "price_min" in filters and "price_max" in filters and filters["price_min"] > filters["price_max"]:
        del filters["price_min"]
    return filters


def _round_price(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(float(value), 2)


def _read_mood(t: str, spans: _Spans) -> str | None:
    if not any(not spans.covers(m.start(), m.end()) for m in _MOOD_CUES.finditer(t)):
        return None
    kept: list[str] = []
    for m in _WORD.finditer(t):
        word = m.group(0)
        if spans.covers(m.start(), m.end()) or word in _FILLER or word.isdigit():
            continue
        if len(word) < 2 or language.stem(word) in _FILLER_STEMS:
            continue
        kept.append(_COMPARATIVES.get(word, word))
    mood = " ".join(kept).strip()
    return mood or None


def _kind_without_previous(raw: str, t: str, reading: _Reading) -> tuple[Kind, str | None]:
    small_talk = _small_talk(t, reading)
    if small_talk is not None:
        return small_talk, None
    if _INFO.search(t):
        return _definitional_kind(raw, t, reading)
    topic = language.glossary_topic_asked(raw)
    if topic and not reading.strong and not reading.weak and not _ASK_VERB.search(t):
        return "informational", topic.key
    if reading.strong:
        return "recommendation", None
    if _OFF_TOPIC.search(t):
        return "off_topic", None
    if reading.weak or reading.more or _ASK_VERB.search(t):
        return "recommendation", None
    if topic:
        return "informational", topic.key
    return "off_topic", None


def _small_talk(t: str, reading: _Reading) -> Kind | None:
    """A reaction, greeting, thanks or help request with nothing else in it (rule 1), else None."""
    if not _words(t):
        # "👍", "🙏", "🍷": a reaction; "", "?": the customer needs a hint
        return "help" if not t.strip(" ?!.,") else "thanks"
    if not _content_left(t, _GREETING):
        return "greeting"
    if not _content_left(t, _THANKS, _GREETING):  # "спасибо!", "ок, понятно", "отлично"
        return "thanks"
    if _HELP.search(t) and not reading.strong and not reading.weak and not _ASK_VERB.search(t):
        return "help"
    return None


def _definitional_kind(raw: str, t: str, reading: _Reading) -> tuple[Kind, str | None]:
    """A definitional question (rule 2): the glossary topic; «расскажи о …» with filters or a mood asks for wines."""
    topic = language.glossary_topic_asked(raw)
    if topic:
        return "informational", topic.key
    if _TELL_ABOUT.search(t) and (reading.filters or reading.mood):
        return "recommendation", None
    return "informational", None


_AVAILABILITY = language.cues("dialogue.json", "availability")
# A wine's name in a Russian message: a run of Latin words («Opus One», «Château Petrus»), or a quoted phrase.
_LATIN_NAME = re.compile(r"[A-Za-zÀ-ÿ][\w'’.\-]*(?:[ \t]+(?:&[ \t]+)?[A-Za-zÀ-ÿ][\w'’.\-]*)*")
_QUOTED = re.compile(r"[«\"“]([^»\"”]{2,60})[»\"”]")
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
_VINTAGE_AFTER = re.compile(r"^[ \t,]*((?:19|20)\d\d)(?!\d)")


def _is_vocabulary(phrase: str) -> bool:
    """Every word of the phrase is a grape, place, style, dish, glossary term or another word the layer knows
    («Pinot Noir», «Chianti», «brut»): not a wine's own name."""
    text = language.normalize(language.fold_accents(phrase))
    if language.glossary_topic_asked(text):
        return True
    known = [*language.grape_names_in(text), *language.dishes_in(text)]
    known += [m for m, _, _ in language.regions_in(text)]
    known += [m for m, _ in language.countries_in(text)]
    for cues in (_TYPE_CUES, _SWEETNESS_CUES, _WINE_WORD, _ASK_VERB, _OFF_TOPIC, _MORE, _GREETING, _THANKS):
        known += cues.find(text)
    text = language.blank_out(text, known)
    return not [w for w in _WORD.findall(text) if len(w) >= 3 and not w.isdigit()]


def _wine_named(text: str, t: str, reading: _Reading) -> tuple[str, int | None, language.NamedWine | None] | None:
    """A wine the message asks for by name: a famous one the layer knows, or — in a question about
    availability or a request that states nothing else — a Latin or quoted name that is no known word."""
    source = (text or "")[:MAX_READ_CHARS]
    known = language.named_wines_in(source)
    capitalised = _capitalised_name(source, t, reading)
    if known:
        match, wine = known[0]
        start, end = match.start_char, match.end_char
    elif capitalised is not None:
        (start, end), wine = capitalised, None
    else:
        if not _CYRILLIC.search(source) or _OFF_TOPIC.search(t):
            return None
        if reading.filters or reading.mood or not (_AVAILABILITY.search(t) or _ASK_VERB.search(t)):
            return None
        spans = [(m.start(1), m.end(1)) for m in _QUOTED.finditer(source)]
        spans += [(m.start(), m.end()) for m in _LATIN_NAME.finditer(source)]
        found = next(((a, b) for a, b in spans if not _is_vocabulary(source[a:b])), None)
        if found is None:
            return None
        (start, end), wine = found, None
    name = source[start:end].strip(" .,!?:;")
    vintage = _VINTAGE_AFTER.match(source[end:])
    return (f"{name} {vintage.group(1)}" if vintage else name), (int(vintage.group(1)) if vintage else None), wine


# A run of capitalised words, Cyrillic or Latin, with the particles of wine names between them
# («Шабли Премье Крю Вайон», «Брунелло ди Монтальчино», «Château d'Yquem»).
_NAME_PARTICLES = language.alternation(_DIALOGUE["name_particles"])
_CAPITALISED_RUN = re.compile(
    r"(?<![\w])[A-ZА-ЯЁÀ-Þ][\w'’.\-]*(?:[ \t]+(?:" + _NAME_PARTICLES + r"[ \t]+)?[A-ZА-ЯЁÀ-Þ][\w'’.\-]*)*"
)


def _capitalised_name(source: str, t: str, reading: _Reading) -> tuple[int, int] | None:
    """In a question about availability («Есть Шабли Премье Крю Вайон?», «Шато Латур есть?»), the span of a
    capitalised name that is not just known words: its opening «Есть», «Хочу», «Подскажите» left out. A
    message that states more than the name itself («…Chianti Classico до 3000?») is a request."""
    if not _AVAILABILITY.search(t):
        return None
    for m in _CAPITALISED_RUN.finditer(source):
        start, end = m.start(), m.end()
        for word in re.finditer(r"\S+", m.group(0)):
            lead = language.normalize(word.group(0))
            if not (_AVAILABILITY.covers(lead) or _ASK_VERB.covers(lead) or _GREETING.covers(lead)):
                break
            start = m.start() + word.end()
        phrase = source[start:end].strip(" .,!?:;")
        if len(phrase) < 3 or _is_vocabulary(phrase):
            continue
        own = _read_filters(phrase.lower(), language.correct_spelling(phrase.lower())).filters
        if set(reading.filters) - set(own) or reading.mood:
            return None
        at = source.index(phrase, start)
        return at, at + len(phrase)
    return None


def _known_wine_filters(wine: language.NamedWine | None) -> dict[str, Any]:
    """What a famous wine's name tells, as filters for the nearest wines: «Petrus» → dry red Merlot, Bordeaux."""
    if wine is None:
        return {}
    country = language.country_by_code(wine.country)
    found = {
        "wine_type": wine.wine_type,
        "sweetness": wine.sweetness,
        "grape_variety": wine.grape,
        "region": wine.region,
        "country": country.name if country else None,
    }
    return {k: v for k, v in found.items() if v}


def _is_follow_up(t: str, reading: _Reading, previous: QueryIntent | None) -> bool:
    if previous is None or previous.kind != "recommendation":
        return False
    if _FOLLOW_START.search(t) or reading.direction is not None:
        return True
    words = _words(t)
    if reading.more and (len(words) <= 6 or not reading.filters or _PREVIOUS_REQUEST.search(t)):
        return True
    # A bare change of one parameter: "белое", "до 1500", "из Италии?" (not "мальбек из Аргентины").
    keys = {"price" if k.startswith("price") else k for k in reading.filters}
    return len(words) <= 2 and len(keys) == 1 and reading.mood is None and not _WINE_WORD.search(t)


def _resolve_direction(filters: dict[str, Any], direction: PriceDirection, previous: QueryIntent | None) -> None:
    shown = [float(p) for p in (previous.shown_prices if previous else []) if p]
    if direction == "cheaper":
        if shown:
            new_max = max(1.0, math.ceil(min(shown)) - 1)
        elif previous and previous.filters.get("price_max"):
            new_max = round(float(previous.filters["price_max"]) * 0.7)
        else:
            new_max = CHEAP_PRICE_MAX
        filters["price_max"] = _round_price(new_max)
        filters.pop("price_min", None)  # "подешевле" lifts the old floor
        filters.pop("sort", None)
    else:
        if shown:
            new_min = math.floor(max(shown)) + 1
        elif previous and previous.filters.get("price_min"):
            new_min = round(float(previous.filters["price_min"]) * 1.4)
        elif previous and previous.filters.get("price_max"):
            new_min = math.floor(float(previous.filters["price_max"])) + 1
        else:
            new_min = SOLID_PRICE_MIN
        filters["price_min"] = _round_price(new_min)
        filters.pop("price_max", None)  # "подороже" lifts the old budget
        filters.pop("sort", None)


def _merge(previous: QueryIntent, reading: _Reading) -> dict[str, Any]:
    merged = {k: v for k, v in previous.filters.items() if k in FILTER_KEYS}
    new = reading.filters
    if "wine_type" in new and new["wine_type"] != merged.get("wine_type"):
        merged.pop("grape_variety", None)  # grapes belong to a colour
        if new["wine_type"] == "sparkling" or merged.get("wine_type") == "sparkling":
            merged.pop("sweetness", None)
    if "country" in new and new["country"] != merged.get("country"):
        merged.pop("region", None)  # the old region belongs to the old country
        merged.pop("grape_variety", None)
    if "region" in new and "country" not in new:
        if merged.get("country") and REGION_COUNTRY.get(new["region"]) != merged["country"]:
            merged.pop("country", None)
    if "price_min" in new or "price_max" in new or reading.direction is not None:
        merged.pop("price_min", None)
        merged.pop("price_max", None)
        if "sort" not in new:
            merged.pop("sort", None)  # «а подешевле?» after «самое дорогое»: a budget, not the top of the shelf
    for key, excluded in EXCLUSIONS.items():
        if key in new:
            merged.pop(excluded, None)  # «а сухое?» after «не сухое»
        if excluded in new and merged.get(key) == new[excluded]:
            merged.pop(key, None)  # «а не красное?» after «красное»
    merged.update(new)
    return merged


def read_query(text: str, previous: QueryIntent | None = None) -> QueryIntent:
    """Read one customer message; `previous` is the intent of the customer's previous request."""
    raw, t = _prepare((text or "")[:MAX_READ_CHARS])
    reading = _read_filters(raw, t)
    kind, topic = _kind_without_previous(raw, t, reading)
    follow_up = _continues_previous(kind, t, reading, previous)
    if follow_up:
        kind = "recommendation"
    named = _wine_named(text, t, reading) if kind in ("recommendation", "off_topic") else None
    if named is not None:
        return _named_request(reading, *named)
    if kind != "recommendation":
        return QueryIntent(kind=kind, filters={}, mood=None, topic=topic)
    return _recommendation(reading, previous if follow_up else None)


def _continues_previous(kind: Kind, t: str, reading: _Reading, previous: QueryIntent | None) -> bool:
    """Is the message a follow-up of the previous recommendation (rule 4)? Even one read as off-topic
    («а из Чили?») or as thanks with more in it («спасибо, а подешевле?»); thanks alone is not."""
    if kind not in ("recommendation", "off_topic", "thanks") or not _is_follow_up(t, reading, previous):
        return False
    return kind != "thanks" or bool(_content_left(t, _THANKS, _GREETING))


def _named_request(reading: _Reading, name: str, vintage: int | None, known: language.NamedWine | None) -> QueryIntent:
    """A wine asked for by name: the filters its name tells, for the nearest wines when it is not in stock."""
    return QueryIntent(
        kind="recommendation",
        filters={**_known_wine_filters(known), **reading.filters},  # what the customer said wins
        stated=tuple(k for k in FILTER_KEYS if k in reading.filters),
        wine_name=name,
        wine_vintage=vintage,
        known_wine=known,
    )


def _recommendation(reading: _Reading, follows: QueryIntent | None) -> QueryIntent:
    """A request for wines; `follows` is the previous request when this message follows it up (it keeps
    what the message does not change), else None."""
    stated = tuple(k for k in FILTER_KEYS if k in reading.filters)
    if follows is not None:
        filters = _merge(follows, reading)
        mood = reading.mood or follows.mood
    else:
        filters = dict(reading.filters)
        mood = reading.mood
    direction = reading.direction
    if direction is not None:
        _resolve_direction(filters, direction, follows)
        stated = tuple(dict.fromkeys((*stated, "price_max" if direction == "cheaper" else "price_min")))
    more = reading.more and (follows is not None or not reading.filters)
    # «ещё» after a wine asked for by name: more wines near it (the responder loosens as it did for the first).
    near_name = follows if more and follows is not None and not reading.filters else None
    return QueryIntent(
        kind="recommendation",
        filters=filters,
        mood=mood,
        topic=None,
        follow_up=follows is not None,
        more=more,
        price_direction=direction,
        stated=stated,
        wine_name=near_name.wine_name if near_name else None,
        known_wine=near_name.known_wine if near_name else None,
    )


def describe_filters(filters: dict[str, Any]) -> dict[str, Any]:
    """The filters as search_wines arguments (no extra keys)."""
    return {k: filters[k] for k in FILTER_KEYS if filters.get(k) is not None}


def offered(
    previous: QueryIntent,
    *,
    filters: dict[str, Any] | None = None,
    direction: PriceDirection | None = None,
    more: bool = False,
) -> QueryIntent:
    """The previous request changed the way an offer the customer said yes to says («Показать для сравнения
    что-нибудь белое?» → «да»): the same merge rules as a typed follow-up («а белое?», «подешевле», «ещё»)."""
    change = dict(filters or {})
    reading = _Reading(filters=change, mood=None, strong=True, weak=True, direction=direction, more=more)
    merged = _merge(previous, reading)
    stated = tuple(k for k in FILTER_KEYS if k in change)
    if direction is not None:
        _resolve_direction(merged, direction, previous)
        stated = (*stated, "price_max" if direction == "cheaper" else "price_min")
    return QueryIntent(
        kind="recommendation",
        filters=merged,
        mood=previous.mood,
        follow_up=True,
        more=more,
        price_direction=direction,
        stated=stated,
        wine_name=previous.wine_name if more and not change else None,  # more wines near a wine asked for
        known_wine=previous.known_wine if more and not change else None,
    )
