"""The golden set in LLM mode against the fake: a model that answers in the new shape (a wine's ref and one
reason saying why it fits, from that wine's own row) keeps every reason whole through the sentence checks
(agent/answer_checks.py), on every recommendation case: the checks take out mistakes, not honest reasons.

The fake model answers from the prompt's candidates (the prefetch) or searches once with the case's words.
"""

from __future__ import annotations

import json

import pytest
from sommelier.agent.llm.client import OpenAIChat
from sommelier.embeddings.local import LocalHashingEmbeddings
from sommelier.repositories.adapters import in_process_repositories
from sommelier_dev.evaluation.golden import load_golden_set
from sommelier_dev.evaluation.harness import EvalHarness

from tests.fakes.openai_server import FakeOpenAI, reply, tool_calls
from tests.fakes.provider_behaviours import customer_query, has_tool_results, offered_wines, search_arguments

pytestmark = pytest.mark.timeout(600)

WHY = (
    "Подойдёт под ваш запрос: {fact}.",
    "Хороший выбор для этого случая — {fact}.",
    "Его стоит взять именно сюда: {fact}.",
)


def reason(wine: dict, index: int) -> str:
    """Why it fits, in the wine's own words: its first whole note, else its grapes and style."""
    notes = str(wine.get("notes") or "")
    first = notes.split(". ")[0].rstrip(".").strip()
    if not first or first.endswith("…") or len(first) > 150:
        first = ", ".join(p for p in (wine.get("grapes"), wine.get("region")) if p) or "гармоничный вкус"
    fact = first[:1].lower() + first[1:]
    return WHY[index % len(WHY)].format(fact=fact)


class ReasoningModel:
    def __init__(self) -> None:
        self.written: list[str] = []

    def __call__(self, body: dict):
        wines = [w for w in offered_wines(body) if w.get("ref")]
        if not wines and body.get("tools") and not has_tool_results(body):
            return tool_calls(("search_wines", search_arguments(customer_query(body))))
        if not wines:
            return reply(
                json.dumps(
                    {
                        "response_type": "informational",
                        "intro": "Расскажу с удовольствием: это зависит от стиля вина.",
                        "wines": [],
                        "closing": "Подобрать вино?",
                        "guard_type": None,
                    },
                    ensure_ascii=False,
                )
            )
        picked = wines[:2]
        reasons = [reason(w, i) for i, w in enumerate(picked)]
        self.written += reasons
        return reply(
            json.dumps(
                {
                    "response_type": "recommendation",
                    "intro": "Вот что подойдёт.",
                    "wines": [{"ref": w["ref"], "reason": r} for w, r in zip(picked, reasons, strict=True)],
                    "closing": "Подобрать что-нибудь ещё?",
                    "guard_type": None,
                },
                ensure_ascii=False,
            )
        )


def test_honest_reasons_reach_the_customer_whole_on_the_golden_set(eval_db):
    cases = [c for c in load_golden_set().cases if "recommendation" in c.expect.response_types and not c.history]
    assert len(cases) >= 30
    model = ReasoningModel()
    with FakeOpenAI() as fake:
        fake.default = model
        llm = OpenAIChat(api_key="test", base_url=fake.base_url, model="fake-reasoning", timeout=10, max_retries=0)
        harness = EvalHarness.build(in_process_repositories(eval_db), LocalHashingEmbeddings(), llm)
        runs = [harness.run_case(case, index) for index, case in enumerate(cases)]
    shown = 0
    for run in runs:
        turn = run.turn
        assert turn is not None and turn.error is None, run.case.id
        errors = " ".join(str(e) for e in turn.metadata.get("structured_output_errors") or [])
        assert "check:" not in errors, (run.case.id, errors)
        corrections = turn.metadata.get("request_corrections") or []
        replaced = any(c.startswith(("dropped", "added")) for c in corrections)
        for wine in turn.recommended:
            if wine["description"] not in model.written:
                # this model takes the first two rows: one may break the request, and agent.fitting puts a
                # fitting wine in its place, in the catalogue's words
                assert replaced, (run.case.id, wine["description"], corrections)
                continue
            shown += 1
    assert shown >= len(cases), "most cases recommend wines, each with its reason"
