"""The whole golden set against the offline responder, on a private copy of the shipped catalogue
(the shop catalogue's set is in test_eval_shop.py).

This is the evaluation's CI gate (CI runs only `make test`): the docs/architecture.md targets, plus floors
just under the offline responder's measured figures (eval/thresholds.json, `modes.offline`), so a
regression in tool choice, filters, guards or recall fails the build.
"""

from __future__ import annotations

import json
import time

import pytest
from sommelier.embeddings.local import LocalHashingEmbeddings
from sommelier.repositories.adapters import in_process_repositories
from sommelier_dev.evaluation.golden import load_golden_set
from sommelier_dev.evaluation.harness import EvalHarness
from sommelier_dev.evaluation.metrics import value
from sommelier_dev.evaluation.report import load_thresholds, thresholds_for, write_outputs
from sommelier_dev.evaluation.runner import evaluate

pytestmark = pytest.mark.timeout(180)

MAX_SECONDS = 60


@pytest.fixture(scope="module")
def golden():
    return load_golden_set()


@pytest.fixture(scope="module")
def thresholds():
    return thresholds_for(load_thresholds(), "offline")


@pytest.fixture(scope="module")
def result(eval_db, golden, thresholds):
    harness = EvalHarness.build(in_process_repositories(eval_db), LocalHashingEmbeddings(), None, run_seed=7)
    started = time.perf_counter()
    outcome = evaluate(harness, golden.cases, thresholds=thresholds, meta={"command": "pytest tests/eval"})
    outcome.elapsed = time.perf_counter() - started
    return outcome


def overall(result, metric: str) -> float:
    measured = value(result.summary["overall"], metric)
    assert measured is not None, f"{metric} was not measured"
    return measured


def failing(result, predicate) -> list[str]:
    return [f"{s.id}: {'; '.join(s.failures())}" for s in result.scores if predicate(s)]


def test_the_whole_golden_set_runs_offline_in_time(result, golden):
    assert len(result.scores) == len(golden.cases)
    assert result.elapsed < MAX_SECONDS
    assert all(s.mode in ("offline", "guard") for s in result.scores)
    assert all(s.llm_calls == 0 and s.prompt_tokens == 0 for s in result.scores)
    assert not [s.id for s in result.scores if s.errors]


def test_follow_ups_are_played_after_their_history(result):
    for run in result.runs:
        if run.case.history:
            assert len(run.history) == len(run.case.history)
            assert run.turn.metadata["conversation_turn"] == len(run.case.history) + 1, run.case.id
            assert all(h.response and h.response["response_type"] == "recommendation" for h in run.history)


def test_every_recommended_wine_is_grounded(result):
    assert overall(result, "groundedness") == 1.0, failing(result, lambda s: s.grounded_pairs[0] < s.grounded_pairs[1])


def test_constraint_satisfaction_meets_the_target(result):
    broken = failing(result, lambda s: s.constraint_pairs[0] < s.constraint_pairs[1])
    assert overall(result, "constraint_satisfaction") >= 0.98, broken


def test_guard_accuracy(result):
    assert overall(result, "guard_accuracy") >= 0.95, failing(result, lambda s: s.guard_ok is False)


def test_no_guard_fires_on_normal_queries(result):
    assert overall(result, "guard_false_positive_rate") == 0.0, failing(result, lambda s: s.guard_false_positive)


def test_recall_at_5_on_mood_queries(result, thresholds):
    measured = overall(result, "recall_at_5_mood")
    assert measured >= 0.6
    assert measured >= thresholds["recall_at_5_mood"]["min"], failing(result, lambda s: (s.recall_at_5 or 1) < 0.6)


@pytest.mark.parametrize(
    "metric", ["response_type_accuracy", "tool_choice_accuracy", "filter_accuracy", "case_pass_rate"]
)
def test_offline_floors(result, thresholds, metric):
    assert overall(result, metric) >= thresholds[metric]["min"], failing(result, lambda s: not s.passed)


def test_every_category_is_scored(result, golden):
    categories = result.summary["categories"]
    assert set(categories) == set(golden.categories)
    for name in ("filter_type", "filter_price", "filter_grape", "filter_origin", "filter_food", "follow_up"):
        assert value(categories[name], "filter_accuracy") is not None, name
        assert value(categories[name], "constraint_satisfaction") is not None, name
    assert value(categories["mood"], "recall_at_5_mood") is not None
    for name in ("off_topic", "prompt_injection", "social_engineering"):
        assert value(categories[name], "guard_accuracy") is not None, name


def test_tool_arguments_are_recorded(result):
    run = next(r for r in result.runs if r.case.id == "price-01")
    calls = [c for c in run.turn.tool_calls if c.name == "search_wines"]
    assert calls and calls[0].arguments["wine_type"] == "red" and calls[0].arguments["price_max"] == 1500
    assert calls[0].filters_applied == {"wine_type": "red", "price_max": 1500}
    semantic = [c for r in result.runs for c in r.turn.tool_calls if c.name == "semantic_search"]
    assert semantic and all("embedding" not in c.arguments and c.arguments["query"] for c in semantic)


def test_reports_are_written(result, thresholds, tmp_path):
    paths = write_outputs(result.report, thresholds, tmp_path / "report")
    report = json.loads(paths["json"].read_text("utf-8"))
    assert report["meta"]["mode"] == "offline" and len(report["cases"]) == len(result.scores)
    assert set(report["summary"]["categories"]) == set(result.summary["categories"])
    markdown = paths["markdown"].read_text("utf-8")
    assert "## Per category" in markdown and "constraint satisfaction" in markdown
    assert paths["chart"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
