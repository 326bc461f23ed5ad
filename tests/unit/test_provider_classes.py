"""Provider behaviour classes handled by shape, not by example: content parts, channel markup, error bodies of
any shape, retry delays, thinking switches, cache hints, the turn's cost, and wines told apart by id."""

from __future__ import annotations

import pytest
from sommelier.agent.fallback_answers import degraded_response
from sommelier.agent.llm.capabilities import (
    ModelCapabilities,
    error_causes,
    lesson_from_error,
    parse_capabilities,
    retry_delay_in_body,
)
from sommelier.agent.llm.port import LLMReply, ToolCall, Usage
from sommelier.agent.llm.reply import strip_reasoning, usage_of
from sommelier.agent.llm.request import cache_marked
from sommelier.agent.metadata import turn_cost
from sommelier.agent.prefetch import compact_wine
from sommelier.agent.retries import append_user
from sommelier.domain.answer import SommelierResponse, WineRecommendation
from sommelier.domain.pricing import DEFAULT_PRICE, LLMPrice, parse_price
from sommelier.domain.wine import Wine

ANSWER = '{"response_type": "informational", "intro": "Привет", "wines": [], "closing": "Ещё?"}'


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}, {"type": "text", "text": ANSWER}],
        [{"type": "text", "text": ANSWER[:20]}, {"type": "text", "text": ANSWER[20:]}],
        {"type": "text", "text": ANSWER},
        [{"type": "reasoning", "text": "hmm"}, ANSWER],
    ],
)
def test_content_as_parts_becomes_text_with_the_thinking_apart(content):
    text, _ = strip_reasoning(content)
    assert text == ANSWER


@pytest.mark.parametrize(
    "content",
    [
        f'<|channel|>analysis<|message|>The user wants {{"wine_type": "red"}}<|end|>'
        f"<|start|>assistant<|channel|>final<|message|>{ANSWER}<|return|>",
        f"<|start|>assistant<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final"
        f"<|message|>{ANSWER}",
        f"<|channel|>final <|constrain|>json<|message|>{ANSWER}<|end|>",
    ],
)
def test_channel_markup_keeps_only_the_final_channel(content):
    text, reasoning = strip_reasoning(content)
    assert text == ANSWER
    assert "<|" not in (reasoning or "")


def test_an_assistant_message_never_has_null_content():
    message = LLMReply(content=None, tool_calls=[ToolCall("c1", "search_wines", "{}")]).assistant_message()
    assert message["content"] == ""


GEMINI_429 = [
    {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota.\nPlease retry in 28.926488533s.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaId": "PerMinute"}]},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "28s"},
            ],
        }
    }
]


@pytest.mark.parametrize(
    ("body", "text", "delay"),
    [
        (GEMINI_429, "", 28.0),
        ([{"error": {"code": 429, "message": "Resource has been exhausted"}}], "", None),
        ({"error": {"message": "Rate limit", "retry_after_ms": 1500}}, "", 1.5),
        ({"message": "Requests rate limit exceeded", "retry_after": 2}, "", 2.0),
        (None, "Rate limit reached. Please try again in 820ms.", 0.82),
        ("not json", "please retry after 3 seconds", 3.0),
    ],
)
def test_retry_delay_from_any_documented_shape(body, text, delay):
    assert retry_delay_in_body(body, text) == delay


def test_error_causes_from_any_shape():
    assert "RESOURCE_EXHAUSTED" in error_causes(GEMINI_429)
    nested = {"error": {"message": "Provider returned error", "metadata": {"raw": '{"error": {"message": "deep"}}'}}}
    assert any("deep" in cause for cause in error_causes(nested))
    assert error_causes("<html>Bad gateway</html>") == ["<html>Bad gateway</html>"]
    assert error_causes([[[[[[[["too deep"]]]]]]]]) == []


def test_the_thinking_switch_is_learned_only_for_calls_that_do_not_stream():
    text = "Error code: 400 | parameter.enable_thinking must be set to false for non-streaming calls"
    caps = ModelCapabilities()
    assert lesson_from_error(text, {"model": "qwen3"}, caps, final=False) == {"thinking_off": "enable_thinking"}
    assert lesson_from_error(text, {"stream": True}, caps, final=False) is None
    assert parse_capabilities("thinking_off=enable_thinking") == {"thinking_off": "enable_thinking"}
    with pytest.raises(ValueError):
        parse_capabilities("thinking_off=not a name")


def test_cache_breakpoint_on_the_system_prompt_and_unlearned_when_refused():
    messages = [{"role": "system", "content": "stable"}, {"role": "user", "content": "hi"}]
    marked = cache_marked(messages)
    assert marked[0]["content"] == [{"type": "text", "text": "stable", "cache_control": {"type": "ephemeral"}}]
    assert messages[0]["content"] == "stable" and marked[1] is messages[1]
    caps = ModelCapabilities(prompt_cache="cache_control")
    assert lesson_from_error("Unknown field cache_control", {}, caps, final=False) == {"prompt_cache": "auto"}


def test_usage_in_every_documented_shape():
    openai_usage = {"prompt_tokens": 2006, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 1920}}
    assert usage_of(openai_usage).cached_tokens == 1920
    deepseek = {"prompt_tokens": 13, "completion_tokens": 3, "prompt_cache_hit_tokens": 8}
    assert usage_of(deepseek).cached_tokens == 8
    openrouter = {"prompt_tokens": 194, "completion_tokens": 2, "cost": 0.95, "prompt_tokens_details": None}
    assert usage_of(openrouter).cost_usd == 0.95 and usage_of(None) == Usage()


def test_turn_cost_prefers_the_providers_figure():
    assert turn_cost(Usage(1000, 100, cost_usd=0.5), DEFAULT_PRICE) == {"cost_usd": 0.5, "cost_source": "provider"}
    priced = turn_cost(Usage(1_000_000, 0, cached_tokens=500_000), LLMPrice(3, 15, 0.3))
    assert priced == {"cost_usd": 1.65, "cost_source": "price"}
    assert parse_price("3,15") == LLMPrice(3, 15, None) and parse_price(None) == DEFAULT_PRICE
    for bad in ("cheap", "1", "1,2,3,4", "-1,2"):
        with pytest.raises(ValueError):
            parse_price(bad)


def test_a_retry_never_puts_two_user_messages_in_a_row():
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "запрос"}]
    append_user(messages, "исправь")
    assert [m["role"] for m in messages] == ["system", "user"] and messages[1]["content"] == "запрос\n\nисправь"
    messages.append({"role": "assistant", "content": "x"})
    append_user(messages, "ещё раз")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    parts = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:"}}]}]
    append_user(parts, "подпись")
    assert parts[0]["content"][-1] == {"type": "text", "text": "подпись"}


def _wine(wine_id: str, producer: str) -> Wine:
    return Wine(
        id=wine_id,
        name="Каберне",
        producer=producer,
        region="Кубань, Россия",
        vintage_year=2021,
        grape_varieties=["Каберне Совиньон"],
        wine_type="red",
        sweetness="dry",
        body=3,
        tannins=3,
        acidity=3,
        price_rub=1200,
        description="Плотное красное.",
        tasting_notes="Чёрная смородина.",
        food_pairings=["мясо"],
    )


def test_two_wines_with_the_same_name_are_two_wines():
    first = _wine("11111111-1111-1111-1111-111111111111", "Фанагория")
    second = _wine("22222222-2222-2222-2222-222222222222", "Лефкадия")
    response = degraded_response({first.id: first, second.id: second})
    assert response.wine_ids() == [first.id, second.id]
    with pytest.raises(ValueError):
        SommelierResponse(
            response_type="recommendation",
            intro="Вот.",
            wines=[
                WineRecommendation(wine_id=first.id, wine_name="Каберне", description="Хорошее."),
                WineRecommendation(wine_id=first.id, wine_name="Каберне", description="Хорошее."),
            ],
            closing="Ещё?",
        )
    row = compact_wine(first, "w1")
    assert row["ref"] == "w1" and "id" not in row and "similarity_score" not in row and "image_key" not in row


def test_stats_show_the_llm_cost_of_the_week():
    from sommelier.domain.shop import AdminStats
    from sommelier.shop.admin import stats_text

    stats = AdminStats(1, 2, 10, 0, 0, 64, prompt_tokens_7d=1_000_000, completion_tokens_7d=100_000)
    text = stats_text(stats, LLMPrice(3, 15))
    assert "LLM за 7 дней: ≈ $4.50, ≈ $0.4500 за вопрос" in text
    assert "LLM" not in stats_text(stats, None)
