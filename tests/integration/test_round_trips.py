"""Tool-function round trips per turn, through the real Lambda-invoke adapter and boto3 against a local
invoke endpoint that serves the real handler: a recommendation turn is open_turn (the turn begun and the
prefetch's searches run), the model's tool calls (one invocation per round), end_turn: two invocations for a
one-call turn, three with a tool round. Photo ids learned while delivering ride on the next end_turn."""

from __future__ import annotations

import json
import re

from sommelier.app import build_runtime
from sommelier.repositories.adapters import lambda_repositories
from sommelier.settings import load_settings
from sommelier.telegram.dialog import Author
from sommelier.toolfn.handler import handle

from tests.bot_harness import configure_llm
from tests.fakes.lambda_invoke import LocalLambda
from tests.fakes.openai_server import reply, tool_calls
from tests.fakes.provider_behaviours import prompt_candidates
from tests.hardening.support import tool_results

# The turn's first invocation: begin_turn and the prefetch's searches together.
OPEN = "open_turn"
ANNA = Author(user_id=5150001, chat_id=5150001, first_name="Анна")


def two_searches_then_answer(body: dict):
    """A model that answers from the prefetched candidates when the prompt has them; otherwise it asks for
    two searches at once, then recommends the first wine they found."""
    results = tool_results(body)
    candidates = prompt_candidates(str(body["messages"][1]["content"])) if len(body["messages"]) > 1 else []
    if candidates and not results:
        results = [{"wines": candidates}]
    if body.get("tools") and not results:
        return tool_calls(
            ("search_wines", {"wine_type": "red", "food_pairing": "стейк"}),
            ("semantic_search", {"query": "насыщенное красное к мясу"}),
        )
    wine = next(w for r in results for w in r.get("wines", []))
    answer = {
        "response_type": "recommendation",
        "intro": "К стейку подойдёт это вино.",
        "wines": [{"wine_id": wine["id"], "wine_name": wine["name"], "description": "Плотное и сочное."}],
        "closing": "Подобрать ещё?",
        "guard_type": None,
    }
    return reply(json.dumps(answer, ensure_ascii=False))


def lambda_runtime(local: LocalLambda):
    return build_runtime(load_settings(), repositories=lambda_repositories(local.function_name, client=local.client()))


def test_a_recommendation_turn_makes_two_invocations(fresh_db, llm, monkeypatch):
    configure_llm(monkeypatch, llm)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    llm.default = two_searches_then_answer
    with LocalLambda("wine-tools", lambda event: handle(event, fresh_db)) as local:
        runtime = lambda_runtime(local)
        turn = runtime.dialog.message(ANNA, "красное сухое к стейку", update_id=1).turn
    assert turn is not None and turn.metadata["mode"] == "llm", turn.metadata
    assert local.invocations == [OPEN, "end_turn"], "the prefetch's search rides on the turn's beginning"
    assert turn.metadata["tool_function_calls"] == len(local.invocations) == 2
    assert turn.saved and turn.wines, "saved and the shown wine loaded for rendering in end_turn"


def test_a_turn_with_a_tool_round_makes_three_invocations(fresh_db, llm, monkeypatch):
    configure_llm(monkeypatch, llm)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    llm.script(tool_calls(("search_wines", {"wine_type": "red", "grape_variety": "Саперави"})))
    llm.default = two_searches_then_answer
    with LocalLambda("wine-tools", lambda event: handle(event, fresh_db)) as local:
        runtime = lambda_runtime(local)
        turn = runtime.dialog.message(ANNA, "красное сухое к стейку", update_id=1).turn
    assert turn is not None and turn.metadata["mode"] == "llm", turn.metadata
    assert local.invocations == [OPEN, "search_wines", "end_turn"], "one more search is one more invocation"
    assert turn.metadata["tool_function_calls"] == 3


def test_the_previous_operations_are_still_served(fresh_db):
    """An agent of the previous version begins a turn and runs the prefetch apart: both still answer."""
    begun = handle(
        {"tool": "begin_turn", "arguments": {"chat_id": 5150009, "history_limit": 5, "user": None}}, fresh_db
    )
    assert begun["history"] == [] and "error" not in begun
    batch = handle(
        {"tool": "run_tools", "arguments": {"calls": [{"tool": "search_wines", "arguments": {"wine_type": "red"}}]}},
        fresh_db,
    )
    assert batch["results"][0]["wines"] and all(w["wine_type"] == "red" for w in batch["results"][0]["wines"])


def test_photo_ids_learned_while_delivering_ride_on_the_next_end_turn(fresh_db, llm, monkeypatch):
    configure_llm(monkeypatch, llm)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    llm.default = two_searches_then_answer
    with LocalLambda("wine-tools", lambda event: handle(event, fresh_db)) as local:
        runtime = lambda_runtime(local)
        first = runtime.dialog.message(ANNA, "красное сухое к стейку", update_id=1).turn
        wine_id = next(iter(first.wines))
        runtime.repositories.chat.remember_photo(wine_id, "AgACAgIAAxkBAAIBfile")  # what delivery does
        assert local.invocations == [OPEN, "end_turn"], "no round trip for the photo id"
        second = runtime.dialog.message(ANNA, "а ещё?", update_id=2).turn
    # A follow-up reads differently with its history (the previous request's filters, the wines shown):
    # the prefetch runs again after the beginning.
    assert second.metadata["tool_function_calls"] == 3
    with fresh_db.connection() as conn:
        cached = conn.execute("SELECT telegram_file_id FROM wines WHERE id = %s", (wine_id,)).fetchone()[0]
    assert cached == "AgACAgIAAxkBAAIBfile"


def test_an_unreachable_tool_function_is_a_retryable_failure_and_the_turn_still_answers(llm, monkeypatch):
    configure_llm(monkeypatch, llm)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    llm.default = two_searches_then_answer
    with LocalLambda("another-function", lambda event: {}) as local:  # every call: function not found
        runtime = build_runtime(load_settings(), repositories=lambda_repositories("wine-tools", client=local.client()))
        turn = runtime.dialog.message(ANNA, "красное сухое к стейку", update_id=1).turn
    assert turn is not None and turn.saved is None
    assert turn.metadata["mode"] in ("offline_fallback", "unavailable", "catalog_fallback"), turn.metadata


def test_a_streamed_turn_sends_its_wine_cards_from_the_tool_results_within_two_invocations(
    fresh_db, llm, telegram, state_dir, monkeypatch
):
    """The progressive reply (drafts, then the intro and each card as the answer streams) reads no wine:
    the cards come from the rows the searches returned this turn, photo keys included."""
    from tests.bot_harness import make_bot
    from tests.fakes.telegram_updates import text_update

    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    monkeypatch.setenv("SOMMELIER_AGE_GATE", "0")
    monkeypatch.setenv("LLM_STREAM", "on")
    monkeypatch.setenv("TELEGRAM_PROGRESSIVE", "on")
    llm.default = two_searches_then_answer
    with LocalLambda("wine-tools", lambda event: handle(event, fresh_db)) as local:
        repositories = lambda_repositories(local.function_name, client=local.client())
        bot = make_bot(fresh_db, telegram, llm=llm, monkeypatch=monkeypatch, repositories=repositories)
        assert bot.progressive, "the model streams and the bot sends as it streams"
        bot.process(text_update(7001, "красное сухое к стейку", chat_id=5150002), attempt=1)
    assert local.invocations == [OPEN, "end_turn"], "no get_wines for the streamed card"
    methods = [c.method for c in telegram.calls]
    assert methods[0] == "sendMessageDraft", methods  # the answer streamed
    cards = [c for c in telegram.sent_messages(5150002) if "Плотное и сочное" in str(c.params)]
    assert len(cards) == 1, methods
    with fresh_db.connection() as conn:
        has_photo = conn.execute(
            "SELECT image_key IS NOT NULL OR telegram_file_id IS NOT NULL FROM wines WHERE name = %s",
            (
                re.sub(r"<[^>]+>", "", str(cards[0].params.get("caption") or cards[0].params.get("text"))).split(" — ")[
                    0
                ],
            ),
        ).fetchone()
    assert has_photo is not None, cards[0].params
    assert cards[0].method == ("sendPhoto" if has_photo[0] else "sendMessage"), "the photo keys came with the rows"
    seen_by_model = [json.dumps(tool_results(body), ensure_ascii=False) for body in llm.chat_requests]
    assert seen_by_model and not any("image_key" in text or "photos" in text for text in seen_by_model)
