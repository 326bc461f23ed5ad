"""A shop's own catalogue file in words (catalog_columns.json, budget.json, shop_shorthand.json): what its
column names mean, what a stock cell or a price cell says, a vintage written after its words in a name,
and a price list's style abbreviations written out."""

from __future__ import annotations

import re
from functools import cache

from sommelier.language.text import SPACES, normalize, words
from sommelier.language.vocabulary import data

_UNIT_IN_BRACKETS = re.compile(r"\([^)]*\)")
_CAMEL_HUMP = re.compile(r"(?<=[a-z])(?=[A-Z])")


@cache
def _catalog_columns() -> dict[str, str]:
    spec = data("catalog_columns.json")["columns"]
    return {_header_key(alias): field for field, aliases in spec.items() for alias in aliases}


def _header_key(header: str) -> str:
    # «wineColor», «price_rub», «Цена (руб.)» and «Цена, руб» all read as words
    return " ".join(words(_UNIT_IN_BRACKETS.sub(" ", _CAMEL_HUMP.sub(" ", header)).replace("₽", " ")))


def catalog_column(header: str) -> str | None:
    """The catalogue field a shop's own column name means («Сорт винограда» → grape_varieties,
    «Цена, руб.» → price_rub, «wineColor» → wine_type), or None. Besides the catalogue's fields, `stock` (how
    many bottles the shop has) and `category` (the shop's own section, read to tell wine from the rest)."""
    key = _header_key(header)
    found = _catalog_columns().get(key)
    # «Цена, руб.», «Остаток, шт.», «Остаток-1», «Цена розн., руб.»: a unit, a currency or a number after the name
    for _ in range(2):
        if found is not None or " " not in key:
            break
        key, last = key.rsplit(" ", 1)
        if not (last.isdigit() or last in _money_words() or last in _header_units()):
            break
        found = _catalog_columns().get(key)
    return found


@cache
def _header_units() -> frozenset[str]:
    return frozenset(normalize(w) for w in data("catalog_columns.json")["header_unit_words"])


def stock_word(cell: str) -> bool | None:
    """What a stock cell's words say: True in stock («в наличии», «да»), False none («нет», «под заказ»),
    None when they say neither (catalog_columns.json `stock_words`)."""
    words_of = data("catalog_columns.json")["stock_words"]
    text = normalize(cell)
    if text in {normalize(w) for w in words_of["in_stock"]}:
        return True
    if text in {normalize(w) for w in words_of["none"]}:
        return False
    return None


@cache
def harvest_year_pattern() -> re.Pattern[str]:
    """A vintage after its words in a name: «год урожая 2020», «урожай: 2019» (catalog_columns.json)."""
    spoken = "|".join(
        re.escape(w) for w in sorted(data("catalog_columns.json")["harvest_words"], key=len, reverse=True)
    )
    return re.compile(rf"(?:{spoken})\s*:?\s*((?:19|20)\d{{2}})", re.IGNORECASE)


@cache
def _money_words() -> tuple[str, ...]:
    """The currency words and signs (budget.json), longest first, without a closing dot."""
    spellings = {normalize(w).rstrip(".") for w in data("budget.json")["units"]["money"]}
    return tuple(sorted(spellings - {""}, key=len, reverse=True))


def without_currency(amount: str) -> str:
    """A price cell without spaces and its currency word or sign: «1 890 руб.», «1890р», «₽ 1890» → «1890»."""
    text = SPACES.sub("", amount).lower().rstrip(".")  # thin and no-break spaces are spaces too; a minus stays
    for word in _money_words():
        if text.endswith(word) and text[: -len(word)][-1:].isdigit():
            return text[: -len(word)]
        if text.startswith(word) and text[len(word) :][:1].isdigit():
            return text[len(word) :]
    return text


@cache
def _shorthand() -> tuple[re.Pattern[str], dict[str, str]]:
    table = {key.lower(): word for key, word in data("shop_shorthand.json")["shorthand"].items()}
    keys = "|".join(re.escape(k) for k in sorted(table, key=len, reverse=True))
    return re.compile(rf"(?<![^\W\d_])({keys})\.?(?![^\W\d_])", re.IGNORECASE), table


def expand_shorthand(text: str) -> str:
    """A price list's style abbreviations written out: «Кьянти кр.сух» → «Кьянти красное сухое»,
    «игр. бел. п/сл.» → «игристое белое полусладкое» (shop_shorthand.json)."""
    pattern, table = _shorthand()
    return pattern.sub(lambda m: f" {table[m.group(1).lower()]} ", text)
