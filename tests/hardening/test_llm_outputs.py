"""Malformed and adversarial final answers of the LLM (corpora/llm_outputs.json, 60 cases).

Each case is the fake model's final answer after a real tool round (search_wines against the shipped
catalogue in the in-memory store), on every attempt (so retries see it again). Whatever the model says, the user gets a
valid, escaped Telegram reply (FakeTelegram parses the HTML and checks the limits: every call must
be accepted as sent), or the graceful fallback; never raw JSON, never a placeholder, never the prompt.
"""

from __future__ import annotations

import json
import re

import pytest
import sommelier.agent.loop as loop_module
from sommelier.agent.output_guard import quotes_prompt

from tests.fakes.openai_server import reply, streamed, tool_calls
from tests.hardening.support import (
    CHAT,
    CORPORA,
    deliver,
    make_bot,
    record_figure,
    shown_texts,
    text_update,
    tool_results,
)

CORPUS = json.loads((CORPORA / "llm_outputs.json").read_text("utf-8"))["cases"]
RAW_JSON = re.compile(r'[{\[]\s*"\w[\w ]*"\s*:|"(?:response_type|wine_id|wine_name|guard_type)"|```')
MARKDOWN = re.compile(r"\*\*\S|\S\*\*|(?<!\w)__\S|\S__(?!\w)|\]\(https?://")
SEARCH = ("search_wines", {"wine_type": "red", "food_pairing": "стейк", "price_max": 6000})
_outcomes: dict[str, dict[str, str]] = {}


def test_corpus_size_and_shape():
    assert len(CORPUS) >= 50
    assert len({c["id"] for c in CORPUS}) == len(CORPUS)
    assert {c["expect"] for c in CORPUS} <= {"answer", "fallback", "guard"}


def _fill(content: str, found: list[dict], other: dict) -> str:
    content = content.replace("{{DEEP}}", "[" * 100_000 + "]" * 100_000)
    for index in range(4):
        wine = found[index % len(found)]
        content = content.replace(f"{{{{ID{index}}}}}", wine["id"])
        content = content.replace(f"{{{{NAME{index}}}}}", json.dumps(wine["name"], ensure_ascii=False)[1:-1])
    return content.replace("{{OTHER_ID}}", other["id"]).replace(
        "{{OTHER_NAME}}", json.dumps(other["name"], ensure_ascii=False)[1:-1]
    )


def _chunk(content: str) -> int:
    """Characters per streamed chunk: a model's usual 16, but a huge answer in at most about a hundred chunks.
    What is checked is what the customer gets from the content; 200 000 characters in 16-character chunks
    spent a minute in the SDK's per-chunk parsing and the draft's re-reading, and no model streams that."""
    return max(16, len(content) // 100)


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_llm_output(case, environment, fresh_memory, telegram, llm, monkeypatch):
    turns: list[dict] = []
    original = loop_module.record_turn
    monkeypatch.setattr(loop_module, "record_turn", lambda metadata: (turns.append(metadata), original(metadata)))
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    white = next(w for w in fresh_memory.wines.values() if w.wine_type == "white")
    other = {"id": white.id, "name": white.name}

    def final_answer(body: dict):
        found = [w for result in tool_results(body) for w in result.get("wines", [])]
        assert len(found) >= 4, "the tool round must find enough wines"
        return streamed(reply(content := _fill(case["content"], found, other)), chars_per_token=_chunk(content))

    llm.script(tool_calls(SEARCH))
    llm.default = final_answer
    deliver(bot, text_update(1000, "красное сухое к стейку, до 6000"))

    calls = [c for c in telegram.calls if c.method in ("sendMessage", "sendPhoto")]
    assert calls, "the user got an answer"
    assert all(c.http_status == 200 for c in calls), [(c.method, c.response) for c in calls if c.http_status != 200]
    shown = shown_texts(telegram, CHAT)
    visible = "\n".join(shown)
    assert not RAW_JSON.search(visible), visible[:2000]
    assert "{{" not in visible and "}}" not in visible
    assert not any(quotes_prompt(text) for text in shown)
    assert "\x00" not in visible
    assert not MARKDOWN.search(visible), "Markdown marks never reach the customer"
    keyboard = telegram.sent_messages(CHAT)[-1].params.get("reply_markup") or {}

    assert len(turns) == 1
    metadata = turns[0]
    recommends = metadata.get("response_type") == "recommendation" and bool(metadata.get("recommendations"))
    # The 👍/👎/«Ещё варианты» buttons sit under the closing of a recommendation, and under nothing else.
    assert bool(keyboard.get("inline_keyboard")) == recommends, (metadata.get("response_type"), keyboard)
    # Either fallback is honest: the catalogue-only answer, or the rule-based one when the stream kept breaking.
    fallbacks = {"degraded": "fallback", "offline_fallback": "fallback"}
    outcome = {"llm": "answer", "guard_output": "guard", **fallbacks}.get(metadata["mode"], metadata["mode"])
    _outcomes[case["id"]] = {
        "expected": case["expect"],
        "outcome": outcome,
        "retries": str(metadata["structured_output_retries"]),
    }
    record_figure("bad_input.llm_outputs", _outcomes)
    assert outcome == case["expect"], (metadata["mode"], metadata["structured_output_errors"])
    if outcome == "answer":
        grounded = {rec["wine_name"] for rec in metadata["recommendations"]}
        assert grounded <= set(_found_names(llm)), "every wine shown was found by the tools this turn"
    if outcome == "guard":
        assert metadata["response_type"] == "off_topic" and metadata["guard_type"] == "prompt_injection"
    history = bot.chat.history(CHAT)
    if outcome == "answer":
        assert [m.role for m in history] == ["user", "assistant"], "an accepted answer is saved once"
    else:
        assert history == [], "only successful turns are saved"


def _found_names(llm) -> list[str]:
    return [w["name"] for body in llm.chat_requests for result in tool_results(body) for w in result.get("wines", [])]
