"""The search filters and their words, one table (language/data/filter_words.json): how the search tools
describe each filter to the model, the words an enum value of it is said in, and the filter that rules such
a value out. domain/search.py builds the search's arguments from it, the offline reader reads a message's
filters by it, and a description's own constraints (language/constraints.py) too."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from sommelier.language.vocabulary import data

if TYPE_CHECKING:
    from sommelier.language.phrases import Cues


class FilterWords(NamedTuple):
    key: str  # the search argument: "wine_type", "exclude_country", "sort"
    described: str  # what the search tools tell the model it means
    values: str | None  # the wine_words.json list its enum values are said in («красное» → red), if any
    ruled_out_by: str | None  # the filter that rules a value of this one out («не красное»), if any
    binding: bool = False  # a hard constraint of the request: a shown wine keeps it (domain/request_fit.py)


@cache
def filter_table() -> dict[str, FilterWords]:
    """Every search filter by its key, in the order the offline reader lists a request's filters."""
    return {
        key: FilterWords(key, row["described"], row.get("values"), row.get("ruled_out_by"), row.get("binding") is True)
        for key, row in data("filter_words.json")["filters"].items()
    }


def filter_keys() -> tuple[str, ...]:
    return tuple(filter_table())


def described(key: str) -> str:
    """How the search tools describe the filter to the model («Страна производства (например: …)»)."""
    return filter_table()[key].described


def binding_keys() -> tuple[str, ...]:
    """The filters that are hard constraints of a request (colour, sweetness, budget, place, grape and what
    is ruled out), in the table's order."""
    return tuple(row.key for row in filter_table().values() if row.binding)


def ruled_out_by() -> dict[str, str]:
    """Each filter a value of which another rules out → that other («wine_type» → «exclude_wine_type»)."""
    return {row.key: row.ruled_out_by for row in filter_table().values() if row.ruled_out_by}


def value_spellings(key: str) -> dict[str, str]:
    """Every spelling of the filter's enum values → the value («красного» → red); empty for a filter whose
    values are no enum said in words (a country, a sort order)."""
    from sommelier.language.style_words import enum_words  # at the first search, not at the tools' cold start

    values = filter_table()[key].values
    return enum_words(values) if values else {}


def value_cues(key: str) -> Cues:
    """The filter's enum values as cues in a message («красного», «сухим» → red, dry), matched on stems."""
    from sommelier.language.style_words import style_cues

    values = filter_table()[key].values
    if values is None:
        raise KeyError(f"{key} has no enum values said in words")
    return style_cues(values)
