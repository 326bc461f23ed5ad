"""The tool function's wire: domain objects to JSON and back, written out by hand here rather than through
the codec, so that a change of shape shows."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sommelier.domain.catalog import CatalogStats, FieldCoverage, PriceRange
from sommelier.domain.conversation import ChatMessage, History, TurnEnd
from sommelier.domain.wire import from_wire, to_wire

STATS_JSON = {
    "wines": 3,
    "available": 2,
    "unavailable": 1,
    "with_photo": 1,
    "unknown_country": 0,
    "by_type": {"red": 2, "white": 1},
    "by_country": {"Италия": 3},
    "price_rub": {"min": 900, "median": 1500, "max": 4200},
    "embedding_models": {"local": 3},
    "coverage": {"country": {"given": 2, "inferred": 1, "unknown": 0}},
}


def test_a_dataclass_with_named_tuples_inside_is_plain_json():
    stats = CatalogStats(
        wines=3,
        available=2,
        unavailable=1,
        with_photo=1,
        unknown_country=0,
        by_type={"red": 2, "white": 1},
        by_country={"Италия": 3},
        price_rub=PriceRange(900, 1500, 4200),
        embedding_models={"local": 3},
        coverage={"country": FieldCoverage(given=2, inferred=1, unknown=0)},
    )
    assert to_wire(stats) == STATS_JSON
    assert from_wire(CatalogStats, STATS_JSON) == stats


def test_a_named_tuple_is_an_object_with_its_field_names_not_a_list():
    message = ChatMessage(7, "user", "красное к стейку", ["w1"], None, "2026-11-26T10:00:00Z")
    assert to_wire(History(messages=[message])) == {
        "messages": [
            {
                "id": 7,
                "role": "user",
                "content": "красное к стейку",
                "wine_ids": ["w1"],
                "response_type": None,
                "created_at": "2026-11-26T10:00:00Z",
            }
        ]
    }


def test_fields_a_newer_tool_function_adds_are_ignored_at_every_depth():
    newer = {**STATS_JSON, "by_vintage": {"2020": 3}}
    newer["price_rub"] = {**STATS_JSON["price_rub"], "mean": 1800}
    newer["coverage"] = {"country": {"given": 2, "inferred": 1, "unknown": 0, "checked": 1}}
    stats = from_wire(CatalogStats, newer)
    assert stats.price_rub == PriceRange(900, 1500, 4200)
    assert stats.coverage["country"] == FieldCoverage(2, 1, 0)

    turn_end = from_wire(TurnEnd, {"saved": None, "wines": [], "missing": ["w9"], "photos_cached": 0, "took_ms": 5})
    assert turn_end.missing == ["w9"]


@pytest.mark.parametrize(
    "answer",
    [
        {**STATS_JSON, "wines": "three"},  # a wrong type
        {key: value for key, value in STATS_JSON.items() if key != "available"},  # a field missing
        {**STATS_JSON, "price_rub": [900, 1500]},  # a record of another shape
        ["not", "an", "object"],
    ],
)
def test_an_answer_of_another_shape_is_refused(answer):
    with pytest.raises(ValidationError):
        from_wire(CatalogStats, answer)
