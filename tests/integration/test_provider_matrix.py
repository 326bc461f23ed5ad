"""Every documented provider behaviour × three Russian queries → the expected outcome.

The behaviours are in tests/fakes/provider_behaviours.py, the runner and its independent checks in
reliability/provider_matrix.py (which also writes RELIABILITY.md's table). A turn on any behaviour but a
provider that is down must end in a clean, grounded answer written by the model; a provider that is down
gives the offline answer with a bounded number of requests; no turn outlives its budget; the turn's own
count of HTTP requests equals what the provider received. Each behaviour runs with whole answers and with
streamed ones (the pieces shown while the answer streams are checked too). The turns are not saved, so they
share the read-only catalogue database.
"""

from __future__ import annotations

import pytest

from reliability.provider_matrix import MAX_RETRIES, QUERIES, run_behaviour
from tests.fakes.provider_behaviours import BEHAVIOURS


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("name", list(BEHAVIOURS))
def test_behaviour(name, streaming, catalog_db):
    behaviour = BEHAVIOURS[name]
    turns, stats = run_behaviour(catalog_db, name, streaming=streaming, save=False)
    assert len(turns) == len(QUERIES)
    for turn in turns:
        where = f"{name} / {turn.query}: {turn.outcome} {turn.problems} {turn.text[:300]!r}"
        assert turn.http_requests == turn.reported_http_requests, "honest accounting: " + where
        assert turn.wall_s <= turn.budget_s, "never past the budget: " + where
        if behaviour.expected == "answer":
            assert turn.outcome == "answer", where
        elif behaviour.expected == "offline":
            assert turn.outcome == "offline", where
            assert turn.http_requests <= 1 + MAX_RETRIES, "a provider that is down costs a bounded number of requests"
            assert turn.wines, "the offline answer still recommends wines"
        else:
            assert turn.outcome in ("answer", "offline"), where
    if name.startswith("slow_final_answer"):
        # at most two generations of the slow answer per turn (one timed out, one finished): never three
        assert stats["slow_generations"] <= 2 * len(QUERIES)
        per_turn_generations = [t.generations for t in turns]
        assert all(g <= 3 for g in per_turn_generations), per_turn_generations  # tool round + ≤ 2 answers


def test_what_was_learned_is_remembered_for_the_next_turns(catalog_db):
    turns, _ = run_behaviour(catalog_db, "deepseek_json_schema", save=False)
    assert turns[0].learned == ["response_format=json_object"]
    assert turns[1].learned == [] and turns[2].learned == []
    assert turns[1].http_requests < turns[0].http_requests


def test_thought_signatures_go_back_with_every_assistant_message(catalog_db):
    turns, stats = run_behaviour(catalog_db, "gemini3_thought_signature", save=False, streaming=True)
    assert all(t.outcome == "answer" and not t.learned for t in turns)
    assert all(t.http_requests == 3 for t in turns), "two tool rounds and the answer, no 400"


def test_bedrock_final_call_keeps_tools_with_tool_choice_none(catalog_db):
    turns, _ = run_behaviour(catalog_db, "bedrock_tools_required", save=False)
    assert turns[0].learned == ["final_tools=none_choice"]
    assert all(t.outcome == "answer" for t in turns)
