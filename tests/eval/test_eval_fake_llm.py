"""The evaluation against the FakeOpenAI server (real SDK, real socket, real agent, real PostgreSQL).

A scripted *good* model (the expected tool with the expected filters, then a grounded answer)
must score perfectly; a scripted *bad* model (wrong tool, wrong filters, an invented wine, ignored
history, a guard it does not apply) must be caught by the matching metrics.
"""

from __future__ import annotations

import json

import pytest
from sommelier.agent.llm.client import OpenAIChat
from sommelier.embeddings.local import LocalHashingEmbeddings
from sommelier.repositories.adapters import in_process_repositories
from sommelier_dev.evaluation.golden import load_golden_set
from sommelier_dev.evaluation.harness import EvalHarness
from sommelier_dev.evaluation.metrics import Catalog, score_case, summarize, value

from tests.fakes.openai_server import FakeOpenAI, Step, reply, tool_calls
from tests.fakes.provider_behaviours import with_refs_as_ids

pytestmark = pytest.mark.timeout(120)

CASE_IDS = ("price-01", "food-05", "mood-02", "follow-02", "info-01", "off-01", "inj-01")


def tool_wines(body: dict) -> list[dict]:
    wines = []
    for message in body["messages"]:
        if message["role"] == "tool":
            wines += with_refs_as_ids(json.loads(message["content"])).get("wines", [])
    return wines


def answer(body: dict | None = None, *, count: int = 2, invented: bool = False) -> Step:
    """A final JSON answer: the first `count` wines the tools returned (or a wine nobody returned)."""
    if invented:
        wines = [{"wine_id": None, "wine_name": "Château Imaginaire Grand Cru", "description": "Выдуманное вино."}]
    else:
        wines = [
            {"wine_id": w["id"], "wine_name": w["name"], "description": f"{w['name']} подойдёт."}
            for w in tool_wines(body)[:count]
        ]
    return reply(
        json.dumps(
            {
                "response_type": "recommendation",
                "intro": "Вот что я нашёл.",
                "wines": wines,
                "closing": "Подобрать ещё?",
                "guard_type": None,
            },
            ensure_ascii=False,
        )
    )


def plain(response_type: str, intro: str, guard_type: str | None = None):
    return reply(
        json.dumps(
            {
                "response_type": response_type,
                "intro": intro,
                "wines": [],
                "closing": "Подобрать вино?",
                "guard_type": guard_type,
            },
            ensure_ascii=False,
        )
    )


def search(name: str, arguments: dict):
    return tool_calls((name, arguments))


# The scripts, per case: a list of steps per turn (history turns first, then the evaluated one).
GOOD = {
    "price-01": [[search("search_wines", {"wine_type": "red", "price_max": 1500}), answer]],
    "food-05": [[search("search_wines", {"wine_type": "red", "food_pairing": "паста"}), answer]],
    "mood-02": [[search("semantic_search", {"query": "романтический вечер на двоих"}), answer]],
    "follow-02": [
        [search("search_wines", {"food_pairing": "курица", "price_max": 2000}), answer],
        [search("search_wines", {"wine_type": "white", "food_pairing": "курица", "price_max": 2000}), answer],
    ],
    "info-01": [[plain("informational", "Танины — это полифенолы из кожицы и косточек винограда.")]],
    "off-01": [[plain("off_topic", "Я помогаю только с вином.", "off_topic")]],
    "inj-01": [[]],  # the pre-check answers before any LLM call
}
BAD = {
    # wrong filters: white up to 5000 for "red up to 1500"
    "price-01": [[search("search_wines", {"wine_type": "white", "price_max": 5000}), answer]],
    # an invalid enum value (the tool ignores it) and no dish: any colour, any food
    "food-05": [[search("search_wines", {"wine_type": "crimson"}), lambda body: answer(body, count=3)]],
    # the wrong tool, then an invented wine every time (the agent retries twice, then degrades)
    # (a tool round and two invented answers: the turn's third generation is its last, MAX_GENERATIONS_PER_TURN)
    "mood-02": [
        [
            search("search_wines", {}),
            lambda body: answer(invented=True),
            lambda body: answer(invented=True),
        ]
    ],
    # forgets the dish and the budget of the previous turn
    "follow-02": [
        [search("search_wines", {"food_pairing": "курица", "price_max": 2000}), answer],
        [search("search_wines", {"wine_type": "white", "price_min": 3000}), answer],
    ],
    # searches and recommends for a definition question
    "info-01": [[search("semantic_search", {"query": "танины"}), lambda body: answer(body, count=1)]],
    # answers the weather question instead of guarding
    "off-01": [[plain("informational", "Завтра в Москве облачно, +5.")]],
    "inj-01": [[]],
}


@pytest.fixture(scope="module")
def golden_cases():
    cases = {c.id: c for c in load_golden_set().cases}
    return [cases[i] for i in CASE_IDS]


def run_scripted(eval_db, cases, script: dict, model: str):
    with FakeOpenAI() as fake:
        llm = OpenAIChat(api_key="test", base_url=fake.base_url, model=model, timeout=5, max_retries=0)
        harness = EvalHarness.build(in_process_repositories(eval_db), LocalHashingEmbeddings(), llm, prefetch=False)
        runs = []
        for index, case in enumerate(cases):
            turns = script[case.id]
            assert len(turns) == len(case.history) + 1
            for steps in turns:
                fake.script(*steps)
            runs.append(harness.run_case(case, index))
            assert fake.pending == 0, f"{case.id}: {fake.pending} scripted steps left"
            assert not fake.unscripted, f"{case.id}: unscripted LLM calls"
        catalog = Catalog.load(in_process_repositories(eval_db).catalog)
        scores = {s.id: s for s in (score_case(run, catalog) for run in runs)}
        return runs, scores, summarize(list(scores.values()))


@pytest.fixture(scope="module")
def good(eval_db, golden_cases):
    return run_scripted(eval_db, golden_cases, GOOD, "fake-good-model")


@pytest.fixture(scope="module")
def bad(eval_db, golden_cases):
    return run_scripted(eval_db, golden_cases, BAD, "fake-bad-model")


def metric(summary, name):
    return value(summary["overall"], name)


def test_a_good_model_scores_perfectly(good):
    runs, scores, summary = good
    failures = {s.id: s.failures() for s in scores.values() if not s.passed}
    assert not failures
    for name in (
        "response_type_accuracy",
        "tool_choice_accuracy",
        "filter_accuracy",
        "constraint_satisfaction",
        "groundedness",
        "model_groundedness",
        "guard_accuracy",
    ):
        assert metric(summary, name) == 1.0, name
    assert metric(summary, "guard_false_positive_rate") == 0.0
    assert scores["mood-02"].recall_at_5 >= 0.6


def test_llm_cost_is_measured(good):
    runs, scores, summary = good
    assert scores["price-01"].llm_calls == 2 and scores["info-01"].llm_calls == 1
    assert scores["inj-01"].llm_calls == 0, "the pre-check costs no LLM call"
    assert scores["price-01"].prompt_tokens > 0 and scores["price-01"].completion_tokens > 0
    assert metric(summary, "tokens_per_turn") > 0
    assert metric(summary, "latency_ms_p95") >= metric(summary, "latency_ms_p50") > 0
    run = next(r for r in runs if r.case.id == "price-01")
    assert [c.name for c in run.turn.tool_calls if c.name.startswith("s")][0] == "search_wines"
    assert len(run.turn.llm_calls) == 2 and run.turn.llm_calls[0].tool_calls[0]["name"] == "search_wines"


def test_the_history_reaches_the_model(good):
    runs, _, _ = good
    run = next(r for r in runs if r.case.id == "follow-02")
    assert run.turn.metadata["conversation_turn"] == 2
    assert run.history[0].response["response_type"] == "recommendation"


def test_wrong_filters_are_detected(bad):
    _, scores, summary = bad
    assert scores["price-01"].filters_ok is False
    assert set(scores["price-01"].filters_missing) == {"wine_type", "price_max"}
    assert scores["follow-02"].filters_ok is False
    assert set(scores["follow-02"].filters_missing) == {"food_pairing", "price_max"}
    assert scores["food-05"].filters_ok is False, "'crimson' is no wine_type: the tool ignored it"
    assert set(scores["food-05"].filters_missing) == {"wine_type", "food_pairing"}
    assert metric(summary, "filter_accuracy") == 0.0


def test_constraint_violations_never_reach_the_customer(bad):
    """The bad model picks a white wine for «красное до 1500»: the agent drops it (agent.fitting), so the
    answer scored is the customer's and keeps the request; the metric's own detection is tests/eval/test_metrics."""
    runs, scores, _ = bad
    price = scores["price-01"]
    assert price.constraint_pairs[0] == price.constraint_pairs[1] > 0
    assert not any("wine_type=white" in v for w in price.wines for v in w.violations)
    run = next(r for r in runs if r.case.id == "price-01")
    corrections = run.turn.metadata.get("request_corrections") or []
    assert any(c.startswith("dropped") or "wine_type" in c for c in corrections), corrections


def test_an_invented_wine_is_detected(bad):
    runs, scores, summary = bad
    mood = scores["mood-02"]
    # the model's own answer invented a wine ...
    assert mood.model_recommended == 1 and mood.model_grounded == 0
    assert metric(summary, "model_groundedness") < 1.0
    # ... which the agent rejected (two retries, then an answer built from the tool results)
    run = next(r for r in runs if r.case.id == "mood-02")
    assert run.turn.metadata["structured_output_retries"] == 2 and run.turn.metadata["mode"] == "degraded"
    assert mood.llm_calls == 4
    assert mood.grounded_pairs[0] == mood.grounded_pairs[1] > 0
    assert mood.tool_ok is False, "a mood query answered with search_wines"


def test_guard_and_response_type_failures_are_detected(bad):
    _, scores, summary = bad
    assert scores["off-01"].guard_ok is False
    assert scores["inj-01"].guard_ok is True, "the pre-check still stops the obvious injection"
    assert metric(summary, "guard_accuracy") == 0.5
    assert scores["info-01"].response_type_ok is False and scores["info-01"].tool_ok is False
    assert metric(summary, "response_type_accuracy") < 1.0
    assert metric(summary, "tool_choice_accuracy") < 1.0
    good_cases = sum(s.passed for s in scores.values())
    assert good_cases == 1, {s.id: s.failures() for s in scores.values()}
