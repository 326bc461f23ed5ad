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
from sommelier.agent.offline import glossary

Kind = Literal["recommendation", "greeting", "thanks", "informational", "off_topic", "help"]
PriceDirection = Literal["cheaper", "pricier"]

FILTER_KEYS = ("wine_type", "sweetness", "grape_variety", "price_min", "price_max", "country", "region", "food_pairing")

CHEAP_PRICE_MAX = 1500  # "бюджетное", "недорогое"
SOLID_PRICE_MIN = 3000  # "солидное", "статусное"
PREMIUM_PRICE_MIN = 5000  # "дорогое", "премиальное", "элитное"
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


# Adjective endings, for "красное/красного/красным…" style word families.
_ADJ = r"(?:еньк|оньк)?(?:ое|ого|ому|ым|ом|ые|ых|ыми|ая|ой|ую|ый|ий|ее|его|ему|им|ем|ие|их|ими|яя|юю|ей)"


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(r"(?<![a-zа-я0-9])(?:" + pattern + r")(?![a-zа-я0-9])")


_NEGATION_BEFORE = re.compile(
    r"(?:^|\s)(?:не|без|кроме|not|no|вместо|забудь(?:те)?\s+(?:про|о|об)|не\s+надо|не\s+нужно|"
    r"хватит|никакого|никаких)\s+(?:очень\s+|слишком\s+)?$"
)
_NEGATION_AFTER = re.compile(r"^\w*\s+(?:не\s+хочу|не\s+надо|не\s+нужно|не\s+буду|надоел\w*)")


def _negated(t: str, start: int, end: int | None = None) -> bool:
    """ "не красное", "забудь про красное", "вместо красного", "красное не хочу" all reject the word."""
    if _NEGATION_BEFORE.search(t[max(0, start - 30) : start]):
        return True
    return end is not None and bool(_NEGATION_AFTER.search(t[start : end + 30]))


# --------------------------------------------------------------------------- wine type, sweetness

_TYPES: list[tuple[str, re.Pattern[str]]] = [
    (
        "sparkling",
        _rx(
            r"игрист" + _ADJ + r"|шампанск" + _ADJ + r"|шампусик\w*|пузырьк\w*|пузыр(?:и|ями|ях)|просекко|"
            r"кав[аыуе]|кавой|креман\w*|асти|ламбруско|франчакорт\w*|шипуч\w*|брют\w*|"
            r"sparkling|champagne|prosecco|cava|cremant|brut|igrist\w*|shampansk\w*"
        ),
    ),
    ("red", _rx(r"красн" + _ADJ + r"|red|rouge|rosso|tinto|krasn\w*")),
    ("white", _rx(r"бел" + _ADJ + r"|white|bianco|blanco|belo\w*|belye")),
    ("rose", _rx(r"розов" + _ADJ + r"|розе|розэ|розовенькое|rose|rosé|rosado|rosato|rozov\w*")),
]

_SWEETNESS: list[tuple[str, re.Pattern[str]]] = [
    ("semi_dry", _rx(r"полусух" + _ADJ + r"|semi ?dry|off ?dry|medium ?dry|polusuh\w*")),
    ("semi_sweet", _rx(r"полуслад(?:к|еньк)" + _ADJ + r"|semi ?sweet|medium ?sweet|amabile|polusladk\w*")),
    (
        "dry",
        _rx(
            r"сух"
            + _ADJ
            + r"|сухач\w*|несладк"
            + _ADJ
            + r"|не сладк"
            + _ADJ
            + r"|брют\w*|brut|dry|secco|seco|sec|suh\w*"
        ),
    ),
    ("sweet", _rx(r"слад(?:к|еньк)" + _ADJ + r"|десертн" + _ADJ + r"|sweet|dolce|sladk\w*")),
]


def _pick_enum(t: str, table: list[tuple[str, re.Pattern[str]]], spans: _Spans) -> str | None:
    found: list[tuple[int, str]] = []
    for value, pattern in table:
        for m in pattern.finditer(t):
            if spans.covers(m.start(), m.end()):
                continue
            spans.add(m.start(), m.end())
            if value == "dry" and m.group(0).startswith("не"):
                found.append((m.start(), value))
            elif not _negated(t, m.start(), m.end()):
                found.append((m.start(), value))
    values = {v for _, v in found}
    if not values:
        return None
    if len(values) == 1:
        return values.pop()
    if "sparkling" in values:  # "розовое игристое", "белое игристое брют"
        return "sparkling"
    return None  # "красное или белое": leave it open


# --------------------------------------------------------------------------- price

_THOUSAND_WORDS = {
    "полутора": 1.5,
    "полторы": 1.5,
    "полтора": 1.5,
    "одной": 1,
    "одну": 1,
    "одна": 1,
    "две": 2,
    "двух": 2,
    "пары": 2,
    "пару": 2,
    "пара": 2,
    "три": 3,
    "трех": 3,
    "четыре": 4,
    "четырех": 4,
    "пять": 5,
    "пяти": 5,
    "шесть": 6,
    "шести": 6,
    "семь": 7,
    "семи": 7,
    "восемь": 8,
    "восьми": 8,
    "девять": 9,
    "девяти": 9,
    "десять": 10,
    "десяти": 10,
    "пятнадцать": 15,
    "пятнадцати": 15,
    "двадцать": 20,
    "двадцати": 20,
    "тридцать": 30,
    "тридцати": 30,
    "пятьдесят": 50,
    "пятидесяти": 50,
}
_HUNDRED_WORDS = {
    "двести": 200,
    "двухсот": 200,
    "триста": 300,
    "трехсот": 300,
    "четыреста": 400,
    "четырехсот": 400,
    "пятьсот": 500,
    "пятисот": 500,
    "шестьсот": 600,
    "шестисот": 600,
    "семьсот": 700,
    "семисот": 700,
    "восемьсот": 800,
    "восьмисот": 800,
    "девятьсот": 900,
    "девятисот": 900,
}
_THOUSAND_UNIT = r"тысяч\w*|тыщ\w*|тыс\.?|косар\w*|кос(?:ых)?"
_NUMBER_WORD = "|".join(sorted(_THOUSAND_WORDS, key=len, reverse=True))
# Number words that alone, after "до"/"за"/"около"…, mean thousands ("до пяти", "около полутора").
_BARE_THOUSANDS = {w: v for w, v in _THOUSAND_WORDS.items() if v >= 1.5 and w not in ("пары", "пару", "пара")}
# Slang for round sums: "в пределах пятёрки", "трёшка", "десятка".
_SLANG_THOUSANDS = {"пятерк": 5, "трешк": 3, "десятк": 10, "двушк": 2}
_RELATION_WORDS = r"за|до|около|примерно|в\s+пределах|в\s+районе|не\s+дороже|не\s+больше|не\s+более|не\s+выше"
_AMOUNT = re.compile(
    r"(?<![\w.,])(?:"
    r"(?P<n>\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
    r"(?:\s*(?P<u>к(?![а-я])|k(?![a-z])|"
    + _THOUSAND_UNIT
    + r"|тр(?![а-я])|т\.р\.?|₽|р\.|р(?![а-я])|руб\w*\.?|rub\w*|rur))?"
    # "двух с половиной (тысяч)"
    r"|(?P<half>" + _NUMBER_WORD + r")\s+с\s+половиной(?:\s+(?:тысяч\w*|тыщ\w*))?"
    # the unit first: "тысяч до пяти", "тысячи за три"
    r"|(?:тысяч\w*|тыщ\w*)\s+(?P<rel>" + _RELATION_WORDS + r")\s+(?P<after>" + _NUMBER_WORD + r")(?![а-я])"
    r"|(?:(?P<w>" + _NUMBER_WORD + r")\s+)?(?P<th>тысяч\w*|тыщ\w*|косар\w*)"
    r"|(?P<h>" + "|".join(_HUNDRED_WORDS) + r")"
    r"|(?P<slang>(?:" + "|".join(_SLANG_THOUSANDS) + r")\w*)"
    r"|(?P<bare>" + "|".join(sorted(_BARE_THOUSANDS, key=len, reverse=True)) + r")(?![а-я])"
    r")(?:\s*(?:₽|руб\w*\.?|р\.|р(?![а-я])))?"
)
_RELATION_OF = {"до": "max", "не дороже": "max", "не больше": "max", "не более": "max", "не выше": "max"}
# What may not follow a number that is a price.
_NOT_PRICE_AFTER = re.compile(
    r"^\s*(?:год\w*|г\.?(?![а-я])|гг|градус\w*|°|лет(?![а-я])|мл|л(?![а-я])|литр\w*|бутыл\w*|человек\w*|"
    r"персон\w*|гост\w*|%|процент\w*|шт\w*|минут\w*|час\w*|дн(?:я|ей)\w*|раз(?![а-я])|бокал\w*|см|кг|г(?![а-я]))"
)
_YEAR_BEFORE = re.compile(r"(?:урожа\w*|винтаж\w*|года|год|выдержк\w*|с|в|vintage)\s*$")
_BEFORE_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("min", re.compile(r"(?:не\s+дешевле|не\s+ниже|не\s+менее|не\s+меньше)\s*(?:чем\s*)?$")),
    ("max", re.compile(r"(?:не\s+дороже|не\s+больше|не\s+более|не\s+выше|не\s+свыше)\s*(?:чем\s*)?$")),
    (
        "max",
        re.compile(
            r"(?:(?<![а-я])до|дешевле|меньше|максимум|макс\.?|в\s+пределах|в\s+рамках|бюджет(?:ом)?(?:\s+до)?|"
            r"ниже|under|below|less\s+than|up\s+to|max|cheaper\s+than|<|≤|<=)\s*(?:чем\s*)?$"
        ),
    ),
    (
        "min",
        re.compile(
            r"(?:(?<![а-я])от|дороже|больше|более|свыше|выше|минимум|from|over|above|more\s+than|>|≥|>=)\s*(?:чем\s*)?$"
        ),
    ),
    (
        "approx",
        re.compile(
            r"(?:около|примерно|приблизительно|в\s+районе|порядка|где\s*то|~|≈|(?<![а-я])за|around|about|approximately|"
            r"тысяч\s+за|плюс\s*минус|стоимостью|ценой|по\s+цене)\s*$"
        ),
    ),
]
_AFTER_RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "max",
        re.compile(
            r"^\s*(?:максимум|макс|max|и\s+дешевле|или\s+дешевле|и\s+меньше|или\s+меньше|и\s+ниже|или\s+ниже|потолок)"
        ),
    ),
    ("min", re.compile(r"^\s*(?:\+|и\s+дороже|или\s+дороже|и\s+выше|или\s+выше|и\s+больше|минимум|min\b)")),
    ("approx", re.compile(r"^\s*(?:плюс\s*минус|\+\s*-|\+/-|±|примерно|или\s+около)")),
]
_RANGE_DASH = re.compile(r"^\s*[-–—]\s*$")

_CHEAP = _rx(
    r"недорог\w*|не\s+(?:очень\s+|слишком\s+)?дорог\w*|бюджетн\w*|дешев\w*|эконом\w*|доступн(?:ое|ого|ые|ых|ую|ой)|"
    r"по\s+карману|cheap\w*|inexpensive|budget|affordable"
)
_PREMIUM = _rx(
    r"дорог(?:ое|ого|ие|их|ую)|недешев\w*|премиальн\w*|премиум\w*|элитн\w*|люкс\w*|коллекционн\w*|роскошн\w*|"
    r"expensive|premium|luxury|top\s+shelf"
)
_SOLID = _rx(r"солидн\w*|статусн\w*|престижн\w*|представительн\w*")
_CHEAPER = _rx(r"подешевле|по\s+дешевле|дешевле|бюджетнее|попроще|подешевше|cheaper|less\s+expensive")
_PRICIER = _rx(r"подороже|по\s+дороже|дороже|посолиднее|получше|поинтереснее|pricier|more\s+expensive")


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
        text = m.group(0)
        if m.group("n"):
            number = float(re.sub(r"[ \u00a0\u202f]", "", m.group("n")).replace(",", "."))
            unit = (m.group("u") or "").strip()
            thousand = bool(unit) and bool(re.match(r"к|k|тыс|тыщ|кос|тр|т\.р", unit))
            money = bool(unit) and not thousand or bool(re.search(r"₽|руб|р\.?$", text))
            if thousand and number < 1000:
                number *= 1000
        elif m.group("half"):
            found.append(_Amount(m.start(), m.end(), 1000.0 * (_THOUSAND_WORDS[m.group("half")] + 0.5), True, True))
            continue
        elif m.group("after"):
            relation = _RELATION_OF.get(" ".join(m.group("rel").split()), "approx")
            if relation == "approx" and " ".join(m.group("rel").split()) == "в пределах":
                relation = "max"
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
            number = 1000.0 * _THOUSAND_WORDS.get(m.group("w") or "", 1)
            thousand, money = True, True
        else:
            number = float(_HUNDRED_WORDS[m.group("h")])
            thousand, money = False, True
        found.append(_Amount(m.start(), m.end(), number, thousand, money))
    return found


def _read_price(raw: str, spans: _Spans) -> tuple[float | None, float | None]:
    amounts = _amounts(raw)
    price_min: float | None = None
    price_max: float | None = None
    used: set[int] = set()
    # Ranges: "1500-2000", "1-2 тысячи", "от 1 до 2 тысяч".
    for i in range(len(amounts) - 1):
        a, b = amounts[i], amounts[i + 1]
        between = raw[a.end : b.start]
        is_dash = bool(_RANGE_DASH.match(between))
        is_from_to = bool(re.match(r"^\s*до\s*$", between)) and bool(
            re.search(r"(?:^|\s)от\s*$", raw[max(0, a.start - 10) : a.start])
        )
        if not (is_dash or is_from_to):
            continue
        low, high = a.value, b.value
        if b.thousand_unit and not a.thousand_unit and low < 100:
            low *= 1000
        if high < 100 or (
            not is_from_to and not (a.money_unit or b.money_unit or a.thousand_unit or b.thousand_unit) and high < 300
        ):
            continue
        if low > high:
            low, high = high, low
        price_min, price_max = low, high
        used.update((i, i + 1))
        spans.add(a.start, b.end)
    for i, amount in enumerate(amounts):
        if i in used:
            continue
        before, after = raw[max(0, amount.start - 40) : amount.start], raw[amount.end : amount.end + 40]
        if _NOT_PRICE_AFTER.match(after) and not amount.money_unit and not amount.thousand_unit:
            continue
        relation = amount.relation
        for name, pattern in () if relation else _BEFORE_RULES:
            if pattern.search(before):
                relation = name
                break
        if relation is None:
            for name, pattern in _AFTER_RULES:
                if pattern.match(after):
                    relation = name
                    break
        if amount.bare and relation is None:
            continue  # "три бутылки", "на двух": a number, not a budget
        value = amount.value
        if not amount.money_unit and not amount.thousand_unit:
            if value < 100:
                continue  # "до 5", "18 градусов": not a price
            if 1900 <= value <= 2035 and (relation is None or _YEAR_BEFORE.search(before)):
                continue  # a vintage year, not a price
            if relation is None and value < 300:
                continue
        if relation is None:
            relation = "approx"
        spans.add(amount.start, amount.end)
        if relation == "max":
            price_max = value if price_max is None else min(price_max, value)
        elif relation == "min":
            price_min = value if price_min is None else max(price_min, value)
        else:
            price_min, price_max = round(value * APPROX_LOW), round(value * APPROX_HIGH)
    return price_min, price_max


def _price_words(t: str, spans: _Spans) -> tuple[float | None, float | None]:
    """Price bounds said in words: "бюджетное" → max, "премиальное"/"солидное" → min."""
    m = _CHEAP.search(t)
    if m and not _CHEAPER.fullmatch(m.group(0)):
        spans.add(m.start(), m.end())
        return None, CHEAP_PRICE_MAX
    m = _PREMIUM.search(t)
    if m and not _negated(t, m.start()):
        spans.add(m.start(), m.end())
        return PREMIUM_PRICE_MIN, None
    m = _SOLID.search(t)
    if m and not _negated(t, m.start()):
        spans.add(m.start(), m.end())
        return SOLID_PRICE_MIN, None
    return None, None


# --------------------------------------------------------------------------- grapes, countries, regions, food

# Aliases that are also everyday words: "кот дю рон" is a place, not Malbec; "роль" (Rolle) is
# Vermentino, but "какую роль играет кислотность" is not about grapes.
_EXCLUDED_GRAPE_ALIASES = {"кот", "cot", "роль", "rolle"}
# The catalogue writes "Пино Гриджио"; this value also matches "Пино Гри" through the tools' aliases.
_GRAPE_AND_TYPE = {"просекко", "prosecco", "ламбруско", "lambrusco"}
_GRAPE_VALUE_OVERRIDES = {"Пино Гри": "Пино Гриджио"}


def _inflect_word(word: str) -> str:
    """A regex for the case forms of one word of a grape name."""
    if not re.fullmatch(r"[а-я]+", word):
        return re.escape(word)
    if word.endswith(("ий", "ый", "ой")) and len(word) > 4:
        return re.escape(word[:-2]) + _ADJ
    if word.endswith("ь"):
        return re.escape(word[:-1]) + r"(?:ь|я|ю|ем|е|и)"
    if word.endswith("а"):
        return re.escape(word[:-1]) + r"(?:а|ы|у|ой|е)"
    if word[-1] in "еиоуыэюя":
        return re.escape(word)
    return re.escape(word) + r"(?:а|у|ом|е|ы|ов|ами|ах|ом)?"


def _grape_table() -> list[tuple[re.Pattern[str], str]]:
    aliases = {k: v for k, v in language.grape_aliases().items() if k not in _EXCLUDED_GRAPE_ALIASES}
    table = []
    for alias in sorted(aliases, key=len, reverse=True):
        words = alias.split()
        pattern = r"\s+".join(_inflect_word(w) for w in words)
        value = aliases[alias]
        table.append((_rx(pattern), _GRAPE_VALUE_OVERRIDES.get(value, value)))
    table.append((_rx(r"мускатн\w*"), "Мускат"))
    return table


_GRAPES = _grape_table()


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

_MOOD_CUES = _rx(
    r"легк\w*|легч\w*|полегче|свеж\w*|посвежее|освеж\w*|летн\w*|лет(?:о|ом|а)|жар\w*|зной\w*|зимн\w*|зим[аыуео]\w*|"
    r"осенн\w*|осен\w*|весенн\w*|весн\w*|камин\w*|уют\w*|плед\w*|согре\w*|холодн\w*|мороз\w*|романт\w*|свидан\w*|"
    r"ужин\w*|обед\w*|праздн\w*|отмет\w*|отпраздн\w*|торжеств\w*|юбиле\w*|свадьб\w*|новогодн\w*|новый\s+год|"
    r"рождени\w*|рождеств\w*|корпоратив\w*|вечеринк\w*|тусовк\w*|фуршет\w*|подар\w*|подарит\w*|гост\w*|друз\w*|"
    r"компани\w*|посидел\w*|пикник\w*|дач\w*|природ\w*|пляж\w*|террас\w*|веранд\w*|вечер\w*|отдых\w*|расслаб\w*|"
    r"фрукт\w*|ягод\w*|вишн\w*|черешн\w*|малин\w*|клубни\w*|смородин\w*|персик\w*|абрикос\w*|цитрус\w*|яблок\w*|"
    r"груш\w*|минерал\w*|ванил\w*|дуб\w*|бочк\w*|карамел\w*|пряност\w*|пряны\w*|специ\w*|бархат\w*|насыщ\w*|"
    r"понасыщеннее|плотн\w*|поплотнее|мощн\w*|помощнее|полнотел\w*|густ\w*|терпк\w*|танин\w*|мягк\w*|помягче|"
    r"нежн\w*|элегант\w*|изыскан\w*|утончен\w*|тонк\w*|сложн\w*|необычн\w*|интересн\w*|редк\w*|сочн\w*|округл\w*|"
    r"шелковист\w*|аромат\w*|цветоч\w*|кислинк\w*|бодр\w*|повседнев\w*|каждый\s+день|девушк\w*|жен[аеуы]\w*|"
    r"мам[аеуы]\w*|пап[аеуы]\w*|муж[аеу]?|начальник\w*|коллег\w*|покрепче|крепк\w*|"
    r"light|fresh|summer|winter|romantic|date|party|celebrat\w*|gift|picnic|fruity|elegant|rich|smooth|cozy"
)
_MOOD_REWRITES = {
    "полегче": "легкое",
    "посвежее": "свежее",
    "помягче": "мягкое",
    "понасыщеннее": "насыщенное",
    "поплотнее": "плотное",
    "помощнее": "мощное насыщенное",
    "покрепче": "насыщенное крепкое",
}
_FILLER = set(
    """и в во на с со к ко по для за из от до о об а но или что чтобы как так же ли бы не ни это этот эта эти то тот
    та те мне меня мой моя нам нас вы вас я ты он она они его ее их нибудь чего какое какой какую какие каким посоветуй
    посоветуйте подскажи подскажите порекомендуй порекомендуйте подбери подберите найди найдите хочу хочется хотелось
    нужно нужен нужна нужны надо можно пожалуйста вино вина вином вину вине вин винцо винишко бутылка бутылку бутылочку
    есть будет очень самое самый более менее еще уже что-нибудь выпить пить попить взять купить выбрать подойдет
    подойдёт подходит подходящее хорошее хороший хорошую неплохое вкусное отличное классное у ну вот тогда лучше
    может быть бы давай покажи дай посоветуешь есть ли the a an of for with and or to in some wine please recommend
    suggest something me i want need под подо около примерно рублей руб рубля тысяч тысячи""".split()
)

# --------------------------------------------------------------------------- kinds

_GREETING = _rx(
    r"привет\w*|приветики|здравствуй\w*|здрасте|здрасьте|здорово|добр(?:ый|ого|ое|ой)\s+(?:день|дня|вечер|вечера|утро|ночи|времени\s+суток)|"
    r"доброе\s+утро|хай|хелло|салют|приветствую|йо|hello|hi|hey|good\s+(?:morning|evening|afternoon)|/start|start|"
    r"бот|сомелье|уважаемый|уважаемая|друг|дорогой"
)
_THANKS = _rx(
    r"спасибо\w*|спс|сенкс|благодар\w*|пасиб\w*|мерси|thanks?|thank\s+you|thx|ty|большое|огромное|вам|тебе|очень|"
    r"все|всё|понятно|ясно|отлично|супер|класс|круто|здорово|прекрасно|замечательно|хорошо|ок|окей|ok|okay|good|great|"
    r"возьму|взял|взяла|беру|помог\w*|выручил\w*"
)
_THANKS_CORE = _rx(r"спасибо\w*|спс|сенкс|благодар\w*|пасиб\w*|мерси|thanks?|thank\s+you|thx")
_HELP = _rx(
    r"/help|help|помощь|справка|что\s+ты\s+(?:умеешь|можешь)|что\s+умеешь|что\s+можешь|как\s+(?:тобой|с\s+тобой|этим|ботом)\s+пользоваться|"
    r"как\s+ты\s+работаешь|как\s+это\s+работает|кто\s+ты|ты\s+кто|что\s+ты\s+такое|чем\s+(?:ты\s+)?(?:можешь\s+)?помочь|"
    r"какие\s+(?:есть\s+)?команды|команды|помоги"
)
_INFO = re.compile(
    r"(?:^|\s)(?:что\s+такое|что\s+это\s+(?:такое|значит)|что\s+значит|что\s+означает|что\s+обозначает|"
    r"чем\s+(?:\w+\s+){0,4}отлича\w*|в\s+ч[её]м\s+(?:разница|отличие)|разница\s+между|"
    r"как\s+(?:правильно\s+)?(?:хранить|подавать|пить|открыть|открывать|охлаждать|охладить|декантировать|дегустировать|читать|"
    r"понять|определить|отличить|держать|выбирать\s+бокал|выбрать\s+бокал)|"
    r"при\s+какой\s+температуре|как(?:ая|ой)\s+температур\w*|сколько\s+(?:можно\s+|стоит\s+|нужно\s+)?(?:хранить|хранится|храниться|живет|стоит\s+открытое|декантировать)|"
    r"зачем|почему|отчего|расскажи(?:те)?\s+(?:мне\s+)?(?:про|о|об)|объясни\w*|поясни\w*|кто\s+такой|кто\s+такие|"
    r"what\s+is|what\s+are|what\s+does|how\s+to\s+(?:store|serve)|why|difference\s+between|"
    r"как(?:ой|ие|ую|ими)\s+(?:нужн\w+\s+)?бокал\w*|в\s+как(?:ой|их|ом)\s+бокал\w*|"
    r"какую\s+роль|как\s+влия\w*|на\s+что\s+влия\w*|"
    r"нужно\s+ли|надо\s+ли|можно\s+ли\s+(?:хранить|пить|охлаждать|ставить|класть|замораживать)|правда\s+ли)(?=\s|$|[?,.!])"
)
_TELL_ABOUT = re.compile(
    r"(?:^|\s)(?:расскажи(?:те)?\s+(?:мне\s+)?(?:про|о|об)|что\s+можешь\s+сказать\s+(?:про|о|об))\s"
)
_WINE_WORD = _rx(
    r"вин(?:о|а|у|ом|е|ам|ами|ах)|винц\w*|винишк\w*|вино\w*|бутыл\w*|бутылочк\w*|wine\w*|винтаж\w*|бокал\w*"
)
_ASK_VERB = _rx(
    r"посовет\w*|подбер\w*|подобра\w*|порекоменд\w*|рекоменд\w*|подскаж\w*|предлож\w*|выпить|попить|пить|выпьем|"
    r"взять|купить|прикупить|выбрать|подать|налить|угостить|recommend\w*|suggest\w*|pick|что\s+(?:бы\s+)?(?:выпить|взять|открыть)"
)
_OFF_TOPIC = _rx(
    r"погод\w*|дожд\w*|прогноз\w*|политик\w*|президент\w*|выбор(?:ы|ах|ов)|войн\w*|новост\w*|курс\s+(?:доллара|валют\w*|евро|рубля)|"
    r"доллар\w*|биткоин\w*|крипт\w*|акци(?:и|й)\s+(?:компании|сбербанка|газпрома)|код|кода|программ\w*|python|питон\w*|javascript|"
    r"java|sql|скрипт\w*|функци\w*|алгоритм\w*|html|css|уравнени\w*|интеграл\w*|производн\w*|математ\w*|задач\w*|домашн\w*\s+задани\w*|"
    r"домашк\w*|реши|решить|сочинени\w*|реферат\w*|переведи|перевод\w*|футбол\w*|хоккей\w*|матч\w*|фильм\w*|сериал\w*|книг\w*|"
    r"игр(?:а|у|ы|ой)|телефон\w*|смартфон\w*|айфон\w*|iphone|ноутбук\w*|компьютер\w*|машин\w*|автомобил\w*|кредит\w*|ипотек\w*|"
    r"врач\w*|лекарств\w*|таблетк\w*|болит|билет\w*|такси|отел\w*|гостиниц\w*|рецепт\w*|приготовить|готовить|закажи|доставк\w*|"
    r"пиво|пива|водк\w*|виски|коньяк\w*|ром|текил\w*|коктейл\w*|кофе|чай|чая|weather|politic\w*|code|coding|math\w*|homework|"
    r"bitcoin|football|movie\w*|phone|laptop|столица|столицу|анекдот\w*|шутк\w*|стих\w*|песн\w*|гороскоп\w*|знак\w*\s+зодиака"
)
_FOLLOW_START = re.compile(
    r"^(?:а|и|ну|тогда|лучше|может|может\s+быть|а\s+если|а\s+как\s+насчет|а\s+что\s+насчет|а\s+можно|а\s+есть|"
    r"а\s+теперь|and|what\s+about|how\s+about)(?=\s|$|[?,.!])"
)
_PREVIOUS_REQUEST = _rx(
    r"(?:по\s+)?(?:моему\s+|тому\s+же\s+|этому\s+же\s+)?(?:предыдущ\w*|прошл\w*|тому\s+же|этому\s+же)\s+(?:запрос\w*|вопрос\w*)"
)
_MORE = _rx(
    r"ещ[её]|больше\s+вариантов|другие|другое|другой|другого|других|другую|иные|иное|альтернатив\w*|похож\w*|аналог\w*|"
    r"more|other|others|another|else"
)


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _content_left(t: str, *patterns: re.Pattern[str]) -> list[str]:
    rest = t
    for pattern in patterns:
        rest = pattern.sub(" ", rest)
    return [w for w in _words(rest) if w not in {"и", "а", "вам", "тебе", "ну", "ещ", "же", "уж"}]


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
    spans = _Spans()
    filters: dict[str, Any] = {}

    # Grapes first: "Пино Нуар" must not be read as anything else, "Красностоп" is not "красное".
    grape_hits: list[tuple[int, str]] = []
    for pattern, value in _GRAPES:
        for m in pattern.finditer(t):
            if spans.covers(m.start(), m.end()):
                continue
            if m.group(0) not in _GRAPE_AND_TYPE:  # "просекко" also says "sparkling"
                spans.add(m.start(), m.end())
            if not _negated(t, m.start()):
                grape_hits.append((m.start(), value))
    if grape_hits:
        filters["grape_variety"] = min(grape_hits)[1]

    regions: list[tuple[int, str]] = []
    for m, region, subregion in language.regions_in(t):
        if spans.covers(m.start_char, m.end_char) or _negated(t, m.start_char):
            continue
        spans.add(m.start_char, m.end_char)
        regions.append((m.start_char, _subregion_title(m.phrase) if subregion else region.name))
    if regions:
        filters["region"] = min(regions)[1]

    wine_type = _pick_enum(t, _TYPES, spans)
    if wine_type:
        filters["wine_type"] = wine_type
    # "брют" is both sparkling and dry: let the sweetness table see it again.
    sweet_spans = _Spans()
    sweet_spans.ranges = [r for r in spans.ranges if not re.match(r"брют|brut", t[r[0] : r[1]])]
    sweetness = _pick_enum(t, _SWEETNESS, sweet_spans)
    spans.ranges = sweet_spans.ranges + [r for r in spans.ranges if r not in sweet_spans.ranges]
    if sweetness:
        filters["sweetness"] = sweetness

    countries: list[tuple[int, str]] = []
    for m, country in language.countries_in(t):
        if spans.covers(m.start_char, m.end_char):
            continue
        spans.add(m.start_char, m.end_char)
        if not _negated(t, m.start_char):
            countries.append((m.start_char, country.name))
    if len({c for _, c in countries}) == 1:
        filters["country"] = countries[0][1]
    elif countries:  # "Франция или Италия": keep the first one named
        filters["country"] = min(countries)[1]

    foods: list[tuple[int, str]] = []
    for m in language.dishes_in(t, fuzzy=True):
        if spans.covers(m.start_char, m.end_char):
            continue
        spans.add(m.start_char, m.end_char)
        if not _negated(t, m.start_char):
            foods.append((m.start_char, _food_value(m.phrase)))
    if foods:
        filters["food_pairing"] = min(foods)[1]

    price_min, price_max = _read_price(raw, spans)
    direction: PriceDirection | None = None
    if price_min is None and price_max is None:
        cheaper, pricier = _CHEAPER.search(t), _PRICIER.search(t)
        if cheaper and not spans.covers(cheaper.start(), cheaper.end()):
            direction = "cheaper"
            spans.add(cheaper.start(), cheaper.end())
        elif pricier and not spans.covers(pricier.start(), pricier.end()):
            direction = "pricier"
            spans.add(pricier.start(), pricier.end())
        else:
            price_min, price_max = _price_words(t, spans)
    if price_min is not None:
        filters["price_min"] = _round_price(price_min)
    if price_max is not None:
        filters["price_max"] = _round_price(price_max)
    if "price_min" in filters and "price_max" in filters and filters["price_min"] > filters["price_max"]:
        del filters["price_min"]

    more = bool(_MORE.search(t))
    mood = _read_mood(t, spans)
    strong = bool(
        {"wine_type", "sweetness", "grape_variety"} & filters.keys()
        or _WINE_WORD.search(t)
        or any(pattern.search(t) for _, pattern in _TYPES)
    )
    weak = bool(filters) or mood is not None or direction is not None
    return _Reading(filters, mood, strong, weak, direction, more)


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
        if len(word) < 2:
            continue
        kept.append(_MOOD_REWRITES.get(word, word))
    mood = " ".join(kept).strip()
    return mood or None


def _kind_without_previous(raw: str, t: str, reading: _Reading) -> tuple[Kind, str | None]:
    if not _words(t):
        # "👍", "🙏", "🍷": a reaction; "", "?": the customer needs a hint
        return ("help" if not t.strip(" ?!.,") else "thanks"), None
    if not _content_left(t, _GREETING, re.compile(r"[^\w\s]")):
        return "greeting", None
    if not _content_left(t, _THANKS, _GREETING):  # "спасибо!", "ок, понятно", "отлично"
        return "thanks", None
    if _HELP.search(t) and not reading.strong and not reading.weak and not _ASK_VERB.search(t):
        return "help", None
    if _INFO.search(t):
        hit = glossary.lookup(raw)
        if hit:
            return "informational", hit[0]
        if _TELL_ABOUT.search(t) and (reading.filters or reading.mood):
            return "recommendation", None
        return "informational", None
    hit = glossary.lookup(raw)
    if hit and not reading.strong and not reading.weak and not _ASK_VERB.search(t):
        return "informational", hit[0]
    if reading.strong:
        return "recommendation", None
    if _OFF_TOPIC.search(t):
        return "off_topic", None
    if reading.weak or reading.more or _ASK_VERB.search(t):
        return "recommendation", None
    if hit:
        return "informational", hit[0]
    return "off_topic", None


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
    if "price_min" in new or "price_max" in new:
        merged.pop("price_min", None)
        merged.pop("price_max", None)
    merged.update(new)
    return merged


def read_query(text: str, previous: QueryIntent | None = None) -> QueryIntent:
    """Read one customer message; `previous` is the intent of the customer's previous request."""
    raw, t = _prepare((text or "")[:MAX_READ_CHARS])
    reading = _read_filters(raw, t)
    kind, topic = _kind_without_previous(raw, t, reading)

    follow_up = False
    if kind in ("recommendation", "off_topic", "thanks") and _is_follow_up(t, reading, previous):
        rest = _content_left(t, _THANKS, _GREETING)
        if kind != "thanks" or rest:
            kind, follow_up = "recommendation", True
    if kind != "recommendation":
        return QueryIntent(kind=kind, filters={}, mood=None, topic=topic)

    stated = tuple(k for k in FILTER_KEYS if k in reading.filters)
    if follow_up and previous is not None:
        filters = _merge(previous, reading)
        mood = reading.mood or previous.mood
    else:
        filters = dict(reading.filters)
        mood = reading.mood
    direction = reading.direction
    if direction is not None:
        _resolve_direction(filters, direction, previous if follow_up else None)
        stated = tuple(dict.fromkeys((*stated, "price_max" if direction == "cheaper" else "price_min")))
    more = reading.more and (follow_up or not reading.filters)
    return QueryIntent(
        kind="recommendation",
        filters=filters,
        mood=mood,
        topic=None,
        follow_up=follow_up,
        more=more,
        price_direction=direction,
        stated=stated,
    )


def describe_filters(filters: dict[str, Any]) -> dict[str, Any]:
    """The filters as search_wines arguments (no extra keys)."""
    return {k: filters[k] for k in FILTER_KEYS if filters.get(k) is not None}
