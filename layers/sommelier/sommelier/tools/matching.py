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
- Region → a case-insensitive substring of the region or the appellation, after the region's aliases
  ("Tuscany" → тоскана).
"""

from __future__ import annotations

from sommelier import language


def canonical_country(value: str) -> str:
    """The catalogue's name for a country the customer wrote in any usual way."""
    known = language.country(value)
    return known.name if known else value.strip()


def country_code(value: str) -> str | None:
    known = language.country(value)
    return known.code if known else None


def country_keys(value: str) -> list[str]:
    """Normalised country names that satisfy the filter."""
    return [language.normalize(canonical_country(value))]


def grape_keys(value: str) -> list[str]:
    """Normalised canonical grape names that satisfy the filter."""
    return language.grape_keys_for_query(value)


def food_categories(value: str) -> list[str]:
    """The food categories a request names (empty when the vocabulary knows none of its words)."""
    return sorted(language.food_categories(value, fuzzy=True))


def region_key(value: str) -> str:
    """The region's Russian name for another spelling of it («Tuscany» → тоскана); a subregion or an
    unknown place as written («Болгери», «Pauillac»), matched inside the region or the appellation."""
    known = language.region(value)
    return language.normalize(known.name if known else value)


def known_countries() -> list[str]:
    return [c.name for c in language.countries()]
