"""The shop golden set (eval/golden_set_shop.json) against the offline responder, on a private database whose
catalogue was replaced by the shop export (data/catalog/shop-export-example.json, imported with --replace).

The gate for the second catalogue: the bounds are the general ones (eval/thresholds.json) except where the
shop set has its own, each with its reason (`golden_sets`), and no case may fail that is not listed below
with the bug or the catalogue trait that makes it fail.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
from sommelier.embeddings.local import LocalHashingEmbeddings
from sommelier.repositories.adapters import in_process_repositories
from sommelier_dev.evaluation.golden import load_golden_set
from sommelier_dev.evaluation.harness import EvalHarness
from sommelier_dev.evaluation.metrics import Catalog, value
from sommelier_dev.evaluation.report import load_thresholds, thresholds_for
from sommelier_dev.evaluation.runner import evaluate

pytestmark = pytest.mark.timeout(180)

SHOP_GOLDEN = Path(__file__).resolve().parents[2] / "eval" / "golden_set_shop.json"
MAX_SECONDS = 60

# Cases that fail today, and why (eval/RESULTS.md lists them with the answers given). A failure not listed
# here fails the test; the shop's own bounds (eval/thresholds.json) are set from the same run.
KNOWN_FAILURES = {
    # mood recall below 0.6: the shop's descriptions name no occasion, labels come from structure and taste; the
    # embedded text says the structure in mood words (language/data/structure.json), these two still miss
    "shop-mood-01": "recall: the top 5 are light, high-acid whites and a light red, 2 of 8 labelled",
    "shop-mood-11": "recall: «согревающее» finds the body-4 and body-5 reds alike, 2 of 5 labelled",
    # aroma cases (labels from the tasting notes, which no structure rule says)
    "shop-mood-13": "recall: «с нотами ванили» finds 1 of the 7 reds whose notes name vanilla",
}


@pytest.fixture(scope="module")
def golden():
    return load_golden_set(SHOP_GOLDEN)


@pytest.fixture(scope="module")
def thresholds():
    return thresholds_for(load_thresholds(), "offline", golden=SHOP_GOLDEN)


@pytest.fixture(scope="module")
def result(shop_db, golden, thresholds):
    harness = EvalHarness.build(in_process_repositories(shop_db), LocalHashingEmbeddings(), None, run_seed=11)
    started = time.perf_counter()
    outcome = evaluate(harness, golden.cases, thresholds=thresholds, meta={"command": "pytest tests/eval"})
    outcome.elapsed = time.perf_counter() - started
    return outcome


def failures(result) -> dict[str, list[str]]:
    return {s.id: s.failures() for s in result.scores if not s.passed}


def test_the_catalogue_for_sale_is_exactly_the_shop_export(shop_db):
    catalog = Catalog.load(in_process_repositories(shop_db).catalog)
    assert len(catalog) == 62, "the shipped wines were retired by --replace"
    assert {row["country"] for row in catalog.rows.values()} >= {"Соединенные Штаты Америки", "Королевство Испания"}


def test_every_case_runs_offline_in_time(result, golden):
    assert len(result.scores) == len(golden.cases) >= 45
    assert result.elapsed < MAX_SECONDS
    assert all(s.mode in ("offline", "guard") for s in result.scores)
    assert all(s.llm_calls == 0 for s in result.scores)
    assert not [s.id for s in result.scores if s.errors]


def test_every_metric_is_measured_on_the_shop_catalogue(result, golden):
    overall = result.summary["overall"]
    for metric in (
        "response_type_accuracy",
        "tool_choice_accuracy",
        "filter_accuracy",
        "constraint_satisfaction",
        "groundedness",
        "recall_at_5_mood",
        "recall_at_5_mood_uncapped",
        "mood_pick_precision",
        "guard_accuracy",
        "guard_false_positive_rate",
        "case_pass_rate",
    ):
        assert value(overall, metric) is not None, metric
    counts = Counter(c.category for c in golden.cases)
    assert counts["mood"] >= 10 and overall["recall_at_5_mood"]["n"] == counts["mood"]
    assert overall["guard_accuracy"]["n"] >= 8
    assert set(result.summary["categories"]) == set(golden.categories)


def test_the_shop_bounds_are_met(result, thresholds):
    assert result.passed, (result.missed(), failures(result))


def test_hard_constraints_and_groundedness_hold_everywhere(result):
    assert value(result.summary["overall"], "groundedness") == 1.0, failures(result)
    assert (
        value(result.summary["overall"], "constraint_satisfaction")
        >= thresholds_for(load_thresholds(), "offline")["constraint_satisfaction"]["min"]
    ), failures(result)


def test_no_case_fails_that_is_not_a_known_failure(result):
    new = {case_id: why for case_id, why in failures(result).items() if case_id not in KNOWN_FAILURES}
    assert not new, new


def test_a_yes_accepts_the_offer_of_the_previous_answer(result):
    """«да» / «покажи» after «…Поднимем бюджет?»: the first turn found nothing and offered; the reply takes it."""
    by_id = {run.case.id: run for run in result.runs}
    for case_id in ("shop-offer-01", "shop-offer-02"):
        run = by_id[case_id]
        first = run.history[0].response
        assert first["response_type"] == "informational" and not first["wines"], case_id
        assert run.turn.response["response_type"] == "recommendation" and run.turn.response["wines"], case_id
