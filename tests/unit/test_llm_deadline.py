"""The LLM adapter against the fake over a real socket: the deadline bounds every request and retry,
and the ledger counts what really happened."""

from __future__ import annotations

import time

import pytest
from sommelier.agent.llm.client import OpenAIChat
from sommelier.agent.llm.port import LLMError, LLMLedger
from sommelier.domain.conversation import Deadline

from tests.fakes.openai_server import FakeOpenAI, delayed, drop_mid_body, error, json_response, reply, trickled
from tests.fakes.provider_behaviours import completion

MESSAGES = [{"role": "system", "content": "Ты сомелье."}, {"role": "user", "content": "красное к стейку"}]


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def chat(fake, **kwargs) -> OpenAIChat:
    kwargs.setdefault("max_retries", 2)
    return OpenAIChat(api_key="test", base_url=fake.base_url, model="provider/model", stream=False, **kwargs)


def test_retry_after_beyond_the_budget_is_not_waited_for(fake):
    fake.script(error(429, "slow down", retry_after=30))
    ledger = LLMLedger()
    started = time.monotonic()
    with pytest.raises(LLMError, match="429"):
        chat(fake).complete(MESSAGES, deadline=Deadline.after(3), ledger=ledger)
    assert time.monotonic() - started < 3
    assert len(fake.chat_requests) == 1 and ledger.http_requests == 1


def test_retry_after_within_the_budget_is_honoured(fake):
    fake.script(error(503, "busy", retry_after=0.3), reply("ok"))
    ledger = LLMLedger()
    started = time.monotonic()
    answer = chat(fake).complete(MESSAGES, deadline=Deadline.after(10), ledger=ledger)
    assert answer.content == "ok"
    assert time.monotonic() - started >= 0.3, "waited as the provider asked"
    assert ledger.http_requests == 2 and ledger.logical_calls == 1 and ledger.retries == 1


def test_a_timed_out_generation_is_not_retried_when_another_cannot_fit(fake):
    fake.script(delayed(reply("late"), 5), reply("never asked"))
    ledger = LLMLedger()
    deadline = Deadline.after(0.8)
    with pytest.raises(LLMError, match="timed out"):
        chat(fake, timeout=0.3).complete(MESSAGES, deadline=deadline, ledger=ledger)
    assert ledger.http_requests == 1 and ledger.generations == 1 and ledger.timeouts == 1
    assert fake.pending == 1


def test_a_timed_out_generation_is_retried_with_the_rest_of_the_budget(fake):
    fake.script(delayed(reply("first"), 0.5), delayed(reply("second"), 0.5))
    ledger = LLMLedger()
    llm = chat(fake, timeout=0.2)
    answer = llm.complete(MESSAGES, deadline=Deadline.after(2.0), ledger=ledger)
    assert answer.content == "second"
    assert ledger.http_requests == 2 and ledger.generations == 2 and ledger.timeouts == 1
    assert any(lesson.startswith("call_timeout_s=") for lesson in ledger.lessons)
    assert llm.capabilities.get("provider/model").call_timeout_s >= 0.5, "the slow model's pace is remembered"


def test_an_error_in_a_200_is_retried_once_then_fails(fake):
    broken = json_response({"id": "x", "object": "chat.completion", "choices": None, "error": {"message": "boom"}})
    fake.script(broken, broken, reply("not reached"))
    ledger = LLMLedger()
    with pytest.raises(LLMError, match="boom"):
        chat(fake).complete(MESSAGES, deadline=Deadline.after(10), ledger=ledger)
    assert ledger.http_requests == 2 and ledger.provider_errors == 2


def test_reasoning_tokens_are_counted_and_reasoning_kept_apart(fake):
    fake.default = lambda body: completion(
        body, {"content": "<think>hidden</think>Ответ", "reasoning": "plan"}, reasoning_tokens=321
    )
    ledger = LLMLedger()
    answer = chat(fake).complete(MESSAGES, deadline=Deadline.after(10), ledger=ledger)
    assert answer.content == "Ответ"
    assert "hidden" in answer.reasoning and "plan" in answer.reasoning
    assert ledger.usage.reasoning_tokens == 321


def test_sdk_retries_are_counted_as_requests(fake):
    fake.script(error(500, "flaky"), error(502, "flaky"), reply("ok"))
    ledger = LLMLedger()
    assert chat(fake).complete(MESSAGES, deadline=Deadline.after(20), ledger=ledger).content == "ok"
    assert ledger.http_requests == len(fake.chat_requests) == 3
    assert ledger.logical_calls == 1


def test_a_response_kept_alive_by_a_trickle_is_cut_at_its_timeout(fake):
    fake.script(trickled(reply("late"), seconds=5), reply("never asked"))
    ledger = LLMLedger()
    started = time.monotonic()
    with pytest.raises(LLMError, match="timed out"):
        chat(fake, timeout=0.4).complete(MESSAGES, deadline=Deadline.after(0.9), ledger=ledger)
    assert time.monotonic() - started < 2.5, "cut off, not read to the end (5 s)"
    assert ledger.timeouts == 1 and ledger.http_requests == 1


def test_a_body_that_breaks_off_is_retried(fake):
    fake.script(drop_mid_body(reply("first")), reply("second"))
    ledger = LLMLedger()
    assert chat(fake).complete(MESSAGES, deadline=Deadline.after(10), ledger=ledger).content == "second"
    assert ledger.http_requests == 2 and ledger.retries == 1
