"""Progressive delivery end to end: the streamed answer reaches the fake Bot API piece by piece.

Real adapters: FakeOpenAI streams SSE to the real openai SDK (with breaks and mid-stream errors injected),
the fake Bot API records every call, the in-memory store holds the catalogue.
"""

from __future__ import annotations

import json
import uuid

import pytest

from bench.agent_harness import TOOL_CALL, tool_results
from bench.agent_harness import found_wines as tool_wines
from tests.bot_harness import make_bot
from tests.fakes.openai_server import reply, streamed, tool_calls
from tests.fakes.provider_behaviours import prompt_candidates
from tests.fakes.telegram_updates import TEST_BOT, TEST_CHAT, text_update

CPT = 8  # characters per streamed chunk
GROUP = -4000123


def candidates(body: dict) -> list[dict]:
    """The wines the agent put in the prompt before asking (its prefetch)."""
    return prompt_candidates(str(body["messages"][1]["content"])) if len(body["messages"]) > 1 else []


def found_wines(body: dict) -> list[dict]:
    """What a model answers from: the tool results, else the prefetched candidates."""
    return tool_wines(body) or candidates(body)


def answer_text(body: dict, *, count: int = 2, ghost_first: bool = False, skip: int = 0) -> str:
    wines = found_wines(body)[skip : skip + count]
    items = [
        {"wine_id": w["id"], "wine_name": w["name"], "description": f"{w['name']} подойдёт к стейку."} for w in wines
    ]
    if ghost_first:
        items.insert(0, {"wine_id": str(uuid.uuid4()), "wine_name": "Шато Выдумка", "description": "Его нет."})
    return json.dumps(
        {
            "response_type": "recommendation",
            "intro": "Вот что я нашёл к стейку — три достойных варианта.",
            "wines": items,
            "closing": "Подобрать что-то ещё?",
            "guard_type": None,
        },
        ensure_ascii=False,
    )


def chunks_before(text: str, marker: str, occurrence: int = 1) -> int:
    """How many content chunks the stream sends before `marker` (its n-th occurrence) begins."""
    at = -1
    for _ in range(occurrence):
        at = text.index(marker, at + 1)
    return at // CPT


def script(llm, *finals):
    """Round 1: a search; then each final answer in turn (a callable of the request body → Step)."""
    queue = list(finals)

    def respond(body):
        if body.get("tools") and not tool_results(body) and not candidates(body):
            return streamed(tool_calls(TOOL_CALL))
        return queue.pop(0)(body)

    llm.default = respond


@pytest.fixture
def bot(fresh_memory, telegram, llm, monkeypatch):
    monkeypatch.setenv("TELEGRAM_DRAFT_INTERVAL_MS", "0")
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    return make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)


def visible(telegram, chat=TEST_CHAT) -> list[str]:
    return [c.params.get("text") or c.params.get("caption") or "" for c in telegram.sent_messages(chat)]


def wine_ids_sent(telegram, chat=TEST_CHAT) -> list[str]:
    return [c.params.get("caption") or c.params.get("text") for c in telegram.sent_messages(chat)[1:-1]]


def test_a_streamed_answer_arrives_as_draft_intro_wines_and_closing(bot, telegram, llm):
    script(llm, lambda body: streamed(reply(answer_text(body)), chars_per_token=CPT, comments=2))
    bot.process(text_update(9100, "красное сухое к стейку до 3000"))
    methods = [c.method for c in telegram.calls if c.method.startswith("send")]
    assert methods[0] == "sendMessageDraft" and telegram.calls_of("sendMessageDraft")[0].params["text"] == ""
    assert "sendChatAction" not in methods
    drafts = [c.params["text"] for c in telegram.drafts(TEST_CHAT)]
    assert len(drafts) > 2 and all("Вот что я нашёл к стейку".startswith(d[:24]) for d in drafts[1:])
    sent = visible(telegram)
    assert len(sent) == 4 and sent[0].startswith("Вот что я нашёл")
    assert telegram.sent_messages(TEST_CHAT)[-1].params["reply_markup"]["inline_keyboard"]
    assert llm.chat_requests[-1]["stream"] is True


def test_a_broken_stream_retries_for_the_rest_without_duplicates(bot, telegram, llm):
    texts = {}

    def first(body):
        texts["first"] = text = answer_text(body)
        # the socket closes once the first wine is complete and the second has begun
        return streamed(reply(text), chars_per_token=CPT, break_after=chunks_before(text, '{"wine_id"', 2) + 2)

    script(llm, first, lambda body: streamed(reply(answer_text(body, count=3)), chars_per_token=CPT))
    bot.process(text_update(9101, "красное сухое к стейку до 3000"))
    sent = visible(telegram)
    intros = [t for t in sent if t.startswith("Вот что я нашёл")]
    assert len(intros) == 1, sent
    assert len(sent) == 1 + 3 + 1  # intro, three different wines, the closing
    assert len(set(sent)) == len(sent)
    retry = llm.chat_requests[-1]["messages"][-1]["content"]
    assert "Покупатель уже видит" in retry and "оборвался" in retry


def test_a_mid_stream_error_object_and_finish_reason_error_are_retried(bot, telegram, llm):
    def failing(kind):
        def step(body):
            text = answer_text(body)
            return streamed(reply(text), chars_per_token=CPT, **{kind: chunks_before(text, '"closing"') - 1})

        return step

    script(
        llm,
        failing("error_after"),
        failing("finish_error_after"),
        lambda body: streamed(reply(answer_text(body)), chars_per_token=CPT),
    )
    bot.process(text_update(9102, "красное сухое к стейку до 3000"))
    sent = visible(telegram)
    assert len(sent) == 4 and len(set(sent)) == 4, sent
    assert sent[-1].startswith("Подобрать что-то ещё?")


def test_an_ungrounded_wine_is_never_sent(bot, telegram, llm):
    script(
        llm,
        lambda body: streamed(reply(answer_text(body, ghost_first=True)), chars_per_token=CPT),
        lambda body: streamed(reply(answer_text(body)), chars_per_token=CPT),
    )
    bot.process(text_update(9103, "красное сухое к стейку до 3000"))
    sent = visible(telegram)
    assert not any("Выдумка" in t for t in sent)
    assert len(sent) == 4 and len(set(sent)) == 4


def test_when_retries_run_out_the_customer_still_gets_an_ending(bot, telegram, llm):
    def broken(body):
        text = answer_text(body)
        return streamed(reply(text), chars_per_token=CPT, break_after=chunks_before(text, '"closing"'))

    script(llm, broken, broken, broken)
    bot.process(text_update(9104, "красное сухое к стейку до 3000"))
    sent = visible(telegram)
    assert len(set(sent)) == len(sent), sent
    assert sum(t.startswith("Вот что я нашёл к стейку") for t in sent) == 1
    last = telegram.sent_messages(TEST_CHAT)[-1]
    assert last.params.get("reply_markup"), "a proper ending with the buttons"


def test_refused_drafts_fall_back_to_typing_and_are_remembered(bot, telegram, llm):
    telegram.refuse_drafts(TEST_CHAT)
    script(
        llm,
        lambda body: streamed(reply(answer_text(body)), chars_per_token=CPT),
        lambda body: streamed(reply(answer_text(body)), chars_per_token=CPT),
    )
    bot.process(text_update(9105, "красное сухое к стейку до 3000"))
    bot.process(text_update(9106, "а ещё к стейку?"))
    assert len(telegram.calls_of("sendMessageDraft")) == 1  # refused once, never asked again
    assert len(telegram.calls_of("sendChatAction")) == 2
    assert len(visible(telegram)) == 8


def test_a_group_gets_typing_not_drafts(bot, telegram, llm):
    script(llm, lambda body: streamed(reply(answer_text(body)), chars_per_token=CPT))
    said = f"@{TEST_BOT} красное сухое к стейку до 3000"
    mention = [{"type": "mention", "offset": 0, "length": len(TEST_BOT) + 1}]
    update = text_update(9107, said, chat={"id": GROUP, "type": "group", "title": "g"}, entities=mention)
    bot.process(update)
    assert telegram.calls_of("sendMessageDraft") == []
    assert telegram.calls_of("sendChatAction")
    assert len(visible(telegram, GROUP)) == 4


def test_redelivery_after_the_turn_resends_nothing(bot, telegram, llm):
    script(llm, lambda body: streamed(reply(answer_text(body)), chars_per_token=CPT))
    update = text_update(9108, "красное сухое к стейку до 3000")
    bot.process(update)
    before = visible(telegram)
    bot.process(update, attempt=2)  # SQS brings the same message back
    assert visible(telegram) == before


def test_a_turn_that_dies_after_streaming_is_redelivered_without_duplicates(bot, telegram, llm, monkeypatch):
    script(
        llm,
        lambda body: streamed(reply(answer_text(body)), chars_per_token=CPT),
        lambda body: streamed(reply(answer_text(body, count=3)), chars_per_token=CPT),
    )
    dialog = type(bot.dialog)
    real_render = dialog._render
    crashes = {"left": 1}

    def dying_render(self, *args, **kwargs):
        if crashes["left"]:
            crashes["left"] -= 1
            raise RuntimeError("the agent process died after the stream")
        return real_render(self, *args, **kwargs)

    monkeypatch.setattr(dialog, "_render", dying_render)
    update = text_update(9109, "красное сухое к стейку до 3000")
    with pytest.raises(RuntimeError):
        bot.process(update, attempt=1)
    shown_first = visible(telegram)
    assert len(shown_first) == 3, "the intro and two wine cards went out while the answer streamed"
    bot.process(update, attempt=2)  # SQS brings it back: a new turn, told what the customer already has
    sent = visible(telegram)
    assert sent[:3] == shown_first
    assert len(sent) == 5 and len(set(sent)) == 5, sent  # one new wine and the closing, nothing repeated
    assert telegram.sent_messages(TEST_CHAT)[-1].params["reply_markup"]["inline_keyboard"]


def test_a_flood_wait_during_a_streamed_answer_silences_the_chat_then_the_answer_arrives_once(bot, telegram, llm):
    """A 429 (retry_after 40) on the second wine card while the answer streams: nothing at all goes to the chat
    until the wait is over (no retry of the card, no typing, no draft), then the rest of the answer, once."""
    script(llm, lambda body: streamed(reply(answer_text(body, count=3)), chars_per_token=CPT))
    counted = {"messages": 0}

    def second_card(call) -> bool:
        if call.method not in ("sendMessage", "sendPhoto") or call.params.get("chat_id") != TEST_CHAT:
            return False
        counted["messages"] += 1
        return counted["messages"] == 3  # the intro, the first card, then this one

    telegram.fail_when(second_card, status=429, retry_after=40, times=1)
    waits: list[tuple[int, float]] = []  # (calls the fake had seen when the bot slept, seconds)
    bot.sleep = bot.sender.sleep = lambda seconds: waits.append((len(telegram.calls), seconds))
    bot.process(text_update(9110, "красное сухое к стейку до 3000"))

    calls = telegram.calls
    flood = next(i for i, c in enumerate(calls) if c.http_status == 429)
    assert waits and sum(s for _, s in waits) >= 39  # the rest of the 40 s (a few ms passed since the 429)
    woke = next(at for at, _ in waits if at > flood)  # the wait that followed the 429
    inside = [c.method for c in calls[flood + 1 : woke] if c.params.get("chat_id") == TEST_CHAT]
    assert inside == []  # silent for retry_after: no resend, no typing, no draft
    sent = visible(telegram)
    assert len(sent) == 1 + 3 + 1 and len(set(sent)) == len(sent)  # intro, three wines, the closing: once each
    assert sent[0].startswith("Вот что я нашёл")
