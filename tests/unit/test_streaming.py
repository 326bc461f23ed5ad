"""Streamed chat completions over real SSE (the openai SDK against FakeOpenAI) and the incremental answer scanner."""

from __future__ import annotations

import json
import time

import pytest
from sommelier.agent.llm.client import OpenAIChat
from sommelier.agent.llm.stream import StreamBroken
from sommelier.agent.streaming import AnswerScanner

from tests.fakes.openai_server import FakeOpenAI, error, reply, streamed, tool_calls

ANSWER = {
    "response_type": "recommendation",
    "intro": "Вот что я нашёл к стейку.",
    "wines": [
        {"wine_id": None, "wine_name": "Риоха Крианса", "description": "Сочная и пряная, к мясу."},
        {"wine_id": None, "wine_name": "Мальбек", "description": "Плотный, с мягкими танинами."},
    ],
    "closing": "Подобрать что-то ещё?",
    "guard_type": None,
}
TEXT = json.dumps(ANSWER, ensure_ascii=False)


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def chat(fake, **kwargs) -> OpenAIChat:
    return OpenAIChat(api_key="test", base_url=fake.base_url, model="gpt-4o-mini", max_retries=0, **kwargs)


MESSAGES = [{"role": "user", "content": "к стейку"}]


def stream_call(llm, messages, on_content=None, **options):
    """One call through the LLM's `stream` generator, each delta handed to ``on_content`` as it arrives
    (what the agent does with it); the joined reply."""
    deltas = llm.stream(messages, **options)
    while True:
        try:
            delta = next(deltas)
        except StopIteration as done:
            return done.value
        if on_content is not None:
            on_content(delta)


def test_a_stream_with_comments_and_a_usage_chunk_is_joined(fake):
    fake.script(streamed(reply(TEXT, prompt_tokens=120, completion_tokens=80), comments=3, chars_per_token=5))
    pieces: list[str] = []
    answer = stream_call(chat(fake), MESSAGES, on_content=pieces.append)
    assert answer.content == TEXT
    assert len(pieces) > 10 and "".join(pieces) == TEXT
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (120, 80)
    assert answer.finish_reason == "stop"
    request = fake.last_chat_request()
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}


def test_tool_call_deltas_are_joined_into_calls(fake):
    fake.script(streamed(tool_calls(("search_wines", {"wine_type": "red", "price_max": 3000}))))
    answer = stream_call(chat(fake), MESSAGES, tools=[], on_content=lambda _: None)
    assert answer.content is None
    assert [(c.name, json.loads(c.arguments)) for c in answer.tool_calls] == [
        ("search_wines", {"wine_type": "red", "price_max": 3000})
    ]


@pytest.mark.parametrize(
    "how", [{"error_after": 4}, {"finish_error_after": 4}, {"break_after": 4}], ids=["error", "finish_error", "break"]
)
def test_a_stream_that_fails_midway_raises_with_what_arrived(fake, how):
    fake.script(streamed(reply(TEXT), chars_per_token=5, **how))
    pieces: list[str] = []
    with pytest.raises(StreamBroken) as caught:
        stream_call(chat(fake), MESSAGES, on_content=pieces.append)
    assert caught.value.partial == TEXT[:20] == "".join(pieces)


def test_a_stalled_stream_fails_after_the_stall_timeout(fake):
    fake.script(streamed(reply(TEXT), chars_per_token=5, stall_after=3, stall_s=30))
    started = time.monotonic()
    with pytest.raises(StreamBroken, match="stalled"):
        stream_call(chat(fake, stall_timeout=0.3), MESSAGES, on_content=lambda _: None)
    assert time.monotonic() - started < 10


def test_keepalive_comments_do_not_reset_the_stall_timer(fake):
    """A stream held open by `: keep-alive` comments and no data stalls all the same: only data is life."""
    fake.script(streamed(reply(TEXT), chars_per_token=5, stall_after=3, stall_s=30, keepalive_s=0.05))
    started = time.monotonic()
    with pytest.raises(StreamBroken, match="stalled"):
        stream_call(chat(fake, stall_timeout=0.3), MESSAGES, on_content=lambda _: None)
    assert time.monotonic() - started < 3


def test_a_model_that_thinks_silently_gets_one_long_wait_for_its_first_token(fake):
    """Silence before the first token is thinking, not a stall: the stall timer starts with the data."""
    fake.script(streamed(reply(TEXT), chars_per_token=5, first_token_s=0.8, comments=1))
    reply_ = stream_call(chat(fake, stall_timeout=0.3), MESSAGES, on_content=lambda _: None)
    assert reply_.content == TEXT and len(fake.chat_requests) == 1


def test_keepalive_comments_do_not_outlive_the_turn_deadline(fake):
    fake.script(streamed(reply(TEXT), chars_per_token=5, stall_after=3, stall_s=30, keepalive_s=0.05))
    with pytest.raises(StreamBroken, match="deadline"):
        stream_call(chat(fake, stall_timeout=5), MESSAGES, on_content=lambda _: None, deadline=time.monotonic() + 0.5)


def test_a_provider_that_rejects_stream_is_remembered(fake):
    fake.refuse_stream = "stream is not supported for this model"
    fake.script(reply(TEXT), reply(TEXT))
    llm = chat(fake)
    pieces: list[str] = []
    assert stream_call(llm, MESSAGES, on_content=pieces.append).content == TEXT
    assert not llm.streams and pieces == []
    assert stream_call(llm, MESSAGES, on_content=pieces.append).content == TEXT
    assert [bool(r.get("stream")) for r in fake.chat_requests] == [True, False, False]
    assert chat(fake).streams  # remembered per client, not for the whole process


def test_stream_options_rejected_streams_without_usage(fake):
    fake.script(error(400, "Unrecognized request argument: stream_options"), streamed(reply(TEXT)))
    llm = chat(fake)
    assert stream_call(llm, MESSAGES, on_content=lambda _: None).content == TEXT
    assert "stream_options" not in fake.last_chat_request() and llm.streams


def test_streaming_switched_off_by_config(fake):
    fake.script(streamed(reply(TEXT)))
    assert stream_call(chat(fake, stream=False), MESSAGES, on_content=lambda _: None).content == TEXT
    assert "stream" not in fake.last_chat_request()


# --------------------------------------------------------------------------- the scanner
def scan(text: str, step: int = 3) -> list[tuple]:
    scanner = AnswerScanner()
    events = []
    for i in range(0, len(text), step):
        events += [(e.kind, e.value) for e in scanner.feed(text[i : i + step]) if e.kind != "intro_draft"]
    return events


EXPECTED = [
    ("response_type", "recommendation"),
    ("intro", ANSWER["intro"]),
    ("wine", ANSWER["wines"][0]),
    ("wine", ANSWER["wines"][1]),
    ("closing", ANSWER["closing"]),
]


@pytest.mark.parametrize(
    "wrapped",
    [TEXT, f"```json\n{TEXT}\n```", f"Вот ответ {{как просили}}:\n\n{TEXT}\nГотово."],
    ids=["bare", "fence", "after-prose"],
)
def test_the_scanner_yields_each_piece_once(wrapped):
    assert scan(wrapped) == EXPECTED


def test_a_wine_is_ready_when_the_next_one_starts():
    scanner = AnswerScanner()
    head = TEXT[: TEXT.index('{"wine_id": null, "wine_name": "Мальбек"') + 1]
    kinds = [e.kind for e in scanner.feed(head)]
    assert kinds.count("wine") == 1
    cut = TEXT.index('], "closing"')
    assert [e.kind for e in scanner.feed(TEXT[len(head) : cut])] == []
    assert [e.kind for e in scanner.feed(TEXT[cut : cut + len('], "closing": "П')])] == ["wine"]


def test_the_intro_grows_as_drafts():
    scanner = AnswerScanner()
    drafts = []
    for i in range(0, len(TEXT), 4):
        drafts += [e.value for e in scanner.feed(TEXT[i : i + 4]) if e.kind == "intro_draft"]
    assert len(drafts) > 3
    assert all(ANSWER["intro"].startswith(d) for d in drafts)
    assert drafts == sorted(drafts, key=len)


def test_no_json_no_events():
    assert scan("Простите, я не могу ответить.") == []


def test_a_wine_of_the_new_shape_is_ready_as_soon_as_its_ref_and_reason_are():
    text = json.dumps(
        {
            "response_type": "recommendation",
            "intro": "Вот что подойдёт.",
            "wines": [{"ref": "w3", "reason": "Плотное, к стейку."}, {"reason": "Свежее.", "ref": "w1"}],
            "closing": "Ещё?",
            "guard_type": None,
        },
        ensure_ascii=False,
    )
    scanner = AnswerScanner()
    ready_at = {}
    for i in range(len(text)):
        for event in scanner.feed(text[i]):
            if event.kind == "wine":
                ready_at[event.value["ref"]] = i
    first_closed = text.index('"Плотное, к стейку."') + len('"Плотное, к стейку."') - 1
    second_closed = text.index('"w1"') + len('"w1"') - 1
    assert ready_at == {"w3": first_closed, "w1": second_closed}, "not a character later than its last string"
