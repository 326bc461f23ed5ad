"""The golden sets themselves: well-formed, covering the issue's categories, and consistent with their catalogue.

A golden set with wrong labels is worse than none, so every label and constraint is checked against the
catalogue file it runs on (independently of SQL and of the agent): eval/golden_set.json against the shipped
data/catalog/wines.json, eval/golden_set_shop.json against data/catalog/shop-export-example.json.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from sommelier_dev.evaluation.golden import GoldenSetError, load_golden_set, parse_golden_set
from sommelier_dev.evaluation.metrics import Catalog, constraint_violations

REQUIRED_CATEGORIES = {
    "filter_type",
    "filter_price",
    "filter_grape",
    "filter_origin",
    "filter_food",
    "mood",
    "follow_up",
    "informational",
    "off_topic",
    "prompt_injection",
    "social_engineering",
}
PREVIOUS_DEPENDENT = ("not_previous", "cheaper_than_previous", "pricier_than_previous")
ROOT = Path(__file__).resolve().parents[2]
SHOP_GOLDEN = ROOT / "eval" / "golden_set_shop.json"
SHOP_FILE = ROOT / "data" / "catalog" / "shop-export-example.json"


def _file_catalog(wines: list[dict]) -> Catalog:
    return Catalog({f"wine-{i}": wine for i, wine in enumerate(wines)})


@pytest.fixture(scope="module")
def golden():
    return load_golden_set()


@pytest.fixture(scope="module")
def catalog(shipped_wines) -> Catalog:
    return _file_catalog(shipped_wines)


@pytest.fixture(scope="module")
def shop_golden():
    return load_golden_set(SHOP_GOLDEN)


@pytest.fixture(scope="module")
def shop_catalog() -> Catalog:
    return _file_catalog(json.loads(SHOP_FILE.read_text("utf-8"))["wines"])


@pytest.fixture(scope="module", params=["shipped", "shop"])
def golden_and_catalog(request, golden, catalog, shop_golden, shop_catalog):
    """Each golden set with the catalogue file it runs on."""
    return (golden, catalog) if request.param == "shipped" else (shop_golden, shop_catalog)


def test_size_and_coverage(golden):
    assert len(golden.cases) >= 60
    counts = Counter(c.category for c in golden.cases)
    assert REQUIRED_CATEGORIES <= set(counts), f"missing categories: {REQUIRED_CATEGORIES - set(counts)}"
    assert set(golden.categories) == set(counts), "every declared category has cases and vice versa"
    assert all(n >= 5 for n in counts.values()), counts


def test_queries_are_russian_and_unique(golden):
    queries = [(c.history, c.query.casefold()) for c in golden.cases]
    assert len(set(queries)) == len(queries)
    non_russian = [c.id for c in golden.cases if not any("а" <= ch <= "я" for ch in c.query.lower())]
    assert non_russian == ["inj-02"], "one English injection on purpose; everything else is Russian"


def test_follow_ups_carry_their_preceding_turns(golden):
    follow_ups = [c for c in golden.cases if c.category == "follow_up"]
    assert len(follow_ups) >= 8
    assert all(c.history for c in follow_ups)
    assert any(len(c.history) >= 2 for c in follow_ups), "at least one chain of two earlier turns"
    assert not [c.id for c in golden.cases if c.history and c.category != "follow_up"]


def test_guard_cases_expect_no_search(golden_and_catalog):
    golden, _ = golden_and_catalog
    for case in golden.cases:
        if case.expect.guard_type is not None:
            assert case.expect.response_types == ("off_topic",)
            assert case.expect.tool_scored and not case.expect.tools, case.id
    guard_types = Counter(c.expect.guard_type for c in golden.cases if c.expect.guard_type)
    assert set(guard_types) == {"off_topic", "prompt_injection", "social_engineering"}


def test_mood_cases_have_three_to_eight_labels(golden):
    mood = [c for c in golden.cases if c.category == "mood"]
    assert len(mood) >= 10
    for case in mood:
        assert 3 <= len(case.expect.relevant) <= 8, case.id
        assert case.expect.tools == ("semantic_search",), case.id


def test_every_label_names_exactly_one_catalogue_wine(golden_and_catalog):
    golden, catalog = golden_and_catalog
    for case in golden.cases:
        for name, producer in case.expect.relevant:
            assert len(catalog.ids_for_label(name, producer)) == 1, f"{case.id}: {name} / {producer}"


def test_labelled_wines_meet_the_case_constraints(golden_and_catalog):
    golden, catalog = golden_and_catalog
    """A relevant wine that breaks the case's own hard constraints would be a contradictory label."""
    for case in golden.cases:
        for name, producer in case.expect.relevant:
            (wine_id,) = catalog.ids_for_label(name, producer)
            broken = constraint_violations(
                catalog.get(wine_id), case.expect.constraints, previous_ids=set(), previous_prices=[], wine_id=wine_id
            )
            assert not broken, f"{case.id}: {name} breaks {broken}"


def test_every_recommendation_case_is_satisfiable(golden_and_catalog):
    golden, catalog = golden_and_catalog
    """At least one catalogue wine meets the hard constraints (previous-turn ones aside)."""
    for case in golden.cases:
        if "recommendation" not in case.expect.response_types or not case.expect.constraints:
            continue
        constraints = {k: v for k, v in case.expect.constraints.items() if k not in PREVIOUS_DEPENDENT}
        fitting = [
            wine_id
            for wine_id, row in catalog.rows.items()
            if not constraint_violations(row, constraints, previous_ids=set(), previous_prices=[], wine_id=wine_id)
        ]
        assert fitting, f"{case.id}: no catalogue wine meets {constraints}"


def test_expected_filters_agree_with_the_constraints(golden_and_catalog):
    """Where a case states both, an exact filter value and the constraint say the same thing."""
    golden, _ = golden_and_catalog
    for case in golden.cases:
        filters, constraints = case.expect.filters or {}, case.expect.constraints
        for key in ("wine_type", "sweetness"):
            if key in filters and key in constraints:
                assert filters[key] == constraints[key], case.id
        for key in ("price_min", "price_max"):
            if isinstance(filters.get(key), (int, float)) and key in constraints:
                assert filters[key] == constraints[key], case.id


# --------------------------------------------------------------------------- the shop catalogue's set


def test_the_shop_set_covers_what_the_issue_measured(shop_golden):
    """45 turns were measured on a shop's catalogue; the set covers its mood, guard and follow-up cases too."""
    cases = shop_golden.cases
    assert len(cases) >= 45
    counts = Counter(c.category for c in cases)
    assert set(shop_golden.categories) == set(counts), "every declared category has cases and vice versa"
    assert counts["mood"] >= 10
    assert sum(1 for c in cases if c.expect.guard_type) >= 8
    assert {c.expect.guard_type for c in cases if c.expect.guard_type} == {
        "off_topic",
        "prompt_injection",
        "social_engineering",
    }
    queries = [(c.history, c.query.casefold()) for c in cases]
    assert len(set(queries)) == len(queries)
    assert not [c.id for c in cases if c.history and c.category not in ("follow_up", "offer_reply")]
    assert all(c.history for c in cases if c.category in ("follow_up", "offer_reply"))


def test_the_shop_set_says_the_issues_phrases(shop_golden):
    text = " ".join(" ".join([*c.history, c.query]).casefold() for c in shop_golden.cases)
    for phrase in (
        "тысяч до пяти",
        "тысячи за три",
        "в пределах пятёрки",
        "около полутора",
        "не дороже двух с половиной",
        "крассное сухое к шашлычку",
        "а подешевле?",
        "а белое?",
        "стейк",
        "шашлык",
        "утке",
        "суши",
        "карбонара",
        "из сша",
        "американское",
    ):
        assert phrase in text, phrase
    replies = [c.query.casefold().strip(" ?!.") for c in shop_golden.cases if c.category == "offer_reply"]
    assert "да" in replies and "покажи" in replies


def test_shop_mood_cases_have_two_to_eight_labels(shop_golden):
    """Two when the file has only two (the whites with rose and lychee in their notes)."""
    for case in (c for c in shop_golden.cases if c.category == "mood"):
        assert 2 <= len(case.expect.relevant) <= 8, case.id
        assert case.expect.tools == ("semantic_search",), case.id


# Where a shop mood label rests on structure, style or price, its rule (the case's note) picks exactly the labels.
def _taste(wine: dict, *words: str) -> bool:
    """The tasting note's «Вкус …» sentence calls the wine one of these (not «с лёгкой горчинкой»)."""
    return bool(re.search(r"Вкус[^.]*\b(?:" + "|".join(words) + ")", wine["tasting_notes"]))


SHOP_LABEL_RULES = {
    "shop-mood-01": lambda w: (
        w["wine_type"] != "red" and w["sweetness"] != "sweet" and w["body"] <= 2 and _taste(w, "лёгкий", "освежающ")
    ),
    "shop-mood-04": lambda w: w["wine_type"] != "red" and "минерал" in w["tasting_notes"],
    "shop-mood-07": lambda w: w["price_rub"] <= 2000 and _taste(w, "простой", "фруктов"),
    "shop-mood-02": lambda w: w["body"] >= 4 and w["tannins"] >= 4,
    "shop-mood-03": lambda w: w["wine_type"] == "red" and w["body"] == 2,
    "shop-mood-05": lambda w: w["wine_type"] == "sparkling" and w["sweetness"] == "dry",
    "shop-mood-06": lambda w: w["price_rub"] >= 5000 and "отложить в погреб" in w["description"],
    "shop-mood-10": lambda w: w["wine_type"] == "sparkling" and w["price_rub"] <= 2000,
    "shop-mood-11": lambda w: w["wine_type"] == "red" and w["body"] == 5,
    "shop-mood-12": lambda w: w["wine_type"] == "red" and "бархатист" in w["tasting_notes"],
    # aroma labels: what the tasting notes name, which no structure rule says
    "shop-mood-13": lambda w: w["wine_type"] == "red" and "ванил" in w["tasting_notes"].lower(),
    "shop-mood-14": lambda w: "клубник" in w["tasting_notes"].lower(),
    "shop-mood-15": lambda w: any(k in w["tasting_notes"].lower() for k in ("шоколад", "какао")),
}


def test_shop_mood_labels_follow_their_stated_rule(shop_golden):
    wines = json.loads(SHOP_FILE.read_text("utf-8"))["wines"]
    by_id = {c.id: c for c in shop_golden.cases}
    for case_id, rule in SHOP_LABEL_RULES.items():
        expected = {(w["name"], w["producer"]) for w in wines if rule(w)}
        assert set(by_id[case_id].expect.relevant) == expected, case_id


def test_shop_cases_need_other_answers_than_the_shipped_catalogue(shop_golden, shop_catalog, catalog):
    """The two catalogues disagree on what meets the shop cases: for most recommendation cases the wines
    meeting the constraints in the shop file are not the ones meeting them in the shipped file."""
    differing = total = 0
    for case in shop_golden.cases:
        constraints = {k: v for k, v in case.expect.constraints.items() if k not in PREVIOUS_DEPENDENT}
        if not constraints:
            continue
        total += 1
        answers = []
        for source in (shop_catalog, catalog):
            answers.append(
                {
                    (row["name"], row["producer"])
                    for wine_id, row in source.rows.items()
                    if not constraint_violations(
                        row, constraints, previous_ids=set(), previous_prices=[], wine_id=wine_id
                    )
                }
            )
        differing += answers[0] != answers[1]
    assert total >= 30 and differing / total >= 0.9, (differing, total)


def test_parser_rejects_malformed_cases():
    base = {"id": "x", "category": "c", "query": "красное", "expect": {"response_type": "recommendation"}}
    parse_golden_set({"categories": {"c": ""}, "cases": [base]})
    bad_cases = [
        {**base, "expect": {"response_type": "maybe"}},
        {**base, "expect": {"response_type": "off_topic"}},  # off_topic always carries a guard_type
        {**base, "expect": {"response_type": "recommendation", "guard_type": "prompt_injection"}},
        {**base, "expect": {"response_type": "recommendation", "tool": "web_search"}},
        {**base, "expect": {"response_type": "recommendation", "filters": {"wine_type": "red"}}},  # no tool
        {**base, "expect": {"response_type": "recommendation", "tool": "search_wines", "filters": {"colour": "red"}}},
        {**base, "expect": {"response_type": "recommendation", "constraints": {"wine_type": "crimson"}}},
        {**base, "expect": {"response_type": "recommendation", "constraints": {"food": "стейк"}}},
        {
            **base,
            "expect": {
                "response_type": "recommendation",
                "tool": "search_wines",
                "filters": {"price_max": [3000, 1000]},
            },
        },
        {**base, "category": "undeclared"},
        {**base, "history": [""]},
    ]
    for case in bad_cases:
        with pytest.raises(GoldenSetError):
            parse_golden_set({"categories": {"c": ""}, "cases": [case]})
    with pytest.raises(GoldenSetError, match="duplicate"):
        parse_golden_set({"categories": {"c": ""}, "cases": [base, base]})
