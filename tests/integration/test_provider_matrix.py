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
        assert turn.wall_s <= turn.budget_s + turn.slack_s, "never past the budget: " + where
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


def test_an_html_page_is_recognised_at_once_and_not_asked_again(catalog_db):
    for streaming in (False, True):
        turns, _ = run_behaviour(catalog_db, "html_page_200", save=False, streaming=streaming)
        assert all(t.outcome == "offline" for t in turns)
        assert [t.http_requests for t in turns] == [1, 1, 1], "one request, no retry within the turn"
        assert [t.generations for t in turns] == [0, 0, 0], "a page is not a generation"


def test_keepalive_comments_do_not_keep_a_stalled_stream_alive(catalog_db):
    turns, stats = run_behaviour(catalog_db, "keepalive_stall", save=False, streaming=True)
    assert stats["stalled"] == 1 and all(t.outcome == "answer" for t in turns)
    stall_s = BEHAVIOURS["keepalive_stall"].stall_s * turns[0].time_scale
    assert turns[0].wall_s < 3 * stall_s, "cut by the stall timer, not by the keep-alive's minute"


def test_silent_thinking_gets_one_long_wait_and_never_three_generations(catalog_db):
    for streaming in (False, True):
        turns, stats = run_behaviour(catalog_db, "silent_reasoning_25s", save=False, streaming=streaming)
        assert all(t.outcome == "answer" for t in turns)
        assert stats["slow_generations"] == len(turns), "each answer generated once"
        assert all(t.generations <= 2 for t in turns)


def test_gemini_retry_delay_is_read_from_its_list_shaped_body(catalog_db):
    turns, stats = run_behaviour(catalog_db, "gemini_429_list_body", save=False)
    assert all(t.outcome == "answer" for t in turns)
    assert stats["quota_refusals"] == len(turns), "one wait of retryDelay, not several short retries"


def test_list_shaped_400_still_teaches_its_lesson(catalog_db):
    turns, _ = run_behaviour(catalog_db, "gemini_400_list_body", save=False)
    assert turns[0].learned == ["parallel_tool_calls=False"] and turns[1].learned == []


def test_thinking_switch_is_learned_for_calls_that_do_not_stream(catalog_db):
    turns, stats = run_behaviour(catalog_db, "dashscope_thinking_non_stream", save=False)
    assert turns[0].learned == ["thinking_off=enable_thinking"]
    assert stats["thinking_refusals"] == 1


def test_content_is_never_null_and_roles_always_alternate(catalog_db):
    _, null_stats = run_behaviour(catalog_db, "llamacpp_null_content", save=False, streaming=True)
    _, order_stats = run_behaviour(catalog_db, "alternating_roles", save=False, streaming=True)
    assert not null_stats.get("null_content") and not order_stats.get("order_refusals")
