"""How customer phrasing maps onto the catalogue's normalised columns (documented in docs/matching.md).

The vocabulary is the language layer's (sommelier.language); this module only turns a filter value
into what the SQL compares:
- Country → an ISO code ("США", "USA", "Соединенные Штаты Америки", "американское" → US), compared with
  `country_code`. An unknown country is compared with the catalogue's name as written.
- Grape → normalised canonical names ("Shiraz", "шираз" → сира), compared with `grape_keys`; words that
  begin known grapes cover them all ("каберне" → каберне совиньон, каберне фран).
- Food → categories ("стейк", "шашлык" → говядина…; "к утке" → птица), compared with `food_categories`,
  which the importer computed from the wine's pairings the same way. Words match on stems at word
  boundaries, so «паста» never matches «антипасто».
- Region → whole words of the region or the appellation (PostgreSQL's `russian` text search): any
  spelling of a known region or of a place inside it ("Tuscany" → тоскана, toscana, кьянти…), else the
  place as written. «Асти» is a word of «Asti DOCG» but not of «Кастилия».
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sommelier import language


def canonical_country(value: str) -> str:
    """The catalogue's name for a country the customer wrote in any usual way."""
    known = language.country(value)
    return known.name if known else value.strip()


def country_code(value: str) -> str | None:
    known = language.country(value)
    return known.code if known else None


def countries_listed(value: str) -> list[str]:
    """The countries a value lists, each by the catalogue's name («Италия, Франция», «Italy and France» →
    Италия, Франция); a value that names one country, or none the vocabulary knows, is one item as written
    («Босния и Герцеговина»)."""
    parts = [p.strip() for p in re.split(r"[,;/]+", value or "") if p.strip()]
    if len(parts) == 1:
        named = list(dict.fromkeys(c.name for _, c in language.countries_in(parts[0])))
        parts = named if len(named) > 1 else parts
    return list(dict.fromkeys(canonical_country(p) for p in parts))


def listed(key: str, value: Any) -> list[Any]:
    """The values one filter's value stands for: every country of an exclude_country list, else itself."""
    if key in ("country", "exclude_country") and isinstance(value, str):
        return countries_listed(value)
    return [value]


def grape_keys(value: str) -> list[str]:
    """Normalised canonical grape names that satisfy the filter."""
    return language.grape_keys_for_query(value)


def food_categories(value: str) -> list[str]:
    """The food categories a request names (empty when the vocabulary knows none of its words)."""
    return sorted(language.food_categories(value, fuzzy=True))


def region_phrases(value: str) -> list[str]:
    """The phrases a region filter looks for as whole words: every spelling of a known region and of the
    places inside it («Tuscany» → тоскана, toscana, кьянти…); a subregion or an unknown place as written
    («Болгери», «Pauillac»). Empty when the value has no words (then it is not a filter)."""
    known = language.region(value)
    spellings = language.region_spellings(known) if known else [value]
    return sorted({language.normalize(s) for s in spellings if language.words(s)})


def known_countries() -> list[str]:
    return [c.name for c in language.countries()]


# ---------------------------------------------------------------------------
# The normalised columns of a wine, computed from its text by the language layer at import
# (and for older rows, or after the vocabulary changes, by `backfill` right after the migrations).
# ---------------------------------------------------------------------------


def normalised_columns(country: str, grape_varieties: Sequence[str], food_pairings: Sequence[str]) -> dict[str, Any]:
    """country_code, grape names without shares and the shares, grape_keys, food_categories."""
    names: list[str] = []
    shares: list[float | None] = []
    for entry in grape_varieties:
        name, share = language.parse_grape(entry)
        if name and name not in names:
            names.append(name)
            shares.append(share)
    known = language.country(country, fuzzy=False)
    categories: set[str] = set()
    for pairing in food_pairings:
        categories |= language.food_categories(pairing)
    return {
        "country_code": known.code if known else None,
        "grape_varieties": names,
        "grape_shares": shares if any(s is not None for s in shares) else [],
        "grape_keys": sorted({language.grape_key(n) for n in names}),
        "food_categories": sorted(categories),
        "lexicon_version": language.version(),
    }
