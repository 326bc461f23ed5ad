"""One table maps each search filter to its words (language/data/filter_words.json): the search tools'
arguments and their descriptions for the model (domain/search.py), the offline reader and a description's own
constraints all read it, so a filter added to the search is one the offline responder reads and passes on."""

from __future__ import annotations

from dataclasses import fields

import pytest
from sommelier import language
from sommelier.domain.search import SearchFilters, search_filters
from sommelier.domain.wine import SWEETNESS_LEVELS, WINE_TYPES
from sommelier.language import constraints
from sommelier.language.filter_words import filter_table, ruled_out_by, value_cues, value_spellings
from sommelier.offline.intent import EXCLUSIONS, FILTER_KEYS, describe_filters
from sommelier.offline.reader import read_query

OFFERED = {item.name: item for item in fields(SearchFilters) if "llm" in item.metadata}


def test_every_filter_the_search_offers_is_a_row_of_the_table_and_no_other():
    assert list(OFFERED) == sorted(filter_table(), key=list(OFFERED).index)
    assert set(OFFERED) == set(filter_table())


def test_the_model_reads_each_filter_as_the_table_describes_it():
    for key, item in OFFERED.items():
        assert item.metadata["llm"]["description"] == filter_table()[key].described


def test_an_enum_filter_is_said_in_its_table_words():
    enums = {"wine_types": WINE_TYPES, "sweetness": SWEETNESS_LEVELS}
    for key, row in filter_table().items():
        allowed = OFFERED[key].metadata["llm"]["enum"]
        if row.values is None:
            assert value_spellings(key) == {}
            continue
        assert tuple(allowed) == enums[row.values], key
        assert set(value_spellings(key).values()) == set(allowed), key


def test_what_rules_a_value_out_is_a_filter_of_the_same_words():
    for key, excluded in ruled_out_by().items():
        assert excluded in filter_table(), excluded
        assert filter_table()[excluded].values == filter_table()[key].values


def test_the_reader_passes_on_every_filter_of_the_table():
    assert FILTER_KEYS == tuple(filter_table())
    assert EXCLUSIONS == ruled_out_by()
    every = {key: "x" for key in filter_table()}
    assert describe_filters({**every, "limit": 3}) == every


@pytest.mark.parametrize(
    ("said", "key", "value"),
    [("красное", "wine_type", "red"), ("игристое", "wine_type", "sparkling"), ("полусухое", "sweetness", "semi_dry")],
)
def test_the_same_words_state_a_filter_to_the_search_the_reader_and_a_description(said, key, value):
    assert getattr(search_filters({key: said}), key) == value
    assert {m.value for m in value_cues(key).find(language.normalize(said))} == {value}
    assert read_query(f"хочу {said} вино").filters[key] == value
    assert constraints.stated_constraints(f"{said} вино")[key] == value
    excluded = ruled_out_by()[key]
    assert getattr(search_filters({excluded: said}), excluded) == value
    assert read_query(f"вино, но не {said}").filters.get(excluded) == value
