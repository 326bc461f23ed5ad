"""A wine's name as the caption shows it: the shop's name without what its own fields already say (the
vintage, the producer) or what a customer does not read as a name (the bottle's size «0,75 л», the strength
«13,5%»), its price-list shorthand written out («кр.сух.» → «красное сухое»). The catalogue keeps the name as
the shop wrote it; only the line a customer reads is cleaned.
"""

from __future__ import annotations

import re
from functools import cache

from sommelier.language.catalog_columns import expand_shorthand, harvest_year_pattern
from sommelier.language.vocabulary import data

_STRENGTH = re.compile(r"(?<![\w.,])(?:alc\.?\s*)?\d{1,2}(?:[.,]\d{1,2})?\s*%(?:\s*(?:об\.?|vol\.?|alc\.?))?", re.I)
_YEAR = re.compile(r"(?<![\w.,])((?:19|20)\d{2})(?:\s*(?:г\.|г(?![\w])|год(?![\w])))?(?![\w])", re.IGNORECASE)
_TRIM = " \t,;:-–—/|·"
_SPACES = re.compile(r"\s{2,}")


@cache
def _volume() -> re.Pattern[str]:
    units = "|".join(re.escape(u) for u in sorted(data("catalog_columns.json")["volume_units"], key=len, reverse=True))
    return re.compile(rf"(?<![\w.,])\d+(?:[.,]\d+)?\s*(?:{units})\.?(?![\w])", re.IGNORECASE)


def _without(text: str, phrase: str) -> str:
    """The text without `phrase` as a whole phrase (any case), where what is left still reads as a name: two
    words or more, and no shorter than the phrase («Шабли Гран Крю АОС Водезир» by «Шабли Гран Крю» would
    leave «АОС Водезир», less of a name than the whole)."""
    if not phrase.strip():
        return text
    found = re.search(rf"(?<![\w]){re.escape(phrase.strip())}(?![\w])", text, re.IGNORECASE)
    if found is None:
        return text
    before, after = text[: found.start()].strip(_TRIM), text[found.end() :].strip(_TRIM)
    # at the start, at the end, or followed by style words only («… Ведерниковъ красное сухое»); inside a name
    # («Усадьба Мезыбь. Каберне…») it is part of the name
    if before and after and after != after.lower():
        return text
    left = " ".join(f"{before} {after}".split()).strip(_TRIM)
    return left if len(left.split()) >= 2 and len(left) >= len(phrase.strip()) else text


def name_line(name: str, producer: str = "", vintage: int | None = None) -> str:
    """The name a caption shows beside «— producer, vintage» (never empty: the name itself at worst)."""
    line = expand_shorthand(name)
    line = harvest_year_pattern().sub(lambda m: " " if vintage and m.group(1) == str(vintage) else m.group(0), line)
    if vintage:
        line = _YEAR.sub(lambda m: " " if m.group(1) == str(vintage) else m.group(0), line)
    line = _volume().sub(" ", line)
    line = _STRENGTH.sub(" ", line)
    line = _without(line, producer)
    line = re.sub(r"\(\s*[,;]?\s*\)", " ", line)  # «(2021)» emptied
    line = _SPACES.sub(" ", line.replace(" ,", ",").replace(" .", ".")).strip(_TRIM)
    return line or " ".join(name.split())


def volume_in(name: str) -> str:
    """The bottle's size a name carries («0,75 л», «750ml», «1L»), as written; "" when it carries none."""
    found = _volume().search(name)
    return " ".join(found.group(0).split()) if found else ""


def without_size(name: str) -> str:
    """The name without the bottle's size and the strength («… 2021 0,75 л 13%» → «… 2021»)."""
    return _SPACES.sub(" ", _STRENGTH.sub(" ", _volume().sub(" ", name))).strip(_TRIM)
